"""``convert._refless``: a schema text that names no reference skips ``local_refs`` and
``ref_overrides``; one that names a reference, however spelt, still has it checked."""

import json

import pytest

from fsmviz.schema import compile_schema

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
