"""Positions of one future made one before the subsets (``dfa._one_per_future``).

The plain definition here: the Glushkov automaton of a pattern accepts a word of classes
when, from ``first``, each class leads to the positions next that accept it and the last
set read holds a ``last`` position. Merging positions must keep that language, word for
word; the subsets built on the merged positions then minimise to the same DFA.
"""

from __future__ import annotations

from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsmviz import compile_regex
from fsmviz.automaton import dfa as dfa_module
from fsmviz.automaton.dfa import _Clock, _one_per_future, set_bits
from tests.test_dfa import ATOMS, CRON, SEARCHES, WIDE_ATOMS, random_pattern

HEX = "[0-9A-Fa-f]{1,4}"
IPV6 = (
    f"({HEX}(:{HEX}){{7}}|:(:{HEX}){{1,7}}|({HEX}:){{1,7}}:|::|"
    + "|".join(f"({HEX}:){{{k}}}(:{HEX}){{1,{7 - k}}}" for k in range(1, 7))
    + ")"
)
"""A corpus pattern (an IPv6 address): ten alternatives, most ending in copies of
``:[0-9A-Fa-f]{1,4}`` that have one future."""


def _accepted_words(walked: dfa_module._Walked, follow: list[int], first: int, length: int):
    """THE PLAIN DEFINITION: every word of at most ``length`` classes the positions accept,
    read from ``first`` by ``follow`` (no subsets kept, no states numbered)."""
    words = {()} if walked.nullable else set()
    for n in range(1, length + 1):
        for word in product(range(len(walked.class_masks)), repeat=n):
            now, reachable = 0, first
            for k in word:
                now = reachable & walked.class_masks[k]
                reachable = 0
                for p in set_bits(now):
                    reachable |= follow[p]
            if now & walked.last:
                words.add(word)
    return words


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.data())
def test_merged_positions_accept_the_same_words(data):
    """Word for word (up to 4 classes), the merged positions accept what the pattern's
    positions do; and the subsets on them minimise to the plain subsets' DFA."""
    atoms = data.draw(st.sampled_from([ATOMS, WIDE_ATOMS, (*ATOMS, "a+b", "ab", "b+")]))
    pattern = random_pattern(data.draw, atoms=atoms)
    walked = dfa_module._Walked.of(pattern)
    plain = walked.positions.follow, walked.first
    merged = _one_per_future(*plain, walked.last, walked.set_ids)
    length = 4 if len(walked.class_masks) <= 4 else 3
    assert _accepted_words(walked, *merged, length) == _accepted_words(walked, *plain, length)
    ours = dfa_module._minimised(walked.subsets(_Clock.after(10.0, "b"), by_future=True))
    theirs = dfa_module._minimised(walked.subsets(_Clock.after(10.0, "b")))
    assert (ours.num_states, ours.accepting) == (theirs.num_states, theirs.accepting), pattern
    assert [list(m.items()) for m in ours.moves] == [list(m.items()) for m in theirs.moves]


@pytest.mark.parametrize(
    "pattern",
    ["a+b|ab", "ab|a", "(ab|cb)+|ab", "((a|a)b)+", "(a|b)*a(a|b){3}", *SEARCHES, CRON, IPV6],
)
def test_positions_told_apart_by_loops_ends_or_links_stay_apart(pattern):
    """Patterns where positions with one set differ only in a loop (``a+b|ab``), being
    last (``ab|a``) or where their links lead: the merged positions accept the same words
    of up to 3 classes as the pattern's."""
    walked = dfa_module._Walked.of(pattern)
    plain = walked.positions.follow, walked.first
    merged = _one_per_future(*plain, walked.last, walked.set_ids)
    assert _accepted_words(walked, *merged, 3) == _accepted_words(walked, *plain, 3)


def test_ipv6_and_cron_build_fewer_states_to_the_same_dfa():
    """IPv6's alternatives end in alike copies: its subsets on merged positions are its
    minimal DFA's 78 states (174 with states merged by their future alone); the cron
    pattern's ``\\d+`` after ``,``, ``/``-or-``-`` and nothing are one: 188, not 247."""
    for pattern, plain_states, built_states, minimal in (
        (IPV6, 182, 78, 78),
        (CRON, 279, 188, 151),
    ):
        walked = dfa_module._Walked.of(pattern)
        plain = walked.subsets(_Clock.after(10.0, "b"))
        built = walked.subsets(_Clock.after(10.0, "b"), by_future=True)
        assert (len(plain.transitions), len(built.transitions)) == (plain_states, built_states)
        assert compile_regex(pattern).num_states == minimal
    assert compile_regex(IPV6).accepts("2001:db8::1") and not compile_regex(IPV6).accepts(":::")


def test_links_back_to_merged_positions_are_replaced_too():
    """In ``(ab|ab)*c`` the first ``a`` is merged into the second after the ``b``s that
    loop back to it were read: their links are replaced in a second pass, and the subsets
    are the minimal DFA's 3 states (4 if the loops still led to both ``a``s)."""
    walked = dfa_module._Walked.of("(ab|ab)*c")
    built = walked.subsets(_Clock.after(10.0, "b"), by_future=True)
    assert len(built.transitions) == compile_regex("(ab|ab)*c").num_states == 3


def test_long_links_alike_at_the_top_are_told_apart_by_the_rest():
    """Links over 60 positions long are first told by their top bits: two positions of
    one set linking to one far position (100) and to different near ones (2, 3) stay
    apart; with the same links they are merged (the later one kept)."""
    sets = [0, 0, *range(1, 100)]
    apart = [1 << 100 | 1 << 2, 1 << 100 | 1 << 3, *[1 << 100] * 98, 0]
    assert _one_per_future(apart, 0b11, 1 << 100, sets) == (apart, 0b11)
    alike = [1 << 100 | 1 << 2, 1 << 100 | 1 << 2, *apart[2:]]
    assert _one_per_future(alike, 0b11, 1 << 100, sets) == (alike, 0b10)


def test_positions_that_loop_alike_are_merged():
    """``ba+|ca+``: the two ``a+`` loop on themselves and end the pattern, with no other
    link; nothing else is alike as written, so only the loops tell the pass it may merge
    (``_may_merge``). Merged, ``b`` and ``c`` lead to one state: 3, the minimal DFA's,
    where the two ``a+`` apart made 5."""
    walked = dfa_module._Walked.of("ba+|ca+")
    built = walked.subsets(_Clock.after(10.0, "b"), by_future=True)
    assert len(built.transitions) == compile_regex("ba+|ca+").num_states == 3
