"""Compare shows each decoding's progress and an estimate as it goes (issue 47, point 5):
it showed only "…" in the ways still to come, for over a minute on a CPU."""

from __future__ import annotations

import re
import time

import pytest

from fsmviz.app import compare_page
from fsmviz.app.compare_page import CompareInputs, on_compare
from fsmviz.generation.compare import WAYS, Decoding
from fsmviz.html.compare import pending_notes

CONSTRAINED, FIRST = WAYS[0], WAYS[2]


def decoding(way, tokens: int, seconds: float) -> Decoding:
    return Decoding(way, "1", True, tokens, seconds, "accepted", "1")


def test_the_running_way_counts_its_seconds_then_the_pace_gives_an_estimate() -> None:
    first, waiting = pending_notes([], 2, 64, 3.2)
    assert "running for 3 s" in first and "64 tokens" in first and waiting == "waiting"
    # a way done: 32 tokens in 8 s is 4 tokens/s, so 64 tokens take at most 16 s each
    running, waiting = pending_notes([decoding(CONSTRAINED, 32, 8.0)], 2, 64, 6.0)
    assert "at most ~16 s each" in running and "~26 s left in all" in running
    assert "4.0 tokens/s" in running and waiting == "waiting · at most ~16 s"


def test_the_table_ticks_while_a_way_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow_rows(model, pattern, prompt, opts, ways, retries):
        time.sleep(1.5)
        yield decoding(CONSTRAINED, 4, 1.5)
        time.sleep(1.5)
        yield decoding(FIRST, 4, 1.5)

    class Ready:  # the page's BackgroundModel
        def get(self, timeout: float):
            return object()

    monkeypatch.setattr(compare_page, "compare_rows_on_gpu", slow_rows)
    asked = CompareInputs("[0-9]", "x", 4, 0.0, 0, False, 0, ["constrained", "first"])
    tables = [t for t, _, _ in on_compare(Ready(), asked)]
    ticks = [t for t in tables if re.search(r"running for \d+ s", t)]
    assert any("estimate comes" in t for t in ticks), tables  # before the first way ends
    assert any("tokens/s so far" in t for t in ticks), tables  # after it: the pace
    assert tables[-1].count("data-way=") == 2 and 'class="pending"' not in tables[-1]
