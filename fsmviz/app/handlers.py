"""What the page does when something happens: one short function per event.

Every handler is a module-level function. What it needs beyond the event's inputs — the
model (a ``BackgroundModel``, which may still be loading) and, for handlers that return a
dict of updates, the page's components (``Page``) — is passed in explicitly when
``ui.build_ui`` wires it (``functools.partial``); nothing is closed over. Per-visitor
data (the last trace, its findings) comes in and goes out through ``gr.State``.

A run is a stream of plain-data frames (``live.PageFrame``, made by ``run_frames``, which a
ZeroGPU Space runs in a GPU worker); ``frame_updates`` turns each frame into component
updates here, outside the generation.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import gradio as gr

from fsmviz.app.backend import (
    ENGINE_CHECK_LATER,
    engine_check_html,
    engine_checked,
    run_source,
)
from fsmviz.app.charts import comparison_figure, valid_mass_figure
from fsmviz.app.examples import default_example, examples
from fsmviz.app.fixes import Inputs, read_fix, same_run
from fsmviz.app.live import (
    DRAW_LIMIT,
    PageFrame,
    done_status,
    finish,
    live_run,
    pattern_view,
)
from fsmviz.app.schema_page import (
    MAX_LINKED_SCHEMA,
    SchemaChoice,
    in_use,
    json_view_html,
    mode_html,
    use_linked_schema,
)
from fsmviz.app.schema_run import (
    compiled_of,
    finish_schema,
    grammar_panel,
    on_grammar_path,
    schema_frames,
)
from fsmviz.app.scratch import run_folder
from fsmviz.app.stopping import polled
from fsmviz.app.views import (
    allowed_html,
    comparison_html,
    error_html,
    findings_html,
    steps_html,
)
from fsmviz.app.zerogpu import on_gpu
from fsmviz.automaton.dfa import compile_regex
from fsmviz.automaton.syntax import MAX_PATTERN_LENGTH, RegexError
from fsmviz.diagnose.text import plural
from fsmviz.drawing.render import to_dot, to_svg
from fsmviz.generation.batching import ForwardPassError
from fsmviz.generation.generate import MAX_TOKENS_LIMIT, GenerationOptions, full_match
from fsmviz.generation.models import BackgroundModel, ModelLoadError
from fsmviz.generation.trace import STOP_RULES, Step, Trace, drawn_path, stopped_trace
from fsmviz.grammar.replay import grammar_stopped_trace
from fsmviz.params import MAX_PROMPT_CHARS, MAX_TOP_K, check_generation
from fsmviz.params import text as checked_text

live_run_on_gpu = on_gpu(live_run)
schema_frames_on_gpu = on_gpu(schema_frames)
"""The run's frames. On a ZeroGPU Space they are generated in the GPU worker, which pickles
each one: plain ``PageFrame`` data, turned into component updates here (``frame_updates``)."""
FINISH_SECONDS = 30
finish_on_gpu = on_gpu(finish, lambda *args, **kwargs: FINISH_SECONDS)
finish_schema_on_gpu = on_gpu(finish_schema, lambda *args, **kwargs: FINISH_SECONDS)
"""A stopped run's last frame (every step's allowed set: forward passes), on the GPU
where there is one."""

MAX_PROMPT = MAX_PROMPT_CHARS
DRAFT_TOKENS = 8
"""Speculative drafts in the app (``GenerationOptions.draft_tokens``): repeated structure
such as JSON is written about twice as fast; the output is the same (greedy) or drawn from
the same distribution (sampling)."""

SHOWS = {
    "email": "loops: see the doctor",
    "date": "valid but wrong",
    "float": "an optional integer part",
    "moby_choice": "a choice of two names",
    "url": "alternative prefixes",
    "protein": "a number read from the prompt",
    "three_letters_digit": "fixed-length classes",
    "pi_digits": "digits the model remembers",
    "pink_floyd_json": "JSON: forced structure, seed 000's prompt",
    "paper_float": "everything optional",
    "counting_123": "a repeated group",
    "hot_cold_hotel": "words that are prefixes of each other",
    "protein_20g": "seed 004: 20g becomes an invented 20.0g",
    "no_letter_e": "seed 001: a poem without the letter e",
    "stop_string": "a stop string: up to the first period",
}
"""What each seed example shows, for the examples menu."""


def label(name: str) -> str:
    return f"{name} — {SHOWS[name]}" if name in SHOWS else name


EXAMPLES = {
    label(name): (example.pattern, example.prompt, example.chat)
    for name, example in examples().items()
}
"""The seed examples by label (name — what it shows): (pattern, prompt, chat template on)."""
DEFAULT = EXAMPLES[label(default_example().name)]
DEFAULT_MAX_TOKENS = 64


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
    """The output as JSON for a schema run (``schema_page.json_view_html``)."""
    # Apply & run writes the inputs, and the before/after comparison: its two outputs
    # (the box is shown while they are there: app.css), its chart.
    regex: Any = None
    chat: Any = None
    compare_view: Any = None
    compare_chart: Any = None
    example: Any = None
    """The examples menu (it names the example loaded, ``on_pattern_edit``)."""
    engine_check: Any = None
    """A server run's per-step engine check (``backend.engine_check_html``)."""


def options(
    max_tokens,
    temperature,
    seed,
    chat,
    prob_limit,
    top_k=0,
    top_p=1.0,
    stop="eos",
    overshoot=False,
) -> GenerationOptions:
    """The page's inputs as a checked record (``fsmviz.params``: a bad one is a
    ``ParameterError`` naming it); a prob limit of 0 is off, a blank top-k or top-p too."""
    checked = check_generation(
        max_tokens=max_tokens, temperature=temperature, seed=seed, chat=chat,
        prob_limit=prob_limit or None, top_k=top_k or 0, top_p=top_p or 1.0,
        stop=stop or "eos", overshoot=overshoot,
    )  # fmt: skip
    return GenerationOptions(**checked, draft_tokens=DRAFT_TOKENS)


def on_pattern(models: BackgroundModel, pattern: str, drawing: str = "auto"):
    """A new pattern: its drawing, the doctor's findings, or why it cannot be used."""
    view = pattern_view(pattern, models.vocabulary(), drawing=drawing)
    return view.dfa_html(), findings_html(view.findings, pattern=pattern), view.error


def on_pattern_edit(
    page: Page,
    models: BackgroundModel,
    pattern: str,
    drawing: str,
    trace: Trace | None,
    distances: bool = False,
    schema: SchemaChoice | None = None,
) -> dict:
    """The Regex box edited: the new drawing, findings or error (``on_pattern``); the
    examples menu names the example loaded, if it is one; and a run of another pattern
    (its output, verdict, steps, chart, allowed sets, shadow, JSON view) is cleared, since
    none of it belongs to what the box now says. A run of this very pattern (Apply & run's
    run after the fix, there before this event is answered) keeps its lit drawing and its
    findings. Emptied for a grammar-path ``schema``: the drawing panel says so and draws
    the schema's structure instead (``schema_run.grammar_panel``), no error."""
    chosen = in_use(schema, pattern)
    if on_grammar_path(chosen):
        dfa, diagnosis, error = grammar_panel(chosen), "", ""  # type: ignore[arg-type]
    else:
        dfa, diagnosis, error = on_pattern(models, pattern, drawing)
    updates = {page.dfa: dfa, page.diagnosis: diagnosis, page.error: error}
    if page.example is not None:
        updates[page.example] = example_of(pattern)
    if trace is not None and trace.pattern != pattern:
        updates.update(cleared(page))
    elif trace is not None and trace.steps and not on_grammar_path(chosen):
        # a run of this pattern (Apply & run's after): lit where it ended
        upto = len(trace.steps) - 1
        updates[page.dfa] = on_distances(models, pattern, distances, trace, upto, drawing)
        updates.pop(page.diagnosis)  # the run's findings stay
    return updates


def pattern_edit_outputs(page: Page) -> list:
    """The components ``on_pattern_edit`` may write."""
    return [page.dfa, page.diagnosis, page.error, *([page.example] if page.example else []),
            *cleared(page)]  # fmt: skip


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


EMPTY_OUTPUT = '<p class="empty">Press Generate: the output appears here.</p>'
CHANGED = "The input changed since the last run, so its output was cleared: press Generate."


def example_of(pattern: str) -> str | None:
    """The examples menu's label of the example whose pattern this is, else None."""
    return next((name for name, (p, *_rest) in EXAMPLES.items() if p == pattern), None)


def run_frames(
    models: BackgroundModel,
    pattern: str,
    prompt: str,
    opts: GenerationOptions,
    distances: bool,
    drawing: str = "auto",
    schema: SchemaChoice | None = None,
) -> Iterator[PageFrame]:
    """The frames of one run; a failure is a frame with a message, never a traceback.
    ``schema``: a grammar-path JSON Schema in use (``schema_run``), run instead."""
    try:
        checked_text("prompt", prompt, MAX_PROMPT)
        model = models.get(timeout=600)
        view = None
        if not on_grammar_path(schema):
            view = pattern_view(pattern, model.vocab, distances=distances, drawing=drawing)
    except (ValueError, ModelLoadError) as error:
        yield PageFrame(str(error), error=error_html(error))
        return
    try:
        if view is None:
            yield from schema_frames_on_gpu(model, schema, prompt, opts)
        else:
            yield from live_run_on_gpu(model, view, prompt, opts)
    except Exception as error:  # e.g. out of memory: a message, never a traceback
        message = (
            f"The generation stopped: {error}"  # says what happened and what to do
            if isinstance(error, ForwardPassError)
            else f"The generation failed: {type(error).__name__}: {error}"
        )
        yield PageFrame(message, error=error_html(RuntimeError(message)))


def frame_updates(frame: PageFrame, page: Page, schema: SchemaChoice | None = None) -> dict:
    """A frame as Gradio updates: its fields that are set; once the constrained run has
    ended (``frame.trace``), the trace, the Step slider's range and the downloads too. With
    the ``schema`` of a schema run, the output as JSON ("" for a regex run)."""
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
    if page.json is not None and frame.text is not None:
        steps = frame.trace.steps if frame.trace is not None else ()
        updates[page.json] = json_view_html(
            schema, frame.text, done=frame.trace is not None, steps=steps
        )
    if frame.findings and frame.trace is None:  # the doctor's fixes checked after the run
        updates[page.findings] = frame.findings
    if frame.trace is not None:
        last = max(len(frame.trace.steps) - 1, 0)
        updates[page.trace] = frame.trace
        updates[page.findings] = frame.findings
        # A slider needs minimum < maximum: a one-step trace leaves it fixed at 0.
        updates[page.step] = gr.update(maximum=max(last, 1), value=last, interactive=last > 0)
        updates[page.downloads] = downloads(frame.trace)
    return updates


def on_run(
    page: Page,
    models: BackgroundModel,
    pattern,
    prompt,
    max_tokens,
    temperature,
    seed,
    chat,
    prob_limit,
    distances,
    drawing="auto",
    schema: SchemaChoice | None = None,
    top_k=0,
    top_p=1.0,
    stop="eos",
    overshoot=False,
    mark: StopMark | None = None,
    backend: str | None = None,
) -> Iterator[dict]:
    """Generate: Stop shown while the frames stream; Generate stays available (a new run
    ends this one: ``StopMark``); ``backend``: the model menu's choice (the bundled model,
    or a configured server by name: ``fsmviz.app.backend``). ``schema``: the JSON Schema
    put in the Regex box, if any (a schema run while it is still there); ``top_k`` to
    ``overshoot``: the decoding box (``decoding_controls``). Stopped during the
    constrained run, the steps written so far become the run's trace (stepping, allowed
    sets and downloads work on them); stopped during the shadow run, the shadow run is
    skipped."""
    mark = mark if mark is not None else StopMark()
    me = mark.start()
    yield started(page)
    try:
        opts = options(
            max_tokens, temperature, seed, chat, prob_limit, top_k, top_p, stop, overshoot
        )
    except ValueError as error:
        yield {page.error: error_html(error), page.status: str(error), **idle(page)}
        return
    chosen = in_use(schema, pattern)
    models = run_source(models, backend)  # the bundled model, or a server's (its checks kept)
    frames = run_frames(models, pattern, prompt, opts, bool(distances), drawing, chosen)
    updates = partial(frame_updates, page=page, schema=chosen)
    updates = engine_checked(updates, page.engine_check, models)
    written = yield from follow(page, mark, me, frames, updates, done_status)
    if written is None:
        return
    said = f"Stopped after {plural(len(written), 'token')}."
    if written:
        yield {page.status: f"{said[:-1]}: keeping what was written…"}
        if chosen is not None and on_grammar_path(chosen):
            frame = stopped_schema_frame(models, chosen, prompt, opts, written)
        else:
            frame = stopped_frame(models, pattern, prompt, opts, written, distances, drawing)
        yield frame_updates(frame, page, chosen)
    yield {**idle(page), page.status: said if written else "Stopped."}


def shadow_skipped(page: Page, status: str) -> dict:
    """The updates of a run stopped during its shadow run: idle again, the shadow output
    saying it was skipped, the constrained run's ``status`` kept."""
    return {
        **idle(page),
        page.shadow: '<p class="empty">The shadow run was skipped.</p>',
        page.status: f"{status} The shadow run was skipped.",
    }


def stopped_frame(
    models: BackgroundModel,
    pattern: str,
    prompt: str,
    opts: GenerationOptions,
    written: list[Step],
    distances,
    drawing: str,
) -> PageFrame:
    """The last frame of a run stopped half-way: its steps as a trace (with a note that
    the visitor stopped it), drawn for stepping, with every step's allowed set."""
    model = models.get(timeout=600)
    view = pattern_view(pattern, model.vocab, distances=bool(distances), drawing=drawing)
    dfa = view.dfa  # the judge: regex.fullmatch, the DFA's verdict where that times out

    def judge(text: str) -> bool:
        return full_match(pattern, text, dfa is not None and dfa.accepts(text))

    trace = stopped_trace(written, prompt, opts, pattern, judge)
    return finish_on_gpu(model, view, trace, f"Stopped after {plural(len(written), 'token')}.")


def stopped_schema_frame(
    models: BackgroundModel,
    choice: SchemaChoice,
    prompt: str,
    opts: GenerationOptions,
    written: list[Step],
) -> PageFrame:
    """The last frame of a grammar-path schema run stopped half-way: its steps as a trace
    (``grammar.replay.grammar_stopped_trace``, judged by the schema's grammar), drawn for stepping,
    with every step's allowed set (``schema_run.finish_schema``)."""
    model = models.get(timeout=600)
    trace = grammar_stopped_trace(compiled_of(choice), prompt, opts, written)
    said = f"Stopped after {plural(len(written), 'token')}."
    return finish_schema_on_gpu(model, choice, trace, opts, said)


def on_apply(
    page: Page,
    models: BackgroundModel,
    picked,
    trace: Trace | None,
    pattern,
    prompt,
    max_tokens,
    temperature,
    seed,
    chat,
    prob_limit,
    distances,
    drawing="auto",
    top_k=0,
    top_p=1.0,
    stop="eos",
    overshoot=False,
) -> Iterator[dict]:
    """Apply & run: the picked fix (``fixes.read_fix``) put into the inputs and run, then
    the runs before and after it side by side. The last run is "before" when it ran the
    inputs on the page (``fixes.same_run``, the decoding box's options included: ``top_k``
    to ``overshoot``, as ``on_run`` takes them); otherwise they are run first."""
    fix = read_fix(picked)
    if fix is None:
        yield {}
        return
    now = Inputs(pattern, prompt, max_tokens, temperature, seed, chat, prob_limit,
                 top_k, top_p, stop, overshoot)  # fmt: skip
    fixed = fix.applied(now)
    yield started(page)
    try:
        opts_now, opts_fixed = _options(now), _options(fixed)
    except ValueError as error:
        yield {page.error: error_html(error), page.status: str(error), **idle(page)}
        return
    before = trace if same_run(trace, pattern, prompt, opts_now) else None
    if before is None:
        yield {
            page.status: "Apply & run: first the run before the fix (the inputs as they are, "
            "not run yet), then the run with it…"
        }
        before = yield from traced(
            page, run_frames(models, pattern, prompt, opts_now, bool(distances), drawing)
        )
    after = None
    if before is not None:
        # the run before is let go with the old pattern: the Regex box's change (which
        # clears a run of another pattern) must not clear the run after, arriving meanwhile
        yield {page.regex: fixed.pattern, page.chat: fixed.chat, page.trace: None}
        frames = run_frames(models, fixed.pattern, prompt, opts_fixed, bool(distances), drawing)
        after = yield from traced(page, frames)
    if before is not None and after is not None:
        # the box shows with the outputs; the chart comes next, drawn in a visible box
        yield {page.compare_view: comparison_html(before, after)}
        yield {page.compare_chart: comparison_figure(before.steps, after.steps)}
    yield idle(page)


def _options(inputs: Inputs) -> GenerationOptions:
    return options(
        inputs.max_tokens, inputs.temperature, inputs.seed, inputs.chat, inputs.prob_limit,
        inputs.top_k, inputs.top_p, inputs.stop, inputs.overshoot,
    )  # fmt: skip


def traced(page: Page, frames: Iterator[PageFrame]) -> Generator[dict, None, Trace | None]:
    """A run's frames as updates (``yield from``); returns its trace, None if it failed."""
    trace = None
    for frame in frames:
        yield frame_updates(frame, page)
        trace = frame.trace or trace
    return trace


def on_dismiss():
    """The comparison closed: its outputs and chart emptied (so its box is hidden)."""
    return "", None


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


@dataclass
class StopMark:
    """One per browser session (a ``gr.State``): each run takes a number (``start``);
    Stop, or a new run, moves the number on, and a run that sees a number other than its
    own ends itself before its next frame (``on_run``, ``stoppable``)."""

    run: int = 0
    stopped_run: int = -1
    """The run that Stop ended (not one a new run replaced)."""

    def start(self) -> int:
        self.run += 1
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


def on_distances(
    models: BackgroundModel,
    pattern,
    distances,
    trace: Trace | None,
    i,
    drawing="auto",
    schema: SchemaChoice | None = None,
):
    """The distances checkbox or the drawing choice (compact / exact) redraws the DFA and
    keeps the run's lit path and step. Nothing on a grammar-path ``schema``: the panel
    draws the schema's structure, and there is no DFA to redraw."""
    if on_grammar_path(in_use(schema, pattern)):
        return gr.skip()
    view = pattern_view(
        pattern, models.vocabulary(), distances=distances, diagnosed=False, drawing=drawing
    )
    if trace is not None and trace.pattern == pattern and trace.steps:
        upto = min(int(i), len(trace.steps) - 1)
        return view.dfa_html(trace.steps, upto=upto, stepping=True)
    return view.dfa_html()


def on_finding(
    models: BackgroundModel, k, trace: Trace | None, found, log, pattern, distances, drawing="auto"
):
    """A finding chosen: its states marked in the DFA, its steps ringed on the chart."""
    view = pattern_view(pattern, models.vocabulary(), trace, distances=distances, drawing=drawing)
    chosen = found or view.findings
    k = int(k) if k is not None else -1
    if not 0 <= k < len(chosen):
        return gr.skip(), gr.skip(), gr.skip()
    finding = chosen[k]
    trace_steps = trace.steps if trace else ()
    figure = valid_mass_figure(trace_steps, log=log, marked=finding.steps) if trace else gr.skip()
    return (
        view.dfa_html(trace_steps, marked=finding.states, stepping=bool(trace_steps)),
        findings_html(chosen, selected=k, pattern=pattern),
        figure,
    )


def on_log(log, trace: Trace | None, i):
    """The log scale toggled (the chosen step's marker is the page's: static/app.js)."""
    return valid_mass_figure(trace.steps, log=log) if trace else gr.skip()


def on_example(name):
    return EXAMPLES[name] if name in EXAMPLES else (gr.skip(), gr.skip(), gr.skip())


def on_load(models: BackgroundModel, request: gr.Request):
    """Restore inputs from the URL (a permalink); every value is data, checked. A schema
    run's link also restores the JSON Schema part (schema, whitespace, findings) and opens
    it: the outputs after the timer are ``MainView.schema_outputs``, then the decoding box's
    (``top_k``, ``top_p``, ``stop``, ``overshoot``, its accordion; ``MainView.decoding``).

    Only what the link gives is set; everything else is skipped, so a visitor who starts
    typing before this event comes back keeps what they typed. (The page's first paint
    already holds the defaults and the default pattern's drawing and findings, see
    ``ui.main_view``; a box set here while someone types in it can make Gradio's page
    fire its change event for seconds, each value in turn.)"""
    q = dict(request.query_params) if request else {}
    given = partial(_given, q)
    pattern = q["regex"][:MAX_PATTERN_LENGTH] if "regex" in q else None
    max_tokens = given("max_tokens", int, 1, MAX_TOKENS_LIMIT)
    schema_part = (gr.skip(),) * 8  # no schema in the link: the part as it is
    if "schema" in q:  # a schema run's link: the schema's regex, not the regex given
        pattern, schema_part = _linked_schema_part(models, q, pattern, max_tokens)
    drawn = on_pattern(models, pattern) if pattern is not None else (gr.skip(),) * 3
    decoding = _linked_decoding(q)
    return (
        pattern if pattern is not None else gr.skip(),
        q["prompt"][:MAX_PROMPT] if "prompt" in q else gr.skip(),
        max_tokens,
        given("temperature", float, 0.0, 2.0),
        given("seed", int, 0, 2**31 - 1),
        q["chat"] != "0" if "chat" in q else gr.skip(),
        given("prob_limit", float, 0.0, 1.0),
        *drawn,
        models.status,
        # Stop polling at once when the model is ready: a late tick would overwrite the
        # status of a run started right after the page loaded.
        gr.Timer(active=not models.ready),
        *schema_part,
        *decoding,
    )


def _given(q: dict[str, str], key: str, cast, lo, hi):
    """The link's number ``q[key]`` read by ``cast``: out of range, clamped; missing or not
    a number (NaN too), skipped."""
    try:
        value = cast(q[key])
    except (KeyError, ValueError, OverflowError):
        return gr.skip()
    return min(max(value, lo), hi) if value == value else gr.skip()


def _linked_schema_part(
    models: BackgroundModel, q: dict[str, str], pattern: str | None, max_tokens
) -> tuple[str | None, tuple]:
    """A schema run's link: the pattern (the schema's regex where it has one, else
    ``pattern``) and the JSON Schema part's eight values (``MainView.schema_outputs``),
    the part opened."""
    budget = max_tokens if isinstance(max_tokens, int) else DEFAULT_MAX_TOKENS
    used = use_linked_schema(q["schema"], q.get("whitespace"), models.vocabulary(), budget)
    if used.choice is not None:
        pattern = used.choice.regex
    return pattern, (
        q["schema"][:MAX_LINKED_SCHEMA],
        used.choice.whitespace if used.choice else gr.skip(),
        used.choice,
        used.findings,
        used.findings_html,
        used.error,
        mode_html(used.choice, pattern or ""),
        gr.Accordion(open=True),
    )


def _linked_decoding(q: dict[str, str]) -> tuple:
    """The decoding box (``MainView.decoding``): what the link carries, the rest skipped,
    and the box opened when the link sets any of it (it shows why the run differs)."""
    decoding = (
        _given(q, "top_k", int, 0, MAX_TOP_K),
        _given(q, "top_p", float, 0.01, 1.0),
        q["stop"] if q.get("stop") in STOP_RULES else gr.skip(),
        q["overshoot"] != "0" if "overshoot" in q else gr.skip(),
    )
    linked = any(v != gr.skip() for v in decoding)
    return (*decoding, gr.Accordion(open=True) if linked else gr.skip())


def on_tick(models: BackgroundModel):
    return models.status, gr.Timer(active=not models.ready)


def _drawn(view, trace: Trace):
    return drawn_path(trace.steps, view.dfa) if view.dfa is not None else None


def downloads(trace: Trace) -> list[str]:
    """The DFA as DOT and SVG, the trace as JSON and CSV, written to a fresh folder
    in Gradio's cache folder, served from there until the server's ``--file-ttl`` has
    passed (``scratch``)."""
    folder = run_folder()
    files = {"trace.json": trace.to_json(indent=1), "trace.csv": trace.to_csv()}
    if trace.pattern:
        try:  # the DOT always; the SVG only for what the page would draw
            dfa = compile_regex(trace.pattern)
            files["dfa.dot"] = to_dot(dfa, title=trace.pattern)
            if dfa.num_states <= DRAW_LIMIT:
                files["dfa.svg"] = to_svg(dfa, title=trace.pattern)
        except (RegexError, RuntimeError):
            pass  # the trace is still worth downloading
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [str(folder / name) for name in files]
