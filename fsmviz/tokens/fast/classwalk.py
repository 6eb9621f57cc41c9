"""One state's row over the vocabulary's *class trie*: the byte trie with each byte replaced
by its class, so that tokens a pattern cannot tell apart share one path.

A pattern tells only a few kinds of byte apart (``ByteDfa.columns``): for
``[a-z_]{1,12}="[^"\\n]{0,20}"`` they are 17 (a lowercase letter, ``_``, ``=``, ``"``, the
newline, ...). Spell every token with its bytes' classes and build the trie of those
spellings: " lovelace" and " abcdefgh" become one path. For that pattern the byte trie's
100,000 nodes shrink to 1,252, for ``([^,\\n]{1,20},){3}...`` to 521 (a JSON schema's
keys tell most letters apart: 64 classes, no shrinking).

A row is then one pass over the class trie, one level per numpy round with no filtering:
every node of a level reads its state from its parent's and its class from the table
(a dead state leads to a *sink* that stays dead). A state that reads many bytes (a string's
loop) keeps most tokens alive, where a walk that filters pairs pays for every survivor;
here a survivor costs one gather. The level walk stops when a whole level is dead.

Worked example: ``[0-9]+`` over "1", "12", "a1": the classes are {digits} and {the
rest}, so "1" and "12" spell (digit) and (digit, digit), "a1" (other, digit)::

    root ─digit─▶ n1 ─digit─▶ n3        from state 0: n1 → 1, n3 → 1, n2 → dead
      └──other─▶ n2 ─digit─▶ n4                 tokens "1", "12" allowed, "a1" not

>>> from fsmviz import Vocabulary, build_index
>>> vocab = Vocabulary.from_strings(["1", "12", "a1"], eos_token="</s>")
>>> index = build_index("[0-9]+", vocab)
>>> classes = ClassTrie.of(index.trie, index.byte_dfa.columns.byte_class, len(vocab))
>>> classes.size  # root, (digit), (other), (digit, digit), (other, digit)
5
>>> tokens, targets, _ = class_row(classes, ClassTable.of(index.byte_dfa.table,
...                                                   index.byte_dfa.columns), 0)
>>> [vocab.token_text(int(t)) for t in tokens], targets.tolist()
(['1', '12'], [1, 1])
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from fsmviz.arrays import runs
from fsmviz.automaton.bytedfa import ByteColumns
from fsmviz.cache import OwnedCache
from fsmviz.tokens.trie import VocabTrie, _subtrees

__all__ = [
    "ClassTable",
    "ClassTrie",
    "TrieLayout",
    "byte_classes",
    "class_row",
    "class_trie",
    "trie_layout",
]
SPARSE_LEVEL = 8
"""A level whose parents live fewer than one in this many is walked from the live ones'
children alone."""
MERGED_CLASSES = 32
"""Past this many byte classes the trie is not merged (its levels are read as they are):
a JSON schema's keys tell most letters apart (64 classes), its class trie would keep 95k
of the byte trie's 100k nodes, and merging them cost ~15 ms at the first wide state."""
NARROW = 64
"""The deepest levels of fewer nodes than this each are walked in Python, a list lookup a
node (~0.2 µs), where a numpy round costs ~10 µs whatever its size."""
LISTED = 65_536
"""A class table of at most this many entries is read as a list by ``_tail`` and
``_python_level``; a larger one through a memoryview (``ClassTable.cells``)."""
SPARSE = 2_000
"""Rows with fewer tokens than this are spelled out from their live nodes' tokens and
sorted; longer ones are read off every token id at once."""
DENSE = 16
"""A long row that allows all but under one token in this many reads its targets by mask
(~0.03 ms for 49k ids) rather than by index (~0.12 ms); a sparser one by index, where a
mask's branches mispredict (~0.25 ms for a third of the ids)."""
FEW_LIVE = 32
"""A level of at most this many live nodes, few beside its size (``SPARSE_LEVEL``), has
their children walked in Python (a list lookup a child, ~0.1 µs), where a numpy round
costs ~10-15 µs however few live: below the loop of
``[^a-df-zA-DF-Z\\s]+(?:[umUM][sS]|[dhmsDHMS])`` (digits, signs, ``e``: ~1,500 tokens)
~30 class nodes of a level's 3,000 live, 16 levels deep, and those rounds took ~0.25 ms."""
IN_PLACE = 4_096
"""A level of at least this many nodes read whole has its states gathered, moved by class
and looked up in one array (``take`` with ``out``): ~10% less than three arrays at 15k
nodes (a 100k-node class trie's walk 7-20%), where below this the two calls more cost more."""
TAIL_NODES = 64
"""The deepest levels of fewer byte nodes than this each are merged in Python
(``_merged_tail``)."""


@dataclass(frozen=True, eq=False)
class ClassTrie:
    """The class trie of a vocabulary under one byte classification.

    ``levels[k]`` holds, for each node ``k + 1`` bytes deep (in order), the position of its
    parent among the nodes ``k`` deep and its class; and for each node ``k`` deep, where its
    children begin among those ``k + 1`` deep (one entry more: where they end). Nodes are
    numbered level after level from the root (0); ``level_starts[k]`` is the first node
    ``k`` deep. ``token_node[t]`` is the node token ``t`` ends at (``size`` where token
    ``t`` is not in the trie: EOS, special tokens); ``node_start`` says where each node's
    tokens begin in ``node_tokens`` (``size + 1`` entries)."""

    levels: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]
    level_starts: np.ndarray
    token_node: np.ndarray
    node_start: np.ndarray
    deep: int  # levels walked in numpy; the nodes below (``NARROW``) in Python:
    tail_parent: list[int]  # each one's parent, counting the nodes of level ``deep`` first
    tail_kind: list[int]  # and its class

    @cached_property
    def node_tokens(self) -> np.ndarray:
        """The token ids by node (ascending within a node); sorted when a short row
        first needs them, a long row never does. Node numbers that fit 16 bits are sorted
        as such: numpy's stable sort of 16-bit keys is a radix sort (49k ids: ~0.3 ms, where
        the merge sort of int64 keys took 2-5 ms at a new class trie's first short row)."""
        nodes = self.token_node
        if self.size < 1 << 16:  # token_node holds 0..size
            nodes = nodes.astype(np.uint16)
        return np.argsort(nodes, kind="stable")

    @property
    def size(self) -> int:
        return int(self.level_starts[-1])

    @cached_property
    def lists(self) -> _Lists:
        """Its levels as lists (``_Lists``), each made when a walk first has few live
        nodes there: a walk that needs two levels of 31k nodes lists ~600 (all 81 levels
        at once cost 0.5-1.6 ms, paid by the first state of a pattern with new classes)."""
        return _Lists(self)

    @cached_property
    def as_trie(self) -> VocabTrie:
        """This class trie as a ``VocabTrie`` whose "bytes" are class numbers, for
        ``successors.successor_pairs`` over a table cut to one column a class. Only what
        that walk reads is filled (children, classes, tokens, depth, height, the classes
        and token lengths below); the sorted spans are empty (a walk over the tokens' own
        bytes needs the byte trie). Built when first asked (22k nodes: a few ms)."""
        return _as_trie(self)

    @staticmethod
    def of(trie: VocabTrie, byte_class: np.ndarray, num_ids: int) -> ClassTrie:
        """Merge the byte trie's nodes level by level: two nodes of one level are one
        class node when their parents are and their bytes' classes are equal. Kept per
        (trie, classes) while merged (``class_trie``): patterns differ far more often
        than the bytes they tell apart (every ``[^\\n]`` or ``.`` pattern has the same
        few classes), and merging Gemma's 600k nodes costs ~40 ms, walking the 22k
        class nodes left ~1 ms."""
        if len(np.unique(byte_class)) <= MERGED_CLASSES:
            return class_trie(trie, byte_class, num_ids)[0]
        return _merged(trie, byte_class, num_ids)[0]


class _Lists:
    """A class trie's nodes as lists, for the levels ``class_states`` walks in Python:
    where each node's children begin (``first``: node numbers; ``size + 1`` entries) and
    each node's class (``kind``), both by node number, filled a level at a time when a
    walk of few live nodes first reaches it (``made``, ``fill``), the tail's all at once
    (``fill_tail``); and for each node of level ``deep``, how many nodes below it the tail
    holds (``below``). Read by node number, as one list each, ``_python_level`` costs a
    lookup a child whatever the level."""

    def __init__(self, classes: ClassTrie) -> None:
        self.classes = classes
        self.first = [0] * (classes.size + 1)
        self.kind = [0] * classes.size
        self.made = [False] * (len(classes.levels) + 1)  # by depth; the last: the tail

    def fill(self, depth: int) -> None:
        """Lists the children of the nodes ``depth`` deep: where each one's begin, their
        classes."""
        _, kinds, child_start = self.classes.levels[depth]
        starts = self.classes.level_starts.tolist()
        self.first[starts[depth] : starts[depth + 1] + 1] = (
            child_start + starts[depth + 1]
        ).tolist()
        self.kind[starts[depth + 1] : starts[depth + 2]] = kinds.tolist()
        self.made[depth] = True

    def fill_tail(self) -> None:
        """Lists the children of level ``deep``'s nodes and the tail's, from ``tail_parent``
        (sorted; it counts node ``at + i`` as ``i``, where level ``deep`` begins at ``at``
        and the tail at ``low``)."""
        classes, parents = self.classes, self.classes.tail_parent
        at, low = (int(start) for start in classes.level_starts[classes.deep :][:2])
        first = np.full(low - at + len(parents) + 1, low, dtype=np.intp)
        first[1:] += np.cumsum(np.bincount(parents, minlength=len(first) - 1))
        self.first[at:] = first.tolist()
        self.kind[low:] = classes.tail_kind
        self.made[-1] = True

    @cached_property
    def below(self) -> list[int]:
        """For each node of level ``deep``, how many tail nodes lie below it: counted up
        from each tail node to its parent (a parent comes first)."""
        classes = self.classes
        top = int(classes.level_starts[classes.deep + 1] - classes.level_starts[classes.deep])
        below = [0] * (top + len(classes.tail_parent))
        for place in range(len(classes.tail_parent) - 1, -1, -1):
            below[classes.tail_parent[place]] += below[top + place] + 1
        return below[:top]


def _as_trie(classes: ClassTrie) -> VocabTrie:
    """``ClassTrie.as_trie``: each level's children run from its ``child_start``, offset
    by where the next level begins; the nodes of the deepest level have none."""
    size, starts = classes.size, classes.level_starts
    first_child = np.full(size, size, dtype=np.int32)
    num_children = np.zeros(size, dtype=np.int32)
    byte = np.full(size, -1, dtype=np.int32)
    for k, (_, kinds, child_start) in enumerate(classes.levels):
        first_child[starts[k] : starts[k + 1]] = child_start[:-1] + starts[k + 1]
        num_children[starts[k] : starts[k + 1]] = np.diff(child_start)
        byte[starts[k + 1] : starts[k + 2]] = kinds
    counts = np.diff(classes.node_start[: size + 1]).astype(np.int32)
    token_start = np.zeros(size + 1, dtype=np.int32)
    np.cumsum(counts, out=token_start[1:])
    depth = np.repeat(np.arange(len(starts) - 1, dtype=np.int32), np.diff(starts))
    has_token = counts > 0
    height, below, lengths = _subtrees(first_child, num_children, byte, depth, has_token)
    empty = np.zeros(0, dtype=np.int32)
    return VocabTrie(
        first_child=first_child,
        num_children=num_children,
        byte=byte,
        token_start=token_start,
        token_ids=classes.node_tokens[: token_start[-1]].astype(np.int32),
        has_token=has_token,
        single_byte_tokens=np.zeros(256, dtype=bool),
        depth=depth,
        height=height,
        subtree_bytes=below,
        lengths_below=lengths,
        span_start=empty,
        span_size=empty,
        sorted_ids=empty,
        sorted_lengths=empty,
        sorted_bytes=(),
    )


_CLASS_TRIES: OwnedCache[tuple[ClassTrie, np.ndarray]] = OwnedCache(maxsize=8)


def class_trie(
    trie: VocabTrie, byte_class: np.ndarray, num_ids: int
) -> tuple[ClassTrie, np.ndarray]:
    """``ClassTrie.of``, built once per (trie, ``byte_class``) among the last few, and the
    class node of every byte-trie node (int32; the walk of ``levelwalk.walk_classes``
    starts from byte nodes). The trie is kept beside them, so that its ``id`` in the key
    cannot name a newer trie."""
    key = (num_ids, np.asarray(byte_class, dtype=np.int16).tobytes())
    return _CLASS_TRIES.get_or_build(trie, key, lambda: _merged(trie, byte_class, num_ids))


def _merged(trie: VocabTrie, byte_class: np.ndarray, num_ids: int) -> tuple[ClassTrie, np.ndarray]:
    """``ClassTrie.of`` built, and each byte node's class node (``class_trie``)."""
    shape = _shape_of(trie)
    merged = np.zeros(len(trie.byte) + 1, dtype=np.intp)  # byte node -> position in level
    levels, starts = [], [0, 1]
    width = int(np.max(byte_class)) + 1  # keys: a parent times this, plus a class
    classes = np.asarray(byte_class)[shape.byte]
    merge = len(np.unique(byte_class)) <= MERGED_CLASSES
    last = shape.tail_from if merge else len(shape.bounds) - 1
    for lo, hi in zip(
        shape.bounds[1:last].tolist(), shape.bounds[2 : last + 1].tolist(), strict=True
    ):
        if not merge:  # the byte trie itself, its bytes read as classes
            parents, kinds = merged[shape.parent[lo:hi]], classes[lo:hi]
            merged[lo:hi] = np.arange(hi - lo)
            child_start = np.searchsorted(parents, np.arange(starts[-1] - starts[-2] + 1))
            levels.append((parents, kinds, child_start))
            starts.append(starts[-1] + hi - lo)
            continue
        key = merged[shape.parent[lo:hi]]
        key *= width
        key += classes[lo:hi]
        keys, merged[lo:hi] = _numbered(key, (starts[-1] - starts[-2]) * width)
        parents, kinds = np.divmod(keys, width)
        levels.append((parents, kinds, _starts_of(parents, starts[-1] - starts[-2])))
        starts.append(starts[-1] + len(keys))
    if last < len(shape.bounds) - 1:
        lo = int(shape.bounds[last - 1])
        merged[int(shape.bounds[last]) : -1] = _merged_tail(
            shape, byte_class, width, merged[lo : shape.bounds[last]].tolist(), levels, starts
        )
    level_starts = np.array(starts, dtype=np.intp)
    merged[: len(shape.depth)] += level_starts[shape.depth]  # now each byte node's class node
    merged[-1] = level_starts[-1]  # the node of tokens not in the trie
    token_node = np.full(num_ids, level_starts[-1], dtype=np.intp)
    known = min(num_ids, len(shape.node_of))
    np.take(merged, shape.node_of[:known], out=token_node[:known])
    node_class = merged[:-1].astype(np.int32)
    counts = np.bincount(token_node, minlength=level_starts[-1] + 1)
    node_start = np.zeros(len(counts) + 1, dtype=np.intp)
    np.cumsum(counts, out=node_start[1:])
    deep, tail_parent, tail_kind = _tail_of(levels)
    classes_trie = ClassTrie(
        tuple(levels), level_starts, token_node, node_start, deep, tail_parent, tail_kind
    )
    return classes_trie, node_class


def _merged_tail(
    shape: _Shape,
    byte_class: np.ndarray,
    width: int,
    above: list[int],
    levels: list[tuple[np.ndarray, ...]],
    starts: list[int],
) -> list[int]:
    """The narrow levels from ``shape.tail_from`` down merged in Python (``_Shape``): one
    numpy round a level costs ~30 µs however few its nodes, a dict lookup a node ~0.3 µs.
    ``width`` is ``_merged``'s key width (a parent times it, plus a class); ``above`` holds
    the class positions of the nodes of the level above; the levels'
    arrays are appended to ``levels`` (views of one array each) and their starts to
    ``starts``; the class position of every tail node is returned, level after level."""
    kind_of = np.asarray(byte_class).tolist()
    found: list[int] = []
    flat: tuple[list[int], list[int]] = ([], [])  # the levels' keys, sorted; child starts
    sizes: list[tuple[int, int]] = []
    for parent, byte in shape.tail_levels:
        keys = [above[p] * width + kind_of[b] for p, b in zip(parent, byte, strict=True)]
        unique = sorted(set(keys))
        if unique == keys:  # distinct and in order: each node its own class node
            above = list(range(len(keys)))
        else:
            position = {key: i for i, key in enumerate(unique)}
            above = [position[key] for key in keys]
        child_start = [0] * (starts[-1] - starts[-2] + 1)
        for key in unique:
            child_start[key // width + 1] += 1
        flat[0].extend(unique)
        flat[1].extend(itertools.accumulate(child_start))
        sizes.append((len(unique), len(child_start)))
        found += above
        starts.append(starts[-1] + len(unique))
    keys, child_starts = (np.array(values, dtype=np.intp) for values in flat)
    parents, kinds = np.divmod(keys, width)
    at = child_at = 0
    for size, children in sizes:
        levels.append(
            (
                parents[at : at + size],
                kinds[at : at + size],
                child_starts[child_at : child_at + children],
            )
        )
        at, child_at = at + size, child_at + children
    return found


def _tail_of(levels: list[tuple[np.ndarray, ...]]) -> tuple[int, list[int], list[int]]:
    """How many levels to walk in numpy: all but the deepest run of levels of under
    ``NARROW`` nodes each; and for the nodes below, their parents (as
    ``ClassTrie.tail_parent`` counts them) and classes."""
    sizes = [len(parents) for parents, *_ in levels]
    deep = len(levels)
    while deep and sizes[deep - 1] < NARROW:
        deep -= 1
    if deep == len(levels):
        return deep, [], []
    above = [sizes[level - 1] if level else 1 for level in range(deep, len(levels))]
    before = np.cumsum(above) - above  # nodes of the levels above in the list
    parents = np.concatenate([parents for parents, *_ in levels[deep:]])
    parents += np.repeat(before, sizes[deep:])
    kinds = np.concatenate([kinds for _, kinds, _ in levels[deep:]])
    return deep, parents.tolist(), kinds.tolist()


@dataclass(frozen=True, eq=False)
class TrieLayout:
    """A byte trie's nodes by level (its layout is breadth-first): ``parent[n]`` (the
    root's is 0), ``bounds[d]`` the first node ``d`` bytes deep (one entry past the deepest
    level: the node count), ``node_of[t]`` the node where token id ``t`` ends (the node
    count where ``t`` is in no node: EOS, special tokens). What both walks over the levels
    read (``levelwalk.TrieLevels``, ``_Shape`` here), each adding its own: made once per
    trie (``trie_layout``), their arrays are the same ones."""

    parent: np.ndarray
    bounds: np.ndarray
    node_of: np.ndarray


_LAYOUTS: OwnedCache[TrieLayout] = OwnedCache(maxsize=4)


def trie_layout(trie: VocabTrie) -> TrieLayout:
    """``trie``'s ``TrieLayout``, kept for the last few tries (read-only arrays)."""

    def build() -> TrieLayout:
        nodes = len(trie.byte)
        parent = np.zeros(nodes, dtype=np.intp)
        parent[1:] = np.repeat(np.arange(nodes), trie.num_children)  # breadth-first layout
        bounds = np.searchsorted(trie.depth, np.arange(int(trie.depth.max()) + 2))
        node_of = np.full(int(trie.token_ids.max(initial=-1)) + 1, nodes, dtype=np.intp)
        node_of[trie.token_ids] = np.repeat(np.arange(nodes), np.diff(trie.token_start))
        for array in (parent, bounds, node_of):
            array.flags.writeable = False
        return TrieLayout(parent, bounds, node_of)

    return _LAYOUTS.get_or_build(trie, None, build)


@dataclass(frozen=True, eq=False)
class _Shape(TrieLayout):
    """What every class trie of one byte trie needs, built once per trie (``warm``): its
    ``TrieLayout``, each node's byte and depth, and the narrow deepest levels as lists
    (``_merged_tail``)."""

    byte: np.ndarray  # each node's byte (intp; the root's 0)
    depth: np.ndarray  # each node's depth (intp)
    tail_from: int  # the first level merged in Python (``_merged_tail``): those below are narrow
    tail_levels: list[tuple[list[int], list[int]]]  # each one's nodes' parents (as positions
    # in their level) and bytes


_SHAPES: OwnedCache[_Shape] = OwnedCache(maxsize=4)


def _shape_of(trie: VocabTrie) -> _Shape:
    def build() -> _Shape:
        layout = trie_layout(trie)
        parent, bounds = layout.parent, layout.bounds
        sizes = np.diff(bounds)
        tail_from = len(bounds) - 1  # the deepest levels of under TAIL_NODES nodes each
        while tail_from > 2 and sizes[tail_from - 1] < TAIL_NODES:
            tail_from -= 1
        lo = int(bounds[tail_from])
        local = (parent[lo:] - bounds[trie.depth[lo:] - 1]).tolist()
        tail_bytes = trie.byte[lo:].tolist()
        tail_levels = [
            (local[start - lo : end - lo], tail_bytes[start - lo : end - lo])
            for start, end in itertools.pairwise(bounds[tail_from:].tolist())
        ]
        return _Shape(
            parent,
            bounds,
            layout.node_of,
            np.maximum(trie.byte, 0).astype(np.intp),
            trie.depth.astype(np.intp),
            tail_from,
            tail_levels,
        )

    return _SHAPES.get_or_build(trie, None, build)


def _starts_of(parents: np.ndarray, above: int) -> np.ndarray:
    """Where each of ``above`` nodes' children begin among ``parents`` (sorted), and
    where the last ones end: ``np.searchsorted(parents, np.arange(above + 1))`` by counting
    (linear, where the search costs a log a node: ~0.1 ms at a 15k-node level).

    >>> _starts_of(np.array([0, 0, 2]), 3).tolist()
    [0, 2, 2, 3]
    """
    found = np.zeros(above + 1, dtype=np.intp)
    np.cumsum(np.bincount(parents, minlength=above), out=found[1:])
    return found


def _numbered(keys: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for keys below ``bound``: by marking a
    table of ``bound`` flags where that is small beside the keys (no sort), else by sorting.

    >>> [k.tolist() for k in _numbered(np.array([7, 2, 7, 5]), 8)]
    [[2, 5, 7], [2, 0, 2, 1]]
    """
    if bound > 8 * len(keys) + 65_536:
        return np.unique(keys, return_inverse=True)
    seen = np.zeros(bound, dtype=bool)
    seen[keys] = True
    unique = np.flatnonzero(seen)
    rank = np.empty(bound, dtype=np.intp)  # read only where a key is
    rank[unique] = np.arange(len(unique))
    return unique, rank[keys]


@dataclass(frozen=True, eq=False)
class ClassTable:
    """A byte DFA's table over its byte classes, a dead entry leading to a *sink* state
    (``sink``, one past the last) that stays dead, each entry times the number of classes
    (so that a state plus a class is an index into ``flat``)."""

    flat: np.ndarray
    width: int
    sink: int

    @cached_property
    def dead(self) -> int:
        """The sink's offset (``sink`` times ``width``): what a walk holds for a dead node,
        whose states are offsets into ``flat``."""
        return self.sink * self.width

    @cached_property
    def cells(self) -> list[int] | memoryview:
        """``flat`` entry by entry as Python ints, for the nodes walked in Python
        (``_python_level``, ``_tail``), indexed in place: a list where it has at most
        ``LISTED`` entries (~20 ns a lookup), else a memoryview of ``flat`` (~40 ns, nothing
        copied, where a list of a schema's 150k entries costs ~1.5 ms to make and
        ``flat.item`` ~100 ns a call; a list's bound ``__getitem__`` cost ~40 ns)."""
        return self.flat.tolist() if len(self.flat) <= LISTED else memoryview(self.flat)

    @staticmethod
    def of(table: np.ndarray, columns: ByteColumns | None) -> ClassTable:
        """The table over ``columns``' classes, or over every byte (256 columns) when
        ``columns`` is None (for ``byte_classes``' trie)."""
        cut = table if columns is None else table[:, columns.smallest]
        width, sink = cut.shape[1], len(table)
        by_class = np.full((sink + 1, width), sink, dtype=np.intp)
        by_class[:sink] = np.where(cut < 0, sink, cut)
        return ClassTable((by_class * width).reshape(-1), width, sink)


def byte_classes(trie: VocabTrie, num_ids: int) -> ClassTrie:
    """The class trie where every byte is its own class: the byte trie itself, in the class
    trie's layout, read with ``ClassTable.of(table, None)``. A pattern past
    ``MERGED_CLASSES`` classes (a JSON schema's keys) reads its bytes' classes off the byte
    trie unmerged anyway; this one does not depend on the pattern, so it is built once per
    trie (``warm``), with its tokens by node, where each index built its own (~8 ms at its
    first wide state, and ~4 ms more for the tokens by node at its first short row)."""

    def build() -> ClassTrie:
        classes = ClassTrie.of(trie, np.arange(256), num_ids)
        classes.node_tokens  # noqa: B018  (sorted now, not at a first short row)
        for depth in range(classes.deep):  # and listed, not at a first walk of few live nodes
            classes.lists.fill(depth)
        return classes

    return _BYTE_CLASSES.get_or_build(trie, num_ids, build)


_BYTE_CLASSES: OwnedCache[ClassTrie] = OwnedCache(maxsize=2)


def class_states(classes: ClassTrie, table: ClassTable, state: int) -> np.ndarray:
    """The state each class node leaves ``state`` in (``table.sink``: dead), level by level:
    a whole level at once while many of its nodes live, only the children of the live
    ones when few do (a wide state whose tokens die within a few bytes), in Python while
    they are very few (``FEW_LIVE``), and nothing past a level where none does. The
    levels below ``deep`` are walked whole in Python (``_tail``), or their live nodes
    alone where few nodes lie below those (``_Lists.below``)."""
    dead, starts = table.dead, classes.level_starts
    states = np.array([state * table.width], dtype=np.intp)
    whole = [(0, states)]  # the levels walked whole: (depth, states)
    walked: tuple[list[int], list[int]] = ([], [])  # the live nodes walked in Python
    live: tuple[list[int], list[int]] | None = None  # a level's live nodes and states
    for depth in range(classes.deep):
        if live is None:
            alive = states != dead
            count = int(np.count_nonzero(alive))
            if not count:
                break
            if _few(count, len(states)):
                at = np.flatnonzero(alive)
                live = (at + int(starts[depth])).tolist(), states[at].tolist()
        if live is None:
            states = _numpy_level(classes.levels[depth], table, states, alive, count)
            whole.append((depth + 1, states))
            continue
        lists = classes.lists
        if not lists.made[depth]:
            lists.fill(depth)
        live = _python_level(lists, table.cells, dead, *live)
        size = len(classes.levels[depth][0])
        if not _few(len(live[0]), size):  # many live: back to numpy rounds
            states = np.full(size, dead, dtype=np.intp)
            states[np.array(live[0], dtype=np.intp) - int(starts[depth + 1])] = live[1]
            whole.append((depth + 1, states))
            live = None
        elif not live[0]:
            break
        else:
            walked[0].extend(live[0])
            walked[1].extend(live[1])
    else:
        if classes.tail_parent:
            tail = _tail_walk(classes, table, states, live, walked)
            if tail is not None:
                whole.append((classes.deep + 1, tail))
    return _reached(classes, table, whole, walked)


def _few(live: int, size: int) -> bool:
    """Whether a level of ``size`` nodes, ``live`` of them live, is walked in Python."""
    return live <= FEW_LIVE and live * SPARSE_LEVEL < size


def _numpy_level(
    level: tuple[np.ndarray, np.ndarray, np.ndarray],
    table: ClassTable,
    states: np.ndarray,
    alive: np.ndarray,
    count: int,
) -> np.ndarray:
    """The states of the next level's nodes from ``states`` (``alive``: which live,
    ``count`` of them): every node's from its parent's, or where few live, their
    children's alone (the rest dead)."""
    parents, kinds, child_start = level
    if count * SPARSE_LEVEL >= len(states):  # many live: every node's from its parent's
        if len(parents) < IN_PLACE:
            return table.flat[states[parents] + kinds]
        found = states.take(parents)  # the same in one array
        found += kinds
        return table.flat.take(found, out=found, mode="clip")  # each index read, then written
    live = np.flatnonzero(alive)
    counts = child_start[live + 1] - child_start[live]
    children = runs(child_start[live], counts)
    reached = np.full(len(parents), table.dead, dtype=np.intp)
    reached[children] = table.flat[states[parents[children]] + kinds[children]]
    return reached


def _python_level(
    lists: _Lists, cells: Sequence[int], dead: int, nodes: list[int], states: list[int]
) -> tuple[list[int], list[int]]:
    """The live children of ``nodes`` (in order; their level listed) and their states,
    from ``states`` (the nodes' own, times the table's width; ``cells``: its ``flat``
    read entry by entry, ``ClassTable.cells``)."""
    first, kind = lists.first, lists.kind
    found: list[int] = []
    reached: list[int] = []
    for node, at in zip(nodes, states, strict=True):
        for child in range(first[node], first[node + 1]):
            target = cells[at + kind[child]]
            if target != dead:
                found.append(child)
                reached.append(target)
    return found, reached


def _tail_walk(
    classes: ClassTrie,
    table: ClassTable,
    states: np.ndarray,
    live: tuple[list[int], list[int]] | None,
    walked: tuple[list[int], list[int]],
) -> np.ndarray | None:
    """The levels below ``deep``: from ``states`` (level ``deep`` walked whole, ``live``
    None) or ``live`` (its live nodes), every node's state (``_tail``), or, where the live
    nodes have under a quarter of the tail below them, theirs alone, added to
    ``walked`` (None returned)."""
    dead, top = table.dead, int(classes.level_starts[classes.deep])
    if live is not None:
        lists = classes.lists
        if 4 * sum(lists.below[node - top] for node in live[0]) < len(classes.tail_parent):
            if not lists.made[-1]:
                lists.fill_tail()
            while live[0]:
                live = _python_level(lists, table.cells, dead, *live)
                walked[0].extend(live[0])
                walked[1].extend(live[1])
            return None
        size = int(classes.level_starts[classes.deep + 1]) - top
        states = np.full(size, dead, dtype=np.intp)
        states[np.array(live[0], dtype=np.intp) - top] = live[1]
    return _tail(classes, table, states)


def _tail(classes: ClassTrie, table: ClassTable, states: np.ndarray) -> np.ndarray:
    """The states of the nodes below level ``classes.deep`` (``NARROW``) in Python,
    from ``states``, those of the nodes at that level: one numpy round per level of a
    long run of "-" costs more than a list lookup per node. A table past ``LISTED`` entries
    (a schema's ~600 states by 256 bytes) is read through a memoryview rather than made a
    list at its first wide row (~8 ms under load, for ~550 lookups a row)."""
    cells = table.cells
    known = states.tolist()
    for parent, kind in zip(classes.tail_parent, classes.tail_kind, strict=True):
        known.append(cells[known[parent] + kind])
    return np.array(known[len(states) :], dtype=np.intp)


def _reached(
    classes: ClassTrie,
    table: ClassTable,
    whole: list[tuple[int, np.ndarray]],
    walked: tuple[list[int], list[int]],
) -> np.ndarray:
    """``class_states``' answer from the levels walked ``whole`` (each its depth and its
    nodes' states, times the table's width; the tail: all its levels') and the nodes
    ``walked`` in Python with their states. Where none was walked in Python, the whole
    levels follow each other from the root."""
    if not walked[0]:
        reached = _divided([states for _, states in whole], table.width)
        if len(reached) < classes.size:
            rest = np.full(classes.size - len(reached), table.sink, dtype=np.int32)
            reached = np.concatenate([reached, rest])
        return reached
    reached = np.full(classes.size, table.sink, dtype=np.int32)
    for depth, states in whole:
        first = int(classes.level_starts[depth])
        reached[first : first + len(states)] = states // table.width
    reached[walked[0]] = np.array(walked[1], dtype=np.intp) // table.width
    return reached


def _divided(parts: list[np.ndarray], width: int) -> np.ndarray:
    """``np.concatenate(parts) // width`` as int32: states times a table's ``width`` are
    below its size (``len(ClassTable.flat)``, under 2**31: 16 GiB of entries), so they are
    joined straight into 32 bits and divided there, ~2x quicker than in 64 bits and cast
    after (a 31k-node row: ~18 µs, where ~35).

    >>> _divided([np.array([0]), np.array([46, 69])], 23).tolist()
    [0, 2, 3]
    """
    found = np.concatenate(parts, dtype=np.int32, casting="unsafe")
    found //= np.int32(width)
    return found


def class_row(
    classes: ClassTrie, table: ClassTable, state: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The row of ``state``: its allowed token ids (sorted, int32), the state each leads
    to, and, for a long row, the same ids packed (``index.packed``'s words), else None.
    A short row is spelled from its live nodes' tokens; a long one read off every token
    id at once, its booleans packed as they are (no scatter of 49k ids)."""
    reached = class_states(classes, table, state)
    live = np.flatnonzero(reached != table.sink)
    sizes = classes.node_start[live + 1] - classes.node_start[live]
    if int(sizes.sum()) < SPARSE:  # each token at one node: its target put by token id
        tokens = classes.node_tokens[runs(classes.node_start[live], sizes)]
        by_token = np.empty(len(classes.token_node), dtype=reached.dtype)  # read at tokens
        by_token[tokens] = np.repeat(reached[live], sizes)
        tokens = tokens.astype(np.int32)
        tokens.sort()  # ~1.5k ids: ~40% less than an argsort and two gathers
        return tokens, by_token[tokens], None
    ends = np.append(reached, np.int32(table.sink))[classes.token_node]
    size = len(ends)
    allowed = np.zeros(-(-size // 32) * 32, dtype=bool)
    np.not_equal(ends, table.sink, out=allowed[:size])
    tokens = np.flatnonzero(allowed).astype(np.int32)
    words = np.packbits(allowed, bitorder="little").view("<i4").astype(np.int32, copy=False)
    words.flags.writeable = False
    if len(tokens) * DENSE >= size * (DENSE - 1):  # nearly all: a mask reads them sooner
        return tokens, ends[allowed[:size]], words
    return tokens, ends[tokens], words
