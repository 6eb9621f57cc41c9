"""Loops: the DFA's cycles, the repeat of the pattern that makes each, and how to bound it.

A cycle lets a model that does not choose to stop go on forever. To name it in the
pattern's own words we need the repeat behind it, but DFA states do not remember which
part of the pattern made them. So we build a witness text that goes round the cycle three
times, wrap every unbounded repeat of the pattern in a named group, and ask the ``regex``
module which group captured the middle lap. Cycles nested in a larger one are found by
removing its entry state and looking again. The fix is a bounded repeat, checked to compile.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from fsmviz.automaton.dfa import Dfa
from fsmviz.diagnose.examples import completion, lap
from fsmviz.diagnose.fragments import PatternNode, fullmatch, instrument
from fsmviz.diagnose.rewrites import bounded_loop, rewrite


def sccs(nodes: Iterable[int], successors: Callable[[int], Iterable[int]]) -> list[list[int]]:
    """Strongly connected components (Tarjan, iterative), each sorted, in reverse
    topological order (a component comes before those that lead to it)."""
    order: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    out: list[list[int]] = []
    for root in nodes:
        if root in order:
            continue
        order[root] = low[root] = len(order)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(successors(root)))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in order:
                    order[child] = low[child] = len(order)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors(child))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], order[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == order[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    out.append(sorted(component))
    return out


def is_cycle(component: Sequence[int], successors: Callable[[int], Iterable[int]]) -> bool:
    """Whether a strongly connected component holds a cycle (several states, or a self-loop)."""
    return len(component) > 1 or component[0] in successors(component[0])


def cycle_ids(
    components: Sequence[Sequence[int]], successors: Callable[[int], Iterable[int]]
) -> dict[int, int]:
    """Each state on a cycle -> the position of its component in ``components``."""
    return {s: i for i, comp in enumerate(components) if is_cycle(comp, successors) for s in comp}


@dataclass(frozen=True, eq=False)
class Loop:
    """A cycle of the DFA: its states, the state it is entered by, a text going round once
    from there (and the states passed), and the repeat of the pattern that makes it."""

    states: tuple[int, ...]
    entry: int
    lap: str
    path: tuple[int, ...]
    node: PatternNode | None
    accepting: bool


class LoopFix(NamedTuple):
    """A loop's repeat bounded: the rewritten pattern, the new fragment, and why."""

    pattern: str
    fragment: str
    why: str


def find_loops(
    pattern: str, dfa: Dfa, repeats: list[PatternNode], prefixes: list[str], distances: list[int]
) -> list[Loop]:
    """The DFA's loops, outer ones first and nested ones when they belong to another
    repeat of the pattern; one loop per repeat (a repeat inside ``{2}`` or copied by
    minimisation makes several DFA loops: they are one thing to fix). ``repeats`` are
    the pattern's unbounded repeats, ``prefixes`` and ``distances`` the DFA's example
    prefixes and character distances to a match."""
    instrumented = (
        instrument(pattern, [(r.start, r.end, f"fsmvizR{i}") for i, r in enumerate(repeats)])
        if repeats
        else None
    )

    def repeat_of(entry: int, lap_text: str) -> PatternNode | None:
        """The innermost unbounded repeat whose capture holds the middle lap of a witness
        that goes round three times."""
        if instrumented is None:
            return None
        prefix = prefixes[entry]
        witness = prefix + lap_text * 3 + completion(dfa, distances, entry)
        lo, hi = len(prefix) + len(lap_text), len(prefix) + 2 * len(lap_text)
        match = fullmatch(instrumented, witness)
        best: tuple[int, PatternNode] | None = None
        if match is not None:
            for i, node in enumerate(repeats):
                for start, end in match.spans(f"fsmvizR{i}"):
                    if start <= lo and hi <= end and (best is None or end - start < best[0]):
                        best = (end - start, node)
        return best[1] if best is not None else None

    found: list[Loop] = []

    def visit(members: set[int], top: bool) -> None:
        def inside(s: int) -> list[int]:
            return [t for t in dfa.transitions[s].values() if t in members]

        for comp in sccs(sorted(members), inside):
            if not is_cycle(comp, inside):
                continue
            entry = min(comp, key=lambda s: (len(prefixes[s]), s))
            lap_text, path = lap(dfa, entry, set(comp))
            node = repeat_of(entry, lap_text)
            if top or (node is not None and all(loop.node is not node for loop in found)):
                accepting = any(dfa.is_accepting(s) for s in comp)
                found.append(Loop(tuple(comp), entry, lap_text, path, node, accepting))
            visit(set(comp) - {entry}, False)

    visit(set(dfa.states), True)
    found.sort(key=lambda loop: (len(prefixes[loop.entry]), loop.entry))
    return _one_per_repeat(found)


def _one_per_repeat(loops: list[Loop]) -> list[Loop]:
    """Loops of the same repeat merged into the first of them (their states joined)."""
    merged: list[Loop] = []
    by_node: dict[PatternNode, int] = {}
    for loop in loops:
        i = by_node.get(loop.node) if loop.node is not None else None
        if i is None:
            if loop.node is not None:
                by_node[loop.node] = len(merged)
            merged.append(loop)
        else:
            merged[i] = dataclasses.replace(
                merged[i],
                states=tuple(sorted({*merged[i].states, *loop.states})),
                accepting=merged[i].accepting or loop.accepting,
            )
    return merged


def loop_for(loops: Iterable[Loop], states: Iterable[int]) -> Loop | None:
    """The innermost loop holding all of ``states``."""
    wanted = set(states)
    holding = [loop for loop in loops if wanted and wanted <= set(loop.states)]
    return min(holding, key=lambda loop: len(loop.states)) if holding else None


def dot_reopens(dfa: Dfa, loop: Loop) -> bool:
    """Whether, inside an accepting loop, a `.` leads to a state that is not a match:
    the model that means `.` as the end of its sentence must then write more."""
    if not loop.accepting:
        return False
    for s in loop.states:
        t = dfa.step(s, ".")
        if t is not None and t in loop.states and not dfa.is_accepting(t):
            return True
    return False


def bounded_fix(
    pattern: str,
    dfa: Dfa,
    loop: Loop,
    loops: list[Loop],
    repeats: list[PatternNode],
    *,
    twins: bool = False,
) -> LoopFix | None:
    r"""The pattern with the loop's repeat bounded, or None.

    Copies of the same repeat text that no other loop claims are bounded too: patterns like
    the JSON seed repeat their structure, and the DFA shares one loop between them. With
    ``twins``, copies with loops of their own as well: a run that rode the first `[a-z]+` of
    ``[a-z]+@[a-z]+\.com`` rides the second once the first is bounded, so a run's fix bounds
    both (a pattern-level finding names one repeat, and bounds that one). When the rewrite
    does not compile (a bound inside an ambiguous part makes the DFA count in many places
    at once), smaller bounds are tried."""
    if loop.node is None:
        return None
    fragment = pattern[loop.node.start : loop.node.end]
    claimed = set() if twins else {o.node for o in loops if o is not loop and o.node is not None}
    copies = [
        n
        for n in repeats
        if n is loop.node or (pattern[n.start : n.end] == fragment and n not in claimed)
    ]
    reopens = dot_reopens(dfa, loop)
    for shrink in (1, 2, 4, 8):
        new, why = bounded_loop(pattern, loop.node, reopens, shrink)
        rewritten = rewrite(pattern, [(n, new) for n in copies])
        if rewritten:
            return LoopFix(rewritten, new, why)
    return None
