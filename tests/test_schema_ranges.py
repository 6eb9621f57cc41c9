"""Integer bounds as regexes (fsmviz.schema.ranges), checked against arithmetic."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

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
