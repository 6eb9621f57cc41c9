"""Object out: the output of a schema run, parsed and validated (seed 004's "pydantic in,
object out").

``parse_output(text, schema)`` is what ``Trace.parsed`` should hold for a schema run: the
JSON value when ``schema`` is a JSON Schema and the text validates, an instance of the model
when ``schema`` is a pydantic model class, and a ``SchemaError`` naming where in the output
the value breaks the schema otherwise.

>>> parse_output('{"n": 2}', {"type": "object", "properties": {"n": {"type": "integer"}}})
{'n': 2}
>>> from pydantic import BaseModel
>>> class Point(BaseModel):
...     x: int
>>> parse_output('{"x": 3}', Point)
Point(x=3)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fsmviz.schema.document import SchemaError
from fsmviz.schema.load import load_schema
from fsmviz.schema.output import check_json

__all__ = ["parse_output"]


def parse_output(text: str, schema: str | Mapping[str, Any] | type) -> Any:
    """The value ``text`` holds, checked against ``schema`` (see the module doc)."""
    if isinstance(schema, type) and hasattr(schema, "model_validate_json"):
        import pydantic  # optional: only for a model class

        try:
            return schema.model_validate_json(text)
        except pydantic.ValidationError as error:
            first = error.errors()[0]
            where = "".join(f"/{p}" for p in first.get("loc", ()))
            raise SchemaError(f"the output does not fit the model: {first['msg']}", where) from None
    root = load_schema(schema)
    check = check_json(text, root)
    if not check.parses:
        raise SchemaError(f"the output is not JSON: {check.error}")
    if not check.valid:
        raise SchemaError(f"the output breaks the schema: {check.error}", check.path)
    return json.loads(text)
