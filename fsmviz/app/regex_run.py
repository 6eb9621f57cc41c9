"""A regex run on the page, start to end: the constrained run's frames (``live``), the
doctor's checks of its fixes (``fix_checks``), then the unconstrained shadow run.

It sits above both ``live`` (the frames) and ``fix_checks`` (which builds on ``live``), so
that neither has to reach up into the other.
"""

from __future__ import annotations

from collections.abc import Iterator

from fsmviz.app.fix_checks import check_frames, checks_coming
from fsmviz.app.live import (
    SHADOW_LATER,
    LiveDrawing,
    PageFrame,
    PatternView,
    constrained_frames,
    dfa_html,
    finish,
    shadow_announcement,
    shadow_frames,
)
from fsmviz.generation.generate import GenerationOptions
from fsmviz.generation.models import Model
from fsmviz.html.findings import findings_html
from fsmviz.html.steps import steps_html

__all__ = ["live_run", "unfixed_frame"]


def live_run(
    model: Model, view: PatternView, prompt: str, options: GenerationOptions
) -> Iterator[PageFrame]:
    """Stream the constrained run, then the shadow run, as page frames."""
    if view.dfa is None:
        yield unfixed_frame(view)
        return
    trace, first = yield from constrained_frames(
        model, view.constraint or view.pattern, prompt, options, LiveDrawing(view)
    )
    ending = finish(model, view, trace)
    checking = checks_coming(ending.findings)  # the doctor's checks first: Stop ends them
    yield PageFrame(
        ending.status + (checking or shadow_announcement(options, trace)),
        dfa=ending.dfa,
        output=ending.output,
        text=ending.text,
        shadow=SHADOW_LATER if first else None,
        steps=ending.steps,
        chart=ending.chart,
        diagnosis=ending.diagnosis,
        error="",
        trace=trace,
        findings=ending.findings,
        allowed=ending.allowed,
        shadow_next=not checking,
    )
    announce = shadow_announcement(options, trace)
    yield from check_frames(model, view, trace, ending.findings, ending.status, announce)
    yield from shadow_frames(model, prompt, options, ending.status)


def unfixed_frame(view: PatternView) -> PageFrame:
    """The one frame of a run asked for while the pattern does not compile: nothing run,
    the Regex box's error and the doctor's findings kept."""
    return PageFrame(
        "Fix the pattern first: the Regex box says what is wrong.",
        dfa=dfa_html(view),
        output="",
        shadow="",
        steps=steps_html([]),
        text="",
        diagnosis=findings_html(view.findings, pattern=view.pattern),
        error=view.error,
    )
