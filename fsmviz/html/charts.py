"""The valid-mass chart: where the constraint fights the model.

At every step the model puts some probability on the tokens the DFA allows; seed 002
calls it the summed token probability, fsmviz the *valid mass*. Near 1 the pattern and
the model agree. A collapse toward 0 is a step where the pattern forced text the model
did not want: the place to look when output goes strange. The number of allowed tokens
is drawn beside it (log scale): wide states allow tens of thousands of tokens, constant
text allows one.

plotly is imported on the first chart drawn (``_plotly``), never when this module is:
the engine imports without it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from fsmviz.generation.trace import Step
from fsmviz.html.decoding import cut_sentence
from fsmviz.html.text import shown

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["comparison_figure", "stall_figure", "valid_mass_figure"]

RING = {"color": "#c33", "width": 2}


def _plotly():
    """plotly's figure module, imported on the first chart drawn."""
    import plotly.graph_objects as go  # heavy and the page's: not at the engine's import

    return go


def valid_mass_figure(
    steps: Sequence[Step],
    *,
    log: bool = False,
    selected: int | None = None,
    marked: Iterable[int] = (),
) -> go.Figure:
    """Valid mass per step (left axis), allowed-token count (right axis, log scale);
    ``selected`` draws a vertical line, ``marked`` steps (from a finding) are ringed."""
    figure = _plotly().Figure()
    figure.add_trace(_mass_line(steps, log))
    figure.add_trace(_allowed_line(steps))
    marked = sorted(set(marked))
    if marked:
        figure.add_trace(_finding_rings(steps, marked))
    for s in steps:
        if s.cut:  # where overshoot fired: the run ended there, the token cut
            figure.add_annotation(
                x=s.index, y=s.valid_mass, text="overshoot: cut", showarrow=True, arrowhead=2
            )
    if selected is not None:
        figure.add_vline(x=selected, line={"color": "#c33", "width": 1, "dash": "dash"})
    figure.update_layout(
        height=280,
        margin={"l": 60, "r": 60, "t": 40, "b": 40},
        # whole steps only: a short run would otherwise get ticks at 0.5, 1.5, …
        xaxis={
            "title": "step",
            "rangemode": "tozero",
            "tickformat": "d",
            "dtick": _step_ticks(len(steps)),
        },
        yaxis=MASS_LOG if log else MASS_LINEAR,
        yaxis2=_allowed_axis(steps),
        # above the plot, never over the line
        legend={"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        plot_bgcolor="#fff",
        hovermode="closest",
    )
    return figure


def _mass_line(steps: Sequence[Step], log: bool) -> go.Scatter:
    """The valid mass, one marker per step (grey where the step was forced), with a hover
    text naming the token, the mass, the allowed count and how the step was taken; on a log
    axis a zero mass is drawn at 1e-6."""
    hover = [
        f"step {s.index}<br>token {_hover_token(s)}"
        f"<br>valid mass {s.valid_mass:.2%}<br>{s.allowed_count:,} allowed"
        + ("<br>forced" if s.forced else "<br>drafted" if s.drafted else "")
        + (f"<br>{cut_sentence(s)}" if s.cut else "")
        for s in steps
    ]
    return _plotly().Scatter(
        x=[s.index for s in steps],
        y=[max(s.valid_mass, 1e-6) if log else s.valid_mass for s in steps],
        mode="lines+markers",
        name="valid mass",
        marker={"color": ["#888" if s.forced else "#2b6cd4" for s in steps], "size": 7},
        line={"color": "#2b6cd4"},
        hovertext=hover,
        hoverinfo="text",
    )


def _allowed_line(steps: Sequence[Step]) -> go.Scatter:
    """The allowed-token count per step, a dotted staircase on the right axis."""
    return _plotly().Scatter(
        x=[s.index for s in steps],
        y=[s.allowed_count for s in steps],
        mode="lines",
        name="allowed tokens",
        line={"color": "#aaa", "dash": "dot", "shape": "hv"},
        yaxis="y2",
        hoverinfo="skip",
    )


def _finding_rings(steps: Sequence[Step], marked: Sequence[int]) -> go.Scatter:
    """A ring around each marked step that the run has (a finding's steps)."""
    by_index = {s.index: s for s in steps}
    return _plotly().Scatter(
        x=[i for i in marked if i in by_index],
        y=[by_index[i].valid_mass for i in marked if i in by_index],
        mode="markers",
        name="finding",
        marker={"size": 15, "color": "rgba(0,0,0,0)", "line": RING},
        hoverinfo="skip",
    )


def _allowed_axis(steps: Sequence[Step]) -> dict:
    """The right axis, log scale from 1 token to the widest step (at least 10), ticked at
    powers of ten: 20 tokens among 15,000 is not a cliff."""
    most = max((s.allowed_count for s in steps), default=1)
    ticks = [v for v in (1, 10, 100, 1_000, 10_000, 100_000) if v <= max(most, 10) * 1.4]
    return {
        "title": "allowed tokens",
        "overlaying": "y",
        "side": "right",
        "type": "log",
        "range": [0, math.log10(max(most, 10)) + 0.15],
        "tickvals": ticks,
        "ticktext": [f"{v:,}" for v in ticks],
        "showgrid": False,
    }


MASS_LINEAR = {"title": "valid mass", "type": "linear", "range": [0, 1.05], "tickformat": ".0%"}
MASS_LOG = {
    "title": "valid mass (log)",
    "type": "log",
    "range": [-6, 0.05],
    "tickvals": [1e-6, 1e-4, 1e-2, 1],
    "ticktext": ["0.0001%", "0.01%", "1%", "100%"],
}
"""The valid-mass axis: percentages, also on the log scale (plotly would write ``100μ``)."""


SIDES = {
    "before": {"color": "#d9822b", "dash": "dash"},
    "after": {"color": "#2b6cd4", "dash": "solid"},
}
"""The two runs of Apply & run: before dashed orange, after solid blue (told apart without
colour too)."""


def comparison_figure(before: Sequence[Step], after: Sequence[Step]) -> go.Figure:
    """The valid mass per step of the runs before and after a fix, on one chart: two
    traces named ``after`` and ``before`` (listed before, after), the legend above the plot
    (never over a line).
    Hover shows each step's token (escaped: plotly reads tags in hover text)."""
    figure = _plotly().Figure()
    # "before" is drawn last, on top: where the runs agree its dashes show "after" beneath
    for name, steps in (("after", after), ("before", before)):
        figure.add_trace(
            _plotly().Scatter(
                x=[s.index for s in steps],
                y=[s.valid_mass for s in steps],
                mode="lines+markers",
                name=name,
                line={**SIDES[name], "width": 2},
                marker={"color": SIDES[name]["color"], "size": 6},
                hovertext=[
                    f"{name}, step {s.index}<br>token {_hover_token(s)}"
                    f"<br>valid mass {s.valid_mass:.2%}"
                    for s in steps
                ],
                hoverinfo="text",
            )
        )
    longest = max(len(before), len(after), 1)
    figure.update_layout(
        height=300,
        margin={"l": 60, "r": 20, "t": 40, "b": 40},
        xaxis={"title": "step", "rangemode": "tozero", "tickformat": "d",
               "dtick": _step_ticks(longest)},
        yaxis=MASS_LINEAR,
        legend={"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom",
                "traceorder": "reversed"},  # before, then after
        plot_bgcolor="#fff",
        hovermode="closest",
    )  # fmt: skip
    return figure


def _hover_token(step: Step) -> str:
    """A step's token for a hover label, escaped: plotly reads tags in hover text."""
    return "EOS" if step.is_eos else html.escape(repr(shown(step.text)))


def _step_ticks(n: int) -> int:
    """A whole-number tick spacing giving at most about ten ticks for ``n`` steps."""
    return max(1, math.ceil(n / 10))


SHOWN_PLACES = 15
"""Places the chart shows (the report's table has them all)."""


def stall_figure(report: Any) -> Any:
    """The places where runs stall as stacked bars, most first: the runs that did not
    match there, and the matched runs whose lowest valid mass was there (``report``: an
    ``fsmviz.audit`` ``AuditReport``)."""
    go = _plotly()
    places = report.places[:SHOWN_PLACES]
    names = [p.place for p in places][::-1]
    figure = go.Figure()
    for label, values, colour in (
        ("not matched: stalled there", [p.stalled for p in places][::-1], "#c0141c"),
        ("matched: lowest valid mass there", [p.runs - p.stalled for p in places][::-1],
         "#3a7bd5"),
    ):  # fmt: skip
        figure.add_trace(go.Bar(y=names, x=values, name=label, orientation="h",
                                marker={"color": colour}))  # fmt: skip
    figure.update_layout(
        barmode="stack",
        height=120 + 24 * len(places),
        margin={"l": 140, "r": 20, "t": 30, "b": 40},
        xaxis={"title": "runs", "tickformat": "d"},
        legend={"orientation": "h", "y": -0.3},
    )
    return figure
