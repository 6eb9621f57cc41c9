"""The valid-mass chart: where the constraint fights the model.

At every step the model puts some probability on the tokens the DFA allows; seed 002
calls it the summed token probability, fsmviz the *valid mass*. Near 1 the pattern and
the model agree. A collapse toward 0 is a step where the pattern forced text the model
did not want: the place to look when output goes strange. The number of allowed tokens
is drawn beside it (log scale): wide states allow tens of thousands of tokens, constant
text allows one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import plotly.graph_objects as go

from ..trace import Step
from .views import shown

__all__ = ["valid_mass_figure"]

RING = {"color": "#c33", "width": 2}


def valid_mass_figure(
    steps: Sequence[Step],
    *,
    log: bool = False,
    selected: int | None = None,
    marked: Iterable[int] = (),
) -> go.Figure:
    """Valid mass per step (left axis), allowed-token count (right axis, log scale);
    ``selected`` draws a vertical line, ``marked`` steps (from a finding) are ringed."""
    x = [s.index for s in steps]
    hover = [
        f"step {s.index}<br>token {'EOS' if s.is_eos else shown(s.text)!r}"
        f"<br>valid mass {s.valid_mass:.2%}<br>{s.allowed_count:,} allowed"
        + ("<br>forced" if s.forced else "<br>drafted" if s.drafted else "")
        for s in steps
    ]
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=x,
            y=[max(s.valid_mass, 1e-6) if log else s.valid_mass for s in steps],
            mode="lines+markers",
            name="valid mass",
            marker={"color": ["#888" if s.forced else "#2b6cd4" for s in steps], "size": 7},
            line={"color": "#2b6cd4"},
            hovertext=hover,
            hoverinfo="text",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=x,
            y=[s.allowed_count for s in steps],
            mode="lines",
            name="allowed tokens",
            line={"color": "#aaa", "dash": "dot", "shape": "hv"},
            yaxis="y2",
            hoverinfo="skip",
        )
    )
    marked = sorted(set(marked))
    if marked:
        by_index = {s.index: s for s in steps}
        figure.add_trace(
            go.Scatter(
                x=[i for i in marked if i in by_index],
                y=[by_index[i].valid_mass for i in marked if i in by_index],
                mode="markers",
                name="finding",
                marker={"size": 15, "color": "rgba(0,0,0,0)", "line": RING},
                hoverinfo="skip",
            )
        )
    if selected is not None:
        figure.add_vline(x=selected, line={"color": "#c33", "width": 1, "dash": "dash"})
    figure.update_layout(
        height=260,
        margin={"l": 50, "r": 50, "t": 10, "b": 35},
        xaxis={"title": "step", "rangemode": "tozero"},
        yaxis={
            "title": "valid mass",
            "type": "log" if log else "linear",
            "range": [-6, 0.05] if log else [0, 1.05],
        },
        yaxis2={"title": "allowed", "overlaying": "y", "side": "right", "type": "log"},
        legend={"orientation": "h", "y": 1.1},
        plot_bgcolor="#fff",
        hovermode="closest",
    )
    return figure
