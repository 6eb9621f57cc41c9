"""A trie's learnt classes (``levelwalk.learnt``) survive their cache: a process that met
more tokenizers than ``_LEARNT`` keeps learns ``[^\\n]``'s classes again for the first."""

from __future__ import annotations

import numpy as np

from fsmviz.automaton.bytedfa import to_bytes
from fsmviz.automaton.dfa import compile_regex
from fsmviz.tokens.fast import levelwalk
from fsmviz.tokens.trie import trie_of


def test_a_trie_whose_learnt_classes_were_dropped_walks_its_class_trie_again(bundled_vocab):
    trie = trie_of(bundled_vocab)
    table = to_bytes(compile_regex(r"[^\n]{1,20}")).table
    levelwalk._LEARNT.clear()  # as when more tries passed through it than it keeps
    walked = levelwalk.walk_root(trie, lambda states: table)
    assert walked is not None  # the class trie walked from the root, not the bytes
    assert np.array_equal(walked, levelwalk.walk_bytes(trie, lambda states: table))
