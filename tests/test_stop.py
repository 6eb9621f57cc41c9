# ruff: noqa: F811  (the fixtures imported from test_e2e are used as arguments)
"""Stop ends a run at once, on a loaded machine (issue 47, point 5).

CI saw a Stop click fail to stop a run: the run's handler looked at the session's stop
mark only when a frame came, and a frame waited for the model's next token (1-2.5 s each
on a loaded 2-core machine), then the generation was closed, which waited for the token
in flight once more; Stop's own event went through the queue too. Now Stop is heard
outside the queue and the handler looks at the mark every 50 ms (``fsmviz.app.stopping``).

The time is measured in the page, from the click's own event to the status line saying
"Stopped…", while another process keeps a core busy.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from test_e2e import (  # noqa: F401  (fixtures used by name)
    CHROMIUM_ARGS,
    POLL_MS,
    RUN_TIMEOUT,
    Page,
    app,
    app_url,
    browser_type_launch_args,
    dialogs,
    eventually,
    expect,
    set_inputs,
)
from test_page import LONG_RUN

from bench.page_bench import WATCH_STOP

pytestmark = pytest.mark.e2e

STOP_BOUND_MS = 15_000
"""Stop → "Stopped" in the page, at most: a Stop heard only when the run ends would take
minutes (``test_page.LONG_RUN``), so this bound fails on the old handler, on any load. The
issue's 1 s target is timed by ``python -m bench.page_bench`` (its "Stop → Stopped" row), where a
busy machine cannot make a test fail: measured 0.7-1.1 s here at a load of 14-21 on 2
cores, with another core kept busy."""


@contextmanager
def busy_core() -> Iterator[None]:
    """Another process spinning on one core while the block runs (a loaded machine): from
    the run's start to its "Stopped", not while the page loads (the spinner's CPU is the
    suite's too)."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def test_stop_ends_a_run_at_once_under_load(app: Page) -> None:
    set_inputs(app, *LONG_RUN, chat=True)
    app.evaluate(WATCH_STOP)
    with busy_core():
        app.click("#run")
        eventually(lambda: app.locator("#output .tok").count() >= 3, timeout=RUN_TIMEOUT / 1000)
        app.click("#stop")
        app.wait_for_function(
            "() => window.fsmvizStop.stopped !== null", timeout=RUN_TIMEOUT, polling=POLL_MS
        )
    watched = app.evaluate("() => window.fsmvizStop")
    took = watched["stopped"] - watched["clicked"]
    print(f"Stop → Stopped: {took:.0f} ms")
    assert took <= STOP_BOUND_MS, f"Stop took {took:.0f} ms to end the run: {watched}"
    # the run's own last word: what was written is kept, and nothing was written after
    expect(app.locator("#status")).to_have_text(
        re.compile(r"^\s*Stopped after [\d,]+ tokens?\.\s*$"), timeout=RUN_TIMEOUT
    )
    kept = int(re.search(r"after ([\d,]+)", app.text_content("#status"))[1].replace(",", ""))
    assert kept == app.locator("#output .tok").count()
    expect(app.locator("#run")).to_be_enabled()
    expect(app.locator("#stop")).to_be_hidden()
