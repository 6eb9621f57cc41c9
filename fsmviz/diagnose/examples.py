"""Readable example texts for DFA states: how to get there, how to finish, how to go round.

Messages point at states by example (``after `a@a.` (state 4)``), not by number alone. Each
character class is shown by its most readable member: ``a`` for a letter, ``0`` for a digit,
for "any other character" one the pattern never mentions. Every example is a shortest path
that takes the most readable edge wherever it has a choice.
"""

from __future__ import annotations

from collections import deque

from fsmviz.automaton.dfa import Dfa
from fsmviz.cache import bounded

_PREFERRED = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def rank(char: str) -> tuple[int, int]:
    """Readability order: letters, digits, capitals, punctuation, space, the rest. No two
    characters rank alike, so neither do the representatives of two classes."""
    if char in _PREFERRED:
        return (0, _PREFERRED.index(char))
    if char.isascii() and char.isprintable() and char != " ":
        return (1, ord(char))
    if char == " ":
        return (2, 0)
    if char.isprintable():
        return (3, ord(char))
    return (4, ord(char))


@bounded(maxsize=4096)
def representative(dfa: Dfa, k: int) -> str:
    """A readable character of class ``k``."""
    cls = dfa.classes[k]
    if cls.chars:
        return min(cls.chars, key=rank)
    for char in _PREFERRED + "!#%&*,;:=~_-/":
        if char not in dfa.mentioned:
            return char
    for code in range(0xA1, 0x3000):
        char = chr(code)
        if char.isprintable() and char not in dfa.mentioned:
            return char
    lo, _ = cls.ranges(dfa.mentioned)[0]
    return chr(lo)


def readable_edges(dfa: Dfa, state: int) -> list[tuple[int, int]]:
    """The (class, target) edges leaving ``state``, most readable character first."""
    return sorted(dfa.transitions[state].items(), key=lambda kt: rank(representative(dfa, kt[0])))


def example_prefixes(dfa: Dfa) -> list[str]:
    """For each state, a shortest text that leads there from the start, spelled with readable
    characters (``a`` for a letter, ``0`` for a digit). ``""`` for state 0."""
    prefix: list[str | None] = [None] * dfa.num_states
    prefix[dfa.initial] = ""
    queue = deque([dfa.initial])
    while queue:
        state = queue.popleft()
        for k, target in readable_edges(dfa, state):
            if prefix[target] is None:
                prefix[target] = prefix[state] + representative(dfa, k)  # type: ignore[operator]
                queue.append(target)
    return [p if p is not None else "" for p in prefix]


def completion(dfa: Dfa, distances: list[int], state: int) -> str:
    """A shortest readable text from ``state`` to a match (``distances``: ``dfa.distances()``;
    empty from an accepting state, and from one that cannot finish, ``UNREACHABLE``)."""
    out = []
    while distances[state] > 0:
        closer = [
            (k, t) for k, t in readable_edges(dfa, state) if distances[t] == distances[state] - 1
        ]
        if not closer:
            break
        k, state = closer[0]
        out.append(representative(dfa, k))
    return "".join(out)


def lap(dfa: Dfa, entry: int, members: set[int]) -> tuple[str, tuple[int, ...]]:
    """A shortest readable text going from ``entry`` round back to it inside ``members``,
    and the states it passes (starting with ``entry``)."""
    parent: dict[int, tuple[int, str]] = {}
    queue = deque([entry])
    while queue and entry not in parent:
        state = queue.popleft()
        for k, target in readable_edges(dfa, state):
            if target in members and target not in parent:
                parent[target] = (state, representative(dfa, k))
                if target == entry:
                    break
                queue.append(target)
    chars, path, state = [], [], entry
    while True:
        source, char = parent[state]
        chars.append(char)
        path.append(source)
        state = source
        if state == entry:
            break
    return "".join(reversed(chars)), tuple(reversed(path))
