"""The Gradio page: inputs on the left, the DFA on the right, output, chart, steps, doctor.

Handlers here only translate between Gradio components and the engine (``fsmviz.app.live``
builds every piece of HTML and every figure). Per-visitor data (the last trace, its
findings) lives in ``gr.State``, so one visitor never sees another's run.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from ..batching import ForwardPassError
from ..errors import FsmvizError
from ..generate import MAX_TOKENS_LIMIT, GenerationOptions, generate
from ..models import BackgroundModel, ModelLoadError, on_gpu
from ..trace import Trace
from .charts import valid_mass_figure
from .examples import default_example, examples
from .live import live_run, pattern_view
from .render import to_dot
from .views import error_html, findings_html, steps_html

__all__ = ["EXAMPLES", "build_ui", "STATIC"]

STATIC = Path(__file__).resolve().parents[2] / "static"
MAX_PROMPT = 4_000
DRAFT_TOKENS = 8
"""Speculative drafts in the app (``GenerationOptions.draft_tokens``): repeated structure
such as JSON is written about twice as fast; the output is the same (greedy) or drawn from
the same distribution (sampling)."""
RUNS_AT_ONCE = 16
"""Generations served at once by default (more wait in the queue, told their place).
Their forward passes are batched (``fsmviz.batching``): more at once, more tokens/s in all,
each a little slower."""


EXAMPLES = {
    name: (example.pattern, example.prompt, example.chat) for name, example in examples().items()
}
"""The seed examples by name: (pattern, prompt, chat template on)."""
DEFAULT = EXAMPLES[default_example().name]


def build_ui(models: BackgroundModel, runs_at_once: int = RUNS_AT_ONCE) -> gr.Blocks:
    """The whole page, wired to ``models`` (which may still be loading); at most
    ``runs_at_once`` generations run at a time."""

    def options(max_tokens, temperature, seed, chat, prob_limit) -> GenerationOptions:
        return GenerationOptions(
            max_tokens=int(max_tokens),
            temperature=float(temperature),
            seed=int(seed),
            chat=bool(chat),
            prob_limit=float(prob_limit) if prob_limit else None,
            draft_tokens=DRAFT_TOKENS,
        )

    def on_pattern(pattern: str, show_distances: bool = False):
        view = pattern_view(pattern, models.vocabulary(), distances=show_distances)
        return view.dfa_html(), findings_html(view.findings), view.error

    @on_gpu  # on a ZeroGPU Space, the GPU is attached while a run streams
    def on_run(
        pattern, prompt, max_tokens, temperature, seed, chat, prob_limit, show_distances
    ) -> Iterator:
        try:
            if len(prompt) > MAX_PROMPT:
                raise ValueError(f"the prompt is too long (limit {MAX_PROMPT:,} characters)")
            opts = options(max_tokens, temperature, seed, chat, prob_limit)
            model = models.get(timeout=600)
            view = pattern_view(pattern, model.vocab, distances=show_distances)
        except (ValueError, ModelLoadError) as error:
            yield {error_box: error_html(error), status: str(error)}
            return
        frame = None
        frames = live_run(model, view, prompt, opts)
        while True:
            try:
                frame = next(frames)
            except StopIteration:
                break
            except Exception as error:  # e.g. out of memory: a message, never a traceback
                message = (
                    f"The generation stopped: {error}"  # says what happened and what to do
                    if isinstance(error, ForwardPassError)
                    else f"The generation failed: {type(error).__name__}: {error}"
                )
                yield {error_box: error_html(RuntimeError(message)), status: message}
                return
            update = {
                dfa: frame.dfa,
                output: frame.output,
                shadow: frame.shadow,
                steps: frame.steps,
                diagnosis: frame.diagnosis,
                error_box: frame.error,
                status: frame.status,
            }
            if frame.chart is not None:
                update[chart] = frame.chart
            yield update
        if frame is not None and frame.trace is not None:
            last = max(len(frame.trace.steps) - 1, 0)
            yield {
                trace_state: frame.trace,
                findings_state: frame.findings,
                # A slider needs minimum < maximum: a one-step trace leaves it fixed at 0.
                step: gr.update(maximum=max(last, 1), value=last, interactive=last > 0),
                downloads: _downloads(view, frame.trace),
            }

    def on_step(i, trace: Trace | None, found, log, pattern, show_distances):
        if trace is None:
            return gr.skip(), gr.skip(), gr.skip()
        view = pattern_view(pattern, models.vocabulary(), distances=show_distances)
        i = int(i)
        return (
            view.dfa_html(trace.steps, upto=i),
            steps_html(trace.steps, selected=i),
            valid_mass_figure(trace.steps, log=log, selected=i),
        )

    def on_finding(k, trace: Trace | None, found, log, pattern, show_distances):
        view = pattern_view(pattern, models.vocabulary(), trace, distances=show_distances)
        chosen = found or view.findings
        k = int(k) if k is not None else -1
        if not 0 <= k < len(chosen):
            return gr.skip(), gr.skip(), gr.skip()
        finding = chosen[k]
        trace_steps = trace.steps if trace else ()
        figure = (
            valid_mass_figure(trace_steps, log=log, marked=finding.steps) if trace else gr.skip()
        )
        return (
            view.dfa_html(trace_steps, marked=finding.states),
            findings_html(chosen, selected=k),
            figure,
        )

    def on_log(log, trace: Trace | None):
        return valid_mass_figure(trace.steps, log=log) if trace else gr.skip()

    def on_example(name):
        return EXAMPLES[name] if name in EXAMPLES else (gr.skip(), gr.skip(), gr.skip())

    def on_load(request: gr.Request):
        """Restore inputs from the URL (a permalink); every value is data, checked."""
        q = dict(request.query_params) if request else {}

        def number(key, cast, lo, hi, default):
            try:
                return min(max(cast(q[key]), lo), hi)
            except (KeyError, ValueError):
                return default

        pattern = q.get("regex", DEFAULT[0])[:10_000]
        return (
            pattern,
            q.get("prompt", DEFAULT[1])[:MAX_PROMPT],
            number("max_tokens", int, 1, MAX_TOKENS_LIMIT, 64),
            number("temperature", float, 0.0, 2.0, 0.0),
            number("seed", int, 0, 2**31 - 1, 0),
            q.get("chat", "1" if DEFAULT[2] else "0") != "0",
            number("prob_limit", float, 0.0, 1.0, 0.0),
            *on_pattern(pattern),
            models.status,
            # Stop polling at once when the model is ready: a late tick would overwrite the
            # status of a run started right after the page loaded.
            gr.Timer(active=not models.ready),
        )

    with gr.Blocks(title="fsmviz — see regex-guided generation") as demo:
        gr.HTML(
            "<h1>fsmviz</h1><p class='lead'>Type a regex and a prompt: watch a real language "
            "model generate under the regex's automaton, token by token — which tokens the "
            "DFA allowed, what the model wanted, and where they disagree.</p>",
            elem_id="intro",
        )
        status = gr.HTML(models.status, elem_id="status")
        with gr.Row(equal_height=False):
            with gr.Column(scale=2, min_width=320):
                # Defaults in place from the first paint: a click before the page-load
                # handler restores a permalink must not run an empty pattern.
                regex_box = gr.Textbox(
                    DEFAULT[0], label="Regex", elem_id="regex", lines=2, max_lines=8
                )
                prompt = gr.Textbox(
                    DEFAULT[1], label="Prompt", elem_id="prompt", lines=3, max_lines=10
                )
                example = gr.Dropdown(
                    list(EXAMPLES),
                    label="Examples (from the seed posts)",
                    value=None,
                    elem_id="examples",
                )
                with gr.Row():
                    max_tokens = gr.Slider(
                        1,
                        MAX_TOKENS_LIMIT,
                        value=64,
                        step=1,
                        label="Max tokens",
                        elem_id="max-tokens",
                    )
                    temperature = gr.Slider(
                        0.0,
                        2.0,
                        value=0.0,
                        step=0.05,
                        label="Temperature (0 = greedy)",
                        elem_id="temperature",
                    )
                with gr.Row():
                    seed = gr.Number(0, label="Seed", precision=0, elem_id="seed", minimum=0)
                    prob_limit = gr.Number(
                        0.0,
                        label="Prob limit (0 = off)",
                        minimum=0,
                        maximum=1,
                        step=0.01,
                        elem_id="prob-limit",
                    )
                    chat = gr.Checkbox(DEFAULT[2], label="Chat template", elem_id="chat")
                run = gr.Button("Generate", variant="primary", elem_id="run")
                error_box = gr.HTML("", elem_id="error")
            with gr.Column(scale=3, min_width=400):
                dfa = gr.HTML(elem_id="dfa", label="DFA")
                show_distances = gr.Checkbox(
                    False, label="Show each state's fewest tokens to a match", elem_id="distances"
                )
        with gr.Row():
            with gr.Column():
                gr.HTML("<h3>Constrained output</h3>")
                output = gr.HTML(elem_id="output")
            with gr.Column():
                gr.HTML("<h3>What the model wanted (unconstrained, same prompt and seed)</h3>")
                shadow = gr.HTML(elem_id="shadow")
        with gr.Row():
            with gr.Column(scale=4):
                chart = gr.Plot(label="Valid mass per step", show_label=False, elem_id="valid-mass")
            with gr.Column(scale=1, min_width=200):
                log = gr.Checkbox(False, label="Log scale", elem_id="log-scale")
                step = gr.Slider(
                    0, 1, value=0, step=1, label="Step", elem_id="step", interactive=False
                )
        gr.HTML("<h3>Doctor</h3>")
        diagnosis = gr.HTML(elem_id="diagnosis")
        finding = gr.Number(
            -1, precision=0, elem_id="finding-pick", elem_classes="offscreen", label="finding"
        )
        gr.HTML("<h3>Steps</h3>")
        steps = gr.HTML(elem_id="steps")
        with gr.Accordion("Downloads: DFA as SVG and DOT, trace as JSON and CSV", open=False):
            downloads = gr.File(file_count="multiple", elem_id="downloads", interactive=False)
        trace_state = gr.State(None)
        findings_state = gr.State(())

        inputs = [regex_box, prompt, max_tokens, temperature, seed, chat, prob_limit]
        gr.on(
            [regex_box.change, show_distances.change],
            on_pattern,
            [regex_box, show_distances],
            [dfa, diagnosis, error_box],
            trigger_mode="always_last",
            api_visibility="private",
        )
        example.change(on_example, example, [regex_box, prompt, chat], api_visibility="private")
        run.click(
            on_run,
            [*inputs, show_distances],
            [
                dfa,
                output,
                shadow,
                steps,
                chart,
                diagnosis,
                error_box,
                status,
                trace_state,
                findings_state,
                step,
                downloads,
            ],
            js=PERMALINK_JS,
            api_visibility="private",
            concurrency_limit=runs_at_once,
        )
        step.change(
            on_step,
            [step, trace_state, findings_state, log, regex_box, show_distances],
            [dfa, steps, chart],
            api_visibility="private",
        )
        finding.change(
            on_finding,
            [finding, trace_state, findings_state, log, regex_box, show_distances],
            [dfa, diagnosis, chart],
            api_visibility="private",
        )
        log.change(on_log, [log, trace_state], chart, api_visibility="private")
        timer = gr.Timer(1.0)
        demo.load(
            on_load,
            None,
            [*inputs, dfa, diagnosis, error_box, status, timer],
            api_visibility="private",
        )
        timer.tick(
            lambda: (models.status, gr.Timer(active=not models.ready)),
            None,
            [status, timer],
            api_visibility="private",
        )

        @on_gpu
        def trace_api(
            regex: str,
            prompt: str,
            max_tokens: int = 64,
            temperature: float = 0.0,
            seed: int = 0,
            chat: bool = True,
        ) -> dict[str, Any]:
            """Generate under ``regex`` and return the whole trace as JSON (``chat=False``
            continues the prompt as raw text instead of using the chat template)."""
            try:
                return generate(
                    models.get(timeout=600),
                    regex,
                    prompt,
                    max_tokens=int(max_tokens),
                    temperature=float(temperature),
                    seed=int(seed),
                    chat=bool(chat),
                    draft_tokens=DRAFT_TOKENS,
                ).to_dict()
            except (FsmvizError, ValueError) as error:  # RegexError, IndexTooLarge, model errors
                raise gr.Error(str(error)) from None

        def dfa_api(regex: str) -> dict[str, Any]:
            """The DFA of ``regex``: states, transitions and DOT source."""
            view = pattern_view(regex, models.vocabulary())
            if view.dfa is None:
                raise gr.Error(_plain(view.error))
            return {**view.dfa.to_dict(), "dot": to_dot(view.dfa, title=regex)}

        gr.api(trace_api, api_name="trace", concurrency_limit=runs_at_once)
        gr.api(dfa_api, api_name="dfa")
    return demo


def _plain(html_text: str) -> str:
    import re
    from html import unescape

    return unescape(re.sub(r"<[^>]+>", " ", html_text)).strip()


def _downloads(view, trace: Trace) -> list[str]:
    folder = Path(tempfile.mkdtemp(prefix="fsmviz-"))
    files = {"trace.json": trace.to_json(indent=1), "trace.csv": trace.to_csv()}
    if view.dfa is not None:
        files["dfa.dot"] = to_dot(view.dfa, title=view.pattern)
        if view.svg:
            files["dfa.svg"] = view.svg
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [str(folder / name) for name in files]


PERMALINK_JS = """
(regex, prompt, max_tokens, temperature, seed, chat, prob_limit, ...rest) => {
  const params = new URLSearchParams({regex, prompt, max_tokens, temperature, seed,
                                      chat: chat ? "1" : "0"});
  if (prob_limit) params.set("prob_limit", prob_limit);
  history.replaceState(null, "", "?" + params.toString());
  return [regex, prompt, max_tokens, temperature, seed, chat, prob_limit, ...rest];
}
"""
