"""The Compare view (page id ``compare``): one prompt and seed under every way of decoding
(``fsmviz.generation.compare``), as a table of outputs and one chart of valid-mass curves.

Layout and wiring here; the runs are the engine's, the table and the chart
``fsmviz.html.compare``'s. The table (``#compare``) fills row by row as each way finishes;
the chart follows once the masked runs are in, and on a server the engine check of the
masked way (``#compare-engine-check``: the server's tokens and visible mask against the
exact automaton, as the Generate tab's ``engine-check``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import gradio as gr

from fsmviz.app.backend import (
    ServerSource,
    backend_menu,
    run_source,
    server_names,
    server_ways,
)
from fsmviz.app.stopping import TICK, ticking
from fsmviz.app.zerogpu import gpu_seconds, on_gpu
from fsmviz.errors import FsmvizError
from fsmviz.generation.compare import WAYS, Decoding, compare
from fsmviz.generation.models import BackgroundModel, ModelLoadError
from fsmviz.generation.trace import GenerationOptions
from fsmviz.html.compare import (
    CHART_BEFORE,
    CHART_WAITING,
    compare_figure,
    compare_html,
    pending_notes,
    placeholder_figure,
)
from fsmviz.html.engine_check import ENGINE_CHECK_LATER, engine_check_html
from fsmviz.html.text import error_html

__all__ = ["PRESETS", "CompareInputs", "build_compare_tab", "compare_check_html", "on_compare"]

PRICE = r"[0-9]+\.[0-9]+"
EMAIL = r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+[a-zA-Z0-9]"
PRESETS: dict[str, tuple[str, str, bool]] = {
    "a price, [0-9]+\\.[0-9]+": (
        PRICE,
        "How much does a cup of coffee cost in Paris, in euros?",
        True,
    ),
    "seed 002: Jerome's e-mail address (completion)": (
        EMAIL,
        "My name is Jerome Swannack, I work at coolcompany.com and my email address is",
        False,
    ),
    "seed 004: protein in a product, \\d+\\.\\d+g": (
        r"\d+\.\d+g",
        "Context:\nChocolate flavour nutritionally complete drink with sweetener \n Features "
        "include: \n 20g protein \n 26 vitamins & minerals \n Plant-based \n Low sugar\n\n"
        "How much protein is in the given product description?\n\nOutput:",
        True,
    ),
    "seed 002: an integer, [0-9]+": (r"[0-9]+", "How many moons does Mars have?", True),
}


def compare_seconds(model, pattern, prompt, opts, ways, retries) -> int:
    """ZeroGPU ``duration``: a run per way, and every retry."""
    return gpu_seconds(opts.max_tokens, runs=len(ways) + int(retries))


def compare_rows(model, pattern, prompt, opts, ways, retries) -> Iterator[Decoding]:
    """The engine's rows (plain records: they pickle back from a ZeroGPU worker)."""
    yield from compare(model, pattern, prompt, opts, ways=ways, retries=retries)


compare_rows_on_gpu = on_gpu(compare_rows, compare_seconds)


@dataclass(frozen=True)
class CompareInputs:
    """Everything one Compare reads from the page, read once, in the order of its inputs
    (``compare_event``), and handed down whole (as ``handlers.RunInputs`` is for Generate).

    >>> asked = CompareInputs("[0-9]+", "A number:", 8, 0.0, 0, True, 3, ["constrained"], 0.5)
    >>> asked.options().prob_limit, asked.options(local=False).prob_limit
    (0.5, None)
    """

    pattern: str
    prompt: str
    max_tokens: int
    temperature: float
    seed: int
    chat: bool
    retries: int
    ways: Sequence[str]
    prob_limit: float = 0.0
    """Seed 002's stop for the masked ways; 0 is off (and a server cannot stop on it)."""
    backend: str | None = None
    """The model menu's choice: the bundled model, or a configured server by name."""

    def options(self, local: bool = True) -> GenerationOptions:
        """The run's options (``local``: on the app's own model, the only one that can
        stop on a prob limit)."""
        return GenerationOptions(
            max_tokens=int(self.max_tokens),
            temperature=float(self.temperature),
            seed=int(self.seed or 0),
            chat=bool(self.chat),
            prob_limit=float(self.prob_limit) if self.prob_limit and local else None,
        )


def compare_check_html(source: Any, rows: Sequence[Decoding]) -> str:
    """The ``compare-engine-check`` panel after a Compare: on a server, the engine check of
    the masked way's run (the Generate tab's table: its tokens and visible mask against the
    exact automaton); on the bundled model, the line saying a server has one."""
    masked = next((row for row in rows if row.way.name == "constrained"), None)
    if not isinstance(source, ServerSource):
        return engine_check_html(None, ())
    if masked is None:
        return (
            '<p class="empty">The engine check reads the masked way\'s run: tick '
            "<b>masked</b> among the ways to see the server's mask checked.</p>"
        )
    constrained = [run for run in source.runs if run.pattern is not None]
    return engine_check_html(SimpleNamespace(name=source.name, runs=constrained), masked.steps)


def on_compare(models: BackgroundModel, asked: CompareInputs) -> Iterator[tuple[str, Any, str]]:
    """Run the chosen ways one after another, the table growing as each finishes, then the
    chart and (on a server) the masked way's engine check. ``asked.backend``: the bundled
    model or a configured server by name (``fsmviz.app.backend``); on a server the ways it
    cannot run are left out, and the page says which and why."""
    source = run_source(models, asked.backend)
    check = ENGINE_CHECK_LATER if isinstance(source, ServerSource) else compare_check_html(None, ())
    chosen, unavailable = server_ways(
        source, [way for way in WAYS if way.name in (asked.ways or [])], asked.prob_limit
    )
    if not chosen:
        why = "choose at least one way of decoding" + (" this server can run" if asked.ways else "")
        yield unavailable + error_html(ValueError(why)), None, check
        return
    rows: list[Decoding] = []
    try:
        opts = asked.options(local=source is models)
        model = source.get(timeout=600)
        waiting = placeholder_figure(CHART_WAITING)
        yield unavailable + compare_html(rows, [w.label for w in chosen]), waiting, check
        runs = compare_rows_on_gpu(
            model, asked.pattern, asked.prompt, opts, [w.name for w in chosen], int(asked.retries)
        )
        began = time.perf_counter()
        for row in ticking(runs, every=1.0):  # a tick a second: the running way's clock
            if row is not TICK:
                rows.append(row)  # type: ignore[arg-type]
                began = time.perf_counter()
            left = [w.label for w in chosen[len(rows) :]]
            notes = pending_notes(rows, len(left), opts.max_tokens, time.perf_counter() - began)
            yield unavailable + compare_html(rows, left, notes), gr.skip(), check
    except (FsmvizError, ValueError, ModelLoadError) as error:
        checked = compare_check_html(source, rows) if rows else ""
        yield unavailable + error_html(error, asked.pattern), None, checked
        return
    yield unavailable + compare_html(rows), compare_figure(rows), compare_check_html(source, rows)


def compare_event(models: BackgroundModel) -> Callable[..., Iterator[tuple[str, Any, str]]]:
    """``on_compare`` as Gradio calls it: the inputs' values in ``CompareInputs`` order,
    read into one value (a generator function: Gradio streams only from those)."""

    def event(*values: Any) -> Iterator[tuple[str, Any, str]]:
        yield from on_compare(models, CompareInputs(*values))

    return event


def on_preset(name: str | None):
    """A preset's regex, prompt and chat setting (nothing changes for no choice)."""
    if name not in PRESETS:
        return gr.update(), gr.update(), gr.update()
    return PRESETS[name]


def build_compare_tab(models: BackgroundModel, regex_box: Any, prompt_box: Any) -> None:
    """The Compare view's components, created inside the caller's ``gr.Tab``;
    ``regex_box`` and ``prompt_box`` are the Generate tab's (copied on request)."""
    first = next(iter(PRESETS.values()))
    with gr.Column(elem_id="compare-view"):
        gr.HTML(
            "<p>The same prompt and seed under each way of decoding the seeds describe: "
            "masking (today's), overshoot-and-cut (seed 002), ReLLM's first match, and the "
            "alternatives the seeds argue against: write freely and extract with "
            "<code>re.search</code>, or write freely and ask again until it matches.</p>"
        )
        with gr.Row():
            preset = gr.Dropdown(
                list(PRESETS), value=None, label="Presets", elem_id="compare-preset"
            )
            take = gr.Button("Use the Generate tab's regex and prompt", size="sm")
        regex = gr.Textbox(first[0], label="Regex", elem_id="compare-regex", lines=1)
        prompt = gr.Textbox(first[1], label="Prompt", elem_id="compare-prompt", lines=3)
        with gr.Row():
            max_tokens = gr.Slider(
                1, 256, value=48, step=1, label="Max tokens", elem_id="compare-max-tokens"
            )
            temperature = gr.Slider(0.0, 2.0, value=0.0, step=0.05, label="Temperature")
            seed = gr.Number(0, label="Seed", precision=0, minimum=0)
            chat = gr.Checkbox(first[2], label="Chat template", elem_id="compare-chat")
            retries = gr.Slider(
                0, 8, value=3, step=1, label="Retries (ask again)", elem_id="compare-retries"
            )
        prob_limit = gr.Number(
            0.0, label="Prob limit (0 = off)", minimum=0, maximum=1, step=0.01,
            elem_id="compare-prob-limit",
        )  # fmt: skip
        ways = gr.CheckboxGroup(
            [(w.label, w.name) for w in WAYS],
            value=[w.name for w in WAYS],
            label="Ways of decoding",
            elem_id="compare-ways",
        )
        backend = backend_menu(server_names(), elem_id="compare-backend")
        run = gr.Button("Compare", variant="primary", elem_id="compare-run")
        table = gr.HTML(compare_html([]), elem_id="compare")
        chart = gr.Plot(
            placeholder_figure(CHART_BEFORE),
            label="Valid mass per step",
            show_label=False,
            elem_id="compare-chart",
        )
        check = gr.HTML(
            compare_check_html(None, ()),
            elem_id="compare-engine-check",
            visible=bool(server_names()),
        )
    private = {"api_visibility": "private"}
    preset.change(on_preset, preset, [regex, prompt, chat], **private)
    take.click(lambda r, p: (r, p), [regex_box, prompt_box], [regex, prompt], **private)
    run.click(
        compare_event(models),
        [regex, prompt, max_tokens, temperature, seed, chat, retries, ways, prob_limit, backend],
        [table, chart, check],
        concurrency_id="generate",
        **private,
    )
