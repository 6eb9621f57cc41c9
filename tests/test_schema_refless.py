"""``convert._refless``: a schema text that names no reference skips ``local_refs`` and
``ref_overrides``; one that names a reference, however spelt, still has it checked."""

import json
from pathlib import Path

import pytest

from fsmviz.schema import SchemaError, compile_schema
from fsmviz.schema.convert import _refless
from fsmviz.schema.limits import regex_cost
from fsmviz.schema.load import load_schema

REMOTE = {"type": "object", "properties": {"a": {"$ref": "other.json#/x"}}, "required": ["a"]}


@pytest.mark.parametrize("spelling", ["$ref", "$\\u0072ef"])
def test_a_remote_ref_in_text_is_named_however_spelt(spelling: str) -> None:
    text = json.dumps(REMOTE).replace("$ref", spelling)
    assert ("/properties/a", "$ref") in compile_schema(text).unenforced


def test_a_tool_list_s_refs_are_kept() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "add",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"],
                },
            },
        }
    ]
    compiled = compile_schema(json.dumps(tools))
    assert compiled.accepts('{"name": "add", "arguments": {"n": 1}}')
    assert not compiled.accepts('{"name": "add", "arguments": {"n": "x"}}')


def _texts() -> list[str]:
    """Schema texts with and without references, a $ref spelt with an escape among them."""
    cases = Path(__file__).parent / "cases"
    schemas = json.loads((cases / "outlines_core_schemas.json").read_text())["schemas"]
    chain = {name: {"$ref": f"#/$defs/{after}"} for name, after in zip("abcd", "bcde", strict=True)}
    schemas.append({"$defs": {**chain, "e": {"type": "integer"}}, "$ref": "#/$defs/a"})
    texts = [json.dumps(s) for s in schemas]
    texts.append((cases / "schema_22_fields.json").read_text())
    texts.append(json.dumps(REMOTE).replace("$ref", "$\\u0072ef"))
    local = {"properties": {"a": {"type": "integer"}, "b": {"$ref": "#/properties/a"}}}
    texts.append(json.dumps(local).replace("$ref", "$\\u0072ef"))  # a depth of 1, escaped
    return texts


def test_a_refless_text_s_cost_needs_no_depth_of_refs() -> None:
    """``regex_cost(root, refs=False)``, asked for a text ``_refless`` tells (and no
    ``$defs``), is the whole estimate: such a schema holds no ``$ref``, so no depth."""
    told = 0
    for text in _texts():
        try:
            loaded = load_schema(text)
        except SchemaError:
            continue
        if _refless(text) and "$defs" not in loaded:
            told += 1
            assert regex_cost(loaded, refs=False) == regex_cost(loaded), text
    assert told >= 20
