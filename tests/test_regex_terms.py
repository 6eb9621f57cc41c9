"""``regex_terms.TreeTerms.class_set``: a single character's set made directly (most of a
schema's classes) is the set the general path makes from the sorted code points."""

from __future__ import annotations

import pytest

from fsmviz.automaton.dfa import SURROGATES, complement_ranges, point_ranges
from fsmviz.tokens.fast.derivatives import _Regexes
from fsmviz.tokens.fast.regex_terms import EPS, NONE, TreeTerms

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


@pytest.mark.parametrize(
    ("pattern", "plain"),
    [("ab()()", "ab"), ("a(?:)b(|)", "ab"), ("(a()b){0}()c(){2}", "c"), ("a()*b", "ab")],
)
def test_empty_groups_are_passed_over(pattern: str, plain: str) -> None:
    """A part that matches the empty text only is no term of its own: after the
    characters of ``plain``, ``pattern`` is ``ε`` itself, not a concatenation of empty
    groups (a state apart from ``plain``'s)."""
    regexes = _Regexes()
    tree, _ = regexes.survey(pattern)
    state = regexes.convert(tree, 0)
    for char in plain:
        assert state != EPS
        state = regexes.derive(state, ord(char))
    assert state == EPS
