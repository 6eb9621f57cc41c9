"""Backward breadth-first search: how far each state is from a goal.

Several questions about an automaton are one question asked backwards. *Which states can
still finish?* (pruning dead states), *how many characters to a match?* (the drawing's
hints), *how many tokens to a match?* (the safe end): each is a breadth-first search that
starts from the accepting states and follows edges against their direction.

    >>> successors = {0: [1], 1: [2, 0], 2: [], 3: [3]}
    >>> backward_distances(4, successors.__getitem__, goals=[2]).tolist()
    [2, 1, 0, 4611686018427387904]

State 3 only loops on itself and never reaches state 2: its distance is ``UNREACHABLE``,
the one value this project uses for "no way to a goal". It is larger than any real
distance, so a comparison such as ``distances[targets] <= tokens_left`` is false for it
without a special case.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

__all__ = ["UNREACHABLE", "backward_distances"]

UNREACHABLE = 2**62
"""The distance of a state from which no goal can be reached."""


def backward_distances(
    size: int,
    successors: Callable[[int], Iterable[int]],
    goals: Iterable[int],
    nodes: Iterable[int] | None = None,
) -> np.ndarray:
    """Fewest edges from each state ``0 .. size-1`` to one of ``goals`` (0 for a goal,
    ``UNREACHABLE`` where none can be reached), as an int64 array.

    ``successors(s)`` lists the states one edge after ``s``; it is asked once for each of
    ``nodes`` (all states by default), to build the reversed graph."""
    predecessors: list[list[int]] = [[] for _ in range(size)]
    for source in range(size) if nodes is None else nodes:
        following = successors(source)
        # Plain ints: a numpy scalar costs ten times more per look-up in this loop.
        for target in following.tolist() if isinstance(following, np.ndarray) else following:
            predecessors[target].append(source)
    distances = [UNREACHABLE] * size
    frontier = sorted(set(goals))
    for goal in frontier:
        distances[goal] = 0
    level = 0
    while frontier:
        level += 1
        reached = []
        for target in frontier:
            for source in predecessors[target]:
                if distances[source] == UNREACHABLE:
                    distances[source] = level
                    reached.append(source)
        frontier = reached
    return np.array(distances, dtype=np.int64)
