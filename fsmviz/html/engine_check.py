"""The ``engine-check`` panel: a server run's tokens and visible mask against fsmviz's
exact automaton, step by step, with the verdict (the replay's ``verdicts``). Every text
escaped; the page (``fsmviz.app.backend``) chooses the server and keeps its runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fsmviz.html.text import esc

__all__ = ["ENGINE_CHECK_LATER", "SHOWN_ROWS", "engine_check_html"]

ENGINE_CHECK_LATER = '<p class="empty">A server run\'s engine check comes when it ends.</p>'
"""The ``engine-check`` panel while a run goes."""
SHOWN_ROWS = 200
"""Steps the engine-check table lists (a run has at most ``MAX_TOKENS_LIMIT`` of them)."""


def engine_check_html(source: Any, steps: Iterable[Any]) -> str:
    """The ``engine-check`` panel after a run: for a server run (``source`` a
    ``ServerSource``), a table of the server's tokens, the exact allowed set's size and
    the server's visible candidates per step, with the verdict; for a run on the bundled
    model, a line saying there is no engine to check. Every text escaped."""
    runs = getattr(source, "runs", None)
    if not runs:
        return (
            '<p class="empty">The engine check compares a server\'s mask with the exact '
            "one: choose a server in the model menu.</p>"
        )
    run, rows = runs[0], runs[0].verdicts(list(steps))
    wrong = [row for row in rows if not row.agrees]
    if not rows:
        summary = "The server wrote no token: nothing to check."
    elif wrong:
        summary = f"{len(wrong)} of {len(rows)} steps disagree with the exact automaton."
    else:
        summary = f"All {len(rows)} steps agree with the exact automaton."
    body = "".join(
        f'<tr class="{"agrees" if row.agrees else "disagrees"}"><td>{row.step}</td>'
        f"<td><code>{esc(row.token)}</code></td><td>{row.allowed:,}</td>"
        f"<td>{row.visible}</td><td>{esc(row.verdict)}</td></tr>"
        for row in rows[:SHOWN_ROWS]
    )
    more = f"<p>… and {len(rows) - SHOWN_ROWS} more steps.</p>" if len(rows) > SHOWN_ROWS else ""
    return (
        f"<h3>Engine check: {esc(source.name)}</h3><p class='engine-summary'>{esc(summary)} "
        "Per step: the token the server wrote, how many tokens fsmviz's exact automaton "
        "allowed there, how many of the server's candidates its answer showed (its top "
        "logprobs, after its mask), and whether they agree. The allowed set lists the "
        "server's top probabilities exactly; the other allowed tokens share the rest "
        f"evenly.</p><table class='engine-check'><thead><tr><th>step</th><th>token</th>"
        f"<th>allowed</th><th>visible</th><th>verdict</th></tr></thead><tbody>{body}"
        f"</tbody></table>{more}"
        + ("" if run.stop_reason != "engine_error" else "<p>The replay stopped there.</p>")
    )
