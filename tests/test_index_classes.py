"""The closure walks a different trie than the rows do: the vocabulary merged by the
pattern's byte classes. Both must tell the same story: the successor set of every state
(from the merged walk) is exactly the set of states its row's tokens lead to (from the byte
walk), with the real 49k vocabulary and patterns whose classes fold many tokens together."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz import index as index_module
from fsmviz.trie import VocabTrie

PATTERNS = [
    r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+[a-zA-Z0-9]",
    r"([A-Za-z]{1,12} ){2,10}[A-Za-z]{1,12}\.",
    r'\{"name": "[^"\\]{0,12}", "city": "[一-龥]{1,4}"\}',
    r"(ishmael|moby dick)",
    r"[0-9]+\.[0-9]+",
]


@pytest.mark.parametrize("merge_from", [0, 10_000])  # merged trie always / never
@pytest.mark.parametrize("pattern", PATTERNS)
def test_successor_sets_equal_the_rows_targets(pattern, merge_from, bundled_vocab, monkeypatch):
    monkeypatch.setattr(index_module, "MERGE_FROM_STATES", merge_from)
    monkeypatch.setattr(index_module, "CLOSURE_SECONDS", 120.0)  # a loaded machine is no error
    built = build_index(pattern, bundled_vocab)  # a fresh index beside it, not the cached one
    index = index_module.TokenIndex(built.dfa, built.byte_dfa, bundled_vocab, built.trie)
    states = index.states
    assert len(states) > 1
    for state in states:
        row = index.row(state)
        np.testing.assert_array_equal(index.successors(state), np.unique(row.targets))


def test_a_merged_node_holds_tokens_spelled_alike_in_classes():
    vocab = Vocabulary.from_strings(["ab", "ba", "a", "c", "ca", "cab", "x"], eos_token="</s>")
    trie = VocabTrie.build(vocab)
    classes = np.zeros(256, dtype=np.int64)
    classes[ord("c")], classes[ord("x")] = 1, 2
    merged = trie.merged(classes, np.array([True, True, False]))  # class 2 ("x") unread

    def spelled(token: int) -> tuple[int, ...]:
        return tuple(int(classes[b]) for b in vocab.token_bytes(token))

    groups = [
        sorted(vocab.token_text(int(t)) for t in merged.token_ids[a:b])
        for a, b in zip(merged.token_start[:-1], merged.token_start[1:], strict=True)
        if b > a
    ]
    assert sorted(groups) == [["a"], ["ab", "ba"], ["c"], ["ca"], ["cab"]]
    for a, b in zip(merged.token_start[:-1], merged.token_start[1:], strict=True):
        assert len({spelled(int(t)) for t in merged.token_ids[a:b]}) <= 1
