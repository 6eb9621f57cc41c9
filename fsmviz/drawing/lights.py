"""What a drawing lights as a run goes: the state it is in, the states and edges it has
been through, and what hovering over a state says.

The index works on bytes, the drawing on characters (``fsmviz.generation.trace.drawn_path``
walks a run's characters through the drawn DFA); here that path becomes what the drawing
lights at each step::

    steps ──drawn_path──▶ (state before, state after, edges walked) per step
          ──path_view───▶ current state, visited states, taken edges   (one step)
          ──step_lights─▶ per step, the CSS classes first lit then    (all steps: the
                          browser lights any chosen step at once)

A compact drawing (``fsmviz.drawing.compact``) folds runs of states into one edge and
counted repeats into a looped state; ``compact_lights`` says which of its nodes and links
stand for the exact states and edges lit (``7 of 40`` inside a loop). ``state_tooltips``
and ``token_distances`` are what each state says on hover: a shortest text that reaches
it, and the fewest tokens from it to a match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fsmviz.automaton.dfa import Dfa
from fsmviz.automaton.graph import UNREACHABLE
from fsmviz.diagnose.examples import example_prefixes
from fsmviz.diagnose.text import plural
from fsmviz.drawing.compact import CompactGraph
from fsmviz.generation.constraint import RegexConstraint
from fsmviz.generation.trace import Step, drawn_path
from fsmviz.tokens.index import IndexTooLarge, build_index
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "CompactLights",
    "StepLighter",
    "compact_lights",
    "natural_width",
    "path_view",
    "state_tooltips",
    "step_lights",
    "token_distances",
]


def path_view(steps: Sequence[Step], upto: int | None, dfa: Dfa):
    """(current state, visited states, taken edges) after step ``upto`` (all steps if None),
    in the drawn DFA's states (see ``drawn_path``)."""
    chosen = steps if upto is None else steps[: upto + 1]
    visited, edges = {dfa.initial}, set()
    path = drawn_path(chosen, dfa)
    for _, _, walked in path:
        edges.update(walked)
        visited.update(target for _, target in walked)
    return (path[-1][1] if path else dfa.initial), visited, edges


def step_lights(
    dfa: Dfa, graph: CompactGraph | None, steps: Sequence[Step]
) -> list[dict[str, object]]:
    """What the drawing lights when each step is chosen, as the browser applies it: for
    step ``i``, ``c`` the current node's class (``s3``) or None, ``l`` the current link's
    (a compact drawing's folded run, ``l2``) or None, ``v`` and ``e`` the node and edge
    classes first visited or taken at that step (the browser adds those of steps ``0..i``),
    ``n`` the current node's label when it tells how far into a loop (``7 of 40``), ``w``
    the drawing bar's "current state ..." text.

    ``graph``: the compact drawing's, or None for the exact drawing.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> steps = [Step(0, "a", 0, 1, 1, 1.0, (), token_bytes=b"a"),
    ...          Step(1, "b", 1, 2, 1, 1.0, (), index=1, token_bytes=b"b")]
    >>> [(lit["c"], lit["v"], lit["e"]) for lit in step_lights(compile_regex("ab"), None, steps)]
    [('s1', ['s0', 's1'], ['e0-1']), ('s2', ['s2'], ['e1-2'])]
    """
    lighter = StepLighter(dfa, graph)
    return [lighter.light(current, walked) for _, current, walked in drawn_path(steps, dfa)]


class StepLighter:
    """``step_lights`` one step at a time, for a run that streams: each step's lights
    come from the steps before it (what was first lit then), so a live run's frame
    lights only its new steps (``fsmviz.app.live``), and every step's lights are the same
    whether made while the run streams or at its end.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> lighter = StepLighter(compile_regex("ab"), None)
    >>> lighter.light(1, ((0, 1),))["v"], lighter.light(2, ((1, 2),))["v"]
    (['s0', 's1'], ['s2'])
    """

    def __init__(self, dfa: Dfa, graph: CompactGraph | None) -> None:
        self.graph = graph
        self.initial = dfa.initial
        self.shown_nodes: set[str] = set()
        self.shown_edges: set[str] = set()
        self.count = 0
        """How many steps were lit so far."""

    def light(self, current: int, walked: Sequence[tuple[int, int]]) -> dict[str, object]:
        """The lights of the next step, which ends at drawn state ``current`` after
        walking the drawn edges ``walked`` (a ``drawn_path`` entry). Only what this step
        reaches is looked at (the start too, at the first step): what the steps before it
        lit is ``shown_nodes`` and ``shown_edges`` already."""
        reached = {target for _, target in walked} | ({self.initial} if not self.count else set())
        self.count += 1
        if self.graph is None:  # the exact drawing
            node, link, note = f"s{current}", None, None
            nodes = {f"s{s}" for s in reached}
            taken = {f"e{a}-{b}" for a, b in walked}
            where = f"current state {current}"
        else:
            lit = compact_lights(self.graph, current, reached, walked)
            node = None if lit.current is None else f"s{lit.current}"
            link = next((f"l{k}" for k, c in lit.links.items() if "current" in c), None)
            note = lit.note
            nodes = {f"s{s}" for s in lit.visited}
            taken = {f"l{k}" for k, c in lit.links.items() if "taken" in c}
            where = f"current state {current}{lit.where}"
        out = {"c": node, "l": link, "v": sorted(nodes - self.shown_nodes),
               "e": sorted(taken - self.shown_edges), "n": note, "w": where}  # fmt: skip
        self.shown_nodes |= nodes
        self.shown_edges |= taken
        return out


@dataclass(frozen=True)
class CompactLights:
    """A run's place in a compact drawing: ``highlight``'s arguments, and ``where`` (what
    the drawing's bar adds after "current state N": where the fold holds it)."""

    current: int | None
    visited: frozenset[int]
    marked: frozenset[int]
    links: dict[int, frozenset[str]]
    note: str | None
    where: str

    def highlight(self) -> dict[str, object]:
        return {
            "current": self.current,
            "visited": self.visited,
            "marked": self.marked,
            "links": self.links,
            "note": self.note,
        }


def compact_lights(
    graph: CompactGraph,
    current: int,
    visited: Iterable[int],
    edges: Iterable[tuple[int, int]],
    marked: Iterable[int] = (),
) -> CompactLights:
    """Exact states and edges (from ``path_view``) as the compact drawing lights them: a
    node by the first exact state it folds (its name in the drawing), a link by its id.

    A state inside a counted repeat lights the looped node, whose label says how far in it
    is (``7 of 40``); one along a folded run lights that edge as current.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> from fsmviz.drawing.compact import compact
    >>> graph = compact(compile_regex("[a-z]{3,40}@x"))
    >>> lit = compact_lights(graph, graph.nodes[0].states[7], [0], [])
    >>> lit.current, lit.note, lit.where
    (0, '7 of 40', ': in the loop of state 0, 7 of 40 read')
    """
    place = graph.places[current]
    links: dict[int, set[str]] = {}
    for edge in edges:
        links.setdefault(graph.edge_links[edge], set()).add("taken")
    first = [node.first for node in graph.nodes]  # the drawing names nodes after them
    marked_nodes = set()
    for s in marked:
        at = graph.places[s]
        if at.link is not None:
            links.setdefault(at.link, set()).add("marked")
        elif at.node is not None:
            marked_nodes.add(first[at.node])
    note, where = None, ""
    if place.link is not None:
        links.setdefault(place.link, set()).add("current")
        link = graph.links[place.link]
        where = f": {place.index} of {place.of} along “{link.label}”"
    elif place.of:
        note = f"{place.index} of {place.of}"
        where = f": in the loop of state {first[place.node]}, {note} read"
    return CompactLights(
        None if place.node is None else first[place.node],
        frozenset(first[n] for n in (graph.places[s].node for s in visited) if n is not None),
        frozenset(marked_nodes),
        {k: frozenset(v) for k, v in links.items()},
        note,
        where,
    )


def state_tooltips(dfa: Dfa, distances: Sequence[int] | None = None) -> list[str]:
    """What hovering over each state says: a shortest text that reaches it and, when the
    fewest tokens to a match are known (``distances``, from ``token_distances``), those.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> for tip in state_tooltips(compile_regex("ab|c"), [1, 1, 0]):
    ...     print(tip)
    state 0: the start; 1 token to a match
    state 1: after “a”; 1 token to a match
    state 2: after “c”; a match may end here
    """
    tips = []
    for s, prefix in enumerate(example_prefixes(dfa)):
        tip = f"state {s}: " + (f"after “{prefix}”" if s != dfa.initial else "the start")
        if distances is not None:
            d = distances[s]
            if d >= UNREACHABLE:
                tip += "; cannot finish: no tokens from here spell a match"
            elif d > 0:
                tip += f"; {plural(d, 'token')} to a match"
            elif s in dfa.accepting:
                tip += "; a match may end here"
        tips.append(tip)
    return tips


def token_distances(dfa: Dfa | RegexConstraint, vocab: Vocabulary) -> list[int] | None:
    """Fewest tokens from each drawn state to a match: 0 where one may end, ``UNREACHABLE``
    where no sequence of the vocabulary's tokens finishes one (the drawing and the tooltip
    say "cannot finish"); None when the index is too large to walk in full (the doctor
    says so).

    >>> from fsmviz import Vocabulary, compile_regex
    >>> token_distances(compile_regex("ab|c"), Vocabulary.from_strings(["a", "b", "c"]))
    [1, 1, 0]
    >>> far = token_distances(compile_regex("ab|c"), Vocabulary.from_strings(["a", "c"]))
    >>> far[1] == UNREACHABLE  # after "a" a "b" is needed, and no token spells it
    True
    """
    try:
        index = dfa.index if isinstance(dfa, RegexConstraint) else build_index(dfa, vocab)
        dfa = dfa.dfa if isinstance(dfa, RegexConstraint) else dfa
        far = index.token_distances()[: dfa.num_states]
    except IndexTooLarge:
        return None
    return [int(d) for d in far]


def natural_width(svg: str) -> int:
    """The drawing's width in CSS pixels at graphviz's own scale (its ``data-width`` is in
    points): the page draws it at least this wide, so labels stay readable, and scrolls."""
    found = re.search(r'data-width="([0-9.]+)pt"', svg)
    return round(float(found.group(1)) * 4 / 3) if found else 0
