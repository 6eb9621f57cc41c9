"""The first allowed set by the plainest walk there is: every trie node's state, one level
of the byte trie per numpy round, rows of the automaton made as states are met.

No node is tested; each is *computed*, with two gathers::

    level d+1:  state[child] = table[state[parent[child]], byte[child]]

(``table[-1]`` is a row of -1, so a dead parent gives dead children for free.) A level of
15k nodes costs ~0.1 ms, whatever the pattern: subtree tests (a chain or a closure taking
a whole subtree, as ``derivatives`` did until session 33) cost more than they saved once a
level's nodes spread over a few states (``.*(error|warning)``, every count of
``[^,\n]{1,20}``). Where few nodes of a level live, only their children are computed (a
pattern whose tokens die in a few bytes walks a few hundred nodes); the deepest levels,
~10 nodes each, are walked token by token in Python; and a row is read the first time a
node reaches its state (``walk_bytes``).

What it needs of the vocabulary, beside its trie, is each node's parent, where each level
begins and where each token ends (``TrieLevels``: built once per trie and kept, ``warm``
builds it ahead).

On a large vocabulary the byte trie is large too (Gemma's 262k tokens: 600k nodes). A
pattern tells few kinds of byte apart, so the *class trie* of those kinds is smaller
(``walk_classes``, ``classwalk.class_trie``): under ``[^\n]{1,20}`` Gemma's 600k byte
nodes are 22k class nodes. ``warm`` learns ``[^\n]``'s kinds (``learn``) and builds their
class trie; a start row that tells the same kinds apart walks it from the root
(``walk_root``): a level is a gather through the rows cut to one column a class, as
offsets (``_Cut``) (Gemma's first set of ``[^\n]{1,20}``, session 31: 3.6-3.9 ms beside
llguidance's 3.9-4.2 at load 9-19). No other kinds are learnt: a class trie built for a
pattern's first set would cost more than its byte walk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from fsmviz.arrays import distinct, runs
from fsmviz.automaton.bytedfa import to_bytes
from fsmviz.automaton.dfa import compile_regex
from fsmviz.cache import OwnedCache, bounded
from fsmviz.tokens.fast.classwalk import (
    MERGED_CLASSES,
    ClassTrie,
    TrieLayout,
    class_trie,
    trie_layout,
)
from fsmviz.tokens.fast.dawg import _empty_rows
from fsmviz.tokens.fast.rowwalk import walk_tokens
from fsmviz.tokens.trie import VocabTrie

__all__ = [
    "Spelt",
    "TrieLevels",
    "byte_partition",
    "learn",
    "levels_of",
    "loop_tokens",
    "walk_bytes",
    "walk_classes",
    "walk_long",
    "walk_root",
]

SPARSE_LEVEL = 8
"""A level whose nodes live fewer than one in this many has only its live nodes'
children computed (else the whole level, every node's state from its parent's)."""
DEEP_NODES = 512
"""The trie's deepest levels, from the first with no more nodes than this at and below
it, are walked token by token in Python (``walk_tokens``): SmolLM2's 49k tokens have 60
levels below depth 20, ~8 nodes each, where a numpy round costs ~7 µs whatever its size;
their ~90 tokens' ~1,600 bytes cost less in Python. (1,024: depth 16, and 0.97 of the
time over 6 patterns with 512 beside it; 3,000: depth 14, 1.2 times; 250: depth 39, 1.03
times.)"""
TAIL_TOKENS = 64
"""Nor is a level walked in numpy whose live nodes hold no more tokens than this at and
below them all (a pattern whose tokens die in a few bytes)."""
UNREAD_ROW = -2
"""A state's entries in ``_Rows.flat`` until its row is read: a node that reaches it
tells the walk to read the row and compute the node again."""


@dataclass(frozen=True, eq=False)
class TrieLevels(TrieLayout):
    """A trie's nodes by level (its ``TrieLayout``: ``parent``, ``bounds``, ``node_of``),
    ``deep`` the depth from which ``walk_bytes`` walks tokens in Python (``DEEP_NODES``),
    and the trie's ``byte``, ``first_child`` and ``num_children`` as ``intp`` (the walk's
    indices); ``num_ids`` one past the largest id; ``spelt``, what each token id is spelt
    with (``Spelt``); ``long``, its ``LONG_TOKENS`` longest tokens at most
    (``LongTokens``)."""

    byte: np.ndarray
    first_child: np.ndarray
    num_children: np.ndarray
    deep: int
    num_ids: int
    spelt: Spelt
    long: LongTokens

    @staticmethod
    def of(trie: VocabTrie) -> TrieLevels:
        layout = trie_layout(trie)  # the arrays ``classwalk``'s class tries read too
        parent, bounds, node_of = layout.parent, layout.bounds, layout.node_of
        nodes, num_ids = len(parent), len(node_of)
        deep = int(np.count_nonzero(nodes - bounds > DEEP_NODES))
        as_index = [a.astype(np.intp) for a in (trie.byte, trie.first_child, trie.num_children)]
        spelt = Spelt.of(parent, bounds.tolist(), as_index[0], node_of)
        long = LongTokens.of(trie)
        return TrieLevels(parent, bounds, node_of, *as_index, deep, num_ids, spelt, long)


LONG_TOKENS = 256
"""At most this many tokens are longer than ``TrieLevels.long`` (SmolLM2's 49k: 243, past
15 bytes): the first set relaxes the counted repeats of ``long`` or more
(``regex_terms.TreeTerms.relax_from``) and walks these tokens with the pattern as
written (``walk_long``)."""


@dataclass(frozen=True, eq=False)
class LongTokens:
    """A trie's tokens longer than ``bound`` bytes, ``LONG_TOKENS`` at most (those past
    the length of the next longest), in the trie's order: their ``ids``, ``lengths``
    and bytes (``spelt``), and ``padded``, their bytes as rows of a matrix (zeros past
    the end), where ``shared`` finds what neighbours have in common; ``longest``, the
    length of the longest."""

    bound: int
    longest: int
    ids: np.ndarray
    lengths: np.ndarray
    spelt: tuple[bytes, ...]
    padded: np.ndarray

    @staticmethod
    def of(trie: VocabTrie) -> LongTokens:
        lengths = trie.sorted_lengths
        cut = len(lengths) - 1 - min(LONG_TOKENS, len(lengths) - 1)  # the longest's rank
        bound = int(np.partition(lengths, cut)[cut]) if len(lengths) else 0
        entries = np.flatnonzero(lengths > bound)
        spelt = tuple(trie.sorted_bytes[e] for e in entries.tolist())
        longest = int(lengths.max(initial=0))
        padded = np.zeros((len(entries), longest + 1), dtype=np.uint8)
        for k, data in enumerate(spelt):
            padded[k, : len(data)] = np.frombuffer(data, dtype=np.uint8)
        ids = trie.sorted_ids[entries].astype(np.int32)
        return LongTokens(bound, longest, ids, lengths[entries], spelt, padded)

    def shared(self, picked: np.ndarray) -> list[int]:
        """How many first bytes each of the tokens ``picked`` (positions here, rising)
        shares with the one picked before (0 for the first): where their padded rows
        first differ, at most the shorter's length (a byte 0 of its own is no padding).

        >>> from fsmviz import Vocabulary
        >>> from fsmviz.tokens.trie import trie_of
        >>> vocab = Vocabulary.from_strings(["ab", "abc", "ab\\x00", "b"], eos_token="</s>")
        >>> long = LongTokens.of(trie_of(vocab))
        >>> long.spelt, long.shared(np.arange(3))
        ((b'ab', b'ab\\x00', b'abc'), [0, 2, 2])
        """
        rows = self.padded[picked]
        differ = rows[1:] != rows[:-1]
        differ[:, -1] = True
        first = np.argmax(differ, axis=1)
        lengths = self.lengths[picked]
        np.minimum(first, np.minimum(lengths[1:], lengths[:-1]), out=first)
        return [0, *first.tolist()]


class MadeRows(Protocol):
    """A table whose rows are made as asked (``derivatives._Rows``): ``table[s, b]`` the
    state after byte ``b`` from ``s`` (-1: none) once ``made[s]``; ``make_row(s)`` makes
    it (the arrays may be replaced as they grow)."""

    table: np.ndarray
    made: np.ndarray

    def make_row(self, s: int) -> None: ...


def walk_long(
    long: LongTokens, longer: int, made: Callable[[], MadeRows], allowed: np.ndarray
) -> np.ndarray:
    """``allowed`` (token ids, sorted) less its tokens longer than ``longer`` bytes (of
    ``long``: ``longer`` is ``long.bound`` or more) that are not walkable from the root in
    state 0 over the rows ``made()`` (asked for only where such a token is allowed).
    Those tokens are walked byte by byte in Python, in the trie's order: each from the
    bytes it shares with the one before (``LongTokens.shared``), or not at all where the
    one before died among them (a run of spaces dies where the first did)."""
    picked = np.flatnonzero(long.lengths > longer)
    ids = long.ids[picked]
    at = np.minimum(np.searchsorted(allowed, ids), max(len(allowed) - 1, 0))
    kept = allowed[at] == ids if allowed.size else np.zeros(len(ids), dtype=bool)
    picked, at = picked[kept], at[kept]  # the others are not allowed already
    if not picked.size:
        return allowed
    rows, spelt, read = made(), long.spelt, set()
    states, died = [0], 1 << 30  # the states along the last token walked; where it died
    dead = []
    for k, (entry, shared) in enumerate(zip(picked.tolist(), long.shared(picked), strict=True)):
        if shared >= died:
            dead.append(k)
            continue
        del states[shared + 1 :]
        state, died = states[-1], 1 << 30
        for byte in spelt[entry][shared:]:
            if state not in read:
                if not rows.made[state]:
                    rows.make_row(state)
                read.add(state)
            state = rows.table.item(state, byte)
            if state < 0:
                died = len(states)
                dead.append(k)
                break
            states.append(state)
    return np.delete(allowed, at[dead])


ASCII, UTF8, BROKEN = range(3)
"""What a token is spelt with (``Spelt.kind``): ASCII bytes only; UTF-8 beyond ASCII (its
last character may be cut short); neither (a byte that begins no character there, or
no bytes: EOS, special tokens)."""


@dataclass(frozen=True, eq=False)
class Spelt:
    """Per token id: the ASCII bytes it holds, ``low`` (bytes 0-63, bit ``b``) and ``high``
    (64-127, bit ``b - 64``), its ``kind`` (``ASCII``, ``UTF8``, ``BROKEN``) and its
    ``first`` byte (0 where it has none: then it is ``BROKEN``).

    What ``loop_tokens`` reads: from a state that reads ``B`` back into itself and
    nothing else (``B*``), a token is allowed exactly when each of its characters is in
    ``B``; where ``B`` holds every character beyond ASCII or none of them, that is a
    test of these three arrays, not a walk."""

    low: np.ndarray
    high: np.ndarray
    kind: np.ndarray
    first: np.ndarray

    @staticmethod
    def of(parent: np.ndarray, bounds: list[int], byte: np.ndarray, node_of: np.ndarray) -> Spelt:
        """Each node's bytes from its parent's, a level at a time (~80 numpy rounds
        once per trie), then each token's from its node's."""
        nodes = len(parent)
        low, high = np.zeros(nodes + 1, np.uint64), np.zeros(nodes + 1, np.uint64)
        state = np.zeros(nodes + 1, np.uint8)  # ``_UTF8``'s state after the node's bytes
        beyond = np.zeros(nodes + 1, bool)  # a byte past ASCII on the way
        first = np.zeros(nodes + 1, np.intp)  # a ``take``'s indices (uint8: 3x as slow)
        first[bounds[1] : bounds[2]] = byte[bounds[1] : bounds[2]]
        bit = np.left_shift(np.uint64(1), (byte & 63).astype(np.uint64))
        for lo, hi in zip(bounds[1:-1], bounds[2:], strict=True):
            up, here = parent[lo:hi], byte[lo:hi]
            low[lo:hi] = low[up] | np.where(here < 64, bit[lo:hi], np.uint64(0))
            high[lo:hi] = high[up] | np.where((here >= 64) & (here < 128), bit[lo:hi], 0)
            state[lo:hi] = _UTF8[state[up], here]
            beyond[lo:hi] = beyond[up] | (here >= 128)
            if lo > bounds[1]:
                first[lo:hi] = first[up]
        kind = np.where(beyond, UTF8, ASCII).astype(np.uint8)
        kind[state == _DEAD] = BROKEN
        kind[[0, nodes]] = BROKEN  # no bytes (the root), or no node
        return Spelt(low[node_of], high[node_of], kind[node_of], first[node_of])


def _utf8_table() -> np.ndarray:
    """UTF-8's byte automaton: state 0 between characters, 1-3 the continuation bytes
    left (any of 80-bf), 4-7 after e0, ed, f0, f4 (whose next byte is narrower: no
    overlong form, surrogate or code point past U+10FFFF), ``_DEAD`` after a byte that
    begins nothing there."""
    table = np.full((_DEAD + 1, 256), _DEAD, dtype=np.uint8)
    table[0, :0x80] = 0
    table[0, 0xC2:0xE0] = 1
    table[0, 0xE1:0xF0] = 2
    table[0, 0xF1:0xF4] = 3
    table[0, [0xE0, 0xED, 0xF0, 0xF4]] = [4, 5, 6, 7]
    for state, (first, last, then) in enumerate(
        [(0x80, 0xBF, 0), (0x80, 0xBF, 1), (0x80, 0xBF, 2), (0xA0, 0xBF, 1),
         (0x80, 0x9F, 1), (0x90, 0xBF, 2), (0x80, 0x8F, 2)], start=1):  # fmt: skip
        table[state, first : last + 1] = then
    return table


_DEAD = 8
_UTF8 = _utf8_table()


def loop_tokens(
    trie: VocabTrie, ascii_bits: int, beyond: bool, head: tuple[int, bool] | None = None
) -> np.ndarray:
    """The token ids (sorted, int32) walkable from ``B*``'s start, where ``B`` holds the
    ASCII characters of ``ascii_bits`` (bit ``c`` for ``c``) and, where ``beyond``, every
    character past ASCII, else none: those spelt with ``B``'s ASCII bytes, and valid
    UTF-8 (a last character cut short too: ``B`` holds each of its endings) where
    ``beyond``. ``[a-z]*`` answers the ASCII tokens of lowercase letters, ``[^\\n]*``
    every token spelling characters and no newline. With ``head``, ``(bits, beyond)``
    of a set ``S`` inside ``B`` (alike: all characters past ASCII or none), from
    ``SB*``'s start: those whose first character is in ``S`` too (an identifier's
    ``[A-Za-z_][A-Za-z0-9_]*``).

    Its twin for the bitmask, ``closedsets.looped_words``, packs the same tokens (as
    ``beyond``, no ``head``) from ``PackedVocab``'s words per byte set, ~25 times as
    fast as these ids packed; here, ids for the first allowed set, the words unpacked
    were not faster overall (see there). Held equal by ``test_looped_words_are_loop_tokens``.

    >>> from fsmviz import Vocabulary
    >>> from fsmviz.tokens.trie import trie_of
    >>> vocab = Vocabulary.from_strings(["ab", "a\\n", "é", "b"], eos_token="</s>")
    >>> lower = sum(1 << c for c in range(ord("a"), ord("z") + 1))
    >>> [vocab.token_text(int(t)) for t in loop_tokens(trie_of(vocab), lower, True)]
    ['ab', 'é', 'b']
    """
    spelt = levels_of(trie).spelt
    outside = spelt.low & np.uint64(~ascii_bits & _WORD)
    outside |= spelt.high & np.uint64(~ascii_bits >> 64 & _WORD)
    allowed = outside == 0
    allowed &= spelt.kind <= (UTF8 if beyond else ASCII)
    if head is not None:
        bits, wide = head
        firsts = np.array([bits >> b & 1 for b in range(128)] + [wide] * 128, dtype=bool)
        allowed &= firsts.take(spelt.first)
    return np.flatnonzero(allowed).astype(np.int32)


_WORD = (1 << 64) - 1


_LEVELS: OwnedCache[TrieLevels] = OwnedCache(maxsize=4)


def levels_of(trie: VocabTrie) -> TrieLevels:
    """``TrieLevels.of(trie)``, kept for the last few tries (``OwnedCache``: an ``id``
    reused by another trie is noticed)."""
    return _LEVELS.get_or_build(trie, "levels", lambda: TrieLevels.of(trie))


_LEARNT: OwnedCache[tuple[np.ndarray, ...]] = OwnedCache(maxsize=4)
"""Per trie: the classes ``learn`` was given, whose class tries ``walk_root`` walks."""

LEARNT_FIRST = r"[^\n]"
"""The pattern whose classes every trie starts with as learnt (``warm`` builds their class
trie ahead). Learnt again when a trie's entry was dropped: a process that met more
tries than ``_LEARNT`` keeps (seven tokenizers, one after the other) ran the first one's
``[^\\n]{1,20}`` in 2.7 ms, not 0.95, from then on, its first class learnt no more."""


def learnt(trie: VocabTrie) -> tuple[np.ndarray, ...]:
    """The classes learnt for ``trie``: ``LEARNT_FIRST``'s and those ``learn`` added."""

    def first() -> tuple[np.ndarray, ...]:
        return (byte_partition(to_bytes(compile_regex(LEARNT_FIRST)).table),)

    return _LEARNT.get_or_build(trie, "learnt", first)


def learn(trie: VocabTrie, byte_class: np.ndarray) -> None:
    """Take ``byte_class`` (``byte_partition``'s) as learnt: a start row alike on each of
    its classes walks their class trie from the root (``walk_root``). Safe whatever the
    guess: a class walk still checks every row it meets, else the bytes are walked."""
    known = learnt(trie)
    if int(byte_class.max()) < MERGED_CLASSES and not any(
        np.array_equal(byte_class, classes) for classes in known
    ):
        _LEARNT.put(trie, "learnt", (*known, byte_class))


def walk_bytes(
    trie: VocabTrie,
    table: Callable[[np.ndarray], np.ndarray],
    longer: int | None = None,
    ahead: Callable[[], np.ndarray | None] | None = None,
) -> np.ndarray:
    """The token ids (sorted, int32) walkable from the root in state 0: those whose bytes
    lead from state to state and never to none; with ``longer``, those too of more bytes
    than that which the walk in Python meets, unwalked (``_Walk.tail``); ``ahead()``, if
    given, the states whose rows were made beside those asked for, read with them
    (``_Rows.read_rows``; None: none since last asked). ``table(states)``
    makes the rows of ``states`` (distinct ids, >= 0) where not made yet and returns the
    whole transition table: ``table[s, b]`` the state after byte ``b`` from ``s``, -1 for none.

    Every node's state is kept (``reached``, -1: dead) and a level is computed from the
    one above in one of two ways: *whole* (``_Walk.whole``), every node from its parent,
    while many of the level above live; *sparse* (``_Walk.sparse``), only the live nodes'
    children. A node whose parent's row was not read yet reads ``UNREAD_ROW``; those rows
    are then read and the nodes computed again (``_Walk.again``), so a level counts its
    distinct states only where the rows read last lead to states not read
    (``_Walk.read_ahead``). A live node whose subtree's bytes its state reads back into
    itself is taken whole, its tokens with it, and walked no further (``_Loops``). From
    ``TrieLevels.deep`` down, or where the live nodes hold few tokens, the tokens left
    are walked in Python (``walk_tokens``)."""
    walk = _Walk(trie, levels_of(trie), _Rows(table, ahead), longer)
    return walk.tokens(walk.walk())


class _Rows:
    """The rows of ``table`` a byte walk has read, flat: ``flat[(s << 8) + b]`` is the
    state after byte ``b`` from ``s`` (-1: none), ``UNREAD_ROW`` where ``s``'s row was not
    read yet; the last row is the dead state's (-1: a dead node's children stay dead, as
    ``(-1 << 8) + b`` reads it). ``lists`` holds rows as lists for the walk in Python."""

    def __init__(
        self,
        table: Callable[[np.ndarray], np.ndarray],
        ahead: Callable[[], np.ndarray | None] | None = None,
    ):
        self.table, self.made_ahead = table, ahead
        self.flat = np.full(256, -1, dtype=np.intp)
        self.read = np.ones(1, dtype=bool)  # per state, and True last: the dead state's
        self.lists: dict[int, list[int]] = {}
        self.ahead = False  # the rows read last lead to states whose rows are not read

    def read_rows(self, states: np.ndarray) -> None:
        """Make and read the rows of ``states`` (distinct, not read yet), and those made
        with them (``made_ahead``: a counted repeat's next copies, which the next levels
        then find read, not counting their states to find them unread); the flat table
        grows to hold their targets (a row's targets may be new states), twice its rows
        at least (the table's own rows are far more: 1,024 for 200 states)."""
        table = self.table(states)
        made = None if self.made_ahead is None else self.made_ahead()
        if made is not None:  # rows made ahead (a counted repeat's copies): read them too
            if int(made.max()) + 1 >= len(self.read):
                self._grow(max(int(made.max()) + 1, 2 * len(self.read)))
            states = np.union1d(states, made[~self.read[made]])
        rows = table[states]
        need = int(rows.max()) + 1
        if need >= len(self.read):
            self._grow(max(need, 2 * len(self.read), 32))
        self.flat.reshape(-1, 256)[states] = rows
        self.read[states] = True
        self.ahead = not self.read.take(rows).all()  # -1 (none) reads the last: True

    def _grow(self, size: int) -> None:
        """Room for ``size`` states' rows in ``flat`` and flags in ``read`` (and the dead
        state's last)."""
        known = len(self.read) - 1
        grown = np.full((size + 1) * 256, UNREAD_ROW, dtype=np.intp)
        grown[: known * 256] = self.flat[: known * 256]
        grown[-256:] = -1
        read = np.zeros(size + 1, dtype=bool)
        read[:known] = self.read[:known]
        read[-1] = True
        self.flat, self.read = grown, read

    def step(self, data: bytes, state: int) -> int:
        """The state after ``data`` from ``state``, or -1 (``walk_tokens``' walk)."""
        lists = self.lists
        for byte in data:
            row = lists.get(state)
            if row is None:  # from the table: no level is computed after the tail
                row = lists[state] = self.table(np.array([state]))[state].tolist()
            state = row[byte]
            if state < 0:
                break
        return state


class _Walk:
    """One ``walk_bytes``: ``reached`` holds every node's state (-1 dead, and one entry
    past the last node, for the tokens in none) from the first whole level on (None
    before: a pattern whose tokens die in a few bytes pays nothing per trie node, 600k
    on Gemma's 262k tokens) and ``alive`` whether it is >= 0 (flagged as each whole level
    counts its live nodes, so that ``tokens`` does not compare every node again); ``hits``
    the live nodes of the sparse levels; ``longer`` (or None) the length past which
    ``tail`` takes tokens unwalked."""

    def __init__(self, trie: VocabTrie, levels: TrieLevels, rows: _Rows, longer: int | None):
        self.trie, self.levels, self.rows, self.longer = trie, levels, rows, longer
        self.reached: np.ndarray | None = None
        self.alive = np.zeros(0, dtype=bool)
        self.hits: list[np.ndarray] = []
        self.loops = _Loops(trie, rows)
        rows.read_rows(np.zeros(1, dtype=np.intp))

    def walk(self) -> list[int]:
        """Walk the levels (see ``walk_bytes``); returns the tokens walked in Python, as
        positions in ``trie.sorted_ids``."""
        trie, levels = self.trie, self.levels
        bounds = levels.bounds.tolist()
        nodes = states = np.zeros(1, dtype=np.intp)  # the live nodes of a sparse level
        whole = False
        for depth in range(1, len(bounds) - 1):
            lo, hi = bounds[depth], bounds[depth + 1]
            if depth > levels.deep:
                break
            if whole:
                if self.rows.ahead:
                    self.read_ahead(bounds[depth - 1], lo)
                live = self.whole(lo, hi)
                if not live:
                    return []
                if live * SPARSE_LEVEL < hi - lo:
                    whole, nodes = False, np.flatnonzero(self.alive[lo:hi]) + lo
                    states = self.reached[nodes]
            elif int(trie.span_size[nodes].sum()) <= TAIL_TOKENS:
                break
            else:
                nodes, states = self.sparse(nodes, states)
                taken = self.loops.taken(nodes, states, hi - lo)
                if taken is not None:
                    nodes, states = nodes[~taken], states[~taken]
                if not nodes.size:
                    return []
                self.hits.append(nodes)
                whole = len(nodes) * SPARSE_LEVEL >= hi - lo
                if whole and self.reached is None:
                    self.reached = np.full(len(levels.parent) + 1, -1, dtype=np.intp)
                    self.alive = np.zeros(len(levels.parent) + 1, dtype=bool)
                if whole:
                    self.reached[nodes] = states
                    self.alive[nodes] = True
        else:
            return []
        if whole:  # the live nodes of the last level walked
            nodes = np.flatnonzero(self.alive[bounds[depth - 1] : lo]) + bounds[depth - 1]
            states = self.reached[nodes]
        return self.tail(nodes, states)

    def tail(self, nodes: np.ndarray, states: np.ndarray) -> list[int]:
        """The tokens at and below the live ``nodes`` (in ``states``) walked in Python
        (``walk_tokens``), as positions in ``trie.sorted_ids``; those of more than
        ``longer`` bytes taken unwalked. ``derivatives`` asks so of a pattern whose long
        counts it let go: those tokens are walked again with the pattern as written
        (``walk_long``), which needs only a superset of them (csv_row's tail: 44 of
        its 54 tokens, ~1,400 bytes not walked twice)."""
        trie = self.trie
        if self.longer is None:
            return walk_tokens(trie, self.rows.step, nodes, states)[0]
        sizes = trie.span_size[nodes]
        entries = runs(trie.span_start[nodes], sizes)
        depths, above = np.repeat(trie.depth[nodes], sizes), np.repeat(states, sizes)
        long = trie.sorted_lengths[entries] > self.longer
        found = entries[long].tolist()
        step, spelt = self.rows.step, trie.sorted_bytes
        for entry, depth, state in zip(
            entries[~long].tolist(), depths[~long].tolist(), above[~long].tolist(), strict=True
        ):
            if step(spelt[entry][depth:], state) >= 0:
                found.append(entry)
        return found

    def read_ahead(self, lo: int, hi: int) -> None:
        """Read the rows not read yet of the states of the nodes ``lo .. hi - 1``, the
        parents of a whole level about to be computed, where the rows read last lead to
        states not read (``_Rows.ahead``): one count of the level's states, where ``again``
        would compute most of the next level twice (each count of ``[^,\\n]{1,20}`` is a
        new state, and most nodes of a level are in the newest: csv_row's first set in
        0.70 of the time)."""
        met = np.flatnonzero(np.bincount(self.reached[lo:hi] + 1)[1:])
        unread = met[~self.rows.read[met]]
        if unread.size:
            self.rows.read_rows(unread)
        else:  # the states ahead are met deeper, if at all: ``again`` reads them there
            self.rows.ahead = False

    def whole(self, lo: int, hi: int) -> int:
        """Compute the level ``lo .. hi - 1`` from its parents'; how many nodes live."""
        levels, reached = self.levels, self.reached
        found = reached[levels.parent[lo:hi]]
        found <<= 8
        found += levels.byte[lo:hi]
        level = reached[lo:hi]
        np.take(self.rows.flat, found, out=level, mode="wrap")  # "wrap": unbuffered
        if level.min() == UNREAD_ROW:
            at = np.flatnonzero(level == UNREAD_ROW) + lo
            level[at - lo] = self.again(reached[levels.parent[at]], levels.byte[at])
        return int(np.count_nonzero(np.greater_equal(level, 0, out=self.alive[lo:hi])))

    def sparse(self, nodes: np.ndarray, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The children of the live ``nodes`` (in ``states``) that live, and their states."""
        levels = self.levels
        counts = levels.num_children[nodes]
        children = runs(levels.first_child[nodes], counts)
        above = np.repeat(states, counts)
        found = above << 8
        found += levels.byte[children]
        found = self.rows.flat[found]
        unread = found == UNREAD_ROW
        if unread.any():
            found[unread] = self.again(above[unread], levels.byte[children[unread]])
        live = found >= 0
        return children[live], found[live]

    def again(self, above: np.ndarray, data: np.ndarray) -> np.ndarray:
        """The states after the bytes ``data`` from the states ``above``, some of whose
        rows were not read (the nodes read ``UNREAD_ROW``), once they are read."""
        self.rows.read_rows(np.flatnonzero(np.bincount(above)))
        found = above << 8
        found += data
        return self.rows.flat[found]

    def tokens(self, walked: list[int]) -> np.ndarray:
        """The token ids (sorted, int32) at live nodes, and those ``walked`` in Python:
        where a level was whole, every node's flag read by id (the nodes flagged first,
        in order: half the time of reading the states by id); else the tokens of the
        live nodes, sorted where few, else flagged by id."""
        trie = self.trie
        hit = np.concatenate([np.zeros(0, dtype=np.intp), *self.hits])
        starts = trie.token_start[hit]
        found = trie.token_ids[runs(starts, trie.token_start[hit + 1] - starts)]
        taken = np.concatenate([np.zeros(0, dtype=np.intp), *self.loops.nodes])
        spans = runs(trie.span_start[taken], trie.span_size[taken])
        found = np.concatenate([found, trie.sorted_ids[spans], trie.sorted_ids[walked]])
        if self.reached is None and found.size * 16 < self.levels.num_ids:
            return distinct(found.astype(np.int32))  # the tail re-walks its nodes' own
        if self.reached is None:
            allowed = np.zeros(self.levels.num_ids, dtype=bool)
        else:
            allowed = self.alive.take(self.levels.node_of)
        allowed[found] = True
        return np.flatnonzero(allowed).astype(np.int32)


MAX_MET = 32
"""States a sparse level's nodes are tested in at most (``_Loops.taken``)."""
LOOP_TOKENS = 64
"""A state's loop is looked for (a row made, ~20 µs) only where its nodes of a level hold
this many tokens at and below them (``\\{"name": "[^"]{0,12}"``'s nodes hold a few)."""
_ALL_WORDS = np.full(4, (1 << 64) - 1, dtype=np.uint64)
_ASCII_WORDS = np.array([(1 << 64) - 1, (1 << 64) - 1, 0, 0], dtype=np.uint64)


class _Loops:
    """Whole subtrees taken at once: a node in state ``s`` whose subtree's bytes
    (``VocabTrie.subtree_bytes``) all lie in the *loop* of ``s``, the ASCII bytes ``s``
    reads back into itself, has every token at and below it allowed (each byte below
    leads ``s`` to ``s``), and nothing below it is walked: under ``[a-z0-9._%+-]+`` after
    a character, any node whose tokens below are letters, digits and ``._%+-``. ``nodes``
    holds the nodes taken.

    Sparse levels only, and a state's own loop only: a set of states closed under some
    bytes (``.*a``'s two) took ~0.1 ms a state to find, and a whole level of ``.*a``
    keeps most nodes alive whatever it takes (the tokens below them are not all ASCII),
    so the walk stays whole and the finding and testing cost more than they spared
    (SmolLM2 ``.*a`` 1.3 -> 2.0 ms; testing whole levels for own loops: ``.*a`` +0.2)."""

    def __init__(self, trie: VocabTrie, rows: _Rows):
        self.trie, self.rows = trie, rows
        self.nodes: list[np.ndarray] = []
        self.loops: dict[int, np.ndarray | None] = {}

    def taken(self, nodes: np.ndarray, states: np.ndarray, level: int) -> np.ndarray | None:
        """Which of the live ``nodes`` (in ``states``, of a level of ``level`` nodes) are
        taken whole (noted in ``nodes``); None where none is, or where the nodes left
        would still be walked whole (``SPARSE_LEVEL``): a whole level computes every
        node from its parent, so taking there spares no walking and costs a gather of
        the taken tokens (csv_row's level 1: 53 of 169 nodes, 116 left of 235). A node
        whose tokens are a byte below it at most is not tested: walking its children
        costs no more."""
        tall = np.flatnonzero(self.trie.height[nodes] >= 2)
        if (len(nodes) - len(tall)) * SPARSE_LEVEL >= level:
            return None
        held = np.bincount(states, weights=self.trie.span_size[nodes])  # tokens a state
        met = np.flatnonzero(held >= LOOP_TOKENS).tolist()
        if not met or len(met) > MAX_MET:
            return None
        loops = [(state, self.loop(state)) for state in met]
        loops = [(state, loop) for state, loop in loops if loop is not None]
        if not loops:
            return None
        outside = np.tile(_ALL_WORDS, (len(held), 1))  # per state: the bytes that leave
        for state, loop in loops:
            outside[state] = ~loop
        below = self.trie.subtree_bytes.take(nodes[tall], axis=0)  # take: 3x a [] here
        below &= outside.take(states[tall], axis=0)
        taken = np.zeros(len(nodes), dtype=bool)
        taken[tall] = _empty_rows(below)  # no byte below leaves: as ``dawg``'s walk tests
        left = len(nodes) - np.count_nonzero(taken)
        if left == len(nodes) or left * SPARSE_LEVEL >= level:
            return None
        self.nodes.append(nodes[taken])
        return taken

    def loop(self, state: int) -> np.ndarray | None:
        """The ASCII bytes ``state`` reads back into itself (4 little-endian words), or
        None where none."""
        if state not in self.loops:
            row = self.rows.table(np.array([state], dtype=np.intp))[state]
            own = np.packbits(row == state, bitorder="little").view("<u8") & _ASCII_WORDS
            self.loops[state] = own if own.any() else None
        return self.loops[state]


UTF8_CUTS = (0x80, 0x90, 0xA0, 0xC0, 0xC2, 0xE0, 0xE1, 0xED, 0xEE, 0xF0, 0xF1, 0xF4, 0xF5)
"""Where UTF-8 tells bytes apart whatever the pattern (continuations 80-8F, 90-9F, A0-BF
follow E0, ED, F0, F4 differently; C0, C1 and F5-FF begin nothing): split there from the
start, the rows of partial characters met later do not split a class (``walk_classes``)."""
_UTF8_PARTS = np.searchsorted(np.array(UTF8_CUTS), np.arange(256), side="right")


def byte_partition(table: np.ndarray) -> np.ndarray:
    """The bytes' classes (int16 [256], numbered in order of their smallest byte): bytes
    alike in every row of ``table`` (rows not made are all -1: alike) and on one side of
    every ``UTF8_CUTS``. Columns are told apart by a hash (two random weightings of their
    entries: ``np.unique`` of 256 whole columns took 9 ms); two columns that differ but
    hash alike would make one class, which ``walk_classes`` finds (``_alike``).

    >>> table = np.full((2, 256), -1); table[0, ord("a") : ord("z") + 1] = 1
    >>> classes = byte_partition(table)
    >>> int(classes.max()) + 1  # a-z, the rest of ASCII, and 13 kinds beyond ASCII
    15
    >>> bool(classes[ord("a")] == classes[ord("q")] != classes[ord("A")])
    True
    """
    weights = _WEIGHTS[: len(table)]
    if len(weights) < len(table):
        weights = np.resize(_WEIGHTS, (len(table), 2))
    hashed = table.T.astype(np.int64) @ weights  # int64 arithmetic wraps: a hash
    hashed[:, 0] ^= _UTF8_PARTS
    _, first, inverse = np.unique(
        hashed[:, 0] * 1_000_003 + hashed[:, 1], return_index=True, return_inverse=True
    )
    rank = np.empty(len(first), dtype=np.int16)
    rank[np.argsort(first)] = np.arange(len(first), dtype=np.int16)
    return rank[inverse.reshape(-1)]


_WEIGHTS = np.random.default_rng(43).integers(1, 1 << 62, size=(1_024, 2), dtype=np.int64)


def walk_classes(
    trie: VocabTrie,
    nodes: np.ndarray,
    states: np.ndarray,
    table: Callable[[np.ndarray], np.ndarray],
    byte_class: np.ndarray,
) -> np.ndarray | None:
    """``walk_bytes``' answer over the *class trie* (``classwalk``) of ``byte_class``, or
    None where a row met tells two bytes of a class apart (the classes were a guess) or
    the class trie is not ``SMALLER`` than the byte trie.

    Worked example: under ``[^\\n]{1,20}`` Gemma's 262k tokens spell, in the 15 classes
    of its rows (the newline, the other ASCII bytes, continuations by range, lead bytes
    by length), 22k class nodes where the byte trie has 600k: " hello" and " world" are
    one path. The class trie is built once per classes (``class_trie``), and every
    pattern that tells the same bytes apart walks 22k nodes, not 600k.

    Every row the class walk reads is checked alike on each class as it is first read.
    From below the root, the rows of the levels above must hold too (two byte nodes of
    one class node, one alive and one dead, would otherwise share its tokens): every row
    made is checked at the end."""
    if int(byte_class.max()) >= MERGED_CLASSES:
        return None
    classes, node_class = class_trie(trie, byte_class, levels_of(trie).num_ids)
    if classes.size * SMALLER > len(trie.byte):
        return None
    top = node_class[nodes]
    found = _walk_class_levels(classes, top, states, table, byte_class)
    if found is None or not top[0] or _alike(table(np.zeros(0, dtype=np.int32)), byte_class):
        return found  # from the root, or every row made is alike on each class
    return None


SMALLER = 4
"""A class trie is walked only when it has fewer than one node in this many of the byte
trie's (``[^\\n]`` at 262k tokens: 1 in 27)."""


def walk_root(trie: VocabTrie, table: Callable[[np.ndarray], np.ndarray]) -> np.ndarray | None:
    """The tokens walkable from the root and state 0 by ``walk_classes``, where the start
    row reads ``ROOT_WIDE`` bytes or more and leads each learnt class's bytes alike
    (``learn``: ``warm``'s ``[^\\n]``); else None, and the caller walks
    the bytes (``walk_bytes``). A first allowed set of ``[^\\n]{1,20}`` on Gemma's 262k
    tokens walks the 22k class nodes, not its 600k byte nodes.

    A class walk that does not hold (the start row's classes learnt, deeper rows that
    tell more bytes apart: ``.{0,5}[0-9]``) answers None and marks nothing, so a later
    ``[^\\n]`` pattern still walks the class trie."""
    root = np.zeros(1, dtype=np.int32)
    start = table(root)[:1]
    if np.count_nonzero(start >= 0) < ROOT_WIDE:
        return None
    for classes in learnt(trie):
        if _alike(start, classes):  # one compare (~5 us): the start row's classes were ~80
            return walk_classes(trie, root, root, table, classes)
    return None


ROOT_WIDE = 64
"""``walk_root`` guesses classes only for a start row reading this many bytes or more (a
pattern that begins with ``{`` does not pay the guess)."""


def _alike(rows: np.ndarray, byte_class: np.ndarray) -> bool:
    """Every row leads each byte where the first byte of its class leads."""
    return bool((rows == np.take(rows, _representatives(byte_class)[1], axis=1)).all())


def _representatives(byte_class: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first byte of each class, and for each byte the first of its class (kept per
    classes: ``np.unique`` costs ~20 µs, once a level)."""
    key = byte_class.tobytes()
    found = _REPRESENTATIVES.get(key)
    if found is None:
        reps = np.unique(byte_class, return_index=True)[1]
        found = _REPRESENTATIVES[key] = (reps, reps[byte_class])
        if len(_REPRESENTATIVES) > 64:
            del _REPRESENTATIVES[next(iter(_REPRESENTATIVES))]
    return found


_REPRESENTATIVES: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}


def _walk_class_levels(
    classes: ClassTrie,
    top: np.ndarray,
    states: np.ndarray,
    table: Callable[[np.ndarray], np.ndarray],
    byte_class: np.ndarray,
) -> np.ndarray | None:
    """The token ids at and below the class nodes ``top`` (one level; in ``states``);
    None where two nodes of ``top`` disagree or a row read tells two bytes of a class
    apart (classes that do not hold).

    Each level is one gather from the level above through ``_Cut``, the table cut to one
    column a class, as offsets. Before it, the distinct states of the level above (its
    offsets are flagged in ``_Cut.seen``, read off and unflagged: a level is a few states,
    and a bincount of ~1,000 offsets below ~2,400 cost 3x as much) are looked up in
    ``_Cut.known``; the rows of those not read yet are made (as ``walk_bytes`` makes
    them, level by level) and cut together (``_Cut.read``). So a level costs six small
    numpy calls whether its rows are read or not (Gemma's ``[^\n]{1,20}`` reads its 80
    rows at 31 of its 48 levels), and the walk ends at a level of dead nodes. Every level is
    walked so, the deepest too, where they were a Python tail of list lookups
    (``ClassTrie.deep``, which ``classwalk.class_states`` still uses): a level of numpy
    cost less than a few dozen lookups once the distinct states were flagged, and a tail
    walked to its end where the counted patterns' deepest nodes die (SmolLM2's 495 class
    nodes: 81 levels, all dead past level 24 under ``[^\n]{1,20}``). Every row read is checked
    alike on each class once, at the end (``_Cut.holds``): a check a read cost ~5 µs,
    ~30 reads a walk."""
    starts = classes.level_starts
    depth = int(np.searchsorted(starts, top[0], side="right")) - 1
    cut = _Cut(table, byte_class)
    width = cut.width
    current = np.full(int(starts[depth + 1] - starts[depth]), width, dtype=np.intp)
    current[top - starts[depth]] = (states + 2) * width
    if len(top) > 1 and not np.array_equal(current[top - starts[depth]], (states + 2) * width):
        return None
    found = [current]
    for parents, kinds, _ in classes.levels[depth:]:
        seen = cut.seen
        seen[current] = True
        flagged = seen.nonzero()[0]
        seen[flagged] = False
        met = flagged.tolist()  # offsets: a few states
        if met[0] == width and len(met) == 1:  # every node dead
            break
        unread = [offset // width - 2 for offset in met if offset not in cut.known]
        if unread:
            cut.read(np.array(unread, dtype=np.intp))
        above = current[parents]
        above += kinds
        current = cut.flat[above]
        found.append(current)
    if not cut.holds():
        return None
    alive = np.zeros(classes.size + 1, dtype=bool)
    offsets = np.concatenate(found)
    np.greater(offsets, width, out=alive[starts[depth] : starts[depth] + len(offsets)])
    return _class_tokens(classes, alive)


UNREAD = 0
"""The entries of a row in ``_Cut`` not read yet (row 0's, and those of states whose rows
were not read)."""
_NONE = np.zeros(0, dtype=np.int32)


class _Cut:
    """The rows of ``table`` a class walk has read, one column a class (the first byte of
    each), as *offsets*: state ``s`` is ``(s + 2) * width``, so that a level is one
    gather, ``flat[offsets of the parents + classes]``. Row 0 is all ``UNREAD``, row 1 the
    dead state's (all ``width``: dead stays dead). ``known`` holds the offsets of the rows
    read (and the dead state's), ``seen`` a flag an offset (a level's distinct states: all
    False between levels), ``offset_of`` each state's offset (its last entry, read for
    -1, the dead state's), ``full`` the table as last made."""

    def __init__(self, table: Callable[[np.ndarray], np.ndarray], byte_class: np.ndarray):
        self.table = table
        self.reps, self.spread = _representatives(byte_class)
        self.width = len(self.reps)
        self.byte_class = byte_class
        self.known = {self.width}
        self.done: list[np.ndarray] = []  # the states whose rows were read
        self.full = table(_NONE)
        self.flat = np.zeros(0, dtype=np.intp)
        self._grow()

    def _grow(self) -> None:
        """Size ``flat``, ``seen`` and ``offset_of`` to ``full``'s rows (the table grows
        when full: 64 rows, then 256), keeping the rows cut so far."""
        width, rows = self.width, len(self.full)
        grown = np.full((rows + 1) * width, UNREAD, dtype=np.intp)
        grown[: len(self.flat)] = self.flat
        grown[width : 2 * width] = width
        self.flat, self.seen = grown, np.zeros(len(grown), dtype=bool)
        self.offset_of = np.arange(2, rows + 3, dtype=np.intp) * width
        self.offset_of[-1] = width

    def read(self, todo: np.ndarray) -> None:
        """Make the rows of the states ``todo`` (distinct, not read yet) and cut them
        (``holds`` checks them, once for the whole walk): three takes (~half a 2-D gather
        and its arithmetic)."""
        self.full = self.table(todo)
        if len(self.full) + 1 > len(self.offset_of):
            self._grow()
        cut = self.offset_of.take(self.full.take(todo, 0).take(self.reps, 1))
        self.flat.reshape(-1, self.width)[todo + 2] = cut
        self.known.update(self.offset_of.take(todo).tolist())
        self.done.append(todo)

    def holds(self) -> bool:
        """Whether every row read leads each byte of a class where the class's first
        byte leads (else the walk read wrong columns: the classes were a guess)."""
        if not self.done:
            return True
        return _alike(self.full[np.concatenate(self.done)], self.byte_class)


def _class_tokens(classes: ClassTrie, alive: np.ndarray) -> np.ndarray:
    """The token ids (sorted, int32) that end at class nodes flagged in ``alive`` (its
    last entry, the tokens in no node, False): where few tokens end at dead nodes (most
    of a wide pattern's: Gemma's ``[^\\n]{1,20}``, 155 of 262k), the runs of ids between
    theirs copied (``FEW_DEAD``); where more, every id but theirs; else each id's node
    read. An array of every id is kept (``_ids``): a mask of 262k ids made into ids and
    then int32 cost twice the copy."""
    dead = np.flatnonzero(~alive)
    bounds = classes.node_start
    sizes = bounds[dead + 1] - bounds[dead]
    ids = _ids(len(classes.token_node))
    count = int(sizes.sum())
    if count * FEW_DEAD <= len(ids):
        cuts = np.sort(classes.node_tokens[runs(bounds[dead], sizes)])
        lows, highs = np.zeros(len(cuts) + 1, np.intp), np.full(len(cuts) + 1, len(ids))
        lows[1:], highs[:-1] = cuts + 1, cuts  # the runs between the dead ids
        pairs = zip(lows.tolist(), highs.tolist(), strict=True)
        return np.concatenate([ids[lo:hi] for lo, hi in pairs])
    if count * 4 < len(ids):
        allowed = np.ones(len(ids), dtype=bool)
        allowed[classes.node_tokens[runs(bounds[dead], sizes)]] = False
    else:
        allowed = alive[classes.token_node]
    return ids[allowed]


FEW_DEAD = 1_024
"""``_class_tokens`` copies the runs of ids between the dead tokens where at most one id
in this many is dead (a run costs ~0.3 µs of Python, a mask ~1 ns an id)."""


@bounded(maxsize=4)
def _ids(size: int) -> np.ndarray:
    """``0 .. size - 1`` as int32, read-only (``_class_tokens`` copies from it)."""
    ids = np.arange(size, dtype=np.int32)
    ids.flags.writeable = False
    return ids
