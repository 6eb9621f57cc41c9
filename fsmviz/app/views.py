"""HTML views of the engine's records: the streamed output, the step table, the findings.

Everything shown comes from a user (the pattern, the prompt) or from a model (token text,
which can hold ``<``, ``&``, quotes and control characters), so every string passes through
``html.escape`` on its way into markup. The only raw values written into attributes are
numbers this module computes.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence

from fsmviz.app.fixes import check_html, fix_json, fix_of
from fsmviz.app.fixes import offered as offered_fix
from fsmviz.diagnose import Finding
from fsmviz.diagnose.text import plural
from fsmviz.generation.trace import Step, Trace, pieces
from fsmviz.html.decoding import allowed_note, cut_sentence, overshoot_tag
from fsmviz.html.text import code_spans, error_html, esc, shown
from fsmviz.printable import bytes_label

__all__ = [
    "STEP_BUTTONS",
    "allowed_html",
    "bytes_label",
    "code_spans",
    "markdown_html",
    "comparison_html",
    "error_html",
    "findings_html",
    "output_html",
    "shown",
    "steps_html",
]


STEP_BUTTONS = (
    '<div class="stepper" role="group" aria-label="step through the run">'
    '<button type="button" data-stepper="prev" title="previous step (←)">◀ Prev</button>'
    '<button type="button" data-stepper="play" title="play the run step by step">▶ Play</button>'
    '<button type="button" data-stepper="next" title="next step (→)">Next ▶</button>'
    '<span class="keys">or ← → keys</span>'
    '<span class="taps">or tap a token, a row or a chart point</span></div>'
)
"""Prev, Play and Next: the same buttons on the Generate and the Grammar tab, both
stepped by static/app.js (the ← → keys too) on whichever tab is shown."""


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


FORCED_TAG = (
    ' <em title="written without asking the model: the pattern left one way on">forced</em>'
)
DRAFTED_TAG = (
    ' <em title="guessed ahead by prompt lookup and confirmed by the model in the same forward '
    'pass">drafted</em>'
)


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


def token_cell(step: Step, completes: str) -> str:
    """The token taken, escaped, whitespace made visible. A token that is not whole UTF-8
    (it ends, or starts, inside a character) is shown as its bytes in hex pairs, with the
    characters the step completes: ``e6 9d`` then ``b1 → 東`` (``bytes_label``)."""
    if step.is_eos:
        return "<code>EOS</code>"
    label, is_bytes = bytes_label(step.token_bytes)
    if is_bytes:
        done = f" → {esc(shown(completes))}" if completes else " (a character begins)"
        return f"{label_html(label, True)}{done}"
    return f"<code>{esc(shown(step.text))}</code>"


def steps_html(
    steps: Sequence[Step],
    *,
    selected: int | None = None,
    states: Sequence[tuple[int, int, object]] | None = None,
    live: bool = False,
) -> str:
    """One row per step: states, token taken, allowed count, valid mass, the model's top
    candidates marked allowed (✓) or blocked (✗), forced and drafted steps marked.
    ``states`` gives each step's (before, after) in the drawn DFA (``live.drawn_path``);
    without it the index's own state ids are shown.

    A ``live`` table (a run's frames) is left open at its end, no closing tags (the
    browser closes them), so that each frame's HTML is the last one's with the new rows
    added, and Gradio streams only those (its diff of a string that extends the last is
    an ``append``). Sent whole at every frame, a 1,024-token run's table came to 31 MB
    over its 356 frames and its output to 10 MB; open, to 0.2 and 0.06 MB. The run's last
    frame closes them."""
    if not steps:
        return '<p class="empty">Run a generation to see each step.</p>'
    rows = []
    for step, piece, moved in zip(steps, pieces(steps), states or [None] * len(steps), strict=True):
        forced = step.forced and step.allowed_count == 1
        classes = " ".join(
            c
            for c, on in (
                ("forced", forced),
                ("drafted", step.drafted),
                ("selected", step.index == selected),
            )
            if on
        )
        how = FORCED_TAG if forced else DRAFTED_TAG if step.drafted else ""
        how += overshoot_tag(step)
        before, after = (step.state_before, step.state_after) if moved is None else moved[:2]
        top = " ".join(
            f'<span class="cand {"ok" if c.allowed else "no"}">'
            f"{'✓' if c.allowed else '✗'}{cand_text(c.text)} {c.prob:.0%}</span>"
            for c in step.top
        )
        rows.append(
            f'<tr data-step="{step.index}" class="{classes}">'
            f"<td>{step.index}</td><td>{esc(str(before))} → {esc(str(after))}</td>"
            f"<td>{token_cell(step, piece)}{how}</td>"
            f"<td>{step.allowed_count:,}{allowed_note(step)}</td><td>{step.valid_mass:.1%}</td>"
            f"<td>{top}</td></tr>"
        )
    head = (
        "<tr><th>step</th><th>state</th><th>token taken</th><th>allowed</th>"
        "<th>valid mass</th><th>model's top candidates</th></tr>"
    )
    table = f'<table class="steps"><thead>{head}</thead><tbody>{"".join(rows)}'
    return table if live else f"{table}</tbody></table>"


def cand_text(text: str) -> str:
    """A candidate's text in the table: escaped, whitespace visible, stray bytes as hex."""
    if _ESCAPED_BYTES.fullmatch(text):
        return label_html(text)
    return esc(shown(text))


_NUMBERS = re.compile(r"\b\d+(?:, \d+){9,}(?:,? and \d+)?\b")


def summarised(text: str, shown: int = 6) -> str:
    """A message's long list of numbers (states, steps) cut to its first few and a count.

    >>> summarised("states 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 11 loop")
    'states 1, 2, 3, 4, 5, 6, … (11 in all) loop'
    """

    def cut(m: re.Match[str]) -> str:
        numbers = re.findall(r"\d+", m.group(0))
        return ", ".join(numbers[:shown]) + f", … ({len(numbers)} in all)"

    return _NUMBERS.sub(cut, text)


def markdown_html(text: str) -> str:
    """A message's light Markdown as HTML, everything escaped: ```code``` spans and
    ``**bold**``; nothing else is read.

    >>> markdown_html("write `a{0,9}` not **`a*`** <b>")
    'write <code>a{0,9}</code> not <b><code>a*</code></b> &lt;b&gt;'
    """
    parts = re.split(r"(`[^`\n]+`)", text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"<code>{esc(part[1:-1])}</code>")
        else:
            out.append(esc(part))
    joined = "".join(out)
    return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", joined)


def findings_html(
    findings: Sequence[Finding], *, selected: int | None = None, pattern: str | None = None
) -> str:
    """The doctor's findings, errors first, each with its suggestion; a finding with a fix
    the page can apply (``fixes.fix_of``) has an "Apply & run" button carrying it. With the
    ``pattern`` they concern, a long suggested pattern is shown by what it changes."""
    if not findings:
        return '<p class="empty">No problems found.</p>'
    items = []
    offered: dict[str, int] = {}  # a fix already offered: by the number of its finding
    for i, f in enumerate(findings):
        chosen = " selected" if i == selected else ""
        fix = offered_fix(f, findings)  # a run's fix only once checked (fixes.offered)
        key = fix_json(fix) if fix is not None else None
        if key is not None and key in offered:
            suggestion = (
                f'<div class="suggestion same">The same fix as finding {offered[key] + 1}.</div>'
            )
        else:
            suggestion = suggestion_html(f, pattern, findings)
            if key is not None:
                offered[key] = i
        items.append(
            f'<li class="finding {esc(f.severity)}{chosen}" data-finding="{i}">'
            f'<span class="severity">{esc(f.severity)}</span> '
            f'<span class="kind">{esc(f.kind.replace("_", " "))}</span>'
            f'<div class="message">{markdown_html(summarised(f.message))}</div>{suggestion}</li>'
        )
    return f'<ol class="findings">{"".join(items)}</ol>'


LONG_SUGGESTION = 120
"""A suggested pattern longer than this (a JSON Schema's regex runs to 1,500 characters) is
shown by the part it changes, the whole of it one click away."""


def suggestion_html(
    finding: Finding, pattern: str | None = None, among: Sequence[Finding] = ()
) -> str:
    """``Try: <pattern>`` (and the settings), with the button that applies it and runs;
    a run's fix (or one shared with a run finding ``among`` the others) only once checked,
    with its numbers (``fixes.offered``, ``fixes.check_html``)."""
    fix = fix_of(finding)
    if fix is None:
        return ""
    shown = ""
    if fix.pattern is not None:
        shown = f"<code>{esc(fix.pattern)}</code>"
        if pattern and len(fix.pattern) > LONG_SUGGESTION:
            shown = (
                f"{change_html(pattern, fix.pattern)}<details><summary>the whole pattern "
                f"({len(fix.pattern):,} characters)</summary>{shown}</details>"
            )
    chat = "" if fix.chat is None else f"the chat template {'on' if fix.chat else 'off'}"
    words = " with ".join(part for part in (shown, chat) if part)
    if offered_fix(finding, among) is None:  # a run's fix not checked, or no better
        return f'<div class="suggestion unchecked">{check_html(finding, words)}</div>'
    button = (
        f'<button type="button" class="apply" data-fix="{esc(fix_json(fix))}" '
        'title="keep this run as before, apply the fix, run it, and compare">'
        "Apply &amp; run</button>"
    )
    return f'<div class="suggestion">Try: {words} {button}{check_html(finding)}</div>'


def change_html(old: str, new: str, context: int = 24) -> str:
    """Where ``new`` differs from ``old``: the changed text marked, a little context around.

    >>> change_html("a:[^x]*,b:1", "a:[^x]{0,64},b:1", context=4)
    '<code>…[^x]<ins>{0,64}</ins>,b:1</code> in place of <code><del>*</del></code>'
    """
    start = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), 0)
    end = 0  # characters equal at both ends, not overlapping the start
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    before = new[max(start - context, 0) : start]
    after = new[len(new) - end : len(new) - end + context]
    lead = "…" if start > context else ""
    tail = "…" if end > context else ""
    changed = esc(new[start : len(new) - end])
    removed = esc(old[start : len(old) - end])
    shown = f"<code>{lead}{esc(before)}<ins>{changed}</ins>{esc(after)}{tail}</code>"
    return shown + (f" in place of <code><del>{removed}</del></code>" if removed else "")


STOPPED = {
    "accepted": "the pattern was complete",
    "max_tokens": "the token budget ran out",
    "prob_limit": "the valid mass fell below the limit",
    "dead_end": "no token could continue",
    "first_match": "the text was a full match (stop at the first match)",
    "overshoot": "a token completed the match and its rest was cut (overshoot)",
    "not_accepted": "the engine let it end, but the pattern's own judge refuses the text",
    "engine_error": "the constraint's engine gave up",
}
"""Why a run stopped, in words."""


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
