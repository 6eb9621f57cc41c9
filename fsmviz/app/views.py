"""HTML views of the engine's records: the streamed output, the step table, the findings.

Everything shown comes from a user (the pattern, the prompt) or from a model (token text,
which can hold ``<``, ``&``, quotes and control characters), so every string passes through
``html.escape`` on its way into markup. The only raw values written into attributes are
numbers this module computes.
"""

from __future__ import annotations

import codecs
import html
from collections.abc import Iterable, Sequence

from ..diagnose import Finding
from ..printable import VISIBLE_WHITESPACE, printable
from ..syntax import RegexError
from ..trace import Step

__all__ = ["error_html", "findings_html", "output_html", "shown", "steps_html"]


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def shown(text: str) -> str:
    """Token text with whitespace made visible (for tables, not for the output itself)."""
    return printable(text, VISIBLE_WHITESPACE)


def pieces(steps: Iterable[Step]) -> list[str]:
    """The text each step adds to the output. Tokens may split a character's UTF-8 bytes;
    an incremental decoder gives each step the characters it completes, so the pieces
    join to exactly the generated text."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    out = [decoder.decode(step.token_bytes) for step in steps]
    if out:
        out[-1] += decoder.decode(b"", final=True)
    return out


def output_html(steps: Sequence[Step], *, final: bool = False, tint: bool = True) -> str:
    """The generated text, one span per token, tinted by its step's valid mass. The text
    content is exactly the output: boundaries and tints are drawn with CSS only."""
    spans = []
    for step, piece in zip(steps, pieces(steps), strict=True):
        if step.is_eos:
            continue
        classes = "tok forced" if step.forced else "tok"
        mass = f' style="--mass:{step.valid_mass:.4f}"' if tint else ""
        title = f"step {step.index} · valid mass {step.valid_mass:.1%}"
        spans.append(
            f'<span class="{classes}" data-step="{step.index}"{mass} title="{title}">'
            f"{esc(piece)}</span>"
        )
    cursor = "" if final else '<span class="cursor" aria-hidden="true"></span>'
    return f'<div class="tokens">{"".join(spans)}{cursor}</div>'


FORCED_TAG = (
    ' <em title="written without asking the model: the pattern left one way on">forced</em>'
)
DRAFTED_TAG = (
    ' <em title="guessed ahead by prompt lookup and confirmed by the model in the same forward '
    'pass">drafted</em>'
)


def steps_html(steps: Sequence[Step], *, selected: int | None = None) -> str:
    """One row per step: states, token taken, allowed count, valid mass, the model's top
    candidates marked allowed (✓) or blocked (✗), forced and drafted steps marked."""
    if not steps:
        return '<p class="empty">Run a generation to see each step.</p>'
    rows = []
    for step in steps:
        classes = " ".join(
            c
            for c, on in (
                ("forced", step.forced),
                ("drafted", step.drafted),
                ("selected", step.index == selected),
            )
            if on
        )
        how = FORCED_TAG if step.forced else DRAFTED_TAG if step.drafted else ""
        token = "EOS" if step.is_eos else shown(step.text)
        top = " ".join(
            f'<span class="cand {"ok" if c.allowed else "no"}">'
            f"{'✓' if c.allowed else '✗'}{esc(shown(c.text))} {c.prob:.0%}</span>"
            for c in step.top
        )
        rows.append(
            f'<tr data-step="{step.index}" class="{classes}">'
            f"<td>{step.index}</td><td>{step.state_before} → {step.state_after}</td>"
            f"<td><code>{esc(token)}</code>{how}</td>"
            f"<td>{step.allowed_count:,}</td><td>{step.valid_mass:.1%}</td><td>{top}</td></tr>"
        )
    head = (
        "<tr><th>step</th><th>state</th><th>token taken</th><th>allowed</th>"
        "<th>valid mass</th><th>model's top candidates</th></tr>"
    )
    return f'<table class="steps"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def findings_html(findings: Sequence[Finding], *, selected: int | None = None) -> str:
    """The doctor's findings, errors first, each with its suggestion."""
    if not findings:
        return '<p class="empty">No problems found.</p>'
    items = []
    for i, f in enumerate(findings):
        chosen = " selected" if i == selected else ""
        suggestion = (
            f'<div class="suggestion">Try: <code>{esc(f.suggestion)}</code></div>'
            if f.suggestion
            else ""
        )
        items.append(
            f'<li class="finding {esc(f.severity)}{chosen}" data-finding="{i}">'
            f'<span class="severity">{esc(f.severity)}</span> '
            f'<span class="kind">{esc(f.kind.replace("_", " "))}</span>'
            f'<div class="message">{esc(f.message)}</div>{suggestion}</li>'
        )
    return f'<ol class="findings">{"".join(items)}</ol>'


def error_html(error: Exception | None, pattern: str = "") -> str:
    """A clear message for a bad pattern (with a caret under the position) or any failure."""
    if error is None:
        return ""
    if isinstance(error, RegexError):
        caret = f"<pre>{esc(error.pointer(pattern))}</pre>" if error.position is not None else ""
        hint = f'<div class="hint">{esc(error.hint)}</div>' if error.hint else ""
        return f'<div class="error-box"><b>{esc(error.message)}</b>{caret}{hint}</div>'
    return f'<div class="error-box"><b>{esc(str(error))}</b></div>'
