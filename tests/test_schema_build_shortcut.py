"""``convert._build`` hands a schema's text to outlines-core as it is where its rewrites
(``search_patterns``, ``mark_ranges``, ``plain_keys``) would change nothing
(``convert._rewrites_nothing``: no backslash, none of the keys they act on). The regex
must be the one the rewrites' path builds, for every schema, told so or not."""

import json
from pathlib import Path

import pytest
from outlines_core.json_schema import build_regex_from_schema

from fsmviz.schema import convert
from fsmviz.schema.mend import escaped_keys, group_any_values, plain_keys
from fsmviz.schema.patterns import search_patterns
from fsmviz.schema.ranges import fill_ranges, mark_ranges

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "cases"

MADE = [  # each rewrite's trigger, and near misses that are no trigger
    {"type": "integer", "minimum": 3, "maximum": 250},
    {"type": "integer", "exclusiveMinimum": -4},
    {"type": "integer", "exclusiveMaximum": 1000},
    {"type": "number", "minimum": 0},
    {"type": "number", "exclusiveMinimum": 0},
    {"type": "string", "pattern": "^[a-z]+$"},
    {"type": "string", "pattern": "ab"},
    {"properties": {'a"b': {"type": "integer"}}, "required": ['a"b']},
    {"properties": {"a\\b": {"type": "boolean"}, "tab\there": {"type": "null"}}},
    {"properties": {"pattern": {"type": "string"}, "minimum": {"type": "integer"}}},
    {"properties": {"patternish": {"type": "string"}}, "description": "no minimum"},
    {"properties": {"x": {"const": "__fsmviz_int_1_9__"}}},
    {"type": "object", "properties": {"é": {"type": "string", "maxLength": 3}}},
    {"enum": ["minimum", "pattern", 'q"q']},
    {"type": "array", "items": {"type": "integer", "maximum": 9}, "maxItems": 2},
]


def _schemas() -> list[object]:
    found: list[object] = list(MADE)
    found += json.loads((CASES / "outlines_core_schemas.json").read_text())["schemas"]
    found.append(json.loads((CASES / "schema_22_fields.json").read_text()))
    for path in sorted((ROOT / "bench" / "schemas").rglob("*.json")):
        if path.stat().st_size < 4_000:  # the larger take outlines-core seconds to build
            found.append(json.loads(path.read_text()))
    return found


def _rewritten(text: str, whitespace: str | None) -> str:
    """``_build`` with its rewrites always made: the plain definition."""
    plain, names = plain_keys(mark_ranges(search_patterns(json.loads(text))))
    regex = fill_ranges(build_regex_from_schema(json.dumps(plain), whitespace))
    return escaped_keys(group_any_values(regex, whitespace), names)


def _outcome(build, text: str, whitespace: str | None) -> str:
    try:
        return build(text, whitespace)
    except (ValueError, TypeError) as error:  # refused alike, or not
        return f"refused: {type(error).__name__}"


@pytest.mark.parametrize("whitespace", [None, ""])
def test_the_regex_is_the_rewrites_path_s_told_or_not(whitespace):
    told = 0
    for schema in _schemas():
        text = json.dumps(schema)
        quick = convert._rewrites_nothing(text)
        if quick:
            assert json.dumps(json.loads(text)) == text
            told += 1
        expected = _outcome(_rewritten, text, whitespace)
        assert _outcome(convert._build, text, whitespace) == expected, (quick, text[:120])
    assert told >= 20  # the shortcut is taken, by the 22-field schema among others
