"""What public schemas (bench/schemas_public/) taught: JSON Schema as people write it.

Each test holds a small schema written for it, in the shape of a public one that fsmviz got
wrong: valid JSON it could not write, or invalid JSON it took without naming a keyword.
"""

import json
import re

import jsonschema
import pytest

from fsmviz.schema.convert import SchemaError, compile_schema

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


def _agrees(compiled, schema, texts, named=()):
    """Each text accepted exactly when jsonschema calls it valid (or breaks a named one)."""
    validator = jsonschema.validators.validator_for(schema)(schema)
    for text, breaks in texts:
        wanted = validator.is_valid(json.loads(text)) or breaks in named
        assert compiled.accepts(text) is wanted, text


def test_a_recursive_definition_extended_by_allof_is_taken_exactly():
    # dart-test: a test configuration's tags are test configurations extended by allOf
    # (keys in the order of the merged properties, the order llguidance writes)
    schema = {
        "definitions": {
            "test": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "tags": {
                    "type": "object", "additionalProperties": {"$ref": "#/definitions/inner"}}},
            },
            "inner": {"allOf": [{"$ref": "#/definitions/test"},
                                {"properties": {"paths": {"type": "array"}},
                                 "required": ["paths"]}]},
        },
        "$ref": "#/definitions/test",
    }  # fmt: skip
    compiled = compile_schema(schema, "none")
    assert compiled.path == "grammar" and compiled.unenforced == ()
    _agrees(compiled, schema, [
        ('{"name":"a"}', ""), ('{"tags":{"x":{"name":"b","paths":[]}}}', ""),
        ('{"tags":{"x":{"name":"b"}}}', ""), ('{"tags":{"x":{"name":1,"paths":[]}}}', ""),
        ('{"tags":{"x":{"tags":{"y":{"name":"c","paths":[]}},"paths":[]}}}', ""),
        ('{"tags":{"x":{"tags":{"y":{"name":2,"paths":[]}},"paths":[]}}}', ""),
    ])  # fmt: skip


def test_the_same_recursive_property_in_a_branch_is_taken_exactly():
    # grpc-api-gateway: Schema.Item declares "schema" and its oneOf branch declares it again
    schema = {
        "$defs": {"S": {"type": "object", "properties": {
            "item": {"$ref": "#/$defs/Item"}, "title": {"type": "string"}}},
            "Item": {"type": "object",
                     "properties": {"schema": {"$ref": "#/$defs/S"}, "list": {"type": "array"}},
                     "anyOf": [{"properties": {"schema": {"$ref": "#/$defs/S"}},
                                "required": ["schema"]},
                               {"required": ["list"]}]}},
        "$ref": "#/$defs/S",
    }  # fmt: skip
    compiled = compile_schema(schema, "none")
    assert compiled.unenforced == ()
    _agrees(compiled, schema, [
        ('{"item":{"schema":{"title":"a"}}}', ""), ('{"item":{"list":[]}}', ""),
        ('{"item":{}}', ""), ('{"item":{"schema":{"title":3}}}', ""),
        ('{"item":{"schema":{"item":{"schema":{"title":"x"}}}}}', ""),
        ('{"item":{"schema":{"item":{"schema":{"title":1}}}}}', ""),
    ])  # fmt: skip


def test_keywords_beside_recursive_alternatives_hold_elsewhere_and_are_named():
    # resjson: {"minProperties": 1, "anyOf": [{"type": "string"}, {"$ref": resource}]}
    schema = {
        "type": "object",
        "additionalProperties": {"maxLength": 3, "anyOf": [{"type": "string"},
                                                           {"$ref": "#/$defs/r"}]},
        "$defs": {"r": {"type": "object", "additionalProperties": {
            "maxLength": 3, "anyOf": [{"type": "string"}, {"$ref": "#/$defs/r"}]}}},
    }  # fmt: skip
    compiled = compile_schema(schema, "none")
    assert compiled.unenforced == (
        ("/$defs/r/additionalProperties", "maxLength"),
        ("/additionalProperties", "maxLength"),
    )
    _agrees(compiled, schema, [
        ('{"a":"abc"}', ""), ('{"a":"abcd"}', ""), ('{"a":{"b":"xyz"}}', ""),
        ('{"a":{"b":"wxyz"}}', ""), ('{"a":{"b":{"c":"v"}}}', ""), ('{"a":3}', ""),
    ])  # fmt: skip


def test_a_circular_ref_llguidance_still_refuses_is_located_and_explained():
    # T is only a $ref to U, so its body cannot be copied into the allOf: still refused
    schema = {
        "definitions": {
            "T": {"$ref": "#/definitions/U"},
            "U": {"type": "object", "properties": {"k": {"$ref": "#/definitions/I"}}},
            "I": {"allOf": [{"$ref": "#/definitions/T"}, {"required": ["k"]}]},
        },
        "$ref": "#/definitions/T",
    }
    with pytest.raises(SchemaError) as refused:
        compile_schema(schema)
    assert refused.value.path == "/definitions/I/allOf/0"
    assert "write that $ref alone" in refused.value.message
    assert "#/definitions/T" in refused.value.message


def test_keywords_moved_into_alternatives_keep_their_own_reading():
    # "additionalProperties": false beside alternatives is relative to its own "properties":
    # moved into an alternative, it must not take the alternative's properties for its own
    from fsmviz.schema.circular import untangle_circular_refs

    schema = {
        "properties": {"a": {"type": "string"}},
        "additionalProperties": False,
        "anyOf": [{"properties": {"b": {"type": "integer"}}}, {"$ref": "#/$defs/r"}, {}],
        "$defs": {"r": {"type": "object", "properties": {"next": {"$ref": "#/$defs/r"}}}},
    }
    untangled, named = untangle_circular_refs(schema)
    beside = {"properties": {"a": {"type": "string"}}, "additionalProperties": False}
    assert untangled["anyOf"] == [
        {"allOf": [{"properties": {"b": {"type": "integer"}}}, beside]},
        {"$ref": "#/$defs/r"},
        beside,
    ]
    assert named == (("", "properties"), ("", "additionalProperties"))
    assert "properties" not in untangled and "additionalProperties" not in untangled
    # where the $ref's alternative does not hold, the rewrite is exact
    r = jsonschema.Draft202012Validator({"$ref": "#/$defs/r", "$defs": schema["$defs"]})
    checked = 0
    for value in [{"a": "x", "next": 5}, {"b": 1, "next": 5}, {"next": 5}, "x", 3, {"a": 1}]:
        if not r.is_valid(value):
            was = jsonschema.Draft202012Validator(schema).is_valid(value)
            assert jsonschema.Draft202012Validator(untangled).is_valid(value) is was, value
            checked += 1
    assert checked == 5


def test_a_branch_with_its_own_additional_properties_keeps_its_copy():
    from fsmviz.schema.circular import untangle_circular_refs

    s = {"$ref": "#/$defs/S"}
    schema = {
        "$defs": {"S": {"type": "object", "properties": {"kid": {"$ref": "#/$defs/S"}}}},
        "properties": {"kid": s},
        "anyOf": [{"properties": {"kid": s}, "additionalProperties": False}],
    }
    untangled, named = untangle_circular_refs(schema)
    assert untangled["anyOf"][0]["properties"] == {"kid": s}
