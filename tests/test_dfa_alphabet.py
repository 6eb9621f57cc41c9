"""The alphabet of sets apart (``dfa._apart_alphabet``) is the signatures' alphabet.

Where no character is listed by two sets and none is negated, ``_alphabet`` makes each set
a class of its own; the plain definition is the signature split (``_signature_alphabet``),
which handles every pattern.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsmviz.automaton import dfa as dfa_module
from fsmviz.automaton.dfa import _alphabet, _distinct_sets, _Positions, _signature_alphabet
from tests.test_dfa import ATOMS, random_pattern

APART_ATOMS = ("a", "b", "[cd]", "[eE]", r"\d", "-", "[xyz]", "é")
"""Sets no two of which share a character, none negated: the shortcut's case."""


def _both(pattern: str):
    positions = dfa_module._walk(pattern, _Positions)[2]
    return _alphabet(positions), _signature_alphabet(positions, *_distinct_sets(positions))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.data())
def test_sets_apart_make_the_signatures_classes(data):
    """Drawn patterns of sets apart (the shortcut) and of overlapping or negated sets (the
    signatures alone): the classes, their sets, each position's classes, the characters
    mentioned and the sets' numbers are the signature split's, in its order."""
    atoms = data.draw(st.sampled_from([APART_ATOMS, ATOMS]))
    ours, plain = _both(random_pattern(data.draw, atoms=atoms))
    assert ours == plain


@pytest.mark.parametrize(
    "pattern", ["[eE][lL][sS][eE]", r"\d{4}-\d{2}", "zyx", "[uU][nN][sS][iI][gG][nN][eE][dD]"]
)
def test_keywords_and_dates_take_the_shortcut_to_the_same_classes(pattern):
    """A keyword's, a date's and a reversed literal's sets are apart: the shortcut's
    classes, in order of their smallest character, are the signatures'."""
    positions = dfa_module._walk(pattern, _Positions)[2]
    index, _, _, shared = _distinct_sets(positions)
    assert not shared and not any(negated for _, negated in index)
    ours, plain = _both(pattern)
    assert ours == plain
