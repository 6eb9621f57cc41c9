"""Pydantic in, object out: a schema run whose trace carries the parsed, validated value.

``compile_schema(schema).generate(model, prompt, **options)`` runs ``fsmviz.generate`` under
the schema's constraint (its regex on the regex path, llguidance's mask on the grammar
path) and returns a ``SchemaTrace``: the ``Trace`` with ``parsed``, the output read back
(``parsed.parse_output``): an instance of the model when the schema was a pydantic model
class, else the JSON value; None when the output does not fit, and ``parse_error`` then
says where and why (a run cut at ``max_tokens``, a keyword the constraint left free).

    >>> from pydantic import BaseModel
    >>> from fsmviz import compile_schema, load_model
    >>> class Point(BaseModel):
    ...     x: int
    ...     y: int
    >>> trace = compile_schema(Point).generate(load_model(), "A point on the grid:")
    >>> type(trace.parsed).__name__, trace.parse_error
    ('Point', None)
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from fsmviz.generation.trace import Trace
from fsmviz.schema.document import SchemaError
from fsmviz.schema.parsed import parse_output

__all__ = ["SchemaRuns", "SchemaTrace"]


@dataclass(frozen=True)
class SchemaTrace(Trace):
    """A ``Trace`` of a schema run with the output read back: ``parsed`` (the pydantic
    instance or the JSON value; None when the output does not fit the schema) and
    ``parse_error`` (why not, with the JSON pointer in the output; None when it fits)."""

    parsed: Any = None
    parse_error: str | None = None

    def to_dict(self) -> dict[str, object]:
        """``Trace.to_dict`` with ``parsed`` as plain JSON data (a model's ``model_dump``)."""
        data = Trace.to_dict(self)
        dump = getattr(self.parsed, "model_dump", None)
        data["parsed"] = dump(mode="json") if callable(dump) else self.parsed
        return data


class SchemaRuns:
    """What both compiled schemas (``SchemaRegex``, ``SchemaGrammar``) do with a model:
    ``parse`` an output, ``generate`` a ``SchemaTrace``. ``source`` is the pydantic model
    class the schema came from (None for a schema given as JSON)."""

    source: type | None
    schema: dict[str, Any]
    path: str

    def parse(self, text: str) -> Any:
        """``text`` read back: the model's instance or the JSON value; ``SchemaError``
        naming where it breaks the schema (``parsed.parse_output``)."""
        return parse_output(text, self.source if self.source is not None else self.schema)

    def generate(self, model: Any, prompt: str, options: Any = None, **overrides: Any):
        """``fsmviz.generate`` under this schema, with the output read back."""
        from fsmviz.generation.generate import generate  # torch: loaded on first use

        constraint = self if self.path == "grammar" else self.regex  # type: ignore[attr-defined]
        trace = generate(model, constraint, prompt, options, **overrides)
        parsed, error = None, None
        try:
            parsed = self.parse(trace.text)
        except SchemaError as failed:
            error = f"{failed.message} (at {failed.path})" if failed.path else failed.message
        kept = {f.name: getattr(trace, f.name) for f in fields(Trace)}
        return SchemaTrace(**kept, parsed=parsed, parse_error=error)
