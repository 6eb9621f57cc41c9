"""Shortcuts of the whole index's set-up (``fsmviz.tokens.index``) that answer a question
more cheaply than its plain definition: each checked against that definition, on the
real 49k vocabulary, for patterns where the shortcut answers and where it cannot."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import build_index
from fsmviz.tokens import index as index_module
from fsmviz.tokens.fast.successors import WIDE

SHARING_PATTERNS = [
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",  # shared: 32 alike
    r"([A-Za-z]{1,12} ){2,10}[A-Za-z]{1,12}\.",  # shared
    r".*a",  # 9 wide states, 4 edge counts: the bound says no
    r".*[0-9]{3}",
    r"[a-z0-9]+(-[a-z0-9]+)*",  # 2 wide states: too few to share
    r"([a-p][q-zA-F]){8}",  # 16 wide states, one edge count, two partitions: sharing 8
    r"([a-p][q-zA-F][G-V]){6}",  # 18 wide states, one edge count, three partitions: 6
]


@pytest.mark.parametrize("pattern", SHARING_PATTERNS)
def test_shared_is_the_partitions_sharing(pattern, bundled_vocab):
    """``_shared`` bounds the sharing by the wide states' distinct edge counts before it
    computes the partitions; its answer is still theirs."""
    index = build_index(pattern, bundled_vocab)
    table = index.byte_dfa.table
    edges = (table >= 0).sum(axis=1)
    wide = edges >= WIDE
    exact = bool(wide.sum() >= index_module.SHARING) and (
        index_module.BytePartitions.of(table).sharing >= index_module.SHARING
    )
    assert index_module._shared(index, edges) == exact


def _doubled_byte_by_byte(table: np.ndarray, usable: np.ndarray, missing: np.ndarray) -> bool:
    """``_doubled``'s definition: each byte compared with every usable byte, row by row."""
    for byte in missing.tolist():
        rows = np.flatnonzero(table[:, byte] >= 0)
        if not (table[rows][:, usable] == table[rows, byte][:, None]).any(axis=1).all():
            return False
    return True


LIVENESS_PATTERNS = [
    r".*a",  # SmolLM2 lacks "\x04", "\xf1", ...: "\x03", "\xf3" lead where they do
    r"[^\n]{1,5}",
    r"\x04|b",  # "\x04" goes where "b" does, not where its neighbours do
    r"[\x03\x04]x|[\x04\x05]y",  # "\x04" leads to a state of its own: not doubled
    r"a[\x03\x04]|b[\x04\x05]",  # as "\x03" after "a", as "\x05" after "b"
    r"[\x00-\x1f]z|\x04w",
    r"[\U00040000-\U0004ffff\U000c0000-\U000cffff]q",  # "\xf1" leads where "\xf3" does
    r"[\U00040000-\U0004ffff]q",  # "\xf1" alone: no usable lead byte
]


@pytest.mark.parametrize("pattern", LIVENESS_PATTERNS)
def test_doubled_is_the_byte_by_byte_test(pattern, bundled_vocab):
    index = build_index(pattern, bundled_vocab)
    table, usable = index.byte_dfa.table, index.trie.single_byte_tokens
    missing = np.flatnonzero((table >= 0).any(axis=0) & ~usable)
    assert len(missing)
    neighbours = index.trie.untokened_neighbours
    assert index_module._doubled(table, usable, neighbours) == _doubled_byte_by_byte(
        table, usable, missing
    )


SETTLED_PATTERNS = [
    r"[a-z]+",  # settled: every letter is a token
    r".*a",  # walked
    r".*[0-9]{3}",
    r".*(error|warning): [A-Za-z ]+",  # 33 states: the widest squaring
    r"[a-z0-9]+(-[a-z0-9]+)*",
    r"\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?",
    r"(ab){1,20}c",  # a long chain: many squarings
]


@pytest.mark.parametrize("pattern", SETTLED_PATTERNS)
def test_settled_bounds_are_the_byte_reach_and_its_pairs_the_walks(pattern, bundled_vocab):
    """``_byte_bound`` squares the table's adjacency for the starts' upper bounds, which
    the DAWG walk then takes as its own (``dawg.byte_reach``): they must be equal.
    ``_settled`` answers exactly where that bound equals the one-byte tokens' states (its
    one product stands for the closure), and then with the walk's pairs."""
    from fsmviz.tokens.fast import dawg

    index = build_index(pattern, bundled_vocab)
    table, one_byte = index.byte_dfa.table, index.trie.single_byte_tokens
    every = list(range(len(table)))
    edges = index_module._adjacency(table)
    for todo in (every, every[::2], every[-1:]):
        bound = index_module._byte_bound(edges, todo)
        assert np.array_equal(bound, dawg.byte_reach(table, todo))
        lower = np.zeros_like(bound)
        for k, start in enumerate(todo):
            lower[k, table[start][one_byte & (table[start] >= 0)]] = True
        settled = index_module._settled(edges, index_module._adjacency(table[:, one_byte]), todo)
        assert (settled is not None) == np.array_equal(bound, lower)
        if settled is not None:
            walked = dawg.dawg_successor_pairs(dawg.dawg_of(bundled_vocab), table, todo)
            assert [a.tolist() for a in settled] == [a.tolist() for a in walked]
    lowest = index_module._adjacency(table[:, one_byte])
    assert (index_module._settled(edges, lowest, every) is not None) == (pattern == r"[a-z]+")


RUNS_PATTERNS = [
    r"\s*\d+\s*",  # a whitespace loop: SmolLM2's runs of spaces
    r"[ \t]*[a-z]+",
    r"[-=]*>",  # runs of dashes, of equals signs
    r"[xyz]*q",  # loops on three bytes, no long token of them: the walk ends
    r"[0-9,]*\.",
]


@pytest.mark.parametrize("pattern", RUNS_PATTERNS)
def test_runs_past_only_where_the_pair_walk_gives_up(pattern, bundled_vocab):
    """``_runs_past`` sends a walk to the DAWG without trying the pair walk: only where
    that walk, from the same starts, lives past ``DEEP_ROUNDS`` (returns None)."""
    index = build_index(pattern, bundled_vocab)
    table, trie = index.byte_dfa.table, index.trie
    every = list(range(len(table)))
    for todo in [every] + [[state] for state in every]:
        walked = index_module._walk(trie, table, todo, None, None, index_module.DEEP_ROUNDS)
        if index_module._runs_past(trie, table, todo):
            assert walked is None, todo
    gives_up = index_module._runs_past(trie, table, every)
    assert gives_up == (pattern not in (r"[xyz]*q", r"[0-9,]*\.")), pattern


def test_long_runs_are_the_least_byte_sets_of_the_long_tokens(bundled_vocab):
    """Every token longer than ``DEEP_ROUNDS`` holds one of ``_long_runs``' sets, and
    each of them is a long token's set, none holding another."""
    trie = build_index("a", bundled_vocab).trie
    runs = index_module._long_runs(trie).sets
    sets = {
        sum(1 << byte for byte in set(data))
        for data in bundled_vocab.all_token_bytes
        if len(data) > index_module.DEEP_ROUNDS
    }
    assert set(runs) <= sets
    assert all(any(not run & ~bits for run in runs) for bits in sets)
    assert all(a == b or a & ~b for a in runs for b in runs)
