"""JSON Schema in: schema -> regex, clear errors with JSON pointers, schema locations."""

import json
import re
from pathlib import Path

import pytest

import fsmviz
from fsmviz.schema.convert import (
    WHITESPACE,
    SchemaError,
    compile_schema,
    locate,
    regex_from_schema,
)

CASES = Path(__file__).parent / "cases"
ORDER = json.loads((CASES / "schema_22_fields.json").read_text())
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 20}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}


def test_schema_text_and_mapping_give_the_same_regex():
    assert regex_from_schema(json.dumps(PERSON)) == regex_from_schema(PERSON)


def test_the_regex_fullmatches_json_of_the_schema_and_refuses_other_json():
    regex = regex_from_schema(PERSON, whitespace="none")
    assert re.fullmatch(regex, '{"name":"Ada","age":36}')
    assert not re.fullmatch(regex, '{"name":"Ada"}')
    assert not re.fullmatch(regex, '{"name":"Ada","age":"36"}')


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        ("none", '{"name":"A","age":1}', '{ "name":"A","age":1}'),
        ("space", '{ "name": "A", "age": 1 }', '{  "name":"A","age":1}'),
        ("flexible", '{\n\t"name" : "A",\n  "age": 1\n}', '{\r"name":"A","age":1}'),
    ],
)
def test_each_whitespace_choice_allows_exactly_its_pattern(name, good, bad):
    regex = regex_from_schema(PERSON, whitespace=name)
    assert WHITESPACE[name] in regex or name == "none"
    assert re.fullmatch(regex, good)
    assert not re.fullmatch(regex, bad)


def test_default_whitespace_is_outlines_cores_single_optional_space():
    assert regex_from_schema(PERSON) == regex_from_schema(PERSON, whitespace="space")


def test_unknown_whitespace_names_the_choices():
    with pytest.raises(SchemaError, match="none, space, flexible"):
        regex_from_schema(PERSON, whitespace="tabs")


def test_invalid_json_is_a_schema_error_without_a_path():
    with pytest.raises(SchemaError) as caught:
        regex_from_schema('{"type": "object",}')
    assert caught.value.path is None
    assert "line 1" in caught.value.message


def test_a_schema_breaking_the_metaschema_names_the_pointer():
    bad = {"type": "object", "properties": {"age": {"type": "integr"}}}
    with pytest.raises(SchemaError) as caught:
        regex_from_schema(bad)
    assert caught.value.path == "/properties/age/type"
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, fsmviz.errors.FsmvizError)


def test_an_unsupported_construct_names_the_deepest_part():
    bad = {
        "type": "object",
        "properties": {"a": {"type": "object", "properties": {"b": {"$ref": "#/nowhere"}}}},
    }
    with pytest.raises(SchemaError) as caught:
        regex_from_schema(bad)
    assert caught.value.path == "/properties/a/properties/b"
    assert "outlines-core cannot express" in caught.value.message


def test_a_pattern_fsmviz_refuses_is_named_by_its_property():
    bad = {"type": "object", "properties": {"code": {"type": "string", "pattern": "(?<=a)b"}}}
    with pytest.raises(SchemaError) as caught:
        compile_schema(bad, path="regex")
    assert caught.value.path == "/properties/code"
    taken = compile_schema(bad)  # the grammar path takes it, the pattern left free and named
    assert taken.path == "grammar" and ("/properties/code", "pattern") in taken.unenforced


def test_fsmviz_exports_the_schema_names():
    assert fsmviz.regex_from_schema is regex_from_schema
    assert fsmviz.SchemaError is SchemaError


def test_every_property_of_the_22_field_schema_is_located():
    regex = regex_from_schema(ORDER)
    where = locate(ORDER, regex)
    named = {p for _, _, p in where.spans}
    for name, sub in ORDER["properties"].items():
        assert f"/properties/{name}" in named
        for inner in sub.get("properties", {}):
            assert f"/properties/{name}/properties/{inner}" in named
    start, end = where.span_of("/properties/customer/properties/email")
    assert regex[start:end].endswith('{0,40}"')
    assert where.pointer_at((start + 3, start + 5)) == "/properties/customer/properties/email"
    assert where.pointer_at((0, 2)) == ""


def test_a_ref_is_named_by_its_definition():
    schema = {
        "$defs": {"Tag": {"type": "string", "maxLength": 7}},
        "type": "object",
        "properties": {"tag": {"$ref": "#/$defs/Tag"}},
        "required": ["tag"],
    }
    regex = regex_from_schema(schema)
    where = locate(schema, regex)
    at = regex.index("{0,7}")
    assert where.pointer_at((at, at + 5)) == "/$defs/Tag"


def test_the_22_field_schema_compiles_within_the_limits():
    compiled = compile_schema(ORDER)
    assert len(ORDER["properties"]) + 8 >= 22
    assert compiled.regex == regex_from_schema(ORDER)


def test_a_schema_too_large_for_fsmviz_takes_the_grammar_path():
    big = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "blob": {
                "type": "object",
                "properties": {"bio": {"type": "string", "maxLength": 30_000}},
            },
        },
    }
    compiled = compile_schema(big)  # the DFA would be too large: llguidance takes it
    assert compiled.path == "grammar"
    assert "character positions" in compiled.reason
    assert compiled.accepts('{"id": 1, "blob": {"bio": "' + "x" * 5000 + '"}}')
    assert not compiled.accepts('{"id": 1, "blob": {"bio": "' + "x" * 30_001 + '"}}')
