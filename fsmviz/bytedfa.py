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
from dataclasses import dataclass

import numpy as np

from .dfa import SURROGATES, Dfa
from .graph import UNREACHABLE, backward_distances

__all__ = ["ByteDfa", "to_bytes"]

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

    def live_states(self, usable_bytes: np.ndarray | None = None) -> np.ndarray:
        """Boolean mask of states from which an accepting state is reachable, optionally
        using only the bytes where ``usable_bytes`` is true."""
        table = self.table if usable_bytes is None else np.where(usable_bytes, self.table, -1)
        sources, _ = np.nonzero(table >= 0)
        edges = np.unique(sources.astype(np.int64) * len(table) + table[table >= 0])
        cuts = np.searchsorted(edges, np.arange(1, len(table)) * len(table))
        successors = np.split(edges % len(table), cuts)
        goals = np.flatnonzero(self.accepting)
        return backward_distances(len(table), successors.__getitem__, goals) != UNREACHABLE


def to_bytes(dfa: Dfa) -> ByteDfa:
    """Rewrite each character edge of ``dfa`` as the UTF-8 byte chains it stands for, and
    drop edges into states from which acceptance is unreachable."""
    builder = _Builder(dfa.num_states)
    ranges = [cls.ranges(dfa.mentioned) for cls in dfa.classes]
    for state in dfa.states:
        pieces: list[tuple[int, int, int]] = []  # (first code point, last, target)
        for k, target in dfa.transitions[state].items():
            pieces.extend((lo, hi, target) for lo, hi in ranges[k])
        pieces.sort()
        builder.add_state(state, pieces)
    table = np.array(builder.rows, dtype=np.int32)
    accepting = np.zeros(len(table), dtype=bool)
    accepting[list(dfa.accepting)] = True
    byte_dfa = ByteDfa(table, accepting, dfa.num_states)
    live = byte_dfa.live_states()
    safe = np.where(table >= 0, table, 0)
    table[(table >= 0) & ~live[safe]] = -1
    return byte_dfa


_SLOT = 1 << 30
"""Targets of a template are slots ``_SLOT + k``: the k-th distinct target of a state."""


class _Builder:
    """Grows the byte table: one row per state, intermediate rows hash-consed.

    The multi-byte part of a state depends only on its *shape*: which code point ranges
    lead to the same target. A JSON string's states all read "any character but ``"``,
    ``\\`` and controls" into their own next state: one shape. Its byte subtrees are built
    once as a template (targets left as slots), then stamped out for each state with its
    targets filled in, every stamped row hash-consed like the rest."""

    def __init__(self, num_char_states: int):
        self.rows: list[list[int]] = [[-1] * 256 for _ in range(num_char_states)]
        self._interned: dict[tuple[tuple[int, int], ...], int] = {}
        self._chains: dict[tuple[int, int], int] = {}
        self._subtrees: dict[tuple[int, int, tuple[tuple[int, int, int], ...]], int] = {}
        self._templates: dict[tuple[_Piece, ...], _Template] = {}
        self._stamped: dict[tuple[object, ...], int] = {}

    def add_state(self, state: int, pieces: list[_Piece]) -> None:
        row = self.rows[state]
        wide: list[_Piece] = []
        for lo, hi, target in pieces:  # one-byte characters (ASCII) map directly
            if lo <= 0x7F:
                row[lo : min(hi, 0x7F) + 1] = [target] * (min(hi, 0x7F) - lo + 1)
            if hi > 0x7F:
                wide.append((max(lo, 0x80), hi, target))
        if not wide:
            return
        slots = {target: _SLOT + k for k, target in enumerate(dict.fromkeys(t for *_, t in wide))}
        shape = tuple((lo, hi, slots[target]) for lo, hi, target in wide)
        template = self._templates.get(shape)
        if template is None:
            template = self._templates[shape] = _Template.of(shape)
        targets = list(slots)
        made: list[int] = []

        def resolve(ref: int) -> int:
            return targets[ref - _SLOT] if ref >= _SLOT else made[ref]

        for j, edges in enumerate(template.rows):
            # A stamped row is known by its template row and what its references became;
            # only a new one is spelled out edge by edge and hash-consed.
            key = (shape, j, tuple(resolve(ref) for ref in template.refs[j]))
            state_id = self._stamped.get(key)
            if state_id is None:
                state_id = self._intern(tuple((byte, resolve(ref)) for byte, ref in edges))
                self._stamped[key] = state_id
            made.append(state_id)
        for lead, ref in template.leads:
            row[lead] = resolve(ref)

    def _add_wide(self, state: int, pieces: list[_Piece]) -> None:
        """The lead-byte edges of ``state`` for its multi-byte pieces (templates use it)."""
        starts = [lo for lo, _, _ in pieces]
        row = self.rows[state]
        for lead in sorted(_lead_bytes(pieces)):
            _, _, continuation, min_code = next(u for u in _UTF8_LENGTHS if u[0] <= lead <= u[1])
            base = (lead & _LEAD_BITS[continuation]) << (6 * continuation)
            target = self._subtree(pieces, starts, base, continuation, min_code)
            if target >= 0:
                row[lead] = target

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
            row = [-1] * 256
            for byte, target in edges:
                row[byte] = target
            self.rows.append(row)
        return state


@dataclass(frozen=True)
class _Template:
    """The byte subtrees of one shape: ``rows`` as sparse edges (children before parents),
    ``leads`` the lead-byte edges; a reference is a row number, or a slot."""

    rows: tuple[tuple[tuple[int, int], ...], ...]
    leads: tuple[tuple[int, int], ...]
    refs: tuple[tuple[int, ...], ...]  # the distinct references of each row

    @staticmethod
    def of(shape: tuple[_Piece, ...]) -> _Template:
        builder = _Builder(1)  # row 0 holds the lead bytes; rows 1.. the subtrees
        builder._add_wide(0, list(shape))

        def sparse(row: list[int], shift: int) -> tuple[tuple[int, int], ...]:
            return tuple((b, t if t >= _SLOT else t - shift) for b, t in enumerate(row) if t >= 0)

        rows = tuple(sparse(r, 1) for r in builder.rows[1:])
        refs = tuple(tuple(dict.fromkeys(ref for _, ref in edges)) for edges in rows)
        return _Template(rows, sparse(builder.rows[0], 1), refs)


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
