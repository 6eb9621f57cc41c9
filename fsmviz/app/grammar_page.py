"""The page's grammar mode: a context-free grammar typed or chosen, drawn as automata that
call each other, and a real model run under it with the parser's place lit at each step.

The tab holds the grammar box (``#grammar``), one button per example (each fills the
boxes and runs at once), the rules drawing (``#rules``: one box per rule, the positions
on the parser's stacks carrying the CSS class ``current``), the stacks in plain words,
the terminal being read drawn as its own DFA with its state lit, the output, and the
grammar doctor's findings. A step slider replays the run: the place after any step.

This module is the tab itself: ``build_grammar_tab`` (a layout calling small builders, then
the wiring) and the ``on_*`` handlers (a few lines each; a run's inputs read once into
``GrammarRunInputs``). What it shows is ``fsmviz.html.grammar``'s (pure functions returning HTML,
tested without a browser); a run's frames are ``grammar_live``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from html import escape
from pathlib import Path
from typing import Any

import gradio as gr

from fsmviz.app.backend import (
    backend_menu,
    named_done,
    named_statuses,
    run_source,
    server_names,
    vocabulary_for,
)
from fsmviz.app.examples import GrammarExample, grammar_examples
from fsmviz.app.grammar_live import finish_grammar, grammar_frames, grammar_status
from fsmviz.app.handlers import reads
from fsmviz.app.live import run_event
from fsmviz.app.page import (
    Page,
    StopMark,
    cleared,
    follow,
    frame_updates,
    idle,
    options,
    started,
)
from fsmviz.app.page import on_stop as page_stop
from fsmviz.app.page import run_outputs as page_outputs
from fsmviz.app.scratch import run_folder
from fsmviz.diagnose.finding import Finding
from fsmviz.diagnose.text import plural
from fsmviz.drawing.export import grammar_files, write_files
from fsmviz.errors import FsmvizError
from fsmviz.generation.generate import MAX_TOKENS_LIMIT, GenerationOptions
from fsmviz.grammar.replay import grammar_stopped_trace
from fsmviz.html.grammar import (
    FORMATS,
    LEARN_DEPTHS,
    MAX_GRAMMAR,
    GrammarView,
    grammar_findings,
    grammar_findings_html,
    grammar_view,
    learn_html,
    masks_html,
    place_html,
    rules_html,
)
from fsmviz.html.steps import STEP_BUTTONS
from fsmviz.html.text import error_html
from fsmviz.params import MAX_PROMPT_CHARS
from fsmviz.params import text as checked_text

__all__ = [
    "DOCTOR_WAITS",
    "GrammarEdit",
    "GrammarRunInputs",
    "GrammarTab",
    "build_grammar_tab",
    "on_compare",
    "on_example",
    "on_grammar",
    "on_grammar_edit",
    "on_load",
    "on_run",
    "on_stop",
]

# --- the tab -------------------------------------------------------------------------------

GRAMMAR_JS = (Path(__file__).resolve().parents[2] / "static" / "grammar.js").read_text(
    encoding="utf-8"
)
"""The tab's behaviour in the browser (static/grammar.js): a click on a step's row, its
token or its point on the chart chooses that step; the address follows the tab's inputs
and chosen step, and opening such a link restores them and the run."""
PRIVATE = {"api_visibility": "private"}


@dataclass(frozen=True)
class GrammarTab:
    """The tab's components: ``page`` those a run writes as on the regex page
    (``handlers.Page``: its ``dfa`` is the rules drawing), and the tab's own."""

    page: Any
    place: Any
    terminal: Any


@dataclass(frozen=True)
class _Settings:
    """The left column's inputs: what a run reads."""

    box: Any
    fmt: Any
    prompt: Any
    max_tokens: Any
    temperature: Any
    seed: Any
    chat: Any
    backend: Any
    """The model menu (``fsmviz.app.backend``: the bundled model or a configured server)."""

    def run_inputs(self, mark: Any) -> list:
        """The inputs a run reads, in ``GrammarRunInputs``' order, then the Stop mark."""
        return [self.box, self.fmt, self.prompt, self.max_tokens, self.temperature, self.seed,
                self.chat, self.backend, mark]  # fmt: skip


@dataclass(frozen=True)
class GrammarRunInputs:
    """Everything one run of the Grammar tab reads from the page, read once
    (``handlers.reads``: Gradio's values in ``_Settings.run_inputs``' order) and handed
    down whole, as the Generate tab's ``handlers.RunInputs``.

    >>> run = GrammarRunInputs('root ::= "a"', "auto", "A:", 4, 0.0, 0, True)
    >>> run.options().max_tokens, run.backend
    (4, None)
    """

    text: str
    fmt: str
    prompt: str
    max_tokens: int
    temperature: float
    seed: int
    chat: bool
    backend: str | None = None
    """The model menu's choice: the bundled model, or a configured server by name."""

    def options(self) -> GenerationOptions:
        """The sampling options, checked (a bad one is an error naming it)."""
        return options(self.max_tokens, self.temperature, self.seed, self.chat, 0)


@dataclass(frozen=True)
class _Ran:
    """A run under way, as a stop during it needs it: the model, the grammar's view, the
    prompt, the options and the doctor's findings."""

    model: Any
    view: GrammarView
    prompt: str
    options: GenerationOptions
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class _Learn:
    """The Learn accordion's parts: the depth slider and its view, the masks comparison."""

    depth: Any
    view: Any
    prefix: Any
    compare: Any
    masks: Any


def build_grammar_tab(models: Any, demo: Any = None, runs_at_once: int = 16) -> None:
    """Lay out and wire the grammar tab inside the current ``gr.Tab``; with ``demo`` (the
    page's ``gr.Blocks``), a link's grammar, prompt, options, run and step are restored
    when the page loads (``on_load``, static/grammar.js).

    A layout: each builder below adds its components in page order and returns them;
    the last ones wire the events."""
    first = next(iter(grammar_examples().values()))
    start = grammar_view(first.grammar, first.format)
    buttons = _example_buttons()
    # as on the Generate tab: the whole run (chart, steps) under the inputs on the left,
    # the chosen step's views on the right, which stay in view on a wide screen while the
    # left column scrolls (static/app.css): the lit rules beside the steps
    with gr.Row(equal_height=False, elem_id="grammar-top"):
        with gr.Column(scale=2, min_width=300, elem_id="grammar-controls"):
            settings = _settings(first)
            run, stop = _actions()
            error, status, output, shadow, doctor = _results(start)
            chart, steps, downloads = _run_record()
        with gr.Column(scale=3, min_width=320, elem_id="grammar-drawing"):
            step = _stepper()
            place, rules, terminal, allowed = _run_views(start)
    learn = _learn()
    state = {"time_to_live": 3600}
    page = Page(
        rules, output, shadow, steps, chart, doctor, error, status, gr.State(None, **state),
        gr.State((), **state), step, downloads, run, stop, allowed,
    )  # fmt: skip
    tab = GrammarTab(page, place, terminal)
    mark = gr.State(StopMark())
    _wire_grammar(models, settings, learn, tab)
    _wire_runs(models, settings, tab, mark, buttons, runs_at_once)
    learn.compare.click(
        partial(on_compare, models),
        [settings.box, settings.fmt, learn.prefix, settings.backend],  # the menu's model
        learn.masks,
        **PRIVATE,
    )
    if demo is not None:
        _restore_on_load(demo, models, settings)


def _example_buttons() -> list:
    """The tab's lead paragraph and one button per example: ``(button, example name)``."""
    gr.HTML(
        "<p class='lead'>A context-free grammar (llama.cpp's GBNF or llguidance's Lark) "
        "drawn as small automata that <em>call</em> each other: a dashed edge reads a whole "
        "rule, then comes back. While the model writes, the parser's place, a stack of "
        "positions, is lit across the boxes.</p>",
        elem_id="grammar-intro",
    )
    with gr.Row(elem_id="grammar-examples"):
        return [
            (gr.Button(name, size="sm", elem_classes="grammar-example"), name)
            for name in grammar_examples()
        ]


def _settings(first: GrammarExample) -> _Settings:
    """The grammar box, its format, the prompt and the sampling options, filled from the
    first example."""
    backend = backend_menu(server_names(), elem_id="grammar-backend")
    box = gr.Textbox(first.grammar, label="Grammar", elem_id="grammar", lines=10, max_lines=24)
    fmt = gr.Radio(list(FORMATS), value="auto", label="Format", elem_id="grammar-format")
    prompt = gr.Textbox(first.prompt, label="Prompt", elem_id="grammar-prompt", lines=2)
    with gr.Row():
        max_tokens = gr.Slider(
            1, 256, value=first.max_tokens, step=1, label="Max tokens",
            elem_id="grammar-max-tokens",
        )  # fmt: skip
        temperature = gr.Slider(
            0.0, 2.0, value=0.0, step=0.05, label="Temperature (0 = greedy)",
            elem_id="grammar-temperature",
        )  # fmt: skip
    with gr.Row():
        seed = gr.Number(0, label="Seed", precision=0, minimum=0, elem_id="grammar-seed")
        chat = gr.Checkbox(True, label="Chat template", elem_id="grammar-chat")
    return _Settings(box, fmt, prompt, max_tokens, temperature, seed, chat, backend)


def _actions() -> tuple[Any, Any]:
    """Generate, Stop (shown while a run streams) and the copy-link button: ``(run, stop)``."""
    with gr.Row(elem_id="grammar-actions"):
        run = gr.Button("Generate", variant="primary", elem_id="grammar-run")
        stop = gr.Button("Stop", variant="stop", elem_id="grammar-stop", visible=False)
        gr.HTML(
            '<button type="button" id="grammar-copy-link" title="copy a link to this '
            'grammar, prompt, settings and step">Copy link</button>',
            elem_id="grammar-share",
        )
    return run, stop


def _results(start: GrammarView) -> tuple[Any, ...]:
    """What a run writes under the inputs: ``(error, status, output, shadow, doctor)``; the
    doctor starts with the first example's findings."""
    error = gr.HTML(start.error, elem_id="grammar-error")
    status = gr.HTML("", elem_id="grammar-status")
    gr.HTML("<h3>Constrained output</h3>", elem_id="grammar-output-head")
    output = gr.HTML(
        '<p class="empty">Press Generate: the output appears here.</p>',
        elem_id="grammar-output",
    )
    gr.HTML("<h3>What the model wanted (unconstrained, same prompt and seed)</h3>")
    shadow = gr.HTML(
        '<p class="empty">After the run, the model writes freely here.</p>',
        elem_id="grammar-shadow",
    )
    gr.HTML("<h3>Grammar doctor</h3>")
    doctor = gr.HTML(grammar_findings_html(grammar_findings(start, None)), elem_id="grammar-doctor")
    return error, status, output, shadow, doctor


STEP_CARD = (
    '<div class="step-card" aria-live="polite"><p class="empty">After a run, choose a step '
    "(Prev, Next, a row, a token, a point): its token and the model's top candidates show "
    "here, the parser's place lights in the rules.</p></div>"
)
"""The chosen step's card (filled by static/app.js's ``renderCard`` from the step's row)."""


def _stepper() -> Any:
    """Prev, Play and Next (the Generate tab's buttons: the ← → keys too), the chosen
    step's card and the Step slider; fixed until a run. Stepping is the browser's
    (static/grammar.js paints what the run's last frame brought): no server round trip."""
    with gr.Column(elem_id="grammar-stepper"):
        gr.HTML(STEP_BUTTONS + STEP_CARD, elem_id="grammar-step-buttons", padding=False)
        step = gr.Slider(
            0, 1, value=0, step=1, label="Step", elem_id="grammar-step", interactive=False
        )
    return step


def _run_views(start: GrammarView) -> tuple[Any, Any, Any, Any]:
    """The right column's views of one step: ``(place, rules, terminal, allowed)``."""
    place = gr.HTML(place_html(None), elem_id="grammar-place")
    rules = gr.HTML(rules_html(start), elem_id="rules")
    terminal = gr.HTML("", elem_id="grammar-terminal")
    allowed = gr.HTML(
        '<p class="empty">After a run, every token each step allowed, and the '
        "model's favourites the grammar blocked.</p>",
        elem_id="grammar-allowed",
    )
    return place, rules, terminal, allowed


def _run_record() -> tuple[Any, Any, Any]:
    """Under the inputs and the output, the whole run: ``(chart, steps, downloads)``."""
    gr.HTML("<h3>Valid mass per step</h3>")
    chart = gr.Plot(label="Valid mass per step", show_label=False, elem_id="grammar-chart")
    gr.HTML("<h3>Steps</h3>")
    steps = gr.HTML('<p class="empty">Run a generation to see each step.</p>',
                    elem_id="grammar-steps")  # fmt: skip
    with gr.Accordion("Downloads: the trace as JSON and CSV, the grammar, its rules drawing "
                      "as SVG", open=False):  # fmt: skip
        downloads = gr.File(file_count="multiple", elem_id="grammar-downloads", interactive=False)
    return chart, steps, downloads


def _learn() -> _Learn:
    """The Learn accordion: regex to grammar by depth, and ParserLLM's mask against ours."""
    with gr.Accordion("Learn: from regex to grammar", open=False, elem_id="grammar-learn"):
        depth = gr.Slider(1, LEARN_DEPTHS, value=3, step=1, label="Depth k",
                          elem_id="grammar-learn-depth")  # fmt: skip
        view = gr.HTML(learn_html(3), elem_id="grammar-learn-view")
        gr.HTML(
            "<h4>ParserLLM's method against the exact mask</h4><p>Seed 002's ParserLLM asks "
            "the parser which terminals may come next and masks with their regex: a token "
            "that crosses from one terminal into the next is lost. Type a text the grammar "
            "above may begin with.</p>"
        )
        with gr.Row():
            prefix = gr.Textbox('{"title', label="Text so far", elem_id="grammar-learn-prefix")
            compare = gr.Button("Compare the masks", elem_id="grammar-learn-compare")
        masks = gr.HTML("", elem_id="grammar-learn-masks")
    return _Learn(depth, view, prefix, compare, masks)


def _wire_grammar(models: Any, settings: _Settings, learn: _Learn, tab: GrammarTab) -> None:
    """The grammar box, its format and the model menu (the doctor reads its tokens) redraw
    the rules and the doctor; Learn's depth redraws Learn's view.

    The redraw is one event, ``always_last``: one at a time per page, and an edit made
    while one is under way is drawn once it is done, from the boxes as they are then. As
    events of their own, a format clicked while an example was on its way (sent with the
    grammar the example replaced) could come back after the example's grammar was drawn,
    and draw the old one under it."""
    page = tab.page
    learn.depth.change(learn_html, learn.depth, learn.view, trigger_mode="always_last", **PRIVATE)
    drawn = grammar_edit_outputs(tab)  # the drawing, the doctor, and a stale run cleared
    typed = [settings.box, settings.fmt, settings.max_tokens, page.trace, settings.backend]
    edited = reads(GrammarEdit, partial(on_grammar_edit, tab, models))
    gr.on([settings.box.change, settings.fmt.input, settings.backend.change], edited, typed,
          drawn, trigger_mode="always_last", **PRIVATE)  # fmt: skip


def _wire_runs(
    models: Any, settings: _Settings, tab: GrammarTab, mark: Any, buttons: list, at_once: int
) -> None:
    """Generate and each example button start a run (an example fills the boxes first);
    Stop marks the run to end. At most ``at_once`` runs share the model."""
    outputs = run_outputs(tab)
    inputs = settings.run_inputs(mark)
    running = {**run_event(tab.page.status, at_once), **PRIVATE}
    run = reads(GrammarRunInputs, partial(on_run, tab, models))
    tab.page.run.click(run, inputs, outputs, trigger_mode="multiple", **running)
    filled = [settings.box, settings.fmt, settings.prompt, settings.max_tokens]
    for button, name in buttons:
        button.click(partial(on_example, name), None, filled, **PRIVATE).then(
            run, inputs, outputs, **running
        )
    stopped = [tab.page.stop, tab.page.status]  # the status says "Stopped" in Stop's answer
    tab.page.stop.click(partial(on_stop, tab), mark, stopped, queue=False, **PRIVATE)


def _restore_on_load(demo: Any, models: Any, settings: _Settings) -> None:
    """On page load, a link's grammar, prompt and options fill the boxes (``on_load``);
    static/grammar.js then restores the run and the step."""

    def load(request):  # Gradio hands the request in by this annotation
        return on_load(models, request)

    load.__annotations__["request"] = gr.Request
    # the seven boxes on_load fills (not run_inputs: the Stop mark and the model menu)
    filled = [settings.box, settings.fmt, settings.prompt, settings.max_tokens,
              settings.temperature, settings.seed, settings.chat]  # fmt: skip
    demo.load(load, None, filled, js=GRAMMAR_JS, **PRIVATE)


def run_outputs(tab: GrammarTab) -> list:
    """What a grammar run writes: the regex page's run outputs and the tab's own."""
    return [*page_outputs(tab.page), tab.place, tab.terminal]


def on_example(name: str):
    """An example button: its grammar, format, prompt and max tokens."""
    item = grammar_examples()[name]
    return item.grammar, item.format, item.prompt, item.max_tokens


def on_grammar(models: Any, text: str, fmt: str, max_tokens, backend: str | None = None):
    """The grammar box changed: drawing, findings (in the tokens of the model the menu
    chose, ``backend``), error. A grammar that does not compile has no findings to show:
    the doctor says it waits (it said "the grammar looks healthy" under a broken grammar)."""
    view = grammar_view(text, fmt)
    if view.grammar is None:
        return rules_html(view), DOCTOR_WAITS, view.error
    found = grammar_findings(view, vocabulary_for(models, backend), int(max_tokens))
    return rules_html(view), grammar_findings_html(found), view.error


DOCTOR_WAITS = (
    '<p class="grammar-findings-wait">The doctor reads the grammar once it compiles: '
    "the box under Generate says what is wrong.</p>"
)


@dataclass(frozen=True)
class GrammarEdit:
    """What an edit of the Grammar tab reads (``handlers.reads``, in ``_wire_drawing``'s
    order): the box, its format, the run's budget (the doctor's truncation check), the last
    run's trace (to tell whether it is now stale) and the model menu's choice (the doctor
    reads that model's tokens).

    >>> GrammarEdit('root ::= "a"', "auto", 16, None).backend is None
    True
    """

    text: str
    fmt: str
    max_tokens: Any
    trace: Any
    backend: str | None = None


def on_grammar_edit(tab: GrammarTab, models: Any, edit: GrammarEdit):
    """The grammar box or its format changed: the drawing, the doctor and the error
    (``on_grammar``); and a run of another grammar (its output, steps, verdict, place,
    slider, allowed sets, downloads) is cleared, since none of it belongs to what the box
    now says (issue 47, point 2: they stayed, under a broken grammar too)."""
    page = tab.page
    rules, doctor, error = on_grammar(models, edit.text, edit.fmt, edit.max_tokens, edit.backend)
    updates = {page.dfa: rules, page.diagnosis: doctor, page.error: error}
    if edit.trace is not None and edit.trace.pattern != edit.text:
        updates.update(cleared(page))
        updates.update({tab.place: place_html(None), tab.terminal: ""})
    return updates


def grammar_edit_outputs(tab: GrammarTab) -> list:
    """The components ``on_grammar_edit`` may write."""
    page = tab.page
    return [page.dfa, page.diagnosis, page.error, *cleared(page), tab.place, tab.terminal]


def updates(frame: Any, tab: GrammarTab, view: GrammarView) -> dict:
    """A ``grammar_live.GrammarFrame`` as Gradio updates: the regex page's
    (``handlers.frame_updates``) with the place and the terminal; once the constrained run
    has ended, the trace, the Step slider and the downloads."""
    page = tab.page
    out = frame_updates(replace(frame.frame, trace=None), page)
    if frame.place is not None:
        out[tab.place] = frame.place
    if frame.terminal is not None:
        out[tab.terminal] = frame.terminal
    trace = frame.frame.trace
    if trace is not None:
        last = max(len(trace.steps) - 1, 0)
        out[page.trace] = trace
        out[page.findings] = frame.frame.findings
        # a slider needs minimum < maximum: a one-step trace leaves it fixed at 0
        out[page.step] = gr.update(maximum=max(last, 1), value=last, interactive=last > 0)
        out[page.downloads] = downloads(trace, view)
    return out


def downloads(trace: Any, view: GrammarView) -> list[str]:
    """The run's files (``fsmviz.drawing.export.grammar_files``: the trace, the grammar as
    typed, its rules drawing) in a fresh folder served for a while (``scratch``)."""
    format = getattr(view.grammar, "format", "")
    files = grammar_files(trace, view.text, format, view.svg)
    return [str(path) for path in write_files(files, run_folder())]


def on_run(tab: GrammarTab, models: Any, run: GrammarRunInputs, mark: StopMark):
    """Generate under the grammar: as the regex page's Generate (``handlers.on_run``),
    Stop shown while it streams and Generate always available (a new run ends this one:
    ``handlers.StopMark``). Stopped during the constrained run, the steps written so far
    become the run's trace (stepping, allowed sets, downloads work on them); stopped
    during the shadow run, the shadow run is skipped. ``run.backend``: the bundled model or
    a configured server by name (``fsmviz.app.backend.run_source``)."""
    models = run_source(models, run.backend)
    page = tab.page
    me = mark.start()
    yield {**started(page), page.status: "Starting: the grammar's parser, then the model "
           "reads the prompt…"}  # fmt: skip
    view = grammar_view(run.text, run.fmt)
    if view.network is None:
        said = "Fix the grammar first: the box under Generate says what is wrong."
        yield {page.error: view.error, page.status: said, **idle(page)}
        return
    try:
        opts = run.options()
        checked_text("prompt", run.prompt, MAX_PROMPT_CHARS)
        model = models.get(timeout=600)
    except (ValueError, FsmvizError) as error:
        yield {page.error: error_html(error), page.status: escape(str(error)), **idle(page)}
        return
    found = grammar_findings(view, model.vocab, opts.max_tokens)
    frames = grammar_frames(model, view, run.prompt, opts, found)
    try:
        written = yield from follow(
            page, mark, me, frames,
            named_done(partial(updates, tab=tab, view=view), page.status, run.backend),
            named_statuses(grammar_status, run.backend),  # "Done on llama: ..."
        )  # fmt: skip
    except Exception as error:  # e.g. out of memory: a message, never a traceback
        said = (  # fsmviz's own errors (a server's refusal) say what happened themselves
            f"The generation stopped: {error}"
            if isinstance(error, FsmvizError)
            else f"The generation failed: {type(error).__name__}: {error}"
        )
        yield {page.error: error_html(RuntimeError(said)), page.status: escape(said),
               **idle(page)}  # fmt: skip
        return
    if written is None:
        return
    yield from _stopped(tab, _Ran(model, view, run.prompt, opts, found), written)


def _stopped(tab: GrammarTab, ran: _Ran, written: list):
    """A run stopped during its constrained part: what was written kept, for stepping."""
    page = tab.page
    said = f"Stopped after {plural(len(written), 'token')}."
    if written:
        yield {page.status: f"{said[:-1]}: keeping what was written…"}
        trace = grammar_stopped_trace(ran.view.grammar, ran.prompt, ran.options, written)
        frame = finish_grammar(ran.model, ran.view, trace, ran.findings, status=said)
        yield updates(frame, tab, ran.view)
    yield {**idle(page), page.status: said if written else "Stopped."}


def on_stop(tab: GrammarTab, mark: Any):
    """Stop: the run sees the mark before its next frame and ends (``on_run``)."""
    return page_stop(tab.page, mark)


def on_compare(models: Any, text: str, fmt: str, prefix: str, backend: str | None = None):
    """Compare the masks after ``prefix`` under the grammar in the box, in the tokens of
    the model the tab's menu chose (``backend``)."""
    return masks_html(grammar_view(text, fmt), vocabulary_for(models, backend), prefix)


def on_load(models: Any, request: Any):
    """A Grammar tab link (``?grammar=…``): its grammar, format, prompt and options put
    back, each checked and clamped; without one, nothing is touched. (static/grammar.js
    opens the tab, runs when the link says ``run=1``, and chooses its ``step``.)"""
    q = dict(request.query_params) if request is not None else {}
    if "grammar" not in q:
        return (gr.skip(),) * 7

    def given(key, cast, lo, hi):
        try:
            value = cast(q[key])
        except (KeyError, ValueError, OverflowError):
            return gr.skip()
        return min(max(value, lo), hi) if value == value else gr.skip()

    return (
        q["grammar"][:MAX_GRAMMAR],
        q["format"] if q.get("format") in FORMATS else gr.skip(),
        q["prompt"][:MAX_PROMPT_CHARS] if "prompt" in q else gr.skip(),
        given("max_tokens", int, 1, min(256, MAX_TOKENS_LIMIT)),
        given("temperature", float, 0.0, 2.0),
        given("seed", int, 0, 2**31 - 1),
        q["chat"] != "0" if "chat" in q else gr.skip(),
    )
