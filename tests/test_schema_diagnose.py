"""The doctor speaks schema: findings name the field, suggestions are schemas that work."""

import json
import re

import pytest

from fsmviz import Vocabulary
from fsmviz.diagnose.schema import diagnose_schema, schema_findings
from fsmviz.schema.convert import regex_from_schema

LOOSE = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}},
        "version": {"type": "string", "pattern": "[0-9.]+"},
        "age": {"type": "integer"},
    },
    "required": ["name", "tags", "version", "age"],
}


@pytest.fixture(scope="session")
def vocab():
    return Vocabulary.bundled()


@pytest.fixture(scope="module")
def findings(vocab):
    return diagnose_schema(LOOSE, vocab, whitespace="flexible")


def _by(findings, kind):
    return {f.pointer: f for f in findings if f.kind == kind}


def test_an_unbounded_string_is_named_by_its_field(findings):
    found = _by(findings, "unbounded_string")
    assert set(found) == {"/properties/name"}
    assert "`/properties/name`" in found["/properties/name"].message


def test_an_unbounded_array_is_named_by_its_field(findings):
    assert set(_by(findings, "unbounded_array")) == {"/properties/tags"}


def test_flexible_whitespace_is_one_finding_that_suggests_none(findings):
    found = [f for f in findings if f.kind == "flexible_whitespace"]
    assert len(found) == 1 and found[0].whitespace == "none"
    whitespace_loops = [
        f for f in findings if f.kind == "unbounded_repeat" and f.finding.fragment == r"[\n\t ]*"
    ]
    assert whitespace_loops == []


def test_a_regex_finding_inside_a_pattern_is_named_by_the_field(findings):
    found = _by(findings, "unbounded_repeat")
    assert "/properties/version" in found
    assert found["/properties/version"].message.startswith("`/properties/version`: ")
    assert found["/properties/version"].span is not None


def test_the_doctor_does_not_repeat_what_the_schema_findings_say(findings):
    repeats = [f for f in findings if f.kind == "unbounded_repeat"]
    assert {f.pointer for f in repeats}.isdisjoint({"/properties/name", "/properties/tags"})


@pytest.mark.parametrize("kind", ["unbounded_string", "unbounded_array", "unbounded_digits"])
def test_each_suggested_schema_removes_its_finding_and_still_compiles(kind):
    before = [f for f in schema_findings(LOOSE) if f.kind == kind and f.schema]
    assert before
    for finding in before:
        fixed = json.loads(finding.schema)
        regex_from_schema(fixed)
        after = {(f.kind, f.pointer) for f in schema_findings(fixed)}
        assert (kind, finding.pointer) not in after


def test_a_bounded_integer_suggestion_still_allows_one_digit():
    (finding,) = [f for f in schema_findings(LOOSE) if f.pointer == "/properties/age"]
    regex = regex_from_schema({"type": "integer", "maxDigits": 9})
    assert '"maxDigits": 9' in finding.schema
    assert re.fullmatch(regex, "7") and re.fullmatch(regex, "123456789")
    assert not re.fullmatch(regex, "1234567890")


def test_free_form_objects_and_ignored_keywords_are_found():
    schema = {
        "type": "object",
        "properties": {"extra": {"type": "object"}, "n": {"type": "number", "minimum": 3}},
    }
    found = {(f.kind, f.pointer) for f in schema_findings(schema)}
    assert ("free_form_object", "/properties/extra") in found
    assert ("ignored_keyword", "/properties/n/minimum") in found


@pytest.mark.parametrize(
    ("node", "flagged"),
    [({"minimum": 0, "maximum": 120}, False),
     ({"exclusiveMinimum": 0, "exclusiveMaximum": 9}, False),
     ({"minimum": 0}, True), ({"maximum": 120}, True),
     ({"minimum": 0, "maximum": 120, "exclusiveMinimum": True}, True),  # draft 4: no range
     ({"exclusiveMinimum": True, "exclusiveMaximum": True}, True)],
)  # fmt: skip
def test_an_integer_bounded_on_both_sides_has_bounded_digits(node, flagged):
    draft = {"$schema": "http://json-schema.org/draft-04/schema#"}
    schema = {**(draft if True in node.values() else {}), "type": "object",
              "properties": {"age": {"type": "integer", **node}}}  # fmt: skip
    kinds = [f.kind for f in schema_findings(schema)]
    assert ("unbounded_digits" in kinds) == flagged
    if not flagged:  # and the regex does spell only numbers in range
        assert "[0-9]*" not in regex_from_schema(schema)
