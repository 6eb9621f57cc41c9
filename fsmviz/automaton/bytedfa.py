"""The character DFA seen one **byte** at a time.

Language models do not emit characters; they emit tokens, and a token is a string of
bytes that need not end on a character boundary. In SmolLM2's vocabulary "日" (UTF-8
``e6 97 a5``) is spelled by a token ``e6 97`` followed by a token ``a5``. An index built
over characters could never generate it. So before looking at tokens we rewrite every
character edge as a little chain of byte edges, exactly as UTF-8 encodes the character:

    state ──"日"──▶ next      becomes      state ──e6──▶ · ──97──▶ · ──a5──▶ next

The states in the middle ("·") sit *inside* a character. Character classes become byte
*ranges*: ``[一-龥]`` needs only a handful of intermediate states, because UTF-8 keeps code
point order, and all characters sharing a lead byte share a subtree. Intermediate states
are hash-consed, so "any 2 continuation bytes, then state 5" exists once, however many
states lead into it.

The result is a dense table ``table[state, byte] -> next state or -1``: exactly what a
vectorised walk over the vocabulary needs. States ``0 .. num_char_states-1`` are the
character DFA's own states with the same numbers; the rest are intermediate.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from operator import itemgetter

import numpy as np

from fsmviz.arrays import distinct, runs
from fsmviz.automaton.dfa import SURROGATES, Dfa
from fsmviz.automaton.graph import backward_distances
from fsmviz.cache import BoundedCache

__all__ = ["ByteColumns", "ByteDfa", "to_bytes"]

# (lead byte range, number of continuation bytes, first code point of that length)
_UTF8_LENGTHS = ((0x00, 0x7F, 0, 0x0), (0xC2, 0xDF, 1, 0x80), (0xE0, 0xEF, 2, 0x800),
                 (0xF0, 0xF4, 3, 0x10000))  # fmt: skip
_LEAD_BITS = {0: 0x7F, 1: 0x1F, 2: 0x0F, 3: 0x07}
_Piece = tuple[int, int, int]  # (first code point, last code point, target state)


@dataclass(frozen=True, eq=False)
class ByteDfa:
    """A DFA over bytes: ``table[state, byte]`` is the next state, or -1."""

    table: np.ndarray  # int32 [num_states, 256]
    accepting: np.ndarray  # bool [num_states]
    num_char_states: int
    byte_runs: tuple[tuple[tuple[int, int, int], ...], ...] | None = field(default=None, repr=False)
    """Each state's edges as ``(first byte, last byte, target)`` runs, where the table was
    written run by run in Python (``_ascii_bytes``: a small DFA within ASCII), else None.
    A walk in Python over such a DFA reads these where it would read the table back with
    numpy (``tokens.index``: a keyword's whole index)."""

    @property
    def num_states(self) -> int:
        return self.table.shape[0]

    def run(self, data: bytes, state: int = 0) -> int | None:
        """The state after reading ``data`` from ``state``, or None."""
        for byte in data:
            state = int(self.table[state, byte])
            if state < 0:
                return None
        return state

    @cached_property
    def columns(self) -> ByteColumns:
        """The bytes no state tells apart, as classes (``ByteColumns``); found once."""
        return ByteColumns.of(self.table)

    def edges(self, usable_bytes: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The distinct edges (sources, targets; sorted), optionally reading only the bytes
        where ``usable_bytes`` is true.

        Only each state's distinct targets matter, and a JSON string's state reads a hundred
        bytes into one. So the table is cut to its distinct columns (``columns``: 63 of 256
        for a 22-field schema) and each row is sorted and its repeats dropped: 5,000 edges
        are left of 100,000."""
        classes = self.columns.byte_class
        if usable_bytes is not None:
            classes = classes[usable_bytes]
        if not len(classes):
            return np.zeros(0, np.intp), np.zeros(0, self.table.dtype)
        rows = np.sort(self.table[:, self.columns.smallest[np.unique(classes)]], axis=1)
        new = rows >= 0
        new[:, 1:] &= rows[:, 1:] != rows[:, :-1]
        sources, at = np.nonzero(new)
        return sources, rows[sources, at]

    def live_states(self, usable_bytes: np.ndarray | None = None) -> np.ndarray:
        """Boolean mask of states from which an accepting state is reachable, optionally
        using only the bytes where ``usable_bytes`` is true."""
        sources, targets = self.edges(usable_bytes)
        return _can_finish(len(self.table), sources, targets, np.flatnonzero(self.accepting))

    def distances(self, usable_bytes: np.ndarray | None = None) -> np.ndarray:
        """Fewest bytes from each state to an accepting state (``UNREACHABLE`` where there
        is none), optionally reading only the bytes where ``usable_bytes`` is true."""
        sources, targets = self.edges(usable_bytes)
        following = targets.tolist()
        bounds = np.searchsorted(sources, np.arange(self.num_states + 1)).tolist()
        goals = np.flatnonzero(self.accepting).tolist()
        return backward_distances(
            self.num_states, lambda s: following[bounds[s] : bounds[s + 1]], goals
        )


@dataclass(frozen=True)
class ByteColumns:
    """Bytes that every state treats alike (equal columns of the table) form a class:
    ``byte_class[b]`` is byte ``b``'s class, ``smallest[c]`` the smallest byte of class
    ``c``; classes are numbered by their smallest byte. A walk that splits bytes by target
    needs only one byte of each class.

    >>> cols = ByteColumns.of(np.array([[1, 2, 1, -1], [0, 3, 0, 3]]))
    >>> cols.byte_class.tolist(), cols.smallest.tolist()
    ([0, 1, 0, 2], [0, 1, 3])
    """

    byte_class: np.ndarray  # int64 [256]
    smallest: np.ndarray  # int64 [num_classes]

    @staticmethod
    def of(table: np.ndarray) -> ByteColumns:
        """The classes of ``table``'s columns: hashed (``_hashed_columns``) where that is
        exact, else compared byte for byte."""
        return _hashed_columns(table) or _compared_columns(table)


def _hashed_columns(table: np.ndarray) -> ByteColumns | None:
    """``ByteColumns.of`` by hashing each column as one product with random integer
    weights. The sums are exact in float64 (no sum can pass 2**53: weights are bounded
    by the table's size and largest entry), so equal columns always hash alike; columns
    with one hash are then checked against the first of them, entry by entry. None when
    the table is too large for exact sums, or on a collision (never seen). A schema's
    2,495 × 256 table: 0.7 ms, where the transposed copy a comparison needs costs 0.9 ms.
    The weights of a table of up to ``len(_WEIGHTS)`` rows are drawn once (a generator
    made a call cost ~20 µs of a small table's ~90), and the columns are grouped by one
    stable sort of their hashes (``np.unique`` with its index and inverse: ~25 µs)."""
    rows = len(table)
    room = 2**53 // (max(rows, 1) * max(int(table.max(initial=0)), 1))
    if room < 2**16:
        return None
    if rows <= len(_WEIGHTS) and room > _WEIGHT_BOUND:
        weights = _WEIGHTS[:rows]
    else:
        weights = np.random.default_rng(0).integers(1, min(room, 2**40), rows).astype(np.float64)
    hashes = weights @ table
    order = np.argsort(hashes, kind="stable")  # equal hashes: by byte
    ordered = hashes[order]
    starts = np.empty(len(order), dtype=bool)
    starts[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    first = order[starts]  # each class's smallest byte, in hash order
    rank = np.empty(len(first), dtype=np.int64)  # classes numbered by their smallest byte
    rank[np.argsort(first)] = np.arange(len(first))
    byte_class = np.empty(len(order), dtype=np.int64)
    byte_class[order] = rank[np.cumsum(starts) - 1]
    smallest = np.sort(first)
    if not (table[:, smallest[byte_class]] == table).all():
        return None
    return ByteColumns(byte_class, smallest)


_WEIGHT_BOUND = 2**40
_WEIGHTS = np.random.default_rng(0).integers(1, _WEIGHT_BOUND, 4_096).astype(np.float64)
"""``_hashed_columns``' weights for tables of up to 4,096 rows whose sums stay exact with
weights below ``_WEIGHT_BOUND`` (their room above it)."""


def _compared_columns(table: np.ndarray) -> ByteColumns:
    """``ByteColumns.of`` by each column's bytes, one dict lookup each."""
    known: dict[bytes, int] = {}  # a column's bytes -> its class, numbered bytes up
    columns = np.ascontiguousarray(table.T)
    byte_class = np.array([known.setdefault(c.tobytes(), len(known)) for c in columns])
    return ByteColumns(byte_class, np.unique(byte_class, return_index=True)[1])


def to_bytes(dfa: Dfa) -> ByteDfa:
    """Rewrite each character edge of ``dfa`` as the UTF-8 byte chains it stands for,
    leaving out edges into states from which acceptance is unreachable.

    The one-byte part is a single table lookup: each ASCII byte belongs to at most one
    class, so row ``s`` of the byte table at ASCII byte ``b`` is the character table's
    entry for ``s`` and ``b``'s class. The multi-byte part goes through ``_Builder``: the
    states are grouped by the shape of their multi-byte edges, and all are stamped out
    together."""
    ranges = [cls.ranges(dfa.mentioned) for cls in dfa.classes]
    states, classes = dfa.num_states, len(ranges)
    small = states <= SMALL_ASCII_STATES and classes <= SMALL_ASCII
    if (small or (states <= SMALL_ASCII_STATES and _few_edges(dfa))) and all(
        r[-1][1] <= 0x7F for r in ranges if r
    ):
        return _ascii_bytes(dfa, ranges)
    few = small or (states <= SMALL_ASCII_STATES and states * classes <= FEW_CELLS)
    if few and all(any(not _inside_surrogates(lo, hi) for lo, hi in r) for r in ranges):
        return _few_bytes(dfa, ranges)
    return _table_bytes(dfa, ranges)


def _class_layout(
    ranges: list[tuple[tuple[int, int], ...]],
) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """Where a DFA's character classes (``ranges``, one tuple a class) lie: each ASCII
    character's class (``len(ranges)``, the table's last column, where none holds it) and
    the ``(lo, hi, class)`` spans beyond ASCII, by first code point.

    >>> table, spans = _class_layout([((0x61, 0x62),), ((0x7E, 0xE9),)])
    >>> table[0x61].item(), table[0x7E].item(), table[0x30].item(), spans
    (0, 1, 2, [(128, 233, 1)])
    """
    ascii_class = np.full(0x80, len(ranges), dtype=np.intp)  # the last column: no class
    spans: list[tuple[int, int, int]] = []
    for k, class_ranges in enumerate(ranges):
        for lo, hi in class_ranges:
            if lo <= 0x7F:
                ascii_class[lo : min(hi, 0x7F) + 1] = k
            if hi > 0x7F:
                spans.append((max(lo, 0x80), hi, k))
    spans.sort()  # the classes are disjoint: by first code point
    return ascii_class, spans


def _table_bytes(dfa: Dfa, ranges: list[tuple[tuple[int, int], ...]]) -> ByteDfa:
    """``to_bytes`` through the character table (``_char_table``), in numpy throughout."""
    chars = _char_table(dfa, ranges)
    ascii_class, spans = _class_layout(ranges)
    builder = _Builder(dfa.num_states)
    builder.table[:, :0x80] = chars[:, ascii_class]
    if spans:
        targets = chars[:, [k for *_, k in spans]]  # [state, span]
        builder.stamp(_groups(targets, [s[:2] for s in spans]), targets)
    accepting = np.zeros(builder.num_states, dtype=bool)
    accepting[list(dfa.accepting)] = True
    return ByteDfa(builder.finish(), accepting, dfa.num_states)


SMALL_ASCII = 16
SMALL_ASCII_STATES = 48
"""A DFA of at most ``SMALL_ASCII_STATES`` states and ``SMALL_ASCII`` character classes,
all within ASCII, has its byte table written edge by edge in Python (``_ascii_bytes``):
``yes|no``'s five states in ~10 µs, where the vectorised path's forty numpy calls took
~80 µs. Past ~80 states the numpy calls cost less than the edges (245 states of
``(\\d{3}-){60}\\d{4}``: 0.34 ms, where the edges took 0.52)."""
FEW_ASCII_EDGES = 64
"""Past ``SMALL_ASCII`` classes a DFA of at most ``SMALL_ASCII_STATES`` states within
ASCII still goes edge by edge where its (state, class) edges number at most this many
(``_few_edges``): a keyword alternation's letters split into many classes, each state
reading one or two (``(extractors|loaders|…|mappers)``: 44 states, 17 classes, 50 edges,
~57 µs where the vectorised path took ~82), and its table's runs let its whole index walk
in Python (``ByteDfa.byte_runs``)."""


def _few_edges(dfa: Dfa) -> bool:
    """Whether ``dfa`` has at most ``FEW_ASCII_EDGES`` (state, class) edges: each state's
    class masks are disjoint, so their sum's set bits count its classes.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> _few_edges(compile_regex("(red|green|blue)")), _few_edges(compile_regex("[a-z]{80}"))
    (True, False)
    """
    edges = 0
    for moves in dfa.moves:
        edges += sum(moves.values()).bit_count()
        if edges > FEW_ASCII_EDGES:
            return False
    return True


def _ascii_bytes(dfa: Dfa, ranges: list[tuple[tuple[int, int], ...]]) -> ByteDfa:
    """``to_bytes`` of a DFA whose classes are few and all ASCII: every character is one
    byte, every class spellable, so each edge is a slice of its source's row.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> dfa = compile_regex("[a-c]x|y")
    >>> fast = _ascii_bytes(dfa, [c.ranges(dfa.mentioned) for c in dfa.classes])
    >>> bool((fast.table == to_bytes(compile_regex("[a-c]x|y()")).table).all())
    True
    """
    table = np.full((dfa.num_states, 256), -1, dtype=np.int32)
    byte_runs = []
    for source, moves in enumerate(dfa.moves):
        row, found = table[source], []
        for target, classes in moves.items():
            while classes:
                k = (classes & -classes).bit_length() - 1
                classes &= classes - 1
                for lo, hi in ranges[k]:
                    row[lo : hi + 1] = target
                    found.append((lo, hi, target))
        byte_runs.append(tuple(found))
    accepting = np.zeros(dfa.num_states, dtype=bool)
    accepting[list(dfa.accepting)] = True
    return ByteDfa(table, accepting, dfa.num_states, tuple(byte_runs))


FEW_CELLS = 400
"""A DFA of at most ``SMALL_ASCII_STATES`` states past ``SMALL_ASCII`` classes goes by
``_few_bytes`` still where its character table has at most this many cells (states x
classes): a JSON string around a literal (15-20 states, 17-18 classes) in ~0.10 ms, where
the table path took ~0.14; at 40 states and 20 classes the two cost the same, and past
``SMALL_ASCII_STATES`` the table path costs less however few the classes (78 x 2: 0.07
ms, 0.10 by ``_few_bytes``)."""


def _few_bytes(dfa: Dfa, ranges: list[tuple[tuple[int, int], ...]]) -> ByteDfa:
    """``to_bytes`` of a DFA as small as ``_ascii_bytes`` takes, whose classes reach past
    ASCII, each with a UTF-8 spelling (nothing to prune): ``.*\\.json``, ``[^@]+@[^@]+``.
    As the table path, but its character table is written from the moves in Python and
    its states grouped by shape in Python (``_shape_groups``), where that path's numpy
    calls on a few rows took ~0.1 ms.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> dfa = compile_regex(".*é")
    >>> ranges = [c.ranges(dfa.mentioned) for c in dfa.classes]
    >>> bool((_few_bytes(dfa, ranges).table == _table_bytes(dfa, ranges).table).all())
    True
    """
    ascii_class, spans = _class_layout(ranges)
    table = [[-1] * (len(ranges) + 1) for _ in dfa.moves]  # [state, class], as _char_table
    for row, moves in zip(table, dfa.moves, strict=True):
        for target, classes in moves.items():
            while classes:
                row[(classes & -classes).bit_length() - 1] = target
                classes &= classes - 1
    chars = np.array(table, dtype=np.int32)
    builder = _Builder(dfa.num_states)
    builder.table[:, :0x80] = chars[:, ascii_class]
    targets = chars[:, [k for *_, k in spans]]  # [state, span]
    builder.stamp(_shape_groups(targets.tolist(), [s[:2] for s in spans]), targets)
    accepting = np.zeros(builder.num_states, dtype=bool)
    accepting[list(dfa.accepting)] = True
    return ByteDfa(builder.finish(), accepting, dfa.num_states)


def _shape_groups(targets: list[list[int]], spans: list[tuple[int, int]]) -> list[_Group]:
    """``_groups`` of a few states, in Python: each state's targets renamed in order of
    first appearance (``_slot_labels``) are its group's key.

    >>> [(g.states, g.shape, g.slot_spans) for g in _shape_groups([[7, 7], [-1, -1], [5, 5]],
    ...                                                          [(0x80, 0xFF), (0x100, 0x1FF)])]
    [([0, 2], ((128, 255, 1073741824), (256, 511, 1073741824)), [0])]
    """
    members: dict[tuple[int, ...], _Group] = {}
    for state, row in enumerate(targets):
        slot_of: dict[int, int] = {}
        labels = tuple(slot_of.setdefault(t, len(slot_of)) if t >= 0 else -1 for t in row)
        if not slot_of:
            continue  # no edge past ASCII
        group = members.get(labels)
        if group is None:
            shape = tuple((*spans[i], _SLOT + k) for i, k in enumerate(labels) if k >= 0)
            firsts = {k: i for i, k in reversed(list(enumerate(labels))) if k >= 0}
            group = members[labels] = _Group([], shape, [firsts[k] for k in range(len(firsts))])
        group.states.append(state)
    return list(members.values())


@dataclass(frozen=True, eq=False)
class _Group:
    """States whose multi-byte edges have one shape: the spans with an edge, each with the
    slot of its target (``_SLOT + k``: the k-th distinct target, in order of appearance).
    A state's target for slot ``k`` is its target on span ``slot_spans[k]``."""

    states: list[int]
    shape: tuple[_Piece, ...]
    slot_spans: list[int]


def _groups(targets: np.ndarray, spans: list[tuple[int, int]]) -> list[_Group]:
    """The states with multi-byte edges, grouped by shape, in order of each group's first
    state. ``targets[state, i]`` is the target on ``spans[i]`` (-1: none)."""
    with_edges = np.flatnonzero((targets >= 0).any(axis=1))
    labels = _slot_labels(targets[with_edges])
    data, width = labels.tobytes(), labels.shape[1] * labels.itemsize
    members: dict[bytes, list[int]] = {}
    for state, i in zip(with_edges.tolist(), range(0, len(data), width), strict=True):
        members.setdefault(data[i : i + width], []).append(state)
    keys = labels[np.searchsorted(with_edges, [states[0] for states in members.values()])]
    group, columns = np.nonzero(keys >= 0)  # each group's spans with an edge
    slots, bounds = keys[group, columns].tolist(), np.searchsorted(group, range(len(keys) + 1))
    columns, bounds = columns.tolist(), bounds.tolist()
    out = []
    for g, states in enumerate(members.values()):
        shape, slot_spans = [], []
        for i in range(bounds[g], bounds[g + 1]):
            shape.append((*spans[columns[i]], _SLOT + slots[i]))
            if slots[i] == len(slot_spans):  # slot k's first span
                slot_spans.append(columns[i])
        out.append(_Group(states, tuple(shape), slot_spans))
    return out


def _slot_labels(targets: np.ndarray) -> np.ndarray:
    """Each row's targets renamed ``0, 1, 2 ...`` in order of first appearance (-1 stays):
    two states have the same shape exactly when their rows of labels are equal.

    Sorting each row (stably) puts equal targets side by side, the first-seen leftmost;
    every entry then learns the column of its value's first appearance, and the columns
    that are their own first appearance are counted off from the left.

    >>> _slot_labels(np.array([[7, -1, 3, 7], [-1, 5, 5, 2]])).tolist()
    [[0, -1, 1, 0], [-1, 0, 0, 1]]
    """
    rows, width = targets.shape
    row = np.arange(rows)[:, None]
    order = np.argsort(targets, axis=1, kind="stable")
    ordered = targets[row, order]
    starts = np.zeros(order.shape, dtype=np.intp)  # where each run of equal targets begins
    starts[:, 1:] = np.where(ordered[:, 1:] != ordered[:, :-1], np.arange(1, width), 0)
    np.maximum.accumulate(starts, axis=1, out=starts)
    first_column = np.empty_like(order)
    first_column[row, order] = order[row, starts]
    has = targets >= 0
    rank = np.cumsum((first_column == np.arange(width)) & has, axis=1) - 1
    return np.where(has, rank[row, first_column], -1)


def _char_table(dfa: Dfa, ranges: list[tuple[tuple[int, int], ...]]) -> np.ndarray:
    """The character DFA as a dense table ``[state, class]`` (-1: no edge), plus a last
    column of -1 for characters in no class. Left out: edges on a class with no UTF-8
    spelling (a lone surrogate written in the pattern) and edges into states from which
    acceptance is then unreachable (every state of a compiled DFA can finish, so only
    after such a cut is there anything to search for)."""
    sources, classes, targets = _edges_by_class(dfa)
    spellable = [any(not _inside_surrogates(lo, hi) for lo, hi in r) for r in ranges]
    if not all(spellable):
        spelled = np.array(spellable, dtype=bool)[classes]
        sources, classes, targets = sources[spelled], classes[spelled], targets[spelled]
        keep = _can_finish(dfa.num_states, sources, targets, list(dfa.accepting))[targets]
        sources, classes, targets = sources[keep], classes[keep], targets[keep]
    table = np.full((dfa.num_states, len(ranges) + 1), -1, dtype=np.int32)
    table[sources, classes] = targets
    return table


def _edges_by_class(dfa: Dfa) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (source, class, target) of ``dfa``, from its moves: each move's bitset of
    classes spelled out by numpy, as little-endian bytes (a schema's 1,700 moves on 52
    classes: 0.7 ms, where writing the rows by class took 4 ms); up to 64 classes the
    bitsets are read as one array of 64-bit integers, not spelled one by one.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> [a.tolist() for a in _edges_by_class(compile_regex("a[bc]"))]
    [[0, 1], [0, 1], [1, 2]]
    """
    moves, width = dfa.moves, max(-(-len(dfa.classes) // 8), 1)  # bytes per bitset
    move_source = np.repeat(np.arange(dfa.num_states), [len(m) for m in moves])
    count = len(move_source)
    move_target = np.fromiter(chain.from_iterable(moves), dtype=np.int32, count=count)
    if width <= 8:  # (most patterns: 64 classes at most) one C loop over the bitsets
        sets = chain.from_iterable(m.values() for m in moves)
        spelled = np.fromiter(sets, dtype="<u8", count=count).view(np.uint8).reshape(-1, 8)
    else:
        joined = b"".join(c.to_bytes(width, "little") for m in moves for c in m.values())
        spelled = np.frombuffer(joined, dtype=np.uint8).reshape(-1, width)
    bits = np.unpackbits(spelled[:, :width], axis=1, bitorder="little")
    move, classes = np.nonzero(bits)
    return move_source[move], classes, move_target[move]


def _can_finish(
    size: int, sources: np.ndarray, targets: np.ndarray, goals: Iterable[int]
) -> np.ndarray:
    """Boolean mask of the states ``0 .. size-1`` from which one of ``goals`` is reachable
    along the edges ``sources[i] -> targets[i]``. The edges are reversed and deduplicated
    in numpy (sorted by target: each state's predecessors are one slice), then a search
    from the goals marks every state it reaches (``graph.backward_distances`` would also
    count the steps, which this question does not need, at twice the cost).

    >>> _can_finish(4, np.array([0, 1, 1, 3]), np.array([1, 2, 2, 3]), [2]).tolist()
    [True, True, True, False]
    """
    edges = distinct(targets.astype(np.int64) * size + sources)
    preceding = (edges % size).tolist()
    bounds = np.searchsorted(edges, np.arange(size + 1) * size).tolist()
    reached = [False] * size
    todo = list(goals)
    for goal in todo:
        reached[goal] = True
    while todo:
        target = todo.pop()
        for source in preceding[bounds[target] : bounds[target + 1]]:
            if not reached[source]:
                reached[source] = True
                todo.append(source)
    return np.array(reached, dtype=bool)


_SLOT = 1 << 30
"""Targets of a template are slots ``_SLOT + k``: the k-th distinct target of a state."""

_CONTINUATION = slice(0x80, 0xC0)
"""The continuation bytes: the only bytes an intermediate state reads."""

_TEMPLATES: BoundedCache[_Template] = BoundedCache(maxsize=64)
"""Templates by shape, kept across patterns: most patterns share a few (a JSON string's,
``.``'s), and building one walks every lead byte (~10 ms for a JSON string's)."""


class _Builder:
    """Grows the byte table: the character states' rows, then hash-consed intermediate rows.

    The multi-byte part of a state depends only on its *shape*: which code point ranges
    lead to the same target. A JSON string's states all read "any character but ``"``,
    ``\\`` and controls" into their own next state: one shape. Its byte subtrees are built
    once as a template (targets left as slots), then stamped out with each state's targets
    filled in, every stamped row hash-consed: a row equal to an earlier one is that row's
    state.

    All states are stamped together, template row by template row. Each state owns a
    segment of one vector ``values``: a -1 (what code -1, no edge, reads), then what its
    template's codes stand for: its template rows' states (filled in as they are made),
    then its slots' targets. Step ``j`` takes row ``j`` of every template that has one
    (children come first, so whatever row ``j`` points to is ready), gathers every such
    state's stamped row from its segment in one fancy index, interns the rows and writes
    the states back. Take the characters U+1000-U+1FFF (lead byte E1, then any two
    continuation bytes): template rows ``r0`` (80-BF -> slot 0) and ``r1`` (80-BF ->
    ``r0``), lead E1 -> ``r1``. For char states 5 and 9 with targets 6 and 7, of 12::

        values = [-1, r0, r1, 6, -1, r0, r1, 7]     (segments at 1 and 5)
        step 0: rows "80-BF -> 6", "80-BF -> 7"   -> new states 12, 13 -> values[1], values[5]
        step 1: rows "80-BF -> 12", "80-BF -> 13" -> new states 14, 15 -> values[2], values[6]
        leads:  table[5, E1] = values[2] = 14, table[9, E1] = values[6] = 15

    so there are as many steps as the longest template has rows, however many states and
    shapes; the lead bytes of all states are one more gather. Intermediate states read
    only continuation bytes (0x80-0xBF), so only those 64 columns are stamped and
    interned; ``finish`` widens them."""

    def __init__(self, num_char_states: int):
        self.table = np.full((num_char_states, 256), -1, dtype=np.int32)
        self._rows: list[np.ndarray] = []  # intermediate rows' continuation columns, in order
        self._interned: dict[bytes, int] = {}

    @property
    def num_states(self) -> int:
        return len(self.table) + len(self._interned)

    def stamp(self, groups: list[_Group], targets: np.ndarray) -> None:
        """The byte chains of every group's states; ``targets[state, span]`` as for
        ``_groups``."""
        if not groups:
            return
        templates = [_template(group.shape) for group in groups]
        few = _instances(groups, templates, targets)
        if few is not None:
            self._stamp_few(few, templates)
            return
        counts = [len(group.states) for group in groups]
        states = np.fromiter(chain.from_iterable(g.states for g in groups), np.intp, sum(counts))
        template_of = np.repeat(np.arange(len(groups)), counts)  # of each state
        depths = [len(template.rows) for template in templates]
        depth = np.array(depths)[template_of]  # the rows of each state's template
        slots = np.repeat([len(group.slot_spans) for group in groups], counts)
        offsets = np.cumsum(1 + depth + slots) - depth - slots  # segments: -1, rows, slots
        values = np.full(int(offsets[-1] + depth[-1] + slots[-1]), -1, dtype=np.int32)
        slot_spans = list(chain.from_iterable(g.slot_spans * len(g.states) for g in groups))
        slot_targets = targets[np.repeat(states, slots), slot_spans]
        values[runs(offsets + depth, slots)] = slot_targets
        codes = np.concatenate([template.rows[:, _CONTINUATION] for template in templates])
        deepest = np.argsort(-depth, kind="stable")  # step j's states: a prefix of these
        at, row_0 = offsets[deepest], (np.cumsum(depths) - depths)[template_of[deepest]]
        for j, alive in enumerate(np.searchsorted(-depth[deepest], -np.arange(max(depths)))):
            rows = values[codes[row_0[:alive] + j] + at[:alive, None]]  # code -1: the -1 cell
            values[at[:alive] + j] = self._intern(rows)
        lead_rows = np.stack([template.lead_row for template in templates])[template_of]
        self.table[states, 0x80:] = values[lead_rows + offsets[:, None]]

    def _stamp_few(
        self, found: dict[tuple[int, tuple[int, ...]], list[int]], templates: list[_Template]
    ) -> None:
        """``stamp`` in Python, each distinct instance (``_instances``) once: step ``j``
        makes row ``j`` of every instance with one, deepest first, as ``stamp``'s steps
        meet them, so the rows are interned, and numbered, as there."""
        if self._stamp_new(found, templates):
            return
        # Each instance's values by code + 1: -1 (no edge), its rows' states as they are
        # made, its slots' targets; a template row is then one C-level gather of them.
        values = {key: [-1] * (1 + len(templates[key[0]].rows)) + list(key[1]) for key in found}
        for j in range(max(len(templates[g].rows) for g, _ in found)):
            alive = [key for key in found if len(templates[key[0]].rows) > j]
            rows = np.array([templates[k[0]].getters[j](values[k]) for k in alive], dtype=np.int32)
            for key, state in zip(alive, self._intern(rows), strict=True):
                values[key][1 + j] = state
        for key, states in found.items():
            self.table[states, 0x80:] = templates[key[0]].lead_getter(values[key])

    def _stamp_new(
        self, found: dict[tuple[int, tuple[int, ...]], list[int]], templates: list[_Template]
    ) -> bool:
        """``_stamp_few`` where every row it makes is new (one instance's rows always are:
        a template's rows are distinct, and lead to its distinct slots). Step ``j`` then
        numbers row ``j`` of the instances that have one (a prefix of ``found``, deepest
        first) one after another, so every row's state is known before any is made, and
        each instance's rows are one gather, not a step of Python per row. False, nothing
        made, where two of the rows, or one and a row made before, are equal."""
        instances = list(found)
        depths = [len(templates[g].rows) for g, _ in instances]
        state = self.num_states
        numbers: list[list[int]] = [[] for _ in instances]  # each instance's rows' states
        order = []  # the rows, instance by instance, in the order of their states
        for j in range(depths[0]):
            for i, depth in enumerate(depths):
                if depth <= j:
                    break
                numbers[i].append(state)
                order.append(sum(depths[:i]) + j)
                state += 1
        values = [np.array([-1, *mine, *slots], dtype=np.int32)  # code c is values[c + 1]
                  for (_, slots), mine in zip(instances, numbers, strict=True)]  # fmt: skip
        made = [v[templates[g].rows[:, _CONTINUATION] + 1]
                for (g, _), v in zip(instances, values, strict=True)]  # fmt: skip
        rows = np.concatenate(made)[order] if len(made) > 1 else made[0]
        data, width = rows.tobytes(), rows.shape[1] * rows.itemsize
        keys = [data[i : i + width] for i in range(0, len(data), width)]
        if len(set(keys)) < len(keys) or not self._interned.keys().isdisjoint(keys):
            return False
        self._interned.update(zip(keys, range(self.num_states, state), strict=True))
        self._rows.append(rows)
        for (g, _), v, states in zip(instances, values, found.values(), strict=True):
            self.table[states, 0x80:] = v[templates[g].lead_row + 1]
        return True

    def _intern(self, rows: np.ndarray) -> list[int]:
        """The state of each row (continuation columns), new rows numbered as they come:
        ``setdefault`` gets its default before it inserts, so ``len(interned)`` is the
        count of rows before this one."""
        data, width = rows.tobytes(), rows.shape[1] * rows.itemsize
        interned, base = self._interned, len(self.table)
        known, number = len(interned), interned.setdefault
        states = [
            number(data[i : i + width], base + len(interned)) for i in range(0, len(data), width)
        ]
        added = len(interned) - known
        if added == len(rows):  # all new (as often): no search for first appearances
            self._rows.append(rows)
        elif added:  # the new rows at their first appearances, in order
            first = {}
            for i, state in enumerate(states):
                if state >= base + known:
                    first.setdefault(state, i)
            self._rows.append(rows[list(first.values())])
        return states

    def finish(self) -> np.ndarray:
        """The whole table ``[state, byte]``."""
        table = np.full((self.num_states, 256), -1, dtype=np.int32)
        table[: len(self.table)] = self.table
        if self._rows:
            table[len(self.table) :, _CONTINUATION] = np.concatenate(self._rows)
        return table


FEW_STAMPED = 64
"""Template rows, counted once for each distinct instance (``_instances``), up to which
``_Builder.stamp`` stamps in Python: ``.``'s 7 rows, once for every state of ``.*a`` or
``.*(error|warning): ...`` (each leads its characters back to state 0), where the
vectorised steps' set-up cost more than the rows (~0.1 ms of ~0.25)."""


def _instances(
    groups: list[_Group], templates: list[_Template], targets: np.ndarray
) -> dict[tuple[int, tuple[int, ...]], list[int]] | None:
    """The states of ``groups`` by *instance*, (group, its slot targets): states of one
    instance stamp the same rows. Deepest template first, then in group order, as
    ``stamp`` meets them; None past ``FEW_STAMPED`` rows.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> dfa = compile_regex(".*a")  # both states lead their characters to state 0
    >>> spans = [(0x80, 0xD7FF), (0xE000, 0x10FFFF)]
    >>> targets = np.array([[0, 0], [0, 0]])
    >>> groups = _groups(targets, spans)
    >>> _instances(groups, [_template(g.shape) for g in groups], targets)
    {(0, (0,)): [0, 1]}
    """
    if sum(len(template.rows) for template in templates) > FEW_STAMPED:
        return None
    order = sorted(range(len(groups)), key=lambda g: -len(templates[g].rows))
    rows = 0  # at least: the distinct first slot targets of each group
    for g in order:
        first = targets[:, groups[g].slot_spans[0]].tolist()
        rows += len({first[state] for state in groups[g].states}) * len(templates[g].rows)
        if rows > FEW_STAMPED:  # (a CSV row's 80 states each lead to their own)
            return None
    found: dict[tuple[int, tuple[int, ...]], list[int]] = {}
    for g in order:
        group = groups[g]
        slots = targets[group.states][:, group.slot_spans].tolist()
        for state, values in zip(group.states, slots, strict=True):
            found.setdefault((g, tuple(values)), []).append(state)
    if sum(len(templates[g].rows) for g, _ in found) > FEW_STAMPED:
        return None
    return found


@dataclass(frozen=True, eq=False)
class _Template:
    """The byte subtrees of one shape as rows of *codes* (children before parents): code
    ``c < len(rows)`` is template row ``c``, the next codes are the slots in order, and -1
    is no edge. ``lead_row`` is the lead-byte edges: the code each byte 0x80-0xFF leads
    to, so every state's lead edges are one gather."""

    rows: np.ndarray  # intp [rows, 256]: indices, which numpy gathers with fastest
    lead_row: np.ndarray  # intp [128]

    @cached_property
    def getters(self) -> tuple[itemgetter, ...]:
        """Each row's continuation columns as one ``itemgetter`` of code + 1, for
        ``_Builder._stamp_few``'s lists of values (a list comprehension a row, with its
        branches, took ~30 µs: 45 rows of a JSON string around ``1.0``)."""
        return tuple(itemgetter(*(row + 1).tolist()) for row in self.rows[:, _CONTINUATION])

    @cached_property
    def lead_getter(self) -> itemgetter:
        """``lead_row`` as ``getters`` are."""
        return itemgetter(*(self.lead_row + 1).tolist())

    @staticmethod
    def of(shape: tuple[_Piece, ...]) -> _Template:
        subtrees = _Subtrees()
        leads = subtrees.leads(list(shape))
        count = len(subtrees.rows)

        def code(ref: int) -> int:
            return count + ref - _SLOT if ref >= _SLOT else ref

        rows = np.full((count, 256), -1, dtype=np.intp)
        for j, edges in enumerate(subtrees.rows):
            for byte, ref in edges:
                rows[j, byte] = code(ref)
        lead_row = np.full(0x80, -1, dtype=np.intp)
        for byte, ref in leads.items():
            lead_row[byte - 0x80] = code(ref)
        return _Template(rows, lead_row)


def _template(shape: tuple[_Piece, ...]) -> _Template:
    return _TEMPLATES.get_or_build(shape, lambda: _Template.of(shape))


class _Subtrees:
    """Builds a template: the UTF-8 subtrees of multi-byte pieces, as hash-consed rows of
    sparse edges ``(byte, reference)``; a reference is a row number or a slot."""

    def __init__(self) -> None:
        self.rows: list[tuple[tuple[int, int], ...]] = []
        self._interned: dict[tuple[tuple[int, int], ...], int] = {}
        self._chains: dict[tuple[int, int], int] = {}
        self._subtrees: dict[tuple[int, int, tuple[_Piece, ...]], int] = {}

    def leads(self, pieces: list[_Piece]) -> dict[int, int]:
        """Lead byte -> reference, for every multi-byte character of ``pieces``."""
        starts = [lo for lo, _, _ in pieces]
        out = {}
        for lead in sorted(_lead_bytes(pieces)):
            _, _, continuation, min_code = next(u for u in _UTF8_LENGTHS if u[0] <= lead <= u[1])
            base = (lead & _LEAD_BITS[continuation]) << (6 * continuation)
            target = self._subtree(pieces, starts, base, continuation, min_code)
            if target >= 0:
                out[lead] = target
        return out

    def _subtree(
        self, pieces: list[_Piece], starts: list[int], base: int, k: int, min_code: int
    ) -> int:
        """The state reached after a byte whose remaining ``k`` continuation bytes select a
        code point in ``[base, base + 64**k)``; -1 when no code point there has an edge."""
        span_hi = base + (1 << (6 * k)) - 1
        lo, hi = max(base, min_code), span_hi
        covered = _cover(pieces, starts, lo, hi)
        if not covered:
            return -1
        if k == 0:
            return covered[0][2]
        key = (base, k, tuple(covered))
        if key not in self._subtrees:
            self._subtrees[key] = self._build_subtree(covered, base, k, min_code)
        return self._subtrees[key]

    def _build_subtree(
        self, covered: list[tuple[int, int, int]], base: int, k: int, min_code: int
    ) -> int:
        span_hi = base + (1 << (6 * k)) - 1
        lo = max(base, min_code)
        starts = [a for a, _, _ in covered]
        whole = lo == base and len(covered) == 1 and covered[0][:2] == (base, span_hi)
        if whole and not _overlaps_surrogates(base, span_hi):
            return self._any_continuation(covered[0][2], k)
        edges = []
        for byte in range(0x80, 0xC0):
            sub_base = base + ((byte - 0x80) << (6 * (k - 1)))
            sub_hi = sub_base + (1 << (6 * (k - 1))) - 1
            if sub_hi < min_code or _inside_surrogates(sub_base, sub_hi):
                continue
            target = self._subtree(covered, starts, sub_base, k - 1, min_code)
            if target >= 0:
                edges.append((byte, target))
        return self._intern(tuple(edges)) if edges else -1

    def _any_continuation(self, target: int, k: int) -> int:
        """A state reading any ``k`` continuation bytes (0x80-0xBF), then at ``target``."""
        key = (target, k)
        if key not in self._chains:
            state = target
            for _ in range(k):
                state = self._intern(tuple((byte, state) for byte in range(0x80, 0xC0)))
            self._chains[key] = state
        return self._chains[key]

    def _intern(self, edges: tuple[tuple[int, int], ...]) -> int:
        state = self._interned.get(edges)
        if state is None:
            state = self._interned[edges] = len(self.rows)
            self.rows.append(edges)
        return state


def _lead_bytes(pieces: list[tuple[int, int, int]]) -> set[int]:
    """Lead bytes of every multi-byte character in the pieces."""
    leads: set[int] = set()
    for lo, hi, _ in pieces:
        a = max(lo, 0x80)
        if a <= hi:
            leads.update(range(_lead(a), _lead(hi) + 1))
    return leads


def _lead(code: int) -> int:
    """The first UTF-8 byte of a code point."""
    return chr(code).encode("utf-8", "surrogatepass")[0]


def _cover(
    pieces: list[tuple[int, int, int]], starts: list[int], lo: int, hi: int
) -> list[tuple[int, int, int]]:
    """The pieces clipped to ``[lo, hi]``, minus surrogates."""
    out = []
    i = max(bisect_right(starts, lo) - 1, 0)
    while i < len(pieces) and pieces[i][0] <= hi:
        a, b, target = pieces[i]
        a, b = max(a, lo), min(b, hi)
        if a <= b and not _inside_surrogates(a, b):
            out.append((a, b, target))
        i += 1
    return out


def _overlaps_surrogates(lo: int, hi: int) -> bool:
    return lo <= SURROGATES[1] and hi >= SURROGATES[0]


def _inside_surrogates(lo: int, hi: int) -> bool:
    return SURROGATES[0] <= lo and hi <= SURROGATES[1]
