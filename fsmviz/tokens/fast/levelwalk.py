"""One state's allowed tokens by the plainest walk there is: every trie node's state, one
level of the byte trie per numpy round, rows of the automaton made as states are met.

The subtree tests of ``derivatives._NearStart.first_row`` (a chain or a closure takes a
whole subtree at once) pay off where a few states hold most of the vocabulary. On a large
multilingual vocabulary they do not: under ``[^\\n]{1,20}`` each count of characters is a
state, a character of 2-4 bytes passes through partial states, and Gemma's 262k tokens
(600k trie nodes, a third of them inside non-ASCII characters) spread over ~100 states a
level, each tested apart: 170 ms of CPU, against 10 ms on SmolLM2's 49k.

Here no node is tested; each is *computed*, with two gathers::

    level d+1:  state[child] = table[state[parent[child]], byte[child]]

(``table[-1]`` is a row of -1, so a dead parent gives dead children for free.) Every
level costs a few ms at most whatever the pattern, and the whole vocabulary ~5 ms at
262k. Where few nodes of a level live, only their children are computed (a pattern
whose tokens die in a few bytes walks a few hundred nodes, not 600k), and the walk ends
at the first level with none alive.

What it needs of the vocabulary, beside its trie, is each node's parent and where each
level begins (``TrieLevels``: built once per trie and kept, ``warm`` builds it ahead).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fsmviz.arrays import runs
from fsmviz.cache import BoundedCache
from fsmviz.tokens.trie import VocabTrie

__all__ = ["TrieLevels", "levels_of", "walk_levels"]

SPARSE_LEVEL = 8
"""A level whose nodes live fewer than one in this many has only its live nodes'
children computed."""
WHOLE = 1_024
"""Nor is a level of fewer live nodes than this held whole: the walk then never fills its
array of every node's state (600k at 262k tokens), which a pattern whose tokens die in a
few bytes does not need."""


@dataclass(frozen=True, eq=False)
class TrieLevels:
    """A trie's nodes by level: ``parent[n]`` (the root's is 0), ``bounds[d]`` the first
    node ``d`` bytes deep (one entry past the deepest level: the node count), and
    ``ends[k]`` the node where ``trie.token_ids[k]`` ends; ``byte`` is ``trie.byte``
    (int32, as the states), ``num_ids`` one past the largest id."""

    parent: np.ndarray
    bounds: np.ndarray
    ends: np.ndarray
    byte: np.ndarray
    num_ids: int

    @staticmethod
    def of(trie: VocabTrie) -> TrieLevels:
        nodes = len(trie.byte)
        parent = np.zeros(nodes, dtype=np.intp)
        parent[1:] = np.repeat(np.arange(nodes), trie.num_children)  # breadth-first layout
        bounds = np.searchsorted(trie.depth, np.arange(int(trie.depth.max()) + 2))
        ends = np.repeat(np.arange(nodes), np.diff(trie.token_start))
        byte = trie.byte.astype(np.int32)
        return TrieLevels(parent, bounds, ends, byte, int(trie.token_ids.max(initial=-1)) + 1)


_LEVELS: BoundedCache[tuple[VocabTrie, TrieLevels]] = BoundedCache(maxsize=4)


def levels_of(trie: VocabTrie) -> TrieLevels:
    """``TrieLevels.of(trie)``, kept for the last few tries (the trie itself is kept with
    it, so that the key, its ``id``, cannot be reused by another)."""
    kept = _LEVELS.get_or_build(id(trie), lambda: (trie, TrieLevels.of(trie)))
    return kept[1]


def walk_levels(
    trie: VocabTrie,
    nodes: np.ndarray,
    states: np.ndarray,
    table: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """The token ids (sorted, int32) at and below ``nodes`` (trie nodes of one level, each
    in a live state of ``states``) whose bytes lead on to a live state: from the root and
    the start state, a state's row (``derivatives`` hands over a level half walked).
    ``table(states)`` makes the rows of ``states`` (distinct ids, >= 0) where not made yet
    and returns the whole transition table: ``table[s, b]`` the state after byte ``b``
    from ``s``, -1 for none, with a last row of -1 that no state uses.

    A level is held whole (``whole``: every node's state, -1 where dead, written into
    ``reached``, one entry per trie node) while many of its nodes live, else as its live
    nodes and their states (``nodes``, ``states``), whose tokens are noted apart."""
    levels = levels_of(trie)
    bounds = levels.bounds.tolist()
    reached: np.ndarray | None = None  # made at the first whole level
    whole, nodes, states = None, nodes.astype(np.int32), states.astype(np.int32)
    hits = []  # the live nodes of levels not whole, where tokens end
    top = int(trie.depth[nodes[0]]) + 1 if nodes.size else len(bounds) - 1
    for depth in range(top, len(bounds) - 1):
        lo, hi = bounds[depth - 1], bounds[depth]
        if whole is not None:  # counted with the dead (-1) as 0: no list of the live
            count = np.bincount(whole + 1)
            met, size = np.flatnonzero(count[1:]), hi - lo - int(count[0])
        else:
            hits.append(nodes[trie.has_token[nodes]])
            met, size = np.flatnonzero(np.bincount(states)), nodes.size
        if not size:
            break
        flat = table(met).reshape(-1)
        if size >= WHOLE and size * SPARSE_LEVEL >= hi - lo:
            if whole is None:
                whole = np.full(hi - lo, -1, dtype=np.int32)
                whole[nodes - lo] = states
            if reached is None:
                reached = np.full(len(trie.byte), -1, dtype=np.int32)
            whole = _whole_level(levels, flat, whole, lo, hi, bounds[depth + 1])
            reached[hi : bounds[depth + 1]] = whole
            continue
        if whole is not None:
            live = np.flatnonzero(whole >= 0)
            nodes, states = live + lo, whole[live]
        counts = trie.num_children[nodes]
        children = runs(trie.first_child[nodes], counts)
        after = flat[np.repeat(states << 8, counts) + levels.byte[children]]
        keep = after >= 0
        whole, nodes, states = None, children[keep], after[keep]
    else:
        if whole is None:
            hits.append(nodes[trie.has_token[nodes]])
    return _tokens(trie, levels, np.concatenate(hits), reached)


def _whole_level(
    levels: TrieLevels, flat: np.ndarray, above: np.ndarray, lo: int, hi: int, end: int
) -> np.ndarray:
    """The states of the nodes ``hi .. end - 1`` (a level), from ``above``, those of the
    nodes ``lo .. hi - 1`` (the level above; -1: dead, and a dead parent's -1 reads the
    table's last row, which is -1 too)."""
    found = above[levels.parent[hi:end] - lo]
    found <<= 8
    found += levels.byte[hi:end]
    return flat[found]


def _tokens(
    trie: VocabTrie, levels: TrieLevels, hit: np.ndarray, reached: np.ndarray | None
) -> np.ndarray:
    """The token ids (sorted, int32) that end at the nodes ``hit`` or at a live node of
    ``reached`` (the whole levels' states)."""
    starts = trie.token_start[hit]
    tokens = trie.token_ids[runs(starts, trie.token_start[hit + 1] - starts)]
    if reached is None and tokens.size * 16 < levels.num_ids:
        return np.sort(tokens).astype(np.int32)
    allowed = np.zeros(levels.num_ids, dtype=bool)
    allowed[tokens] = True
    if reached is not None:
        allowed[trie.token_ids[reached[levels.ends] >= 0]] = True
    return np.flatnonzero(allowed).astype(np.int32)
