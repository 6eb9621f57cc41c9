"""The loops every vocabulary keeps the masks of (``fsmviz.tokens.fast.knownloops``): a state
that reads at least what ``ANY*``'s or ``.*``'s start reads is answered from the loop's
mask and its walk of the few tokens the loop leaves out, every bit as the plain walk's."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz.schema.patterns import ANY
from fsmviz.tokens import index as index_module
from fsmviz.tokens.fast import knownloops
from tests.test_index_rows import plain_mask
from tests.test_levelwalk import answers_of

PAIRED = (
    rf"{ANY}*(?:1.0){ANY}*",  # the needle's ``.`` reads a quote: more than ``ANY*``
    rf"{ANY}*(?:[^ ]){ANY}*",  # a newline, then 60 spaces: long tokens walked in Python
    rf"{ANY}*(?:a*){ANY}*",  # ``ANY*`` itself: every state paired exactly
    rf"{ANY}*(?:é|日本){ANY}*",  # UTF-8 in the needle
    rf"(?:v){ANY}*",
    r".*\.[yY][aA]?[mM][lL]",
    r'\{"a": "(?:' + ANY + r')*", "b": [0-9]+\}',  # a schema's string reads its quote too
)
UNPAIRED = (r"[a-z]+", r"[0-9]{4}-[0-9]{2}", r"(?:[cC][aA][sS][eE])")
LESS = (  # the start reads the loop's bytes, a state after it reads fewer
    r'(?:[^"\\\x00-\x1F\x7F-\x9F]|\\["n])*x',  # escapes the loop's classes tell apart: never paired
    "[^\n\u4e00-\u4fff]*x",  # after E4, not B8-BF: none of those CJK
)


@pytest.mark.parametrize("pattern", PAIRED + UNPAIRED)
def test_loop_masks_are_the_plain_masks(bundled_vocab, pattern, monkeypatch):
    answered = answers_of(monkeypatch, index_module, "_loop_words")
    index = build_index(pattern + "()" * 7, bundled_vocab)
    for state in index.states[:40]:
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), state
    assert any(answered) == (pattern in PAIRED), pattern


def test_a_search_pairs_its_states_at_once(bundled_vocab):
    """One pairing answers the search's states it meets: after its start, the states of
    the needle, the backslash and inside a character are looked up, not paired again."""
    index = build_index(PAIRED[0] + "()" * 8, bundled_vocab)
    index.bitmask(index.initial_state)
    assert len(index._loop_pairs._paired) >= 20


def test_drawn_corpus_patterns(bundled_vocab):
    """Patterns others wrote (the held-out benchmark's corpora), a few drawn each run."""
    from bench.heldout import corpus_patterns

    seed = random.SystemRandom().randrange(1 << 31)
    drawn = random.Random(seed).sample(corpus_patterns(), 12)
    for pattern in drawn:
        try:
            index = build_index(pattern + "()" * 9, bundled_vocab)
            states = index.states[:25]
        except Exception:  # noqa: BLE001  (too large a DFA or index: not this test's)
            continue
        for state in states:
            assert np.array_equal(index.bitmask(state), plain_mask(index, state)), (
                seed, pattern, state,
            )  # fmt: skip


def test_a_toy_vocabulary_of_bytes():
    """Cut, stray and overlong UTF-8, controls, quotes and backslashes, one token a byte
    and in pairs: the loops' masks made over this vocabulary, every state as plain."""
    singles = [bytes([b]) for b in range(1, 256)]
    pairs = [bytes([a, b]) for a in b'a"\\\n\xc3\xe6' for b in b'"\\na\n\xa9\x80\xe6']
    table = (*singles, *pairs, "é".encode(), "日本".encode(), b"")
    vocab = Vocabulary("toy", table, len(table) - 1, {len(table) - 1: "<eos>"})
    for pattern in PAIRED:
        index = build_index(pattern, vocab)
        for state in range(index.byte_dfa.num_states):
            assert np.array_equal(index.bitmask(state), plain_mask(index, state)), (
                pattern, state,
            )  # fmt: skip


@pytest.mark.parametrize("pattern", LESS)
def test_a_state_reading_less_is_not_paired(bundled_vocab, pattern):
    """A start that reads what a loop's start reads, and then less than the loop (fewer
    escapes, fewer characters): not answered from the loop, and its mask is plain."""
    index = build_index(pattern, bundled_vocab)
    assert index._walker.reads_of(0) in {
        reads for loop in knownloops.known_loops(index.trie, len(bundled_vocab))
        for reads in loop.reads
    }  # fmt: skip
    loops = knownloops.known_loops(index.trie, len(bundled_vocab))
    pairs = knownloops.LoopPairs(loops, index.byte_dfa, index._walker.reads_of)
    assert pairs.words(0) is None
    assert np.array_equal(index.bitmask(0), plain_mask(index, 0))


def test_a_failed_pairing_fails_the_pairs_leading_to_its_end(bundled_vocab, monkeypatch):
    """A counted string's states read at least what ``ANY*``'s start reads, and each leads
    to the last, which reads only the quote: the first pairing fails there and fails every
    pair it met on the way, so most later pairings are refused before they meet a pair
    (else each walked on to the end again: 530 pairs met in all where 122 are). Their
    masks stay plain."""
    met, pairs = [], knownloops._pairs

    def counted(*args):
        found = pairs(*args)
        met.append(found[1])
        return found

    monkeypatch.setattr(knownloops, "_pairs", counted)
    index = build_index(r'[^"\n]{0,8}"' + "()" * 5, bundled_vocab)  # 66 states
    for state in index.states[:30]:
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), state
    assert met[0] > 0 and met.count(0) >= 12, met


def test_a_large_dfa_is_refused_before_its_byte_classes(bundled_vocab):
    """Past ``PAIRED_STATES`` no state is paired, and the refusal comes before the DFA's
    byte classes are found (a schema's: ~0.3-0.7 ms its first masks did not need)."""
    pattern = r'([a-z_]{1,12}="[^"\n]{0,20}"(, )?){1,3}' + "()" * 3
    index = build_index(pattern, bundled_vocab)
    assert len(index.byte_dfa.table) > knownloops.PAIRED_STATES
    start = knownloops.known_loops(index.trie, len(bundled_vocab))[0].reads[0]  # ANY*'s
    table = index.byte_dfa.table  # its states read from the table: ``index.states`` (the
    # closure) finds the byte classes itself
    inside = [s for s in range(len(table)) if not start & ~index._walker.reads_of(s)]
    assert inside  # a string's states: each would be tried with ANY*'s start
    assert all(index_module._loop_words(index, state) is None for state in inside)
    assert "columns" not in vars(index.byte_dfa)
