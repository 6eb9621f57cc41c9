"""``/trace``, ``/dfa`` and ``/diagnose``: a regex run, its automaton, its doctor.

``/dfa`` and ``/diagnose`` need no model: the drawing and the pattern-level checks run
without one, the token-level checks with a tokenizer alone. ``/trace`` needs the model (or
a server the operator configured, by name) and says plainly what to install or set when
there is none. The ``TypedDict`` each returns is the shape of its answer, which Gradio and
the MCP server publish.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

import gradio as gr

from fsmviz.app.backend import model_for, vocabulary_asked
from fsmviz.app.page import DRAFT_TOKENS  # speculative drafts, as on the page
from fsmviz.app.zerogpu import gpu_seconds, on_gpu
from fsmviz.automaton.dfa import compile_regex
from fsmviz.automaton.syntax import RegexError
from fsmviz.diagnose import diagnose
from fsmviz.drawing.render import to_dot
from fsmviz.errors import FsmvizError
from fsmviz.generation.generate import generate
from fsmviz.generation.models import BackgroundModel
from fsmviz.params import MAX_PROMPT_CHARS, check_generation, pattern, text

__all__ = [
    "MODEL_WAIT",
    "DfaResult",
    "DiagnoseResult",
    "FindingResult",
    "TraceResult",
    "dfa",
    "regex_tools",
    "trace_seconds",
]

MODEL_WAIT = 600
"""Seconds a call waits for a model that is still loading."""


class StepResult(TypedDict):
    index: int
    token_id: int
    text: str
    state_before: int
    state_after: int
    allowed_count: int
    valid_mass: float
    prob: float
    forced: bool
    drafted: bool
    top: list[dict[str, Any]]
    cut: str
    top_k_removed: int
    top_p_removed: int
    overshoot_count: int


class TraceResult(TypedDict):
    """A finished generation: ``text`` matches ``pattern`` when ``matched``."""

    text: str
    matched: bool
    stop_reason: str
    pattern: str
    prompt: str
    steps: list[StepResult]
    seconds: float
    notes: list[str]
    options: dict[str, Any]
    model: str | None
    """The model that wrote it (a configured server's name), None where not known."""


class DfaResult(TypedDict):
    """A pattern's character-level automaton."""

    pattern: str
    states: list[int]
    initial: int
    accepting: list[int]
    transitions: list[dict[str, Any]]
    dot: str


class FindingResult(TypedDict):
    kind: str
    severity: str
    message: str
    suggestion: str | None
    states: list[int]
    steps: list[int]


class DiagnoseResult(TypedDict):
    """The doctor's findings, errors first, and what they were checked against."""

    pattern: str
    vocabulary: str
    findings: list[FindingResult]


def regex_tools(models: BackgroundModel) -> dict[str, Callable[..., Any]]:
    """``/trace`` (on the GPU on ZeroGPU), ``/dfa`` and ``/diagnose``."""
    return {
        "trace": on_gpu(trace_endpoint(models), trace_seconds),
        "dfa": dfa,
        "diagnose": diagnose_endpoint(models),
    }


def trace_endpoint(models: BackgroundModel) -> Callable[..., TraceResult]:
    """The ``/trace`` function, generating with ``models``."""

    def trace(
        regex: str,
        prompt: str,
        max_tokens: int = 64,
        temperature: float = 0.0,
        seed: int = 0,
        chat: bool = True,
        top_p: float = 1.0,
        top_k: int = 0,
        prob_limit: float | None = None,
        stop: str = "eos",
        overshoot: bool = False,
        backend: str = "",
    ) -> TraceResult:
        """Generate text with a small language model (SmolLM2-135M-Instruct by default)
        while a regular expression constrains every token, and return the whole trace.

        Each step records the DFA state before and after the token, how many tokens the
        pattern allowed, and the valid mass: the model's own probability of the allowed
        tokens (near 0, the pattern is forcing text the model did not want).

        Args:
            regex: The pattern the whole output must match, e.g. `[a-z]+@[a-z]+\\.com`.
                Python regex syntax without anchors, lookarounds or backreferences.
            prompt: What the model is asked (with the chat template) or continues.
            max_tokens: The most tokens to generate (1 to 1024).
            temperature: 0 for greedy decoding; higher samples more freely (up to 2).
            seed: Random seed for sampling, so a run can be repeated.
            chat: True wraps the prompt in the model's chat template; False continues the
                prompt as raw text.
            top_p: Nucleus sampling over the allowed tokens (1 is off).
            top_k: Sample only among the k likeliest allowed tokens (0 is off).
            prob_limit: Stop at a full match once the allowed tokens hold less than this
                much of the model's probability (seed 002's `prob_limit`; empty is off).
            stop: "eos" runs until the model ends where the pattern accepts or nothing may
                follow; "first" stops at the first full match (as ReLLM).
            overshoot: Also take a token whose beginning completes a match (`0,` after
                `27.0`); the output is cut at the match and the step's `cut` holds the rest.
            backend: Empty for the app's own model, or the name of a server the operator
                configured (`--server NAME=URL`): the server writes under its own engine's
                mask and fsmviz replays each token through the exact automaton. A name,
                never a URL.

        Returns:
            The generated text, whether it matches, why it stopped, and every step.
        """
        try:  # every parameter checked before the model is waited for (fsmviz.params)
            opts = check_generation(
                max_tokens=max_tokens,
                temperature=temperature,
                seed=seed,
                chat=chat,
                top_p=top_p,
                top_k=top_k,
                prob_limit=None if prob_limit == "" else prob_limit,  # a blank form box: off
                stop=stop,
                overshoot=overshoot,
            )
            regex, prompt = pattern(regex), text("prompt", prompt, MAX_PROMPT_CHARS)
            model = model_for(models, backend, MODEL_WAIT)  # a configured server, by name
            result = generate(model, regex, prompt, **opts, draft_tokens=DRAFT_TOKENS)
        except (FsmvizError, ValueError) as error:  # RegexError, IndexTooLarge, model errors
            raise gr.Error(str(error)) from None
        return result.to_dict()  # type: ignore[return-value]

    return trace


def dfa(regex: str) -> DfaResult:
    """Compile a regular expression into its minimal character-level DFA (the
    automaton that guides generation) and return its states, transitions and a
    Graphviz DOT drawing. Needs no model.

    Args:
        regex: The pattern, e.g. `(cat|dog)s?`. Python regex syntax without anchors,
            lookarounds or backreferences.

    Returns:
        States (0 is initial), accepting states, transitions and the DOT source.
    """
    try:
        automaton = compile_regex(pattern(regex))
    except (RegexError, ValueError) as error:
        raise gr.Error(str(error)) from None
    return {**automaton.to_dict(), "dot": to_dot(automaton, title=regex)}  # type: ignore[typeddict-item]


def diagnose_endpoint(models: BackgroundModel) -> Callable[..., DiagnoseResult]:
    """The ``/diagnose`` function, with ``models``' tokenizer when it has one, or the
    tokenizer of the model a call names (``backend``)."""

    def diagnose_tool(regex: str, max_tokens: int = 64, backend: str = "") -> DiagnoseResult:
        """Say why a regex-guided generation may stall, loop, truncate or stop early, before
        anything is generated: patterns no token can spell, repeats a model can ride
        forever, a token budget too small for the shortest match, `hot|hotel` stopping at
        the shorter option, ASCII-only `\\d \\w \\s`, and more. Each finding names the
        states concerned and, where one exists, a rewritten pattern.

        Args:
            regex: The pattern to examine, e.g. `[a-z.]+@[a-z.]+`.
            max_tokens: The token budget the generation will have (for the budget check).
                Without a tokenizer ("vocabulary": "none") only the pattern-level checks
                run and one finding lists the skipped ones.
            backend: Empty for the app's own model, or the name of another model the
                operator offers (`--model NAME=SOURCE`) or of a configured server: the
                findings are then in that model's tokens. A name, never a URL.

        Returns:
            The findings, errors first, and the vocabulary they were checked against.
        """
        try:
            budget = check_generation(max_tokens=max_tokens)["max_tokens"]
            vocab = vocabulary_asked(models, backend)  # the chosen model's tokens
            found = diagnose(pattern(regex), vocab, max_tokens=budget)
        except (FsmvizError, ValueError) as error:
            raise gr.Error(str(error)) from None
        return {
            "pattern": regex,
            "vocabulary": vocab.name if vocab is not None else "none",
            "findings": [
                {
                    "kind": f.kind,
                    "severity": f.severity,
                    "message": f.message,
                    "suggestion": f.suggestion,
                    "states": list(f.states),
                    "steps": list(f.steps),
                }
                for f in found
            ],
        }

    diagnose_tool.__name__ = "diagnose"
    return diagnose_tool


def trace_seconds(regex: str, prompt: str, max_tokens: int = 64, *rest: Any, **options: Any) -> int:
    """``duration`` of a ``/trace`` call on ZeroGPU: one generation of ``max_tokens``."""
    return gpu_seconds(options.get("max_tokens", max_tokens), runs=1)
