"""A token that splits a character, walking the byte-level DFA.

``[一-龥]+`` reads "日" as one character edge; the model writes it as the token ``e6 97``
then the token ``a5``. In the byte DFA (``bytedfa.to_bytes``) the first token stops in an
intermediate state *inside* the character; the second finishes it::

    0 ─e6─▶ i ─97─▶ j ─a5─▶ 1        i, j: byte states, drawn beside the character states
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fsmviz.automaton.bytedfa import ByteDfa, to_bytes
from fsmviz.automaton.dfa import Dfa, Edge
from fsmviz.learn.construction import Drawing

__all__ = ["ByteStep", "byte_drawing", "byte_walk", "MAX_BYTE_STATES"]

MAX_BYTE_STATES = 60
"""Byte DFAs larger than this are not drawn (the walk is still shown)."""


@dataclass(frozen=True)
class ByteStep:
    """Byte ``value`` of token ``token`` moved ``before`` → ``after`` (None: impossible);
    ``inside`` is true when ``after`` sits in the middle of a character."""

    token: int
    value: int
    before: int
    after: int | None
    inside: bool


def byte_walk(dfa: Dfa, tokens: list[bytes]) -> tuple[ByteDfa, list[ByteStep]]:
    """Each byte of each token read by the byte DFA of ``dfa``.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> _, steps = byte_walk(compile_regex("[一-龥]+"), [b"\\xe6\\x97", b"\\xa5"])
    >>> [(hex(s.value), s.inside) for s in steps]
    [('0xe6', True), ('0x97', True), ('0xa5', False)]
    """
    bdfa = to_bytes(dfa)
    state: int | None = 0
    steps: list[ByteStep] = []
    for t, data in enumerate(tokens):
        for value in data:
            if state is None:
                return bdfa, steps
            after = int(bdfa.table[state, value])
            after_or_none = after if after >= 0 else None
            inside = after_or_none is not None and after >= bdfa.num_char_states
            steps.append(ByteStep(t, value, state, after_or_none, inside))
            state = after_or_none
    return bdfa, steps


def _ranges(values: list[int]) -> str:
    out, start = [], None
    for i, v in enumerate(values):
        if start is None:
            start = v
        if i + 1 == len(values) or values[i + 1] != v + 1:
            out.append(f"{start:02x}" if start == v else f"{start:02x}-{v:02x}")
            start = None
    return " ".join(out)


def byte_drawing(bdfa: ByteDfa) -> Drawing | None:
    """The byte DFA as a drawing (edges labelled with hex byte ranges), or None if it has
    more than ``MAX_BYTE_STATES`` states."""
    n = bdfa.num_states
    if n > MAX_BYTE_STATES:
        return None
    edges = []
    for s in range(n):
        row = bdfa.table[s]
        for t in sorted(set(row[row >= 0].tolist())):
            values = np.flatnonzero(row == t).tolist()
            edges.append(Edge(s, t, _ranges(values), ()))
    return Drawing(n, frozenset(np.flatnonzero(bdfa.accepting).tolist()), tuple(edges))
