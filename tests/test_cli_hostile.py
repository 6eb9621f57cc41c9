"""A command line that never shows a traceback: bad paths, folders, devices, missing
models, nested JSON and invalid UTF-8 each end with one clear line and exit status 2; files
are read with a size cap; a run whose output does not match exits 1.

Most refusals are asked of ``fsmviz.cli.main`` in this process (``in_process``: what it
writes to stdout and stderr, file descriptors included, and an exception it lets out fails
the test as a traceback would); a fresh interpreter (``fsmviz``) only where the process is
under test: an argument the interpreter decodes, and a missing model, whose libraries may
write to stderr on their own. A fresh interpreter costs ~0.5 CPU-s to import the CLI (2.5
when it imports torch): 9.5 CPU-s for these tests before, 5.2 after."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fsmviz.cli import main, read_capped
from fsmviz.schema.limits import MAX_SCHEMA_BYTES

ROOT = Path(__file__).resolve().parents[1]


def fsmviz(*args: str | bytes, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "fsmviz", *args],
        capture_output=True,
        text=True,
        errors="replace",
        env=env,
        cwd=cwd,
        timeout=120,
    )


def in_process(
    args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> subprocess.CompletedProcess[str]:
    """``python -m fsmviz ARGS`` in ``cwd``, run by ``main`` here: its status (argparse's
    exit included) and what it wrote."""
    monkeypatch.chdir(cwd)
    capfd.readouterr()
    try:
        status = main(list(args))
    except SystemExit as exit_:  # argparse: a bad choice or value
        status = exit_.code if isinstance(exit_.code, int) else 2
    written = capfd.readouterr()
    return subprocess.CompletedProcess(["fsmviz", *args], status, written.out, written.err)


def refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    here = tmp_path_factory.mktemp("hostile")
    (here / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (here / "binary.json").write_bytes(b'{"type": "\xff"}')
    (here / "folder").mkdir()
    return here


@pytest.mark.parametrize(
    "args,words",
    [
        (["schema", "/dev/zero"], ["/dev/zero", f"{MAX_SCHEMA_BYTES:,} bytes"]),  # its own cap
        (["schema", "folder"], ["folder", "Is a directory"]),
        (["schema", "missing.json"], ["missing.json", "No such file"]),
        (["schema", "deep.json"], ["deep.json", "nested too deeply"]),
        (["schema", "binary.json"], ["binary.json", "not UTF-8"]),
        (["dfa", "ab", "--svg", "folder"], ["cannot write folder"]),
        (["dfa", "ab", "--svg", "no/such/folder.svg"], ["cannot write no/such/folder.svg"]),
        (["dfa", "ab", "--svg", "/dev/full"], ["cannot write /dev/full", "No space"]),
        (["dfa", "ab", "--svg", "/proc/version"], ["cannot write /proc/version"]),
        (["generate", "a", "hi", "--model", "/no/such/model"], ["--model", "does not exist"]),
        (["generate", "a", "hi", "--temperature", "nan"], ["temperature", "NaN", "0 to 2"]),
        (["generate", "a", "hi", "--seed", "-1"], ["seed", "-1"]),
        (["diagnose", "a", "--max-tokens", "0"], ["max_tokens", "1 to 1024"]),
        (["schema", "deep.json", "hi", "--max-tokens", "2000"], ["max_tokens"]),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_a_bad_path_device_or_option_is_one_line_and_status_2(
    files, args, words, monkeypatch, capfd
):
    if "--model" in args:  # loads transformers: the process's whole stderr is under test
        refused(fsmviz(*args, cwd=files), *words)
    else:
        refused(in_process(args, files, monkeypatch, capfd), *words)


def test_an_argument_that_is_not_utf8_is_refused():
    refused(fsmviz("dfa", os.fsdecode(b"a\xff")), "not valid UTF-8", "0xFF")


def test_read_capped_reads_a_device_only_as_far_as_the_cap():
    with pytest.raises(ValueError, match="more than 1,000 bytes"):
        read_capped("/dev/zero", limit=1000)
    assert read_capped("/proc/version").startswith("Linux")


def test_generate_exits_1_when_the_output_does_not_match(tiny, monkeypatch, capsys):
    """The ``tiny`` random model: four a's cannot be written in two tokens' budget."""
    import fsmviz.generation.models as models

    monkeypatch.setattr(models, "load_model", lambda name=None: tiny)
    assert main(["generate", "a{40}", "hi", "--max-tokens", "2"]) == 1
    assert "does not match" in capsys.readouterr().err
    assert main(["generate", "a", "hi", "--max-tokens", "2", "--json"]) == 0
