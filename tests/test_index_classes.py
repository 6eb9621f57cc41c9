"""The closure finds successor sets in one of three ways: (token prefix, state) pairs one
by one, node sets split by each state's byte partition (``fsmviz.tokens.fast.successors``), or pairs
over the vocabulary's DAWG (``fsmviz.tokens.fast.dawg``, at most 64 states). All must tell the same
story as the rows: the successor set of every state is exactly the set of
states its row's tokens lead to, with the real 49k vocabulary and patterns whose states
share partitions (strings, counted repeats) or do not (literals)."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import build_index
from fsmviz.tokens import index as index_module
from fsmviz.tokens.fast import dawg

PATTERNS = [
    r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+[a-zA-Z0-9]",
    r"([A-Za-z]{1,12} ){2,10}[A-Za-z]{1,12}\.",
    r'\{"name": "[^"\\]{0,12}", "city": "[一-龥]{1,4}"\}',
    r"(ishmael|moby dick)",
    r"[0-9]+\.[0-9]+",
    r'\{"a": "[^"]{0,8}", "b": (true|false), "c": "[^"]{2,5}"\}',
    r"(?i)k[a-zé]{0,6}!",
    # loops over wide classes: the DAWG walk stops where every byte below loops back
    r"[a-z0-9]+(-[a-z0-9]+)*",
    r"\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?",
    # 79 states, 18 wide: in the "dawg" walk those go over the DAWG, the rest pair by pair
    r'\{"title": "[^"]+", "album": "[^"]+", "year": (19|20)[0-9]{2}, "us-chart-max": [0-9]{1,3}\}',
]


WALKS = {  # (SHARING, PAIR_BUDGET, dawg.MAX_STARTS) that make the closure walk one way
    "node sets": (0, 0, 64),
    "dawg": (float("inf"), 0, 64),  # over 64 states: the wide ones (if <= 64), else pairs
    "pairs": (float("inf"), 10**12, 0),
}


@pytest.mark.parametrize("walk", WALKS)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_successor_sets_equal_the_rows_targets(pattern, walk, bundled_vocab, monkeypatch):
    sharing, budget, dawg_starts = WALKS[walk]
    monkeypatch.setattr(index_module, "SHARING", sharing)
    monkeypatch.setattr(index_module, "PAIR_BUDGET", budget)
    monkeypatch.setattr(dawg, "MAX_STARTS", dawg_starts)
    monkeypatch.setattr(index_module, "CLOSURE_SECONDS", 120.0)  # a loaded machine is no error
    built = build_index(pattern, bundled_vocab)  # a fresh index beside it, not the cached one
    index = index_module.TokenIndex(built.dfa, built.byte_dfa, bundled_vocab, built.trie)
    states = index.states
    assert len(states) > 1
    for state in states:
        row = index.row(state)
        np.testing.assert_array_equal(index.successors(state), np.unique(row.targets))
