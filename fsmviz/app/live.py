"""What the page shows, frame by frame, while a generation streams.

The app's handlers only forward these frames to Gradio. A run streams the constrained
generation first (DFA lit at the current state, tokens appearing, table growing), then
the unconstrained *shadow* run for the same prompt and seed: what the model wanted. The
chart is redrawn at most once a second and once in eight frames (``ChartPace``: each
redraw is a whole plotly plot in the browser) and once at the end; the doctor looks at
the finished trace.

The generation runs ahead on a thread of its own (``ahead``) and is never held back by
the page: each frame shows every token that arrived since the last one.
"""

from __future__ import annotations

import html
import json
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass

import plotly.graph_objects as go

from fsmviz.automaton.dfa import Dfa, compile_regex
from fsmviz.automaton.syntax import RegexError
from fsmviz.diagnose import Finding, diagnose
from fsmviz.diagnose.text import plural
from fsmviz.drawing.compact import CompactGraph, compact
from fsmviz.drawing.lights import (
    StepLighter,
    compact_lights,
    natural_width,
    path_view,
    state_tooltips,
    step_lights,
    token_distances,
)
from fsmviz.drawing.render import RenderError, compact_svg, highlight, to_svg
from fsmviz.generation.allowed import allowed_sets
from fsmviz.generation.constraint import RegexConstraint, regex_constraint
from fsmviz.generation.generate import GenerationOptions, Stream, stream
from fsmviz.generation.models import Model
from fsmviz.generation.trace import Step, Trace, drawn_path, pieces
from fsmviz.html.charts import valid_mass_figure
from fsmviz.html.comparison import STOPPED
from fsmviz.html.findings import findings_html
from fsmviz.html.steps import steps_html
from fsmviz.html.text import error_html, esc
from fsmviz.html.tokens import allowed_html, output_html
from fsmviz.tokens.index import IndexTooLarge
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "COMPACT_ABOVE",
    "ChartPace",
    "DRAW_LIMIT",
    "DRAWINGS",
    "LiveDrawing",
    "constrained_frames",
    "done_status",
    "finish",
    "progress",
    "run_event",
    "shadow_announcement",
    "shadow_frames",
    "PageFrame",
    "PatternView",
    "drawn_path",
    "pattern_view",
]

DRAW_LIMIT = 300
"""Drawings with more states are described, not drawn: a layout that large is unreadable
(in the compact drawing, its nodes count)."""
DRAWINGS = ("auto", "compact", "exact")
"""How the DFA is drawn: ``compact`` folds runs of states into edges and counted repeats
into looped states (``fsmviz.drawing.compact``), ``exact`` draws every state, ``auto`` is compact
for DFAs of more than ``COMPACT_ABOVE`` states."""
COMPACT_ABOVE = 30
"""Up to about 30 states the exact drawing fits a laptop screen with readable labels and
teaches more (every state is there, numbered as in the step table). Beyond that, chains of
counted states become a staircase of dots at page width, and the compact drawing reads
better."""
CHART_EVERY = 1.0
"""Seconds between two redraws of the valid-mass chart during a run, at least (the last
frame always has it whole). Gradio draws each figure from scratch, in a new element: on
a 2-core machine ~150 ms of the browser's main thread each, so twice a second took a third
of a core from the streaming text beside it; once a second, the curve still grows live."""
CHART_FRAMES = 8
"""Frames between two redraws of the chart during a run, at least. On a loaded machine a
token takes 1-2.5 s and a redraw 1-3 s of the page's one thread: a chart on every frame
(each more than CHART_EVERY apart) kept the page busy drawing it, and a click on Stop or
Generate waited over a minute (tests/test_stop.py). One frame in eight leaves the page
free most of the time; on a quiet machine, where frames come four a second
(``FRAME_EVERY``), the curve grows every two seconds."""


@dataclass
class ChartPace:
    """When a streaming run's frame redraws its chart: the first frame does, then one at
    least ``CHART_EVERY`` seconds and ``CHART_FRAMES`` frames after the last redraw.

    >>> pace = ChartPace()
    >>> [i for i in range(30) if pace.due(now=i * 0.05)]  # frames 0.05 s apart: once a second
    [0, 21]
    >>> pace = ChartPace()
    >>> [i for i in range(20) if pace.due(now=i * 2.0)]  # 2 s apart (loaded): one in eight
    [0, 8, 16]
    """

    last: float = float("-inf")
    frames: int = CHART_FRAMES

    def due(self, now: float) -> bool:
        """Whether the frame made at ``now`` (seconds) redraws the chart."""
        due = now - self.last > CHART_EVERY and self.frames >= CHART_FRAMES
        if due:
            self.last, self.frames = now, 0
        self.frames += 1
        return due


FRAME_EVERY = 0.25
"""Seconds a frame waits for more tokens, so that at most ~4 frames a second reach the
browser whatever the model's speed. A frame costs the page 0.1-0.2 s of its one thread on
a quiet 2-core machine (Gradio redraws each HTML output whole and updates the progress of
every output): at ~10 a second (0.1 s) a streaming page was busy all the time, and
filling the prompt box or ticking a checkbox during a run took 3-6 s where at 0.3 s it
took 0.1-0.5 s (Chromium at a load of 3; ten times that on the loaded suite machine)."""
SHADOW_EVERY = 0.5
"""Seconds a frame of the shadow run waits for more tokens (``FRAME_EVERY`` is the
constrained run's). Whatever a frame carries, it costs the app 20-30 ms of Gradio's event
loop (every output it leaves alone, ~15 of them, is built again as a component: what
``gr.skip`` costs in Gradio 6) and the page 0.1-0.2 s; the shadow run's box grows beside a
finished run, so twice a second reads as live, in half the frames (a 64-token email run
from the page: ~100 frames, a third of them the shadow run's)."""


def run_event(status: object, at_once: int) -> dict[str, object]:
    """The settings of an event that runs the model (Generate, Apply & run, the Grammar
    tab's runs): at most ``at_once`` at a time, all sharing one queue ("generate"), and
    Gradio's progress (the place in the queue, then a bar while it streams) shown on the
    page's ``status`` line only. By default each of a run's ~15 outputs had its own
    overlay, timer and pulsing border, redrawn every frame: 0.3–0.5 s of the browser's CPU
    in a 4-s run, for nothing the status line does not already say."""
    return {"concurrency_limit": at_once, "concurrency_id": "generate",
            "show_progress_on": status}  # fmt: skip


@dataclass(frozen=True)
class PatternView:
    """A pattern as the page shows it before any run: drawing, findings, error."""

    pattern: str
    dfa: Dfa | None
    svg: str
    findings: tuple[Finding, ...]
    error: str
    graph: CompactGraph | None = None
    """The compact drawing's graph when ``svg`` is compact, else None."""
    constraint: RegexConstraint | None = None
    """The pattern built once over the vocabulary (``fsmviz.constraint``): the doctor, the
    run and the allowed sets read it; None without a vocabulary (or an index too large)."""

    def __getstate__(self) -> dict[str, object]:
        """Pickled (a ZeroGPU worker's argument: ``fsmviz.app.zerogpu``) without its
        ``constraint``, whose index holds a lock and the vocabulary, which do not pickle;
        the run in the worker builds the index again (found in the pattern's caches)."""
        return {**self.__dict__, "constraint": None}

    def dfa_html(
        self,
        steps: Sequence[Step] = (),
        upto: int | None = None,
        marked: Sequence[int] = (),
        stepping: bool = False,
    ) -> str:
        return dfa_html(self, steps, upto, marked, stepping)


def pattern_view(
    pattern: str,
    vocab: Vocabulary | None,
    trace: Trace | None = None,
    distances: bool = False,
    diagnosed: bool = True,
    drawing: str = "auto",
) -> PatternView:
    """Compile, draw and diagnose ``pattern``; a bad pattern gives an error, not an exception.
    With ``distances``, each state shows the fewest tokens still needed to finish; without
    ``diagnosed`` the doctor is not asked (a step click redraws, it does not re-diagnose).
    ``drawing`` is one of ``DRAWINGS``. The pattern's constraint is built here, once, and
    kept in the view (``PatternView.constraint``) for everything after it."""
    if not pattern:
        return PatternView(pattern, None, "", (), error_html(EMPTY_PATTERN))
    try:
        dfa = compile_regex(pattern)
        built = regex_constraint(dfa, vocab) if vocab is not None else None
    except RegexError as error:
        return PatternView(pattern, None, "", (), error_html(error, pattern))
    except IndexTooLarge:  # the doctor says so; the run builds its own and says why
        built = None
    findings = tuple(diagnose(built or pattern, vocab, trace)) if diagnosed else ()
    graph = None
    if drawing == "compact" or (drawing == "auto" and dfa.num_states > COMPACT_ABOVE):
        graph = compact(dfa)
        if graph.num_states == dfa.num_states and drawing == "auto":
            graph = None  # nothing to fold: the exact drawing is the same, with numbers
    if (graph.num_states if graph else dfa.num_states) > DRAW_LIMIT:
        return PatternView(pattern, dfa, "", findings, "", graph, built)
    far = token_distances(built or dfa, vocab) if distances and vocab else None
    tips = state_tooltips(dfa, far)
    try:
        if graph is None:
            svg = to_svg(dfa, title=pattern, distances=far, tooltips=tips)
        else:
            svg = compact_svg(graph, dfa, title=pattern, distances=far, tooltips=tips)
    except RenderError as error:
        return PatternView(pattern, dfa, "", findings, error_html(error), graph, built)
    return PatternView(pattern, dfa, svg, findings, "", graph, built)


EMPTY_PATTERN = RegexError(
    "The pattern is empty: there is nothing to guide the generation",
    None,
    "Type a regex, for example [0-9]{3}-[0-9]{4}, or pick an example.",
)


def dfa_html(
    view: PatternView,
    steps: Sequence[Step] = (),
    upto: int | None = None,
    marked: Sequence[int] = (),
    stepping: bool = False,
) -> str:
    """The drawing lit after step ``upto`` (all ``steps`` if None). With ``stepping`` (a
    finished run), each step's lights go with it as JSON (``step_lights``), so that the
    browser (static/app.js) lights any chosen step at once, with no server round trip."""
    if view.dfa is None:
        return '<p class="empty">No automaton: fix the pattern in the Regex box.</p>'
    dfa = view.dfa
    summary = f"{plural(dfa.num_states, 'state')}, {len(dfa.accepting)} accepting (double circles)"
    if view.graph is not None:
        summary += f", drawn compact as {len(view.graph.nodes)}"
    if not view.svg:
        why = view.error or (  # graphviz failed or was too slow, else too many states
            f'<p class="empty">Too large to draw readably (more than {DRAW_LIMIT} states, or '
            "more than graphviz lays out in time); the table and the chart still show every "
            "step.</p>"
        )
        return f'<div class="dfa-view"><p class="dfa-bar">{summary}</p>{why}</div>'
    current, visited, edges = path_view(steps, upto, dfa)
    if view.graph is None:
        svg = highlight(view.svg, current=current, visited=visited, marked=marked, path_edges=edges)
        where = f"current state {current}"
    else:
        lights = compact_lights(view.graph, current, visited, edges, marked)
        svg = highlight(view.svg, **lights.highlight())
        where = f"current state {current}{lights.where}"
    zoom = "".join(
        f'<button type="button" data-zoom="{z}" title="{t}">{label}</button>'
        for z, label, t in (
            ("out", "−", "zoom out (or Ctrl + wheel)"),
            ("fit", "fit", "fit"),
            ("in", "+", "zoom in (or Ctrl + wheel)"),
        )
    )
    lights = ""
    if stepping and steps:
        data = json.dumps(
            step_lights(dfa, view.graph, steps), ensure_ascii=False, separators=(",", ":")
        )
        # in an attribute, not a <template>: Gradio patches a redrawn HTML output node by
        # node, and a <template>'s content is no child node, so it kept the old lights
        lights = f'<div class="lights" hidden data-json="{html.escape(data)}"></div>'
    return (
        f'<div class="dfa-view" data-states="{dfa.num_states}" '
        f'data-drawing="{"exact" if view.graph is None else "compact"}">'
        f'<div class="dfa-bar">{summary} · <span class="where">{esc(where)}</span>'
        f'<span class="zoom">{zoom}</span></div>'
        f'<div class="dfa-scroll" style="--natural:{natural_width(view.svg)}px">{svg}</div>'
        f"{lights}</div>"
    )


@dataclass(frozen=True)
class PageFrame:
    """One update of the page, as plain data: a field left ``None`` is unchanged.

    Frames are picklable (strings, a plotly figure, engine records): on a ZeroGPU Space the
    frame generator runs in a worker process and each frame is sent back pickled. Turning a
    frame into Gradio component updates happens outside, in ``handlers.frame_updates``.
    ``trace`` (with its ``findings``) is set once, when the constrained run has ended: from
    then on the page can step through it, while the shadow run streams only ``shadow``.
    """

    status: str
    dfa: str | None = None
    output: str | None = None
    shadow: str | None = None
    steps: str | None = None
    chart: go.Figure | None = None
    diagnosis: str | None = None
    error: str | None = None
    trace: Trace | None = None
    findings: tuple[Finding, ...] = ()
    text: str | None = None
    """The constrained output so far, as text (set with ``output``)."""
    allowed: str | None = None
    """The allowed-set panel (``views.allowed_html``), every step's set inside it."""
    new_steps: tuple[Step, ...] = ()
    """The constrained run's steps that arrived with this frame: a run stopped half-way
    keeps what it wrote (``handlers.on_run`` makes its trace from them)."""
    shadow_next: bool = False
    """Set on the trace's frame when the shadow run comes next (Stop then skips it)."""


def constrained_frames(
    model: Model,
    constraint: object,
    prompt: str,
    options: GenerationOptions,
    drawn: Callable[[Sequence[Step], bool], dict[str, str | None]],
    what: str = "Generating",
) -> Generator[PageFrame, None, tuple[Trace, bool]]:
    """The constrained run's frames, one per arrival of steps: the output, the chart
    (at the ``ChartPace``) and the progress line ``what``…; the
    first also clears the error and says the shadow run comes later. ``drawn(steps,
    first)`` gives what the constraint draws of the steps so far: the frame's ``dfa``,
    ``steps`` and ``diagnosis`` (a regex's lit DFA, ``regex_drawn``; a grammar-path
    schema's note, ``schema_run``). Returns the run's trace and whether no frame was
    yielded (the run wrote nothing)."""
    steps: list[Step] = []
    pace = ChartPace()
    run = stream(model, constraint, prompt, options)  # type: ignore[arg-type]
    first = True
    started = time.perf_counter()
    # closing(): a visitor who leaves mid-run stops the generation at once
    with closing(ahead(run)) as arrivals:
        for new in arrivals:
            steps.extend(new)
            now = time.perf_counter()
            chart = valid_mass_figure(steps) if pace.due(now) else None
            yield PageFrame(
                progress(what, len(steps), options.max_tokens, now - started),
                output=output_html(steps),
                text="".join(pieces(steps)),
                shadow=SHADOW_LATER if first else None,
                chart=chart,
                error="" if first else None,
                new_steps=tuple(new),
                **drawn(steps, first),  # type: ignore[arg-type]
            )
            first = False
    return run.trace(), first


class LiveDrawing:
    """What a regex run draws of its steps so far (``constrained_frames``' ``drawn``): the
    table with each step's drawn states and, in each row, that step's lights as data; and
    with the first frame only, the drawing (lit where the run is) and the pattern's findings.

    The drawing is sent once per run: Gradio re-parses and walks a whole HTML output
    whenever its value changes, so a drawing resent at each frame cost the page its whole
    SVG for a few classes moved. The page's script lights it from the rows as they arrive
    (static/app.js ``lightLive``), as it lights a finished run's chosen step. Each step's
    lights are made once, when it arrives (``StepLighter``): a frame costs the server its
    new steps' lights, not the whole run's."""

    def __init__(self, view: PatternView) -> None:
        assert view.dfa is not None
        self.view = view
        self.lighter = StepLighter(view.dfa, view.graph) if view.svg else None
        self.lights: list[str] = []

    def __call__(self, steps: Sequence[Step], first: bool) -> dict[str, str | None]:
        view, lighter = self.view, self.lighter
        path = drawn_path(steps, view.dfa)  # type: ignore[arg-type]
        if lighter is not None:  # too large to draw: no lights to send
            for _, current, walked in path[lighter.count :]:
                self.lights.append(_json(lighter.light(current, walked)))
        return {
            "dfa": view.dfa_html(steps) if first else None,
            "steps": steps_html(steps, states=path, live=True, lights=self.lights or None),
            "diagnosis": findings_html(view.findings, pattern=view.pattern) if first else None,
        }


def regex_drawn(view: PatternView, steps: Sequence[Step], first: bool) -> dict[str, str | None]:
    """``LiveDrawing`` of ``steps`` at once (one frame)."""
    return LiveDrawing(view)(steps, first)


def _json(data: object) -> str:
    """``data`` as compact JSON, for a data attribute (escaped by its writer)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def shadow_announcement(options: GenerationOptions, trace: Trace) -> str:
    """The sentence added to a finished run's status before the shadow run: how many
    tokens it may write and, at the constrained run's speed, about how long that takes.

    >>> from fsmviz.generation.trace import GenerationOptions
    >>> class Run:
    ...     tokens_per_second = 20.0
    >>> text = shadow_announcement(GenerationOptions(max_tokens=40), Run())
    >>> "up to 40 tokens, about 2 s at most" in text
    True
    """
    return (
        f" Now the unconstrained shadow run: up to {plural(options.max_tokens, 'token')}, "
        f"about {options.max_tokens / max(trace.tokens_per_second, 0.1):.0f} s at most "
        "(“Skip shadow run” skips it; everything above stays)."
    )


def shadow_frames(
    model: Model, prompt: str, options: GenerationOptions, done: str
) -> Iterator[PageFrame]:
    """The unconstrained *shadow* run for the same prompt and options, as frames that set
    only ``shadow`` and the status (``done``, the constrained run's, then its progress).
    The grammar tab streams its shadow run with this too."""
    shadow_steps: list[Step] = []
    started = time.perf_counter()
    with closing(ahead(stream(model, None, prompt, options), SHADOW_EVERY)) as arrivals:
        for new in arrivals:
            shadow_steps.extend(new)
            elapsed = time.perf_counter() - started
            line = progress("the shadow run", len(shadow_steps), options.max_tokens, elapsed)
            yield PageFrame(
                f"{done} Now {line}",
                shadow=output_html(shadow_steps),
            )
    yield PageFrame(done, shadow=shadow_html(shadow_steps))


SHADOW_LATER = (
    '<p class="empty">After the run, the model writes freely here (the shadow run; it can '
    "be skipped).</p>"
)


def finish(model: Model, view: PatternView, trace: Trace, status: str | None = None) -> PageFrame:
    """The frame of a finished (or stopped) constrained run: everything drawn for stepping
    through it, the doctor's findings on the trace, every step's allowed set."""
    steps = list(trace.steps)
    findings = tuple(diagnose(view.constraint or view.pattern, model.vocab, trace))
    sets = allowed_sets(model, trace, view.constraint.index if view.constraint else None)
    return PageFrame(
        status if status is not None else done_status(trace),
        dfa=view.dfa_html(steps, stepping=True),
        output=output_html(steps, final=True),
        text="".join(pieces(steps)),
        steps=steps_html(steps, states=drawn_path(steps, view.dfa)),
        chart=valid_mass_figure(steps),
        diagnosis=findings_html(findings, pattern=view.pattern),
        trace=trace,
        findings=findings,
        allowed=allowed_html(sets, steps, selected=len(steps) - 1) if steps else None,
    )


def progress(what: str, done: int, budget: int, seconds: float) -> str:
    """The progress line of a run: tokens so far, the budget, the pace and the most time
    left (the run may end sooner, when the pattern is complete).

    >>> progress("Generating", 8, 64, 4.0)
    'Generating… 8 of at most 64 tokens · 2.0 tokens/s · at most ~28 s left'
    >>> progress("Generating", 1, 64, 0.0)
    'Generating… 1 of at most 64 tokens'
    """
    line = f"{what}… {done:,} of at most {plural(budget, 'token')}"
    if done > 1 and seconds > 0:
        rate = done / seconds
        line += f" · {rate:.1f} tokens/s · at most ~{max(budget - done, 0) / rate:.0f} s left"
    return line


def shadow_html(steps: Sequence[Step]) -> str:
    """The finished shadow run; when the model's first choice was to stop, that is said."""
    if steps and steps[0].is_eos:
        return (
            '<p class="empty">The model\'s first choice was end-of-text: unconstrained, it '
            "would have written nothing at all. The pattern is what made it write.</p>"
        )
    return output_html(steps, final=True)


def ahead(steps: Stream, every: float = FRAME_EVERY) -> Iterator[list[Step]]:
    """Iterate ``steps`` on a thread of its own; yield, each time, all the steps that
    arrived since the last time (at least one), waiting up to ``every`` seconds after the
    first of them for more (see ``FRAME_EVERY``); the stream's end is yielded at once, not
    after the wait. An error in the stream is raised here.
    Closing this generator stops the stream after its current token."""
    arrived: queue.SimpleQueue[Step | BaseException | None] = queue.SimpleQueue()
    stop = threading.Event()

    def produce() -> None:
        try:
            for step in steps:
                arrived.put(step)
                if stop.is_set():
                    break
        except Exception as error:  # noqa: BLE001 - handed to the reader, raised there
            arrived.put(error)
        finally:
            steps.close()
            arrived.put(None)

    threading.Thread(target=produce, name="fsmviz-stream", daemon=True).start()
    try:
        while True:
            batch = [arrived.get()]
            deadline = time.monotonic() + every  # let more tokens come: see FRAME_EVERY
            while isinstance(batch[-1], Step):  # until then, or until the stream ends
                try:
                    batch.append(arrived.get(timeout=max(deadline - time.monotonic(), 0)))
                except queue.Empty:
                    break
            for item in batch:
                if isinstance(item, BaseException):
                    raise item
            new = [item for item in batch if isinstance(item, Step)]
            if new:
                yield new
            if batch[-1] is None:
                return
    finally:
        stop.set()


def done_status(trace: Trace, of: str = "the pattern") -> str:
    """The status line of a finished run: tokens, time, why it stopped, the verdict
    (whether the output matches ``of``: the pattern, or a schema's grammar)."""
    verdict = f"matches {of}" if trace.matched else f"does NOT match {of}"
    why = STOPPED[trace.stop_reason]
    return esc(
        f"Done: {plural(len(trace.steps), 'token')} in {trace.seconds:.1f} s "
        f"({trace.tokens_per_second:.1f}/s); stopped because {why}; the output {verdict}."
        + "".join(f" {note}" for note in trace.notes)
    )
