"""A state whose reachable states all read the same ASCII bytes ``B`` (``[a-z0-9_-]+`` from
its start or its loop) allows exactly the tokens of ``B`` (``closedsets.ascii_closed_words``):
the plain pair walk's row packed, bit for bit, for the state and every state it names; a
state reaching one that reads other bytes is refused. ``bitmask`` keeps the words for
every member at once, EOS's bit set where each accepts."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz.tokens.fast import closedsets
from fsmviz.tokens.fast.closedsets import ascii_closed_words, entered_closed_words
from fsmviz.tokens.fast.packwalk import packed_vocab
from fsmviz.tokens.index import packed
from tests.test_index_rows import plain_mask, plain_row

PATTERNS = (
    r"[a-zA-Z0-9-_]+",  # start and loop read the same bytes: both closed
    r"[A-Za-z][A-Za-z0-9_]*",  # the loop is closed, the start (letters only) is not
    r"[a-z0-9]{2,}",  # a counted start: three states alike
    r"[A-Za-z0-9_\.-]+@x",  # the loop leaves by @: not closed
    r"([a-z]+ )+",  # a space leads to a state reading other bytes
    r"\s+",  # six bytes, but a space begins thousands of tokens
    r"[0-9]+",  # ten digits, each its own token: left to small_row
)


def _closed(index):
    """Each state's ``ascii_closed_words`` (None where refused), from a fresh index."""
    vocab = packed_vocab(index.trie, len(index.vocab))
    walker, table = index._walker, index.byte_dfa.table
    return {
        state: ascii_closed_words(vocab, table, state, walker.reads_of)
        for state in range(index.byte_dfa.num_states)
    }


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS)
def test_closed_words_are_the_plain_rows(bundled_vocab, pattern):
    index = build_index(pattern + "()" * 5, bundled_vocab)
    found = {state: got for state, got in _closed(index).items() if got is not None}
    for state, (members, words) in found.items():
        assert state in members
        for member in members:  # every member allows those tokens
            tokens, _ = plain_row(index, member)
            assert np.array_equal(words.view(np.int32), packed(tokens, len(bundled_vocab)))
    closed = {
        r"[a-zA-Z0-9-_]+": {0, 1},
        r"[A-Za-z][A-Za-z0-9_]*": {1},
        r"[a-z0-9]{2,}": {0, 1, 2},
        r"\s+": {0, 1},
    }
    assert set(found) == closed.get(pattern, set()), found


@pytest.mark.slow
def test_bitmask_keeps_every_members_words(bundled_vocab):
    index = build_index(r"[a-z0-9]{2,}()()", bundled_vocab)
    assert index.is_accepting(2) and not index.is_accepting(0)
    index.bitmask(0)
    assert set(index._bitmasks) == {0, 1, 2}  # one walk for the three
    for state in (0, 1, 2):
        assert np.array_equal(index.bitmask(state), plain_mask(index, state))
        assert not index.bitmask(state).flags.writeable


def test_closed_words_on_a_toy_vocabulary(monkeypatch):
    """``ab`` and ``b`` stay among the states of ``[ab]+``; ``a!`` and ``!`` do not."""
    monkeypatch.setattr(closedsets, "FIRST_BYTES", 2)
    vocab = Vocabulary.from_strings(["ab", "a!", "b", "!"])
    index = build_index("[ab]+", vocab)
    members, words = _closed(index)[0]
    assert members == [0, 1] and words.tolist() == packed(np.array([0, 2]), 4).tolist()
    assert _closed(build_index("[ab]+!?", vocab))[0] is None  # ``!`` leads out


ENTERED = {
    r"[A-Za-z][A-Za-z0-9_]*": {0},  # a letter, then the loop's bytes
    r"[+!]?[a-zA-Z0-9_.-]+": {0, 1},  # a sign or the class, into two states alike
    r"[a-zA-Z0-9](-?[a-zA-Z0-9])*": set(),  # the loop leaves by a dash: not closed
    r"[a-zA-Z0-9-_]+": {0},  # into the loop (closed itself too: ``ascii_closed_words``)
    r"with": set(),
    r"[0-9][0-9a-z]*|[a-z]": set(),  # a digit into the loop, a letter to the end
}


@pytest.mark.slow
@pytest.mark.parametrize("pattern", ENTERED)
def test_entered_closed_words_are_the_plain_rows(bundled_vocab, pattern):
    index = build_index(pattern + "()" * 5, bundled_vocab)
    vocab = packed_vocab(index.trie, len(bundled_vocab))
    table, reads = index.byte_dfa.table, index._walker.reads_of
    answered = set()
    for state in range(index.byte_dfa.num_states):
        words = entered_closed_words(vocab, table, state, reads)
        if words is not None:
            answered.add(state)
            tokens, _ = plain_row(index, state)
            assert np.array_equal(words.view(np.int32), packed(tokens, len(bundled_vocab)))
    assert answered == ENTERED[pattern]


def test_entered_closed_words_on_a_toy_vocabulary(monkeypatch):
    """``[ab]c+``'s start: ``ac``, ``bcc`` and ``a`` live; ``ca`` (no ``c`` first) and
    ``acb`` (a ``b`` in the loop) die."""
    monkeypatch.setattr(closedsets, "FIRST_BYTES", 1)
    vocab = Vocabulary.from_strings(["ac", "bcc", "a", "ca", "acb"])
    index = build_index("[ab]c+", vocab)
    words = entered_closed_words(
        packed_vocab(index.trie, 5), index.byte_dfa.table, 0, index._walker.reads_of
    )
    assert words.tolist() == packed(np.array([0, 1, 2]), 5).tolist()


def _plain_closed_set(table, state, reads, busy):
    """``_closed_set`` by its definition: every state reachable from ``state`` over its
    bytes, where all read them (ASCII, wide or busy), at most ``CLOSED``; else None."""
    bits = reads(state)
    cols = [byte for byte in range(256) if bits >> byte & 1]
    if bits >> 0x80 or len(cols) < closedsets.FIRST_BYTES and not bits & busy:
        return None
    members, todo = {state}, [state]
    while todo:
        row = table[todo.pop()]
        for target in {int(row[byte]) for byte in cols} - members:
            if reads(target) != bits:
                return None
            members.add(target)
            todo.append(target)
    return sorted(members) if len(members) <= closedsets.CLOSED else None


COUNTED = (
    r"sha256-[A-Za-z0-9+/]{43}=",  # a count, then another byte: refused on the lowest byte
    r"[0-9a-f]{40}",
    r"[A-Za-z0-9]{1,64}",
    r"(?:[a-z]{3})+",  # the lowest byte cycles through three states: closed
    r"[a-z]*z[a-y]",  # the lowest byte loops, but z leads on: refused
    r"(?:[a-z][a-z0-9]){1,40}",  # two byte sets alternate, counted
    r"[a-z0-9-]{1,63}\.[a-z]+",
)


@pytest.mark.slow
@pytest.mark.parametrize("pattern", COUNTED)
def test_closed_set_is_its_definition(bundled_vocab, pattern):
    """The lowest byte's walk (``_lowest_closes``) refuses only what the whole walk
    refuses, and refuses a counted class's states itself (none of their rows read)."""
    index = build_index(pattern + "()" * 5, bundled_vocab)
    vocab = packed_vocab(index.trie, len(bundled_vocab))
    table, reads = index.byte_dfa.table, index._walker.reads_of
    found = {}
    for state in range(index.byte_dfa.num_states):
        got = closedsets._closed_set(vocab, table, state, reads)
        assert got == _plain_closed_set(table, state, reads, vocab.busy), state
        found[state] = got
    wide = [s for s in found if reads(s).bit_count() >= closedsets.FIRST_BYTES]
    closing = [s for s in wide if closedsets._lowest_closes(table, s, reads(s), reads)]
    if "{" in pattern and "+" not in pattern:  # no loop: every counted state refused at once
        assert closing == [s for s in found if found[s] is not None] == []
    if pattern == r"(?:[a-z]{3})+":  # a loop the lowest byte walks round: found closed
        assert any(found.values())
