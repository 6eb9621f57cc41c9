"""A wide state's packed mask from packed words made once per vocabulary.

``TokenIndex.bitmask(state)`` wants the allowed tokens as int32 words, one bit a token
(the peers' layout), and nothing else: not where each token leads. A wide state, a
string's loop, allows nearly every token, and walking them (even over the class trie,
``classwalk``) costs ~0.5-1 ms. Most of those tokens need no walk at all.

Follow a state's *chain* (``rowwalk.Chains``: the bytes leading where most bytes lead,
state after state) and let ``M`` be the bytes every step of it reads onwards. A token
whose bytes all lie in ``M`` is allowed: it walks along the chain and never falls off
(when the chain ends rather than loops, only if it is no longer than the chain, and the
chain's last state reads no byte of ``M``). So those tokens are, as packed words, the
tokens of the trie less every token holding a byte outside ``M`` (``PackedVocab``:
each byte's tokens packed, made once per vocabulary), at most ``h`` bytes long where
the chain ends after ``h``: a few ORs over 1,536 words.

Every other token leaves ``M`` at some byte. Where it does is a trie node whose path
above lies in ``M`` and whose own byte does not: the chain's *frontier*, a few hundred
nodes for a string's loop (its ``"``, ``\\`` and the first bytes of non-ASCII
characters). The state there is known from the chain (the state ``depth - 1`` steps
along it); those nodes whose byte the state reads are walked on in plain Python, their
few subtrees (``rowwalk.small_row``'s walk). Worked example, ``"[^"]*"`` in the string's
loop state ``s``: ``M`` is the ASCII bytes but ``"``; the token ``lovelace`` is in
``M``, taken by the words; ``",`` leaves at its first byte, the frontier node ``"``
(depth 1, from ``s``): its state reads ``"`` and the walk goes on to ``,``, which the
state after the closing quote does not read: only ``"`` itself is added.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from fsmviz.arrays import distinct, runs
from fsmviz.automaton.dfa import set_bits
from fsmviz.cache import OwnedCache, bounded
from fsmviz.tokens.trie import VocabTrie

__all__ = [
    "PackedVocab",
    "chain_of",
    "chain_words",
    "ascii_closed_words",
    "closed_words",
    "entered_closed_words",
    "few_first_words",
    "looped_words",
    "packed_vocab",
    "search_words",
    "utf8_loop",
]

MIN_BYTES = 16
"""A chain reading fewer bytes onwards than this takes too few tokens at once to be worth
it (the row walks answer those states)."""
TOKEN_WALK = 1_024
"""Below the frontier the trie is walked pair by pair until at most this many tokens lie
below the pairs, then token by token."""
BELOW = 2_048
"""Pairs (trie node, state) a walk below the frontier may make before it gives up (a space
before a word of either case, below which lie 32,000 tokens and thousands of live pairs:
the row walks, which take their subtrees whole, answer faster)."""
ENTRY_WALK = 8_192
"""Where the pairs below a frontier pass ``BELOW`` with at most this many tokens below them
left, those tokens are walked at once (``walk_entries``) rather than given up."""
CANDIDATES = 12_000
"""Trie nodes of a chain's leaving bytes looked at for its frontier, at most."""
FEW_BELOW = 48
"""A frontier with at most this many tokens below it is walked in plain Python, and the
tokens found are set one by one."""
SHALLOW_PAIRS = 256
SHALLOW = 8
"""``walk_below`` walks the tokens below at least ``SHALLOW_PAIRS`` pairs at once where
they hold at most ``SHALLOW`` tokens a pair: below a search's every ``f`` (645 pairs,
3,076 tokens, ``ANY*(?:f.o)ANY*``), a level of pairs cost ~0.1 ms and thinned them little
(any byte leads on, back into the search's loop at worst)."""
FRONTIER = 4_096
"""Frontier nodes a chain may have (``.*a``'s state 0 meets 4,000 nodes of ``a``, each
walked on: the row walks answer faster there)."""

_ALL = (1 << 256) - 1
_HIGH = ((1 << 128) - 1) << 128  # the bytes 0x80-0xFF
LEAVING_KEPT = 256
"""Frontiers kept per vocabulary (``PackedVocab.leaving``: the same for every state with the
same chain bytes, as the 22 string loops of a 22-field schema)."""


def _utf8_automaton(controls: bool) -> np.ndarray:
    """UTF-8 as a byte automaton: state 0 between characters (ASCII stays there), 1-8 inside
    one (1: one continuation byte left; 2, 4: after E0, ED; 3: two left; 5, 7: after F0,
    F4; 6: three left; 8: after C2 without ``controls``), 9 dead (overlong forms,
    surrogates, a stray continuation byte; without ``controls``, U+0080-U+009F as well, as
    a JSON string's characters leave out the C1 controls)."""
    table = np.full((10, 256), _UTF8_DEAD, dtype=np.int8)
    table[0, :0x80] = 0
    table[0, 0xC2:0xE0], table[0, 0xE0], table[0, 0xED] = 1, 2, 4
    table[0, 0xE1:0xED] = table[0, 0xEE:0xF0] = 3
    table[0, 0xF0], table[0, 0xF1:0xF4], table[0, 0xF4] = 5, 6, 7
    table[1, 0x80:0xC0], table[2, 0xA0:0xC0], table[4, 0x80:0xA0] = 0, 1, 1
    table[3, 0x80:0xC0] = 1
    table[5, 0x90:0xC0] = table[6, 0x80:0xC0] = table[7, 0x80:0x90] = 3
    if not controls:
        table[0, 0xC2], table[8, 0xA0:0xC0] = 8, 0
    return table


_UTF8_DEAD = 9
_UTF8 = (_utf8_automaton(True), _utf8_automaton(False))
"""The kinds of UTF-8 a loop may read (``utf8_loop``, ``Chain.utf8``: 1 + its place here)."""


@dataclass(frozen=True, eq=False)
class PackedVocab:
    """What the packed chain masks read, made once per trie. ``contains[b]``: the tokens
    holding byte ``b``, packed (``index.packed``'s layout, as uint32), then those holding
    a byte of each block of 8, 32 and 128 bytes (``_blocked``); ``shorter[n]``: the trie's
    tokens of at most ``n`` bytes (``shorter[-1]``: all of them). ``frontier`` (``ends[0]``)
    lists the trie's nodes (root left out) by the byte into them, ``frontier[byte_start[b] :
    byte_start[b + 1]]`` those of byte ``b``, with their depth (``ends[1]``), that byte
    (``ends[2]``: the three gathered at once) and the set of bytes on the path above them
    (``above``, 4 uint64 words, excluding the node's own byte; ``above[w]`` the word ``w``
    of every node, so that a run of bytes' nodes reads a slice of each).
    ``present``: the bytes some token holds, as an int of 256 bits."""

    contains: np.ndarray  # [BLOCKED, words]: by byte, then by block (``_blocked``)
    first: np.ndarray  # [BLOCKED, words]: the tokens whose first byte is b, then by block
    tail: np.ndarray  # [BLOCKED, words]: the tokens holding b past their first byte
    second: np.ndarray  # [BLOCKED, words]: the tokens whose second byte is b, by block
    tail2: np.ndarray  # [BLOCKED, words]: the tokens holding b past their second byte
    shorter: np.ndarray
    ends: np.ndarray  # [3, nodes]: each node of ``frontier``, its ``depth`` and ``byte``
    byte_start: list[int]
    places: np.ndarray  # 0, 1, ... len(frontier) - 1: sliced by byte, views
    depth: np.ndarray  # ``ends[1]``
    above: np.ndarray  # [4, nodes]
    lead: np.ndarray  # the first byte of each frontier node's path, and the bytes above
    above_tail: np.ndarray  # it past that first one ([4, nodes]);
    lead2: np.ndarray  # the second byte of its path (-1: one byte deep), and the bytes
    above_tail2: np.ndarray  # above it past the first two ([4, nodes])
    present: int
    # by node, the tokens at and below it:
    span_start: np.ndarray  # sorted_ids[span_start[n] : span_start[n] + span_size[n]]
    span_size: np.ndarray
    sorted_ids: np.ndarray
    depth_of: np.ndarray  # each node's depth
    padded: np.ndarray  # the tokens' bytes in the trie's order, each followed by 256,
    padded_start: np.ndarray  # where each begins there,
    lengths: np.ndarray  # and its length
    utf8_above: np.ndarray  # [kind, frontier node]: the state of the path above in each
    # ``_UTF8`` automaton
    utf8_bad: np.ndarray  # [kind, words]: the tokens each ``_UTF8`` kind refuses, read
    # from between characters (a token cut inside a character is fine), packed
    refused: tuple  # by kind, the same tokens as places in the trie's order (``padded``)
    root_child: np.ndarray  # [256]: the root's child of each byte (-1: none)
    root_span: list[int]  # by byte, how many tokens begin with it
    busy: int  # the bytes more than ``FEW_FIRST`` tokens begin with (256 bits)
    light: tuple  # by byte, not busy: each token beginning with it (id, its other bytes)
    _leaving: dict = field(default_factory=dict, repr=False)  # ``leaving``'s answers, kept

    @property
    def _none(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``leaving``'s answer where no node leaves."""
        empty = self.ends[:, :0]
        return empty[0], empty[1], empty[2]

    def forget(self) -> None:
        """Drop the kept frontiers (``leaving``): what a vocabulary's first pattern of a
        kind of bytes pays (``bench/mask_bench``'s first bitmask measures it so)."""
        self._leaving.clear()

    def inside(self, allowed: int, skip: int = 0) -> np.ndarray:
        """The trie's tokens all of whose bytes past the first ``skip`` (0, 1 or 2; a bool
        reads as 0 or 1) lie in ``allowed`` (256 bits), packed: the tokens less the OR of
        the rows of the bytes outside it, a whole block where it lies outside
        (``_rows_of``)."""
        rows = _rows_of(_ALL & ~allowed, self.present)
        if not rows:
            return self.shorter[-1]
        matrix = (self.contains, self.tail, self.tail2)[skip]
        return self.shorter[-1] & ~np.bitwise_or.reduce(matrix[rows], axis=0)

    def leaving(
        self, allowed: int, through: int, prefix: Prefix | None = None, utf8: int = 0
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The frontier of ``allowed``: the nodes whose byte lies in ``through`` (bytes
        outside ``allowed``) and whose path above lies in ``allowed``; their depths and
        bytes. With a ``prefix`` (``Prefix``): only the nodes below it, their path past it
        in ``allowed``. With ``utf8`` (``Chain.utf8``): only those whose path above ends
        between two characters of that kind of UTF-8. None past ``CANDIDATES`` nodes of
        those bytes (``.*a``'s ``a``: a frontier that large is not worth finding). Kept: it
        depends on the bytes alone, not on the state (read-only arrays)."""
        key = (allowed, through, prefix, utf8)
        if key in self._leaving:
            return self._leaving[key]
        found = self._leaving_of(allowed, through, prefix, utf8)
        if len(self._leaving) >= LEAVING_KEPT:
            self._leaving.clear()
        self._leaving[key] = found
        return found

    def _leaving_of(
        self, allowed: int, through: int, prefix: Prefix | None, utf8: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``leaving``, not kept: the nodes of ``through``'s bytes taken as slices of
        ``places``, one a run of bytes (the lead bytes of UTF-8: one, where a slice a byte
        made ~50), counted before any is made."""
        starts, places = self.byte_start, self.places
        spans = [(starts[lo], starts[hi]) for lo, hi in byte_runs(through)]
        if sum(hi - lo for lo, hi in spans) > CANDIDATES:
            return None
        if len(spans) == 1:
            at = places[spans[0][0] : spans[0][1]]
            read = slice(*spans[0])  # the per-node arrays read as views
        else:
            at = np.concatenate([places[lo:hi] for lo, hi in spans]) if spans else places[:0]
            read = at
        above = self.above
        if prefix is not None:
            at, above = prefix.below(self, at)
            read = at
            if not len(at):  # none below it (a space and a capital, then a space)
                return self._none
        keep = _clear_of(above, read, _ALL & ~allowed)
        if utf8:
            keep &= self.utf8_above[utf8 - 1, read] == 0
        found = self.ends.take(at[keep], axis=1)
        found.flags.writeable = False
        return found[0], found[1], found[2]


@dataclass(frozen=True)
class Prefix:
    """Trie nodes one or two bytes deep, as a chain's words start below them: ``first``
    the set of their first bytes (256 bits); with ``second`` (256 bits, 0: one byte
    deep) the set of their second bytes, below the one first byte ``first`` names. The
    tokens below ``Prefix(1 << 32)``: those beginning with a space; below ``Prefix(1 << 32,
    capitals)``: a space and a capital letter."""

    first: int
    second: int = 0

    @property
    def depth(self) -> int:
        return 2 if self.second else 1

    @property
    def ascii(self) -> bool:
        """Whether every byte of it lies below 0x80 (a path of them ends between two
        characters)."""
        return not (self.first | self.second) & _HIGH

    def words(self, vocab: PackedVocab) -> np.ndarray:
        """The tokens beginning with it, packed."""
        found = _any_of(vocab.first, self.first, vocab.present)
        if not self.second:
            return found
        return found & _any_of(vocab.second, self.second, vocab.present)

    def below(self, vocab: PackedVocab, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Of the frontier nodes ``at``, those deeper than it below it, and the sets of bytes
        on their paths past it (``PackedVocab.above_tail``, ``above_tail2``)."""
        if not self.second:
            keep = _bits(self.first)[vocab.lead[at]] & (vocab.depth[at] >= 2)
            return at[keep], vocab.above_tail
        lead = (self.first & -self.first).bit_length() - 1
        keep = (vocab.lead[at] == lead) & (vocab.depth[at] >= 3)
        at = at[keep]
        return at[_bits(self.second)[vocab.lead2[at]]], vocab.above_tail2


@bounded(maxsize=256)
def _bits(bits: int) -> np.ndarray:
    """A set of bytes (256 bits) as 257 booleans, the last (-1: no byte) False; kept (a
    few sets a pattern: its classes)."""
    found = np.zeros(257, dtype=bool)
    found[:256] = np.unpackbits(
        np.frombuffer(bits.to_bytes(32, "little"), dtype=np.uint8), bitorder="little"
    ).astype(bool)
    found.flags.writeable = False
    return found


def _any_of(rows: np.ndarray, bits: int, present: int) -> np.ndarray:
    """The OR of ``rows[b]`` (a ``_blocked`` matrix) for the bytes ``b`` of ``bits`` (256
    bits), a block at once where ``bits`` holds it (``_rows_of``: ``[a-z]`` as 12 rows,
    where its 26 cost ~160 KB of reads, most of a new index's prefix words)."""
    if bits & (bits - 1) == 0:  # one byte
        return rows[bits.bit_length() - 1]
    return np.bitwise_or.reduce(rows[_rows_of(bits, present)], axis=0)


def _clear_of(above: np.ndarray, read: np.ndarray | slice, out: int) -> np.ndarray:
    """Whether each node ``read`` (places, or a slice of them) has no byte of ``out`` (256
    bits) on its path above (``above``: [4, nodes]): a word at a time, those of ``out``
    that hold a byte (where one pass over [n, 4] words and ``any`` cost ~3 times as much).
    """
    words, clash = above[:, read], None  # a view for a slice, one gather for places
    for word in range(4):
        bits = out >> (64 * word) & _WORD
        if bits:
            part = words[word] & np.uint64(bits)
            clash = part if clash is None else np.bitwise_or(clash, part, out=clash)
    return np.ones(words.shape[1], dtype=bool) if clash is None else clash == 0


_WORD = (1 << 64) - 1


def byte_runs(bits: int) -> list[tuple[int, int]]:
    """The runs of set bits of ``bits`` as ranges ``(lo, hi)``, lowest first: adding a
    run's lowest bit carries through the run and sets the bit past its end.

    >>> byte_runs(0b1110_0110)  # bits 1-2 and 5-7
    [(1, 3), (5, 8)]
    """
    found = []
    while bits:
        low = bits & -bits
        past = bits + low  # the run cleared, the bit above it set
        found.append((low.bit_length() - 1, (past & -past).bit_length() - 1))
        bits &= past
    return found


def packed_vocab(trie: VocabTrie, num_ids: int) -> PackedVocab:
    """The trie's ``PackedVocab`` (~50 ms for 49k tokens, kept: ``index.warm`` makes it)."""
    return _PACKED.get_or_build(trie, num_ids, lambda: _build(trie, num_ids))


_PACKED: OwnedCache[PackedVocab] = OwnedCache(maxsize=2)


BLOCKS = (8, 32, 128)
"""The blocks of bytes whose rows ``PackedVocab.contains`` holds past the bytes' own: a class
like ``[a-z]`` leaves out 230 bytes, ORed as ~15 rows (three of 32, one of 128, a few
bytes) where it took 230 (~0.5 ms CPU for a new index's first letters)."""
BLOCKED = 256 + sum(256 // size for size in BLOCKS)


def _blocked(rows: np.ndarray) -> np.ndarray:
    """``rows`` (one a byte), then the OR of each block of ``BLOCKS`` bytes, in order."""
    blocks = [np.bitwise_or.reduce(rows.reshape(256 // size, size, -1), axis=1) for size in BLOCKS]
    return np.concatenate([rows, *blocks])


def _rows_of(out: int, present: int) -> list[int]:
    """The rows of a ``_blocked`` matrix whose OR is that of the bytes in ``out`` (256
    bits): a block wholly in ``out`` as its one row, the bytes some token holds
    (``present``) one by one where the block of 8 around them is not.

    >>> _rows_of((1 << 256) - (1 << 64) | 1 << 3, (1 << 256) - 1)  # 3; 64-95, 96-127; 128-255
    [3, 290, 291, 297]
    """
    rows = []
    for half in (0, 1):
        if out >> (128 * half) & _ONES[128] == _ONES[128]:
            rows.append(BLOCKED - 2 + half)
            continue
        for big in range(4 * half, 4 * half + 4):
            bits = out >> (32 * big) & _ONES[32]
            if bits == _ONES[32]:
                rows.append(256 + 32 + big)
                continue
            for small in range(4) if bits else ():
                eight = bits >> (8 * small) & 0xFF
                if eight == 0xFF:
                    rows.append(256 + 4 * big + small)
                    continue
                base = 32 * big + 8 * small
                eight &= present >> base
                while eight:
                    low = eight & -eight
                    rows.append(base + low.bit_length() - 1)
                    eight ^= low
    return rows


_ONES = {size: (1 << size) - 1 for size in (32, 128)}


def _packbits(bits: np.ndarray) -> np.ndarray:
    return np.packbits(bits, axis=-1, bitorder="little").view("<u4")


def _paths(trie: VocabTrie) -> tuple[np.ndarray, ...]:
    """By node: the set of bytes on its path above it (4 words), its path's first byte,
    the set of those bytes above it past the first, the state of its path, its own byte
    included, in each ``_UTF8`` automaton, its parent, its path's second byte (-1: none)
    and the bytes above it past the first two; level by level (breadth-first)."""
    nodes = len(trie.byte)
    parent = np.zeros(nodes, dtype=np.intp)
    parent[1:] = np.repeat(np.arange(nodes), trie.num_children)
    edge = np.zeros((nodes, 4), dtype="<u8")
    edge[np.arange(1, nodes), trie.byte[1:] >> 6] = np.left_shift(
        np.uint64(1), (trie.byte[1:] & 63).astype(np.uint64)
    )
    above = np.zeros((nodes, 4), dtype="<u8")
    lead = np.zeros(nodes, dtype=np.int64)
    lead2 = np.full(nodes, -1, dtype=np.int64)
    above_tail = np.zeros((nodes, 4), dtype="<u8")
    above_tail2 = np.zeros((nodes, 4), dtype="<u8")
    utf8 = np.zeros((len(_UTF8), nodes), dtype=np.int8)
    bounds = np.searchsorted(trie.depth, np.arange(int(trie.depth.max()) + 2)).tolist()
    for lo, hi in zip(bounds[1:-1], bounds[2:], strict=True):  # breadth-first: level by level
        up = parent[lo:hi]
        above[lo:hi] = above[up] | edge[up]
        lead[lo:hi] = trie.byte[lo:hi] if lo == 1 else lead[up]
        if lo > 1:  # the bytes above past the first (two): the parent's, and its own byte
            deep = trie.depth[up, None]  # unless it is the first (two)
            above_tail[lo:hi] = above_tail[up] | np.where(deep >= 2, edge[up], 0)
            above_tail2[lo:hi] = above_tail2[up] | np.where(deep >= 3, edge[up], 0)
            lead2[lo:hi] = np.where(trie.depth[lo:hi] == 2, trie.byte[lo:hi], lead2[up])
        for kind, automaton in enumerate(_UTF8):
            utf8[kind, lo:hi] = automaton[utf8[kind, up], trie.byte[lo:hi]]
    return above, lead, above_tail, utf8, parent, lead2, above_tail2


def _build(trie: VocabTrie, num_ids: int) -> PackedVocab:
    size = -(-num_ids // 32) * 32
    data = np.frombuffer(b"".join(trie.sorted_bytes), dtype=np.uint8)
    owners = np.repeat(trie.sorted_ids, trie.sorted_lengths)
    holds = np.zeros((256, size), dtype=bool)
    holds[data, owners] = True
    starts = np.repeat(np.cumsum(trie.sorted_lengths) - trie.sorted_lengths, trie.sorted_lengths)
    place = np.arange(len(data)) - starts  # each byte's place in its token
    tail = np.zeros((256, size), dtype=bool)
    tail[data[place >= 1], owners[place >= 1]] = True
    tail2 = np.zeros((256, size), dtype=bool)
    tail2[data[place >= 2], owners[place >= 2]] = True
    first = np.zeros((256, size), dtype=bool)
    first[data[place == 0], owners[place == 0]] = True
    second = np.zeros((256, size), dtype=bool)
    second[data[place == 1], owners[place == 1]] = True
    height = int(trie.height[0])
    by_length = np.zeros((height + 1, size), dtype=bool)
    by_length[trie.sorted_lengths, trie.sorted_ids] = True
    shorter = _packbits(np.logical_or.accumulate(by_length, axis=0))
    above, lead, above_tail, utf8, parent, lead2, above_tail2 = _paths(trie)
    order = np.argsort(trie.byte[1:], kind="stable") + 1
    ends = np.stack([order, trie.depth[order], trie.byte[order]]).astype(np.int64)
    ends.flags.writeable = False
    byte_start = np.searchsorted(trie.byte[order], np.arange(257)).tolist()
    present = sum(1 << b for b in np.flatnonzero(holds.any(axis=1)).tolist())
    root_child = _root_children(trie)
    padded = np.full(len(data) + len(trie.sorted_lengths), 256, dtype=np.int64)
    padded[
        np.arange(len(data)) + np.repeat(np.arange(len(trie.sorted_lengths)), trie.sorted_lengths)
    ] = data
    return PackedVocab(
        contains=_blocked(_packbits(holds)),
        first=_blocked(_packbits(first)),
        tail=_blocked(_packbits(tail)),
        second=_blocked(_packbits(second)),
        tail2=_blocked(_packbits(tail2)),
        shorter=shorter,
        ends=ends,
        byte_start=byte_start,
        places=np.arange(len(order)),
        depth=ends[1],
        above=_by_word(above[order]),
        lead=lead[order],
        above_tail=_by_word(above_tail[order]),
        lead2=lead2[order],
        above_tail2=_by_word(above_tail2[order]),
        present=present,
        span_start=trie.span_start,
        span_size=trie.span_size,
        sorted_ids=trie.sorted_ids,
        depth_of=trie.depth.astype(np.int64),
        padded=padded,
        padded_start=np.concatenate([[0], np.cumsum(trie.sorted_lengths + 1)[:-1]]),
        lengths=trie.sorted_lengths.astype(np.int64),
        utf8_above=utf8[:, parent[order]],
        **_refused(trie, utf8, size),
        root_child=root_child,
        **_by_first_byte(trie, root_child),
    )


def _by_first_byte(trie: VocabTrie, root_child: np.ndarray) -> dict[str, object]:
    """``PackedVocab.root_span``, ``busy`` and ``light``: by first byte, how many tokens
    begin with it, and, where at most ``FEW_FIRST``, those tokens as (id, bytes past the
    first)."""
    spans = np.where(root_child >= 0, trie.span_size[root_child], 0).tolist()
    light = []
    for byte, node in enumerate(root_child.tolist()):
        size = spans[byte]
        start = int(trie.span_start[node]) if size else 0
        entries = range(start, start + size) if size <= FEW_FIRST else ()
        light.append(tuple((int(trie.sorted_ids[e]), trie.sorted_bytes[e][1:]) for e in entries))
    busy = sum(1 << byte for byte, size in enumerate(spans) if size > FEW_FIRST)
    return {"root_span": spans, "busy": busy, "light": tuple(light)}


def _by_word(sets: np.ndarray) -> np.ndarray:
    """Sets of bytes ([n, 4] words) as [4, n]: each word of every set contiguous."""
    return np.ascontiguousarray(sets.T)


def _refused(trie: VocabTrie, utf8: np.ndarray, size: int) -> dict[str, object]:
    """``PackedVocab.utf8_bad`` and ``refused``: the tokens each kind refuses (packed, and
    as places in the trie's order)."""
    refused = _utf8_refused(trie, utf8, size)
    places = tuple(np.flatnonzero(bad[trie.sorted_ids]) for bad in refused)
    return {"utf8_bad": _packbits(refused), "refused": places}


def _utf8_refused(trie: VocabTrie, utf8: np.ndarray, size: int) -> np.ndarray:
    """For each kind of UTF-8 a loop may read (a row of ``utf8``: the kind's state after
    each trie node's bytes), the tokens it refuses: those of the nodes it finds dead (a
    dead node's children are dead too, so every token through one)."""
    bad_ids = np.zeros((len(_UTF8), size), dtype=bool)
    for kind, states in enumerate(utf8):  # the nodes each kind refuses, and their own tokens
        bad = np.flatnonzero(states == _UTF8_DEAD)
        own = trie.token_start[bad + 1] - trie.token_start[bad]
        bad_ids[kind, trie.token_ids[runs(trie.token_start[bad], own)]] = True
    return bad_ids


@dataclass(frozen=True)
class Chain:
    """A state's chain: ``path[i]`` the state after ``i`` bytes of ``allowed`` (an int of
    256 bits), ``loops`` whether the last state reads them back into itself (else a token
    longer than ``len(path) - 1`` bytes of ``allowed`` dies), ``leaves`` the bytes outside
    ``allowed`` some state of the path reads. ``utf8`` (1 + a kind of ``_UTF8``; 0: none):
    ``allowed`` holds every byte from 0x80 as well, for a loop that reads any character of
    that kind back into itself (``utf8_loop``): a token of those bytes is allowed when
    that kind takes it (``utf8_bad``), and leaves the loop at a byte outside them only
    between two characters."""

    path: tuple[int, ...]
    allowed: int
    loops: bool
    leaves: int
    utf8: int = 0


def chain_of(
    state: int, main: Callable[[int], tuple[int, int]], live: Callable[[int], int], height: int
) -> Chain | None:
    """The chain of ``state`` (``main(s)``: the bytes of ``s``'s main class and their
    target; ``live(s)``: the bytes ``s`` reads), or None where it reads too few bytes
    onwards (``MIN_BYTES``) or its end still reads some of them.

    ``[a-z]{1,3}=`` read as states 0-3 (3 letters read; each state reads the letters but
    the last, and ``=`` after the first letter): the chain of 1 reads a letter twice more,
    then only ``=``, outside the letters:

    >>> letters = sum(1 << b for b in b"abcdefghijklmnopqrstuvwxyz")
    >>> main = {0: (letters, 1), 1: (letters, 2), 2: (letters, 3), 3: (1 << 61, 4)}
    >>> live = {s: bits | (1 << 61 if s else 0) for s, (bits, _) in main.items()}
    >>> chain = chain_of(1, main.__getitem__, live.__getitem__, height=8)
    >>> chain.path, chain.allowed == letters, chain.loops, chain.leaves == 1 << 61
    ((1, 2, 3), True, False, True)
    """
    path, allowed = [state], _ALL
    loops = False
    while len(path) <= height:
        bits, target = main(path[-1])
        if not allowed & bits:
            break
        allowed &= bits
        if target == path[-1]:
            loops = True
            break
        path.append(target)
    if allowed.bit_count() < MIN_BYTES:
        return None
    if not loops and len(path) <= height and live(path[-1]) & allowed:
        return None  # past its end a token of ``allowed`` may live on: not taken whole
    leaves = 0
    for at in dict.fromkeys(path):
        leaves |= live(at)
    return Chain(tuple(path), allowed, loops, leaves & ~allowed)


def chain_words(
    vocab: PackedVocab,
    trie: VocabTrie,
    chain: Chain,
    table: np.ndarray,
    inside: Callable[[int, int], np.ndarray],
    chain_at: Callable[[int], Chain | None],
    utf8: Callable[[int], int] | None = None,
) -> np.ndarray | None:
    """The packed words (uint32) of the tokens allowed from the chain's first state; None
    where its frontier is too large (``FRONTIER``, ``BELOW``, ``GROUPS``).
    ``inside(allowed, skip)`` is ``vocab.inside``, kept; ``chain_at(s)`` the chain of ``s``,
    kept; ``table`` the byte DFA's. A chain reading no byte onwards (``allowed`` 0: a state
    reading a capital, then letters) starts at its state's first bytes instead.

    Frontier nodes one or two bytes deep with many tokens below (a space before a word; a
    space and a capital) are grouped by the state they reach (``_groups``): where that
    state has a chain, the group is taken as the chain's own are, one or two levels down
    (``Prefix``: the tokens beginning with those bytes whose other bytes lie in the chain's
    bytes, ``inside(..., skip)``, and the chain's frontier below them); where it has none,
    a group one byte deep is split by the next byte. Below the other frontier nodes whose
    byte some state reads (below the others every token dies), the trie is walked
    (``walk_below``). ``utf8(s)``: the kind of UTF-8 the loop ``s`` reads back into itself
    (``utf8_loop``, kept): such a chain takes the tokens of its bytes and UTF-8 at once
    (``Chain.utf8``), where their walk below a frontier of every lead byte was most of a
    string loop's mask.
    """
    words, own, pending = None, [], []
    todo = [(None, chain.path[0], chain if chain.allowed else None, None)]
    for _ in range(GROUPS):
        if not todo:
            break
        prefix, state, after, tops = todo.pop()
        if after is None:  # a state's next bytes, one level down
            nodes, states = _children(trie, vocab.root_child, table, prefix, state)
            if prefix is not None:
                own.append(tops[0])
        else:
            if prefix is None or prefix.ascii:  # UTF-8 from the root, as from it
                after = _with_utf8(after, utf8)
            found = _frontier(vocab, after, table, prefix)
            if found is None:  # split a narrow state's by its next bytes, else walk them
                if (prefix is None or prefix.depth == 1) and _narrow(table, state):
                    todo.append((prefix, state, None, tops))
                elif tops is None:
                    return None
                else:
                    pending.append(tops)
                continue
            nodes, states = found
            skip = 0 if prefix is None else prefix.depth
            got = _within(vocab, after, inside(after.allowed, skip), skip)
            got = got if prefix is None else got & prefix.words(vocab)
            words = got if words is None else words | got
        more, rest = _groups(vocab, trie, table, nodes, states, chain_at)
        if after is not None and int(vocab.span_size[rest[0]].sum()) > LOOP_TOKENS:
            got, rest = _below_loops(vocab, trie, table, rest, after, prefix, chain_at, utf8)
            words = words if got is None else words | got
        todo += more
        pending.append(rest)
    else:
        if todo:
            return None
    pending = [pairs for pairs in pending if len(pairs[0])]
    if len(pending) <= 1:
        nodes, states = pending[0] if pending else (vocab.places[:0], vocab.places[:0])
    else:
        nodes, states = (np.concatenate(arrays) for arrays in zip(*pending, strict=True))
    found = (
        walk_below(vocab, trie, table, nodes, states, chain.allowed)
        if len(nodes)
        else vocab.sorted_ids[:0]
    )
    if found is None:
        return None
    if own:
        own_nodes = np.concatenate(own)
        counts = trie.token_start[own_nodes + 1] - trie.token_start[own_nodes]
        found = np.concatenate([found, trie.token_ids[runs(trie.token_start[own_nodes], counts)]])
    if words is None:
        words = np.zeros_like(vocab.shorter[-1])
    return _with_ids(words, found)


def _below_loops(
    vocab: PackedVocab,
    trie: VocabTrie,
    table: np.ndarray,
    pairs: tuple[np.ndarray, np.ndarray],
    chain: Chain,
    prefix: Prefix | None,
    chain_at: Callable[[int], Chain | None],
    utf8: Callable[[int], int] | None,
) -> tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray]]:
    """Of ``chain``'s frontier pairs (node, state), those whose state ``t`` loops on
    itself over bytes ``L`` holding every byte of their paths (``chain.allowed``, the
    ``prefix``'s bytes, the node's own) taken at once: the tokens below such a node whose
    bytes all lie in ``L`` are allowed (``t`` reads them back into itself), as packed words
    (``inside(L)`` within the nodes' tokens); the others leave ``L`` below the node, at a
    node of ``t``'s own frontier, walked on from there. Returns those words (None: none
    taken) and the pairs left to walk: the rest and ``t``'s frontier below the nodes.

    ``ANY*(?:f.*)ANY*`` from its start: the frontier is every ``f`` (~700 nodes), each
    leading to the state after it, which reads any byte but a newline back into itself:
    below an ``f`` every token is allowed up to its first newline, where the walk goes on;
    ``f`` and ``ANY``'s bytes lie in that loop's bytes. UTF-8: the loop's kind must take
    the path's characters (``chain``'s kind as strict or the same, or no byte from 0x80
    on the path) and the node's byte must end a character (ASCII)."""
    nodes, states = pairs
    path = chain.allowed | (0 if prefix is None else prefix.first | prefix.second)
    found, rest = None, np.ones(len(nodes), dtype=bool)
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    byte = trie.byte[nodes]
    for state in distinct(states).tolist()[:LOOPS]:
        loop = chain_at(state)
        if loop is None or loop.path != (state,) or not loop.loops:
            continue
        loop = _with_utf8(loop, utf8) if prefix is None or prefix.ascii else loop
        mine = states == state
        mine &= _bits(loop.allowed & (_ALL if not loop.utf8 else ~_HIGH))[byte]
        if path & ~loop.allowed or not mine.any() or not _takes(chain, path, loop):
            continue
        below = vocab.leaving(loop.allowed, loop.leaves, None, loop.utf8)
        if below is None:
            continue
        tops = nodes[mine]
        words = _tokens_of(vocab, tops) & _within(vocab, loop, vocab.inside(loop.allowed), 0)
        found = words if found is None else found | words
        rest &= ~mine
        kept.append(_frontier_below(vocab, table, tops, below, state))
    if found is None:
        return None, pairs
    kept.append((nodes[rest], states[rest]))
    return found, tuple(np.concatenate(arrays) for arrays in zip(*kept, strict=True))


LOOPS = 8
"""States a frontier's pairs lead to that ``_below_loops`` looks at, at most."""
LOOP_TOKENS = 2_048
"""Frontier pairs with fewer tokens below are walked (``walk_below``) without looking for
loops below them (``_below_loops``: a few chains, words and a frontier, ~0.1-0.2 ms, where
the walk below a schema's ~200 pairs, ~950 tokens, costs less). Over the held-out corpus
the searches' frontiers into ``.*`` (``ANY*(?:f.*)ANY*``: every ``f``) hold 3,000-17,000."""


def _takes(chain: Chain, path: int, loop: Chain) -> bool:
    """Whether ``loop``'s kind of UTF-8 (if any) takes every path above a frontier node
    of ``chain`` (``path``: their bytes): ends between two characters it reads."""
    if not loop.utf8 or not path & _HIGH:
        return True
    return chain.utf8 >= loop.utf8  # the same kind, or the strict one (no C1) in the other


def _tokens_of(vocab: PackedVocab, tops: np.ndarray) -> np.ndarray:
    """The tokens at and below the nodes ``tops``, packed."""
    ids = vocab.sorted_ids[runs(vocab.span_start[tops], vocab.span_size[tops])]
    return _with_ids(np.zeros_like(vocab.shorter[-1]), ids)


def _frontier_below(
    vocab: PackedVocab,
    table: np.ndarray,
    tops: np.ndarray,
    frontier: tuple[np.ndarray, np.ndarray, np.ndarray],
    state: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The nodes of a loop's ``frontier`` (its nodes, depths, bytes) below one of ``tops``
    (subtrees apart), with the state their byte leads to from the loop's ``state`` where
    it reads it. A node whose first token lies among a top's is below it or above it on
    its path, whose bytes the loop reads: no frontier node."""
    nodes, _, bytes_in = frontier
    order = np.argsort(vocab.span_start[tops])
    starts, tops = vocab.span_start[tops][order], tops[order]
    at = vocab.span_start[nodes]
    top = np.searchsorted(starts, at, side="right") - 1
    inside = top >= 0
    top = np.maximum(top, 0)
    inside &= at < starts[top] + vocab.span_size[tops[top]]
    targets = table[state, bytes_in[inside]].astype(np.int64)
    alive = targets >= 0
    return nodes[inside][alive], targets[alive]


FEW_NODES = 16
"""A frontier of at most this many nodes is read in plain Python (``_frontier``, ``_groups``:
a numpy round costs more than a few nodes' steps)."""
GROUPS = 24
"""Groups (``_groups``) a chain's words may take, at most."""
SPLIT = 64
"""A state reading fewer bytes than this whose chain's frontier is too large is split by
its next bytes (``[A-Z]`` before ``[a-z]{1,10}``: every node of a lowercase letter below a
capital), where it reads more it is not worth it (``.*a``)."""


def _narrow(table: np.ndarray, state: int, below: int = SPLIT) -> bool:
    """Whether ``state`` reads fewer than ``below`` bytes."""
    return int(np.count_nonzero(table[state] >= 0)) < below


def _children(
    trie: VocabTrie, root_child: np.ndarray, table: np.ndarray, prefix: Prefix | None, state: int
) -> tuple[np.ndarray, np.ndarray]:
    """The children of the root (``prefix`` None) or of the nodes one byte deep of
    ``prefix`` whose byte ``state`` reads, and the states they reach (``root_child``:
    ``PackedVocab.root_child``)."""
    if prefix is None:  # the root's children: by byte
        row = table[state]
        read = np.flatnonzero(row >= 0)
        nodes = root_child[read]
        present = nodes >= 0
        return nodes[present], row[read[present]].astype(np.int64)
    if prefix.first & (prefix.first - 1) == 0:  # one node (a space): its children, a range
        top = root_child.item(prefix.first.bit_length() - 1)
        start = trie.first_child.item(top)
        nodes = np.arange(start, start + trie.num_children.item(top), dtype=np.int64)
    else:
        tops = root_child[_bits(prefix.first)[:256]]
        tops = tops[tops >= 0]
        nodes = runs(trie.first_child[tops].astype(np.int64), trie.num_children[tops])
    states = table[state, trie.byte[nodes]]
    alive = states >= 0
    return nodes[alive], states[alive].astype(np.int64)


def _root_children(trie: VocabTrie) -> np.ndarray:
    """By byte, the root's child of that byte (-1: none)."""
    first = int(trie.first_child[0])
    kids = np.arange(first, first + int(trie.num_children[0]))
    found = np.full(256, -1, dtype=np.int64)
    found[trie.byte[kids]] = kids
    return found


def _groups(
    vocab: PackedVocab,
    trie: VocabTrie,
    table: np.ndarray,
    nodes: np.ndarray,
    states: np.ndarray,
    chain_at: Callable[[int], Chain | None],
) -> tuple[list, tuple[np.ndarray, np.ndarray]]:
    """Of the pairs (node, state): those one or two bytes deep grouped by their state (and,
    two bytes deep, their first byte), a group with more than ``TOKEN_WALK`` tokens below
    as work for ``chain_words`` (a ``Prefix``, the state, its chain, the nodes and states)
    where that state has a chain, or the group is one byte deep and its state reads at
    least ``MIN_BYTES`` (a space before a capital or a letter: split by the next byte;
    before the ``F`` of ``FROM``, walked below); and the rest."""
    if not len(nodes):
        return [], (nodes, states)
    shallow = np.flatnonzero(vocab.depth_of[nodes] <= 2)
    at = nodes[shallow]
    sizes = vocab.span_size[at]
    if int(sizes.sum()) <= TOKEN_WALK:  # no group could be large
        return [], (nodes, states)
    groups, rest = [], np.ones(len(nodes), dtype=bool)
    for key, places in _big_groups(vocab, trie, at, sizes, states[shallow], len(table)):
        top_lead, state = divmod(key, len(table))  # (lead, state): > TOKEN_WALK tokens below
        after = chain_at(state)
        if after is None and (top_lead < 256 or _narrow(table, state, MIN_BYTES)):
            continue  # no chain, and not worth splitting: walked below
        tops = at[places]
        bits = sum(1 << b for b in trie.byte[tops].tolist())
        prefix = Prefix(bits) if top_lead == 256 else Prefix(1 << top_lead, bits)
        groups.append((prefix, state, after, (tops, np.full(len(tops), state, dtype=np.int64))))
        rest[shallow[places]] = False
    return groups, (nodes[rest], states[rest])


def _big_groups(
    vocab: PackedVocab,
    trie: VocabTrie,
    at: np.ndarray,
    sizes: np.ndarray,
    states: np.ndarray,
    width: int,
) -> list[tuple[int, np.ndarray]]:
    """``_groups``' keys ``lead * width + state`` (``lead`` the first byte of a node two
    bytes deep, 256 for one byte deep) with more than ``TOKEN_WALK`` tokens below the nodes
    ``at`` (``sizes`` tokens below each, ``states`` their states), in order, each with its
    places in ``at``: a few nodes (``FEW_NODES``: a space below a word) in plain Python,
    more by one stable argsort and ``np.add.reduceat``."""
    if len(at) <= FEW_NODES:
        found: dict[int, tuple[int, list[int]]] = {}
        depths, starts = vocab.depth_of[at].tolist(), vocab.span_start[at].tolist()
        for place, (depth, start, size, state) in enumerate(
            zip(depths, starts, sizes.tolist(), states.tolist(), strict=True)
        ):
            key = (trie.sorted_bytes[start][0] if depth == 2 else 256) * width + state
            total, places = found.get(key, (0, []))
            found[key] = total + size, [*places, place]
        return [
            (key, np.array(places, dtype=np.int64))
            for key, (total, places) in sorted(found.items())
            if total > TOKEN_WALK
        ]
    first = vocab.padded[vocab.padded_start[vocab.span_start[at]]]  # any token's below
    keys = np.where(vocab.depth_of[at] == 2, first, 256) * width + states
    order = np.argsort(keys, kind="stable")  # places in ``at``, by (lead, state)
    keys = keys[order]
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    big = np.flatnonzero(np.add.reduceat(sizes[order], starts) > TOKEN_WALK).tolist()
    ends = [*starts[1:].tolist(), len(order)]
    return [(int(keys[starts[g]]), order[starts[g] : ends[g]]) for g in big]


def _with_ids(words: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``words`` (not changed: it may be kept) with the bits of ``ids`` set; a few ORed
    in one by one."""
    if not len(ids):
        return words
    if len(ids) <= FEW_BELOW:
        words = words.copy()
        for token in ids.tolist():
            words[token >> 5] |= 1 << (token & 31)
        return words
    bits = np.zeros(32 * len(words), dtype=bool)
    bits[ids] = True
    return words | np.packbits(bits, bitorder="little").view("<u4")


def _with_utf8(chain: Chain, utf8: Callable[[int], int] | None) -> Chain:
    """``chain`` with every byte from 0x80 allowed (``Chain.utf8``), where it is a loop of
    one state reading any UTF-8 character back into itself; else ``chain``."""
    if utf8 is None or chain.utf8 or not chain.loops or len(chain.path) != 1:
        return chain
    kind = 0 if chain.allowed & _HIGH else utf8(chain.path[0])
    if not kind:
        return chain
    return Chain(chain.path, chain.allowed | _HIGH, True, chain.leaves & ~_HIGH, kind)


def _within(vocab: PackedVocab, chain: Chain, inside: np.ndarray, skip: int) -> np.ndarray:
    """``inside`` less the tokens longer than ``skip`` bytes and the chain, where it ends
    (those die past its end), and, for a ``utf8`` chain, the tokens that are not UTF-8."""
    if chain.utf8:
        return inside & ~vocab.utf8_bad[chain.utf8 - 1]
    if chain.loops:
        return inside
    return inside & vocab.shorter[min(len(chain.path) + skip, len(vocab.shorter)) - 1]


def _frontier(
    vocab: PackedVocab, chain: Chain, table: np.ndarray, prefix: Prefix | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The chain's frontier nodes (with ``prefix``: below it, the chain's state after it)
    whose state reads their byte, and the states they lead to; None past ``FRONTIER``
    nodes."""
    found = vocab.leaving(chain.allowed, chain.leaves, prefix, chain.utf8)
    if found is None or len(found[0]) > FRONTIER:
        return None
    nodes, depths, bytes_in = found
    above = 1 if prefix is None else 1 + prefix.depth
    last = len(chain.path) - 1
    if len(nodes) <= FEW_NODES:  # none or a few (a word's next space): in plain Python
        kept, states = [], []
        for node, depth, byte in zip(
            nodes.tolist(), depths.tolist(), bytes_in.tolist(), strict=True
        ):
            steps = depth - above
            if chain.loops or steps <= last:
                state = table.item(chain.path[min(steps, last)], byte)
                if state >= 0:
                    kept.append(node)
                    states.append(state)
        return np.array(kept, dtype=np.int64), np.array(states, dtype=np.int64)
    steps = depths - above  # the chain's bytes above
    if not chain.loops:  # a path of the chain's bytes longer than it died at its end
        near = steps <= last
        nodes, steps, bytes_in = nodes[near], steps[near], bytes_in[near]
    before = np.asarray(chain.path)[np.minimum(steps, last)]
    states = table[before, bytes_in]
    alive = states >= 0
    return nodes[alive], states[alive]


def utf8_loop(table: np.ndarray, state: int, reads: Callable[[int], int] | None = None) -> int:
    """The kind of UTF-8 (1 + its place in ``_UTF8``) that ``state`` reads back into itself
    from 0x80, as ``[^"]*`` reads any character, reading no other byte from 0x80; 0 for
    none. Walked as pairs (DFA state, automaton state) from ``(state, 0)``: each byte falls
    off in both or in neither, and a character's end is back at ``state``. ``reads(s)``:
    the bytes state ``s`` reads (256 bits), kept by the caller; else packed here.

    >>> from fsmviz import Vocabulary, build_index
    >>> table = build_index('"[^"]*"', Vocabulary.from_strings(["a"])).byte_dfa.table
    >>> utf8_loop(table, 1), utf8_loop(table, 0)  # the string's loop; before its quote
    (1, 0)
    """
    after = int(table[state, 0xC2])  # U+0080 read or not: which kind to check
    kind = 1 if after >= 0 and table[after, 0x80] >= 0 else 2
    if reads is None:
        reads = partial(_row_reads, table)
    return kind if _reads_as(table, state, _KINDS[kind - 1], reads) else 0


def looped_words(
    vocab: PackedVocab, table: np.ndarray, state: int, reads: Callable[[int], int]
) -> tuple[int, np.ndarray] | None:
    """``L`` and the words of ``state`` (``L``'s too) where it is ``B*``'s loop or ``B+``'s
    start, ``B`` some ASCII bytes and every character past ASCII (of a kind of ``_UTF8``):
    its row is that of ``L``, the state its lowest byte leads to, ``L``'s ASCII bytes lead
    back to ``L`` and it reads that kind of UTF-8 back into itself (``utf8_loop``); else
    None. A token is then allowed where its ASCII bytes lie in ``B`` and that kind takes
    its bytes (a last character cut short too; not a continuation byte first): ``inside``
    less ``utf8_bad`` (~10 µs; ``levelwalk.loop_tokens`` answers the same per token).
    ``[^=]+``, ``.+``, ``[^ ]+``: no chain or closed set takes them, and the row walk
    below the loop cost ~0.3 ms. ``reads(s)``: the bytes ``s`` reads (256 bits)."""
    bits = reads(state)
    ascii_bits = bits & _ASCII_BYTES
    if not ascii_bits or not bits & _HIGH:
        return None
    loop = table.item(state, (bits & -bits).bit_length() - 1)
    if np.count_nonzero(table[state, :0x80] == loop) != ascii_bits.bit_count():
        return None  # an ASCII byte leads elsewhere (``[^/]*x``'s ``x``): two numpy calls
    if loop != state and (reads(loop) != bits or not np.array_equal(table[loop], table[state])):
        return None
    if not (kind := utf8_loop(table, loop, reads)):
        return None
    return loop, vocab.inside(ascii_bits | _HIGH) & ~vocab.utf8_bad[kind - 1]


def _row_reads(table: np.ndarray, state: int) -> int:
    """The bytes ``state`` reads, as an int of 256 bits."""
    return int.from_bytes(np.packbits(table[state] >= 0, bitorder="little").tobytes(), "little")


def _reads_as(table: np.ndarray, state: int, kind: _Kind, reads: Callable[[int], int]) -> bool:
    """Whether ``state`` reads the bytes from 0x80 as ``kind``'s automaton does from its
    state 0 (see ``utf8_loop``): pairs (DFA state, automaton state) a level at a time, the
    lead bytes, then at most three continuation bytes (the automaton's inner states end a
    character within three), in plain Python: a pair's bytes read are its state's
    ``reads`` (kept), and an inner state's bytes all lead to one automaton state, so only
    the distinct DFA states they reach are looked at (a string's loop: ~11 pairs, where a
    numpy round a level cost ~0.1 ms)."""
    if reads(state) >> 0x80 != kind.leads >> 0x80:
        return False
    high = table[state, 0x80:].tolist()
    pairs = {(high[byte - 0x80], inner) for byte, inner in kind.lead}
    for _ in range(3):
        if not pairs:
            return True
        after = set()
        for at, inner in pairs:
            if reads(at) != kind.live[inner]:
                return False
            lo, hi = kind.span[inner]
            targets, goes = set(table[at, lo:hi].tolist()), kind.goes[inner]
            if not goes and targets != {state}:
                return False
            after |= {(target, goes) for target in targets} if goes else set()
        pairs = after
    return not pairs


@dataclass(frozen=True)
class _Kind:
    """A ``_UTF8`` automaton as ``_reads_as`` reads it: ``lead`` the (byte, inner state) of
    each byte from 0x80 read between characters, ``leads`` those bytes (256 bits); by inner
    state, ``live`` the bytes it reads (256 bits), ``span`` them as a range, and ``goes``
    where they all lead."""

    lead: tuple[tuple[int, int], ...]
    leads: int
    live: tuple[int, ...]
    span: tuple[tuple[int, int], ...]
    goes: tuple[int, ...]

    @classmethod
    def of(cls, automaton: np.ndarray) -> _Kind:
        """Read ``automaton``; an inner state whose bytes are no one range leading to one
        state is refused (``_reads_as`` could not read it so)."""
        row = automaton[0].tolist()
        lead = tuple((b, row[b]) for b in range(0x80, 0x100) if row[b] != _UTF8_DEAD)
        live, span, goes = [0], [(0, 0)], [0]
        for inner in range(1, _UTF8_DEAD):
            read = np.flatnonzero(automaton[inner] != _UTF8_DEAD)
            lo, hi = (int(read[0]), int(read[-1]) + 1) if len(read) else (0, 0)
            targets = set(automaton[inner, read].tolist()) or {0}  # {0}: unused (8, C1's)
            if hi - lo != len(read) or len(targets) != 1:
                raise ValueError(f"inner state {inner}: not one range to one state")
            live.append(sum(1 << b for b in range(lo, hi)))
            span.append((lo, hi))
            goes.append(targets.pop())
        leads = sum(1 << b for b, _ in lead)
        return cls(lead, leads, tuple(live), tuple(span), tuple(goes))


_KINDS = tuple(_Kind.of(automaton) for automaton in _UTF8)


CLOSED = 64
"""States a closed set (``closed_words``) may hold, and pairs its UTF-8 check may make."""


def closed_words(
    vocab: PackedVocab, table: np.ndarray, state: int
) -> tuple[list[int], np.ndarray] | None:
    """A *closed set* of ``state`` and its words, or None: states reading the same bytes as
    it (``R`` of them ASCII), whose ASCII bytes lead back into the set, and which read the
    bytes from 0x80 as one kind of UTF-8 whose characters end back in the set (or none of
    them reading any). Every state of the set then allows the same tokens: those of ``R``
    (and UTF-8 of that kind), packed. ``.*a`` reads any byte but a newline from both its
    states, and every state of ``.*(error|warning): [A-Za-z ]+`` still reads them through
    its ``.*``: no chain takes them (a frontier of every ``a``), where this is a few numpy
    rounds for them all. The set is the largest one among the states alike: those an
    ASCII byte leads out of dropped until none does, a round for all (where a walk from
    ``state`` took a round a level: 14 for ``warning: ``).

    >>> from fsmviz import Vocabulary, build_index
    >>> index = build_index(".*a", Vocabulary.from_strings(["a", "ba", "b", "\\n"]))
    >>> members, words = closed_words(packed_vocab(index.trie, 5), index.byte_dfa.table, 0)
    >>> sorted(members), words.tolist()  # "a", "ba", "b" from both states; not the newline
    ([0, 1], [7])
    """
    reads = table[state, :0x80] >= 0
    alike = ((table >= 0) == (table[state] >= 0)).all(axis=1)  # the same bytes as ``state``
    members = np.flatnonzero(alike)
    while True:  # drop those an ASCII byte leads out of the set, until none does
        rows = table[members, :0x80]
        inside = (alike[rows] | (rows < 0)).all(axis=1)  # (-1 reads some flag: no matter)
        if inside.all():
            break
        alike[members[~inside]] = False
        members = members[inside]
    if not alike[state] or len(members) > CLOSED:
        return None
    ordered = members.tolist()
    allowed = int.from_bytes(np.packbits(reads, bitorder="little").tobytes(), "little")
    if not (table[ordered, 0x80:] >= 0).any():
        return ordered, vocab.inside(allowed)
    after = int(table[state, 0xC2])  # U+0080 read or not: which kind to check
    kind = 1 if after >= 0 and table[after, 0x80] >= 0 else 2
    if not _reads_into(table, np.array(ordered), _UTF8[kind - 1]):
        return None
    return ordered, vocab.inside(allowed | _HIGH) & ~vocab.utf8_bad[kind - 1]


def ascii_closed_words(
    vocab: PackedVocab, table: np.ndarray, state: int, reads: Callable[[int], int]
) -> tuple[list[int], np.ndarray] | None:
    """The states reachable from ``state`` and their words, where every one of them reads
    the same bytes ``B`` (``_closed_set``); else None. A token of ``B``'s bytes then walks
    among them and lives; one holding another byte dies at it: each allows the tokens of
    ``B``, ``inside(B)``. ``[a-zA-Z0-9-_]+`` from its start or its loop, ``[A-Za-z0-9]*``'s
    loop after a capital: found from the state's row and its targets' (a few µs), where
    the chain's words and frontier, or a merge into live blocks, cost ~0.1 ms. ``\\s+``:
    six bytes, but a space begins 20,000 tokens, where ``small_row`` gave up and the
    chain walked below it (~0.4 ms)."""
    members = _closed_set(vocab, table, state, reads)
    return None if members is None else (members, vocab.inside(reads(state)))


def entered_closed_words(
    vocab: PackedVocab, table: np.ndarray, state: int, reads: Callable[[int], int]
) -> np.ndarray | None:
    """The words of ``state`` where every byte it reads (at least ``FIRST_BYTES``, or a
    busy one) leads into one closed set (``_closed_set``: its states all read ``B``):
    the tokens whose first byte it reads and whose other bytes lie in ``B``; else None.
    ``[A-Za-z][A-Za-z0-9_]*``'s start (a letter, then the loop's bytes), ``[+!]?[a-z.-]+``'s
    (a sign or the class, into the class's two states alike)."""
    bits = reads(state)
    if bits.bit_count() < FIRST_BYTES and not bits & vocab.busy:
        return None
    members = _closed_set(vocab, table, table.item(state, (bits & -bits).bit_length() - 1), reads)
    if members is None or state in members:  # (closed itself: ``ascii_closed_words``)
        return None
    row, inside = table[state].tolist(), set(members)
    if any(row[byte] not in inside for byte in set_bits(bits)):
        return None
    return Prefix(bits).words(vocab) & vocab.inside(reads(members[0]), 1)


def _closed_set(
    vocab: PackedVocab, table: np.ndarray, state: int, reads: Callable[[int], int]
) -> list[int] | None:
    """The states reachable from ``state`` (sorted), where every one reads the same bytes
    as it, all ASCII, at least ``FIRST_BYTES`` or one of them busy (``reads(s)``: the
    bytes ``s`` reads, 256 bits), and at most ``CLOSED`` of them; else None."""
    bits = reads(state)
    if bits & _HIGH or bits.bit_count() < FIRST_BYTES and not bits & vocab.busy:
        return None
    if not _lowest_closes(table, state, bits, reads):
        return None  # its lowest byte leads out (a key's next letter, a count): no row read
    members, todo, cols = {state}, [state], list(set_bits(bits))
    while todo:
        row = table[todo.pop()].tolist()
        for byte in cols:
            target = row[byte]
            if target not in members:
                if reads(target) != bits or len(members) == CLOSED:
                    return None
                members.add(target)
                todo.append(target)
    return sorted(members)


def _lowest_closes(table: np.ndarray, state: int, bits: int, reads: Callable[[int], int]) -> bool:
    """Whether the states that ``bits``' lowest byte leads through from ``state`` (until
    one repeats) all read ``bits``, at most ``CLOSED`` of them: a closed set holds them
    all. A counted class (``[A-Za-z0-9+/]{43}``) fails here after its count, a step a
    byte, where the set's walk read all 64 bytes of each of its 43 states (~0.7 ms)."""
    low, seen = (bits & -bits).bit_length() - 1, {state}
    while len(seen) <= CLOSED:
        state = table.item(state, low)
        if state in seen:
            return True
        if reads(state) != bits:
            return False
        seen.add(state)
    return False


def _reads_into(
    table: np.ndarray, members: np.ndarray, automaton: np.ndarray, exact: bool = True
) -> bool:
    """Whether every state of ``members`` reads the bytes from 0x80 as ``automaton`` does
    from its state 0 (not ``exact``: at least those), each character ending back among
    ``members`` (``utf8_loop`` for a set, pairs ``at << 4 | inner`` walked a level at a
    time)."""
    among = np.zeros(len(table) + 1, dtype=bool)
    among[members] = True
    level, seen = members.astype(np.int64) << 4, set()
    while len(level):
        rows, goes = table[level >> 4], automaton[level & 15]
        start = (level & 15) == 0
        dead, off = rows < 0, goes == _UTF8_DEAD
        dead[start, :0x80] = off[start, :0x80]  # the ASCII bytes of a member: checked apart
        back = goes == 0
        back[start, :0x80] = False
        if (dead & ~off if not exact else dead != off).any() or not among[rows[back]].all():
            return False
        on = ~off & ~back
        on[start, :0x80] = False
        pairs = set((rows[on].astype(np.int64) << 4 | goes[on]).tolist()) - seen
        seen |= pairs
        if len(seen) > CLOSED:
            return False
        level = np.array(sorted(pairs), dtype=np.int64)
    return True


def walk_below(
    vocab: PackedVocab,
    trie: VocabTrie,
    table: np.ndarray,
    nodes: np.ndarray,
    states: np.ndarray,
    safe: int = 0,
) -> np.ndarray | None:
    """The ids of the tokens at and below the pairs (trie node, state) that the byte DFA
    reads to their end: pair by pair (node, state) while many tokens lie below the pairs
    (``TOKEN_WALK``), then the tokens below them byte by byte (``walk_entries``), but for
    those ``_unharmed`` takes at once (``safe``: the ASCII bytes it starts from); past
    ``BELOW`` pairs made, the tokens left at once where at most ``ENTRY_WALK``, else None.
    At most ``FEW_BELOW`` tokens below the pairs are walked in plain Python (``_walk_few``)."""
    if int(vocab.span_size[nodes].sum()) <= FEW_BELOW:
        return _walk_few(vocab, trie, table, nodes, states)
    pairs, flat, width = (nodes, states), table.reshape(-1), table.shape[1]
    found, made = [], 0
    while len(nodes):
        below = int(vocab.span_size[nodes].sum())
        if below <= TOKEN_WALK or len(nodes) >= SHALLOW_PAIRS and below <= SHALLOW * len(nodes):
            break  # few tokens left, or a few below each of many pairs: walked at once
        made += len(nodes)
        if made > BELOW:
            if below > ENTRY_WALK:
                return None
            break  # the pairs no longer thin out: the tokens below them walked at once
        own = trie.token_start[nodes + 1] - trie.token_start[nodes]
        found.append(runs(vocab.span_start[nodes], own))  # a node's own tokens come first
        counts = trie.num_children[nodes]
        children = runs(trie.first_child[nodes], counts)
        reached = flat[np.repeat(states * width, counts) + trie.byte[children]]
        alive = reached >= 0
        nodes, states = children[alive], reached[alive]
    if len(nodes):
        sizes = vocab.span_size[nodes]
        entries = runs(vocab.span_start[nodes], sizes)
        skip = np.repeat(vocab.depth_of[nodes], sizes)
        states = np.repeat(states, sizes)
        if safe and len(entries) >= SAFE_TOKENS:
            sure = _unharmed(vocab, table, entries, states, _safe_start(trie, table, pairs, safe))
            found.append(entries[sure])
            entries, states, skip = entries[~sure], states[~sure], skip[~sure]
        found.append(walk_entries(vocab, table, entries, states, skip))
    return vocab.sorted_ids[np.concatenate(found)] if found else np.zeros(0, dtype=np.int32)


SAFE_TOKENS = 2_048
"""``walk_below`` looks for tokens it may take unwalked (``_unharmed``) where at least this
many are left to walk: the look costs ~0.05-0.1 ms, the walk of 3,000 tokens ~0.3 (of
1,000, ~0.15-0.2, where those of ``[^ ]`` hold the quote their frontier leaves by)."""
SAFE_ROUNDS = 4
"""Times ``_safe_bytes`` narrows its bytes, at most."""
MIN_SAFE = 16
"""Fewer safe bytes than this take too few tokens to be worth their pass."""


def _safe_start(
    trie: VocabTrie, table: np.ndarray, pairs: tuple[np.ndarray, np.ndarray], safe: int
) -> tuple[list[int], int]:
    """Where ``_safe_bytes`` starts below the frontier ``pairs`` (node, state) of a chain
    reading ``safe`` onwards: the pairs' states that read all its ASCII bytes, and those
    bytes with the nodes' bytes into them (a search's ``f``, not an escape's backslash)."""
    nodes, states = pairs
    cols = np.flatnonzero(_bits(safe & _ASCII_BYTES)[:256])
    tops = distinct(states)
    readers = tops[(table[tops][:, cols] >= 0).all(axis=1)]
    reading = np.zeros(len(table), dtype=bool)
    reading[readers] = True
    into = distinct(trie.byte[nodes[reading[states]]]).tolist()
    return readers.tolist(), (safe | sum(1 << byte for byte in into)) & _ASCII_BYTES


def _unharmed(
    vocab: PackedVocab,
    table: np.ndarray,
    entries: np.ndarray,
    states: np.ndarray,
    start: tuple[list[int], int],
) -> np.ndarray:
    """Which of ``entries`` (trie byte order, walked from ``states``) are surely allowed
    without a walk: their state is one of the set ``S`` that ``_safe_bytes`` finds from
    ``start``, and every byte of their token lies in its bytes ``B`` (``vocab.inside``).
    Each state of ``S`` reads each byte of ``B`` into ``S``, so such a token never falls
    off. Below a search's every ``f`` (``ANY*(?:f.o)ANY*``: 3,076 tokens, 3,068 allowed;
    ``B``: a string's ASCII and ``f``) only those holding a quote, a backslash or UTF-8
    are left to the walk."""
    found = _safe_bytes(table, *start)
    if found is None:
        return np.zeros(len(entries), dtype=bool)
    members, good = found
    ids = vocab.sorted_ids[entries]
    held = vocab.inside(good).take(ids >> 5) >> (ids & 31).astype(np.uint32) & 1
    return members[states] & held.astype(bool)


def _safe_bytes(table: np.ndarray, starts: list[int], safe: int) -> tuple[np.ndarray, int] | None:
    """A set of states ``S`` (booleans over the table's states) and of ASCII bytes ``B``
    (256 bits) where each state of ``S`` reads each byte of ``B`` into ``S``: ``B`` starts
    as ``safe`` (ASCII), ``S`` as those of ``starts`` reading all of it, closed under
    ``B``; where some state reached reads not all of ``B``, the bytes into it leave ``B``
    and ``S`` is closed again (``SAFE_ROUNDS`` times, at most). None where fewer than
    ``MIN_SAFE`` bytes are left, or where no start reads them all."""
    cols = np.flatnonzero(_bits(safe)[:256])
    rows: dict[int, np.ndarray] = {}  # each state's targets by ``cols``, read once
    for _ in range(SAFE_ROUNDS):
        if len(cols) < MIN_SAFE:
            return None
        seen = {start for start in starts if _reads_all(table, rows, start, cols)}
        todo, bad = list(seen), []
        while todo:
            for target in set(rows[todo.pop()].tolist()) - seen:
                seen.add(target)
                (todo if _reads_all(table, rows, target, cols) else bad).append(target)
        if not bad:
            if not seen:
                return None
            members = np.zeros(len(table), dtype=bool)
            members[list(seen)] = True
            return members, safe
        keep = _narrowed(rows, seen, bad)
        safe &= ~sum(1 << byte for byte in cols[~keep].tolist())
        cols, rows = cols[keep], {state: row[keep] for state, row in rows.items()}
    return None


def _narrowed(rows: dict[int, np.ndarray], seen: set[int], bad: list[int]) -> np.ndarray:
    """Which bytes (places in ``rows``' arrays) ``_safe_bytes`` keeps where the states
    ``bad`` of ``seen`` read not all of them: a bad state reading at least half keeps the
    bytes it reads (the search's loop, reached from the state after a needle's byte that
    reads a quote too); one reading fewer loses the bytes into it (an escape's
    backslash)."""
    keep, narrow = np.ones(len(rows[bad[0]]), dtype=bool), []
    for state in bad:
        reading = rows[state] >= 0
        if 2 * np.count_nonzero(reading) >= len(reading):
            keep &= reading
        else:
            narrow.append(state)
    for state in seen.difference(bad):
        for other in narrow:
            keep &= rows[state] != other
    return keep


def _reads_all(
    table: np.ndarray, rows: dict[int, np.ndarray], state: int, cols: np.ndarray
) -> bool:
    """Whether ``state`` reads every byte of ``cols``, its targets by them kept in ``rows``."""
    if state not in rows:
        rows[state] = table[state].take(cols)
    return bool(rows[state].min() >= 0)


_ASCII_BYTES = (1 << 128) - 1


def search_words(
    vocab: PackedVocab, trie: VocabTrie, table: np.ndarray, state: int, reads: int
) -> np.ndarray | None:
    """The packed words (uint32) of the tokens allowed from ``state`` (``reads``: the bytes
    it reads, 256 bits) where its ASCII bytes close a set of states (``_safe_bytes``:
    each reads each byte of ``B`` back into the set ``S``); else None.
    The tokens of ``B`` are allowed (``inside(B)``); every other token leaves ``B`` at a
    node whose path above lies in ``B`` (``leaving``): the state there is walked from
    ``state`` along that path (``_path_states``), and the trie below it (``walk_below``).

    A search, merged into its live blocks: ``ANY*(?:t.e)ANY*``'s loop and the state after
    ``t`` (its ``.`` reads a quote and a backslash too) read a string's ASCII but the
    backslash back among the two. The loop's chain leaves by every ``t`` (more than
    ``FRONTIER`` nodes: its row was walked, ~1.3 ms); here the nodes left are the 270 of
    a quote, a backslash, a control or UTF-8 after ASCII of ``B``. ``S`` may be the state
    alone: ``ANY*(?:.)ANY*``'s start, merged, reads a string's ASCII back into itself, its
    quote and controls into the loop after the ``.`` (the chain walked ~1,000 tokens
    below those: ~0.5 ms; here ~0.3); not where it reads no UTF-8 (``(?:\\w*:)?\\w+``'s
    loop: its tokens leave ``B`` at 76 nodes above 32,889 tokens, ~0.1 ms to find, where
    the chain's frontier cost ~0.05 less).

    >>> from fsmviz import Vocabulary, build_index
    >>> index = build_index("[a-z]*x[a-z]*", Vocabulary.from_strings(["ax", "b", "x1"]))
    >>> table, vocab = index.byte_dfa.table, packed_vocab(index.trie, len(index.vocab))
    >>> search_words(vocab, index.trie, table, 0, _row_reads(table, 0)).tolist()  # "ax", "b"
    [3]
    """
    if not _leads_wide(table, state, reads):
        return None  # a loop alone (its chain's words), or a key
    found = _safe_bytes(table, [state], reads & _ASCII_BYTES)
    if found is None:
        return None
    members, safe = found
    ordered = np.flatnonzero(members)
    kind = _utf8_kind(table, ordered)
    if not kind and len(ordered) == 1:
        return None  # an ASCII loop alone: its chain's frontier costs less than ``leaving``
    if kind == _STRICT:  # UTF-8 taken as ASCII is, those it refuses walked from ``state``
        words = vocab.inside(safe | _HIGH) & ~vocab.utf8_bad[kind - 1]
        leaving = vocab.leaving(safe | _HIGH, vocab.present & ~safe & _ASCII_BYTES, None, kind)
        entries = vocab.refused[kind - 1]  # (most die at their first byte: a stray one)
        entries = entries[table[state, vocab.padded[vocab.padded_start[entries]]] >= 0]
        own = np.zeros(len(entries), dtype=np.intp)
        taken = walk_entries(vocab, table, entries, own + state, own) if len(entries) else own
        words = _with_ids(words, vocab.sorted_ids[taken])
    else:  # no member reads past ASCII (those tokens die there), or not as UTF-8
        words = vocab.inside(safe)
        leaving = vocab.leaving(safe, vocab.present & ~safe & (_ALL if kind else _ASCII_BYTES))
    if leaving is None or len(leaving[0]) > FRONTIER:
        return None
    nodes, depths, bytes_in = leaving
    after = table[_path_states(vocab, table, state, nodes, depths), bytes_in]
    live = after >= 0
    if not live.any():
        return words
    ids = walk_below(vocab, trie, table, nodes[live], after[live], safe)
    return None if ids is None else _with_ids(words, ids)


_STRICT = 2
"""The strict kind of UTF-8 (no C1 control), as ``Chain.utf8`` numbers it."""


def _utf8_kind(table: np.ndarray, members: np.ndarray) -> int:
    """0 where no state of ``members`` reads a byte from 0x80; ``_STRICT`` where each reads
    at least every character of that kind back among them (``_reads_into``, not exact:
    one reading more, as ``.`` reads C1 controls, has the tokens of those walked);
    else -1."""
    if not (table[members, 0x80:] >= 0).any():
        return 0
    return _STRICT if _reads_strict(table, members.tolist()) else -1


def _reads_strict(table: np.ndarray, members: list[int]) -> bool:
    """``_reads_into(table, members, _UTF8[_STRICT - 1], exact=False)`` in plain Python, as
    ``_reads_as`` walks one state: pairs (DFA state, inner automaton state) from each
    member's lead bytes, a level a continuation byte, each byte of an inner state's range
    read, a character's end among ``members`` (at most ``CLOSED`` pairs). A string's loop
    makes ~16 pairs: ~30 µs, where a numpy round a level cost ~60."""
    kind, among, pairs = _KINDS[_STRICT - 1], set(members), set()
    for member in members:
        high = table[member, 0x80:].tolist()
        pairs |= {(high[byte - 0x80], inner) for byte, inner in kind.lead}
    seen = set(pairs)
    while pairs:
        if len(seen) > CLOSED:
            return False
        after = set()
        for at, inner in pairs:
            if at < 0:
                return False
            lo, hi = kind.span[inner]
            targets, goes = set(table[at, lo:hi].tolist()), kind.goes[inner]
            if goes:
                after |= {(target, goes) for target in targets}
            elif not targets <= among:
                return False
        pairs = after - seen
        seen |= pairs
    return True


def _leads_wide(table: np.ndarray, state: int, reads: int) -> bool:
    """Whether an ASCII byte leads ``state`` (``reads``: its bytes) to another state reading
    at least half as many ASCII bytes: else its set is itself alone, at best (a string's
    loop reads its backslash into the escape's eight bytes), found at once."""
    half = (reads & _ASCII_BYTES).bit_count() // 2
    row = table[state, :0x80]
    others = set(row[row >= 0].tolist()) - {state}
    return any(np.count_nonzero(table[other, :0x80] >= 0) >= half for other in others)


def _path_states(
    vocab: PackedVocab, table: np.ndarray, state: int, nodes: np.ndarray, depths: np.ndarray
) -> np.ndarray:
    """The state after each node's path above (its first ``depth - 1`` bytes, read from a
    token below it) from ``state``, the deepest walked longest (a round a byte)."""
    steps = depths.astype(np.intp) - 1
    order = np.argsort(-steps, kind="stable")
    steps, at = steps[order], vocab.padded_start[vocab.span_start[nodes[order]]]
    states = np.full(len(nodes), state, dtype=np.intp)
    walking = np.searchsorted(-steps, -np.arange(int(steps[0]) if len(steps) else 0), "left")
    for byte, count in enumerate(walking.tolist()):  # count: those with bytes past ``byte``
        states[:count] = table[states[:count], vocab.padded[at[:count] + byte]]
    found = np.empty_like(states)
    found[order] = states
    return found


FEW_FIRST = 256
FIRST_BYTES = 16
"""A state reading at least ``FIRST_BYTES`` bytes from which at most ``FEW_FIRST`` tokens
begin is walked token by token (``few_first_words``); a narrower one (a key's next letter,
a digit) is left to ``rowwalk.small_row``, whose walk over the trie drops a dead subtree
at once (also where its loop is closed, ``ascii_closed_words``: ten digits' tokens walked
cost less than the words of 246 bytes left out; not where it reads a busy byte, as
``\\s+``'s loop)."""


def few_first_words(
    vocab: PackedVocab, trie: VocabTrie, table: np.ndarray, state: int, reads: int
) -> np.ndarray | None:
    """The packed words (uint32, read-only) of the tokens allowed from ``state`` (``reads``:
    the bytes it reads, 256 bits), where it reads at least ``FIRST_BYTES`` bytes and at
    most ``FEW_FIRST`` tokens begin with one of them; else None. Inside a UTF-8 character
    (``.``, ``\\S``, ``[^ ]``: a state reading the 64 continuation bytes) 74 of 49,152
    tokens begin so, where its chain's words and frontier cost ~0.1-0.3 ms: each is
    walked in plain Python (``table.item``), nothing else (~20-60 µs). A state reading a
    byte that alone begins more (``PackedVocab.busy``) is refused at once (~1 µs)."""
    if reads & vocab.busy or reads.bit_count() < FIRST_BYTES:
        return None
    bytes_read = list(set_bits(reads))
    if sum(vocab.root_span[byte] for byte in bytes_read) > FEW_FIRST:
        return None
    found: dict[int, int] = {}
    row, step = table[state].tolist(), table.item
    for byte in bytes_read:
        for token, tail in vocab.light[byte]:
            at = row[byte]
            for later in tail:
                at = step(at, later)
                if at < 0:
                    break
            else:
                found[token >> 5] = found.get(token >> 5, 0) | 1 << (token & 31)
    words = np.zeros_like(vocab.shorter[-1])
    words[list(found)] = list(found.values())
    words.flags.writeable = False
    return words


def _walk_few(
    vocab: PackedVocab, trie: VocabTrie, table: np.ndarray, nodes: np.ndarray, states: np.ndarray
) -> np.ndarray:
    """``walk_below`` for a few tokens: each one's bytes below its pair's node read in
    plain Python (a numpy round costs more than a few tokens' bytes: the ten digits after
    a counted run of letters)."""
    found, spans, sorted_bytes, step = [], vocab.span_start, trie.sorted_bytes, table.item
    sizes, depths = vocab.span_size[nodes].tolist(), vocab.depth_of[nodes].tolist()
    for start, size, skip, state in zip(
        spans[nodes].tolist(), sizes, depths, states.tolist(), strict=True
    ):
        for entry in range(start, start + size):
            at = state
            for byte in sorted_bytes[entry][skip:]:
                at = step(at, byte)
                if at < 0:
                    break
            else:
                found.append(entry)
    return vocab.sorted_ids[found] if found else np.zeros(0, dtype=np.int32)


def walk_entries(
    vocab: PackedVocab,
    table: np.ndarray,
    entries: np.ndarray,
    states: np.ndarray,
    skip: np.ndarray,
) -> np.ndarray:
    """Those of ``entries`` (positions in the trie's byte order) whose tokens' bytes past
    the first ``skip`` the byte DFA (``table``) reads to the end from ``states``, walked
    together, one round a byte, longest first, so that a round walks a prefix of them
    (those with bytes left). A state that died (-1) indexes some row from the end and
    reads garbage: ORed with its sign it stays -1 (no copy of the table with a dead row:
    a new index's first copy of 660 KB cost ~0.1-0.2 ms of fresh pages). The ended and
    the dead are dropped after ``FIRST_DROP`` rounds where most died, then every 8; the
    last few long ones walked on in Python (``FEW_WALKING``).

    >>> from fsmviz import Vocabulary, build_index
    >>> index = build_index("[0-9]+", Vocabulary.from_strings(["1", "12", "a1"]))
    >>> vocab, table = packed_vocab(index.trie, 3), index.byte_dfa.table
    >>> start, none = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
    >>> sorted(walk_entries(vocab, table, np.arange(3), start, none).tolist())  # "1", "12"
    [0, 1]
    """
    left = vocab.lengths[entries] - skip
    order = np.argsort(left.astype(np.int16), kind="stable")[::-1]  # longest first (radix)
    left = left[order]
    states = states[order].astype(np.int64, copy=False)
    at = vocab.padded_start[entries[order]] + skip[order]
    found, done, longest = [], 0, int(left[0]) if len(left) else 0
    jumps = True
    while done < longest:
        rounds = min(longest, done + 8)
        # walking[k]: how many have a byte left at round ``done + k`` (``left`` descends)
        ends = np.searchsorted(left[::-1], np.arange(done, rounds + 1), side="right")
        walking = (len(left) - ends).tolist()
        for k in range(rounds - done):
            n = walking[k]
            if not done and k == FIRST_DROP and 2 * np.count_nonzero(states[:n] >= 0) < n:
                rounds, walking[-1] = k, n  # most died at once: dropped now
                break
            if n <= FEW_WALKING:  # the last few long ones: on in Python
                found.append(order[n:][states[n:] >= 0])
                offset = done + k
                alive = _walk_on(
                    table, vocab.padded, states[:n], at[:n] + offset, left[:n] - offset
                )
                found.append(order[:n][alive])
                return entries[np.concatenate(found)]
            head = states[:n]  # >> 63 below: -1 if dead, else 0
            np.bitwise_or(table[head, vocab.padded[at[:n] + (done + k)]], head >> 63, out=head)
        done, n = rounds, walking[-1]
        if done < longest:  # drop the ended and the dead
            found.append(order[n:][states[n:] >= 0])
            live = states[:n] >= 0
            order, states, at, left = (part[:n][live] for part in (order, states, at, left))
            if jumps and longest - done > JUMP and len(left) > FEW_WALKING:
                at, left, jumps = _jump(table, vocab.padded, states, at + done, left - done)
                turn = np.argsort(left.astype(np.int16), kind="stable")[::-1]
                order, states, at, left = (part[turn] for part in (order, states, at, left))
                done, longest = 0, int(left[0])
    found.append(order[states >= 0])
    return entries[np.concatenate(found)]


JUMP = 16
"""``walk_entries`` jumps (``_jump``) where more than this many rounds are left."""


def _jump(
    table: np.ndarray, padded: np.ndarray, states: np.ndarray, at: np.ndarray, left: np.ndarray
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Each token moved past the bytes from ``at`` that its state reads back into itself
    (its state stays as it is): ``(at, left, again)``, ``again`` where the jump passed at
    least half the bytes left (else another is not worth its pass over them). A run of
    spaces below ``\\s*``'s newline, a line below ``.*``: ~80 rounds of a few tokens each
    (~5 us a round) where one pass over their bytes is ~30 us.

    >>> table = np.array([[0, 1], [-1, 1]])  # 0 loops on byte 0, 1 on byte 1
    >>> padded = np.array([0, 0, 1, 1, 0, 0, 0], dtype=np.uint8)
    >>> at, left, again = _jump(table, padded, np.array([0, 0]), np.array([0, 4]), np.array([4, 3]))
    >>> at.tolist(), left.tolist(), again  # the first stops at its first 1, the second ends
    ([2, 7], [2, 0], True)
    """
    owner = np.repeat(np.arange(len(left)), left)
    stays = states[owner]
    out = np.flatnonzero(table[stays, padded[runs(at, left)]] != stays)
    first = out[np.concatenate(([True], owner[out[1:]] != owner[out[:-1]]))] if len(out) else out
    steps = left.copy()
    steps[owner[first]] = first - (np.cumsum(left) - left)[owner[first]]
    return at + steps, left - steps, 2 * int(steps.sum()) >= int(left.sum())


FIRST_DROP = 3
"""``walk_entries`` drops the ended and the dead after this many rounds where most died (a
space before ``FROM``: 382 tokens, 84 -> 56 us), then every 8 rounds."""
FEW_WALKING = 32
"""``walk_entries`` walks on in Python once at most this many tokens have bytes left (a
numpy round costs ~5 µs however few it walks, a byte in Python ~0.1 µs: the one 23-byte
token below a CSV field's frontier took 15 rounds alone; below a search's newlines and
UTF-8 lead bytes, ~30 tokens of 10-79 bytes (box drawing, runs of spaces) took 79)."""


def _walk_on(
    table: np.ndarray, padded: np.ndarray, states: np.ndarray, at: np.ndarray, left: np.ndarray
) -> list[bool]:
    """Whether each of a few tokens stays alive reading its ``left`` bytes from ``at`` in
    ``padded`` (``PackedVocab.padded``) from ``states``, in plain Python over the byte DFA's
    ``table``."""
    alive = []
    for state, start, size in zip(states.tolist(), at.tolist(), left.tolist(), strict=True):
        for byte in padded[start : start + size].tolist():
            if state < 0:
                break
            state = table.item(state, byte)
        alive.append(state >= 0)
    return alive
