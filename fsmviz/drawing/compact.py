"""A DFA's compact drawing: long chains of states folded into edges and looped states.

The exact DFA of ``[a-z]{3,40}@[a-z]{2,30}\\.(com|org|net|edu|io)`` has 83 states: one per
letter counted. Drawn as such it is a staircase of 83 circles. A reader thinks of it as
"3 to 40 letters, an @, 2 to 30 letters, a dot, one of five endings", and the compact
drawing says just that, with two folds:

* **Runs.** A state with one way in and one way out that is neither the start nor
  accepting adds nothing but a step: a run of them is one edge, labelled with what it
  reads, ``[a-z]{3}`` for a class read three times, the literal text ``com`` or
  ``http://`` for single characters.
* **Counted repeats.** A chain of states that each read the *same* class to go on, where
  nothing enters in the middle, and whose other edges ("exits") lead, label for label, to
  the same places, counts how often the class was read. It is drawn as *one* looped state
  whose self-loop says the count: ``[a-z] ×3..40`` (exits and the end of a match are
  possible after 3 to 40 letters). An exit possible after fewer counts than the others
  says so on its edge (``@ after 5..40``).

Every exact state keeps a ``CompactPlace`` in the compact drawing (a node, and how far into its
count; or a link, and how far along its run), so a generation's current state can still
be lit, and every exact edge belongs to one ``Link``, so the walked path can be too.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> graph = compact(compile_regex(r"[a-z]{3,40}@[a-z]{2,30}\\.(com|org|net|edu|io)"))
    >>> [(node.first, node.loop) for node in graph.nodes]
    [(0, '[a-z] ×3..40'), (4, '[a-z] ×2..30'), (10, None), (22, None)]
    >>> for link in graph.links:
    ...     print(graph.nodes[link.source].first, link.label, graph.nodes[link.target].first)
    0 [a-z] ×3..40 0
    0 @ 4
    4 [a-z] ×2..30 4
    4 . 10
    10 com 22
    10 edu 22
    10 io 22
    10 net 22
    10 org 22
    >>> graph.places[graph.nodes[0].states[7]]  # 7 letters read, of at most 40
    CompactPlace(node=0, link=None, index=7, of=40)

The engine draws nothing itself: ``fsmviz.drawing.render`` turns a ``CompactGraph`` into DOT.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from fsmviz.automaton.dfa import Dfa

__all__ = ["CompactGraph", "Link", "Node", "CompactPlace", "compact", "counts_text"]


@dataclass(frozen=True)
class Node:
    """A state of the compact drawing: one exact state, or a counted repeat's chain."""

    id: int
    states: tuple[int, ...]
    """The exact states it stands for; in a counted repeat, ``states[i]`` is "read the
    class ``i`` times"."""
    accepting: bool
    loop: str | None = None
    """A counted repeat's self-loop label (``[a-z] ×3..40``), None for a plain state."""
    ends: tuple[int, ...] = ()
    """Counted repeat: after how many reads a match may end here (empty if never)."""

    @property
    def first(self) -> int:
        """The exact state the node is named after (the first of its chain)."""
        return self.states[0]


@dataclass(frozen=True)
class Link:
    """An edge of the compact drawing: one exact edge, a run of them, or a loop."""

    id: int
    source: int
    target: int
    """Node ids."""
    label: str
    edges: tuple[tuple[int, int], ...]
    """The exact edges it stands for: a run's edges in order, or all the edges a counted
    repeat's loop or exit merges."""
    inside: tuple[int, ...] = ()
    """A run's exact states between its ends, in order."""


@dataclass(frozen=True)
class CompactPlace:
    """Where an exact state is drawn: in ``node`` (``index`` reads of ``of`` in a counted
    repeat, 0 of 0 for a plain state) or along ``link`` (``index`` characters of ``of``)."""

    node: int | None
    link: int | None
    index: int
    of: int


@dataclass(frozen=True)
class CompactGraph:
    """The compact drawing of a DFA: nodes, links and where each exact state went."""

    nodes: tuple[Node, ...]
    links: tuple[Link, ...]
    places: tuple[CompactPlace, ...]
    """``places[s]`` for every exact state ``s``."""
    edge_links: Mapping[tuple[int, int], int]
    """Exact edge (source, target) -> the link that draws it."""
    initial: int
    """The node holding the exact initial state."""

    @property
    def num_states(self) -> int:
        return len(self.nodes)


@dataclass(frozen=True)
class _Out:
    """An exact edge as compaction reads it: where it goes, its label, one character?"""

    target: int
    label: str
    literal: bool


def compact(dfa: Dfa) -> CompactGraph:
    """Fold ``dfa``'s runs into links and its counted repeats into looped nodes (see the
    module's docstring). A DFA without either comes back with one node per state and one
    link per drawn edge."""
    outs = _outs(dfa)
    sources = _sources(dfa, outs)

    def threaded(s: int, t: int) -> bool:
        """``t`` is entered only from ``s`` (and is not ``s``)."""
        return t != s and sources[t] == {s}

    order = _order(dfa, outs)
    repeats = _repeats(dfa, outs, order, threaded)
    in_repeat = {s for chain in repeats for s in chain}

    def passes(t: int) -> bool:
        """``t`` is a mere step of a run: one way in, one way out, nothing else."""
        return (
            t not in in_repeat
            and t != dfa.initial
            and t not in dfa.accepting
            and len(outs[t]) == 1
            and outs[t][0].target != t
            and len(sources[t]) == 1
        )

    heads = {chain[0]: chain for chain in repeats}
    chains = [heads.get(s, (s,)) for s in order if s in heads or not (s in in_repeat or passes(s))]
    node_of = {s: k for k, chain in enumerate(chains) for s in chain}
    drawn = _Drawn()
    for k, chain in enumerate(chains):
        _draw_node(drawn, k, chain, dfa, outs, passes, node_of)
    return CompactGraph(
        tuple(drawn.nodes),
        tuple(drawn.links),
        tuple(drawn.places[s] for s in dfa.states),
        drawn.edge_links,
        node_of[dfa.initial],
    )


@dataclass
class _Drawn:
    """The compact drawing while it is made: its nodes and links so far, where each
    exact state went, and which link draws each exact edge."""

    nodes: list[Node] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    places: dict[int, CompactPlace] = field(default_factory=dict)
    edge_links: dict[tuple[int, int], int] = field(default_factory=dict)

    def link(
        self,
        source: int,
        target: int,
        label: str,
        edges: Sequence[tuple[int, int]],
        inside: Sequence[int] = (),
    ) -> None:
        """Add a link from node ``source`` to node ``target`` drawing the exact ``edges``,
        the states ``inside`` a run placed along it."""
        k = len(self.links)
        self.links.append(Link(k, source, target, label, tuple(edges), tuple(inside)))
        for edge in edges:
            self.edge_links[edge] = k
        for i, s in enumerate(inside, 1):
            self.places[s] = CompactPlace(None, k, i, len(inside) + 1)


def _draw_node(
    drawn: _Drawn,
    k: int,
    chain: tuple[int, ...],
    dfa: Dfa,
    outs: list[list[_Out]],
    passes: Callable[[int], bool],
    node_of: Mapping[int, int],
) -> None:
    """Draw node ``k`` for ``chain`` (one state, or a counted repeat's states): the node,
    its loop when counted, and one link per exit, following the run behind it through
    states that merely ``passes`` to the node where it ends."""
    counted = len(chain) > 1
    for i, s in enumerate(chain):
        drawn.places[s] = CompactPlace(k, None, i, len(chain) - 1)
    ends = tuple(i for i, s in enumerate(chain) if s in dfa.accepting) if counted else ()
    exits, loop_edges = _exits(chain, outs)
    everywhere = sorted({i for at in exits.values() for i in at} | set(ends))
    loop = None
    if counted:
        cls = next(o.label for o in outs[chain[0]] if o.target == chain[1])
        loop = f"{_class_text(cls)} ×{counts_text(everywhere)}"
        drawn.link(k, k, loop, loop_edges)
    drawn.nodes.append(Node(k, chain, any(s in dfa.accepting for s in chain), loop, ends))
    for (_, target), at in exits.items():
        run = _follow(outs, chain[at[0]], target, passes)
        text = _run_text([(o.label, o.literal) for o in run])
        if counted and at != everywhere:
            text += f" after {counts_text(at)}"
        edges = [(chain[i], target) for i in at]
        edges += [(a.target, b.target) for a, b in zip(run, run[1:], strict=False)]
        drawn.link(k, node_of[run[-1].target], text, edges, [o.target for o in run[:-1]])


def _sources(dfa: Dfa, outs: list[list[_Out]]) -> list[set[int]]:
    """Each state's ways in: the states with an edge to it, and -1 for the start arrow."""
    sources: list[set[int]] = [set() for _ in dfa.states]
    for s in dfa.states:
        for out in outs[s]:
            sources[out.target].add(s)
    sources[dfa.initial].add(-1)  # the start arrow is a way in
    return sources


def _exits(
    chain: tuple[int, ...], outs: list[list[_Out]]
) -> tuple[dict[tuple[str, int], list[int]], list[tuple[int, int]]]:
    """A node's edges read along its ``chain`` of states: the exits, merged by (label,
    target) with the places in the chain they leave from (the run behind them is the same),
    and the edges that go round the counted loop."""
    exits: dict[tuple[str, int], list[int]] = {}
    loop_edges = []
    for i, s in enumerate(chain):
        for out in outs[s]:
            if i + 1 < len(chain) and out.target == chain[i + 1]:
                loop_edges.append((s, out.target))
            else:
                exits.setdefault((out.label, out.target), []).append(i)
    return exits, loop_edges


def _outs(dfa: Dfa) -> list[list[_Out]]:
    """Each state's drawn edges (one per target, as ``Dfa.edges`` merges them)."""
    outs: list[list[_Out]] = [[] for _ in dfa.states]
    for edge in dfa.edges():
        chars = [dfa.classes[k] for k in edge.classes]
        literal = not any(c.others for c in chars) and sum(len(c.chars) for c in chars) == 1
        outs[edge.source].append(_Out(edge.target, edge.label, literal))
    return outs


def _order(dfa: Dfa, outs: list[list[_Out]]) -> list[int]:
    """States in breadth-first order from the start (every drawn state is reachable)."""
    seen, queue = {dfa.initial: None}, deque([dfa.initial])
    while queue:
        for out in outs[queue.popleft()]:
            if out.target not in seen:
                seen[out.target] = None
                queue.append(out.target)
    return [*seen, *(s for s in dfa.states if s not in seen)]


def _repeats(dfa: Dfa, outs: list[list[_Out]], order: list[int], threaded) -> list[tuple[int, ...]]:
    """The counted repeats: longest chains ``s0 -C-> s1 -C-> … -C-> sk`` (the same label
    C throughout, s1..sk entered only along the chain) whose exits agree label for label,
    with an exit or an end inside the chain (else it is a mere run, drawn as one edge).
    ``s0`` stays out when it has exits of its own that no later state shares (a hub
    whose one edge starts the repeat)."""
    found: list[tuple[int, ...]] = []
    taken: set[int] = set()
    settled: set[int] = set()  # inside a chain that is no repeat: so is every chain from them
    for head in order:
        if head in taken or head in settled:
            continue
        for start in outs[head]:
            chain, whole = _chain(outs, head, start, threaded, taken)
            own = {o.label for o in outs[chain[0]] if len(chain) < 2 or o.target != chain[1]}
            later = {o.label for s in chain[1:] for o in outs[s]}
            if not own <= later:
                chain = chain[1:]
            if len(chain) > 2 and any(s in dfa.accepting or len(outs[s]) > 1 for s in chain[1:-1]):
                found.append(tuple(chain))
                taken.update(chain)
                break
            if whole:  # ``[a-z]{2000,}``: else each of its 2,000 states walks the rest again
                settled.update(chain[1:-1])
    return found


def _chain(
    outs: list[list[_Out]], head: int, start: _Out, threaded, taken: set[int]
) -> tuple[list[int], bool]:
    """The longest chain from ``head`` along ``start``'s label through states entered only
    along it, stopping before a state whose exits send a label somewhere other than an
    earlier state's exits do; and whether it ended *whole*: where a chain from any of its
    states would end too (no next state it may take), not on such a clash of exits (a
    chain starting later records fewer exits) nor back at one of its own states."""
    chain, exits, inside = [head], {}, {head}
    nxt: int | None = start.target
    while True:
        going = nxt is not None and nxt not in taken and nxt not in inside
        going = going and threaded(chain[-1], nxt)
        for o in outs[chain[-1]]:
            if not (going and o.target == nxt) and exits.setdefault(o.label, o.target) != o.target:
                return chain[:-1], False  # never the head alone: its exits come first
        if not going:
            return chain, nxt not in inside
        chain.append(nxt)
        inside.add(nxt)
        nxt = next((o.target for o in outs[nxt] if o.label == start.label), None)


def _follow(outs: list[list[_Out]], source: int, target: int, passes) -> list[_Out]:
    """The exact edges from ``source`` via ``target`` through a run of passing states."""
    run = [next(o for o in outs[source] if o.target == target)]
    seen = {source}
    while passes(run[-1].target) and run[-1].target not in seen:
        seen.add(run[-1].target)
        run.append(outs[run[-1].target][0])
    return run


def _class_text(label: str) -> str:
    """A class label as a run shows it: ``[a-z]``, ``[not "]``."""
    return f"[{label}]"


def _run_text(run: list[tuple[str, bool]]) -> str:
    """What a run reads: literal characters as text, classes in brackets, a class (or a
    character, four times or more) read several times in a row with its count.

    >>> _run_text([("h", True), ("t", True), ("t", True), ("p", True), (":", True)])
    'http:'
    >>> _run_text([("0-9", False)] * 3 + [("-", True)] + [("0-9", False)] * 4)
    '[0-9]{3}-[0-9]{4}'
    """
    parts: list[str] = []
    i = 0
    while i < len(run):
        label, literal = run[i]
        j = i
        while j < len(run) and run[j] == run[i]:
            j += 1
        n = j - i
        text = label.replace("[", "\\[") if literal else _class_text(label)
        if literal and n < 4:
            parts.append(text * n)
        else:
            parts.append(text if n == 1 else f"{text}{{{n}}}")
        i = j
    return "".join(parts)


def counts_text(counts: list[int] | tuple[int, ...]) -> str:
    """Sorted counts as ranges: ``[3, 4, 5, 9]`` -> ``3..5,9``.

    >>> counts_text([2]), counts_text([3, 4, 5, 9]), counts_text([1, 2])
    ('2', '3..5,9', '1,2')
    """
    parts, i = [], 0
    while i < len(counts):
        j = i
        while j + 1 < len(counts) and counts[j + 1] == counts[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{counts[i]}..{counts[j]}")
        else:
            parts.extend(str(c) for c in counts[i : j + 1])
        i = j + 1
    return ",".join(parts)
