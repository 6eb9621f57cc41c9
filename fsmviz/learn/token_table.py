"""Seed 001's transition table: rows are states, columns are token ids, a cell is the
state that token moves to (blank: not allowed).

Seed 001 builds it as a tensor ``state_transitions[state, token_id] -> next state`` so that
masking is one row lookup inside the model's graph. Over a real vocabulary most columns
are blank in every row, so only the tokens that move from some state are shown: for
``[0-9]{2}`` over SmolLM2, the ten digit tokens (it spells numbers digit by digit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fsmviz.tokens.index import build_index
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["TokenTable", "token_table"]

MAX_STATES = 40


@dataclass(frozen=True)
class TokenTable:
    """The table, ``cells[r][c]`` the state after ``tokens[c]`` from ``states[r]`` (None:
    not allowed). ``moving``: how many distinct tokens move from some state (the columns
    shown are the first ``len(tokens)`` by id)."""

    pattern: str
    states: tuple[int, ...]
    accepting: tuple[bool, ...]
    tokens: tuple[int, ...]
    texts: tuple[str, ...]
    cells: tuple[tuple[int | None, ...], ...]
    moving: int


def token_table(pattern: str, vocab: Vocabulary, limit: int = 40) -> TokenTable:
    """The transition table of ``pattern`` over ``vocab``'s tokens (at most ``limit``
    columns and ``MAX_STATES`` rows). Raises ``RegexError`` for a bad pattern.

    >>> v = Vocabulary.from_strings(["a", ".", ".2", "1"])
    >>> t = token_table("[0-9]+\\\\.[0-9]+", v)
    >>> t.texts, t.cells
    (('.', '.2', '1'), ((None, None, 1), (2, 3, 1), (None, None, 3), (None, None, 3)))
    """
    index = build_index(pattern, vocab)
    states = tuple(sorted(index.states))[:MAX_STATES]
    rows = {s: index.row(s) for s in states}
    moving = np.unique(np.concatenate([r.tokens for r in rows.values()] or [np.zeros(0, int)]))
    shown = tuple(int(t) for t in moving[:limit])
    cells = tuple(tuple(rows[s].target_of(t) for t in shown) for s in states)
    return TokenTable(
        pattern,
        states,
        tuple(index.is_accepting(s) for s in states),
        shown,
        tuple(vocab.token_text(t) for t in shown),
        cells,
        len(moving),
    )
