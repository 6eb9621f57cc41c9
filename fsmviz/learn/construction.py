"""Regex → NFA → DFA → minimal DFA, as frames to step through with Back / Next.

``compile_regex`` runs four steps and keeps only the last result; ``dfa.compile_stages``
keeps them all, and this module turns them into pictures with a caption each:

1. **Positions** (Glushkov's NFA): one node per character class written in the pattern,
   numbered from 1; node 0 is the start. An edge into position q reads q's class; the
   double circles are the positions a match may end on.
2. **Subsets**: a DFA state is the *set* of positions the text read so far could have
   just matched. States are added one at a time, breadth first, as the construction
   finds them.
3. **Pruning**: states from which no match can be reached are dropped.
4. **Minimisation**: states with the same future merge — same acceptance, and on every
   class a move to the same (merged) state.

For ``([0-9]+)?\\.[0-9]+`` the subsets are {} (start), {2} (a ".", position 2),
{1} (a digit of the optional part) and {3}; {1} merges with the start: after "1" the
text still needs ``[0-9]*\\.[0-9]+``, exactly as at the start.
"""

from __future__ import annotations

from dataclasses import dataclass

from fsmviz.automaton.dfa import Dfa, Edge, Stages, compile_stages

__all__ = [
    "Drawing",
    "ConstructionFrame",
    "MAX_SUBSET_FRAMES",
    "construction_frames",
    "positions_of",
]

MAX_SUBSET_FRAMES = 24
"""The subset construction shows at most this many frames (a large DFA is sampled)."""


@dataclass(frozen=True)
class Drawing:
    """Any automaton ``render.to_svg`` can draw: states ``0..num_states-1`` and edges."""

    num_states: int
    accepting: frozenset[int]
    edge_list: tuple[Edge, ...]

    def edges(self) -> list[Edge]:
        return list(self.edge_list)


@dataclass(frozen=True)
class ConstructionFrame:
    """One picture of the construction, with what to light and what to say.

    ``legend`` pairs a state with what it stands for (``"{1, 3}"``); ``marked`` states are
    about to be dropped or merged; ``current`` is the state this frame added."""

    stage: str
    title: str
    notes: tuple[str, ...]
    drawing: Drawing
    legend: tuple[tuple[int, str], ...] = ()
    current: int | None = None
    marked: frozenset[int] = frozenset()
    taken: frozenset[tuple[int, int]] = frozenset()


def positions_of(bitset: int) -> list[int]:
    """Positions in a bitset, numbered from 1 as drawn. ``positions_of(0b101) == [1, 3]``"""
    return [p + 1 for p in range(bitset.bit_length()) if bitset >> p & 1]


def _set(bitset: int) -> str:
    return "{" + ", ".join(map(str, positions_of(bitset))) + "}"


def _dfa_drawing(st: Stages, moves, accepting, keep: int | None = None) -> Drawing:
    """Moves over ``st``'s classes drawn as a DFA; only states below ``keep`` when given."""
    n = len(moves) if keep is None else keep
    clipped = tuple({t: c for t, c in moves[s].items() if t < n} for s in range(n))
    dfa = Dfa(st.pattern, n, frozenset(a for a in accepting if a < n), st.classes, clipped,
              st.dfa.mentioned)  # fmt: skip
    return Drawing(n, dfa.accepting, tuple(dfa.edges()))


def nfa_drawing(st: Stages) -> Drawing:
    """Glushkov's automaton: node 0 the start, node p+1 position p."""
    edges = [Edge(0, q, st.positions[q - 1], ()) for q in positions_of(st.first)]
    for p, follow in enumerate(st.follow):
        edges.extend(Edge(p + 1, q, st.positions[q - 1], ()) for q in positions_of(follow))
    accepting = frozenset(positions_of(st.last)) | ({0} if st.nullable else set())
    return Drawing(len(st.positions) + 1, accepting, tuple(edges))


def construction_frames(pattern: str) -> tuple[ConstructionFrame, ...]:
    """The frames of building ``pattern``'s DFA; raises ``RegexError`` for a bad pattern.

    >>> [f.stage for f in construction_frames("x|y")]
    ['positions', 'subsets', 'subsets', 'subsets', 'pruning', 'minimisation', 'minimal']
    >>> construction_frames("x|y")[5].notes[1]
    'States 1 and 2 merge into state 1: both accepting; no moves at all.'
    """
    st = compile_stages(pattern)
    return (_positions_frame(st), *_subset_frames(st), _pruning_frame(st),
            _minimisation_frame(st), _minimal_frame(st))  # fmt: skip


def _positions_frame(st: Stages) -> ConstructionFrame:
    n = len(st.positions)
    follows = [f"after {p + 1} may come {_set(f)}" for p, f in enumerate(st.follow) if f]
    notes = (
        f"{n} position{'s' if n != 1 else ''}: each character class written in the pattern "
        "(repeats like {3} written out) is one numbered node. Node 0 is the start.",
        f"First positions {_set(st.first)}; a match may end after {_set(st.last)}"
        + (
            " or before reading anything (the pattern matches the empty string)."
            if st.nullable
            else "."
        ),
        "Follow links: " + ("; ".join(follows) if follows else "none") + ".",
        "This is a nondeterministic automaton: a character may lead to several positions.",
    )
    legend = tuple((p + 1, label) for p, label in enumerate(st.positions))
    return ConstructionFrame(
        "positions", "1. Positions (Glushkov NFA)", notes, nfa_drawing(st), legend
    )


def _subset_frames(st: Stages) -> list[ConstructionFrame]:
    m = len(st.subsets)
    stride = max(1, -(-m // MAX_SUBSET_FRAMES))
    shown = sorted({*range(0, m, stride), m - 1})
    parent: dict[int, tuple[int, int]] = {}
    for s, row in enumerate(st.subset_rows):
        for k, t in sorted(row.items()):
            parent.setdefault(t, (s, k))
    frames = []
    for j in shown:
        legend = tuple((s, _set(st.subsets[s])) for s in range(j + 1))
        if j == 0:
            why = "State 0 is the empty set: nothing read yet."
            taken: frozenset[tuple[int, int]] = frozenset()
        else:
            s, k = parent[j]
            label = st.dfa.class_label(k)
            why = (
                f"From state {s} {_set(st.subsets[s])}, reading {label!r} can land on "
                f"positions {_set(st.subsets[j])}: a new set, so a new state {j}."
            )
            taken = frozenset({(s, j)})
        accept = " It holds a last position, so it accepts." if j in st.subset_accepting else ""
        frames.append(ConstructionFrame(
            "subsets", f"2. Subset construction: state {j} of {m}",
            (why + accept, "Each DFA state is the set of positions just matched."),
            _dfa_drawing(st, st.subset_moves, st.subset_accepting, keep=j + 1),
            legend, current=j, taken=taken,
        ))  # fmt: skip
    return frames


def _pruning_frame(st: Stages) -> ConstructionFrame:
    dead = frozenset(set(range(len(st.subsets))) - set(st.kept))
    notes = (
        (f"States {sorted(dead)} can never reach an accepting state: they are dropped, and "
         "reading into them becomes simply impossible.") if dead else
        "Every state can still reach an accepting state: nothing to prune.",
    )  # fmt: skip
    legend = tuple((s, _set(st.subsets[s])) for s in range(len(st.subsets)))
    drawing = _dfa_drawing(st, st.subset_moves, st.subset_accepting)
    return ConstructionFrame(
        "pruning", "3. Dead states pruned", notes, drawing, legend, marked=dead
    )


def _minimisation_frame(st: Stages) -> ConstructionFrame:
    groups: dict[int, list[int]] = {}
    for s, m in enumerate(st.merged_into):
        groups.setdefault(m, []).append(s)
    merging = [g for g in groups.values() if len(g) > 1]
    notes = ["Two states merge when no future text can tell them apart: same acceptance, "
             "and on every class a move to the same (merged) state."]  # fmt: skip
    for g in merging:
        m = st.merged_into[g[0]]
        acc = "accepting" if g[0] in st.pruned_accepting else "not accepting"
        moves = [
            f"on {st.dfa.class_label(k)!r} to {t}" for k, t in sorted(st.dfa.transitions[m].items())
        ]
        names = ", ".join(map(str, g[:-1])) + f" and {g[-1]}"
        notes.append(
            f"States {names} merge into state {m}: {'both' if len(g) == 2 else 'all'} {acc}; "
            + ("moves " + ", ".join(moves) if moves else "no moves at all")
            + "."
        )
    if not merging:
        notes.append("No two states have the same future: the DFA is already minimal.")
    marked = frozenset(s for g in merging for s in g)
    legend = tuple(
        (i, f"{_set(st.subsets[s])} → state {st.merged_into[i]}") for i, s in enumerate(st.kept)
    )
    drawing = _dfa_drawing(st, st.pruned_moves, st.pruned_accepting)
    return ConstructionFrame(
        "minimisation", "4. Minimisation", tuple(notes), drawing, legend, marked=marked
    )


def _minimal_frame(st: Stages) -> ConstructionFrame:
    d = st.dfa
    notes = (
        f"The minimal DFA: {d.num_states} states, {len(d.accepting)} accepting. This is what "
        "the Generate tab draws and the model is guided by; states are numbered breadth first.",
    )
    legend = tuple(
        (m, ", ".join(_set(st.subsets[st.kept[i]]) for i, x in enumerate(st.merged_into) if x == m))
        for m in range(d.num_states)
    )
    drawing = Drawing(d.num_states, d.accepting, tuple(d.edges()))
    return ConstructionFrame("minimal", "5. Minimal DFA", notes, drawing, legend)
