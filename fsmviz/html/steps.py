"""A run's step table, one row per step, and the Prev / Play / Next buttons that step
through it: streamed while the run goes (each frame's table the last one's with the new
rows added), then stepped through in the browser by static/app.js.

Every string shown comes from a user (the pattern, the prompt) or from a model (token
text, which can hold ``<``, ``&``, quotes and control characters), so it passes through
``html.escape`` on its way into markup. The only raw values written into attributes are
numbers this module computes.
"""

from __future__ import annotations

from collections.abc import Sequence

from fsmviz.generation.trace import Step, pieces
from fsmviz.html.decoding import allowed_note, overshoot_tag
from fsmviz.html.text import esc, shown
from fsmviz.html.tokens import cand_text, label_html
from fsmviz.printable import bytes_label

__all__ = ["DRAFTED_TAG", "FORCED_TAG", "STEP_BUTTONS", "steps_html", "token_cell"]


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


FORCED_TAG = (
    ' <em title="written without asking the model: the pattern left one way on">forced</em>'
)
DRAFTED_TAG = (
    ' <em title="guessed ahead by prompt lookup and confirmed by the model in the same forward '
    'pass">drafted</em>'
)


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
    lights: Sequence[str] | None = None,
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
    frame closes them.

    ``lights`` (a live table's): each step's drawing lights as JSON text (``step_lights``),
    written in its row's ``data-lit``; the page's script lights the drawing, sent once per
    run, from the rows that arrive (static/app.js ``lightLive``)."""
    if not steps:
        return '<p class="empty">Run a generation to see each step.</p>'
    rows = []
    lit = [f' data-lit="{esc(x)}"' for x in lights] if lights else [""] * len(steps)
    moving = zip(steps, pieces(steps), states or [None] * len(steps), lit, strict=True)
    for step, piece, moved, light in moving:
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
            f'<tr data-step="{step.index}" class="{classes}"{light}>'
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
