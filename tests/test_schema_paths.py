"""compile_schema's two paths and its bounds (issues 29 and 33): the regex path where the
schema is regular and small, the grammar path (llguidance) otherwise, every refusal named by
JSON pointer, and the worst schemas costing bounded memory.

The two large schemas run in a child process under an address-space cap (``RLIMIT_AS``,
4 GiB, so a regression is killed there, not the machine) and report their peak memory:
the 2,000-property schema (57 KB; outlines-core's regex for it would be 140 M characters and
1 GB) may use at most 400 MB; the 1.19 MB schema of 40,000 optional strings (outlines-core
grew the server to 24 GB on it) at most 400 MB.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from fsmviz.schema.by_grammar import SchemaGrammar
from fsmviz.schema.convert import SchemaError, SchemaRegex, compile_schema, regex_from_schema
from fsmviz.schema.keywords import unenforced
from fsmviz.schema.limits import MAX_PROPERTIES, regex_cost

TREE = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "maxLength": 10},
        "children": {"type": "array", "items": {"$ref": "#"}, "maxItems": 3},
    },
    "required": ["label"],
    "additionalProperties": False,
}

CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
from fsmviz.schema.convert import SchemaError, compile_schema
n, optional = int(sys.argv[1]), sys.argv[2] == "optional"
props = {f"p{i:05d}": {"type": "string"} for i in range(n)}
schema = {"type": "object", "properties": props}
if not optional:
    schema["required"] = ["p00000"]
text = json.dumps(schema)
try:
    compiled = compile_schema(text, "none")
    answer = {"path": compiled.path, "reason": getattr(compiled, "reason", ""),
              "accepts": compiled.accepts('{"p00001":"x","p00007":"y"}')}
except SchemaError as error:
    answer = {"error": error.message, "pointer": error.path}
answer["bytes"] = len(text)
# VmHWM: this process's own peak (ru_maxrss keeps the forking parent's, across exec)
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
answer["peak_mb"] = int(hwm.split()[1]) / 1024
print(json.dumps(answer))
"""


def _child(n: int, optional: bool = True) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHILD), str(n), "optional" if optional else ""],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_two_thousand_optional_properties_take_the_grammar_path_in_bounded_memory():
    answer = _child(2000)
    assert answer["path"] == "grammar", answer
    assert "would be about" in answer["reason"]  # the estimate refused the regex unbuilt
    assert answer["accepts"] is True
    assert answer["peak_mb"] < 400, answer


def test_forty_thousand_optional_properties_are_refused_by_pointer_in_bounded_memory():
    answer = _child(40_000)
    assert 1_100_000 < answer["bytes"] < 1_300_000  # the 1.19 MB schema of issue 33
    assert answer["pointer"] == "/properties", answer
    assert f"{MAX_PROPERTIES:,}" in answer["error"] and "40,000" in answer["error"]
    assert answer["peak_mb"] < 400, answer


def test_regex_from_schema_refuses_a_quadratic_regex_before_building_it():
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(2000)}}
    with pytest.raises(SchemaError, match="would be about"):
        regex_from_schema(wide)


@pytest.mark.parametrize("n", [3, 10, 40])
def test_the_cost_estimate_is_near_outlines_cores_regex(n):
    props = {f"field{i}": {"type": ["string", "integer", "boolean"][i % 3]} for i in range(n)}
    for required in ([], ["field0"]):
        schema = {"type": "object", "properties": props, "required": required}
        actual = len(regex_from_schema(schema, "none"))
        estimate = regex_cost(schema).length
        assert actual / 2 <= estimate <= actual * 2, (n, required, actual, estimate)


def test_a_recursive_schema_takes_the_grammar_path_and_is_not_cut():
    compiled = compile_schema(TREE, "none")
    assert isinstance(compiled, SchemaGrammar)
    assert "/properties/children/items" in compiled.reason
    deep = {"label": "a", "children": [{"label": "b", "children": [{"label": "c", "children": [
        {"label": "d", "children": [{"label": "e"}]}]}]}]}  # fmt: skip
    assert compiled.accepts(json.dumps(deep, separators=(",", ":")))  # depth 5
    assert not compiled.accepts('{"label":"d",}')  # not JSON
    assert not compiled.accepts('{"label":"a","extra":1}')


def test_a_small_regular_schema_stays_on_the_regex_path():
    compiled = compile_schema(
        {"type": "object", "properties": {"n": {"type": "number", "minimum": 1}},
         "required": ["n"]}, "none")  # fmt: skip
    assert isinstance(compiled, SchemaRegex) and compiled.path == "regex"
    assert compiled.accepts('{"n":0}')  # the regex has no minimum...
    assert compiled.unenforced == (("/properties/n", "minimum"),)  # ...and says so


def test_keywords_outlines_core_refuses_go_to_the_grammar_path_named():
    schema = {"type": "object", "properties": {"ip": {"type": "string", "format": "ipv4"},
              "x": {"not": {"type": "string"}}}, "required": ["ip"]}  # fmt: skip
    compiled = compile_schema(schema, "none")
    assert compiled.path == "grammar"
    assert compiled.unenforced == (("/properties/x", "not"),)
    assert compiled.accepts('{"ip":"10.0.0.1"}')
    assert not compiled.accepts('{"ip":"10.0.0"}')


def test_unenforced_keywords_by_path():
    schema = {"type": "array", "items": {"type": "integer", "multipleOf": 2}, "uniqueItems": True,
              "contains": {"const": 2, "minimum": 0}}  # fmt: skip
    assert unenforced(schema, "regex") == (
        ("", "uniqueItems"), ("", "contains"), ("/items", "multipleOf")
    )  # fmt: skip
    assert unenforced(schema, "grammar") == (("", "uniqueItems"), ("", "contains"))


def test_a_pydantic_model_class_is_a_schema():
    from pydantic import BaseModel, Field

    class Point(BaseModel):
        x: float = Field(ge=0)
        y: int = Field(ge=1, le=12)

    compiled = compile_schema(Point, "none")
    assert compiled.accepts('{"x":1,"y":2}') and not compiled.accepts('{"x":1,"y":13}')
    assert not compiled.accepts('{"x":-1,"y":2}')
    assert compiled.unenforced == ()


def test_integer_bounds_are_enforced_on_the_regex_path():
    port = {"type": "object", "properties": {"port": {"type": "integer", "minimum": 1,
            "maximum": 65535}, "count": {"type": "integer", "exclusiveMinimum": 0}},
            "required": ["port", "count"]}  # fmt: skip
    compiled = compile_schema(port, "none")
    assert compiled.path == "regex" and compiled.unenforced == ()
    assert compiled.accepts('{"port":443,"count":1}')
    assert not compiled.accepts('{"port":0,"count":1}')
    assert not compiled.accepts('{"port":65536,"count":1}')
    assert not compiled.accepts('{"port":80,"count":0}')
    where = compiled.locations.span_of("/properties/port")
    assert where is not None and "3[0-5]" in compiled.regex[where[0] : where[1]]


@pytest.mark.parametrize(
    ("schema", "where", "words"),
    [
        ("[" * 5000 + "]" * 5000, "", "5,000 levels"),
        ({"properties": {"a": {"allOf": [{}] * 3}}} | {"x": json.loads("[" * 200 + "]" * 200)},
         "/x/0/0", "nested more than"),
        ("x" * 2_000_001, "", "2,000,001 bytes"),
        ('{"type": "strin"}', "/type", "breaks the JSON Schema rules"),
    ],
)  # fmt: skip
def test_size_and_shape_refusals_name_where_and_what(schema, where, words):
    with pytest.raises(SchemaError) as caught:
        compile_schema(schema)
    assert words in caught.value.message
    assert caught.value.path is not None and caught.value.path.startswith(where)


def test_a_mapping_nested_deeper_than_python_recurses_is_refused_not_a_crash():
    deep: dict = {}
    node = deep
    for _ in range(100_000):
        node["not"] = {}
        node = node["not"]
    with pytest.raises(SchemaError, match="nested more than"):
        compile_schema(deep)


def test_a_regex_longer_than_ten_thousand_characters_compiles():
    kinds = [{"type": "integer"}, {"type": "boolean"}, {"type": "string", "maxLength": 20}]
    long_name = "a_field_name_as_long_as_a_sentence_" * 7  # long text, few states: the
    props = {f"{long_name}{i}": kinds[i % 3] for i in range(40)}  # DFA stays well in its 1 s
    schema = {"type": "object", "properties": props, "required": list(props)}
    compiled = compile_schema(schema, "none", path="regex")  # past REGEX_POSITIONS: asked
    assert compiled.path == "regex" and len(compiled.regex) > 10_000
    assert compile_schema(schema, "none").path == "grammar"  # the faster path by default


def test_a_tool_list_is_one_call_of_one_of_its_tools():
    tools = [
        {"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
        {"name": "add", "inputSchema": {"$defs": {"n": {"type": "integer"}}, "type": "object",
         "properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["a"]}},
    ]  # fmt: skip
    compiled = compile_schema(json.dumps(tools), "none")
    assert compiled.accepts('{"name":"get_weather","arguments":{"city":"Oslo"}}')
    assert compiled.accepts('{"name":"add","arguments":{"a":3}}')
    assert not compiled.accepts('{"name":"add","arguments":{"a":"x"}}')
    assert not compiled.accepts('{"name":"get_weather","arguments":{"a":3}}')
    with pytest.raises(SchemaError) as caught:
        compile_schema([{"name": "ok"}, {"parameters": {}}])
    assert caught.value.path == "/1"


@pytest.mark.parametrize("whitespace", [None, "none", "space", "flexible"])
def test_both_paths_put_the_same_whitespace_between_tokens(whitespace):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
              "required": ["a", "b"]}  # fmt: skip
    grammar = compile_schema(schema, whitespace, path="grammar")
    regex = compile_schema(schema, whitespace, path="regex")
    assert (grammar.path, regex.path) == ("grammar", "regex")
    for text in ['{"a":1,"b":2}', '{"a": 1, "b": 2}', '{ "a" : 1 , "b" : 2 }', '{\n"a":1,"b":2}',
                 '{"a":  1,"b":2}']:  # fmt: skip
        assert grammar.accepts(text) == regex.accepts(text), text


def test_a_path_that_cannot_take_the_schema_says_so():
    with pytest.raises(SchemaError, match="leads back into itself"):
        compile_schema(TREE, path="regex")
    with pytest.raises(SchemaError, match="unknown path"):
        compile_schema({}, path="dfa")


def test_the_page_uses_a_grammar_path_schema_and_says_why():
    from fsmviz.html.schema import in_use, mode_html, use_schema

    used = use_schema(json.dumps(TREE), "none", None)
    assert used.error == ""
    assert used.choice.path == "grammar" and used.choice.regex == ""
    assert "leads back into itself" in used.choice.reason
    assert in_use(used.choice, "") is used.choice and in_use(used.choice, "[0-9]") is None
    note = mode_html(used.choice, "")
    assert "grammar path" in note and "leads back into itself" in note


def test_parse_output_names_where_the_output_breaks_the_schema():
    from fsmviz.schema.parsed import parse_output

    with pytest.raises(SchemaError) as caught:
        parse_output('{"label": 5}', TREE)
    assert caught.value.path == "/label"
    assert parse_output('{"label": "a"}', TREE) == {"label": "a"}


def test_the_command_line_prints_the_grammar_path_and_reads_with_a_cap(tmp_path):
    import io

    from fsmviz.cli import schema_command

    path = tmp_path / "tree.json"
    path.write_text(json.dumps(TREE))
    out, err = io.StringIO(), io.StringIO()
    assert schema_command(str(path), whitespace="none", out=out, err=err) == 0
    assert "json_schema" in out.getvalue() and "grammar path" in err.getvalue()
    err = io.StringIO()
    assert schema_command("/dev/zero", out=out, err=err) == 2  # not read whole
    assert "bytes" in err.getvalue()


def test_a_recursive_schema_generates_on_the_grammar_path(tiny):
    """The grammar path runs: llguidance's mask in fsmviz's step loop (``stream`` takes the
    compiled schema), every finished run valid JSON for the schema (the tiny random model
    rambles, so only runs that ended are checked, and at least one must end)."""
    import jsonschema

    from fsmviz import generate

    compiled = compile_schema(TREE)
    assert compiled.path == "grammar"
    ended = []
    for seed in range(4):
        trace = generate(tiny, compiled, "A tree:", max_tokens=40, seed=seed, temperature=1.0)
        assert trace.matched == compiled.accepts(trace.text)
        if trace.stop_reason == "accepted":
            jsonschema.validate(json.loads(trace.text), TREE)
            ended.append(trace.text)
    assert ended, "no run ended"


def test_a_remote_or_dangling_ref_is_taken_with_its_ref_named_not_enforced():
    """Public schemas point at other files (``base-04.json#/definitions/path``): fsmviz
    does not fetch them; the subschema allows any value there, and the $ref is named."""
    schema = {
        "type": "object",
        "properties": {
            "root": {"$ref": "base-04.json#/definitions/path", "description": "a path"},
            "lost": {"$ref": "#/definitions/nowhere"},
            "n": {"type": "integer"},
        },
        "required": ["root"],
    }
    compiled = compile_schema(schema, "none")
    assert {("/properties/root", "$ref"), ("/properties/lost", "$ref")} <= set(compiled.unenforced)
    assert compiled.accepts('{"root":"anything","lost":[1],"n":3}')
    assert not compiled.accepts('{"root":1,"n":"x"}')


def test_a_pattern_llguidance_cannot_read_is_dropped_and_named():
    schema = {
        "type": "object",
        "patternProperties": {"^(?!@@)[a-z]+$": {"type": "string"}},
        "properties": {"id": {"type": "string", "pattern": "^(?!x)[a-z]+$"}},
        "additionalProperties": False,
    }
    compiled = compile_schema(schema, "none", path="grammar")
    assert {("", "patternProperties"), ("/properties/id", "pattern")} <= set(compiled.unenforced)
    assert compiled.accepts('{"id":"xa","any":"v"}') and not compiled.accepts('{"any":1}')


def test_int64_bounds_llguidance_cannot_write_are_left_free_and_named():
    """Java and pydantic write int64 bounds; llguidance cannot write that range as a regex.
    A property may be named like a keyword ("default"): its schema is still relaxed."""
    long = {"type": "integer", "minimum": -(2**63), "maximum": 2**63 - 1}
    schema = {
        "type": "object",
        "properties": {"default": long, "next": {"$ref": "#"}},
        "additionalProperties": False,
    }
    compiled = compile_schema(schema, "none")
    assert compiled.path == "grammar"
    assert ("/properties/default", "minimum") in compiled.unenforced
    assert compiled.accepts('{"default":12,"next":{"default":-3}}')


@pytest.mark.parametrize("extra", [True, {"type": "string"}])
def test_additional_properties_beside_properties_take_the_grammar_path(extra):
    """outlines-core's regex writes only the listed properties and drops
    ``additionalProperties`` without a word (found by llama.cpp's schema tests): such a
    schema takes the grammar path, where an extra property is written as the schema allows."""
    schema = {"properties": {"a": {"type": "integer"}}, "additionalProperties": extra}
    compiled = compile_schema(json.dumps(schema))
    assert isinstance(compiled, SchemaGrammar)
    assert "additionalProperties" in compiled.reason
    assert compiled.accepts('{"a": 42, "c": ""}')
    assert not compiled.accepts('{"a": ""}')
    closed = compile_schema(json.dumps({**schema, "additionalProperties": False}))
    assert isinstance(closed, SchemaRegex)
    assert not closed.accepts('{"a": 42, "c": ""}')
