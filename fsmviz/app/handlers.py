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

import inspect
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, fields, replace
from functools import partial
from typing import Any

import gradio as gr

from fsmviz.app.backend import (
    BUNDLED,
    checked_after,
    engine_checked,
    named_done,
    named_statuses,
    run_source,
    server_names,
    vocabulary_for,
)
from fsmviz.app.examples import default_example, examples
from fsmviz.app.live import (
    DRAW_LIMIT,
    PageFrame,
    done_status,
    finish,
    pattern_view,
)
from fsmviz.app.local_models import is_offered, offered_names, offered_written
from fsmviz.app.page import (  # what every tab shares (its tests read it here too)
    CHANGED,  # noqa: F401
    DRAFT_TOKENS,  # noqa: F401
    EMPTY_OUTPUT,  # noqa: F401
    Page,
    StopMark,
    checked_options,
    cleared,
    follow,
    idle,
    on_stop,  # noqa: F401
    options,  # noqa: F401
    run_outputs,  # noqa: F401
    started,
    stoppable,  # noqa: F401
)
from fsmviz.app.page import frame_updates as page_updates
from fsmviz.app.regex_run import live_run
from fsmviz.app.schema_run import (
    compiled_of,
    finish_schema,
    on_grammar_path,
    schema_frames,
)
from fsmviz.app.scratch import run_folder
from fsmviz.app.zerogpu import on_gpu
from fsmviz.automaton.syntax import MAX_PATTERN_LENGTH
from fsmviz.diagnose.text import plural
from fsmviz.drawing.export import trace_files, write_files
from fsmviz.errors import FsmvizError
from fsmviz.generation.batching import ForwardPassError
from fsmviz.generation.generate import MAX_TOKENS_LIMIT, GenerationOptions, full_match
from fsmviz.generation.models import BackgroundModel, ModelLoadError
from fsmviz.generation.trace import STOP_RULES, Step, Trace, drawn_path, stopped_trace
from fsmviz.grammar.replay import grammar_stopped_trace
from fsmviz.html.charts import comparison_figure, valid_mass_figure
from fsmviz.html.comparison import comparison_html
from fsmviz.html.findings import findings_html
from fsmviz.html.fixes import Inputs, read_fix, same_run
from fsmviz.html.schema import (
    MAX_LINKED_SCHEMA,
    SchemaChoice,
    grammar_panel,
    in_use,
    json_view_html,
    mode_html,
    use_linked_schema,
)
from fsmviz.html.text import error_html
from fsmviz.params import MAX_PROMPT_CHARS, MAX_TOP_K
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
DEFAULT_MAX_TOKENS = default_example().max_tokens  # 32: the default run in ~half the wait


@dataclass(frozen=True)
class RunInputs(Inputs):
    """Everything one run of the Generate tab reads from the page, read once, in one place
    (``reads``: Gradio's values in this order, ``ui.run_inputs``), and handed down whole:
    the run's inputs (``fixes.Inputs``: what Apply & run may change) and the page's settings
    around them.

    >>> run = RunInputs("[0-9]+", "A number:", 8, 0.0, 0, True, 0.0, top_k=3)
    >>> run.options().top_k, run.options().prob_limit, run.drawn
    (3, None, Drawn(pattern='[0-9]+', distances=False, drawing='auto', schema=None, backend=None))
    """

    distances: bool = False
    """Each state's fewest tokens to a match drawn (the drawing options' checkbox)."""
    drawing: str = "auto"
    """How the DFA is drawn (``live.DRAWINGS``)."""
    schema: SchemaChoice | None = None
    """The JSON Schema put in the Regex box (``schema_page``), if any."""
    backend: str | None = None
    """The model menu's choice: the bundled model, or a configured server by name."""

    def options(self) -> GenerationOptions:
        """The inputs as a checked record (``fsmviz.params``: a bad one is a
        ``ParameterError`` naming it); a prob limit of 0 is off, a blank top-k or top-p
        too."""
        return checked_options(
            max_tokens=self.max_tokens, temperature=self.temperature, seed=self.seed,
            chat=self.chat, prob_limit=self.prob_limit or None, top_k=self.top_k or 0,
            top_p=self.top_p or 1.0, stop=self.stop or "eos", overshoot=self.overshoot,
        )  # fmt: skip

    @property
    def drawn(self) -> Drawn:
        return Drawn(self.pattern, bool(self.distances), self.drawing, self.schema, self.backend)


@dataclass(frozen=True)
class Drawn:
    """What the drawing panel draws, as the page holds it: the Regex box's pattern, the
    distances checkbox, the drawing choice, the JSON Schema in use (a grammar-path
    schema's structure is drawn instead of a DFA), and the model menu's choice (whose
    vocabulary the doctor reads). Read in this order (``reads``)."""

    pattern: str
    distances: bool = False
    drawing: str = "auto"
    schema: SchemaChoice | None = None
    backend: str | None = None

    def view(self, vocab, trace: Trace | None = None, diagnosed: bool = True):
        """The pattern compiled, drawn and (``diagnosed``) examined (``live.pattern_view``)."""
        return pattern_view(self.pattern, vocab, trace, distances=bool(self.distances),
                            diagnosed=diagnosed, drawing=self.drawing)  # fmt: skip

    @property
    def on_grammar_path(self) -> bool:
        """Whether a grammar-path schema is in use: no DFA to draw."""
        return on_grammar_path(in_use(self.schema, self.pattern))


def reads(record: type, handler: Callable[..., Any], before: int = 0) -> Callable[..., Any]:
    """``handler`` as Gradio calls it, with the event's values in a row: the ``before``
    first as they come, the next ones (one per field of ``record``: ``RunInputs``,
    ``Drawn``) read into one ``record``, the rest (the Stop mark) as they come. The one
    place where the page's inputs become a typed value. A handler that streams stays a
    generator function (Gradio streams only from those).

    >>> event = reads(Drawn, lambda k, drawn: (k, drawn.pattern, drawn.drawing), before=1)
    >>> event(7, "a+", False, "exact", None)
    (7, 'a+', 'exact')
    """
    count = len(fields(record))

    def split(values: tuple) -> tuple:
        return (*values[:before], record(*values[before : before + count]),
                *values[before + count :])  # fmt: skip

    inner = handler.func if isinstance(handler, partial) else handler
    if inspect.isgeneratorfunction(inner):

        def streamed(*values):
            yield from handler(*split(values))

        return streamed

    def answered(*values):
        return handler(*split(values))

    return answered


def on_pattern(models: BackgroundModel, drawn: Drawn):
    """A new pattern, as ``drawn`` says (the drawing choice, each state's fewest tokens
    where the checkbox is ticked): its drawing, the doctor's findings (in the tokens of
    the model the menu chose, ``drawn.backend``), or why it cannot be used."""
    view = drawn.view(vocabulary_for(models, drawn.backend))
    return view.dfa_html(), findings_html(view.findings, pattern=drawn.pattern), view.error


def on_pattern_edit(
    page: Page,
    models: BackgroundModel,
    trace: Trace | None,
    drawn: Drawn,
    mark: StopMark | None = None,
    i: int | None = None,
) -> dict:
    """The Regex box edited: the new drawing, findings or error (``on_pattern``); the
    examples menu names the example loaded, if it is one; and a run of another pattern
    (its output, verdict, steps, chart, allowed sets, shadow, JSON view) is cleared, since
    none of it belongs to what the box now says. A run of this very pattern (Apply & run's
    run after the fix, there before this event is answered) keeps its lit drawing and its
    findings. Emptied for a grammar-path schema: the drawing panel says so and draws
    the schema's structure instead (``fsmviz.html.schema.grammar_panel``), no error.

    An edit can be answered after a run of the new pattern began (an example picked,
    Generate pressed at once: drawing a schema's pattern can take longer than its run on
    a loaded machine). That run (the session's ``mark``) owns the page: nothing is
    cleared or redrawn, or its output would be wiped when the edit's answer came last.

    The Regex box, the model menu and the drawing options are one event (``ui.wire_pattern``:
    one at a time per page, each sent with the page as it is then), so a drawing option
    can never come back after an edit with the pattern the edit replaced. The event does
    not say which of them fired it, so this says: the pattern and model the panel was
    last drawn for (``mark.drawn``) asked again is a drawing option, which redraws the DFA
    alone and keeps the run's lit step ``i`` (``on_distances``)."""
    if mark is not None and mark.drawn == (drawn.pattern, drawn.backend):
        return {page.dfa: on_distances(models, trace, i, drawn)}
    if mark is not None:
        mark.drawn = (drawn.pattern, drawn.backend)
    pattern = drawn.pattern
    if run_began(mark, trace, pattern):
        return left_to_the_run(page, pattern)
    if drawn.on_grammar_path:
        chosen = in_use(drawn.schema, pattern)
        dfa, diagnosis, error = grammar_panel(chosen), "", ""  # type: ignore[arg-type]
    else:
        dfa, diagnosis, error = on_pattern(models, drawn)
    if run_began(mark, trace, pattern):  # while this was drawn
        return left_to_the_run(page, pattern)
    updates = {page.dfa: dfa, page.diagnosis: diagnosis, page.error: error}
    if page.example is not None:
        updates[page.example] = example_of(pattern)
    if trace is not None and trace.pattern != pattern:
        updates.update(cleared(page))
    elif trace is not None and trace.steps and not drawn.on_grammar_path:
        # a run of this pattern (Apply & run's after): lit where it ended
        updates[page.dfa] = on_distances(models, trace, None, drawn)
        updates.pop(page.diagnosis)  # the run's findings stay
    return updates


def run_began(mark: StopMark | None, trace: Trace | None, pattern: str) -> bool:
    """Whether a run of ``pattern`` began after the edit to it whose answer this is (the
    last run Generate started is of it, and the trace the edit was asked with is not)."""
    return (
        mark is not None and mark.pattern == pattern and (trace is None or trace.pattern != pattern)
    )


def left_to_the_run(page: Page, pattern: str) -> dict:
    """An edit's answer once a run of its pattern began: the examples menu only."""
    return {page.example: example_of(pattern)} if page.example is not None else {}


def pattern_edit_outputs(page: Page) -> list:
    """The components ``on_pattern_edit`` may write."""
    return [page.dfa, page.diagnosis, page.error, *([page.example] if page.example else []),
            *cleared(page)]  # fmt: skip


def example_of(pattern: str) -> str | None:
    """The examples menu's label of the example whose pattern this is, else None."""
    return next((name for name, (p, *_rest) in EXAMPLES.items() if p == pattern), None)


def run_frames(
    models: BackgroundModel, run: RunInputs, opts: GenerationOptions
) -> Iterator[PageFrame]:
    """The frames of one run; a failure is a frame with a message, never a traceback.
    ``run.schema``: a grammar-path JSON Schema in use (``schema_run``), run instead."""
    try:
        checked_text("prompt", run.prompt, MAX_PROMPT)
        model = models.get(timeout=600)
        view = None if on_grammar_path(run.schema) else run.drawn.view(model.vocab)
    except (ValueError, ModelLoadError) as error:
        yield PageFrame(str(error), error=error_html(error))
        return
    try:
        if view is None:
            yield from schema_frames_on_gpu(model, run.schema, run.prompt, opts)
        else:
            yield from live_run_on_gpu(model, view, run.prompt, opts)
    except Exception as error:  # e.g. out of memory: a message, never a traceback
        message = (
            f"The generation stopped: {error}"  # says what happened and what to do
            if isinstance(error, (ForwardPassError, FsmvizError))  # e.g. a server's refusal
            else f"The generation failed: {type(error).__name__}: {error}"
        )
        yield PageFrame(message, error=error_html(RuntimeError(message)))


def frame_updates(frame: PageFrame, page: Page, schema: SchemaChoice | None = None) -> dict:
    """A frame as Gradio updates (``page.frame_updates``: its fields that are set, the
    trace and the Step slider once the run has ended), with the Generate tab's own: the
    downloads once the run has ended, and with the ``schema`` of a schema run, the output
    as JSON ("" for a regex run)."""
    updates = page_updates(frame, page)
    # a regex run's JSON view is "" all along (``started`` cleared it): said once, at the end
    json_changes = schema is not None or frame.trace is not None
    if page.json is not None and frame.text is not None and json_changes:
        steps = frame.trace.steps if frame.trace is not None else ()
        updates[page.json] = json_view_html(
            schema, frame.text, done=frame.trace is not None, steps=steps
        )
    if frame.trace is not None:
        updates[page.downloads] = downloads(frame.trace)
    return updates


def on_run(
    page: Page, models: BackgroundModel, run: RunInputs, mark: StopMark | None = None
) -> Iterator[dict]:
    """Generate: Stop shown while the frames stream; Generate stays available (a new run
    ends this one: ``StopMark``). ``run``: the page's inputs, read once (``RunInputs``:
    the model menu's choice, the JSON Schema put in the Regex box, if any, the decoding
    box...). Stopped during the constrained run, the steps written so far become the run's
    trace (stepping, allowed sets and downloads work on them); stopped during the shadow
    run, the shadow run is skipped."""
    mark = mark if mark is not None else StopMark()
    me = mark.start(run.pattern)
    yield started(page)
    try:
        opts = run.options()
    except ValueError as error:
        yield {page.error: error_html(error), page.status: str(error), **idle(page)}
        return
    run = replace(run, schema=in_use(run.schema, run.pattern))  # the schema still in use
    models = run_source(models, run.backend)  # the bundled model, or a server's (its checks)
    if not getattr(models, "ready", True):  # a model the menu offers, picked: it loads now
        yield {page.status: models.status}
    updates = partial(frame_updates, page=page, schema=run.schema)
    updates = engine_checked(updates, page.engine_check, models)
    updates = named_done(updates, page.status, run.backend)  # "Done on llama: ..."
    frames = run_frames(models, run, opts)
    said = named_statuses(done_status, run.backend)  # a skipped shadow run's status too
    written = yield from follow(page, mark, me, frames, updates, said)
    if written is None:
        return
    said = f"Stopped after {plural(len(written), 'token')}."
    if written:
        yield {page.status: f"{said[:-1]}: keeping what was written…"}
        if run.schema is not None and on_grammar_path(run.schema):
            frame = stopped_schema_frame(models, run, opts, written)
        else:
            frame = stopped_frame(models, run, opts, written)
        yield frame_updates(frame, page, run.schema)
    yield {**idle(page), page.status: said if written else "Stopped."}


def stopped_frame(
    models: BackgroundModel, run: RunInputs, opts: GenerationOptions, written: list[Step]
) -> PageFrame:
    """The last frame of a run stopped half-way: its steps as a trace (with a note that
    the visitor stopped it), drawn for stepping, with every step's allowed set."""
    model = models.get(timeout=600)
    view = run.drawn.view(model.vocab)
    pattern, dfa = run.pattern, view.dfa

    def judge(text: str) -> bool:  # regex.fullmatch; the DFA's verdict where that times out
        return full_match(pattern, text, dfa is not None and dfa.accepts(text))

    trace = stopped_trace(written, run.prompt, opts, pattern, judge)
    return finish_on_gpu(model, view, trace, f"Stopped after {plural(len(written), 'token')}.")


def stopped_schema_frame(
    models: BackgroundModel, run: RunInputs, opts: GenerationOptions, written: list[Step]
) -> PageFrame:
    """The last frame of a grammar-path schema run (``run.schema``) stopped half-way: its
    steps as a trace (``grammar.replay.grammar_stopped_trace``, judged by the schema's
    grammar), drawn for stepping, with every step's allowed set
    (``schema_run.finish_schema``)."""
    model = models.get(timeout=600)
    trace = grammar_stopped_trace(compiled_of(run.schema), run.prompt, opts, written)
    said = f"Stopped after {plural(len(written), 'token')}."
    return finish_schema_on_gpu(model, run.schema, trace, opts, said)


def on_apply(
    page: Page, models: BackgroundModel, picked, trace: Trace | None, run: RunInputs
) -> Iterator[dict]:
    """Apply & run: the picked fix (``fixes.read_fix``) put into the inputs and run, then
    the runs before and after it side by side. The last run is "before" when it ran the
    inputs on the page (``fixes.same_run``, the decoding box's options included); otherwise
    they are run first. The Regex box's pattern is run (a schema's regex is in it); the
    model is the menu's choice (``run.backend``; the engine check shows the run after)."""
    models = run_source(models, run.backend)
    fix = read_fix(picked)
    if fix is None:
        yield {}
        return
    now = replace(run, schema=None)
    fixed = fix.applied(now)
    yield started(page)
    try:
        opts_now, opts_fixed = now.options(), fixed.options()
    except ValueError as error:
        yield {page.error: error_html(error), page.status: str(error), **idle(page)}
        return
    same = same_run(trace, now.pattern, now.prompt, opts_now)
    elsewhere = same and not written_by(trace, run.backend)  # the model menu changed since
    before = trace if same and not elsewhere else None
    if before is None:
        why = "the inputs as they are, not run yet"
        if elsewhere:
            why = f"the last run was on another model than {run.backend or BUNDLED}"
        yield {
            page.status: f"Apply & run: first the run before the fix ({why}), then the run with it…"
        }
        before = yield from traced(page, run_frames(models, now, opts_now))
    after = None
    if before is not None:
        # the run before is let go with the old pattern: the Regex box's change (which
        # clears a run of another pattern) must not clear the run after, arriving meanwhile
        yield {page.regex: fixed.pattern, page.chat: fixed.chat, page.trace: None}
        after = yield from traced(page, run_frames(models, fixed, opts_fixed))
        yield checked_after(page.engine_check, models, after)  # a server run's engine check
    if before is not None and after is not None:
        # the box shows with the outputs; the chart comes next, drawn in a visible box
        yield {page.compare_view: comparison_html(before, after)}
        yield {page.compare_chart: comparison_figure(before.steps, after.steps)}
    yield idle(page)


def written_by(trace: Trace, choice: str | None) -> bool:
    """Whether the model menu's ``choice`` wrote ``trace`` (Apply & run's "before"): a
    configured server's run carries its name (``Trace.model``), an offered local model's
    its source's (``local_models.offered_written``); a run of the app's own model names
    neither.

    >>> from fsmviz.app.backend import configure_servers
    >>> _ = configure_servers({"vllm": "http://127.0.0.1:8000"})
    >>> ran = Trace("4", (), "accepted", True, model="vllm")
    >>> written_by(ran, "vllm"), written_by(ran, None), written_by(ran, BUNDLED)
    (True, False, False)
    >>> _ = configure_servers({})
    """
    servers = server_names()
    if choice in servers:
        return trace.model == choice
    if is_offered(choice):  # an offered local model's run carries its source's name
        return trace.model == offered_written(choice)
    return trace.model not in servers and trace.model not in map(offered_written, offered_names())


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


def on_distances(models: BackgroundModel, trace: Trace | None, i: int | None, drawn: Drawn):
    """The distances checkbox or the drawing choice (compact / exact) redraws the DFA and
    keeps the run's lit path and step ``i`` (None, the Step slider as it is reset: the
    run's last). Nothing on a grammar-path schema: the panel draws the schema's structure,
    and there is no DFA to redraw."""
    if drawn.on_grammar_path:
        return gr.skip()
    view = drawn.view(vocabulary_for(models, drawn.backend), diagnosed=False)
    if trace is not None and trace.pattern == drawn.pattern and trace.steps:
        last = len(trace.steps) - 1
        upto = last if i is None else min(max(int(i), 0), last)
        return view.dfa_html(trace.steps, upto=upto, stepping=True)
    return view.dfa_html()


def on_finding(models: BackgroundModel, k, trace: Trace | None, found, log, drawn: Drawn):
    """A finding chosen: its states marked in the DFA, its steps ringed on the chart."""
    view = drawn.view(vocabulary_for(models, drawn.backend), trace)
    chosen = found or view.findings
    k = int(k) if k is not None else -1
    if not 0 <= k < len(chosen):
        return gr.skip(), gr.skip(), gr.skip()
    finding = chosen[k]
    trace_steps = trace.steps if trace else ()
    figure = valid_mass_figure(trace_steps, log=log, marked=finding.steps) if trace else gr.skip()
    return (
        view.dfa_html(trace_steps, marked=finding.states, stepping=bool(trace_steps)),
        findings_html(chosen, selected=k, pattern=drawn.pattern),
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
    linked = q.get("backend")  # the link's model: its findings (an unknown name: ours)
    drawn = (
        on_pattern(models, Drawn(pattern, backend=linked))
        if pattern is not None
        else (gr.skip(),) * 3
    )
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
    vocab = vocabulary_for(models, q.get("backend"))  # the link's model (an unknown one: ours)
    used = use_linked_schema(q["schema"], q.get("whitespace"), vocab, budget)
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
    """The run's files (``fsmviz.drawing.export.trace_files``: the trace as JSON and CSV,
    the DFA as DOT and SVG), written to a fresh folder in Gradio's cache folder, served
    from there until the server's ``--file-ttl`` has passed (``scratch``)."""
    files = trace_files(trace, DRAW_LIMIT)
    return [str(path) for path in write_files(files, run_folder())]
