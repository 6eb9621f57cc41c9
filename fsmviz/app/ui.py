"""The Gradio page: layout and wiring only.

The page is a set of tabs; the first, "Generate", is the main view (inputs, the JSON
Schema part and the doctor on the left, the DFA and the output big on the right; the
chart, the step controls, the step table and the chosen step's allowed set below; on a
phone: inputs, DFA, output, doctor, chart, steps, see static/app.css). Another view is one more
``gr.Tab`` in ``build_ui``. What happens on each event is in ``fsmviz.app.handlers``
(module-level functions; the model is handed to them here with ``functools.partial``).
Per-visitor data (the last trace, its findings) lives in ``gr.State``, so one visitor
never sees another's run.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import gradio as gr

from fsmviz.app import handlers as h
from fsmviz.app.api import add_api
from fsmviz.app.audit_page import build_audit_tab
from fsmviz.app.backend import (
    BUNDLED,
    backend_menu,
    configure_servers,
    engine_check_panel,
    restore_on_load,
)
from fsmviz.app.compare_page import build_compare_tab
from fsmviz.app.decoding_controls import decoding_controls
from fsmviz.app.grammar_page import build_grammar_tab
from fsmviz.app.handlers import DEFAULT, DEFAULT_MAX_TOKENS, EXAMPLES
from fsmviz.app.learn import build_learn_tab
from fsmviz.app.live import COMPACT_ABOVE, run_event
from fsmviz.app.schema_page import build_schema_part, wire_schema_part, with_mode_note
from fsmviz.generation.generate import MAX_TOKENS_LIMIT
from fsmviz.generation.models import BackgroundModel
from fsmviz.html.steps import STEP_BUTTONS

__all__ = ["EXAMPLES", "STATIC", "build_ui"]

STATIC = Path(__file__).resolve().parents[2] / "static"
RUNS_AT_ONCE = 16
"""Generations served at once by default (more wait in the queue, told their place).
Their forward passes are batched (``fsmviz.generation.batching``): more at once, more
tokens/s in all, each a little slower."""

STEPPER = (
    STEP_BUTTONS + '<div class="step-card" aria-live="polite"><p class="empty">After a run, '
    "choose a step (Prev, Next, a row, a token, a point): its token and the model's top "
    "candidates show here, its state lights in the drawing.</p></div>"
)
"""The step controls and the chosen step's card (filled by static/app.js from the table)."""


FILE_TTL = 1800
"""Seconds a run's downloads are served (``scratch.Sweeper``, started by the server) and
Gradio keeps what else it cached (an upload) before its cache is swept (``delete_cache``,
every ``FILE_TTL // 6`` seconds)."""
STATE_TTL = 3600
"""Seconds a visitor's last trace and findings (``gr.State``) are kept after they were set:
an hour to step through a run; then the memory is freed even if the tab stays open."""


def build_ui(
    models: BackgroundModel,
    runs_at_once: int = RUNS_AT_ONCE,
    file_ttl: int = FILE_TTL,
    servers: dict[str, str] | None = None,
) -> gr.Blocks:
    """The whole page, wired to ``models`` (which may still be loading); at most
    ``runs_at_once`` generations run at a time; files served are removed after
    ``file_ttl`` seconds; ``servers`` (name to URL) are offered beside the bundled model."""
    with gr.Blocks(
        title="fsmviz — see regex-guided generation",
        delete_cache=(max(file_ttl // 6, 1), file_ttl),
    ) as demo:
        gr.HTML(
            "<h1>fsmviz</h1><p class='lead'>Type a regex and a prompt: watch a real language "
            "model generate under the regex's automaton, token by token — which tokens the "
            "DFA allowed, what the model wanted, and where they disagree.</p>",
            elem_id="intro",
        )
        status = gr.HTML(models.status, elem_id="status")
        # A further view (e.g. Learn) is one more `with gr.Tab(...)` in ``other_views``.
        with gr.Tabs(elem_id="views"):  # noqa: SIM117
            with gr.Tab("Generate", id="generate", elem_id="generate-tab"):
                main = main_view(models, status, runs_at_once, servers or {})
            other_views(models, demo, runs_at_once, main)
        timer = gr.Timer(1.0)

        def load(request: gr.Request):  # Gradio finds the request by this annotation
            return h.on_load(models, request)

        demo.load(
            load,
            None,
            [
                *main.inputs,
                main.page.dfa,
                main.page.diagnosis,
                main.page.error,
                status,
                timer,
                *main.schema_outputs,
                *main.decoding,
            ],  # fmt: skip
            # the first paint already holds the defaults: a link's values land without an
            # overlay flashing on each of these ~25 components
            show_progress="hidden",
            api_visibility="private",
        ).then(  # a mark for scripts and tests: the link's values (if any) are in place
            None, js="() => { document.body.dataset.restored = 'yes'; }"
        )
        restore_on_load(demo, main.backend)  # a permalink's server, by name
        timer.tick(
            partial(h.on_tick, models),
            None,
            [status, timer],
            show_progress="hidden",  # once a second while the model loads: no flashing
            api_visibility="private",
        )

        add_api(models, runs_at_once)  # /trace, /dfa, /diagnose, /schema (and MCP tools)
    return demo


def other_views(models: BackgroundModel, demo: gr.Blocks, runs_at_once: int, main: MainView):
    """The views beside Generate, a tab each; Learn, Compare and Audit take the Generate
    tab's regex box (Compare its prompt too)."""
    with gr.Tab("Learn", id="learn", elem_id="learn-tab") as learn:
        build_learn_tab(main.inputs[0], learn)
    with gr.Tab("Grammar", id="grammar-mode", elem_id="grammar-tab"):
        build_grammar_tab(models, demo, runs_at_once)
    with gr.Tab("Compare", id="compare", elem_id="compare-tab"):
        build_compare_tab(models, main.inputs[0], main.inputs[1])
    with gr.Tab("Audit", id="audit", elem_id="audit-tab"):
        build_audit_tab(models, main.inputs[0])


class MainView:
    """The Generate tab's components that ``build_ui`` wires beyond the tab."""

    def __init__(
        self,
        page: h.Page,
        inputs: list[Any],
        schema_outputs: list[Any],
        decoding: list[Any],
        backend: Any = None,
    ):
        self.backend = backend
        """The model menu (``fsmviz.app.backend``; hidden without servers)."""
        self.page = page
        self.inputs = inputs
        self.schema_outputs = schema_outputs
        """What a schema run's link restores (``handlers.on_load``): the schema box, the
        whitespace, the choice, the findings (state and HTML), the error, the note under
        the Regex box and the part's accordion."""
        self.decoding = decoding
        """The decoding box's top-k, top-p, stop rule and overshoot, then the box (a link
        restores them and opens it)."""


class Components:
    """A block of the page's components by name (``inputs_column``, ``outputs_block``, ...)."""

    def __init__(self, **parts: Any) -> None:
        self.__dict__.update(parts)


def main_view(
    models: BackgroundModel, status: Any, runs_at_once: int, servers: dict[str, str] | None = None
) -> MainView:
    """Lay out the Generate tab and wire its events.

    Two columns: on the left the inputs, the output, the doctor, then the chart and the
    step table; on the right the instrument, sticky on a wide screen: the drawing, the step
    controls, the chosen step's token and candidates, its allowed set. Stepping, the
    drawing and the chosen step stay in view together (a phone: inputs, drawing, stepper,
    output, doctor, chart, steps; see static/app.css).
    """
    first = h.Drawn(DEFAULT[0], backend=BUNDLED)  # the first paint: the menu's first choice
    first_dfa, first_diagnosis, first_error = h.on_pattern(models, first)
    with gr.Row(equal_height=False, elem_id="top"):
        with gr.Column(scale=2, min_width=300, elem_id="controls"):
            backend = backend_menu(configure_servers(servers or {}))
            ins = inputs_column(first_error)
            ins.backend = backend
            out = outputs_block()
            engine_check = engine_check_panel(servers or {})
            compare = comparison_block()
            schema_note, schema_accordion, schema = schema_block()
            doctor = doctor_block(first_diagnosis)
            chart, log, steps, downloads = run_block()
        with gr.Column(scale=3, min_width=320, elem_id="drawing"):
            panel = instrument_column(first_dfa)
    trace_state = gr.State(None, time_to_live=STATE_TTL)
    findings_state = gr.State((), time_to_live=STATE_TTL)
    # the session's runs (Generate, Stop, an edit's answer) and what the panel was drawn for
    stop_mark = gr.State(h.StopMark(drawn=(first.pattern, first.backend)))

    page = h.Page(
        panel.dfa, out.output, out.shadow, steps, chart, doctor.diagnosis, ins.error, status,
        trace_state, findings_state, panel.step, downloads, ins.run, ins.stop, panel.allowed,
        out.json_view, ins.regex, ins.chat, compare.view, compare.chart, ins.example,
        engine_check,
    )  # fmt: skip
    inputs = [ins.regex, ins.prompt, ins.max_tokens, ins.temperature, ins.seed, ins.chat,
              ins.prob_limit]  # fmt: skip
    wire_pattern(page, models, ins, panel, (trace_state, stop_mark), schema, schema_note)
    wire_runs(page, models, runs_at_once, inputs, ins, panel, doctor, schema, compare, stop_mark)
    wire_stepping(page, models, drawn_inputs(ins, panel, schema), panel, doctor, chart, log)
    schema_outputs = [schema.schema, schema.whitespace, schema.choice, schema.found,
                      schema.findings, schema.error, schema_note, schema_accordion]  # fmt: skip
    return MainView(
        page, inputs, schema_outputs, [*ins.decoding.components, ins.decoding.accordion], backend
    )


def inputs_column(first_error: str) -> Components:
    """Regex (its errors right under it), prompt, examples, options, Generate and Stop."""
    # Defaults in place from the first paint, the default pattern drawn and diagnosed with
    # them: the page-load handler only sets what a permalink gives (a click or keystroke
    # before it comes back is the visitor's, kept).
    regex_box = gr.Textbox(
        DEFAULT[0],
        label="Regex",
        elem_id="regex",
        lines=2,
        max_lines=8,
        placeholder="a regular expression, e.g. [0-9]{3}-[0-9]{4}",
    )
    error_box = gr.HTML(first_error, elem_id="error")
    prompt = gr.Textbox(
        DEFAULT[1],
        label="Prompt",
        elem_id="prompt",
        lines=2,
        max_lines=10,
        placeholder="what to ask the model, e.g. Give a phone number",
    )
    example = gr.Dropdown(
        list(EXAMPLES),
        label="Examples (from the seed posts): what each shows",
        value=h.example_of(DEFAULT[0]),
        elem_id="examples",
    )
    with gr.Row():
        max_tokens = gr.Slider(
            1, MAX_TOKENS_LIMIT, value=DEFAULT_MAX_TOKENS, step=1, label="Max tokens",
            elem_id="max-tokens",
        )  # fmt: skip
        temperature = gr.Slider(
            0.0, 2.0, value=0.0, step=0.05, label="Temperature",  # 0: greedy
            elem_id="temperature",
        )  # fmt: skip
    with gr.Row():
        seed = gr.Number(0, label="Seed", precision=0, elem_id="seed", minimum=0)
        prob_limit = gr.Number(
            0.0, label="Prob limit (0 = off)", minimum=0, maximum=1, step=0.01,
            elem_id="prob-limit",
        )  # fmt: skip
        chat = gr.Checkbox(DEFAULT[2], label="Chat template", elem_id="chat")
    decoding = decoding_controls()
    with gr.Row(elem_id="actions"):
        run = gr.Button("Generate", variant="primary", elem_id="run")
        stop = gr.Button("Stop", variant="stop", elem_id="stop", visible=False)
        gr.HTML(
            '<button type="button" id="copy-link" title="copy a link to this pattern, '
            'prompt, settings and step">Copy link</button>',
            elem_id="share",
        )
    return Components(
        regex=regex_box, error=error_box, prompt=prompt, example=example,
        max_tokens=max_tokens, temperature=temperature, seed=seed, prob_limit=prob_limit,
        chat=chat, decoding=decoding, run=run, stop=stop,
    )  # fmt: skip


def outputs_block() -> Components:
    """The constrained output (and its JSON view), then the shadow run's."""
    gr.HTML("<h3>Constrained output</h3>", elem_id="output-head")
    json_view = gr.HTML("", elem_id="json-view", padding=False)
    output = gr.HTML(h.EMPTY_OUTPUT, elem_id="output")
    gr.HTML("<h3>What the model wanted (unconstrained, same prompt and seed)</h3>",
            elem_id="shadow-head")  # fmt: skip
    shadow = gr.HTML(
        '<p class="empty">After the run, the model writes freely here.</p>', elem_id="shadow"
    )
    return Components(output=output, shadow=shadow, json_view=json_view)


def comparison_block() -> Components:
    """Apply & run's runs before and after a fix (shown only while it holds one: app.css;
    a Gradio visibility change and new values in one update could leave the chart undrawn)."""
    with gr.Column(elem_id="comparison"):
        with gr.Row(elem_id="comparison-head"):
            gr.HTML("<h3>Before and after the fix</h3>")
            dismiss = gr.Button("Dismiss", size="sm", elem_id="comparison-dismiss")
        view = gr.HTML(elem_id="comparison-view")
        chart = gr.Plot(
            label="Valid mass per step, before and after",
            show_label=False,
            elem_id="comparison-chart",
        )
    return Components(view=view, chart=chart, dismiss=dismiss)


def schema_block():
    """The JSON Schema part: its note under the Regex box's row, its accordion."""
    schema_note = gr.HTML("", elem_id="schema-mode", padding=False)
    with gr.Accordion(
        "Or a JSON Schema: its regex goes in the Regex box", open=False, elem_id="schema-part"
    ) as schema_accordion:
        schema = build_schema_part()
    return schema_note, schema_accordion, schema


def doctor_block(first_diagnosis: str) -> Components:
    """The doctor's findings, and the hidden boxes a click on one writes to."""
    # on a phone, this heading and all after it come after the output (app.css)
    gr.HTML("<h3>Doctor</h3>", elem_id="doctor-head")
    diagnosis = gr.HTML(first_diagnosis, elem_id="diagnosis")
    finding = gr.Number(
        -1, precision=0, elem_id="finding-pick", elem_classes="offscreen", label="finding"
    )
    # An "Apply & run" click writes its finding's fix here (JSON, with a counter that
    # makes every click a change): see handlers.on_apply.
    apply_pick = gr.Textbox(
        "", elem_id="apply-pick", elem_classes="offscreen", label="fix to apply"
    )
    return Components(diagnosis=diagnosis, finding=finding, apply_pick=apply_pick)


def run_block():
    """The valid-mass chart, the step table (in a box of its own height), downloads."""
    gr.HTML("<h3>Valid mass per step</h3>", elem_id="chart-head")
    chart = gr.Plot(label="Valid mass per step", show_label=False, elem_id="valid-mass")
    log = gr.Checkbox(False, label="Log scale", elem_id="log-scale")
    gr.HTML("<h3>Steps</h3>", elem_id="steps-head")
    steps = gr.HTML(elem_id="steps")
    # a grammar-path schema run has no DFA: its trace only
    label = "Downloads: the trace as JSON and CSV, a regex's DFA as DOT and SVG"
    with gr.Accordion(label, open=False):
        downloads = gr.File(file_count="multiple", elem_id="downloads", interactive=False)
    return chart, log, steps, downloads


def instrument_column(first_dfa: str) -> Components:
    """The drawing, the step controls and slider, the chosen step's card, its allowed set,
    and how the drawing is drawn."""
    dfa = gr.HTML(first_dfa, elem_id="dfa")
    gr.HTML(STEPPER, elem_id="stepper")
    step = gr.Slider(0, 1, value=0, step=1, label="Step", elem_id="step", interactive=False)
    allowed = gr.HTML(
        '<p class="empty">Choose a step to see every token it allowed.</p>',
        elem_id="allowed-tokens",
    )
    with gr.Accordion("Drawing options", open=False, elem_id="drawing-options"):
        show_distances = gr.Checkbox(
            False, label="Show each state's fewest tokens to a match", elem_id="distances"
        )
        drawing = gr.Radio(
            [(f"auto (compact above {COMPACT_ABOVE} states)", "auto"),
             ("compact: long chains folded", "compact"), ("exact: every state", "exact")],
            value="auto", label="Drawing", elem_id="compact",
        )  # fmt: skip
    return Components(
        dfa=dfa, step=step, allowed=allowed, show_distances=show_distances, drawing=drawing
    )


PRIVATE = {"api_visibility": "private"}


def wire_pattern(page, models, ins, panel, states, schema, schema_note) -> None:
    """The Regex box, the examples menu, the drawing's options, the schema part. ``states``:
    the session's trace and its ``StopMark`` (an edit answered after a run of its pattern
    began leaves that run alone; the pattern the panel was last drawn for tells a drawing
    option from an edit: ``handlers.on_pattern_edit``).

    The Regex box, the model menu (the doctor reads its vocabulary) and the drawing options
    are one ``always_last`` event: one at a time per page, a trigger that comes while one
    is under way sent once it is done, with the page as it is then. As events apart, an
    option sent with the pattern an example was replacing could be drawn last, beside the
    example's pattern in the box (the server answers events apart side by side).

    Its values are taken as the page sends them (``preprocess=False``: for these inputs,
    what Gradio's preprocessing would give, states aside, which it reads anyway), so the
    Step slider sent as null while an answer resets it is None (``on_distances``: the
    run's last step). Gradio's slider refuses a null with an error, and an error ends the
    chain: the edits deferred behind it were never sent (session 37's i30 losses)."""
    trace_state, stop_mark = states
    edit = with_mode_note(partial(h.on_pattern_edit, page, models), schema_note)
    gr.on(  # the schema note under the box too: one event an edit
        [ins.regex.change, ins.backend.change, panel.show_distances.change, panel.drawing.change],
        h.reads(h.Drawn, edit, before=1),
        [trace_state, *drawn_inputs(ins, panel, schema), stop_mark, panel.step, schema_note],
        [*h.pattern_edit_outputs(page), schema_note],
        trigger_mode="always_last",
        show_progress_on=page.dfa,  # the drawing is what a long pattern waits for
        preprocess=False,
        **PRIVATE,
    )
    # ``select``: Gradio's Dropdown fires ``input`` on every blur too
    ins.example.select(h.on_example, ins.example, [ins.regex, ins.prompt, ins.chat], **PRIVATE)
    wire_schema_part(schema, models, ins.regex, schema_note, ins.prompt, ins.max_tokens, ins.chat,
                     ins.backend)  # fmt: skip


def drawn_inputs(ins: Components, panel: Components, schema: Any) -> list[Any]:
    """The components a drawing reads, in ``handlers.Drawn`` order."""
    return [ins.regex, panel.show_distances, panel.drawing, schema.choice, ins.backend]


def run_inputs(inputs: list[Any], ins: Components, panel: Components, schema: Any) -> list[Any]:
    """The components a run reads, in ``handlers.RunInputs`` order: the seven ``inputs``
    (Regex to Prob limit), the decoding box's four, the drawing's two, the schema in use
    and the model menu."""
    return [*inputs, *ins.decoding.components, panel.show_distances, panel.drawing,
            schema.choice, ins.backend]  # fmt: skip


def wire_runs(
    page, models, runs_at_once, inputs, ins, panel, doctor, schema, compare, stop_mark
) -> None:
    """Generate (always available: a new run ends the last), Stop, Apply & run: each reads
    the page's inputs into one ``handlers.RunInputs`` (``handlers.reads``); ``stop_mark``
    is the session's ``StopMark``."""
    run_outputs = h.run_outputs(page)
    reading = run_inputs(inputs, ins, panel, schema)
    ins.run.click(
        h.reads(h.RunInputs, partial(h.on_run, page, models)),
        [*reading, stop_mark],
        run_outputs,
        trigger_mode="multiple",
        **run_event(page.status, runs_at_once),
        **PRIVATE,
    )
    doctor.apply_pick.change(
        h.stoppable(page, h.reads(h.RunInputs, partial(h.on_apply, page, models), before=2)),
        [doctor.apply_pick, page.trace, *reading, stop_mark],
        [*run_outputs, ins.regex, ins.chat],  # run_outputs has the before/after
        **run_event(page.status, runs_at_once),
        **PRIVATE,
    )  # fmt: skip
    # queue=False: heard at once, never behind a queued event (issue 47: Stop within 1 s)
    ins.stop.click(
        partial(h.on_stop, page), stop_mark, [ins.stop, page.status], queue=False, **PRIVATE
    )
    compare.dismiss.click(h.on_dismiss, None, [compare.view, compare.chart], **PRIVATE)


def wire_stepping(page, models, drawn, panel, doctor, chart, log) -> None:
    """Stepping happens in the browser (static/app.js lights the drawing, the row, the
    token and the allowed set from what the run's last frame brought); the server hears of
    the chosen step only through the slider, for redraws that keep it. ``drawn``: what the
    drawing reads (``drawn_inputs``)."""
    doctor.finding.change(
        h.reads(h.Drawn, partial(h.on_finding, models), before=4),
        [doctor.finding, page.trace, page.findings, log, *drawn],
        [panel.dfa, doctor.diagnosis, chart],
        **PRIVATE,
    )  # fmt: skip
    log.change(h.on_log, [log, page.trace, panel.step], chart, **PRIVATE)
