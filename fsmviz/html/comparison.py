"""Apply & run's two runs side by side: each one's pattern, chat setting and whole output,
how it ended (``STOPPED``: why a run stopped, in words) and where its valid mass was lowest.
"""

from __future__ import annotations

from fsmviz.diagnose.text import plural
from fsmviz.generation.trace import Trace
from fsmviz.html.text import esc
from fsmviz.html.tokens import output_html

__all__ = ["STOPPED", "comparison_html"]


STOPPED = {
    "accepted": "the pattern was complete",
    "max_tokens": "the token budget ran out",
    "prob_limit": "the valid mass fell below the limit",
    "dead_end": "no token could continue",
    "first_match": "the text was a full match (stop at the first match)",
    "overshoot": "a token completed the match and its rest was cut (overshoot)",
    "not_accepted": "the engine let it end, but the pattern's own judge refuses the text",
    "engine_error": "the engine could not go on (why follows)",
}
"""Why a run stopped, in words. ``engine_error`` is any engine that stopped the run with
its own reason, which the trace's notes give: llguidance past one of its limits, a
server whose stream broke off or that wrote a token no match can follow."""


def comparison_html(before: Trace, after: Trace) -> str:
    """The runs before and after a fix side by side: each one's pattern, chat setting and
    whole constrained output (tinted by valid mass, as above), and a line saying how it
    ended and where its valid mass was lowest."""
    sides = "".join(_side(name, trace) for name, trace in (("before", before), ("after", after)))
    return f'<div class="comparison">{sides}</div>'


def _side(name: str, trace: Trace) -> str:
    chat = trace.options is not None and trace.options.chat
    # every step, as the table and the chart list them (the end of text included)
    lowest = min(trace.steps, key=lambda s: s.valid_mass, default=None)
    low = (
        f"; lowest valid mass {lowest.valid_mass:.1%} (step {lowest.index})"
        if lowest is not None
        else ""
    )
    verdict = "matches" if trace.matched else "does NOT match"
    tokens = plural(len(trace.steps), "token")
    return (
        f'<section class="side {name}" data-side="{name}">'
        f'<div class="side-head"><b>{name.capitalize()}</b> '
        f'<code class="side-pattern">{esc(trace.pattern or "")}</code> '
        f'<span class="side-chat">chat template {"on" if chat else "off"}</span></div>'
        f"{output_html(trace.steps, final=True)}"
        f'<div class="side-verdict {"ok" if trace.matched else "no"}">{tokens}, stopped '
        f"because {STOPPED[trace.stop_reason]}; the output {verdict} the pattern{low}.</div>"
        "</section>"
    )
