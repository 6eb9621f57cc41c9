"""What every tab's run shares: the page's outputs, a run's start, its frames followed
while it is the page's, and Stop.

A tab (Generate, Grammar) lays out its own inputs and drawing, but a run writes the same
outputs everywhere (``Page``: the output, the step table, the chart, the status, the
trace...), and goes the same way: ``started`` (Stop shown), ``follow`` (each frame as
updates, while no Stop or newer run has taken the page over), ``idle`` at the end. Stop is
a ``StopMark`` per browser session: each run takes a number, Stop moves it on, and the run
that sees another number than its own ends itself (``stopping.polled`` looks every 50 ms).

The tabs' own handlers (``handlers`` for Generate, ``grammar_page`` for Grammar) build on
this module; it imports neither.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr

from fsmviz.app.live import PageFrame
from fsmviz.app.stopping import polled
from fsmviz.generation.trace import GenerationOptions, Step, Trace
from fsmviz.html.engine_check import ENGINE_CHECK_LATER, engine_check_html
from fsmviz.html.steps import steps_html
from fsmviz.html.tokens import allowed_html
from fsmviz.params import check_generation

__all__ = [
    "CHANGED",
    "DRAFT_TOKENS",
    "EMPTY_OUTPUT",
    "Page",
    "StopMark",
    "checked_options",
    "cleared",
    "follow",
    "frame_updates",
    "idle",
    "on_stop",
    "options",
    "run_outputs",
    "shadow_skipped",
    "started",
    "stoppable",
]


DRAFT_TOKENS = 8
"""Speculative drafts in the app (``GenerationOptions.draft_tokens``): repeated structure
such as JSON is written about twice as fast; the output is the same (greedy) or drawn from
the same distribution (sampling)."""


@dataclass(frozen=True)
class Page:
    """The components handlers that return a dict of updates write to."""

    dfa: Any
    output: Any
    shadow: Any
    steps: Any
    chart: Any
    diagnosis: Any
    error: Any
    status: Any
    trace: Any
    findings: Any
    step: Any
    downloads: Any
    run: Any
    stop: Any
    allowed: Any
    json: Any = None
    """The output as JSON for a schema run (``fsmviz.html.schema.json_view_html``)."""
    # Apply & run writes the inputs, and the before/after comparison: its two outputs
    # (the box is shown while they are there: app.css), its chart.
    regex: Any = None
    chat: Any = None
    compare_view: Any = None
    compare_chart: Any = None
    example: Any = None
    """The examples menu (it names the example loaded, ``on_pattern_edit``)."""
    engine_check: Any = None
    """A server run's per-step engine check (``fsmviz.html.engine_check``)."""


def checked_options(**given: object) -> GenerationOptions:
    """The page's run inputs (``fsmviz.params.check_generation``'s names) as a checked
    record with the app's drafts (``DRAFT_TOKENS``): a bad one is a ``ParameterError``
    naming it."""
    return GenerationOptions(**check_generation(**given), draft_tokens=DRAFT_TOKENS)


def options(max_tokens, temperature, seed, chat, prob_limit=None) -> GenerationOptions:
    """The plain run inputs as a checked record, the decoding options at their defaults
    (the Grammar tab's runs; a Generate run's are ``handlers.RunInputs.options``); a prob
    limit of 0 is off."""
    return checked_options(max_tokens=max_tokens, temperature=temperature, seed=seed,
                           chat=chat, prob_limit=prob_limit or None)  # fmt: skip


def frame_updates(frame: PageFrame, page: Page) -> dict:
    """A frame as Gradio updates: its fields that are set; once the constrained run has
    ended (``frame.trace``), the trace, its findings and the Step slider's range. (The
    Generate tab adds the JSON view and the downloads: ``handlers.frame_updates``.)"""
    fields = {
        page.dfa: frame.dfa,
        page.output: frame.output,
        page.shadow: frame.shadow,
        page.steps: frame.steps,
        page.chart: frame.chart,
        page.diagnosis: frame.diagnosis,
        page.error: frame.error,
        page.status: frame.status,
        page.allowed: frame.allowed,
    }
    updates = {component: value for component, value in fields.items() if value is not None}
    if frame.shadow_next:
        updates[page.stop] = gr.update(value="Skip shadow run", visible=True, interactive=True)
    if frame.findings and frame.trace is None:  # the doctor's fixes checked after the run
        updates[page.findings] = frame.findings
    if frame.trace is not None:
        last = max(len(frame.trace.steps) - 1, 0)
        updates[page.trace] = frame.trace
        updates[page.findings] = frame.findings
        # A slider needs minimum < maximum: a one-step trace leaves it fixed at 0.
        updates[page.step] = gr.update(maximum=max(last, 1), value=last, interactive=last > 0)
    return updates


EMPTY_OUTPUT = '<p class="empty">Press Generate: the output appears here.</p>'


CHANGED = "The input changed since the last run, so its output was cleared: press Generate."


def run_outputs(page: Page) -> list:
    """The components a run (``on_run``, ``on_apply``) writes."""
    compared = [page.compare_view, page.compare_chart] if page.compare_view is not None else []
    return [page.dfa, page.output, page.shadow, page.steps, page.chart, page.diagnosis,
            page.error, page.status, page.trace, page.findings, page.step, page.downloads,
            page.run, page.stop, page.allowed, *([page.json] if page.json else []),
            *compared, *([page.engine_check] if page.engine_check else [])]  # fmt: skip


def cleared(page: Page) -> dict:
    """Every output of a run emptied (a new pattern or schema: nothing of it belongs)."""
    updates = {
        page.output: EMPTY_OUTPUT,
        page.shadow: "",
        page.steps: steps_html([]),
        page.chart: None,
        page.allowed: allowed_html(None),
        page.trace: None,
        page.findings: (),
        page.status: CHANGED,
        page.step: gr.update(value=0, maximum=1, interactive=False),
        page.downloads: None,
    }
    if page.json is not None:
        updates[page.json] = ""
    if page.engine_check is not None:
        updates[page.engine_check] = engine_check_html(None, ())
    return updates


def started(page: Page) -> dict:
    """Stop shown, Generate left available (pressing it again starts over), the last
    run's status, allowed sets, JSON view and before/after comparison gone (a run that
    fails before its first token must not leave the previous run's verdict standing)."""
    updates = {
        page.run: gr.update(interactive=True),
        page.stop: gr.update(value="Stop", visible=True, interactive=True),
        page.status: "Starting: the pattern's index, then the model reads the prompt…",
        page.allowed: '<p class="empty">Every step\'s allowed set comes when the run ends.</p>',
    }
    if page.json is not None:
        updates[page.json] = ""
    if page.compare_view is not None:  # an earlier Apply & run's before/after is not this run's
        updates.update({page.compare_view: "", page.compare_chart: None})
    if page.engine_check is not None:  # nor the last server run's engine check
        updates[page.engine_check] = ENGINE_CHECK_LATER
    return updates


def follow(
    page: Page,
    mark: StopMark,
    me: int,
    frames: Iterator[Any],
    updates: Callable[[Any], dict],
    status: Callable[[Trace], str],
) -> Generator[dict, None, list[Step] | None]:
    """Yield each of a run's frames as page updates (``updates``) while run ``me`` is the
    page's, for the regex page and the grammar tab alike. Returns the steps written when
    Stop came during the constrained run (the caller keeps them for stepping), else None:
    the frames ran out (the page is idle again), a new run took over (it owns the page),
    or Stop came during the shadow run (skipped, said with the run's ``status``)."""
    written: list[Step] = []
    traced = None
    # polled: the mark is looked at every 50 ms while a frame is awaited, not only when
    # one comes (a token took 1-2.5 s on a loaded machine: Stop waited for it)
    for frame in polled(frames, lambda: mark.run != me):
        page_frame = getattr(frame, "frame", frame)  # a GrammarFrame holds one
        written.extend(page_frame.new_steps)
        traced = page_frame.trace or traced
        yield updates(frame)
    if mark.run == me:  # the frames ran out: the page is idle again
        yield idle(page)
        return None
    if not mark.stopped(me):
        return None
    if traced is not None:
        yield shadow_skipped(page, status(traced))
        return None
    return written


def idle(page: Page) -> dict:
    """Generate enabled, Stop hidden."""
    return {page.run: gr.update(interactive=True), page.stop: gr.update(visible=False)}


def shadow_skipped(page: Page, status: str) -> dict:
    """The updates of a run stopped during its shadow run: idle again, the shadow output
    saying it was skipped, the constrained run's ``status`` kept."""
    return {
        **idle(page),
        page.shadow: '<p class="empty">The shadow run was skipped.</p>',
        page.status: f"{status} The shadow run was skipped.",
    }


@dataclass
class StopMark:
    """One per browser session (a ``gr.State``): each run takes a number (``start``);
    Stop, or a new run, moves the number on, and a run that sees a number other than its
    own ends itself before its next frame (``on_run``, ``stoppable``)."""

    run: int = 0
    stopped_run: int = -1
    """The run that Stop ended (not one a new run replaced)."""
    pattern: str | None = None
    """The pattern of the last run Generate started: an edit of the Regex box answered
    after that run began does not clear it (``handlers.on_pattern_edit``)."""
    drawn: tuple[str, str | None] | None = None
    """The pattern and model the drawing panel was last drawn for (the first paint's, then
    each edit's): a redraw asked for these again is a drawing option's, which keeps the
    run's lit step (``handlers.on_pattern_edit``)."""

    def start(self, pattern: str | None = None) -> int:
        self.run += 1
        self.pattern = pattern
        return self.run

    def stop(self) -> None:
        self.stopped_run = self.run
        self.run += 1

    def stopped(self, run: int) -> bool:
        """Whether Stop (rather than a new run) ended ``run``."""
        return self.stopped_run == run


def stoppable(page: Page, handler: Callable[..., Iterator[dict]]) -> Callable[..., Iterator[dict]]:
    """``handler`` taking one more input last, the session's ``StopMark``: when Stop moves
    the mark on, the run's generator is closed (which ends the generation) and its last
    update is "Stopped.", Generate back and Stop hidden; when a new run moves it on, the
    run ends without a word (the new run owns the page).

    The run ends itself rather than being cancelled by Gradio (``cancels=``): a cancelled
    event's last message could reach the page after Stop's own update and put its
    "Generating… 3 tokens" back over "Stopped." (one browser test run in six here). One
    event's messages arrive in order, so "Stopped." from the run itself is the last word.
    """

    def run(*values):
        *values, mark = values
        me = mark.start()
        yield from polled(handler(*values), lambda: mark.run != me)
        if mark.run == me:
            return
        if mark.stopped(me):
            yield {**idle(page), page.status: "Stopped."}

    return run


def on_stop(page: Page, mark: StopMark) -> dict:
    """Stop: the run sees the mark within 50 ms (``stopping.polled``) and ends, saying
    "Stopped after N tokens" in its own next update (``follow``, ``stopped_frame``); until
    then the button says so. Wired outside the queue (``queue=False``): a click is heard at
    once, never behind other events. This answer never touches the status line: it could
    reach the page after the run's last word and put an older sentence back over it."""
    mark.stop()
    return {page.stop: gr.update(value="Stopping…", interactive=False)}
