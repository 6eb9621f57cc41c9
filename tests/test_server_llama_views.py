"""The page's actions on a configured llama.cpp server (``--server llama=URL``), at the
handlers as tests/test_server_views.py drives them on vLLM: Generate with its shadow run,
downloads and engine-check panel, Compare, the Grammar tab. ``models`` is None
throughout: a run that touched the bundled model would fail, so each one here ran on the
server. The server is the session's real ``llama-server`` (``llama_server``; building it
is opt-in: ``make llama``). Each check is test_server_views.py's own, on another server.
"""

from __future__ import annotations

import pytest
from test_server_views import compared_on, generated_on, grammar_run_on

from fsmviz.app.backend import configure_servers

pytestmark = pytest.mark.slow

NAME = "llama"


@pytest.fixture(scope="module")
def offered(llama_server):
    """The real llama.cpp server offered as ``llama`` in this process; its URL."""
    configure_servers({NAME: llama_server})
    yield llama_server
    configure_servers({})


def test_generate_on_llama_cpp_with_shadow_run_downloads_and_engine_check(offered):
    generated_on(NAME, offered)


def test_compare_on_llama_cpp_runs_what_it_can(offered):
    compared_on(NAME, offered)


def test_the_grammar_tab_runs_on_llama_cpp(offered):
    grammar_run_on(NAME)
