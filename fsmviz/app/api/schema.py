"""``/schema`` and ``/schema_engines``: JSON generated for a JSON Schema, and which engine
gets a schema right.

The answer is the engine's (``fsmviz.schema.answer.schema_answer``: plain data);
``schema_endpoint`` wraps it for ``gr.api``. ``/schema_engines`` needs no model: it asks
each installed engine (fsmviz, outlines-core, llguidance, xgrammar) to compile the schema
and to judge instances made from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

import gradio as gr

from fsmviz.app.api.regex import MODEL_WAIT, trace_seconds
from fsmviz.app.backend import model_for
from fsmviz.app.zerogpu import on_gpu
from fsmviz.errors import FsmvizError
from fsmviz.generation.models import BackgroundModel
from fsmviz.peers.answer import engines_answer
from fsmviz.schema.answer import DEFAULT_WHITESPACE, schema_answer

__all__ = ["EngineResult", "EnginesResult", "schema_endpoint", "schema_engines", "schema_tools"]


def schema_endpoint(get_model: Any) -> Any:
    """The ``/schema`` API function for ``gr.api``: ``schema_answer`` with the page's
    model, every bad input a ``gr.Error``."""

    def schema(
        schema: str,
        prompt: str,
        max_tokens: int = 64,
        temperature: float = 0.0,
        seed: int = 0,
        whitespace: str = DEFAULT_WHITESPACE,
        backend: str = "",
    ) -> dict[str, Any]:
        """Generate JSON for a JSON Schema with a small language model, every token
        constrained by the schema's regex, and say whether the output parses and validates.

        Args:
            schema: The JSON Schema, as JSON text, e.g. `{"type": "object", "properties":
                {"name": {"type": "string", "maxLength": 20}}, "required": ["name"]}`.
            prompt: What the model is asked (with the chat template).
            max_tokens: The most tokens to generate (1 to 1024).
            temperature: 0 for greedy decoding; higher samples more freely (up to 2).
            seed: Random seed for sampling, so a run can be repeated.
            whitespace: Between JSON tokens: none, space (at most one) or flexible (any run
                of spaces, tabs and newlines: the commonest cause of endless output).
            backend: Empty for the app's own model, or the name of a server the operator
                configured (`--server NAME=URL`; a name, never a URL): the server writes
                under its own engine (sent the schema itself) and fsmviz replays each token.

        Returns:
            The schema's regex, the keywords the constraint does not enforce and the rules
            by which it is stricter than the schema (each with its JSON pointer), the whole
            trace, and the JSON check (parses, valid, error).
        """
        model = (lambda: get_model(backend)) if backend else get_model  # a server, by name
        try:
            return schema_answer(
                schema, prompt, max_tokens, temperature, seed, whitespace, model=model
            )
        except (ValueError, FsmvizError) as error:  # FsmvizError: a server's fault, named
            raise gr.Error(str(error)) from None

    return schema


class EngineResult(TypedDict):
    engine: str
    version: str | None
    compiled: bool
    refusal: str
    route: str
    invalid_accepted: list[str]
    valid_rejected: list[str]
    ignored: list[str]
    stricter: list[str]


class EnginesResult(TypedDict):
    """Which engine gets the schema right: each engine's verdict on the schema and on
    instances made from it, and the same as a Markdown table."""

    instances: list[dict[str, Any]]
    engines: list[EngineResult]
    table: str


def schema_tools(models: BackgroundModel) -> dict[str, Callable[..., Any]]:
    """``/schema`` (generation, on the GPU on ZeroGPU) and ``/schema_engines``."""
    schema = schema_endpoint(lambda backend="": model_for(models, backend, MODEL_WAIT))
    return {"schema": on_gpu(schema, trace_seconds), "schema_engines": schema_engines}


def schema_engines(schema: str) -> EnginesResult:
    """Which engine gets your JSON Schema right: fsmviz, outlines-core, llguidance and
    xgrammar (those installed) each compile the schema, or refuse it with their message,
    and judge instances made from it: valid ones (a walk of the schema) and near-misses
    (a bound crossed, a required key dropped, a wrong type), labelled by `jsonschema`.
    An engine that accepts invalid JSON, or cannot write valid JSON, is named with the
    instances that show it; fsmviz also names the keywords it does not enforce, and the
    rules by which it refuses JSON the schema allows (keys in the schema's order...), by
    JSON pointer. Needs no model; takes a few seconds (each engine runs in a child process
    with a time limit).

    Args:
        schema: The JSON Schema, as JSON text, e.g. `{"type": "object", "properties":
            {"qty": {"type": "integer", "minimum": 1}}, "required": ["qty"]}`.

    Returns:
        The instances (text, valid, how each was made), one verdict per engine (compiled
        or its refusal, invalid instances it accepts, valid ones it rejects, keywords it
        names as not enforced) and the same as a Markdown table.
    """
    try:  # a refusal names what is wrong (fsmviz.params, SchemaError with its pointer)
        return engines_answer(schema)  # type: ignore[return-value]
    except (FsmvizError, ValueError) as error:
        raise gr.Error(str(error)) from None
