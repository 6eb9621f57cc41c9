"""The page's actions on a configured llama.cpp server (``--server llama=URL``), at the
handlers as tests/test_server_views.py drives them on vLLM: Generate with its shadow run,
downloads and engine-check panel, Compare, the Grammar tab. ``models`` is None
throughout: a run that touched the bundled model would fail, so each one here ran on the
server. The server is the session's real ``llama-server`` (``llama_server``; building it
is opt-in: ``make llama``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import regex
from test_server_views import ANSWER, ASK, last, page

from fsmviz.app import handlers as h
from fsmviz.app.backend import configure_servers
from fsmviz.app.compare_page import CompareInputs, on_compare
from fsmviz.generation.compare import WAYS

pytestmark = pytest.mark.slow

NAME = "llama"
SAID = f"at server '{NAME}'"


@pytest.fixture(scope="module")
def offered(llama_server):
    """The real llama.cpp server offered as ``llama`` in this process; its URL."""
    configure_servers({NAME: llama_server})
    yield llama_server
    configure_servers({})


def test_generate_on_llama_cpp_with_shadow_run_downloads_and_engine_check(offered):
    p = page()
    asked = h.RunInputs(ANSWER, ASK, 4, 0.0, 0, True, 0.0, backend=NAME)
    ran = last(h.on_run(p, None, asked))
    assert ran.get(p.trace) is not None, ran.get(p.status)
    trace = ran[p.trace]
    assert regex.fullmatch(ANSWER, trace.text) and trace.matched, ran[p.status]
    assert SAID in ran[p.status] and offered not in ran[p.status]
    assert 'class="tok"' in ran[p.shadow]  # the shadow run: the server's free tokens
    files = {Path(f).name: Path(f) for f in ran[p.downloads]}
    saved = json.loads(files["trace.json"].read_text())
    assert saved["text"] == trace.text and offered not in files["trace.json"].read_text()
    check = ran[p.engine_check]
    rows = re.findall(r'<tr class="(agrees|disagrees)">', check)
    assert f"Engine check: {NAME}" in check and rows and set(rows) == {"agrees"}, check


def test_compare_on_llama_cpp_runs_what_it_can(offered):
    *_, (table, chart, check) = on_compare(None, CompareInputs(
        "[0-9]+", "How many moons does Mars have?", 4, 0.0, 0, True, 0,
        [w.name for w in WAYS], 0.5, NAME,
    ))  # fmt: skip
    assert chart is not None, table
    rows = re.findall(r'<tr class="(agrees|disagrees)">', check)
    assert rows and set(rows) == {"agrees"}, check
    assert re.findall(r'<tr data-way="([a-z]+)"', table) == ["constrained", "extract", "retries"]
    assert offered not in table and offered not in check


def test_the_grammar_tab_runs_on_llama_cpp(offered):
    from fsmviz.app.grammar_page import GrammarRunInputs, GrammarTab, on_run

    p = page()
    tab = GrammarTab(p, "place", "terminal")
    asked = GrammarRunInputs('root ::= "yes" | "no"', "auto", ASK, 4, 0.0, 0, True, NAME)
    ran = last(on_run(tab, None, asked, h.StopMark()))
    assert ran.get(p.trace) is not None, ran.get(p.status)
    assert ran[p.trace].text in ("yes", "no") and ran[p.trace].matched, ran[p.status]
    assert SAID in ran[p.status], ran[p.status]
