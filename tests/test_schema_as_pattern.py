"""A compiled schema is a constraint like any other: ``generate(model, compile_schema(...),
prompt)`` runs it on either path (the regex path as its regex, the grammar path under
llguidance's mask), judged by the schema's own ``accepts``."""

from __future__ import annotations

import json

import pytest

from fsmviz import compile_schema
from fsmviz.errors import FsmvizError
from fsmviz.generation.generate import generate

FLAT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TREE = {
    "type": "object",
    "properties": {"kids": {"type": "array", "items": {"$ref": "#"}, "maxItems": 1}},
    "required": ["kids"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(("schema", "path"), [(FLAT, "regex"), (TREE, "grammar")])
def test_generate_takes_a_compiled_schema_on_either_path(tiny, schema, path) -> None:
    compiled = compile_schema(schema)
    assert compiled.path == path
    matched = 0
    for seed in range(3):
        trace = generate(tiny, compiled, "JSON:", max_tokens=40, temperature=1.0, seed=seed)
        assert trace.matched == compiled.accepts(trace.text)
        assert (trace.stop_reason == "accepted") == trace.matched, trace.stop_reason
        if trace.matched:
            json.loads(trace.text)
            matched += 1
    assert matched
    same = compiled.generate(tiny, "JSON:", max_tokens=40, temperature=1.0, seed=0)
    first = generate(tiny, compiled, "JSON:", max_tokens=40, temperature=1.0, seed=0)
    assert same.text == first.text  # the same run as the schema's own generate


def test_generate_names_what_it_cannot_run() -> None:
    with pytest.raises(FsmvizError, match="cannot generate under a dict"):
        generate(None, {"type": "object"}, "x")  # type: ignore[arg-type]
