"""The page's model choice (``fsmviz.app.backend``) without a server: the operator's
``--server NAME=URL`` read and refused by name, a server's address kept out of what the
page shows, and the engine-check table escaped. The runs on a real server are in
tests/test_server_page.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fsmviz import Vocabulary
from fsmviz.app.backend import (
    BUNDLED,
    ServerSource,
    named,
    parse_servers,
    run_source,
)
from fsmviz.errors import InputError
from fsmviz.generation.server import ServerModel, ServerRun
from fsmviz.generation.trace import GenerationOptions
from fsmviz.html.engine_check import engine_check_html

ROOT = Path(__file__).resolve().parent.parent


def test_servers_are_read_as_name_equals_url():
    given = ["prod = http://10.0.0.5:8000", "", "local=https://127.0.0.1:8000/v1"]
    assert parse_servers(given) == {
        "prod": "http://10.0.0.5:8000",
        "local": "https://127.0.0.1:8000/v1",
    }


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("http://127.0.0.1:8000", "is not NAME=URL"),
        ("prod=127.0.0.1:8000", "is not NAME=URL"),
        ("prod=file:///etc/passwd", "is not NAME=URL"),
        ("=http://127.0.0.1:8000", "is not NAME=URL"),
        (f"{BUNDLED}=http://127.0.0.1:8000", "is taken"),
    ],
)
def test_a_server_entry_that_is_not_name_equals_url_is_refused_by_name(entry, words):
    with pytest.raises(InputError, match=words) as caught:
        parse_servers([entry])
    assert repr(entry) in str(caught.value)


def test_the_same_name_twice_is_refused():
    with pytest.raises(InputError, match="the name 'a' is taken"):
        parse_servers(["a=http://127.0.0.1:1", "a=http://127.0.0.1:2"])


@pytest.mark.parametrize("command", [[str(ROOT / "app.py")], ["-m", "fsmviz", "serve"]])
def test_the_app_refuses_a_bad_server_at_once_with_status_2(command):
    done = subprocess.run(
        [sys.executable, *command, "--server", "prod=http://127.0.0.1:8000", "--server", "nourl"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert "app.py: error: --server 'nourl' is not NAME=URL" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_bundled_choice_is_the_apps_model_and_a_name_is_a_server_source():
    models = object()
    assert run_source(models, None) is models and run_source(models, BUNDLED) is models
    source = run_source(models, "prod")
    assert isinstance(source, ServerSource) and source.name == "prod"


def test_a_name_no_operator_configured_is_refused_by_name():
    from fsmviz.generation.models import ModelLoadError

    with pytest.raises(ModelLoadError, match="no server named 'elsewhere' is offered here"):
        ServerSource("elsewhere").get()


def test_the_servers_address_is_replaced_by_its_name():
    url = "http://10.0.0.5:8000"
    said = "the server at http://10.0.0.5:8000 answered 500; (prod at http://10.0.0.5:8000/v1)"
    assert named(said, url, "prod") == ("the server 'prod' answered 500; (prod at server 'prod')")


def replayed(tokens: list[str], pattern: str, written: list[int], candidates):
    """A server run's replay of ``written`` (ids into ``tokens``) under ``pattern``, with
    the server's visible candidates per step: the replay itself, no server."""
    vocab = Vocabulary.from_strings(tokens, eos_token="</s>")
    model = ServerModel("toy", "http://10.0.0.5:8000/v1", "toy", tokenizer=None, vocab=vocab)
    run = ServerRun(model, pattern, GenerationOptions())
    run.candidates = candidates
    run.finish_reason = "stop"
    steps = run._replay(written, [-0.1] * len(written), [{t: -0.1} for t in written])
    return run, steps


class Source:
    """What ``engine_check_html`` reads of a ``ServerSource``: its name and runs."""

    def __init__(self, run) -> None:
        self.name = "<b>prod</b>"
        self.runs = [run]


def test_the_engine_check_table_names_each_steps_verdict_escaped():
    # ids 0..2, EOS 3: the server wrote "<i>" then "1"; it offered "x" at step 1
    run, steps = replayed(["<i>", "1", "x"], r"<i>[0-9]", [0, 1, 3], [{0: -0.1}, {1: -0.2, 2: -1}])
    page = engine_check_html(Source(run), steps)
    assert "&lt;b&gt;prod&lt;/b&gt;" in page and "<b>prod" not in page
    assert "<code>&lt;i&gt;</code>" in page and "<i>" not in page
    assert page.count('<tr class="agrees">') == 2  # "<i>" and EOS
    assert page.count('<tr class="disagrees">') == 1
    assert "your server allowed `x` at step 1; no match can follow it" in page
    assert "1 of 3 steps disagree" in page


def test_a_token_the_replay_refused_gets_a_row_of_its_own():
    run, steps = replayed(["1", "x"], r"[0-9]+", [0, 1, 2], [{0: -0.1}, {1: -0.1}])
    assert len(steps) == 1 and run.stop_reason == "engine_error"
    rows = run.verdicts(steps)
    assert [(row.step, row.token, row.agrees) for row in rows] == [(0, "1", True), (1, "x", False)]
    assert rows[1].allowed == 2  # "1" and EOS were allowed where it wrote "x"
    assert rows[1].messages == ("your server allowed `x` at step 1; no match can follow it",)
    assert "The replay stopped there." in engine_check_html(Source(run), steps)


def test_a_run_on_the_bundled_model_has_no_engine_to_check():
    assert "choose a server in the model menu" in engine_check_html(object(), ())


# ------------------------------------------------ a server that is down, on every page action


@pytest.fixture
def down():
    """A server offered as ``down`` at a port where nothing listens."""
    import socket

    from fsmviz.app.backend import configure_servers

    with socket.socket() as probe:  # a free port, closed again: nothing answers there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    configure_servers({"down": f"http://127.0.0.1:{port}"})
    yield f"127.0.0.1:{port}"
    configure_servers({})


def said_in(updates, address: str) -> str:
    """All the text a handler's updates put on the page, checked free of ``address``."""
    import html as markup

    text = markup.unescape(" ".join(str(v) for u in updates for v in u.values()))
    assert address not in text
    return text


def test_a_server_that_is_down_is_named_on_each_action_within_seconds(down):
    import time

    from fsmviz.app import handlers as h
    from fsmviz.app.compare_page import CompareInputs, on_compare
    from fsmviz.app.grammar_page import GrammarRunInputs, GrammarTab
    from fsmviz.app.grammar_page import on_run as on_grammar_run

    page = h.Page(*(f"c{i}" for i in range(22)))
    refused = "nothing answers at server 'down': the connection was refused"
    started = time.monotonic()
    ran = list(h.on_run(page, None, h.RunInputs("[0-9]+", "A number:", 4, 0.0, 0, True, 0.0,
                                                 backend="down")))  # fmt: skip
    assert refused in said_in(ran, down) and ran[-1][page.run]["interactive"] is True
    tab = GrammarTab(page, "place", "terminal")
    asked = GrammarRunInputs('root ::= "a"', "auto", "A:", 4, 0.0, 0, True, "down")
    grammar = list(on_grammar_run(tab, None, asked, h.StopMark()))
    assert refused in said_in(grammar, down)
    compared = list(
        on_compare(
            None, CompareInputs("[0-9]+", "A:", 4, 0.0, 0, True, 0, ["constrained"], 0, "down")
        )
    )
    assert refused in said_in([{"table": compared[-1][0]}], down)
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(
    ("endpoint", "first"),
    [("trace", "[0-9]+"), ("schema", '{"type": "integer"}'), ("grammar", 'root ::= "a"')],
)
def test_the_api_endpoints_take_a_servers_name_never_a_url(down, endpoint, first):
    import gradio as gr

    from fsmviz.app.api import tools

    call = tools(None)[endpoint]
    for backend in (f"http://{down}", "elsewhere"):
        with pytest.raises(gr.Error, match=f"no server named {backend!r} is offered here"):
            call(first, "A number:", 4, backend=backend)
    with pytest.raises(gr.Error, match="nothing answers at server 'down'") as caught:
        call(first, "A number:", 4, backend="down")
    assert down not in str(caught.value)


def test_compare_on_the_bundled_model_keeps_every_way():
    from fsmviz.app.backend import server_ways
    from fsmviz.generation.compare import WAYS

    assert server_ways(object(), list(WAYS), 0.5) == (list(WAYS), "")
