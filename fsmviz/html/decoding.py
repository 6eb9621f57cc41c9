"""How the decoding options of a step read on the page: where overshoot fired, what the
samplers removed (``GenerationOptions.overshoot``, ``top_k``, ``top_p``).

The steps table, the output and the chart each ask one function here, so the wording is
the same everywhere: "took `0,`: `0` completes the match, `,` was cut".
"""

from __future__ import annotations

from html import escape

from fsmviz.generation.trace import Step
from fsmviz.printable import VISIBLE_WHITESPACE, printable

__all__ = ["allowed_note", "cut_sentence", "overshoot_tag"]


def _code(text: str) -> str:
    return f"<code>{escape(printable(text, VISIBLE_WHITESPACE))}</code>"


def cut_sentence(step: Step) -> str:
    """Plain text for an overshoot step (empty for any other).

    >>> cut_sentence(Step(5, "0,", 3, 3, 11, 0.9, (), token_bytes=b"0", cut=","))
    "took '0,': '0' completes the match, ',' was cut"
    """
    if not step.cut:
        return ""
    kept = step.token_bytes.decode("utf-8", errors="replace")
    return f"took {step.text!r}: {kept!r} completes the match, {step.cut!r} was cut"


def overshoot_tag(step: Step) -> str:
    """HTML after the token of an overshoot step in the steps table ("" otherwise)."""
    if not step.cut:
        return ""
    kept = step.token_bytes.decode("utf-8", errors="replace")
    return (
        f' <em class="overshoot" title="{escape(cut_sentence(step))}">overshoot: '
        f"{_code(kept)} completes the match, {_code(step.cut)} was cut</em>"
    )


def allowed_note(step: Step) -> str:
    """HTML under a step's allowed count: overshoot tokens among them, and what each
    sampler removed ("" when none of these options acted).

    >>> allowed_note(Step(0, "a", 0, 1, 40, 1.0, (), top_k_removed=30, overshoot_count=12))
    '<br><small class="decoding">12 by overshoot · top-k removed 30</small>'
    """
    parts = []
    if step.overshoot_count:
        parts.append(f"{step.overshoot_count:,} by overshoot")
    if step.top_k_removed:
        parts.append(f"top-k removed {step.top_k_removed:,}")
    if step.top_p_removed:
        parts.append(f"top-p removed {step.top_p_removed:,}")
    return f'<br><small class="decoding">{" · ".join(parts)}</small>' if parts else ""
