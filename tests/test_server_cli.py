"""``--server URL`` on ``generate``, ``schema`` and ``grammar``: the run on a real vLLM
server (the session's ``vllm_server``, tests/conftest.py), the text on stdout, and on
stderr the run's notes and the engine check step by step. A JSON Schema goes to the
server as vLLM's ``json`` constraint, a grammar as its ``grammar``; fsmviz replays the
tokens through its own compile of each. No mock: without ``make vllm`` the server tests
are skipped, saying so (under CI they fail).
"""

from __future__ import annotations

import json
import re
import time

import jsonschema
import pytest
import regex

from fsmviz.cli import main

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
ASK_PERSON = "Describe Ada Lovelace, aged 36, as JSON."
YES_NO = 'root ::= answer "."\nanswer ::= "yes" | "no"\n'
ASK_SKY = "Is the sky blue? Answer yes or no."
ROW = re.compile(r"^\s*(\d+)  `(.*)`\s+([\d,]+)\s+(\d+)  (.*)$")


@pytest.fixture(scope="module")
def url(vllm_server):
    """The server's URL; every test here that needs the server asks for this one module
    fixture, so that conftest puts them in one xdist group (one worker, one server)."""
    return vllm_server


def engine_rows(err: str) -> list[tuple[int, str, int, int, str]]:
    """The engine check's table from stderr: (step, token, allowed, visible, verdict)."""
    head = re.search(r"^engine check, (\d+) steps: .*$", err, re.M)
    assert head, err
    rows = []
    for line in err[head.end() :].splitlines()[2:]:
        found = ROW.match(line)
        if found:
            step, token, allowed, visible, verdict = found.groups()
            rows.append((int(step), token, int(allowed.replace(",", "")), int(visible), verdict))
    assert len(rows) == int(head.group(1)), err
    return rows


def spelled(rows) -> str:
    """The text the table's tokens spell (EOS left out; its printable escapes undone)."""
    text = "".join(token for _, token, *_ in rows if token != "EOS")
    return text.replace("\\n", "\n").replace("\\t", "\t")


@pytest.mark.slow
def test_generate_on_the_server_prints_the_run_and_each_steps_verdict(url, capsys):
    pattern = "(yes|no)( it is)?"
    status = main(["generate", "--server", url, "--max-tokens", "8", pattern, ASK_SKY])
    out, err = capsys.readouterr()
    text = out.rstrip("\n")
    assert status == (0 if regex.fullmatch(pattern, text) else 1), (out, err)
    assert regex.fullmatch(pattern, text), (text, err)
    rows = engine_rows(err)
    assert [step for step, *_ in rows] == list(range(len(rows)))
    assert spelled(rows) == text  # the table is the run the server wrote, token by token
    assert all(verdict == "agrees" and visible >= 1 for *_, visible, verdict in rows), err
    assert rows[0][2] >= 2  # "yes" and "no" at least were allowed at the first step
    assert "Engine check:" in err and "every one agrees" in err
    assert f"{url}/v1" in err  # the notes name the server (the command line is the operator's)


@pytest.mark.slow
def test_schema_on_the_server_goes_as_json_and_replays_through_fsmvizs_compile(
    url, tmp_path, capsys
):
    """vLLM's JSON engine (xgrammar) writes any whitespace between JSON tokens: replayed
    through fsmviz's compile with flexible whitespace, every token is allowed."""
    schema = tmp_path / "person.json"
    schema.write_text(json.dumps(PERSON))
    argv = ["schema", "--server", url, "--whitespace", "flexible", "--max-tokens", "40"]
    status = main([*argv, str(schema), ASK_PERSON])
    out, err = capsys.readouterr()
    assert status == 0, err
    jsonschema.validate(json.loads(out), PERSON)
    assert "valid JSON for the schema (accepted" in err
    rows = engine_rows(err)
    assert spelled(rows) == out.rstrip("\n")
    assert rows[-1][1] == "EOS"
    assert all(verdict == "agrees" for *_, verdict in rows), err


@pytest.mark.slow
def test_the_servers_json_whitespace_is_named_where_fsmvizs_compile_refuses_it(
    url, tmp_path, capsys
):
    """The same schema with fsmviz's default whitespace (one optional space): the server's
    own JSON engine let a newline through after ``{``, which fsmviz's compile refuses. The
    engine check names it, at the step where it happened, and the replay stops there."""
    schema = tmp_path / "person.json"
    schema.write_text(json.dumps(PERSON))
    status = main(["schema", "--server", url, "--max-tokens", "6", str(schema), ASK_PERSON])
    out, err = capsys.readouterr()
    assert status == 1, err  # the text fsmviz kept is not valid JSON
    rows = engine_rows(err)
    wrong = [row for row in rows if row[4] != "agrees"]
    assert wrong, err
    step, token, *_, verdict = wrong[0]
    assert "\\n" in token and f"your server allowed `{token}` at step {step}" in verdict
    assert "Engine disagreement:" in err and "engine_error" in err


@pytest.mark.slow
def test_grammar_on_the_server_goes_as_gbnf_and_replays_through_the_exact_mask(
    url, tmp_path, capsys
):
    grammar = tmp_path / "yes_no.gbnf"
    grammar.write_text(YES_NO)
    status = main(["grammar", "--server", url, "--max-tokens", "8", str(grammar), ASK_SKY])
    out, err = capsys.readouterr()
    text = out.rstrip("\n")
    assert status == 0 and text in ("yes.", "no."), (out, err)
    assert "is a sentence of the grammar" in err
    rows = engine_rows(err)
    assert spelled(rows) == text and rows[-1][1] == "EOS"
    assert all(verdict == "agrees" for *_, verdict in rows), err


def test_a_server_and_a_local_model_at_once_are_refused(capsys):
    status = main(["generate", "--server", "http://127.0.0.1:1", "--model", "x", "[0-9]", "A:"])
    assert status == 2
    assert "give --model or --server, not both" in capsys.readouterr().err
    status = main(["generate", "--server-model", "SmolLM2", "[0-9]", "A digit:"])
    assert status == 2
    assert "--server-model names a model on a server: give --server URL" in (
        capsys.readouterr().err
    )


def test_a_server_that_is_not_there_is_a_message_and_status_2_in_time(capsys):
    from vllmserver import free_port

    url = f"http://127.0.0.1:{free_port()}"  # bound, then released: nothing listens there
    started = time.monotonic()
    status = main(["generate", "--server", url, "[0-9]{4}", "A year:"])
    err = capsys.readouterr().err
    assert status == 2 and time.monotonic() - started < 30
    assert f"error: nothing answers at {url}: the connection was refused" in err
    assert "Traceback" not in err
