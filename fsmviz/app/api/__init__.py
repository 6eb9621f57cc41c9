"""The app's API: Gradio endpoints ``/trace``, ``/dfa``, ``/diagnose``, ``/schema``,
``/schema_engines``, ``/grammar``, and the same as MCP tools (``python app.py --mcp``),
all registered here (``add_api``, ``tools``).

Gradio builds each endpoint's schema from the function itself, and its MCP server turns
that into a tool: the name is the ``api_name``, the description and the parameters' meaning
come from the docstring (Google style: an ``Args:`` section), the types from the hints, the
result's shape from the ``TypedDict`` it returns. So these functions are written for an
agent to read: what each does, what every argument means, what comes back.

Read in this order:

* ``answers``  every failure of a call a message (never ``{"error": null}``, never a
  traceback);
* ``arity``    how many values a call gives, said in the endpoint's own words;
* ``regex``    ``/trace``, ``/dfa``, ``/diagnose`` (``regex_tools``);
* ``schema``   ``/schema`` and ``/schema_engines`` (``schema_tools``);
* ``grammar``  ``/grammar`` (``grammar_tools``).

Each endpoint wraps an engine function that answers with plain data
(``fsmviz.grammar.answer``, ``fsmviz.schema.answer``...): here only the Gradio side, every
bad input a ``gr.Error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from fsmviz.app.api.answers import answered
from fsmviz.app.api.arity import check_arity, signature_of
from fsmviz.app.api.grammar import grammar_endpoint
from fsmviz.app.api.regex import (
    MODEL_WAIT,
    DfaResult,
    DiagnoseResult,
    FindingResult,
    TraceResult,
    regex_tools,
    trace_seconds,
)
from fsmviz.app.api.schema import EnginesResult, schema_engines, schema_tools
from fsmviz.app.backend import model_for
from fsmviz.app.leaving import leaves_with_client
from fsmviz.app.zerogpu import on_gpu
from fsmviz.generation.models import BackgroundModel

__all__ = [
    "GENERATING",
    "ONE_AT_A_TIME",
    "DfaResult",
    "DiagnoseResult",
    "EnginesResult",
    "FindingResult",
    "TraceResult",
    "add_api",
    "schema_engines",
    "tools",
    "trace_seconds",
]

GENERATING = ("trace", "schema", "grammar")
"""The endpoints that run the model: at most ``runs_at_once`` calls of each at a time."""


ONE_AT_A_TIME = ("schema_engines",)
"""The endpoints that start a child process per engine: one call at a time."""


def add_api(models: BackgroundModel, runs_at_once: int) -> None:
    """Register every endpoint of ``tools`` on the Blocks being built."""
    from gradio.context import Context

    signatures = {}
    for name, fn in tools(models).items():
        limit = runs_at_once if name in GENERATING else 1 if name in ONE_AT_A_TIME else None
        # no {"error": null} (answered); a run stops when its client leaves (leaving)
        gr.api(answered(leaves_with_client(fn)), api_name=name, concurrency_limit=limit)
        signatures[name] = signature_of(fn)
    if Context.root_block is not None:  # too many or too few values: our words (arity)
        check_arity(Context.root_block, signatures)


def tools(models: BackgroundModel) -> dict[str, Callable[..., Any]]:
    """The API functions (and MCP tools), by endpoint name, answering with ``models``."""
    return {**regex_tools(models), **schema_tools(models), **grammar_tools(models)}


def grammar_tools(models: BackgroundModel) -> dict[str, Callable[..., Any]]:
    """``/grammar`` (generation, on the GPU on ZeroGPU)."""
    grammar = grammar_endpoint(lambda backend="": model_for(models, backend, MODEL_WAIT))
    return {"grammar": on_gpu(grammar, trace_seconds)}
