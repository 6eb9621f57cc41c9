"""The whole index's closure over the class trie (``successors.closure_pairs``,
``by_classes``, ``class_pairs``) is held to the node-set walk over the byte trie
(``successor_pairs``), on the bundled vocabulary: every state of each pattern as a start,
the (start, state) pairs equal. Where a class does not hold on some row (here forced: every
byte one class) or the classes are many, the walk goes over the bytes. A few ms a pattern
once the trie is built."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import build_index
from fsmviz.tokens.fast import successors
from fsmviz.tokens.fast.successors import (
    BytePartitions,
    by_classes,
    class_pairs,
    closure_pairs,
    successor_pairs,
)

PATTERNS = [
    r"[^\n]{1,20}",  # counts of characters, states inside them
    r'"[^"\n]{0,12}"',
    r"([^,\n]{1,6},){2}[^,\n]{1,6}",
    r"[a-zé ]{0,5}x[0-9]?",  # a two-byte letter's classes
    r"[\u4e00-\u9fff]{1,3}",  # continuation bytes told apart by range
]


def _by_bytes(index, starts):
    table = index.byte_dfa.table
    return successor_pairs(index.trie, table, starts, BytePartitions.of(table), None)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_class_closure_equals_the_byte_closure(pattern, bundled_vocab):
    index = build_index(pattern, bundled_vocab)
    table, starts = index.byte_dfa.table, list(range(len(index.byte_dfa.table)))
    found = by_classes(index.trie, table)
    assert found is not None, "these patterns tell few bytes apart: their class trie is small"
    classes, cut = found
    assert classes.size * 4 <= len(index.trie.byte)
    expected = _by_bytes(index, starts)
    assert len(expected[0]) > len(starts)  # some start has several successors
    for origin, state in (
        class_pairs(classes, cut, starts),
        closure_pairs(index.trie, table, starts),
        _node_sets_over_classes(classes, cut, starts),
    ):
        np.testing.assert_array_equal(origin, expected[0])
        np.testing.assert_array_equal(state, expected[1])
    some = starts[::3]  # a subset of starts: positions renumbered alike
    np.testing.assert_array_equal(
        np.stack(class_pairs(classes, cut, some)), np.stack(_by_bytes(index, some))
    )


def _node_sets_over_classes(classes, cut, starts):
    """The node-set walk over the class trie (``successor_pairs`` past ``DENSE``)."""
    wide = np.full((len(cut), 256), -1, dtype=cut.dtype)
    wide[:, : cut.shape[1]] = cut
    return successor_pairs(classes.as_trie, wide, starts, BytePartitions.of(wide), None)


def test_classes_that_do_not_hold_walk_the_bytes(bundled_vocab, monkeypatch):
    index = build_index(r"[a-c]{1,4}[^\n]{0,3}", bundled_vocab)
    table, starts = index.byte_dfa.table, list(range(len(index.byte_dfa.table)))
    monkeypatch.setattr(
        successors, "byte_partition", lambda table: np.zeros(256, dtype=np.int16)
    )  # one class: "a" and "d" alike, which the rows deny
    assert by_classes(index.trie, table) is None
    walked = []
    monkeypatch.setattr(
        successors, "successor_pairs", lambda *a: walked.append(a[0]) or _by_bytes(index, starts)
    )
    closure_pairs(index.trie, table, starts)
    assert walked == [index.trie]


def test_many_classes_walk_the_bytes(bundled_vocab):
    pattern = "".join(f"{c}?" for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ")
    index = build_index(pattern, bundled_vocab)
    assert by_classes(index.trie, index.byte_dfa.table) is None
