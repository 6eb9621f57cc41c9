"""The steps ``compile_regex`` skips when they provably have nothing to do.

``_prune_dead`` runs only when some position accepts no character (``_Construction.
may_strand``): otherwise every subset state can finish, so the search would drop nothing.
These tests hold the claim against the search itself, on patterns with and without an
empty set, hand-written and fuzzed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsmviz import RegexError, compile_regex
from fsmviz.automaton.dfa import _Construction, _prune_dead

STRANDING = [r"a[^\s\S]b|c", r"(a[^\s\S])*b", r"x(?:[^\d\D]|y)z", r"[^\w\W]?q", r"(?i)[^\s\S]"]


def dropped_by_search(pattern: str) -> int:
    built = _Construction.of(pattern)
    _, pruned = _prune_dead(built.accepting, built.transitions)
    return len(built.transitions) - len(pruned)


@pytest.mark.parametrize("pattern", STRANDING)
def test_an_empty_set_is_seen_and_its_dead_states_dropped(pattern: str) -> None:
    assert _Construction.of(pattern).may_strand
    dfa = compile_regex(pattern)
    assert all(dfa.distances()[s] < 2**62 for s in dfa.states if s != dfa.initial)


def test_an_empty_set_strands_states_the_search_drops() -> None:
    assert dropped_by_search(r"a[^\s\S]b|c") > 0


PIECES = ["a", "b", ".", "\\d", "[^a]", "[^\\s\\S]", "(", ")", "|", "*", "?", "{2}", "{0}", "+"]


@settings(max_examples=400, derandomize=True, database=None)
@given(pattern=st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_without_an_empty_set_the_search_drops_nothing(pattern: str) -> None:
    try:
        built = _Construction.of(pattern)
    except RegexError:
        return
    if not built.may_strand:
        assert dropped_by_search(pattern) == 0
