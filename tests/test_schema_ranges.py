"""Integer bounds as regexes (fsmviz.schema.ranges), checked against arithmetic."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fsmviz.schema import SchemaError, compile_schema, regex_from_schema
from fsmviz.schema.ranges import bounded_integer, fill_ranges, integer_range, mark_ranges

bound = st.one_of(st.none(), st.integers(-(10**6), 10**6))


@given(low=bound, high=bound, n=st.integers(-(10**7), 10**7))
def test_the_range_regex_matches_exactly_the_integers_in_range(low, high, n):
    pattern = re.compile(integer_range(low, high))
    inside = (low is None or n >= low) and (high is None or n <= high)
    assert bool(pattern.fullmatch(str(n))) == inside
    assert not pattern.fullmatch("0" + str(abs(n)))  # JSON has no leading zeros


def test_bounds_of_every_spelling():
    assert bounded_integer({"type": "integer", "minimum": 1.5, "exclusiveMaximum": 10}) == (2, 9)
    assert bounded_integer({"type": "integer", "exclusiveMinimum": -3}) == (-2, None)
    assert bounded_integer({"type": "number", "minimum": 1}) is None
    assert bounded_integer({"type": "integer", "minimum": 1, "maxDigits": 3}) is None
    assert bounded_integer({"type": "integer", "minimum": 10**40}) is None


def test_markers_round_trip_through_a_regex():
    marked = mark_ranges({"properties": {"a": {"type": "integer", "minimum": -2, "maximum": 2}}})
    marker = marked["properties"]["a"]["const"]
    regex = fill_ranges(f'\\{{"a":"{marker}"\\}}')
    assert [n for n in range(-5, 5) if re.fullmatch(regex, f'{{"a":{n}}}')] == [-2, -1, 0, 1, 2]


IMPOSSIBLE = [
    ({"type": "integer", "minimum": 5, "maximum": 1}, '"minimum": 1, "maximum": 5'),
    ({"type": "number", "minimum": 5, "maximum": 1}, '"minimum": 1, "maximum": 5'),
    ({"type": "integer", "exclusiveMinimum": 5, "exclusiveMaximum": 5}, '"const": 5'),
    ({"type": "integer", "minimum": 1.5, "maximum": 1.7}, '"type": "number"'),
    ({"type": "string", "minLength": 5, "maxLength": 1}, '"minLength": 1, "maxLength": 5'),
    ({"type": "array", "minItems": 3, "maxItems": 1}, '"minItems": 1, "maxItems": 3'),
    ({"type": "object", "minProperties": 3, "maxProperties": 1}, '"minProperties": 1'),
    ({"type": "object", "required": ["a", "b"], "maxProperties": 1}, "at least 2"),
]


@pytest.mark.parametrize(("node", "fix"), IMPOSSIBLE)
def test_bounds_no_value_can_meet_are_refused_where_they_are(node, fix):
    # issue 44: {"minimum": 5, "maximum": 1} compiled to a constraint that allows nothing
    schema = {"type": "object", "properties": {"age": node}, "required": ["age"]}
    for build in (compile_schema, regex_from_schema):
        with pytest.raises(SchemaError) as refused:
            build(schema)
        assert refused.value.path == "/properties/age" and fix in refused.value.message


def test_bounds_that_leave_a_value_are_taken():
    assert compile_schema({"type": "integer", "minimum": 3, "maximum": 3}).accepts("3")
    nullable = {"type": ["integer", "null"], "minimum": 5, "maximum": 1}
    assert compile_schema(nullable).accepts("null")  # null is still allowed
    assert compile_schema({"type": "number", "minimum": 1.5, "maximum": 1.7}).accepts("1.6")
