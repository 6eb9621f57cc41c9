"""From regex to grammar: why balanced brackets need a stack, in numbers and pictures.

A DFA remembers only which state it is in. To check that brackets balance it must count
the open ones, one state per count: brackets nested at most ``k`` deep need ``k + 1``
states, and the regex that says so nests ``k`` groups. No finite automaton checks them
to any depth. The grammar says it in one rule whatever the depth::

    root ::= ( "(" root ")" )*

drawn as one small automaton whose middle edge *calls* ``root`` again. What is added to
the DFA is exactly a **stack**: each call pushes the place to come back to, each end of
the rule pops it. The parser's place after ``(((`` is three positions deep
(``fsmviz.grammar.place``), where the DFA for depth 3 would be in its state 3 and the DFA
for depth 2 would be dead.

    >>> brackets_regex(2)
    '(\\\\((\\\\(\\\\))*\\\\))*'
    >>> [(row.depth, row.states) for row in brackets_rows(4)]
    [(1, 2), (2, 3), (3, 4), (4, 5)]
"""

from __future__ import annotations

from dataclasses import dataclass

from fsmviz.automaton.dfa import Dfa, compile_regex

__all__ = ["BRACKETS_GRAMMAR", "BracketsRow", "brackets_dfa", "brackets_regex", "brackets_rows"]

BRACKETS_GRAMMAR = 'root ::= ( "(" root ")" )*\n'
"""Balanced brackets to any depth, in GBNF: one rule."""


def brackets_regex(depth: int) -> str:
    """Balanced brackets nested at most ``depth`` deep, as a regex (each level one more
    group around the last)."""
    if depth < 0:
        raise ValueError(f"depth must be 0 or more, not {depth}")
    inner = ""
    for _ in range(depth):
        inner = rf"(\({inner}\))*"
    return inner


def brackets_dfa(depth: int) -> Dfa:
    """The minimal DFA of ``brackets_regex(depth)``."""
    return compile_regex(brackets_regex(depth))


@dataclass(frozen=True)
class BracketsRow:
    """Depth ``depth``: the regex's length and its minimal DFA's state count."""

    depth: int
    regex: str
    states: int


def brackets_rows(max_depth: int) -> list[BracketsRow]:
    """One row per depth 1..``max_depth``: the DFA grows with the depth, the grammar not."""
    return [
        BracketsRow(k, brackets_regex(k), brackets_dfa(k).num_states)
        for k in range(1, max_depth + 1)
    ]
