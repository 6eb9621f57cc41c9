"""``python -m fsmviz``: each subcommand and its exit status.

A fresh interpreter (``fsmviz``) where the process itself is under test: the entry point
answers, help and ``first`` never import torch, and a model run's output is all written
before the interpreter leaves past torch's threads (``fsmviz/__main__.py``). Everything
else calls the same ``fsmviz.cli.main`` in this process (``cli``): a fresh interpreter pays
5-7 s of CPU to import transformers and load the vocabulary or the model again for each
call, which this worker has loaded once (the file: 102 CPU-seconds before, 39 after)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fsmviz.cli import main, suggestion_lines

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m fsmviz ARGS`` run by ``fsmviz.cli.main`` in this process: its status
    (argparse's exit included), stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args))
        except SystemExit as exit_:  # argparse: a missing argument, a bad choice
            status = exit_.code if isinstance(exit_.code, int) else 2
    return subprocess.CompletedProcess(["fsmviz", *args], status, out.getvalue(), err.getvalue())


def fsmviz(*args: str, check_torch: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    env["TRANSFORMERS_OFFLINE"] = "1"
    # An audit hook says "torch loaded" the moment torch is imported: the CLI ends with
    # os._exit, so a check after the command (a `finally:`) would never run.
    code = "import runpy, sys; sys.argv[0] = 'fsmviz'\n"
    code += "def said(event, args):\n"
    code += "    if event == 'import' and args[0] == 'torch':\n"
    code += "        print('torch loaded', file=sys.stderr, flush=True)\n"
    code += "sys.addaudithook(said)\n"
    code += "runpy.run_module('fsmviz', run_name='__main__')\n"
    argv = [sys.executable, "-c", code, *args] if check_torch else [sys.executable, "-m", "fsmviz"]
    if not check_torch:
        argv += list(args)
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


@pytest.mark.parametrize("args", [["--help"], ["dfa", "--help"], ["generate", "--help"]])
def test_help_answers_without_importing_torch(args: list[str]) -> None:
    done = fsmviz(*args, check_torch=True)
    assert done.returncode == 0, done.stderr
    assert "usage: python -m fsmviz" in done.stdout
    assert "torch loaded" not in done.stderr


def test_every_subcommand_has_help_with_defaults() -> None:
    top = cli("--help").stdout
    for name in ["dfa", "diagnose", "first", "generate", "serve"]:
        assert name in top
    assert "(default: 64)" in cli("generate", "--help").stdout
    serve = cli("serve", "--help")
    assert serve.returncode == 0 and "(default: 7860)" in serve.stdout


def test_dfa_prints_a_table_json_and_dot() -> None:
    table = cli("dfa", "ab?")
    assert table.returncode == 0 and table.stdout.splitlines()[1:] == [
        "  0   a -> 1",
        "* 1   b -> 2",
        "* 2",
    ]
    data = json.loads(cli("dfa", "[0-9]+", "--json").stdout)
    assert data["accepting"] == [1] and data["transitions"][0]["label"] == "0-9"
    assert cli("dfa", "a|b", "--dot").stdout.startswith("digraph fsm {")


def test_dfa_writes_an_svg(tmp_path: Path) -> None:
    target = tmp_path / "dfa.svg"
    done = cli("dfa", "(yes|no)", "--svg", str(target))
    assert done.returncode == 0, done.stderr
    assert target.read_text().startswith("<svg")


def test_a_bad_pattern_prints_the_message_and_caret_and_exits_2() -> None:
    for args in (["dfa", "ab(?=c)"], ["diagnose", "ab(?=c)"], ["first", "ab(?=c)"],
                 ["generate", "ab(?=c)", "hi"]):  # fmt: skip
        done = cli(*args)
        assert done.returncode == 2, args
        assert done.stdout == ""
        assert done.stderr.splitlines() == [
            done.stderr.splitlines()[0],
            "ab(?=c)",
            "  ^",
        ]
        assert done.stderr.startswith("error: lookahead")


def test_first_lists_the_first_step_s_tokens_without_torch() -> None:
    done = fsmviz("first", '\\{"name": "[A-Za-z ]{1,30}"\\}', check_torch=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("2 of 49,152 tokens may come first")
    assert [line.split(maxsplit=1)[1] for line in lines[1:]] == ["'{'", "'{\"'"]
    assert "torch loaded" not in done.stderr
    many = cli("first", "[a-z]+", "--limit", "3").stdout.splitlines()
    assert len(many) == 5 and many[-1].startswith("   … and ") and "more (--limit)" in many[-1]
    bad = cli("first", "ab(?=c)")
    assert bad.returncode == 2 and bad.stderr.startswith("error: lookahead")


def test_bad_options_exit_2() -> None:
    assert cli("dfa").returncode == 2  # argparse: the regex is missing
    assert cli("dfa", "a", "--dot", "--json").returncode == 2
    done = cli("generate", "a", "x", "--max-tokens", "0")
    assert done.returncode == 2 and "max_tokens" in done.stderr and done.stdout == ""


def test_diagnose_prints_findings_and_exits_1_on_an_error() -> None:
    loop = cli("diagnose", "(a|b)*c", "--max-tokens", "8")
    assert loop.returncode == 0, loop.stderr
    assert "unbounded_repeat" in loop.stdout and "try: (a|b){0,8}c" in loop.stdout
    empty = cli("diagnose", "")  # matches only the empty text
    assert empty.returncode == 1 and "error:" in empty.stdout


def test_a_long_rewrite_is_printed_as_its_changes_then_whole() -> None:
    # issue 47: a 580-character "try:" line hid its fix; now the changes come first, each
    # once with where it is, and the whole rewrite stands alone on a line to copy
    field = r"\"title\":[^\S\r\n]\"[^\"]+\",\n"
    pattern = r"\[\n" + field * 12 + r"\]"
    rewrite = pattern.replace(r"[^\"]+", r"[^\"]{1,32}")
    changes, whole = suggestion_lines(pattern, rewrite)
    assert len(changes) < 100 and changes.startswith("  try: change `")
    assert r'to `"[^\"]{1,32}` (12 places, the first at character 31)' in changes
    assert whole == f"  whole: {rewrite}"
    assert suggestion_lines("(a|b)*c", "(a|b){0,8}c") == ["  try: (a|b){0,8}c"]


def test_generate_streams_a_full_match() -> None:
    done = fsmviz("generate", "[0-9]{4}", "In which year did humans first land on the moon?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1969"
    assert "loading the bundled model" in done.stderr and "the output matches" in done.stderr


def test_diagnose_engines_names_each_engine() -> None:
    done = cli("diagnose", "(?i)yes|no", "--engines")
    assert done.returncode == 0, done.stderr
    assert "engine_refusal: xgrammar 0.2.8 refuses this pattern" in done.stdout
    assert "outlines-core 0.2.14" in done.stdout and "llguidance 1.9.1" in done.stdout


def test_schema_prints_the_regex_and_refuses_a_bad_schema_with_its_pointer(tmp_path: Path) -> None:
    person = tmp_path / "person.json"
    person.write_text(
        json.dumps(
            {
                "type": "object",
                "properties": {"name": {"type": "string", "maxLength": 10}},
                "required": ["name"],
            }
        )
    )
    done = cli("schema", str(person), "--whitespace", "none")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith('\\{"name":"')
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "object", "properties": {"age": {"type": "integr"}}}')
    refused = cli("schema", str(bad))
    assert refused.returncode == 2 and refused.stdout == ""
    assert "/properties/age/type" in refused.stderr
    assert cli("schema", str(tmp_path / "missing.json")).returncode == 2


@pytest.mark.slow
def test_schema_with_a_prompt_generates_json_that_validates(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 12}},
        "required": ["city"],
    }
    path = tmp_path / "city.json"
    path.write_text(json.dumps(schema))
    done = cli("schema", str(path), "Name the capital of France.", "--max-tokens", "24")
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)) == {"city"}


def test_bad_decoding_options_exit_2_before_the_model_loads() -> None:
    for flags in (["--top-k", "-1"], ["--top-p", "0"], ["--prob-limit", "2"]):
        done = cli("generate", "a", "x", *flags)
        assert done.returncode == 2 and "error:" in done.stderr, flags
        assert "loading" not in done.stderr
    assert cli("generate", "a", "x", "--stop", "longest").returncode == 2  # argparse


@pytest.mark.slow
def test_generate_takes_the_decoding_flags() -> None:
    done = cli(
        "generate", "[0-9]+", "How many legs does a spider have?", "--stop", "first",
        "--overshoot", "--top-k", "3", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    trace = json.loads(done.stdout.splitlines()[-1])
    assert trace["options"]["stop"] == "first" and trace["options"]["top_k"] == 3
    assert trace["options"]["overshoot"] is True
    assert trace["stop_reason"] in ("first_match", "overshoot", "accepted")
