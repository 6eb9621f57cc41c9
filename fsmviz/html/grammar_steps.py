"""What each step of a finished grammar run shows, sent with the run's last frame so that
the browser steps through the run at once (static/grammar.js), as the Generate tab does.

Choosing a step on the Grammar tab changes six things: the rules drawing's lights, the
parser's place in words, the terminal being read (its own small DFA, lit), the step's
row, token and card, its allowed set, and the chart's marker. The row, token, card,
allowed set and marker are read from what the page already holds (the step table, the
allowed sets' JSON: static/app.js paints them for both tabs); the lights come as
``fsmviz.html.grammar.rules_lights``; the place and the terminal come from here, as HTML (each
escaped as the page's own), in one hidden element::

    <div class="step-views" hidden data-json='{"p": [place, …], "t": [terminal, …],
                                                 "s": [[p, t], …]}'>

``p`` and ``t`` are the distinct pieces (a run of 64 tokens often reads one terminal's
few states over and over); ``s[i]`` indexes step ``i``'s. The pieces are bounded by
``STEP_VIEWS_CHARS`` in all: past it a step shows a short note instead of its terminal's
drawing (a counted repeat's drawing says "7 of 160", a different picture at each token).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from html import escape
from typing import Any

from fsmviz.grammar.place import Chart, place_in
from fsmviz.html.grammar import place_html, terminal_html

__all__ = ["STEP_VIEWS_CHARS", "step_views", "step_views_data"]

STEP_VIEWS_CHARS = 1_500_000
"""Characters of place and terminal HTML sent with a run at most (a 256-token run whose
every step has its own terminal drawing would be several MB)."""
NOT_KEPT = (
    "<p class=\"empty\">This step's terminal drawing was not kept: the run's drawings "
    "passed the page's size limit.</p>"
)


class _Pieces:
    """Distinct HTML pieces, each kept once, by index, within a shared character budget."""

    def __init__(self, budget: list[int]) -> None:
        self.items: list[str] = []
        self.index: dict[str, int] = {}
        self.budget = budget

    def add(self, html: str, fallback: str) -> int:
        """The index of ``html``, added if new and within the budget; else ``fallback``'s."""
        if html in self.index:
            return self.index[html]
        if len(html) > self.budget[0]:
            html = fallback
            if html in self.index:
                return self.index[html]
        self.budget[0] -= len(html)
        self.index[html] = len(self.items)
        self.items.append(html)
        return self.index[html]


def step_views_data(charts: Sequence[Chart], budget: int = STEP_VIEWS_CHARS) -> dict[str, Any]:
    """The place and terminal of each step, from the charts before the run and after each
    step (``fsmviz.grammar.place.step_charts``): ``{"p": [...], "t": [...], "s": [[p, t], ...]}``.

    >>> from fsmviz.html.grammar import grammar_view, step_charts
    >>> from fsmviz.generation.trace import Step
    >>> view = grammar_view('root ::= "a" [0-9]{2}', "gbnf")
    >>> steps = [Step(k, c, k, k + 1, 1, 1.0, (), index=k, token_bytes=c.encode())
    ...          for k, c in enumerate("a12")]
    >>> data = step_views_data(step_charts(view.network, steps))
    >>> len(data["s"]), len(data["p"])
    (3, 3)
    >>> [("terminal" in data["t"][t]) for _, t in data["s"]]
    [False, True, False]

    After ``a`` the parser waits for the digits' terminal; after ``a1`` it is half way
    through it (its DFA drawn, lit); after ``a12`` the sentence is whole.
    """
    left = [budget]
    places, terminals = _Pieces(left), _Pieces(left)
    shown = []
    for chart in charts[1:]:
        place = place_in(chart)
        p = places.add(place_html(place), place_html(None))
        t = terminals.add(terminal_html(place), NOT_KEPT)
        shown.append([p, t])
    return {"p": places.items, "t": terminals.items, "s": shown}


def step_views(charts: Sequence[Chart], budget: int = STEP_VIEWS_CHARS) -> str:
    """``step_views_data`` as the hidden element the page's script reads ("" without
    steps). In an attribute, not a ``<template>``: Gradio patches a redrawn HTML output
    node by node, and a template's content is no child node. ``data-run``, a digest of the
    data, tells the script a new run's data without reading the whole attribute again."""
    if len(charts) < 2:
        return ""
    data = json.dumps(step_views_data(charts, budget), ensure_ascii=False, separators=(",", ":"))
    run = hashlib.blake2b(data.encode("utf-8"), digest_size=8).hexdigest()
    return f'<div class="step-views" hidden data-run="{run}" data-json="{escape(data)}"></div>'
