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

Four observations make this cheap:

* The split depends only on the state's *partition* of the bytes (which bytes share a
  target), not on the target ids. The 50 states of a string all have the same partition,
  so "the children of node set N under partition P" is computed once per depth for all
  of them: the walk expands each distinct (node set, partition) *key* of a depth once.
* Equal groups are one node set. The letters below the root are one group under most of
  a schema's 74 partitions; numbered once (``_same_sets``), that set is split once more
  at the next depth, not 74 times.
* The answer for one start does not need the node sets' contents, only their ids: the
  frontier holds (start, state, node-set id) triples, a few per start and depth, and moves
  with a handful of numpy gathers per depth. The keys' expansions are also computed
  together, all keys of a depth in one pass over their children (``_Groups``): a
  schema's walk has 1,100 keys, most with a few children, where one numpy pass per key
  cost more than the children themselves.
* A node whose bytes below are all letters of a string need not be walked at all: its
  tokens end along the string's chain of states, at their lengths (``_WholeSubtrees``).
  Most of the vocabulary is such nodes, a few bytes down.

A worked example with the toy vocabulary ``a b ab ba aa`` and ``[ab]{0,3}`` (states 0, 1,
2, 3 count the letters read, all accepting). From state 0 the root's children ``a``,
``b`` both lead to state 1: one node set {a, b}, which holds tokens, so 1 is a successor.
Its children ``ab``, ``ba``, ``aa`` all lead to state 2: one set, also with tokens.
States 1 and 2 have the same partition as state 0 (``a`` and ``b`` alike): at each depth
their triples share one key, expanded once:

>>> from fsmviz import Vocabulary, build_index
>>> vocab = Vocabulary.from_strings(["a", "b", "ab", "ba", "aa"], eos_token="</s>")
>>> index = build_index("[ab]{0,3}", vocab)
>>> origin, target = successor_pairs(index.trie, index.byte_dfa.table, [0, 1, 2])
>>> sorted(zip(origin.tolist(), target.tolist()))
[(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fsmviz.arrays import distinct, numbered, runs
from fsmviz.automaton.bytedfa import ByteColumns, to_bytes
from fsmviz.automaton.dfa import compile_regex
from fsmviz.tokens.fast.classwalk import MERGED_CLASSES, ClassTrie, class_trie
from fsmviz.tokens.fast.levelwalk import (
    LEARNT_FIRST,
    SMALLER,
    _alike,
    byte_partition,
    learn,
    levels_of,
)
from fsmviz.tokens.trie import VocabTrie

__all__ = [
    "WIDE",
    "BytePartitions",
    "by_classes",
    "class_pairs",
    "closure_pairs",
    "edge_counts",
    "successor_pairs",
    "warm_classes",
]


FEW_GROUPS = 64
"""Up to this many groups at one depth are told apart by their bytes, in a dict; more
are hashed with numpy first (``_same_sets``)."""
_MIX = np.uint64(0x9E3779B97F4A7C15)
"""An odd 64-bit constant (2**64 over the golden ratio) that scatters node numbers before
they are summed into a node set's hash (``_same_sets``)."""
WHOLE_ABOVE = 512
"""A depth of more nodes than this has its subtrees taken whole where they can be
(``_WholeSubtrees``): below it, what that saves costs less than the test."""
WIDE = 16
"""A state reading at least this many distinct bytes is *wide*: its tokens are many."""


def edge_counts(table: np.ndarray) -> np.ndarray:
    """Each row's entries with an edge (``>= 0``). A row of 256 flags is 32 words of
    eight bytes each 0 or 1, so their set bits (``np.bitwise_count``) count the edges:
    0.35 ms for a schema's 2,495 rows, where ``sum(axis=1)`` over the flags took 0.6.

    >>> edge_counts(np.array([[-1, 3, 0, -1, 5, 5, 5, 5], [-1] * 8])).tolist()
    [6, 0]
    """
    has = table >= 0
    if has.shape[1] % 8:
        return has.sum(axis=1)
    return np.bitwise_count(has.view(np.uint64)).sum(axis=1, dtype=np.int64)


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
    classes: int
    """The byte classes no state tells apart (``ByteColumns``): 63 for a 22-field schema."""

    @staticmethod
    def of(table: np.ndarray, columns: ByteColumns | None = None) -> BytePartitions:
        """The partitions of ``table``'s states; ``columns``: its byte classes, if known
        (``ByteDfa.columns``)."""
        # Bytes that no state tells apart (one column of the table) are one class: 63 of
        # 256 for a 22-field schema. Classes are numbered by their smallest byte, so "the
        # smallest class with the same target" names the smallest byte too.
        columns = columns or ByteColumns.of(table)
        byte_class, smallest = columns.byte_class, columns.smallest
        # [num_states, classes]; ``take`` along the columns: 0.2 ms where indexing took 0.7
        reduced = np.take(table, smallest, axis=1)
        num_states, width = reduced.shape
        # Most rows send every edge to one target (2,151 of a schema's 2,495: the states
        # inside a character, those along a literal key): each class with an edge takes
        # the first such class. Only the other rows are sorted.
        has = reduced >= 0
        first_edge = has.argmax(axis=1).astype(reduced.dtype)
        target = reduced[np.arange(num_states), first_edge][:, None]
        reps = np.where(has, first_edge[:, None], reduced.dtype.type(-1))
        several = np.flatnonzero((has & (reduced != target)).any(axis=1))
        if len(several):
            reps[several] = _smallest_alike(reduced[several])
        ids, first = _same_rows(reps)  # equal rows are one partition
        per_byte = reps[first][:, byte_class]  # back to 256 bytes: class -> its byte
        full = np.where(per_byte >= 0, smallest[per_byte], -1)
        # A state's edges, counted by class: each class's bytes share its column.
        wide = has @ np.bincount(byte_class, minlength=width) >= WIDE
        sharing = int(wide.sum()) / max(len(distinct(ids[wide])), 1)
        return BytePartitions(ids, full.astype(table.dtype), sharing, len(smallest))


def _same_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_same_sets`` for the rows of a matrix of integers from -1 to its width (a
    partition's classes): each row's number, and each number's first row, numbered in
    order of first rows. Past ``FEW_GROUPS`` rows each is hashed as one product with
    random integer weights, exact in float64 (no sum passes 2**53), so equal rows hash
    alike; each row is then checked against the first of its hash, and a collision
    (never seen) falls back to ``_same_sets``. A schema's 2,495 rows of 64: ~0.3 ms,
    where summing mixed entries (``_same_sets``) took 1.5.

    >>> rows = np.array([[0, 0, -1], [0, 1, 1], [0, 0, -1]])
    >>> [a.tolist() for a in _same_rows(rows)]
    [[0, 1, 0], [0, 1]]
    """
    num_rows, width = rows.shape
    groups = (rows.reshape(-1), np.arange(0, rows.size, width), np.full(num_rows, width))
    if num_rows <= FEW_GROUPS:
        return _same_bytes(*groups)
    weights = _ROW_WEIGHTS[:width] % (2**53 // (width * (width + 2)) - 1) + 1
    hashes = (rows + 1) @ weights.astype(np.float64)
    _, first, ids = np.unique(hashes, return_index=True, return_inverse=True)
    ids = ids.reshape(-1)
    if not (rows[first][ids] == rows).all():
        ids, first = _same_sets(*groups)
    rank = np.empty(len(first), dtype=np.int64)  # numbered in order of first rows
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[ids], np.sort(first)


_ROW_WEIGHTS = np.random.default_rng(5).integers(1, 2**40, 257, dtype=np.int64)
"""``_same_rows``' weights, one a column (at most 256 classes, and ``reps``' 256 bytes)."""


def _smallest_alike(rows: np.ndarray) -> np.ndarray:
    """For each entry of ``rows``, the first column of its row with the same value (-1
    where the value is -1): each row sorted (stably: same values together, columns up),
    then each column takes the first column of its run. Flat indices: take_along_axis is
    4x slower.

    >>> _smallest_alike(np.array([[7, 7, 2, -1], [3, 5, 5, 3]])).tolist()
    [[0, 0, 2, -1], [0, 1, 1, 0]]
    """
    num_rows, width = rows.shape
    order = np.argsort(rows, axis=1, kind="stable").astype(np.int32)
    row_base = np.arange(0, rows.size, width, dtype=np.int32)[:, None]
    at = (order + row_base).reshape(-1)
    ranked = rows.reshape(-1)[at].reshape(num_rows, width)
    starts = np.ones(ranked.shape, dtype=bool)
    starts[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
    run_start = np.where(starts, np.arange(width, dtype=np.int32), np.int32(0))
    np.maximum.accumulate(run_start, axis=1, out=run_start)
    alike = np.empty_like(rows)  # each column's run start, back in column order
    alike.reshape(-1)[at] = order.reshape(-1)[(run_start + row_base).reshape(-1)]
    alike[rows < 0] = -1
    return alike


@dataclass(frozen=True)
class _NodeSets:
    """One depth's node sets, flat: set ``i`` is ``nodes[offset[i] : offset[i] + size[i]]``
    (ascending trie nodes, all at that depth). Set ids are per depth: a trie node sits at
    one depth only, so a set never recurs deeper and nothing is kept past its depth."""

    nodes: np.ndarray  # int32
    offset: np.ndarray  # int64
    size: np.ndarray  # int64

    @staticmethod
    def root() -> _NodeSets:
        return _NodeSets(np.zeros(1, np.int32), np.zeros(1, np.int64), np.ones(1, np.int64))


@dataclass(frozen=True)
class _Groups:
    """The expansion of a depth's distinct (node set, partition) keys: every key's
    children split by the partition into groups, all keys at once. Key ``k``'s groups are
    ``first[k] .. first[k] + count[k] - 1``; group ``g`` moves on ``byte[g]`` (its target
    is ``table[state, byte[g]]``), becomes the next depth's set ``set_id[g]`` and holds a
    token when ``token[g]``."""

    first: np.ndarray
    count: np.ndarray
    byte: np.ndarray
    set_id: np.ndarray
    token: np.ndarray
    next_sets: _NodeSets

    @staticmethod
    def of(
        trie: VocabTrie,
        reps: np.ndarray,
        node: np.ndarray,
        node_key: np.ndarray,
        key_part: np.ndarray,
    ) -> _Groups:
        """The groups of the children of ``node`` (each tagged with its key, ascending
        within a key); key ``k`` is split by partition ``key_part[k]``."""
        counts = trie.num_children[node]
        child = runs(trie.first_child[node], counts)
        # Each child's group within its key (its byte's entry in the key's partition), and
        # its label: key * 256 + group.
        row = np.repeat(key_part.astype(np.int32)[node_key] * 256, counts)
        rep = reps.reshape(-1)[row + trie.byte[child]]
        label = np.repeat(node_key * 256, counts) + rep
        if rep.min(initial=0) < 0:  # children the partition has no edge for
            alive = rep >= 0
            child, label = child[alive], label[alive]
        # Group by (key, group). Children come ascending within a key (a breadth-first
        # trie numbers the children of ascending nodes ascending); a stable sort, needed
        # only where some key has several groups, keeps them so: each group's nodes are a
        # sorted node set, ready to compare.
        step = np.diff(label)
        if (step < 0).any():
            order = np.argsort(label, kind="stable")
            child, label = child[order], label[order]
            step = np.diff(label)
        starts = np.flatnonzero(np.concatenate(([len(label) > 0], step != 0)))
        group_key, byte = np.divmod(label[starts], 256)
        group_size = np.diff(starts, append=len(child))
        token = np.logical_or.reduceat(trie.has_token[child], starts) if len(starts) else starts
        set_id, kept = _same_sets(child, starts, group_size)
        next_sets = _NodeSets(child, starts[kept], group_size[kept])  # repeats left unread
        count = np.bincount(group_key, minlength=len(key_part))
        return _Groups(np.cumsum(count) - count, count, byte, set_id, token, next_sets)


def _same_sets(
    nodes: np.ndarray, starts: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Number the groups ``nodes[starts[g] : starts[g] + sizes[g]]`` so that equal groups
    share a number: for each group its number, and for each number its first group.

    Groups from different keys are often equal (the letters below the root are one group
    under each of a schema's 74 partitions), and one set expanded once is what makes the
    walk cheap. Each group is hashed (a sum of mixed node numbers), and every group is
    then checked node by node against the first group with its hash; a collision (never
    seen) falls back to comparing the groups' bytes.

    >>> nodes = np.array([3, 4, 7, 3, 4], dtype=np.int32)
    >>> [a.tolist() for a in _same_sets(nodes, np.array([0, 2, 3]), np.array([2, 1, 2]))]
    [[0, 1, 0], [0, 1]]
    """
    if len(starts) <= FEW_GROUPS:
        return _same_bytes(nodes, starts, sizes)
    mixed = (nodes.astype(np.uint64) + np.uint64(1)) * _MIX
    mixed ^= mixed >> np.uint64(29)
    hashes = np.add.reduceat(mixed, starts) ^ sizes.astype(np.uint64)
    _, set_id = np.unique(hashes, return_inverse=True)
    kept = _firsts(set_id)
    repeat = np.flatnonzero(kept[set_id] != np.arange(len(starts)))
    like = kept[set_id[repeat]]  # for each repeat, the first group with its hash
    same = (sizes[repeat] == sizes[like]).all() and bool(
        (nodes[runs(starts[repeat], sizes[repeat])] == nodes[runs(starts[like], sizes[like])]).all()
    )
    return (set_id, kept) if same else _same_bytes(nodes, starts, sizes)


def _same_bytes(
    nodes: np.ndarray, starts: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``_same_sets`` by the groups' bytes, one dict lookup each."""
    ids: dict[bytes, int] = {}
    set_id = np.array(
        [
            ids.setdefault(nodes[a : a + n].tobytes(), len(ids))
            for a, n in zip(starts.tolist(), sizes.tolist(), strict=True)
        ],
        dtype=np.int64,
    )
    return set_id, _firsts(set_id)


def _firsts(ids: np.ndarray) -> np.ndarray:
    """For each id ``0 .. max(ids)``, the first position where it occurs.

    >>> _firsts(np.array([1, 0, 1, 2, 0])).tolist()
    [1, 0, 3]
    """
    first = np.empty(int(ids.max(initial=-1)) + 1, dtype=np.int64)
    first[ids[::-1]] = np.arange(len(ids) - 1, -1, -1)  # the last write, the first position
    return first


_DEAD, _MIXED = -1, -2  # a chain's state past its end; a state that splits the group


@dataclass(frozen=True)
class _WholeSubtrees:
    """Subtrees taken whole: where every byte below a node is in its key's *main group*
    (the largest group of the partition: a JSON string's letters), the tokens below it
    need no walking. From a state ``q`` the group leads to one state, and from there
    (often) to one state again: the chain ``q, q+1, q+2 ...`` of a string's counted
    letters, which ends where a state reads none of them (the string at its longest). A
    token ``l`` bytes below such a node ends ``l`` steps along the chain, or dies past its
    end. So the node is taken out of its set, with all the nodes beneath it, and each
    triple of its key gets the chain's states at the lengths of its tokens below
    (``VocabTrie.lengths_below``). At depth 2 of a schema's walk, 1,434 of the 1,473
    nodes spelled with string letters are such nodes, and deeper almost all are: the
    15,000-node sets of letters that the walk split at every depth are never made. A
    key is walked as before where some triple's chain reaches a state that sends the
    group's bytes apart as far as its tokens below go (then the bytes tell tokens apart).

    ``group[p]`` numbers partition ``p``'s main group (equal groups, one number);
    ``main[g]`` is group ``g`` as a 256-bit set; ``chains[g]``, made when first asked, is
    the chain along it from every state: ``chains[g][l, q]`` is the state after ``l``
    bytes of the group (``_DEAD``: they all fall off on the way; ``_MIXED``: some state on
    the way sends them apart)."""

    trie: VocabTrie
    table: np.ndarray
    partitions: BytePartitions
    group: np.ndarray  # int64 [num_partitions]
    main: np.ndarray  # <u8 [num_groups, 4]
    chains: dict[int, np.ndarray]
    moves: dict[int, np.ndarray]  # group -> each state's one step along it

    @staticmethod
    def of(trie: VocabTrie, table: np.ndarray, partitions: BytePartitions) -> _WholeSubtrees:
        """Only main groups of ``WIDE`` bytes or more: a literal's one byte seldom fills a
        subtree, and each group's chain costs a pass over the states per length."""
        reps = partitions.reps
        # Each partition's most frequent group (its smallest byte, where two tie): one
        # count over every (partition, group), where a count a row took ~8 µs each.
        kept = reps >= 0
        cells = (np.arange(len(reps))[:, None] * 256 + reps)[kept]
        counts = np.bincount(cells, minlength=len(reps) * 256).reshape(len(reps), 256)
        largest = counts.argmax(axis=1)
        in_main = kept & (reps == largest[:, None])
        sets = np.ascontiguousarray(np.packbits(in_main, axis=1, bitorder="little")).view("<u8")
        # Equal groups, one number: numbered as equal node sets are (four words a row).
        group, first = _same_sets(
            sets.reshape(-1), np.arange(0, sets.size, 4), np.full(len(sets), 4)
        )
        group[in_main.sum(axis=1) < WIDE] = -1
        return _WholeSubtrees(trie, table, partitions, group, sets[first], {}, {})

    def take(
        self,
        node: np.ndarray,
        node_key: np.ndarray,
        key_part: np.ndarray,
        inverse: np.ndarray,
        origins: np.ndarray,
        states: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """The nodes left to walk (and their keys), and the (origin, state) pairs that
        the subtrees taken whole reach. ``inverse`` maps each triple (``origins``,
        ``states``) to its key."""
        trie, none = self.trie, np.zeros(0, np.int64)
        key_group = self.group[key_part]
        asked = np.flatnonzero(key_group[node_key] >= 0)  # nodes of keys with a main group
        outside = ~self.main[key_group[node_key[asked]]]
        fits = ~(trie.subtree_bytes[node[asked]] & outside).any(axis=1)
        asked = asked[fits & (trie.height[node[asked]] < 128)]
        if not len(asked):
            return node, node_key, (none, none)
        whole = np.zeros(len(node), dtype=bool)
        whole[asked] = True
        # Each key's token lengths below its whole nodes (a leaf has none: it just goes).
        lengths = np.where(whole[:, None], trie.lengths_below[node], np.uint64(0))
        per_key = np.bitwise_or.reduceat(lengths, np.flatnonzero(np.diff(node_key, prepend=-1)))
        bits = np.unpackbits(per_key.view(np.uint8), axis=1, bitorder="little")
        key_of, length = np.nonzero(bits)  # by key, lengths up
        counts = np.bincount(key_of, minlength=len(key_part))
        firsts = np.cumsum(counts) - counts
        longest = np.zeros(len(key_part), dtype=np.int64)
        longest[key_of] = length  # the last write is the longest
        # Where a triple's chain sends the group apart before the key's longest token
        # below ends, the key is walked as before.
        triple = np.flatnonzero(counts[inverse] > 0)
        groups, at = key_group[inverse[triple]], states[triple]
        usable = np.ones(len(key_part), dtype=bool)
        usable[inverse[triple[self._along(groups, longest[inverse[triple]], at) == _MIXED]]] = False
        keep = ~(whole & usable[node_key])
        # Each triple of a usable key reaches the chain's states at its key's lengths.
        triple = triple[usable[inverse[triple]]]
        key = inverse[triple]
        pick = runs(firsts[key], counts[key])
        each = np.repeat(np.arange(len(triple)), counts[key])
        reached = self._along(key_group[key][each], length[pick], states[triple][each])
        alive = reached >= 0
        return node[keep], node_key[keep], (origins[triple][each][alive], reached[alive])

    def _along(self, groups: np.ndarray, lengths: np.ndarray, states: np.ndarray) -> np.ndarray:
        """The state ``lengths[i]`` bytes of group ``groups[i]`` along from ``states[i]``."""
        out = np.empty(len(states), dtype=np.int64)
        for g in distinct(groups).tolist():
            mine = groups == g
            out[mine] = self._chain(g, int(lengths[mine].max()))[lengths[mine], states[mine]]
        return out

    def _chain(self, g: int, upto: int) -> np.ndarray:
        """``chains[g]``, at least ``upto + 1`` rows long. A state's partition says
        whether it sends the group's bytes to one place: all of them to one group of its
        partition (then their target), all off (``_DEAD``), or apart (``_MIXED``)."""
        chain = self.chains.get(g)
        if chain is None:
            group = np.flatnonzero(np.unpackbits(self.main[g].view(np.uint8), bitorder="little"))
            rows = self.partitions.reps[:, group]
            kind = np.where(rows[:, 0] >= 0, 0, _DEAD)
            kind[(rows != rows[:, :1]).any(axis=1)] = _MIXED
            kind = kind[self.partitions.of_state]
            after = np.where(kind == 0, self.table[:, group[0]], kind)
            self.moves[g] = np.concatenate([after, [_MIXED, _DEAD]])  # those two stay put
            chain = np.arange(len(self.table))[None, :]
        if len(chain) <= upto:
            move, last = self.moves[g], chain[-1]
            more = np.empty((upto + 1 - len(chain), len(last)), dtype=np.int64)
            for row in more:
                row[:] = last = move[last]
            chain = np.concatenate([chain, more])
        self.chains[g] = chain
        return chain


def closure_pairs(
    trie: VocabTrie,
    table: np.ndarray,
    starts: list[int],
    partitions: BytePartitions | None = None,
    check: Callable[[], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``successor_pairs``' answer, over the class trie where the table tells few kinds
    of byte apart (``by_classes``): every start at once (``class_pairs``) where that is
    small enough (``DENSE``), else by node sets over the class trie; otherwise by node
    sets over the bytes. The whole index's walk (``TokenIndex``) comes here.

    Where ``partitions`` count ``MERGED_CLASSES`` column classes or more, ``by_classes``
    is not asked: its classes split the columns' further (at UTF-8's cuts), so they are
    as many, and its hash of the columns (~9 ms for a 22-field schema's 2,495 states)
    would only find that out."""
    few = partitions is None or partitions.classes < MERGED_CLASSES
    classes = by_classes(trie, table) if few else None
    if classes is None:
        return successor_pairs(trie, table, starts, partitions, check)
    class_tree, cut = classes
    if len(starts) <= DENSE_STARTS and _dense_fits(class_tree, len(starts)):
        return class_pairs(class_tree, cut, starts, check)
    wide = np.full((len(cut), 256), -1, dtype=cut.dtype)  # node sets read 256 columns
    wide[:, : cut.shape[1]] = cut
    return successor_pairs(class_tree.as_trie, wide, starts, None, check)


DENSE = 8_000_000
"""``class_pairs`` is used while its widest level times the starts stays under this (an
int32 matrix of states, ~32 MB at most) and ``DENSE_WORK`` holds: Gemma 4 under
``[^\\n]{1,20}``, 22k class nodes, 161 states, of which ~500k entries are ever made."""
DENSE_WORK = 32_000_000
"""Nor past this many class nodes times starts (its work at most, ~0.3 s; far less as
dead columns drop): more starts (a counted repeat of thousands) share node sets better."""
DENSE_STARTS = 1_024
"""Nor for more starts than this: the pairs found are a starts-by-states table of flags."""


def _dense_fits(classes: ClassTrie, starts: int) -> bool:
    widest = max((len(parents) for parents, _, _ in classes.levels), default=0)
    return widest * starts <= DENSE and classes.size * starts <= DENSE_WORK


def by_classes(trie: VocabTrie, table: np.ndarray) -> tuple[ClassTrie, np.ndarray] | None:
    """The class trie of ``table``'s byte classes and the table cut to one column a
    class; None where the classes are ``MERGED_CLASSES`` or more or the class trie is
    not ``SMALLER`` than the byte trie.

    A token's way through the table depends only on the classes of its bytes, since every
    row leads all bytes of a class alike: walking the class trie gives the same pairs as
    the byte trie. The classes are ``byte_partition``'s (split at UTF-8's cuts too), so
    the class trie built for a first allowed set (``levelwalk.walk_classes``) or by
    ``warm`` is the one found here, and they are checked on every row (a hash that made
    two columns one class falls back to the bytes): under ``[^\\n]{1,20}`` Gemma 4's 600k
    byte nodes are 22k class nodes, SmolLM2's 100k are 495."""
    if len(table) == 0 or len(trie.byte) < WHOLE_ABOVE:
        return None
    byte_class = byte_partition(table)
    if int(byte_class.max()) >= MERGED_CLASSES or not _alike(table, byte_class):
        return None
    classes = class_trie(trie, byte_class, levels_of(trie).num_ids)[0]
    if classes.size * SMALLER > len(trie.byte):
        return None
    reps = np.unique(byte_class, return_index=True)[1]
    return classes, np.ascontiguousarray(table[:, reps])


def warm_classes(trie: VocabTrie, pattern: str = LEARNT_FIRST) -> None:
    """Build the class trie of ``pattern``'s byte classes ahead (``by_classes``), and
    take them as learnt for a first allowed set (``levelwalk.learn``; ``LEARNT_FIRST``'s,
    ``[^\\n]``, are learnt for every trie, and learnt again where dropped): every pattern that
    tells the same bytes apart (``[^\\n]{1,20}``, ``.{0,50}``, ``[^\\n]+``) then walks the
    class trie from its first index and first set on (Gemma 4: 5.2 MB, ~40 ms once; a
    first index 53 -> 12 ms CPU)."""
    table = to_bytes(compile_regex(pattern)).table
    found = by_classes(trie, table)
    if found is not None:
        found[0].node_tokens  # noqa: B018  (a first set's tokens by node: ~15 ms at 262k)
        learn(trie, byte_partition(table))


def class_pairs(
    classes: ClassTrie,
    cut: np.ndarray,
    starts: list[int],
    check: Callable[[], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``successor_pairs`` over a class trie, every start at once: each level is a matrix
    of states, one row a class node, one column a start, made from its parents' rows by
    one gather (``cut``: the table, one column a class; -1 dead). Columns whose states are
    all dead are dropped (a start inside a character dies within a byte or two), and at
    each level the (column, state) of the nodes where tokens end are flagged.

    Worked example: ``[^\\n]{1,3}`` counts characters (states 0-3; states inside "é"
    beside them). Its classes tell the newline from other ASCII and UTF-8 bytes by kind,
    so " a", " b" and "ab" all spell (ascii, ascii): one class node two deep, whose row
    from starts 0 and 2 is ``[2, -1]`` (3 reads no more); "é" ends at (lead,
    continuation), row ``[1, 3]``. The pairs, by position in ``starts``: (0, 1), (0, 2),
    (1, 3).

    >>> from fsmviz import Vocabulary, build_index
    >>> from fsmviz.tokens.trie import trie_of
    >>> vocab = Vocabulary.from_strings([" a", " b", "ab", "é"], eos_token="</s>")
    >>> table = build_index("[^\\n]{1,3}", vocab).byte_dfa.table
    >>> byte_class = byte_partition(table)
    >>> classes, _ = class_trie(trie_of(vocab), byte_class, len(vocab))
    >>> classes.size  # root, (ascii), (lead), (ascii, ascii), (lead, continuation)
    5
    >>> cut = table[:, np.unique(byte_class, return_index=True)[1]]
    >>> [a.tolist() for a in class_pairs(classes, cut, [0, 2])]
    [[0, 0, 1], [1, 2, 3]]
    """
    num_states, width = cut.shape
    flat = np.full((num_states + 1) * width, -1, dtype=np.int32)  # a dead state's row last
    flat[: cut.size] = cut.reshape(-1)
    column = np.arange(len(starts), dtype=np.int64)
    current = np.asarray(starts, dtype=np.int32)[None, :]
    found = np.zeros(len(starts) * (num_states + 1), dtype=bool)  # by start, 1 + state
    ends = classes.node_start
    for k, (parents, kinds, _) in enumerate(classes.levels):
        if check is not None:
            check()
        current = flat[current[parents] * width + kinds[:, None]]  # -1: the last row
        lo, hi = int(classes.level_starts[k + 1]), int(classes.level_starts[k + 2])
        tokens = current[ends[lo + 1 : hi + 1] > ends[lo:hi]]
        found[(tokens + 1 + column * (num_states + 1)).reshape(-1)] = True
        live = (current >= 0).any(axis=0)
        if not live.all():
            if not live.any():
                break
            current, column = np.ascontiguousarray(current[:, live]), column[live]
    origin, state = np.nonzero(found.reshape(len(starts), num_states + 1)[:, 1:])
    return origin.astype(np.int64), state.astype(np.int64)


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
    runs out of time). By node sets over ``trie``'s bytes (or a class trie's classes,
    ``table`` read the same way: ``closure_pairs``)."""
    partitions = partitions or BytePartitions.of(table)
    partition, reps = partitions.of_state, partitions.reps
    num_partitions = len(reps)
    whole: _WholeSubtrees | None = None  # made for the first depth that is large enough
    flat, width = table.reshape(-1), table.shape[1]
    sets = _NodeSets.root()
    origins = np.arange(len(starts), dtype=np.int64)
    states = np.asarray(starts, dtype=np.int64)
    set_ids = np.zeros(len(starts), dtype=np.int64)
    found_origin, found_state = [], []
    while origins.size:
        if check is not None:
            check()
        below = _few_below(trie, sets, set_ids)
        if below is not None:  # the deep tail: pair by pair
            tail = _pairs_below(trie, table, np.repeat(origins, below[1]), below[0],
                                np.repeat(states, below[1]), check)  # fmt: skip
            found_origin.append(tail[0])
            found_state.append(tail[1])
            break
        # The distinct (node set, partition) pairs of this depth, expanded together: every
        # node of every key's set, tagged with its key.
        keys, inverse = numbered(set_ids * num_partitions + partition[states])
        key_set, key_part = np.divmod(keys, num_partitions)
        size = sets.size[key_set]
        node = sets.nodes[runs(sets.offset[key_set], size)]
        node_key = np.repeat(np.arange(len(keys), dtype=np.int32), size)
        if len(node) > WHOLE_ABOVE:
            whole = whole or _WholeSubtrees.of(trie, table, partitions)
            node, node_key, (reached_origin, reached_state) = whole.take(
                node, node_key, key_part, inverse, origins, states
            )
            found_origin.append(reached_origin)
            found_state.append(reached_state)
        groups = _Groups.of(trie, reps, node, node_key, key_part)
        # Each triple moves to its key's groups.
        counts = groups.count[inverse]
        group = runs(groups.first[inverse], counts)
        states = flat[np.repeat(states * width, counts) + groups.byte[group]]
        origins, set_ids, sets = np.repeat(origins, counts), groups.set_id[group], groups.next_sets
        hit = groups.token[group]
        found_origin.append(origins[hit])
        found_state.append(states[hit])
    if not found_origin:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return distinct_pairs(np.concatenate(found_origin), np.concatenate(found_state), len(table))


TAIL_PAIRS = 8_192
"""A depth whose triples stand for at most this many (trie node, state) pairs, with at
most ``TAIL_TOKENS`` tokens below them in all, ends the node-set walk: the rest is walked
pair by pair (``_pairs_below``)."""
TAIL_TOKENS = 32_768
"""See ``TAIL_PAIRS``. A 22-field schema's walk goes 27 bytes deep (runs of spaces), and
from its sixth depth on its ~1,500 triples hold ~6,000 pairs above ~15,000 tokens: each
node-set depth cost ~0.35 ms there whatever its size (a sort of the keys, the groups'
dozen numpy passes), where a round of pairs costs ~0.03 ms and a few ns a pair."""


def _few_below(
    trie: VocabTrie, sets: _NodeSets, set_ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The nodes of the triples' sets, one after the other, and each triple's count of
    them, where they are few enough (``TAIL_PAIRS``, ``TAIL_TOKENS``) to walk pair by
    pair; else None. A class trie (``closure_pairs``) counts no tokens below a node
    (``VocabTrie.span_size``): its walk stays on node sets."""
    size = sets.size[set_ids]
    if int(size.sum()) > TAIL_PAIRS or len(trie.span_size) != len(trie.byte):
        return None
    nodes = sets.nodes[runs(sets.offset[set_ids], size)]
    if int(trie.span_size[nodes].sum()) > TAIL_TOKENS:
        return None
    return nodes, size


def _pairs_below(
    trie: VocabTrie,
    table: np.ndarray,
    origins: np.ndarray,
    nodes: np.ndarray,
    states: np.ndarray,
    check: Callable[[], None] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The (origin, state) of every token ending strictly below the pairs (``nodes[i]``
    reached ``states[i]`` from ``origins[i]``): a round a depth, each pair moved to all
    of its node's children whose byte the table reads (as ``index._walk``)."""
    flat, width = table.reshape(-1), table.shape[1]
    first_child, num_children, byte, has_token = (
        trie.first_child,
        trie.num_children,
        trie.byte,
        trie.has_token,
    )
    found_origin, found_state = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    while len(nodes):
        counts = num_children[nodes]
        ends = np.cumsum(counts, dtype=nodes.dtype)
        total = int(ends[-1])
        if total == 0:
            break
        if check is not None:
            check()
        children = runs(first_child[nodes], counts, ends)
        reached = np.repeat(states * width, counts)
        reached += byte[children]
        reached = flat[reached]
        alive = (reached >= 0).nonzero()[0]
        nodes, states = children[alive], reached[alive]
        origins = np.repeat(origins, counts)[alive]
        hit = has_token[nodes].nonzero()[0]
        found_origin.append(origins[hit])
        found_state.append(states[hit])
    return np.concatenate(found_origin), np.concatenate(found_state)


def distinct_pairs(
    origins: np.ndarray, states: np.ndarray, num_states: int
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs ``(origins[i], states[i])``, sorted by origin then state: each
    pair is packed into one integer ``origin * num_states + state`` and the integers are
    sorted and deduplicated.

    >>> [a.tolist() for a in distinct_pairs(np.array([1, 0, 1]), np.array([2, 2, 2]), 3)]
    [[0, 1], [2, 2]]
    """
    packed = distinct(origins.astype(np.int64) * num_states + states)
    return np.divmod(packed, num_states)
