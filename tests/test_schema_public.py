"""What public schemas (bench/schemas_public/) taught: JSON Schema as people write it.

Each test holds a small schema written for it, in the shape of a public one that fsmviz got
wrong: valid JSON it could not write, or invalid JSON it took without naming a keyword.
"""

import re

import jsonschema
import pytest

from fsmviz.schema.convert import compile_schema

DRAFT7 = "http://json-schema.org/draft-07/schema#"


@pytest.mark.parametrize("pattern", ["1.0", "^1.0", "1.0$", "^1.0$", "a|^b$", "^(x|y)z", ""])
def test_pattern_is_a_search_on_the_regex_path(pattern):
    # azure-iot-edgehub-deployment: "pattern": "1.0" takes "2024-01-01" (its "1-0")
    compiled = compile_schema({"type": "string", "pattern": pattern}, "none")
    assert compiled.path == "regex"
    for text in ["1.0", "x1.0y", "2024-01-01", "1.0z", "a", "xay", "b", "xb", "xz", "axz", ""]:
        wanted = re.search(pattern, text) is not None
        assert compiled.accepts(f'"{text}"') is wanted, (pattern, text)


def test_pattern_inside_an_object_takes_text_around_it():
    schema = {
        "type": "object",
        "properties": {"version": {"type": "string", "pattern": "1.0"}},
        "required": ["version"],
    }
    compiled = compile_schema(schema, "none")
    assert compiled.path == "regex"
    assert compiled.accepts('{"version":"2024-01-01"}')
    assert compiled.accepts('{"version":"v1.0.3"}')
    assert not compiled.accepts('{"version":"2024"}')


def test_keywords_beside_a_ref_are_ignored_up_to_draft_7():
    # minecraft-loot-table: {"$ref": "#/definitions/numberProvider", "type": ["integer",
    # "object"]}: in draft 7 the $ref replaces the subschema, so a string it allows is valid
    schema = {
        "$schema": DRAFT7,
        "type": "object",
        "properties": {"rolls": {"$ref": "#/definitions/n", "type": "integer"}},
        "definitions": {"n": {"type": ["integer", "string"]}},
    }
    assert jsonschema.Draft7Validator(schema).is_valid({"rolls": "12"})
    compiled = compile_schema(schema, "none")
    assert compiled.accepts('{"rolls":"12"}')
    assert compiled.accepts('{"rolls":3}')
    assert not compiled.accepts('{"rolls":true}')
    assert "type" not in [k for _, k in compiled.unenforced]


def test_keywords_beside_a_ref_apply_from_draft_2019_09():
    schema = {
        "type": "object",
        "properties": {"rolls": {"$ref": "#/$defs/n", "type": "integer"}},
        "$defs": {"n": {"type": ["integer", "string"]}},
    }
    compiled = compile_schema(schema, "none")
    assert compiled.accepts('{"rolls":3}')
    assert not compiled.accepts('{"rolls":"12"}')


def test_min_properties_beside_optional_properties_is_named_not_miscounted():
    # codex-hooks: "hooks" has minProperties 1 and optional properties; llguidance counted
    # only the undeclared keys, so {"SessionStart": [...]} could not be written
    schema = {
        "type": "object",
        "minProperties": 1,
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "additionalProperties": {"type": "string"},
    }
    compiled = compile_schema(schema, "none", path="grammar")
    for text in ['{"a":1}', '{"b":2}', '{"a":1,"b":2}', '{"c":"x"}']:
        assert compiled.accepts(text), text
    assert ("", "minProperties") in compiled.unenforced


def test_max_properties_beside_optional_properties_is_named():
    schema = {"type": "object", "maxProperties": 1, "properties": {"a": {}, "b": {}}}
    compiled = compile_schema(schema, "none", path="grammar")
    assert compiled.accepts('{"a":1}')
    assert ("", "maxProperties") in compiled.unenforced


def test_property_counts_llguidance_reads_right_stay_enforced():
    every_one_required = {
        "type": "object",
        "maxProperties": 2,
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
    }
    compiled = compile_schema(every_one_required, "none", path="grammar")
    assert compiled.accepts('{"a":1,"b":2}')
    assert not compiled.accepts('{"a":1,"b":2,"c":3}')
    assert compiled.unenforced == ()
    implied = {"type": "object", "minProperties": 1, "required": ["a"],
               "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}  # fmt: skip
    compiled = compile_schema(implied, "none", path="grammar")
    assert compiled.accepts('{"a":1}') and not compiled.accepts("{}")
    assert compiled.unenforced == ()
