"""The Generate tab on a server, where a run's ground shifts: a stream that breaks off
midway (issue 45 point 6) is kept as a stopped run, the server named by its name; Apply &
run after the model menu changed runs "before" again on the chosen server. The real vLLM
server writes; a relay in front of it (``test_server.Relay``) cuts the run's stream
after its first 2 kB, as a network that drops it would. At the engine:
``test_server.test_a_stream_dropped_midway_keeps_what_was_written``.
"""

from __future__ import annotations

import pytest
from test_server import PROMPTS, Relay

from fsmviz.app import handlers as h
from fsmviz.app.backend import ServerSource, configure_servers
from fsmviz.generation.trace import Trace

pytestmark = pytest.mark.slow

NAME = "flaky"
EMAIL = r"[a-z0-9._]+@[a-z0-9]+\.com"


@pytest.fixture(scope="module")
def relayed(vllm_server):
    """The real server offered as ``flaky`` through a relay, connected (whole) once, and
    as ``vllm`` directly; the relay, whose next connection (the run's stream) it cuts."""
    relay = Relay(vllm_server, cut=2_000)
    relay.first = False  # connecting (/models, /props) passes whole
    configure_servers({NAME: relay.url, "vllm": vllm_server})
    ServerSource(NAME).get(timeout=60)
    try:
        yield relay
    finally:
        configure_servers({})
        relay.close()


def test_a_stream_dropped_midway_is_kept_on_the_page_as_a_stopped_run(relayed):
    """The break is named as it happens (the engine's test holds it to ``FAULT_SECONDS``);
    the page's run goes on to score what was written and to its shadow run, whose time is
    the shared server's (four requests: seconds when it is idle)."""
    import html

    page = h.Page(*(f"c{i}" for i in range(22)))
    relayed.first = True  # the next connection is the run's stream: cut after 2 kB
    asked = h.RunInputs(EMAIL, PROMPTS["email"], 8, 0.0, 0, True, 0.0, backend=NAME)
    ran: dict = {}
    for update in h.on_run(page, None, asked):
        ran.update(update)
    trace, status = ran.get(page.trace), html.unescape(str(ran.get(page.status)))
    assert trace is not None and trace.steps, status  # what was written is kept
    assert trace.stop_reason == "engine_error" and not trace.matched
    assert not trace.steps[-1].is_eos and ran[page.output]  # the text so far is shown
    assert "broke off" in status and f"'{NAME}'" in status, status
    # the server's stream broke: not "the constraint's engine gave up" (it did not)
    assert "gave up" not in status and "could not go on" in status, status
    assert relayed.url not in status and relayed.url.removesuffix("/v1") not in status
    assert ran[page.run]["interactive"] is True  # ready for the next run


def test_apply_and_run_after_the_menu_changed_runs_before_on_the_chosen_server(relayed):
    """The last run (the same inputs) was written by another model than the menu's choice
    now: Apply & run says so and runs "before" again, on the server (``models`` is None:
    a run on the app's own model would fail), then the fix."""
    page = h.Page(*(f"c{i}" for i in range(22)))
    ask = "Is the sky blue? Answer yes or no."
    asked = h.RunInputs("(yes|no)", ask, 2, 0.0, 0, True, 0.0, backend="vllm")
    elsewhere = Trace("yes", (), "accepted", True, "(yes|no)", ask, asked.options(), model="x")
    said, ran = [], {}
    for update in h.on_apply(page, None, '{"regex": "(yes|no)\\\\.?"}', elsewhere, asked):
        said.append(str(update.get(page.status, "")))
        ran.update(update)
    assert any("the last run was on another model than vllm" in s for s in said), said
    assert ran.get(page.compare_view) and "before" in ran[page.compare_view].lower(), said
    assert ran[page.regex] == "(yes|no)\\.?"
