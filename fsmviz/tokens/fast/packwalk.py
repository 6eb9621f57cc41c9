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

This module is the base the shortcuts share: ``PackedVocab`` (the words and the frontier
nodes of a vocabulary, by byte), ``Prefix`` (the tokens below a first byte or two) and
the sets of bytes as ints of 256 bits. Each shortcut for ``bitmask`` lives in a module of
its own, over this one:

* ``chains``: a state's chain, its words and its frontier (the method above);
* ``walkbelow``: the tokens below frontier nodes that the DFA reads to their end, pair by
  pair then token by token, some taken unwalked (``safebytes``);
* ``closedsets``: states whose bytes lead back among themselves (a loop, a closed set),
  each allowing the tokens of its bytes;
* ``searchwords``: a search's merged blocks, whose ASCII bytes close a set of states;
* ``firstbytes``: a state from whose bytes few tokens begin, walked token by token.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fsmviz.arrays import runs
from fsmviz.cache import OwnedCache, bounded
from fsmviz.tokens.trie import VocabTrie

__all__ = ["PackedVocab", "Prefix", "byte_runs", "packed_vocab"]


CANDIDATES = 12_000
"""Trie nodes of a chain's leaving bytes looked at for its frontier, at most."""


_ALL = (1 << 256) - 1
_HIGH = ((1 << 128) - 1) << 128  # the bytes 0x80-0xFF
_ASCII_BYTES = (1 << 128) - 1
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
    clash = None
    for word in range(4):  # only the words of ``out`` that hold a byte are read
        bits = out >> (64 * word) & _WORD
        if bits:
            part = above[word, read] & np.uint64(bits)  # a view for a slice, else a gather
            clash = part if clash is None else np.bitwise_or(clash, part, out=clash)
    if clash is None:
        return np.ones(len(above[0, read]), dtype=bool)
    return clash == 0


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


FEW_FIRST = 256
"""A first byte that at most this many tokens begin with is light (``PackedVocab.light``
lists them, for ``firstbytes.few_first_words`` to walk token by token); one that more
begin with is busy (``PackedVocab.busy``)."""


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


def _root_children(trie: VocabTrie) -> np.ndarray:
    """By byte, the root's child of that byte (-1: none)."""
    first = int(trie.first_child[0])
    kids = np.arange(first, first + int(trie.num_children[0]))
    found = np.full(256, -1, dtype=np.int64)
    found[trie.byte[kids]] = kids
    return found


FEW_BELOW = 48
"""A frontier with at most this many tokens below it is walked in plain Python, and the
tokens found are set one by one."""


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
