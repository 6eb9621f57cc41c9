"""``regex_terms.TreeTerms.class_set``: a single character's set made directly (most of a
schema's classes) is the set the general path makes from the sorted code points."""

from __future__ import annotations

import pytest

from fsmviz.automaton.dfa import SURROGATES, complement_ranges, point_ranges
from fsmviz.tokens.fast.regex_terms import NONE, TreeTerms

CLASSES = ["a", '"', "\n", "\x00", "é", "日", "\U0010ffff", "\ud800", "\udfff", "ab", "az"]


@pytest.mark.parametrize("negated", [False, True])
@pytest.mark.parametrize("text", CLASSES)
def test_a_class_set_is_its_code_points_ranges(text: str, negated: bool) -> None:
    terms = TreeTerms()
    found = terms.class_set(frozenset(text), negated)
    lo, hi = SURROGATES
    points = sorted(p for p in map(ord, text) if not lo <= p <= hi)
    ranges = complement_ranges(points) if negated else point_ranges(points)
    if not ranges:
        assert found == NONE
        return
    assert terms.nodes[found][1] == ranges
    bounds = [bound for low, high in ranges for bound in (low, high + 1)]
    assert terms.bounds[found] == bounds
