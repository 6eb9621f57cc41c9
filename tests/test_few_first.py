"""A state from whose bytes few tokens begin (inside a UTF-8 character: the 74 tokens that
begin with a continuation byte) has its packed mask from those tokens walked one by one
(``firstbytes.few_first_words``): the plain pair walk's row packed, bit for bit; a state
reading a byte many tokens begin with, or too few bytes, is left to the other walks."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz.tokens.fast import firstbytes, packwalk
from fsmviz.tokens.fast.firstbytes import few_first_words
from fsmviz.tokens.fast.packwalk import packed_vocab
from fsmviz.tokens.index import packed
from tests.test_index_rows import plain_mask, plain_row

PATTERNS = (
    r".*\.[jJ][sS][oO][nN]",  # ``.``'s character states, before the needle's loop
    r"\S",  # a character's states, then the end
    r"[^ \t\n\v\f\r]+",
    r"env_\S+",
    r'"[^"]*"',
    r"[^a-z]{2,4}ok",  # a character's states inside a counted repeat
    r"[À-ÿ]+[0-9]",  # two-byte letters: their second byte
)


def _walked(index):
    """Each state's ``few_first_words`` (None where refused), from a fresh index."""
    vocab = packed_vocab(index.trie, len(index.vocab))
    walker, table = index._walker, index.byte_dfa.table
    return {
        state: few_first_words(vocab, index.trie, table, state, walker.reads_of(state))
        for state in range(index.byte_dfa.num_states)
    }


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS)
def test_few_first_words_are_the_plain_rows(bundled_vocab, pattern):
    index = build_index(pattern + "()" * 5, bundled_vocab)
    walked = _walked(index)
    answered = 0
    for state, words in walked.items():
        if words is None:
            continue
        answered += 1
        tokens, _ = plain_row(index, state)
        assert np.array_equal(words.view(np.int32), packed(tokens, len(bundled_vocab))), state
        assert not words.flags.writeable
    assert answered, "no state was answered by its few first tokens"
    for state in index.states[:40]:  # and bitmask, which asks it first
        assert np.array_equal(index.bitmask(state), plain_mask(index, state))


@pytest.mark.slow
def test_a_state_reading_a_busy_byte_or_few_bytes_is_refused(bundled_vocab):
    index = build_index(r"[a-z]+\S", bundled_vocab)
    walked = _walked(index)
    assert walked[0] is None and walked[1] is None  # thousands of tokens begin with a letter
    vocab = packed_vocab(index.trie, len(bundled_vocab))
    assert all(vocab.root_span[b] > packwalk.FEW_FIRST for b in b"aeis")
    assert sum(vocab.root_span[0x80:0xC0]) <= packwalk.FEW_FIRST


def test_few_first_words_on_a_toy_vocabulary(monkeypatch):
    """Five tokens begin with a byte of ``[ab]``: ``a``, ``aa`` and ``ba`` live, ``ab`` and
    ``aaa`` die (the class is read once, then ``a`` at most once); ``c`` is not looked at."""
    monkeypatch.setattr(firstbytes, "FIRST_BYTES", 2)
    vocab = Vocabulary.from_strings(["a", "aa", "ab", "ba", "c", "aaa"])
    index = build_index("[ab]a?", vocab)
    found = _walked(index)[0]
    assert packed(np.array([0, 1, 3]), len(vocab)).tolist() == found.view(np.int32).tolist()
    monkeypatch.setattr(firstbytes, "FEW_FIRST", 4)  # five tokens begin so: too many
    assert _walked(build_index("[ab]a?()", vocab))[0] is None


MERGED = (
    r"[^:]+(:[^:]+)?(:[^:]+)?;",  # a small DFA's loops: merged into live blocks (its last
    # loop leaves at ``;``: without, ``looped_words`` answers it, and nothing merges)
    r'(?:[^"\\\x00-\x1F\x7F-\x9F]|\\["\\/bfnrt])*(?:.)(?:[^"\\\x00-\x1F\x7F-\x9F]|\\["\\/bfnrt])*',
)


def _few(vocab, walker, table, state):
    return few_first_words(vocab, walker.trie, table, state, walker.reads_of(state))


@pytest.mark.slow
@pytest.mark.parametrize("pattern", MERGED)
def test_merged_blocks_take_their_few_first_words(bundled_vocab, pattern, no_loop_masks):
    """Once the DFA is merged into live blocks, a block inside a character is walked over
    the quotient (a block's tokens are any member's), kept for its every state (the loop
    masks, which answer these first, turned off)."""
    index = build_index(pattern + "()" * 5, bundled_vocab)
    states = index.states[:40]
    for state in states:
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), state
    merged = index._walker.merged
    assert merged, "not merged: the test asks nothing of the merged path"
    inner = merged.walker
    vocab, table = inner.packed_vocab, inner.byte_dfa.table
    blocks = {int(merged.blocks[state]) for state in states}
    few = [b for b in blocks if _few(vocab, inner, table, b) is not None]
    assert few, "no block was answered by its few first tokens"
