"""The README's "Library" and "Command line" sections: their examples run as written."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _blocks(section: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


def test_the_library_example_runs() -> None:
    (code,) = _blocks(_section("Library"), "python")
    exec(compile(code, "README.md", "exec"), {})


def test_the_command_line_examples_print_what_the_readme_shows() -> None:
    (console,) = _blocks(_section("Command line"), "console")
    runs = re.split(r"^\$ ", console, flags=re.M)[1:]
    assert len(runs) == 2
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    for run in runs:
        command, expected = run.split("\n", 1)
        argv = shlex.split(command)
        assert argv[:3] == ["python", "-m", "fsmviz"]
        done = subprocess.run(
            [sys.executable, *argv[1:]], capture_output=True, text=True, env=env, cwd=ROOT
        )
        assert done.stdout + done.stderr == expected, command
