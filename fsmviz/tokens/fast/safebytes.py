"""Bytes a set of states reads back into itself: tokens of them need no walk.

What it answers: a set of states ``S`` and of ASCII bytes ``B`` where each state of ``S``
reads each byte of ``B`` into ``S`` (``_safe_bytes``). A token all of whose bytes lie in
``B``, read from a state of ``S``, never falls off: ``walkbelow.walk_below`` takes such
tokens below a frontier unwalked (``_unharmed``), and ``searchwords`` takes a state's
tokens of ``B`` as words (``PackedVocab.inside``, ``packwalk``).
"""

from __future__ import annotations

import numpy as np

from fsmviz.arrays import distinct
from fsmviz.tokens.fast.packwalk import _ASCII_BYTES, PackedVocab, _bits
from fsmviz.tokens.trie import VocabTrie

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
