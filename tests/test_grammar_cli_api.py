"""``python -m fsmviz grammar`` and the ``/grammar`` endpoint, on the tiny model where a
model is needed (noise, so the grammar does all the work)."""

from __future__ import annotations

import io
import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fsmviz.app.api.grammar import grammar_endpoint
from fsmviz.cli import grammar_command
from fsmviz.generation.generate import stream
from fsmviz.grammar import GrammarError, compile_grammar
from fsmviz.grammar.answer import grammar_answer

CASES = Path(__file__).parent / "cases" / "grammars"
ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, **kwargs) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = grammar_command(*args, out=out, err=err, **kwargs)
    return status, out.getvalue(), err.getvalue()


def test_a_grammar_file_is_checked_and_summarised() -> None:
    status, out, _ = run(str(CASES / "json.gbnf"))
    assert status == 0
    assert "gbnf: 7 rules, start 'root'" in out and "a shortest sentence: '{}'" in out
    status, out, _ = run(str(CASES / "arithmetic.lark"))
    assert status == 0 and out.startswith("lark:")


def test_a_bad_grammar_says_file_line_column_and_exits_2(tmp_path) -> None:
    bad = tmp_path / "bad.gbnf"
    bad.write_text('root ::= "a" item\nitems ::= "b"\n')
    status, out, err = run(str(bad))
    assert status == 2 and not out
    assert f"{bad}:1:14: the rule 'item' is used but never defined" in err
    assert "hint: did you mean 'items'?" in err
    assert run(str(tmp_path / "missing.gbnf"))[0] == 2


def test_the_command_line_entry_point_exits_2_on_a_bad_grammar(tmp_path) -> None:
    bad = tmp_path / "bad.lark"
    bad.write_text("start: (")
    done = subprocess.run(
        [sys.executable, "-m", "fsmviz", "grammar", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert ":1:8: this ( is never closed" in done.stderr


def test_generating_under_a_grammar_from_the_command_line(tiny) -> None:
    status, out, err = run(
        str(CASES / "brackets.gbnf"), "brackets", max_tokens=12, temperature=1.0, model=tiny
    )
    assert status == 0
    assert "is a sentence of the grammar" in err
    assert compile_grammar((CASES / "brackets.gbnf").read_text()).accepts(out.rstrip("\n"))


def test_the_api_returns_the_trace_and_refuses_bad_grammars(tiny) -> None:
    result = grammar_answer((CASES / "json.gbnf").read_text(), "", 16, 1.0, 3, model=tiny)
    assert result["matched"] and result["format"] == "gbnf"
    assert len(result["steps"]) <= 16 and result["pattern"].startswith("# JSON")
    with pytest.raises(GrammarError):
        grammar_answer("root ::= [", "", model=tiny)


def test_the_endpoint_answers_bad_grammars_with_a_message_and_no_model() -> None:
    import gradio as gr

    def no_model():
        raise AssertionError("a bad grammar must be refused before the model is asked for")

    endpoint = grammar_endpoint(no_model)
    with pytest.raises(gr.Error, match=r"line 2, column 1"):
        endpoint('root ::= "a"\nroot ::= "b"', "hi")
    assert "Args:" in (endpoint.__doc__ or "")


def test_the_decoding_flags_reach_a_grammar_run_and_overshoot_is_refused(tiny) -> None:
    """``grammar`` takes every generating option: ``--stop first`` ends at the first
    sentence; ``--overshoot`` (a regex automaton's) is refused with a reason."""
    kwargs = {"max_tokens": 12, "temperature": 1.0, "model": tiny, "as_json": True}
    status, out, _ = run(str(CASES / "brackets.gbnf"), "b", decoding={"stop": "first"}, **kwargs)
    trace = json.loads(out)
    assert status == 0 and trace["options"]["stop"] == "first"
    # the first moment the text is a sentence (balanced again) is where it ends
    depth = list(itertools.accumulate(+1 if c in "([" else -1 for c in trace["text"]))
    assert depth[-1] == 0 and 0 not in depth[:-1], trace["text"]
    status, out, err = run(
        str(CASES / "brackets.gbnf"), "b", decoding={"overshoot": True}, **kwargs
    )
    assert status == 2 and not out and "overshoot" in err and "grammar" in err
    with pytest.raises(ValueError, match="overshoot"):  # the library says so too
        stream(tiny, compile_grammar("root ::= [a-z]+"), "b", overshoot=True)
    done = subprocess.run(
        [sys.executable, "-m", "fsmviz", "grammar", "--help"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert all(flag in done.stdout for flag in ("--top-p", "--top-k", "--prob-limit", "--stop"))
