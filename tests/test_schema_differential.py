"""A compiled schema against JSON Schema, on instances nobody here wrote: every valid instance
the constraint refuses is explained by a rule it names (``.stricter``), every invalid one it
accepts by a keyword it names (``.unenforced``).

The corpus is a sample of the JSON-Schema-Test-Suite kept in ``tests/cases`` (its groups
with an empty subschema or a refusal, and a quarter of the rest), and a few public schemas
of ``bench/schemas_public`` with the instances made from them; ``python -m
bench.differential`` runs the whole suite and all 120 public schemas.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.differential import run_public, run_suite, variants
from fsmviz.schema import stricter as rules
from fsmviz.schema.convert import compile_schema
from fsmviz.schema.differential import canonical, explain

SAMPLE = Path(__file__).resolve().parent / "cases" / "json_schema_test_suite_sample.json"
PUBLIC = Path(__file__).resolve().parent.parent / "bench" / "schemas_public"


def _suite_sample() -> list[tuple[str, dict]]:
    groups = json.loads(SAMPLE.read_text(encoding="utf-8"))["groups"]
    return [(g["file"], {k: v for k, v in g.items() if k != "file"}) for g in groups]


@pytest.fixture(scope="module")
def suite_tally():
    """The sample run once (default whitespace): both the valid and the invalid side."""
    return run_suite(_suite_sample(), None)


def test_every_valid_suite_instance_refused_is_named_by_a_stricter_rule(suite_tally):
    assert suite_tally.compiled >= 0.9 * suite_tally.schemas
    assert suite_tally.refused >= 30  # refusals there are, each one must be explained...
    assert len(suite_tally.rules) >= 5  # ...by rules of several kinds
    assert suite_tally.unexplained == []


def test_every_invalid_suite_instance_accepted_is_named_as_not_enforced(suite_tally):
    assert suite_tally.accepted >= 30
    assert suite_tally.accepted_unexplained == []


def test_without_whitespace_every_refusal_is_still_named():
    groups = [g for g in _suite_sample() if ": {}" not in json.dumps(g[1]["schema"])]
    tally = run_suite(groups, "none")
    assert tally.refused > tally.refused_canonical > 0  # spaces refused, and more than that
    assert tally.rules[rules.WHITESPACE_RULES["none"]] > 0
    assert tally.unexplained == []


def test_instances_of_public_schemas_and_their_respellings_are_written_or_explained():
    names = ("clib", "jasmine", "codex-hooks", "sake", "github-cli-hosts")
    paths = [PUBLIC / "small" / f"{name}.json" for name in names]
    tally = run_public(paths, None)
    assert tally.compiled == tally.schemas == len(names)
    assert tally.valid >= 20 and tally.refused > 0
    assert tally.unexplained == []
    assert tally.accepted_unexplained == []


@pytest.mark.parametrize("whitespace", [None, "none", "flexible"])
def test_an_empty_schema_under_a_key_takes_every_value(whitespace):
    # outlines-core 0.2.14 leaves {}'s alternation ungrouped: no value of "a" was writable
    compiled = compile_schema(
        {"type": "object", "properties": {"a": {}}, "required": ["a"]}, whitespace
    )
    for value in ('"x"', "1", "-2.5e+3", "null", "true", "[]", '{"k":[1,{"m":null}]}'):
        assert compiled.accepts('{"a":' + value + "}"), value
    assert not compiled.accepts('{"a":}') and not compiled.accepts('{"a":1}1')


def test_a_property_name_json_must_escape_is_written_escaped():
    names = ['a"b', "c\nd", "e\\f", "x y.z(+)"]
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names},
              "required": names}  # fmt: skip
    compiled = compile_schema(schema, "none")
    assert compiled.path == "regex"
    assert compiled.accepts(json.dumps({n: 1 for n in names}, separators=(",", ":")))
    assert not compiled.accepts('{"a"b":1,"c\nd":1,"e\\f":1,"x y.z(+)":1}')  # raw, not JSON


def test_the_regex_path_names_what_it_refuses_and_the_grammar_path_what_it_refuses():
    tags = {"type": "array", "items": {"type": "string", "format": "uuid"}}
    schema = {"type": "object", "properties": {"id": {"type": "integer"}, "tags": tags}}
    regex = compile_schema(schema, "none")
    grammar = compile_schema(schema, "none", path="grammar")
    assert ("", rules.WHITESPACE_RULES["none"]) in regex.stricter
    assert {("", rules.KEY_ORDER), ("", rules.LISTED_KEYS)} <= set(regex.stricter)
    assert ("/properties/id", rules.INTEGER) in regex.stricter
    assert ("/properties/tags/items", rules.FORMAT) in regex.stricter
    assert ("", rules.KEY_ORDER) in grammar.stricter
    assert ("", rules.LISTED_KEYS) not in grammar.stricter  # llguidance writes other keys
    assert grammar.accepts('{"id":1,"zz":2}') and not regex.accepts('{"id":1,"zz":2}')


REFUSED = [
    # (schema, valid instance the constraint cannot write, the rule that says why)
    ({"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}, {"b": 1, "a": 2},
     '{"b":1,"a":2}', rules.KEY_ORDER),
    ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": 1, "z": 2}, None,
     rules.LISTED_KEYS),
    ({"properties": {"a": {"type": "integer"}}}, [1, 2], None, rules.OBJECT_ONLY),
    ({"type": "integer"}, 3.0, None, rules.INTEGER),
    ({"enum": [1, {"k": 2, "j": 3}]}, {"j": 3, "k": 2}, None, rules.ONE_SPELLING),
    ({"type": "string", "format": "date"}, "not a date", None, rules.FORMAT),
    ({"type": "array"}, [[[[1]]]], None, rules.DEPTH),
    ({"type": "string"}, "bell\u0007", None, rules.STRINGS_REGEX),
    ({"type": "number"}, 1e5, "1e5", rules.EXPONENT),
    ({"type": "number", "maxDigitsFraction": 2}, 1.125, None, rules.DIGITS),
    ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": 1}, '{ "a" : 1 }',
     rules.WHITESPACE_RULES["none"]),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "value", "text", "rule"), REFUSED)
def test_each_rule_names_a_real_refusal_of_valid_json(schema, value, text, rule):
    import jsonschema

    assert jsonschema.validators.validator_for(schema)(schema).is_valid(value)
    compiled = compile_schema(schema, "none")
    written = text if text is not None else canonical(value, compiled.schema)
    assert not compiled.accepts(written)  # the constraint is stricter than the schema...
    if rule == rules.EXPONENT:  # ...the canonical spelling (1e+5 or 100000.0) it writes
        assert rule in {r for _, r in compiled.stricter}
        assert compiled.accepts("1e+5")
        return
    assert explain(compiled, value, text) is not None  # ...and names why
    assert explain(compiled, value, text)[1] == rule


def test_a_refusal_no_rule_explains_is_reported_as_unexplained():
    compiled = compile_schema({"type": "object", "properties": {"a": {"type": "string"}}})

    class Refuses:  # the same constraint, but one that refuses everything: a bug to report
        schema, path, whitespace, stricter = compiled.schema, "regex", None, compiled.stricter

        def accepts(self, text: str) -> bool:
            return False

    assert explain(Refuses(), {"a": "x"}) is None
    assert explain(compiled, {"a": "x"}) == ("", "")


def test_respellings_keep_the_value_json_schema_sees():
    value = {"n": 1, "items": [2, {"k": True}]}
    made = list(variants(value))
    assert [how for _, _, how in made] == ["keys reversed", "integers as 1.0", "indented"]
    for other, text, _ in made:
        assert json.loads(text) == value and other == value


ORDERED = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
           "required": ["id", "name"]}  # fmt: skip


def test_the_doctor_says_the_constraint_writes_keys_in_the_schemas_order(bundled_vocab):
    from fsmviz.diagnose.schema import diagnose_schema

    found = diagnose_schema(ORDERED, bundled_vocab, whitespace="none")
    rules_found = [f for f in found if f.kind == "stricter_rule"]
    assert rules_found and rules_found[0].pointer == ""
    assert "keys in the schema's order" in rules_found[0].message
    assert '`"name"` first is refused' in rules_found[0].message
    assert any("an integer written plainly" in f.message for f in rules_found)
    grammar = diagnose_schema(compile_schema(ORDERED, "none", path="grammar"), None)
    assert any("llguidance's grammar is stricter" in f.message for f in grammar)


def test_the_engine_table_and_its_page_name_the_stricter_rules():
    from fsmviz.html.schema import engines_html
    from fsmviz.peers.schema import engine_verdicts, verdicts_text

    table = engine_verdicts(ORDERED, engines=("fsmviz",))
    verdict = table.verdicts[0]
    assert f"{rules.KEY_ORDER} at /" in verdict.stricter
    assert "rules stricter than the schema" in verdicts_text(table)
    html = engines_html(table)
    assert "rules stricter than the schema" in html and "keys in the order of" in html
    evil = type(verdict)("fsmviz", "this", True, stricter=("<img src=x onerror=alert(1)>",))
    assert "<img" not in engines_html(type(table)(table.instances, (evil,)))


def test_the_schema_api_answers_what_is_unenforced_and_what_is_stricter(tiny):
    from fsmviz.schema.answer import schema_answer

    schema = {"type": "object", "properties": {"n": {"type": "number", "maximum": 9}},
              "required": ["n"]}  # fmt: skip
    answer = schema_answer(json.dumps(schema), "A number.", 4, whitespace="none", model=tiny)
    assert answer["unenforced"] == [["/properties/n", "maximum"]]
    assert ["", rules.WHITESPACE_RULES["none"]] in answer["stricter"]
    assert ["/properties/n", rules.EXPONENT] in answer["stricter"]


def test_the_command_line_names_the_stricter_rules(tmp_path):
    import io

    from fsmviz.cli import schema_command

    path = tmp_path / "ordered.json"
    path.write_text(json.dumps(ORDERED))
    err = io.StringIO()
    assert schema_command(str(path), whitespace="none", out=io.StringIO(), err=err) == 0
    assert f"stricter than the schema: {rules.KEY_ORDER} at /" in err.getvalue()
