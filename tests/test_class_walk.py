"""A row walked over the class trie (``fsmviz.tokens.fast.classwalk``: tokens spelled by
their bytes' classes, one pass a level) is the row of the plain pair walk, token for token
and target for target, for every state: wide ones (strings, names, ``.*``) and the narrow
ones the index walks otherwise, whole levels and sparse ones, short rows and long."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz.tokens.fast.classwalk import ClassTable, ClassTrie, class_row
from tests.test_index_rows import plain_row

PATTERNS = (
    r'[a-z_]{1,12}="[^"\n]{0,20}"(, [a-z_]{1,12}="[^"\n]{0,20}"){0,2}',  # 17 classes
    r".*(error|warning): [A-Za-z ]+",  # every state reads every byte
    r"([^,\n]{1,20},){3}[^,\n]{1,20}",
    r'\{"name": "[^"\\]*", "age": (0|[1-9][0-9]*)\}',  # keys tell letters apart
    "(東京|大阪)[0-9]{2}",  # states inside a character
    # past MERGED_CLASSES byte classes: the byte trie read by class, unmerged
    r'\{"abcdefgh": "[^"\\]*", "ijklmnop": [0-9]+, "qrstuvwx": "[^"\\]*", "yzABCDEF": [0-9]+\}',
)
STATES_CHECKED = 40


def _class_walk(index):
    columns = index.byte_dfa.columns
    classes = ClassTrie.of(index.trie, columns.byte_class, len(index.vocab))
    return classes, ClassTable.of(index.byte_dfa.table, columns)


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS)
def test_class_rows_match_the_plain_walk(bundled_vocab, pattern):
    index = build_index(pattern, bundled_vocab)
    classes, table = _class_walk(index)
    assert classes.size <= len(index.trie.byte)  # tokens alike share nodes (if merged)
    for state in range(min(index.byte_dfa.num_states, STATES_CHECKED)):
        tokens, targets, words = class_row(classes, table, state)
        expected_tokens, expected_targets = plain_row(index, state)
        assert tokens.dtype == np.int32 and targets.dtype == np.int32
        assert np.array_equal(tokens, expected_tokens), (pattern, state)
        assert np.array_equal(targets, expected_targets), (pattern, state)
        if words is not None:  # a long row comes packed as well
            bits = np.unpackbits(words.view(np.uint8), bitorder="little")
            assert np.array_equal(np.flatnonzero(bits), tokens), (pattern, state)


@pytest.mark.slow
def test_the_first_bitmask_of_every_state_is_its_allowed_set(bundled_vocab):
    """Asked first (nothing walked before), ``bitmask`` holds exactly ``allowed_tokens``."""
    pattern = r'[a-z_]{1,12}="[^"\n]{0,20}"(; [a-z_]{1,12}="[^"\n]{0,20}"){0,1}'
    index = build_index(pattern, bundled_vocab)
    fresh = build_index(pattern + "()", bundled_vocab)
    for state in range(index.byte_dfa.num_states):
        bits = np.unpackbits(fresh.bitmask(state).view(np.uint8), bitorder="little")
        assert np.array_equal(np.flatnonzero(bits), index.allowed_tokens(state)), state


def test_tokens_alike_share_a_class_node():
    vocab = Vocabulary.from_strings(["1", "2", "12", "a1", "b2", "x"], eos_token="</s>")
    index = build_index("[0-9]+", vocab)
    classes, table = _class_walk(index)
    # root; (digit), (other); (digit, digit), (other, digit)
    assert classes.size == 5
    assert classes.token_node[0] == classes.token_node[1]  # "1" and "2"
    assert classes.token_node[3] == classes.token_node[4]  # "a1" and "b2"
    tokens, targets, _ = class_row(classes, table, 0)
    assert tokens.tolist() == [0, 1, 2] and targets.tolist() == [1, 1, 1]


@pytest.mark.slow
def test_the_byte_level_class_trie_reads_rows_as_the_merged_one(bundled_vocab):
    """Past ``MERGED_CLASSES`` classes an index reads its rows off the vocabulary's byte-level
    class trie (``byte_classes``, built once per trie) with a table over all 256 bytes: the
    same rows as the plain walk, and as the per-pattern class trie, for every state."""
    from fsmviz.tokens.fast.classwalk import MERGED_CLASSES, byte_classes

    index = build_index(PATTERNS[-1], bundled_vocab)
    assert len(index.byte_dfa.columns.smallest) > MERGED_CLASSES
    shared = byte_classes(index.trie, len(bundled_vocab))
    assert shared is byte_classes(index.trie, len(bundled_vocab))  # built once
    table = ClassTable.of(index.byte_dfa.table, None)
    for state in range(min(index.byte_dfa.num_states, STATES_CHECKED)):
        tokens, targets, _ = class_row(shared, table, state)
        expected_tokens, expected_targets = plain_row(index, state)
        assert np.array_equal(tokens, expected_tokens), state
        assert np.array_equal(targets, expected_targets), state
    index.row(0)  # the index's walker reads the shared trie
    assert index._walker.classes()[0] is shared
