"""The level walk (``fsmviz.tokens.fast.levelwalk``) that ``first_allowed_tokens`` hands a
crowded level to: every trie node's state computed, none tested. Held to the whole index
with the hand-over forced at the first wide level, on the bundled vocabulary, and from the
root on a toy one (a few ms each)."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index, clear_caches, first_allowed_tokens
from fsmviz.tokens.fast import derivatives
from fsmviz.tokens.fast.levelwalk import levels_of, walk_levels
from fsmviz.tokens.trie import trie_of

PATTERNS = [
    r"[^\n]{1,20}",  # counts of characters, partial states inside them
    r"([^,\n]{1,20},){3}[^,\n]{1,20}",
    r".*(error|warning): [A-Za-z ]+",
    r"[a-z]+ [0-9]{2}\n",  # tokens die within a few bytes: sparse levels
    r"[\u4e00-\u9fff]{1,5}",
    r'\{"name": "[^"]{0,12}", "age": [0-9]{1,3}\}',
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_level_handed_over_gives_the_index_s_first_set(pattern, bundled_vocab, monkeypatch):
    calls = []
    walk = derivatives.walk_levels

    def counting(*args):
        calls.append(1)
        return walk(*args)

    monkeypatch.setattr(derivatives, "HAND_OVER", -1)  # every wide level is handed over
    monkeypatch.setattr(derivatives, "walk_levels", counting)
    clear_caches()
    ours = first_allowed_tokens(pattern, bundled_vocab)
    index = build_index(pattern, bundled_vocab)
    np.testing.assert_array_equal(ours, index.allowed_tokens(index.initial_state))
    assert calls or len(ours) < 16  # handed over, unless no level was wide


def test_the_walk_from_the_root_is_the_plain_walk():
    toy = Vocabulary.from_strings(["a", "b", "ab", "ba", "abc", "c", "ca"], "</s>")
    trie = trie_of(toy)
    assert levels_of(trie) is levels_of(trie)  # built once per trie
    for pattern in ["a(b|c)*", "[ab]{1,2}", "[abc]*", "(ab|ba)+c", "c{2}"]:
        regexes, start = derivatives._Regexes.of(pattern, trie.single_byte_tokens)
        near = derivatives._NearStart(regexes, start)
        ours = walk_levels(trie, np.zeros(1, np.int32), np.zeros(1, np.int32), near.rows)
        index = build_index(pattern, toy)
        expected = [t for t in index.allowed_tokens(index.initial_state) if t != toy.eos_token_id]
        assert ours.tolist() == sorted(int(t) for t in expected), pattern
