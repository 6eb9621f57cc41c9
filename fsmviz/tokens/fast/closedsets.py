"""States whose bytes lead back among themselves: each allows the tokens of its bytes.

What it answers: where every state reachable from a state (or a loop, or a set of states
alike) reads the same bytes ``B`` back into the set, a token lives exactly when its bytes
lie in ``B`` (and, past ASCII, when the set reads them as a kind of UTF-8): its packed
words are ``PackedVocab.inside(B)`` (``packwalk``), a few ORs, with no walk and no
frontier. ``utf8_loop`` tells which kind of UTF-8 a loop reads back into itself;
``looped_words`` (``[^=]+``), ``closed_words`` (``.*a``), ``ascii_closed_words``
(``[a-z0-9_-]+``) and ``entered_closed_words`` (a start leading into such a set) are the
shortcuts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from fsmviz.automaton.dfa import set_bits
from fsmviz.tokens.fast.firstbytes import FIRST_BYTES
from fsmviz.tokens.fast.packwalk import (
    _ASCII_BYTES,
    _HIGH,
    _UTF8,
    _UTF8_DEAD,
    PackedVocab,
    Prefix,
)

__all__ = [
    "ascii_closed_words",
    "closed_words",
    "entered_closed_words",
    "looped_words",
    "utf8_loop",
]


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
    less ``utf8_bad`` (~10 µs). ``[^=]+``, ``.+``, ``[^ ]+``: no chain or closed set takes
    them, and the row walk below the loop cost ~0.3 ms. ``reads(s)``: the bytes ``s``
    reads (256 bits).

    Its twin, ``levelwalk.loop_tokens(trie, B, beyond=True)``, names the same tokens as
    ids where the kind is 1 (every character past ASCII; kind 2, without the C1
    controls, it has no flag for), read off ``Spelt``'s facts per token id for the
    first allowed set (``derivatives``), where this reads ``PackedVocab``'s words per
    byte set for the bitmask: a test of every token and its packing cost ~0.28 ms, the
    words ~0.011 ms; ``loop_tokens`` read off these words (unpacked) took 0.10 against
    0.12 ms for ``[^=]``, 0.21 against 0.11 for ``[a-z]``, and would need a
    ``PackedVocab`` (~0.15 s a vocabulary) and its ``head`` anew. Held equal by
    ``test_utf8_loop_bitmask.test_looped_words_are_loop_tokens``."""
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
    vocab: PackedVocab, table: np.ndarray, state: int, reads: Callable[[int], int] | None = None
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
    ``state`` took a round a level: 14 for ``warning: ``). ``reads(s)`` (the bytes ``s``
    reads, 256 bits, kept by the caller): where given, a state one of whose ASCII bytes
    leads to a state reading other bytes is refused at once, as the first round would
    drop it (``[^a-df-zA-DF-Z\\s]+``'s loop: a digit leads where a unit's letters are read
    too; the rounds over the table cost ~40 µs).

    >>> from fsmviz import Vocabulary, build_index
    >>> from fsmviz.tokens.fast.packwalk import packed_vocab
    >>> index = build_index(".*a", Vocabulary.from_strings(["a", "ba", "b", "\\n"]))
    >>> members, words = closed_words(packed_vocab(index.trie, 5), index.byte_dfa.table, 0)
    >>> sorted(members), words.tolist()  # "a", "ba", "b" from both states; not the newline
    ([0, 1], [7])
    """
    if reads is not None and not _leads_alike(table, state, reads):
        return None
    ascii_read = table[state, :0x80] >= 0
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
    allowed = int.from_bytes(np.packbits(ascii_read, bitorder="little").tobytes(), "little")
    if not (table[ordered, 0x80:] >= 0).any():
        return ordered, vocab.inside(allowed)
    after = int(table[state, 0xC2])  # U+0080 read or not: which kind to check
    kind = 1 if after >= 0 and table[after, 0x80] >= 0 else 2
    if not _reads_into(table, np.array(ordered), _UTF8[kind - 1]):
        return None
    return ordered, vocab.inside(allowed | _HIGH) & ~vocab.utf8_bad[kind - 1]


def _leads_alike(table: np.ndarray, state: int, reads: Callable[[int], int]) -> bool:
    """Whether every ASCII byte ``state`` reads leads to a state reading the same bytes as
    it (``reads(s)``: 256 bits), as every member of a closed set's does."""
    bits = reads(state)
    targets = set(table[state, :0x80].tolist())
    return all(reads(target) == bits for target in targets if target >= 0)


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
