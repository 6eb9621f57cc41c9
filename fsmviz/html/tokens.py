"""A run's tokens as HTML: the output text one span per token, a token's label (its bytes
in hex where it splits a character), and each step's whole allowed set with the model's
blocked favourites beside it.

The output's text content is exactly the generated text: token boundaries, tints and the
selected step's outline are drawn with CSS, never with extra characters. The only raw
values written into attributes are numbers this module computes.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence

from fsmviz.generation.trace import Step, pieces
from fsmviz.html.decoding import cut_sentence
from fsmviz.html.text import esc, shown
from fsmviz.printable import bytes_label

__all__ = ["BYTES_TITLE", "allowed_html", "cand_text", "label_html", "output_html"]


BYTES_TITLE = "bytes (hex) of a character split across tokens"


_ESCAPED_BYTES = re.compile(r"(?:\\x[89a-f][0-9a-f])+")


def label_html(text: str, is_bytes: bool = False) -> str:
    r"""A token label as code, escaped; hex pairs marked as bytes. A text that still holds
    Python's escapes of stray bytes (``\xa6\x82``: a candidate's text, from the
    engine) is written in the same notation, hex pairs (``a6 82``).

    >>> label_html("a<")
    '<code>a&lt;</code>'
    >>> label_html(r"\xa6\x82").split(">")[1]
    'a6 82</code'
    """
    if not is_bytes and _ESCAPED_BYTES.fullmatch(text):
        text, is_bytes = " ".join(text.split("\\x")[1:]), True
    if is_bytes:
        return f'<code class="bytes" title="{BYTES_TITLE}">{esc(text)}</code>'
    return f"<code>{esc(shown(text))}</code>"


def cand_text(text: str) -> str:
    """A candidate's text in the table: escaped, whitespace visible, stray bytes as hex."""
    if _ESCAPED_BYTES.fullmatch(text):
        return label_html(text)
    return esc(shown(text))


def output_html(
    steps: Sequence[Step],
    *,
    final: bool = False,
    tint: bool = True,
    selected: int | None = None,
) -> str:
    """The generated text, one span per token, tinted by its step's valid mass; the
    ``selected`` step's token is outlined. The text content is exactly the output:
    boundaries, tints and the outline are drawn with CSS only. Until ``final``, the
    ``live`` box (its cursor drawn by CSS) is left open, as a live ``steps_html`` is."""
    spans = []
    for step, piece in zip(steps, pieces(steps), strict=True):
        if step.is_eos:
            continue
        classes = "tok forced" if step.forced and step.allowed_count == 1 else "tok"
        if step.index == selected:
            classes += " selected"
        mass = f' style="--mass:{step.valid_mass:.4f}"' if tint else ""
        title = f"step {step.index} · valid mass {step.valid_mass:.1%}"
        cut = ""
        if step.cut:  # drawn by CSS (::after), so the text content stays the output
            classes += " overshoot"
            title += f" · {cut_sentence(step)}"
            cut = f' data-cut="{esc(step.cut)}"'
        spans.append(
            f'<span class="{classes}" data-step="{step.index}"{mass}{cut} title="{esc(title)}">'
            f"{esc(piece)}</span>"
        )
    if not final:
        return f'<div class="tokens live">{"".join(spans)}'
    return f'<div class="tokens">{"".join(spans)}</div>'


def allowed_html(sets, steps: Sequence[Step] = (), selected: int | None = None) -> str:
    """Every step's allowed set (``live.AllowedSet``, one per step) as a searchable list,
    the model's blocked favourites beside it: the ``selected`` step's set written here,
    all of them as JSON in a hidden element's ``data-json`` for the page's script, which
    shows another step's set at once when one is chosen (static/app.js, ``renderAllowed``)."""
    if not sets:
        return '<p class="empty">Choose a step to see every token it allowed.</p>'
    sets = list(sets)
    i = len(sets) - 1 if selected is None else min(max(selected, 0), len(sets) - 1)
    data = [_allowed_data(a, steps[k] if k < len(steps) else None) for k, a in enumerate(sets)]
    chosen = data[i]
    rows = "".join(
        f'<li data-token="{esc(label)}">{label_html(label, is_bytes)}'
        f'<span class="p">{prob:.2%}</span></li>'
        for label, is_bytes, prob in chosen["a"]
    )
    blocked = "".join(
        f"<li>{label_html(label, is_bytes)}<span class='p'>{prob:.2%}</span></li>"
        for label, is_bytes, prob in chosen["b"]
    )
    payload = html.escape(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    return (
        f'<div class="allowed-view" data-step="{chosen["s"]}">'
        f'<div class="allowed-head">{_allowed_head(chosen)}</div>'
        '<div class="allowed-cols"><div><input type="search" class="allowed-filter" '
        'placeholder="search allowed tokens" aria-label="search allowed tokens">'
        f'<ol class="allowed-list">{rows}</ol><p class="more">{_allowed_more(chosen)}</p>'
        "</div>"
        f'<div><b>Blocked favourites</b><ol class="blocked-list">{blocked or "<li>none</li>"}'
        "</ol></div></div>"
        f'<div class="allowed-data" hidden data-json="{payload}"></div></div>'
    )


BLOCKED_SHOWN_FROM = 0.00005
"""A blocked favourite is listed from this probability (it reads 0.01%): below, the list
said "0.00%" eight times where the pattern took nothing the model wanted."""


def _allowed_data(allowed, step: Step | None) -> dict:
    """One step's set as the page's script reads it (short keys: it goes to the browser)."""
    taken = None
    if step is not None:
        taken = ["EOS", False] if step.is_eos else list(bytes_label(step.token_bytes))
    return {
        "s": allowed.step,
        "t": allowed.total,
        "m": round(allowed.mass, 6),
        "r": step.allowed_count if step is not None else allowed.total,
        "k": taken,
        "a": [[label, is_bytes, round(p, 6)] for label, is_bytes, p in allowed.allowed],
        "b": [
            [label, is_bytes, round(p, 6)]
            for label, is_bytes, p in allowed.blocked
            if p >= BLOCKED_SHOWN_FROM
        ],
    }


def _allowed_head(d: dict) -> str:
    """The line above a step's set (app.js writes the same for another step)."""
    narrowed = ""
    if d["r"] != d["t"]:
        narrowed = (
            f" (the run allowed {d['r']:,}: the safe end or a forced chain narrowed the "
            "pattern's set)"
        )
    taken = f" · took {label_html(*d['k'])}" if d["k"] else ""
    return (
        f"Step {d['s']}: {d['t']:,} allowed{narrowed}, together {d['m']:.1%} of the "
        f"model's probability{taken}"
    )


def _allowed_more(d: dict) -> str:
    more = d["t"] - len(d["a"])
    return f"… and {more:,} more, each less likely." if more > 0 else ""
