"""A schema run as plain data: what the app's ``/schema`` endpoint (and MCP tool) answers.

``schema_answer`` checks every input first (``fsmviz.params``; a schema that cannot be used
is a ``SchemaError`` naming its JSON pointer), compiles the schema (the regex path or the
grammar path), runs the model, and checks the output against the schema. The page wraps it
for Gradio (``fsmviz.app.api.schema``); a notebook or a script calls it as it is.
"""

from __future__ import annotations

from typing import Any

from fsmviz.params import MAX_PROMPT_CHARS, ParameterError, check_generation, choice, text
from fsmviz.schema.convert import WHITESPACE, check_json, compile_schema

__all__ = ["DEFAULT_WHITESPACE", "WHITESPACE_CHOICES", "schema_answer"]

WHITESPACE_CHOICES = tuple(WHITESPACE)
"""The whitespace rules between JSON tokens: none, space (at most one), flexible."""
DEFAULT_WHITESPACE = "space"


def schema_answer(
    schema: str,
    prompt: str,
    max_tokens: int = 64,
    temperature: float = 0.0,
    seed: int = 0,
    whitespace: str = DEFAULT_WHITESPACE,
    *,
    model: Any = None,
) -> dict[str, Any]:
    """Generate JSON for a JSON Schema: ``{"route", "regex", "unenforced", "stricter",
    "trace", "json"}``.

    - ``route``: the compiled schema's ``path``, ``"regex"`` (fsmviz's index over the
      schema's regex) or ``"grammar"`` (llguidance's mask, for a schema no regex can hold:
      ``regex`` is then None). No key of the answer is ``path``: gradio_client takes any
      object with a ``path`` string for a file to download.
    - ``unenforced``: the ``[JSON pointer, keyword]`` pairs the constraint leaves free;
      ``stricter``: the ``[JSON pointer, rule]`` pairs where it refuses JSON the schema
      allows (``compile_schema``).
    - ``json``: whether the output parses and validates (``check_json``), with the JSON
      pointer of the failing part as ``instance_path``; the trace's ``parsed`` is the value
      read back (``fsmviz.schema.run.SchemaTrace``).

    ``model`` defaults to the bundled one; it may be a function that returns the model,
    called once every input is checked. Raises ``SchemaError`` for a schema that cannot be
    used, ``ParameterError`` for a bad parameter (``fsmviz.params``), both before any work.
    """
    opts = check_generation(max_tokens=max_tokens, temperature=temperature, seed=seed)
    prompt = text("prompt", prompt, MAX_PROMPT_CHARS)
    if not isinstance(schema, str):
        raise ParameterError("schema", schema, "a JSON Schema written as JSON text")
    compiled = compile_schema(schema, choice("whitespace", whitespace, WHITESPACE_CHOICES))
    model = model() if callable(model) else model  # a getter: called once all is checked
    if model is None:
        from fsmviz.generation.models import load_model  # torch: loaded only to run

        model = load_model()
    on_grammar = compiled.path == "grammar"  # llguidance's mask where no regex fits
    trace = compiled.generate(model, prompt, **opts)
    check = check_json(trace.text, compiled.schema)
    return {
        "route": compiled.path,
        "regex": None if on_grammar else compiled.regex,
        "unenforced": [list(pair) for pair in compiled.unenforced],
        "stricter": [list(pair) for pair in compiled.stricter],
        "trace": trace.to_dict(),
        "json": {
            "parses": check.parses,
            "valid": check.valid,
            "error": check.error,
            "instance_path": check.path,
            "schema_path": check.schema_path,
        },
    }
