"""Successor pairs over the *readable* part of the vocabulary: every start at once.

A token whose bytes include one that no state of the table reads dies there from every
start. Under an IPv6 address only hex digits and ``:`` are read, and of SmolLM2's 49k
tokens 201 are spelled with those alone: the walk need only go down the trie's branches
of readable bytes. Along them, each trie node carries one row of states, a column a
start (``-1``: dead), made from its parent's row by one gather: every start moves at
once, and a level costs a few numpy calls whatever the starts. The pair walk
(``index._walk``) instead moved every (node, state) pair to every child of its node,
readable or not: 78 starts times the children of each live prefix.

Worked example: ``[0-9]+:?`` reads digits and ``:``; over "1", "12", ":", "a1" the
walk goes down "1", "12" and ":" ("a" is read by no state: its branch is never entered).
From state 0 (before a digit) "1" and "12" lead to 1 (after digits); from 1 they lead to
1 and ":" to 2 (after the colon, which reads nothing):

>>> import numpy as np
>>> from fsmviz import Vocabulary, build_index
>>> vocab = Vocabulary.from_strings(["1", "12", ":", "a1"], eos_token="</s>")
>>> index = build_index("[0-9]+:?", vocab)
>>> table = index.byte_dfa.table
>>> [a.tolist() for a in read_walk(index.trie, table, [0, 1])]
[[0, 1, 1], [1, 1, 2]]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fsmviz.arrays import runs
from fsmviz.tokens.trie import VocabTrie

__all__ = ["CELLS", "PAIR_WORK", "READ_BYTES", "READ_DENSITY", "read_walk", "readable_pairs"]

CELLS = 64_000
"""Row entries (a readable node's state for one start) and children looked at that a
walk may make in all before it gives up (None): IPv6's 78 starts over its ~280 readable
nodes make ~18k, an IBAN's (``[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}``) ~43k. Where a state
reads most bytes (``ghp_[A-Za-z0-9]{36}``: 41 starts over every alphanumeric token),
the readable part is most of the trie, and the pair walk, the class trie or the DAWG
serve it better; the entries are counted before they are made, so giving up costs at
most this much work (at 200k, ``ghp_...``'s gave up after 2.4 ms)."""
PAIR_WORK = 8_000
"""A pair walk whose second round makes fewer pairs than this (each start times the
children of the first bytes some state reads) is left to go pair by pair: it is small,
and its rounds take fewer numpy calls than a level here. Digits are SmolLM2's one-byte
tokens, so a date's walk is small (``\\d{4}-\\d{2}-\\d{2} ...``'s 26 starts: 3,848; 0.21 ms
here against 0.14); hex letters begin many tokens (IPv6's 78 starts: 26,832; 0.41 against
0.82, ``[0-9a-f]{64}``'s 65: 9,230; 0.48 against 1.8)."""
READ_BYTES = 48
"""Nor where the starts read more bytes than this: every letter and digit (62) spell
most of the vocabulary's words, and the walk would give up (``CELLS``) after ~0.7 ms
(``ghp_[A-Za-z0-9]{36}``, ``sha256-[A-Za-z0-9+/]{43}=``). An IBAN's ``[A-Z0-9]`` is 36."""
READ_DENSITY = 0.4
"""Nor where fewer than this share of the (start, readable byte) cells of the table lead
anywhere: each start then reads its own few bytes, and the rows carry mostly dead
entries (a list of keywords, ``(always|never|build|...)``: 0.05, 0.66 ms here against
0.24; cron's 151 states: 0.34, 0.95 against 0.50). IPv6's 78 states read hex digits and
``:`` alike: 0.81."""


def readable_pairs(
    trie: VocabTrie,
    table: np.ndarray,
    starts: list[int],
    check: Callable[[], None] | None = None,
    deepest: int | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """``read_walk``'s pairs where they pay (``PAIR_WORK``, ``READ_BYTES``,
    ``READ_DENSITY``), else None."""
    cells = (table if len(starts) == len(table) else table[np.asarray(starts)]) >= 0
    read = cells.any(axis=0)  # (every state, as the index asks: no gather; only a choice)
    lo = trie.first_child[0]
    first = np.flatnonzero(read[trie.byte[lo : lo + trie.num_children[0]]])
    if int(trie.num_children[first + lo].sum()) * len(starts) < PAIR_WORK:
        return None
    count = np.count_nonzero(read)
    if count > READ_BYTES or np.count_nonzero(cells) < READ_DENSITY * len(starts) * count:
        return None
    return read_walk(trie, table, starts, check, deepest)


def read_walk(
    trie: VocabTrie,
    table: np.ndarray,
    starts: list[int],
    check: Callable[[], None] | None = None,
    deepest: int | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Every distinct (position in ``starts``, state a token leads to), sorted by
    position then state (as ``index._successor_pairs``), walking only the trie's nodes
    whose bytes some state of ``table`` reads; None past ``CELLS`` entries or past
    ``deepest`` levels (as the pair walk gives up: a loop on spaces reads SmolLM2's
    80-space runs).

    Each level holds its live nodes and a matrix of states (a row a node, a column a
    start): a child's row is its parent's read through the table at the child's byte (a
    dead entry reads a spare row of -1s past the table's last). Nodes dead for every
    start are dropped; the rows where tokens end are marked once, at the end."""
    num_states, width = table.shape
    readable = (table >= 0).any(axis=0)
    flat = np.full((num_states + 1) * width, -1, dtype=np.int32)  # the dead row last
    flat[: table.size] = table.reshape(-1)
    first_child, num_children, byte, has_token = (
        trie.first_child,
        trie.num_children,
        trie.byte,
        trie.has_token,
    )
    nodes = first_child[0] + np.arange(num_children[0], dtype=first_child.dtype)
    nodes = nodes[readable[byte[nodes]]]
    rows = np.ascontiguousarray(table[np.asarray(starts)][:, byte[nodes]].T, dtype=np.int32)
    ended = []  # each level's rows of the nodes where tokens end
    made, depth = rows.size, 1
    while True:
        if check is not None:
            check()
        ended.append(rows[has_token[nodes]])
        live = (rows >= 0).any(axis=1).nonzero()[0]
        if len(live) < len(nodes):
            nodes, rows = nodes.take(live), rows[live]
        counts = num_children[nodes]
        ends = np.cumsum(counts)  # where each node's children end: their ``parents``
        total = int(ends[-1]) if len(ends) else 0
        made += total  # the children looked at, then the entries made
        if made > CELLS:
            return None
        children = runs(first_child[nodes], counts, ends)
        kept = readable[byte[children]].nonzero()[0]
        if not len(kept):
            break
        if deepest is not None and depth >= deepest:
            return None
        depth += 1
        parents = np.searchsorted(ends, kept, side="right")
        nodes = children.take(kept)
        made += len(nodes) * len(starts)
        if made > CELLS:
            return None
        rows = flat[rows[parents] * width + byte[nodes][:, None]]
    found = np.zeros(len(starts) * (num_states + 1), dtype=bool)  # by start, 1 + state
    spots = np.arange(1, len(found), num_states + 1)  # each start's state 0 (-1: its last)
    found[(np.concatenate(ended) + spots).reshape(-1)] = True
    origin, state = np.nonzero(found.reshape(len(starts), num_states + 1)[:, 1:])
    return origin.astype(np.int64), state.astype(np.int64)
