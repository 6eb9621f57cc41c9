"""Successor sets: where a state's tokens can lead, without listing its tokens.

The safe end and the doctor need, for every state of the index, only the *set of states*
its tokens lead to, never the tokens themselves. A JSON string of up to 50 characters has
50 states that each allow ~40,000 tokens; walking every (token, state) pair, as a row does,
costs 50 × 40,000 trie steps. This module walks far fewer.

**The idea: walk sets of trie nodes, split only where the state tells bytes apart.** From
a state ``s``, every byte that leads to the same target behaves alike for this step: in a
JSON string state, all letters lead to the next string state. So instead of moving each
trie node on its own, the walk keeps a *node set* (all trie nodes at one depth whose bytes
so far led to the same DFA state) and moves the whole set at once: the children of the set
are split into groups by the target their byte leads to, and each group is one new node
set. A group that contains a token's node makes its target a successor.

Two observations make this cheap:

* The split depends only on the state's *partition* of the bytes (which bytes share a
  target), not on the target ids. The 50 states of a string all have the same partition,
  so "the children of node set N under partition P" is computed once and reused by all of
  them (the expansion cache below).
* The answer for one start does not need the node sets' contents, only their ids: the
  frontier holds (start, state, node-set id) triples, a few per start and depth, and moves
  with a handful of numpy gathers per depth.

A worked example with the toy vocabulary ``a b ab ba aa`` and ``[ab]{0,3}`` (states 0, 1,
2, 3 count the letters read, all accepting). From state 0 the root's children ``a``,
``b`` both lead to state 1: one node set {a, b}, which holds tokens, so 1 is a successor.
Its children ``ab``, ``ba``, ``aa`` all lead to state 2: one set, also with tokens.
States 1 and 2 have the same partition as state 0 (``a`` and ``b`` alike), so their
expansions are looked up, not recomputed:

>>> from fsmviz import Vocabulary, build_index
>>> vocab = Vocabulary.from_strings(["a", "b", "ab", "ba", "aa"], eos_token="</s>")
>>> index = build_index("[ab]{0,3}", vocab)
>>> origin, target = successor_pairs(index.trie, index.byte_dfa.table, [0, 1, 2])
>>> sorted(zip(origin.tolist(), target.tolist()))
[(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .trie import VocabTrie, runs

__all__ = ["WIDE", "BytePartitions", "successor_pairs", "wide_states"]


FEW_CHILDREN = 32
"""A node set with at most this many children (and so, unless leaves, nodes) is split in
plain Python (``_split_few``)."""
WIDE = 16
"""A state reading at least this many distinct bytes is *wide*: its tokens are many."""


def wide_states(table: np.ndarray) -> np.ndarray:
    """Which states are wide (``WIDE``): a boolean mask over the table's rows."""
    return (table >= 0).sum(axis=1) >= WIDE


@dataclass(frozen=True)
class BytePartitions:
    """Each state's partition of the bytes (which bytes share a target), and the distinct
    partitions.

    A partition is written as, for every byte, the *smallest byte with the same target*
    (-1 where the byte has no edge): rows ``[1, 1, 4, -1]`` and ``[7, 7, 2, -1]`` are both
    ``[0, 0, 2, -1]``. ``of_state[s]`` is the partition id of state ``s`` and ``reps[p]``
    the partition itself.

    >>> parts = BytePartitions.of(np.array([[1, 1, 4, -1], [7, 7, 2, -1], [3, 5, 5, 5]]))
    >>> parts.of_state.tolist(), parts.reps.tolist()
    ([0, 0, 1], [[0, 0, 2, -1], [0, 1, 1, 1]])
    """

    of_state: np.ndarray  # int64 [num_states]
    reps: np.ndarray  # [num_partitions, 256]
    sharing: float
    """Wide states per partition of wide states: how much work node sets save. The 50
    states of a JSON string share one; the 7 of an e-mail pattern have 6 among them."""

    @staticmethod
    def of(table: np.ndarray) -> BytePartitions:
        # Bytes that no state tells apart (one column of the table) are one class: 63 of
        # 256 for a 22-field schema. Classes are numbered by their smallest byte, so "the
        # smallest class with the same target" names the smallest byte too.
        classes: dict[bytes, int] = {}  # numbered as met, bytes up: by smallest byte
        columns = np.ascontiguousarray(table.T)
        byte_class = np.array([classes.setdefault(c.tobytes(), len(classes)) for c in columns])
        smallest = np.unique(byte_class, return_index=True)[1]
        reduced = np.ascontiguousarray(table[:, smallest])  # [num_states, classes]
        num_states, width = reduced.shape
        order = np.argsort(reduced, axis=1, kind="stable")  # same targets together, classes up
        ranked = np.take_along_axis(reduced, order, axis=1)
        starts = np.ones(ranked.shape, dtype=bool)
        starts[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
        run_start = np.maximum.accumulate(np.where(starts, np.arange(width), 0), axis=1)
        reps = np.empty_like(reduced)
        np.put_along_axis(reps, order, np.take_along_axis(order, run_start, axis=1), axis=1)
        reps[reduced < 0] = -1
        seen: dict[bytes, int] = {}
        ids = np.array([seen.setdefault(row.tobytes(), len(seen)) for row in reps], np.int64)
        first = np.zeros(len(seen), dtype=np.int64)
        first[ids[::-1]] = np.arange(num_states - 1, -1, -1)  # each partition's first state
        per_byte = reps[first][:, byte_class]  # back to 256 bytes: class -> its byte
        full = np.where(per_byte >= 0, smallest[per_byte], -1)
        wide = wide_states(table)
        sharing = int(wide.sum()) / max(len(np.unique(ids[wide])), 1)
        return BytePartitions(ids, full.astype(table.dtype), sharing)


class _NodeSets:
    """Node sets by id, and their expansions under each partition (both grow as the walk
    meets new ones). An expansion is three parallel arrays over its groups: a byte of the
    group (its target is ``table[state, byte]``), the group's node-set id, and whether the
    group holds a token."""

    def __init__(self, trie: VocabTrie, reps: np.ndarray):
        self.trie = trie
        self.reps = reps
        self.sets: list[array] = [array("i", [0])]  # ascending int32 node numbers; 0: the root
        self.ids: dict[bytes, int] = {self.sets[0].tobytes(): 0}
        self.expansions: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        # The trie's arrays as memoryviews, read one item at a time by ``_split_few``
        # (indexing one returns a plain int, a few times faster than ``ndarray.item``).
        self._first_child = memoryview(trie.first_child)
        self._num_children = memoryview(trie.num_children)
        self._byte = memoryview(trie.byte)
        self._has_token = memoryview(trie.has_token)
        self._reps: dict[int, memoryview] = {}

    def expand(self, set_id: int, partition: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        key = (set_id, partition)
        found = self.expansions.get(key)
        if found is None:
            nodes = self.sets[set_id]
            num_children = self._num_children
            if len(nodes) <= FEW_CHILDREN and sum(num_children[n] for n in nodes) <= FEW_CHILDREN:
                found = self._split_few(nodes, partition)
            else:
                found = self._split(np.frombuffer(nodes, dtype=np.int32), self.reps[partition])
            self.expansions[key] = found
        return found

    def _split(self, nodes: np.ndarray, reps: np.ndarray):
        trie = self.trie
        children = runs(trie.first_child[nodes], trie.num_children[nodes])
        rep = reps[trie.byte[children]]
        alive = rep >= 0
        children, rep = children[alive], rep[alive]
        if not len(rep):
            return rep, np.zeros(0, np.int64), np.zeros(0, bool)
        if rep.min() == rep.max():  # one group (a string's letters): no split needed
            firsts, groups = np.zeros(1, np.int64), [children]
        else:
            # A stable sort on small integers is a radix sort; children stay ascending.
            order = np.argsort(rep.astype(np.uint8), kind="stable")
            children, rep = children[order], rep[order]
            firsts = np.flatnonzero(np.diff(rep)) + 1
            groups = np.split(children, firsts)
            firsts = np.concatenate(([0], firsts))
        set_ids = np.array([self._intern(group.tobytes()) for group in groups], dtype=np.int64)
        tokens = np.logical_or.reduceat(trie.has_token[children], firsts)
        return rep[firsts], set_ids, tokens

    def _split_few(self, nodes: array, partition: int):
        """``_split`` one child at a time, for the many small sets deep in the trie (half
        of a schema's splits have at most four children), where a dozen numpy calls cost
        more than the children. Same groups, same order."""
        first_child, num_children, byte = self._first_child, self._num_children, self._byte
        has_token = self._has_token
        reps = self._reps.get(partition)
        if reps is None:
            reps = self._reps[partition] = memoryview(np.ascontiguousarray(self.reps[partition]))
        groups: dict[int, array] = {}
        for node in nodes:
            first = first_child[node]
            for child in range(first, first + num_children[node]):
                rep = reps[byte[child]]
                if rep >= 0:
                    group = groups.get(rep)
                    if group is None:
                        group = groups[rep] = array("i")
                    group.append(child)
        order = sorted(groups)
        return (
            np.array(order, dtype=self.reps.dtype),
            np.array([self._intern(groups[rep].tobytes()) for rep in order], dtype=np.int64),
            np.array([any(has_token[c] for c in groups[rep]) for rep in order], dtype=bool),
        )

    def _intern(self, key: bytes) -> int:
        """The id of the node set whose int32 node numbers are the bytes ``key``."""
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.sets)
            self.sets.append(array("i", key))
        return found


def successor_pairs(
    trie: VocabTrie,
    table: np.ndarray,
    starts: list[int],
    partitions: BytePartitions | None = None,
    check: Callable[[], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Every (position in ``starts``, state) such that some token leads from that start
    to that state; sorted, without repeats. ``partitions`` are the table's (computed when
    not given); ``check`` is called once per trie depth (it may raise to stop a walk that
    runs out of time)."""
    partitions = partitions or BytePartitions.of(table)
    partition = partitions.of_state
    node_sets = _NodeSets(trie, partitions.reps)
    num_partitions = len(partitions.reps)
    origins = np.arange(len(starts), dtype=np.int64)
    states = np.asarray(starts, dtype=np.int64)
    sets = np.zeros(len(starts), dtype=np.int64)
    found_origin, found_state = [], []
    while origins.size:
        if check is not None:
            check()
        # The distinct (node set, partition) pairs of this depth, each expanded once.
        keys, inverse = np.unique(sets * num_partitions + partition[states], return_inverse=True)
        expansions = [node_sets.expand(*divmod(int(k), num_partitions)) for k in keys]
        sizes = np.array([len(e[0]) for e in expansions], dtype=np.int64)
        offsets = np.cumsum(sizes) - sizes
        byte = np.concatenate([e[0] for e in expansions])
        child = np.concatenate([e[1] for e in expansions])
        token = np.concatenate([e[2] for e in expansions])
        # Each triple moves to its expansion's groups: pick them out of the flat arrays.
        counts = sizes[inverse]
        group = runs(offsets[inverse], counts)
        states = table[np.repeat(states, counts), byte[group]].astype(np.int64)
        origins, sets, hit = np.repeat(origins, counts), child[group], token[group]
        found_origin.append(origins[hit])
        found_state.append(states[hit])
    if not found_origin:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return distinct_pairs(np.concatenate(found_origin), np.concatenate(found_state), len(table))


def distinct_pairs(
    origins: np.ndarray, states: np.ndarray, num_states: int
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs ``(origins[i], states[i])``, sorted by origin then state: each
    pair is packed into one integer ``origin * num_states + state`` and the integers are
    sorted and deduplicated.

    >>> [a.tolist() for a in distinct_pairs(np.array([1, 0, 1]), np.array([2, 2, 2]), 3)]
    [[0, 1], [2, 2]]
    """
    packed = np.unique(origins.astype(np.int64) * num_states + states)
    return np.divmod(packed, num_states)
