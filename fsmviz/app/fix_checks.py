"""The doctor at work after a run: each fix it has for what the run did, re-run on the same
prompt and seed before it is offered (``fsmviz.diagnose.checks``), as page frames.

While a check runs, the status line counts its tokens; when it ends, the findings are drawn
again with the numbers (``steps going round a loop: 51 → 0``) and, where the fix helped,
its "Apply & run" button. A fix that did not help is shown with its numbers and no button.
Each check is one run no longer than the run it checks, and like the shadow run after it,
it ends when the visitor presses Stop ("Skip shadow run") or starts another run.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import closing

from fsmviz.app.live import PageFrame, PatternView, ahead, progress
from fsmviz.diagnose import Finding, diagnose
from fsmviz.diagnose.checks import fixed_options, judged, to_check
from fsmviz.errors import FsmvizError
from fsmviz.generation.generate import stream
from fsmviz.generation.models import Model
from fsmviz.generation.trace import Trace
from fsmviz.html.findings import findings_html

__all__ = ["CHECK_EVERY", "check_frames", "checks_coming"]

CHECK_EVERY = 1.0
"""Seconds a check's frame waits for more tokens: its frames only count them on the status
line, so once a second (``live.FRAME_EVERY``'s 0.25 s sent four times the frames, each
20-30 ms of the app's event loop and 0.1-0.2 s of the page's, for a number)."""


def checks_coming(findings: Sequence[Finding]) -> str:
    """What the status line adds while the run's fixes wait for their check ("" if none)."""
    if not to_check(findings):
        return ""
    return " The doctor now checks its fix on the same prompt and seed, then the shadow run."


def check_frames(
    model: Model,
    view: PatternView,
    trace: Trace,
    findings: Sequence[Finding],
    done: str,
    announce: str = "",
) -> Generator[PageFrame, None, tuple[Finding, ...]]:
    """Re-run each of the run's fixes (``to_check``) with ``model``, streaming its progress
    after the run's status ``done``; after each, the findings redrawn with the check. When
    there were checks, a last frame offers to skip the shadow run (``announce`` said after
    ``done``): Stop before it ends the checks too. Returns the findings, checked."""
    checked = tuple(findings)
    keys = to_check(checked)
    for n, key in enumerate(keys, 1):
        pattern = key[0] if key[0] is not None else trace.pattern
        options = fixed_options(trace, key)
        which = f" ({n} of {len(keys)})" if len(keys) > 1 else ""
        what = f"The doctor is checking its fix{which} on the same prompt and seed"
        started = time.perf_counter()
        try:
            run = stream(model, pattern, trace.prompt, options)
            with closing(ahead(run, CHECK_EVERY)) as arrivals:
                for written in _counted(arrivals):
                    line = progress(
                        what, written, options.max_tokens, time.perf_counter() - started
                    )
                    yield PageFrame(f"{done} {line}")
            after = run.trace()
            checked = judged(checked, key, trace, after, diagnose(pattern, model.vocab, after))
        except (FsmvizError, ValueError):  # the fix could not be run: it stays unchecked
            continue
        yield PageFrame(
            done,
            diagnosis=findings_html(checked, pattern=view.pattern),
            findings=checked,
        )
    if keys:
        yield PageFrame(done + announce, shadow_next=True)
    return checked


def _counted(arrivals) -> Iterator[int]:
    """The number of steps written so far, after each arrival."""
    written = 0
    for new in arrivals:
        written += len(new)
        yield written
