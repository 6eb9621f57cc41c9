"""The chain shortcut (``dfa._chain``) gives the very DFA of the general construction.

Where the positions follow one another in a line (a literal, a keyword ``[nN][oO][nN][eE]``,
a uuid), ``_compile`` writes the chain of states out and runs no subsets and no minimising.
The plain definition is the construction every other pattern takes: the subsets
(``by_future``, as ``compile_regex`` builds them) minimised. Every field of the ``Dfa``
must agree: its states' numbers, classes, moves, accepting states and mentioned characters.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsmviz.automaton import dfa as dfa_module
from fsmviz.automaton.dfa import Dfa, _chain, _compile, _Construction, _minimised, _Walked
from fsmviz.automaton.syntax import RegexError

CHAIN_ATOMS = (
    "a", "b", "[aA]", "[nN]", "[^a]", ".", r"\d", r"\.", "-", " ", "é", "ß", "İ", "ǅ", "K",
    "\u212a", "一", "\U0001f600", "[a-c]", "[ab]", r"[^\s\S]", "()", "(?:)", "(x)", "a{2}",
    "(?i:q)", "(?s:.)",
)  # fmt: skip
"""Atoms whose concatenations are mostly chains: overlapping, negated, case-folded and
non-ASCII sets, a set that accepts nothing, empty and plain groups, a counted copy."""
NOT_CHAIN_ATOMS = ("b?", "a*", "(a|b)", "x+")
"""Atoms that break the line: a position that may be skipped, a loop, a fork."""
FLAGS = ("", "(?i)", "(?s)", "(?is)")


def _fields(dfa: Dfa) -> tuple:
    return (dfa.pattern, dfa.num_states, dfa.accepting, dfa.classes, dfa.moves, dfa.mentioned,
            dfa.initial)  # fmt: skip


def _general(pattern: str) -> Dfa:
    return _minimised(_Construction.of(pattern, by_future=True))


def _agree(pattern: str) -> bool:
    """Assert the compile equals the general construction; whether the chain was taken."""
    try:
        general = _general(pattern)
    except RegexError:
        with pytest.raises(RegexError):
            _compile(pattern)
        return False
    assert _fields(_compile(pattern)) == _fields(general), pattern
    return _chain(_Walked.of(pattern)) is not None


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.data())
def test_chains_are_the_general_construction(data):
    atoms = data.draw(st.lists(st.sampled_from(CHAIN_ATOMS), min_size=1, max_size=8))
    breaker = data.draw(st.sampled_from(("", *NOT_CHAIN_ATOMS)))
    at = data.draw(st.integers(0, len(atoms)))
    atoms[at:at] = [breaker]
    body = data.draw(st.sampled_from(FLAGS)) + "".join(atoms)
    wrapped = data.draw(st.booleans())
    pattern = (f"(?:(?:{body}))" if wrapped and not body.startswith("(?") else body) + "()" * (
        data.draw(st.integers(0, 3))
    )
    _agree(pattern)


def test_corpus_patterns_agree_and_keywords_take_the_chain():
    from bench.heldout import corpus_patterns

    taken = {p for p in corpus_patterns() if _agree(p)}
    assert "(?:(?:[nN][oO][nN][eE]))" in taken
    assert "(?:(?:with))" in taken  # both in bench/schemas_public: a clone without
    # ../shared/corpora (the JSON-Schema-Test-Suite) has them too
    assert len(taken) >= 40  # keywords, uuids, hex colours, single classes


@pytest.mark.parametrize(
    "pattern, chain",
    [
        ("(?:(?:[nN][oO][nN][eE]))" + "()" * 31, True),  # the benchmarks' fresh strings
        ("(?:(?:abc))()(?:)", True),
        ("(?i)straße", True),
        ("a(b){2}c", True),
        ("x", True),
        ("", False),  # accepting at the start: not a line of positions
        ("ab?", False),
        ("a*", False),
        ("a|b", False),
        (r"a[^\s\S]b", False),  # a position accepting nothing: the DFA is pruned
    ],
)
def test_which_patterns_take_the_chain(pattern, chain):
    assert _agree(pattern) is chain


def test_a_broken_chain_is_caught(monkeypatch):
    """The comparison fails where the chain is written wrong (its last state not accepting)."""
    real = dfa_module._chain

    def wrong(walked: _Walked) -> Dfa | None:
        found = real(walked)
        if found is None:
            return None
        return Dfa(found.pattern, found.num_states, frozenset({0}), found.classes, found.moves,
                   found.mentioned)  # fmt: skip

    monkeypatch.setattr(dfa_module, "_chain", wrong)
    with pytest.raises(AssertionError):
        _agree("(?:(?:[nN][oO][nN][eE]))")
