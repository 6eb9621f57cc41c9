"""The page's other actions on a configured server (issue 45 point 5), at the handlers,
against the real vLLM server (no browser: tests/test_server_page.py drives the page once):
Generate's shadow run and downloads, Apply & run, Compare (the ways a server can run, and
the page saying which it cannot and why), the Grammar tab and the ``/trace`` endpoint by
the server's name. ``models`` is None throughout: a run that touched the bundled model
would fail, so each one here ran on the server.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
import regex

from fsmviz.app import handlers as h
from fsmviz.app.backend import configure_servers
from fsmviz.app.compare_page import CompareInputs, on_compare
from fsmviz.generation.compare import WAYS

pytestmark = pytest.mark.slow

NAME = "vllm"
ANSWER = "(yes|no)"
ASK = "Is the sky blue? Answer yes or no."
SAID = f"at server '{NAME}'"
"""How a server run's notes name the server (never its URL)."""


@pytest.fixture(scope="module")
def offered(vllm_server):
    """The real server offered as ``vllm`` (``--server vllm=URL``) in this process; its
    URL. The only module fixture here: conftest keeps these tests on one worker."""
    configure_servers({NAME: vllm_server})
    yield vllm_server
    configure_servers({})


def page() -> h.Page:
    return h.Page(*(f"c{i}" for i in range(22)))  # every component, engine check included


def last(updates) -> dict:
    """Every component's last value over a handler's updates (the status as read)."""
    out: dict = {}
    for update in updates:
        out.update(update)
    if isinstance(out.get("c7"), str):
        out["c7"] = html.unescape(out["c7"])
    return out


def generated_on(name: str, url: str) -> tuple[h.Page, h.RunInputs, dict]:
    """Generate on the server offered as ``name`` (at ``url``), checked as every server's
    run is: a match, the server named (never its URL) in the status, the notes and the
    downloads, a shadow run of its free tokens, and an engine check whose rows all agree.
    The page, what was asked and the last values; tests/test_server_llama_views.py too."""
    said = f"at server '{name}'"
    p = page()
    asked = h.RunInputs(ANSWER, ASK, 4, 0.0, 0, True, 0.0, backend=name)
    ran = last(h.on_run(p, None, asked))
    assert ran.get(p.trace) is not None, ran.get(p.status)
    trace = ran[p.trace]
    assert regex.fullmatch(ANSWER, trace.text) and trace.matched, ran[p.status]
    assert said in ran[p.status] and url not in ran[p.status]
    assert 'class="tok"' in ran[p.shadow]  # the shadow run: the server's free tokens
    files = {Path(f).name: Path(f) for f in ran[p.downloads]}
    saved = json.loads(files["trace.json"].read_text())
    assert saved["text"] == trace.text and any(said in note for note in saved["notes"])
    assert "dfa.svg" in files and url not in files["trace.json"].read_text()
    rows = re.findall(r'<tr class="(agrees|disagrees)">', ran[p.engine_check])
    assert f"Engine check: {name}" in ran[p.engine_check] and rows, ran[p.engine_check]
    assert set(rows) == {"agrees"}, ran[p.engine_check]
    return p, asked, ran


def test_generate_then_apply_and_run_on_a_server_with_shadow_runs_and_downloads(offered):
    p, asked, ran = generated_on(NAME, offered)
    trace = ran[p.trace]
    # Apply & run: the run above is "before"; the fix's run is the server's too
    fix = json.dumps({"regex": ANSWER + r"\."})
    applied = last(h.on_apply(p, None, fix, trace, asked))
    after = applied[p.trace]
    assert after is None or after.pattern == ANSWER + r"\."  # cleared, then its frames
    assert SAID in applied[p.status], applied[p.status]
    assert "before" in applied[p.compare_view].lower() and applied[p.compare_chart] is not None
    check = applied[p.engine_check]
    rows = re.findall(r'<tr class="(agrees|disagrees)">', check)
    assert f"Engine check: {NAME}" in check and rows and set(rows) == {"agrees"}
    assert applied[p.regex] == ANSWER + r"\."


def compared_on(name: str, url: str) -> str:
    """Compare every way on the server offered as ``name``: the ways a server can run ran,
    the masked one's engine check agrees row by row, and the URL is never shown. The
    table (tests/test_server_llama_views.py too)."""
    *_, (table, chart, check) = on_compare(None, CompareInputs(
        "[0-9]+", "How many moons does Mars have?", 4, 0.0, 0, True, 0,
        [w.name for w in WAYS], 0.5, name,
    ))  # fmt: skip
    assert chart is not None, table
    # the masked way's engine check: its tokens and the server's visible mask, each agreeing
    rows = re.findall(r'<tr class="(agrees|disagrees)">', check)
    assert f"Engine check: {name}" in check and rows and set(rows) == {"agrees"}, check
    assert url not in check and url not in table
    assert re.findall(r'<tr data-way="([a-z]+)"', table) == ["constrained", "extract", "retries"]
    return table


def test_compare_on_a_server_runs_what_it_can_and_says_what_it_cannot(offered):
    table = compared_on(NAME, offered)
    said = table[: table.index("<table")]
    assert f"<b>{NAME}</b>" in said
    for way in WAYS:
        assert (way.label in said) == (way.name in ("overshoot", "first"))
    assert "prob limit" in said


def grammar_run_on(name: str) -> tuple[h.Page, dict]:
    """The Grammar tab's run of ``root ::= "yes" | "no"`` on the server offered as
    ``name``: a match, the server named in the status. The page and the last values."""
    from fsmviz.app.grammar_page import GrammarRunInputs, GrammarTab, on_run

    p = page()
    tab = GrammarTab(p, "place", "terminal")
    asked = GrammarRunInputs('root ::= "yes" | "no"', "auto", ASK, 4, 0.0, 0, True, name)
    ran = last(on_run(tab, None, asked, h.StopMark()))
    assert ran.get(p.trace) is not None, ran.get(p.status)
    assert ran[p.trace].text in ("yes", "no") and ran[p.trace].matched, ran[p.status]
    assert f"at server '{name}'" in ran[p.status], ran[p.status]
    return p, ran


def test_the_grammar_tab_runs_on_a_server(offered):
    p, ran = grammar_run_on(NAME)
    assert "every one agrees" in ran[p.status]


def test_the_api_endpoints_run_on_a_server_named_by_its_name(offered):
    """``/trace``, ``/schema`` and ``/grammar`` with ``backend=NAME`` (``models`` None)."""
    from fsmviz.app.api import tools

    endpoints = tools(None)
    answer = endpoints["trace"](ANSWER, ASK, 4, backend=NAME)
    assert regex.fullmatch(ANSWER, answer["text"]) and answer["matched"]
    schema = '{"type": "string", "enum": ["yes", "no"]}'
    json_answer = endpoints["schema"](schema, ASK, 6, whitespace="flexible", backend=NAME)
    assert json_answer["json"]["valid"], json_answer
    grammar = endpoints["grammar"]('root ::= "yes" | "no"', ASK, 4, backend=NAME)
    assert grammar["text"] in ("yes", "no") and grammar["matched"]
    for notes in (answer["notes"], json_answer["trace"]["notes"], grammar["notes"]):
        assert any(SAID in note for note in notes) and not any(offered in n for n in notes)


def test_a_constraint_the_server_refuses_is_named_with_its_words_in_seconds(offered):
    """fsmviz takes ``(?i)yes``; vLLM's xgrammar refuses ``(?i)`` (its stream ends with
    "Internal server error"): the page says so, naming the server by name and quoting it,
    within the fault bound, and is ready for the next run. The server keeps serving."""
    import time

    p = page()
    started = time.monotonic()
    asked = h.RunInputs("(?i)yes", ASK, 4, 0.0, 0, True, 0.0, backend=NAME)
    ran = last(h.on_run(p, None, asked))
    status = ran[p.status]
    assert time.monotonic() - started < 30, status
    assert status.startswith(f"The generation stopped: the server '{NAME}' "), status
    assert "Internal server error" in status and offered not in status
    assert ran[p.run]["interactive"] is True and ran.get(p.trace) is None
    again = last(h.on_run(p, None, h.RunInputs(ANSWER, ASK, 2, 0.0, 0, True, 0.0, backend=NAME)))
    assert again.get(p.trace) is not None, again.get(p.status)
