"""The Compare view's table and chart: one prompt and seed under every way of decoding
(``fsmviz.generation.compare``'s ``Decoding`` rows), as a table of outputs (ways still
running say how long they have run and may take) and one chart of valid-mass curves.

plotly is imported on the first chart drawn, never when this module is.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fsmviz.generation.compare import Decoding
from fsmviz.html.charts import MASS_LINEAR
from fsmviz.html.text import shown

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = [
    "CHART_BEFORE",
    "CHART_NO_MASK",
    "CHART_WAITING",
    "compare_figure",
    "compare_html",
    "pending_notes",
    "placeholder_figure",
]


def _plotly():
    """plotly's figure module, imported on the first chart drawn."""
    import plotly.graph_objects as go  # heavy and the page's: not at the engine's import

    return go


COLORS = {"constrained": "#2b6cd4", "overshoot": "#c0392b", "first": "#27ae60"}


def compare_html(
    rows: Sequence[Decoding], pending: Sequence[str] = (), notes: Sequence[str] = ()
) -> str:
    """The table of decodings side by side (``pending``: labels of ways still running,
    each with its note of progress and estimate, ``pending_notes``, where given).

    >>> compare_html([])
    '<p class="empty">Press Compare: each way of decoding runs on the same prompt and seed.</p>'
    """
    if not rows and not pending:
        return (
            '<p class="empty">Press Compare: each way of decoding runs on the same prompt '
            "and seed.</p>"
        )
    body = []
    for row in rows:
        ok = "✓ yes" if row.matched else "✗ no"
        raw = (
            f'<br><small title="what the model wrote">wrote: '
            f"<code>{html.escape(shown(row.raw[:200]))}</code></small>"
            if row.raw != row.output
            else ""
        )
        body.append(
            f'<tr data-way="{row.way.name}" class="{"ok" if row.matched else "no"}">'
            f"<td>{html.escape(row.way.label)}</td>"
            f"<td><code>{html.escape(shown(row.output))}</code>{raw}</td>"
            f"<td>{ok}</td><td>{row.tokens}</td><td>{row.seconds:.2f} s</td>"
            f"<td>{html.escape(row.stop_reason)}"
            f"{' · ' + html.escape(row.note) if row.note else ''}</td></tr>"
        )
    for label, note in zip(pending, [*notes, *[""] * len(pending)], strict=False):
        body.append(
            f'<tr class="pending"><td>{html.escape(label)}</td>'
            f'<td colspan="5" class="progress">{html.escape(note) or "…"}</td></tr>'
        )
    head = (
        "<tr><th>decoding</th><th>output</th><th>matches?</th><th>tokens</th><th>time</th>"
        "<th>stopped</th></tr>"
    )
    rows_html = "".join(body)
    return f'<table class="compare steps"><thead>{head}</thead><tbody>{rows_html}</tbody></table>'


CHART_BEFORE = (
    "Press Compare: each masked way (the first three) draws a line here,<br>"
    "its valid mass at each step: how much of the model's probability the pattern allowed."
)
"""The chart's placeholder before any run (the empty axes said nothing)."""


CHART_WAITING = "The valid-mass lines come here once every way has run."


CHART_NO_MASK = (
    "No line to draw: only the masked ways (the first three) have a valid mass;<br>"
    "the unconstrained ones wrote freely."
)


def placeholder_figure(text: str) -> go.Figure:
    """An empty chart that says in words what will be drawn in it (no axes).

    >>> placeholder_figure("soon").layout.annotations[0].text
    'soon'
    """
    figure = _plotly().Figure()
    figure.add_annotation(
        text=text,
        showarrow=False,
        x=0.5,
        y=0.5,
        xref="paper",
        yref="paper",
        font={"size": 14, "color": "#888"},
    )
    figure.update_layout(
        height=160,
        margin={"l": 20, "r": 20, "t": 20, "b": 20},
        xaxis={"visible": False},
        yaxis={"visible": False},
    )
    return figure


def compare_figure(rows: Sequence[Decoding]) -> go.Figure:
    """The masked runs' valid mass per step, one curve each (the free runs have none: the
    pattern did not guide them); no masked run, a placeholder saying so."""
    if not any(row.steps for row in rows):
        return placeholder_figure(CHART_NO_MASK)
    figure = _plotly().Figure()
    for row in rows:
        if not row.steps:
            continue
        figure.add_trace(
            _plotly().Scatter(
                x=[s.index for s in row.steps],
                y=[s.valid_mass for s in row.steps],
                mode="lines+markers",
                name=row.way.label,
                line={"color": COLORS.get(row.way.name, "#888")},
                hovertext=[f"{row.way.name} step {s.index}: {s.text!r}" for s in row.steps],
                hoverinfo="text+y",
            )
        )
    figure.update_layout(
        height=280,
        margin={"l": 60, "r": 20, "t": 30, "b": 40},
        xaxis={"title": "step", "rangemode": "tozero", "tickformat": "d"},
        yaxis=MASS_LINEAR,
        legend={"orientation": "h", "y": -0.25},
    )
    return figure


def pending_notes(
    rows: Sequence[Decoding], waiting: int, max_tokens: int, running: float
) -> list[str]:
    """What the ways still to come say (issue 47, point 5: only "…" for over a minute):
    the running one how long it has run, and with the pace of the ways done so far
    (tokens per second) the most each may take and the most left in all.

    >>> pending_notes([], 2, 64, 3.2)
    ['running for 3 s (at most 64 tokens; an estimate comes with the first way done)', 'waiting']
    """
    if waiting <= 0:
        return []
    tokens, seconds = sum(r.tokens for r in rows), sum(r.seconds for r in rows)
    if not rows or tokens <= 0 or seconds <= 0:
        first = f"running for {running:.0f} s (at most {max_tokens} tokens; an estimate "
        return [first + "comes with the first way done)", *["waiting"] * (waiting - 1)]
    each = max_tokens / (tokens / seconds)
    left = max(each - running, 0) + each * (waiting - 1)
    pace = f"{tokens / seconds:.1f} tokens/s so far"
    first = f"running for {running:.0f} s · at most ~{each:.0f} s each"
    first += f", ~{left:.0f} s left in all ({pace})"
    return [first, *[f"waiting · at most ~{each:.0f} s"] * (waiting - 1)]
