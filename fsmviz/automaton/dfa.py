"""Regular expression → deterministic finite automaton (DFA) over characters.

This is the automaton fsmviz draws. Reading the output one character at a time, the DFA
is always in exactly one state; a character either moves it along an edge or is
impossible. The output matches the whole pattern when it ends in an accepting state.

How it is built, in three classic steps:

1. **Positions (Glushkov's construction).** Every character class written in the pattern,
   after expanding repeats like ``[0-9]{3}`` into three copies, is a *position*. For each
   position we know which positions may follow it, which may come first, and which may
   come last. No ε-transitions, no NFA states beyond the positions themselves.
2. **Subsets.** A DFA state is the set of positions the text read so far could have just
   matched. From a state, a character class leads to the positions that follow and accept
   it. Sets are Python ints used as bitsets, and classes that lead to the same positions
   are followed together.
3. **Minimisation.** States that accept the same futures are merged (Hopcroft's partition
   refinement), and states from which no match is reachable are dropped: every state
   that is drawn can still finish.

Characters are grouped into *classes* that the pattern never tells apart: for
``[0-9]+\\.[0-9]+`` the classes are ``0-9`` and ``.`` (plus "everything else", which has no
edge). Edges are labelled with classes, which keeps the DFA small and the drawing readable.

Construction runs under a budget: patterns whose DFA would explode — ``(a|b)*a(a|b){20}``
must remember the last 21 characters, ``a{100000}`` has 100,000 positions — are refused
with a ``RegexError`` within a fraction of a second instead of running for minutes. The
budget is CPU time, ``MAX_SECONDS`` for steps 1 and 2 together and ``MAX_SECONDS`` again of
its own for step 3, so a pattern that is merely slow, say one whose follow links grow
quadratically like ``(a?){4000}``, is refused too, and no pattern costs more than twice
``MAX_SECONDS``. Step 3 has its own budget because ``check_buildable`` may leave it for
later (see there): a minimisation that ran on what was left of the first budget could
then refuse, at the start of a run, a pattern that had been accepted.
"""

from __future__ import annotations

import gc
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, reduce
from operator import or_

import numpy as np

from fsmviz.automaton.graph import UNREACHABLE, backward_distances
from fsmviz.automaton.syntax import (
    DOT,
    EMPTY,
    EMPTY_GROUP,
    TREE_SIZES,
    CharGroup,
    Concatenation,
    NonCapturing,
    Pattern,
    REFlags,
    RegexError,
    Repeated,
    parse,
)
from fsmviz.cache import BoundedCache
from fsmviz.printable import LABEL_NAMES, escape_char

__all__ = [
    "CharClass",
    "Dfa",
    "Edge",
    "check_buildable",
    "check_size",
    "compile_regex",
    "complement_ranges",
    "count_positions",
    "point_ranges",
    "set_bits",
    "MAX_POSITIONS",
    "MAX_STATES",
]

MAX_POSITIONS = 25_000
"""Character positions after expanding bounded repeats (``a{100000}`` has 100,000). A
schema's regex has about one position a character: 22,000 characters (500 fields) build in
0.6 s and ~70 MB; past that the CPU clock (``MAX_SECONDS``) refuses first."""
MAX_STATES = 25_000
"""DFA states before minimisation (a 500-field schema's regex: 16,400)."""
MAX_SECONDS = 1.0
"""Budget of CPU time for each of the two phases of building one DFA: the construction
(positions and subsets), then, on a clock of its own, the minimisation. Counted on the
building thread less its full garbage collections (``_cpu_seconds``): a busy machine slows
the wall clock, and a large heap slows a full collection, and neither must make the app
refuse a pattern it accepts when idle."""
DEFER_EDGES = 10_000
"""``check_buildable`` leaves the minimisation to ``compile_regex`` only for a construction
with at most this many edges: its minimisation then takes at most ~0.1 s of CPU (11 µs an
edge at worst, Hopcroft's refinement of ``(a|b)*a(a|b){13}``), a tenth of its budget. A
larger one is minimised at once, so that a refusal still comes at compile time (48 of the
52 bench schemas that take the regex path stay under it; the 22-field one has 2,254)."""
FEW_CLASSES = 16
"""The subset construction asks every class in turn when there are at most this many (or
at most two per position that may come next), and otherwise splits the classes by those
positions (``_subsets``)."""

UNICODE_MAX = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)  # not characters: never valid in UTF-8 text


@dataclass(frozen=True)
class CharClass:
    """Characters the pattern never tells apart.

    ``chars`` are characters written in the pattern. When ``others`` is true the class also
    holds every character the pattern does not mention at all (as in ``[^"]`` or ``.``).
    """

    chars: frozenset[str]
    others: bool = False
    _ranges: dict[frozenset[str], tuple[tuple[int, int], ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    def __contains__(self, char: str) -> bool:
        return char in self.chars

    def ranges(self, mentioned: frozenset[str]) -> tuple[tuple[int, int], ...]:
        """Sorted, disjoint inclusive code-point ranges of this class (no surrogates).
        Remembered per ``mentioned``: a class like ``[一-龥]`` holds 20,000 characters, and
        the byte DFA, the drawing and the doctor all ask for its ranges."""
        known = self._ranges.get(mentioned)
        if known is not None:
            return known
        if self.others:
            result = complement_ranges(_code_points(mentioned - self.chars))
        else:
            result = point_ranges(_code_points(self.chars))
        self._ranges[mentioned] = result
        return result


@dataclass(frozen=True)
class Edge:
    """All classes that lead from ``source`` to ``target``, merged for drawing."""

    source: int
    target: int
    label: str
    classes: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Dfa:
    """A minimal DFA over characters. States are ``0 .. num_states-1``; 0 is initial.

    ``transitions[s]`` maps a class index (into ``classes``) to the next state. A class
    that is absent leads nowhere: that character is impossible in state ``s``. The DFA is
    kept as ``moves[s]``, next state -> the bitset of the classes leading there (a JSON
    string's state: one entry, where its row by class has dozens); ``transitions`` is
    written out from it when first asked (the token index never asks).
    """

    pattern: str
    num_states: int
    accepting: frozenset[int]
    classes: tuple[CharClass, ...]
    moves: tuple[Mapping[int, int], ...]
    mentioned: frozenset[str] = field(repr=False)
    initial: int = 0

    @cached_property
    def transitions(self) -> tuple[Mapping[int, int], ...]:
        """Rows by class: ``transitions[s][k]`` is the state class ``k`` leads to from
        ``s`` (classes ascending)."""
        return _by_class(self.moves)

    @property
    def states(self) -> range:
        return range(self.num_states)

    def is_accepting(self, state: int) -> bool:
        return state in self.accepting

    def class_of(self, char: str) -> int | None:
        """Index of the class holding ``char``, or None if no edge ever reads it."""
        if char in self.mentioned:
            return self._class_lookup.get(char)
        return self._others_class

    @cached_property
    def _class_lookup(self) -> dict[str, int]:
        return {c: k for k, cls in enumerate(self.classes) for c in cls.chars}

    @cached_property
    def _others_class(self) -> int | None:
        return next((k for k, cls in enumerate(self.classes) if cls.others), None)

    def step(self, state: int, char: str) -> int | None:
        """The state after reading ``char``, or None if it is impossible here."""
        k = self.class_of(char)
        return None if k is None else self.transitions[state].get(k)

    def run(self, text: str) -> int | None:
        """The state after reading ``text`` from the start, or None."""
        state: int | None = self.initial
        for char in text:
            if state is None:
                return None
            state = self.step(state, char)
        return state

    def accepts(self, text: str) -> bool:
        state = self.run(text)
        return state is not None and state in self.accepting

    def edges(self) -> list[Edge]:
        """One edge per (source, target) with a readable label such as ``0-9`` or ``not "``."""
        out: list[Edge] = []
        for source in self.states:
            for target, classes in sorted(self.moves[source].items()):
                ks = list(set_bits(classes))
                chars = frozenset().union(*(self.classes[k].chars for k in ks))
                others = any(self.classes[k].others for k in ks)
                out.append(Edge(source, target, _label(chars, others, self.mentioned), tuple(ks)))
        return out

    def class_label(self, k: int) -> str:
        cls = self.classes[k]
        return _label(cls.chars, cls.others, self.mentioned)

    def to_dict(self) -> dict[str, object]:
        """States and labelled transitions as plain data (for the ``/dfa`` API)."""
        return {
            "pattern": self.pattern,
            "states": list(self.states),
            "initial": self.initial,
            "accepting": sorted(self.accepting),
            "transitions": [
                {"from": e.source, "to": e.target, "label": e.label} for e in self.edges()
            ],
        }

    def distances(self) -> list[int]:
        """Fewest characters from each state to an accepting state: 0 when accepting,
        ``graph.UNREACHABLE`` when none can be reached (only the start state of a pattern
        that matches nothing: every other state of a compiled DFA can still finish)."""
        moves = self.moves
        far = backward_distances(self.num_states, lambda s: moves[s].keys(), self.accepting)
        return far.tolist()


def compile_regex(pattern: str) -> Dfa:
    """Compile ``pattern`` into its minimal character DFA, or raise ``RegexError``.

    The DFA reads characters: each state is "how much of the pattern the text so far has
    matched", each edge a class of characters that all lead to the same state. Here ``ab+``
    has three states: nothing read, ``a`` read, and ``ab…`` read (the only accepting one).

    >>> dfa = compile_regex("ab+")
    >>> dfa.num_states, sorted(dfa.accepting)
    (3, [2])
    >>> dfa.run("abb"), dfa.accepts("abb"), dfa.accepts("ba")
    (2, True, False)
    >>> compile_regex("ab+") is dfa        # compiled once, kept (bounded)
    True
    >>> compile_regex("a(?=b)")
    Traceback (most recent call last):
    ...
    fsmviz.automaton.syntax.RegexError: lookahead (?=…) is not supported: ...

    Every caller along one page action (the drawing, the index, the doctor, the run) asks
    for the same pattern, so the DFA is built once and kept in a bounded cache.
    """
    if not isinstance(pattern, str):
        raise RegexError(
            f"the pattern must be text, not {type(pattern).__name__}",
            None,
            "write the regex as a string",
        )
    return _COMPILED.get_or_build(pattern, lambda: _finished(pattern))


_COMPILED: BoundedCache[Dfa] = BoundedCache(maxsize=64)
"""The last 64 patterns' DFAs (a schema's DFA of ~1,000 states takes a few MB)."""


def check_buildable(pattern: str) -> None:
    """Raise ``RegexError`` where ``compile_regex(pattern)`` would, but leave minimising
    for later where it is safe to: the construction (subsets) is kept, bounded, and
    ``compile_regex`` minimises it when the DFA is first asked for. A schema is compiled so
    (``schema.convert``): its path depends on whether its DFA can be built, but its first
    allowed set needs no DFA, and minimising is a third of the build.

    Why a pattern this accepts is always finished later: the minimisation has a budget of
    its own (``MAX_SECONDS``), not what the construction left of one, and only a
    construction of at most ``DEFER_EDGES`` edges waits, whose minimisation needs a tenth
    of that budget at most. A larger one is minimised here and now, where running out still
    sends a schema to the grammar path instead of failing its run.

    The subsets wait too where their size is sure without them (``_surely_fits``: at most
    ``DEFER_EDGES`` edges, counted from the positions, and the walk took at most
    ``SURE_SPENT``): the check is then the walk, the alphabet and that count, and
    ``compile_regex`` builds the subsets from the kept positions (``_WALKED``) on what the
    walk left of their budget, many times what they need.

    A pattern with a long counted repeat (a schema's strings) is first told by its
    sketch (``_sketch``: each such repeat walked as three copies, weighed by the copies
    they stand for): where that count surely fits, nothing is walked whole and nothing is
    kept but the verdict (``_TOLD``); ``compile_regex`` then builds the DFA whole, on
    budgets of its own. Where it is unsure, the whole walk decides, as above.

    >>> check_buildable("(a|b)*a(a|b){20}")
    Traceback (most recent call last):
    ...
    fsmviz.automaton.syntax.RegexError: the pattern is too large: its DFA needs more than 25,000 states, ...
    """  # noqa: E501
    if any(kept.peek(pattern) is not None for kept in (_COMPILED, _BUILT, _WALKED, _TOLD)):
        return
    sketch = _sketch(pattern)
    told = isinstance(sketch, _Sketched) and sketch.spent <= SURE_SPENT  # copies stand for more
    if told and _surely_fits(sketch, weights=sketch.positions.weights):
        _TOLD.get_or_build(pattern, lambda: True)  # the walk waits too
        return
    walked = sketch if isinstance(sketch, _Walked) else _Walked.of(pattern)
    counting = _cpu_seconds()
    if walked.spent <= SURE_SPENT and _surely_fits(walked):
        _WALKED.get_or_build(pattern, lambda: walked)  # the subsets wait too
        return
    counted = _cpu_seconds() - counting  # not the construction's: its clock leaves it out
    built = walked.subsets(_Clock(walked.clock.deadline + counted, "building"), by_future=True)
    if built.edges > DEFER_EDGES:
        _COMPILED.get_or_build(pattern, lambda: _minimised(built))
    else:
        _BUILT.get_or_build(pattern, lambda: built)


_BUILT: BoundedCache[_Construction] = BoundedCache(maxsize=8)
"""Constructions ``check_buildable`` checked and left to minimise (``DEFER_EDGES``)."""
_WALKED: BoundedCache[_Walked] = BoundedCache(maxsize=8)
"""Positions ``check_buildable`` walked, whose subsets surely fit (``_surely_fits``)."""
_TOLD: BoundedCache[bool] = BoundedCache(maxsize=64)
"""Patterns whose subsets their sketch told to fit (``_sketch``): nothing is kept but that."""


def _sketch(pattern: str) -> _Walked | _Sketched | None:
    """The walk of ``pattern`` with each counted repeat of ``SKETCH_FROM`` copies or more
    walked as three (``_Sketch``), or None where it raises: the whole walk then says why.
    Its ``_surely_fits`` with the copies' weights is an upper bound on the whole walk's
    (one step of Python per copy walked, not per copy: a schema's strings of ``maxLength``
    40 are half its positions), so ``check_buildable`` walks whole only where it is unsure.
    Without such a repeat, the sketch is the whole walk (``positions.scaled`` is empty).

    >>> sketch = _sketch('"([a-z]|%[0-9]){0,40}"')
    >>> len(sketch.positions.sets), sum(sketch.positions.weights)  # walked, stood for
    (8, 122)
    >>> len(_Walked.of('"([a-z]|%[0-9]){0,40}"').positions.sets)
    122
    """
    try:
        core, clock, positions, ends = _walk(pattern, _Sketch)
        if not positions.scaled:  # the whole walk: kept, with its alphabet
            return _Walked.made(core, clock, positions, ends)
        classes = _sharing_classes(positions)
    except RegexError:
        return None
    spent = MAX_SECONDS - (clock.deadline - _cpu_seconds())
    return _Sketched(spent, positions, ends[1], classes)


@dataclass(frozen=True)
class _Sketched:
    """A sketch's walk (``_sketch``) and what its count (``_surely_fits``) reads beside
    the positions: each position's classes, as ``_sharing_classes`` tells them (no
    alphabet: nothing is built from a sketch), and the CPU seconds it took (``spent``)."""

    spent: float
    positions: _Positions
    first: int
    position_classes: list[int]


def _walk(
    pattern: str, kind: type[_Positions]
) -> tuple[str, _Clock, _Positions, tuple[bool, int, int]]:
    """``pattern`` parsed, its size checked and walked by ``kind`` on a clock started now:
    its core, the clock, the positions and (nullable, first, last)."""
    core, tree = parse(pattern)
    check_size(tree, core)
    clock = _Clock.after(MAX_SECONDS, "building")
    positions = kind(core, clock)
    return core, clock, positions, positions.walk(tree, 0)


def _sharing_classes(positions: _Positions) -> list[int]:
    """For each position, the bitset of "classes" it accepts, as ``_surely_fits`` reads
    them, without the alphabet (``_alphabet``: its signatures and their drawing order are
    most of its cost): a bit for each character that two distinct sets list, one for
    each set's characters that no other set lists, one for the characters none lists.
    Two positions share a bit exactly where they share a character, and the positions
    that accept one bit are those that accept one of its characters: the sets of
    positions ``_targets`` finds are those of the alphabet's classes (a finer split of
    the same characters), so the count is the same.

    >>> [bin(c) for c in _sharing_classes(_Walked.of("[ab]c[^b]").positions)]  # b; a; c; others
    ['0b11', '0b100', '0b1110']
    """
    index, set_ids, _, shared = _distinct_sets(positions)
    bit_of = {char: 1 << k for k, char in enumerate(sorted(shared))}
    own = [len(chars) > len(chars & shared) for chars, _ in index]  # some listed here alone
    own_bits = {i: 1 << (len(shared) + k) for k, i in enumerate(i for i, o in enumerate(own) if o)}
    others = 1 << (len(shared) + len(own_bits))
    everything = (others << 1) - 1
    set_classes = []
    for i, (chars, negated) in enumerate(index):
        listed = own_bits.get(i, 0)
        for char in chars & shared:
            listed |= bit_of[char]
        set_classes.append(everything & ~listed if negated else listed)
    return [set_classes[i] for i in set_ids]


def _finished(pattern: str) -> Dfa:
    """The minimal DFA: from a construction or positions ``check_buildable`` kept, else
    built whole. Kept positions finish their subsets on what their walk left of the
    construction's budget (on a clock started now: the walk was timed when it ran)."""
    built = _BUILT.peek(pattern)
    if built is None and (walked := _WALKED.peek(pattern)) is not None:
        clock = _Clock.after(MAX_SECONDS - walked.spent, "building")
        built = walked.subsets(clock, by_future=True)
    return _minimised(built) if built is not None else _compile(pattern)


def _compile(pattern: str) -> Dfa:
    walked = _Walked.of(pattern)
    return _chain(walked) or _minimised(walked.subsets(walked.clock, by_future=True))


def _chain(walked: _Walked) -> Dfa | None:
    """The minimal DFA of positions that follow one another in a line, each accepting
    some character (a literal, a keyword ``[nN][oO][nN][eE]``, ``a(b){2}``), or None.
    Position ``i`` alone follows ``i - 1``, the first alone comes first, the last alone
    is last: so the subsets are the positions one by one, state ``i + 1`` after
    position ``i`` on its classes, numbered as ``_subsets`` numbers them, and the chain
    is minimal as it is (``_is_chain``). No subsets and no minimising are run: a
    keyword's build is a few steps of Python, where they were a third of its compile.

    >>> dfa = _chain(_Walked.of("(?i)ab"))
    >>> dfa.num_states, dfa.accepting, dfa.moves
    (3, frozenset({2}), ({1: 1}, {2: 2}, {}))
    >>> _chain(_Walked.of("ab?")) is None  # b may be last or not: no line
    True
    """
    follow, classes, n = walked.positions.follow, walked.position_classes, len(walked.set_ids)
    if walked.nullable or walked.first != 1 or walked.last != 1 << n - 1 or follow[-1]:
        return None
    for i in range(n - 1):
        if follow[i] != 2 << i or not classes[i]:
            return None
    if not classes[-1]:  # a position that accepts nothing: the DFA is pruned
        return None
    moves = tuple([{i + 1: classes[i]} for i in range(n)]) + ({},)
    return Dfa(walked.core, n + 1, frozenset((n,)), tuple(walked.classes), moves, walked.mentioned)


def _minimised(built: _Construction) -> Dfa:
    """Step 3, on a clock of its own (``MAX_SECONDS``), whenever it runs."""
    clock = _Clock.after(MAX_SECONDS, "minimising")
    accepting, transitions = built.accepting, built.transitions
    if built.may_strand:
        accepting, transitions = _prune_dead(accepting, transitions)
    accepting, moves = _minimise(accepting, transitions, clock)
    return built.dfa(accepting, moves)


@dataclass(frozen=True)
class _Construction:
    """Steps 1 and 2 of the build (positions, subsets), shared by ``compile_regex`` and
    ``compile_stages``."""

    core: str
    clock: _Clock
    positions: _Positions
    nullable: bool
    first: int
    last: int
    classes: list[CharClass]
    class_masks: list[int]
    mentioned: frozenset[str]
    accepting: set[int]
    transitions: list[_Moves]

    @staticmethod
    def of(pattern: str, by_future: bool = False) -> _Construction:
        walked = _Walked.of(pattern)
        return walked.subsets(walked.clock, by_future)

    @property
    def may_strand(self) -> bool:
        """Whether a state may be unable to finish, so that ``_prune_dead`` has work: only
        when some position accepts no character at all (``a[^\\s\\S]b``). Otherwise
        every position lies on a path from the start to an end of the pattern (Glushkov's
        automaton of a regex with no empty set is *trim*), and so does every subset."""
        accepted = 0
        for mask in self.class_masks:
            accepted |= mask
        return accepted != (1 << len(self.positions.sets)) - 1

    @property
    def edges(self) -> int:
        """Moves between states, parallel classes counted once (what minimising reads)."""
        return sum(map(len, self.transitions))

    def dfa(self, accepting: set[int], moves: list[_Moves]) -> Dfa:
        """The DFA with these (minimised) states, over this construction's classes."""
        return Dfa(
            pattern=self.core,
            num_states=len(moves),
            accepting=frozenset(accepting),
            classes=tuple(self.classes),
            moves=tuple(moves),
            mentioned=self.mentioned,
        )


@dataclass(frozen=True)
class _Walked:
    """Step 1 of the build and the alphabet (the positions, who follows whom, the classes
    each accepts), with the CPU seconds they took (``spent``) of the construction's budget;
    ``subsets`` does step 2 into a ``_Construction``. The positions of each class
    (``class_masks``) are gathered when first asked: ``_surely_fits`` needs none, and a
    schema's first allowed set waits on it (a step of Python per position); so are the
    ``CharClass`` records of the classes (``classes``, from ``class_kinds``: a sketch's
    are never asked)."""

    core: str
    clock: _Clock
    spent: float
    positions: _Positions
    nullable: bool
    first: int
    last: int
    class_kinds: list[tuple[frozenset[str], bool]]  # class -> its characters, and others?
    class_sets: list[tuple[int, ...]]  # class -> the distinct sets accepting it
    position_classes: list[int]
    mentioned: frozenset[str]
    set_ids: list[int]  # position -> its distinct set

    @staticmethod
    def of(pattern: str) -> _Walked:
        """``pattern`` walked whole (``_Positions``), and its alphabet."""
        return _Walked.made(*_walk(pattern, _Positions))

    @staticmethod
    def made(
        core: str, clock: _Clock, positions: _Positions, ends: tuple[bool, int, int]
    ) -> _Walked:
        """A whole walk's record (``_walk``'s), its alphabet made now on its clock."""
        nullable, first, last = ends
        kinds, class_sets, position_classes, mentioned, set_ids = _alphabet(positions)
        spent = MAX_SECONDS - (clock.deadline - _cpu_seconds())
        return _Walked(core, clock, spent, positions, nullable, first, last, kinds,
                       class_sets, position_classes, mentioned, set_ids)  # fmt: skip

    @cached_property
    def classes(self) -> list[CharClass]:
        """The classes as ``CharClass`` records, in ``class_kinds``'s order."""
        return [CharClass(chars, others) for chars, others in self.class_kinds]

    @cached_property
    def class_masks(self) -> list[int]:
        """For each class, the bitset of the positions that accept it."""
        set_positions = [0] * (max(self.set_ids, default=-1) + 1)
        for p, i in enumerate(self.set_ids):
            set_positions[i] |= 1 << p
        masks = []
        for sets in self.class_sets:  # loops, not a reduce over a generator per class
            mask = 0
            for i in sets:
                mask |= set_positions[i]
            masks.append(mask)
        return masks

    def subsets(self, clock: _Clock, by_future: bool = False) -> _Construction:
        """Step 2 on ``clock``: the subset construction (``by_future``: states with one
        future made one, as ``compile_regex`` builds them, on positions with one future
        made one first; see ``_subsets`` and ``_one_per_future``)."""
        follow, first = self.positions.follow, self.first
        if by_future:
            follow, first = _one_per_future(follow, first, self.last, self.set_ids)
        accepting, transitions = _subsets(
            self.nullable, first, self.last, follow, self.class_masks,
            self.position_classes, self.core, clock, by_future,
        )  # fmt: skip
        return _Construction(self.core, clock, self.positions, self.nullable, self.first,
                             self.last, self.classes, self.class_masks, self.mentioned,
                             accepting, transitions)  # fmt: skip


def _one_per_future(
    follow: list[int], first: int, last: int, set_ids: list[int]
) -> tuple[list[int], int]:
    """``follow`` and ``first`` with positions of one future made one: each such position
    is replaced, wherever it may come next, by the one kept for it (the last of them).

    A position's future (what may be read after it: its *language*) is told by its set,
    whether it is last, and the positions that may follow it. Going from the last position
    back to the first, the positions after ``p`` are settled: two with the same set and
    acceptance, whose next positions after them are the same once each is replaced by the
    one kept for it, whose positions next before them are the very same (not yet settled),
    and which both loop on themselves or both do not, have one future (``L = A·L ∪ B``
    has one solution, Arden's lemma, where ``A`` does not hold the empty text). Merging
    them keeps every position's language, so the subsets reach the same minimal DFA
    through fewer states: IPv6's alternatives end in alike copies of ``:[0-9A-Fa-f]{1,4}``
    (78 states, the minimal DFA, not 174); the cron pattern's ``\\d+`` after a ``,``, a
    ``/`` or nothing (188, not 247).

    >>> follow, first = _one_per_future([0b10, 0, 0b1000, 0], 0b101, 0b1010, [0, 1, 0, 1])
    >>> [bin(f) for f in follow], bin(first)  # ab|ab: the second a and b are kept
    (['0b1000', '0b0', '0b1000', '0b0'], '0b100')
    """
    distinct = max(set_ids, default=-1) + 1 == len(set_ids)  # no two of one set
    if distinct or len(set_ids) > MERGE_POSITIONS or not _may_merge(follow, set_ids):
        return follow, first
    ends = bin(last)[:1:-1].ljust(len(follow), "0")  # "1" at each last position
    gone, lowest = 0, len(follow)  # the positions merged into a kept one, the lowest
    kept_for: dict[int, int] = {}  # a merged position's bit -> the kept one's bit
    merged = list(follow)
    # A future is told first by what costs next to nothing to read (its set, loop, end,
    # its links' length and top bits), its links compared or hashed only where another
    # is alike in those: a schema's positions link thousands of bits each.
    first_met: dict[tuple[int, int, str, int, int], tuple[int, int]] = {}
    more_met: dict[tuple[int, int, str, int, int], dict[int, int]] = {}
    for p in range(len(follow) - 1, -1, -1):
        links = follow[p]
        if links.bit_length() > lowest and links & gone:  # merged ones after p
            links = merged[p] = _replaced(links, gone, kept_for)
        looped = links >> p & 1
        if looped:
            links ^= 1 << p
        length = links.bit_length()
        key = (set_ids[p], looped, ends[p], length, links >> length - 60 if length > 60 else links)
        met = first_met.get(key)
        if met is None:
            first_met[key] = links, p
            continue
        same = met[1] if met[0] == links else more_met.setdefault(key, {}).setdefault(links, p)
        if same != p:
            gone |= 1 << p
            kept_for[1 << p] = 1 << same
            lowest = p
    if not gone:
        return follow, first
    for p in range(lowest + 1, len(merged)):  # links back to positions merged later
        if merged[p] & gone:
            merged[p] = _replaced(merged[p], gone, kept_for)
    return merged, _replaced(first, gone, kept_for) if first & gone else first


def _may_merge(follow: list[int], set_ids: list[int]) -> bool:
    """Whether ``_one_per_future`` may merge two positions, told at a cost of a few
    steps of C a position (the merge costs ~0.6 µs a position in Python: 4 µs of a case-
    insensitive keyword's 120). The first pair it merges (the last positions) have one
    set and their links alike as written: the same links, where neither loops on itself;
    where both do, only their set tells. So where no two positions that do not loop have
    one set and the same links, and no two that loop have one set, none is merged.

    >>> _may_merge([0b10, 0b100, 0], [0, 0, 1]), _may_merge([0b10, 0b10, 0], [0, 0, 1])
    (False, True)
    >>> _may_merge([0b1, 0b10], [0, 0])  # both loop: a+|a+
    True
    """
    looping = [set_ids[p] for p, links in enumerate(follow) if links >> p & 1]
    alike = set(zip(set_ids, follow, strict=True))
    return len(set(looping)) < len(looping) or len(alike) < len(follow)


MERGE_POSITIONS = 8_192
"""``_one_per_future`` merges the positions of patterns of at most this many (about
1 µs a position: IPv6's 323 in 0.23 ms, where its subsets and minimising save 0.45).
Each position's links are read whole, and they are as long as the pattern: past this,
a schema's pass costs about what it saves (a Kubernetes StatefulSet's 13,259 positions:
37 ms, 35 ms saved of 159; 11,551 with nothing to merge: 8 ms more of 208); below it,
merging ``forty_objects``' 5,570 positions builds 449 states, not 3,735 (53 -> 40 ms)."""


def _replaced(positions: int, gone: int, kept_for: dict[int, int]) -> int:
    """``positions`` with each of ``gone`` among them replaced by ``kept_for`` it."""
    merged = positions & gone
    positions ^= merged
    while merged:
        low = merged & -merged
        positions |= kept_for[low]
        merged ^= low
    return positions


SURE_SPENT = MAX_SECONDS / 4
"""``check_buildable`` leaves the subsets for later (``_surely_fits``) only when the walk
took at most this much of the construction's budget: the subsets of at most
``DEFER_EDGES`` edges then have three quarters of it, many times what they need."""


def _surely_fits(
    walked: _Walked | _Sketched, limit: int | None = None, weights: Sequence[int] | None = None
) -> bool:
    """Whether the subset construction surely makes at most ``limit`` (``DEFER_EDGES``)
    edges, told from the positions without building it: then it has at most ``limit + 1``
    states (each state but the start is first reached along an edge of its own), within
    ``MAX_STATES``, and ``check_buildable`` would leave its minimisation for later anyway.
    False when unsure.

    A state is the start, one position ``{q}`` or a set of several. From ``{q}`` the
    positions that may come next are ``follow[q]``: where no class is accepted by two of
    them, each move leads to one position, so there are at most ``len(follow[q])`` moves;
    otherwise the classes are split by where they lead (``_class_parts``), one move each.
    A set of several is reached only where two positions next accept one class: those sets
    are followed on (most schemas have a few, after an enum's opening ``"``). Every
    ``{q}`` is counted, reached or not, so the count is an upper bound on the edges. Gives
    up (False) past ``4 * limit`` positions looked at, or more sets of several than
    positions (an ambiguous pattern, whose subsets cost little more than this count).

    With ``weights`` (a ``_Sketch``'s), each ``{q}`` counts for the copies it stands for:
    their next positions have the same sets, so each of them moves alike. A copy's own
    sets of several are not alike (each copy's lead on to other copies): so the count
    gives up where such a ``{q}`` reaches a set of several, or a set of several holds a
    position that stands for several.

    >>> _surely_fits(_Walked.of('"(ab|ac)d"'))
    True
    >>> _surely_fits(_Walked.of("(a|b)*a(a|b){20}"))  # 2 million states
    False
    """
    limit = DEFER_EDGES if limit is None else limit
    follow, classes_of = walked.positions.follow, walked.position_classes
    weights = [1] * len(follow) if weights is None else weights
    # (weight, positions next): after the start, after each {q}
    pending = [(1, walked.first), *zip(weights, follow, strict=True)]
    sets_seen: set[int] = set()
    counted: dict[int, int] = {}  # a set of positions next -> its moves (copies share them)
    ambiguous: set[int] = set()  # those of them whose moves reach sets of several
    edges = work = 0
    most_sets = sum(weights)
    while pending:
        weight, reachable = pending.pop()
        if not reachable & (reachable - 1):  # one position next or none (half a schema's)
            edges += weight if reachable else 0
            continue
        known = counted.get(reachable)
        if known is not None:  # its sets of several, if any, are followed already
            if weight > 1 and reachable in ambiguous:
                return False  # each copy it stands for reaches sets of its own
            edges += weight * known
            continue
        accepted = moves = 0
        shared = False
        rest = reachable
        while rest:  # each position's classes, and whether two positions share one
            low = rest & -rest
            classes = classes_of[low.bit_length() - 1]
            shared = shared or accepted & classes != 0
            accepted |= classes
            moves += 1
            rest ^= low
        work += moves
        if shared:
            if weight > 1:
                return False  # each copy it stands for reaches sets of its own
            ambiguous.add(reachable)
            targets = _targets(reachable, accepted, classes_of)
            moves = len(targets)
            for target in targets:
                if target & (target - 1) and target not in sets_seen:  # several positions
                    reached = _next_of_several(target, follow, weights)
                    if reached is None:
                        return False  # the copies it holds lead to copies told apart
                    sets_seen.add(target)
                    pending.append((1, reached))
        counted[reachable] = moves
        edges += weight * moves
        if edges > limit or work > 4 * limit or len(sets_seen) > most_sets:
            return False
    return edges <= limit


def _next_of_several(target: int, follow: list[int], weights: Sequence[int]) -> int | None:
    """The positions that may come next after the set of several ``target``, or None where
    one of its positions stands for several copies (``weights``). One loop over its bits,
    written out (two generators over them cost more than the rest of a schema's count).

    >>> bin(_next_of_several(0b101, [0b10, 0, 0b1000], [1, 1, 1]))
    '0b1010'
    >>> _next_of_several(0b101, [0b10, 0, 0b1000], [1, 1, 3]) is None
    True
    """
    reached = 0
    while target:
        low = target & -target
        p = low.bit_length() - 1
        if weights[p] > 1:
            return None
        reached |= follow[p]
        target ^= low
    return reached


def _targets(reachable: int, accepted: int, classes_of: list[int]) -> list[int]:
    """Where the moves from a state with ``reachable`` next lead, one target for each part
    of the classes ``accepted`` (``_class_parts``). The positions are grouped by their
    classes first: where the groups' classes are apart (a schema's, after an enum's
    opening ``"``: that ``"`` of each value, the optional space), each group is one part
    and its positions the target, and nothing is split.

    >>> [bin(t) for t in _targets(0b111, 0b11, [0b01, 0b10, 0b10])]  # apart: as grouped
    ['0b1', '0b110']
    >>> [bin(t) for t in _targets(0b111, 0b111, [0b011, 0b110, 0b110])]  # split
    ['0b111', '0b1', '0b110']
    """
    grouped: dict[int, int] = {}  # classes -> the positions accepting just those
    rest = reachable
    while rest:
        low = rest & -rest
        classes = classes_of[low.bit_length() - 1]
        grouped[classes] = grouped.get(classes, 0) | low
        rest ^= low
    if sum(map(int.bit_count, grouped)) == accepted.bit_count():  # no class in two groups
        return list(grouped.values())
    parts = _class_parts(accepted, grouped)
    return [_accepting(reachable, part & -part, classes_of) for part in parts]


def _accepting(positions: int, classes: int, classes_of: list[int]) -> int:
    """Those of ``positions`` that accept one of ``classes`` (``classes_of``: each
    position's classes).

    >>> bin(_accepting(0b111, 0b10, [0b01, 0b11, 0b10]))
    '0b110'
    """
    return sum(1 << p for p in set_bits(positions) if classes_of[p] & classes)


def _class_parts(accepted: int, accepts: Iterable[int]) -> list[int]:
    """The classes of ``accepted`` split by which of the sets ``accepts`` hold them (the
    classes each reachable position accepts): the classes of one part lead to the same
    positions, those of two parts to different ones (``_class_groups`` by positions).

    >>> [bin(part) for part in _class_parts(0b111, [0b011, 0b110, 0b110])]
    ['0b10', '0b1', '0b100']
    """
    parts = [accepted]
    for k in set(accepts):
        parts = [x for part in parts for x in (part & k, part & ~k) if x]
    return parts


class _Clock:
    """One phase's deadline in ``_cpu_seconds``; every loop that may run long calls
    ``check``. Reading the CPU clock is a system call (~1 µs, as long as a small pattern's
    whole loop step), so ``check`` reads it on its first call and then on every
    ``CHECK_EVERY``-th: a step of the slowest loop takes well under 100 µs, so the deadline
    is overrun by milliseconds at most. ``doing`` names the phase in the refusal.

    >>> clock = _Clock.after(-1, "minimising")  # already past
    >>> clock.check()
    Traceback (most recent call last):
    fsmviz.automaton.syntax.RegexError: the pattern is too large: minimising its DFA takes ...
    """

    CHECK_EVERY = 32
    __slots__ = ("deadline", "doing", "_skip")

    def __init__(self, deadline: float, doing: str = "building"):
        self.deadline = deadline
        self.doing = doing
        self._skip = 0  # calls left before the clock is read again

    @classmethod
    def after(cls, seconds: float, doing: str) -> _Clock:
        """A clock that runs out ``seconds`` of CPU time from now."""
        return cls(_cpu_seconds() + seconds, doing)

    def check(self) -> None:
        if self._skip:
            self._skip -= 1
            return
        self._skip = self.CHECK_EVERY - 1
        if _cpu_seconds() > self.deadline:
            raise _too_slow(self.doing)


def _too_slow(doing: str) -> RegexError:
    return RegexError(
        f"the pattern is too large: {doing} its DFA takes longer than the {MAX_SECONDS:g} s "
        "limit of CPU time",
        None,
        "use smaller repeat counts or fewer optional parts, e.g. a{0,50} instead of (a?){50}",
    )


def _cpu_seconds() -> float:
    """This thread's CPU seconds, less those it spent in full garbage collections.

    A full collection walks every object in the process (1.6-1.7 s of CPU over 15 million
    objects, measured on this machine): a cost of the heap, not of the pattern, and the
    allocating thread pays it whenever it falls due. Counted in, one falling due inside a
    17 ms build could take it past the budget: the likely cause of two suite failures under
    load (issue 48)."""
    return time.thread_time() - _COLLECTING.seconds


class _Collecting(threading.local):
    """Per thread: ``seconds`` spent in full collections, ``since`` when the running one
    began. Read through class defaults where a thread has none yet: a ``getattr`` with a
    default that misses raises and catches inside, ~0.5 µs of each clock read."""

    seconds = 0.0
    since: float | None = None


_COLLECTING = _Collecting()


def _count_full_collections(phase: str, info: Mapping[str, int]) -> None:
    """A ``gc.callbacks`` hook (the collecting thread calls it): add each full collection's
    CPU seconds to its thread's ``_COLLECTING.seconds``."""
    if info.get("generation") != 2:
        return
    now = time.thread_time()
    if phase == "start":
        _COLLECTING.since = now
    else:
        since = _COLLECTING.since
        _COLLECTING.seconds += now - (now if since is None else since)


gc.callbacks.append(_count_full_collections)


# --- 1. positions -------------------------------------------------------------------------

_CharSet = tuple[frozenset[str], bool]  # (characters, negated)
_IGNORECASE, _DOTALL = REFlags.I.value, REFlags.S.value
_NO_FLAGS = REFlags(0)
"""A group's flags when it adds or removes none (one object: told by ``is``, where an
enum's truth is a call of Python)."""
_CHECK_MASK = 31
"""``_Positions._concatenation`` asks the clock when the count of positions made is a
multiple of 32 (``count & _CHECK_MASK == 0``), not for each: a method call per position
was a tenth of a schema's walk, and the clock reads every ``_Clock.CHECK_EVERY``-th ask,
so a read comes at least every ~1,000 positions (~1 ms)."""


def _expanded_size(node: object) -> int:
    """Number of positions ``node`` expands to, computed without expanding it. (Nodes are
    told apart by their exact type, as in ``_Positions.walk``.)"""
    kind = type(node)
    if kind is Repeated:
        times = node.max if node.max is not None else max(node.min, 1)
        return _expanded_size(node.base) * times
    if kind is Pattern:
        return sum(_expanded_size(o) for o in node.options)
    if kind is Concatenation:
        return sum(_expanded_size(p) for p in node.parts)
    if node is EMPTY:
        return 0
    return 1


def count_positions(pattern: str) -> int:
    """How many character positions ``pattern`` expands to (its repeats counted out), from its
    parse alone: a cheap forecast of the DFA's cost. Raises ``RegexError`` if it does not parse.

    >>> count_positions("[a-z]{3}@x")
    5
    """
    return _tree_size(parse(pattern)[1])


def _tree_size(tree: Pattern) -> int:
    """``_expanded_size`` of a whole parsed tree, kept for the last trees asked: a schema's
    run asks it three times of the one tree ``parse`` keeps (its path's size check, the DFA
    check, the first set by derivatives). Kept by the tree's identity
    (``syntax.TREE_SIZES``), where ``parse`` puts the count its reader made as it read
    (a 22-field schema's walk, ~0.25 ms CPU, saved); a tree of the full path is walked.

    >>> tree = parse("a{3}b")[1]
    >>> _tree_size(tree), _tree_size(tree)
    (4, 4)
    """
    return TREE_SIZES.get_or_build(tree, "positions", lambda: _expanded_size(tree))


def check_size(tree: Pattern, pattern: str) -> None:
    """Raise ``RegexError`` where ``tree`` (of ``pattern``) expands to more than
    ``MAX_POSITIONS`` positions. Without a ``{`` there is no counted repeat, and every
    position is written out in the pattern: it has at most one per character, so a
    pattern no longer than the limit is not counted (a tree walk a pattern saved).

    >>> check_size(parse("(ab)+")[1], "(ab)+")
    >>> check_size(parse("a{99999}")[1], "a{99999}")
    Traceback (most recent call last):
    ...
    fsmviz.automaton.syntax.RegexError: the pattern is too large: its repeats expand to 99,999 character positions ...
    """  # noqa: E501
    if "{" not in pattern and len(pattern) <= MAX_POSITIONS:
        return
    if _size_bound(pattern) <= MAX_POSITIONS:
        return
    size = _tree_size(tree)
    if size > MAX_POSITIONS:
        raise RegexError(
            f"the pattern is too large: its repeats expand to {size:,} character positions "
            f"(the limit is {MAX_POSITIONS:,})",
            None,
            "use smaller repeat counts, or + and * instead of large {n,m}",
        )


def _size_bound(pattern: str) -> int:
    """An upper bound on the positions of ``pattern``, read from its text: every position
    is a class written in it (at least one character) repeated at most the product of all
    its counted repeats' largest counts, so its length times that product bounds them
    (``[0-9]{3}``: 8 x 3). Where some ``{`` is not read as a count here (a literal ``{``,
    a count of more than six digits), none is told: ``MAX_POSITIONS + 1``.

    >>> _size_bound("[0-9]{3}"), _size_bound("(a{2,5}b{4,}){10}"), _size_bound("a{")
    (24, 3400, 25001)
    """
    counts = _COUNTS.findall(pattern)
    if len(counts) != pattern.count("{"):
        return MAX_POSITIONS + 1
    bound = len(pattern)
    for exact, low, high in counts:
        bound *= max(int(exact or high or low or 0), 1)
        if bound > MAX_POSITIONS:
            return MAX_POSITIONS + 1
    return bound


_COUNTS = re.compile(r"\{(?:(\d{1,6})|(\d{0,6}),(\d{0,6}))\}")
"""A counted repeat's text: ``{m}``, or ``{m,n}`` with either count left out."""


class _Positions:
    """Glushkov positions of a pattern: their character sets and who may follow whom."""

    def __init__(self, pattern: str, clock: _Clock):
        self.pattern = pattern
        self.clock = clock
        self.sets: list[_CharSet] = []
        self.follow: list[int] = []  # position -> bitset of positions that may come next
        self._folded: dict[frozenset[str], frozenset[str]] = {}  # (?i) sets, once per class
        self.scaled: list[tuple[int, int, int]] = []  # a sketch's (``_Sketch``); else empty
        self._groups: dict[tuple[int, int], _Group] = {}  # (id(group), flags) -> its walk

    def walk(self, node: object, flags: int) -> tuple[bool, int, int]:
        """(nullable, first positions, last positions) of ``node``; records ``follow``.
        ``flags`` are the ``REFlags`` in force as a plain int (``REFlags`` arithmetic is
        slow, and a long pattern has thousands of nodes). Nodes are told apart by their
        exact type: interegular's node classes derive from ``abc.ABC``, whose
        ``isinstance`` costs a Python-level call. Character classes come first: they are
        most of the nodes."""
        kind = type(node)
        if kind is CharGroup:
            chars = frozenset(node.chars)
            if flags & _IGNORECASE:
                chars = self._case_folded(chars)
            return self._position((chars, node.negated))
        if kind is Concatenation:
            return self._concatenation(node.parts, flags)
        if kind is Pattern:
            return self._group(node, flags)
        if kind is Repeated:
            return self._repeat(node, flags)
        if node is EMPTY:
            return True, 0, 0
        if node is DOT:
            charset: _CharSet = (frozenset() if flags & _DOTALL else frozenset("\n"), True)
            return self._position(charset)
        raise RegexError(f"unsupported construct {type(node).__name__}", None, None)

    def _group(self, node: Pattern, flags: int) -> tuple[bool, int, int]:
        """``walk`` of an alternation. A group the tree holds twice (``parse`` reads a
        group's text once: a schema's string characters, its numbers) is walked once:
        its positions again, shifted, with the links made inside it (``_Group``)."""
        key = (id(node), flags)  # the tree outlives the walk: its ids stay its nodes'
        known = self._groups.get(key)
        if known is not None and known.start <= len(self.sets):  # a sketch takes some back
            return known.again(self)
        start, mark = len(self.sets), len(self.scaled)
        inner = flags
        if node.added_flags is not _NO_FLAGS or node.removed_flags is not _NO_FLAGS:
            inner = (flags | node.added_flags.value) & ~node.removed_flags.value
        nullable, first, last = False, 0, 0
        for option in node.options:
            n, f, la = self.walk(option, inner)
            nullable, first, last = nullable or n, first | f, last | la
        self._groups[key] = _Group(start, self.sets[start:], self.follow[start:],
                                   self.scaled[mark:], (nullable, first, last))  # fmt: skip
        return nullable, first, last

    def _case_folded(self, chars: frozenset[str]) -> frozenset[str]:
        """``chars`` with their lower- and upper-case forms (``(?i)``), as Python's ``str``
        spells them. Forms longer than one character ("ß".upper() is "SS", "İ".lower() is
        "i̇") are no single character to match, so they are left out. Cached:
        ``(?i)[一-龥]{100}`` folds 20,000 characters once, not 100 times."""
        folded = self._folded.get(chars)
        if folded is None:
            cased = {form for c in chars for form in (c.lower(), c.upper()) if len(form) == 1}
            folded = self._folded[chars] = chars | cased
        return folded

    def _concatenation(self, parts: Sequence[object], flags: int) -> tuple[bool, int, int]:
        """``walk`` of a concatenation. A character class is a position of its own, made
        and linked here (``_position`` and ``_concat`` written out): most parts of a JSON
        schema's regex are the characters of its keys, one after another, and its optional
        spaces ``[ ]?`` (a class that may be skipped: made here too). A group of one
        empty option (``()``, ``(?:)``: the fresh pattern strings of the benchmarks end
        with several) is skipped: it matches the empty text only, so concatenated it
        changes nothing (the reader's, ``EMPTY_GROUP``, is told at once by identity)."""
        nullable, first, last = True, 0, 0
        sets, follow, check = self.sets, self.follow, self.clock.check
        for part in parts:
            kind = type(part)
            if kind is CharGroup:
                optional = False
            elif part is EMPTY_GROUP:
                continue  # ``()`` as ``parse``'s reader reads it: told by identity
            elif (
                kind is Repeated and part.max == 1 and not part.min and type(part.base) is CharGroup
            ):
                part, optional = part.base, True  # ``[ ]?``: a position, skippable
            else:
                if (
                    kind is Pattern
                    and len(options := part.options) == 1
                    and type(options[0]) is Concatenation
                    and not options[0].parts
                ):
                    continue  # ``()``: the empty text only
                if kind is NonCapturing:
                    raise RegexError("lookarounds are not supported", None, "remove them")
                n, f, la = self.walk(part, flags)
                if last & (last - 1):
                    self._link(last, f)
                elif last:
                    follow[last.bit_length() - 1] |= f
                first |= f if nullable else 0
                nullable, last = nullable and n, la | last if n else la
                continue
            p = len(sets)
            if not p & _CHECK_MASK:  # the clock, every 32 positions made
                check()
            chars = frozenset(part.chars)
            if flags & _IGNORECASE:
                chars = self._case_folded(chars)
            bit = 1 << p
            sets.append((chars, part.negated))
            follow.append(0)
            if last & (last - 1):
                self._link(last, bit)
            elif last:
                follow[last.bit_length() - 1] |= bit
            if nullable:
                first |= bit
            if optional:  # as ``_repeat`` walks one optional copy: (True, bit, bit)
                last |= bit
            else:
                nullable, last = False, bit
        return nullable, first, last

    def _position(self, charset: _CharSet) -> tuple[bool, int, int]:
        self.clock.check()
        p = len(self.sets)
        self.sets.append(charset)
        self.follow.append(0)
        bit = 1 << p
        return False, bit, bit

    def _link(self, lasts: int, firsts: int) -> None:
        """Every position of ``lasts`` may be followed by every one of ``firsts``. The
        clock is asked before a loop over several (``(a?){4000}`` links thousands each)."""
        if not lasts & (lasts - 1):  # one position or none: no loop over its bits
            if lasts and firsts:
                self.follow[lasts.bit_length() - 1] |= firsts
            return
        self.clock.check()
        follow = self.follow
        while lasts:  # set_bits, written out: a schema's optional parts link several
            low = lasts & -lasts
            follow[low.bit_length() - 1] |= firsts
            lasts ^= low

    def _concat(self, a: tuple[bool, int, int], b: tuple[bool, int, int]) -> tuple[bool, int, int]:
        (na, fa, la), (nb, fb, lb) = a, b
        self._link(la, fb)
        return na and nb, fa | (fb if na else 0), lb | (la if nb else 0)

    def _repeat(self, node: Repeated, flags: int) -> tuple[bool, int, int]:
        """``base{min,max}`` as min copies, then max-min nested optional copies
        ``(b(b(b)?)?)?`` (linear in follow links), or a looping copy when unbounded."""
        times = node.max if node.max is not None else max(node.min, 1)
        copies, chained = self._copies(node.base, flags, times, node.max is not None)
        if chained:  # each copy's last positions lead to the next copy's first already
            lasts = reduce(or_, (la for _, _, la in copies[max(node.min - 1, 0) :]), 0)
            return node.min == 0 or copies[0][0], copies[0][1], lasts
        result: tuple[bool, int, int] = (True, 0, 0)
        for copy in copies[: node.min]:
            result = self._concat(result, copy)
        if node.max is None:
            if node.min == 0:  # b* : one copy that may follow itself, and may be skipped
                _, f, la = copies[0]
                self._link(la, f)
                return self._concat(result, (True, f, la))
            _, f, la = copies[-1]  # b{2,} = b b+ : the last mandatory copy may follow itself
            self._link(la, f)
            return result
        tail: tuple[bool, int, int] = (True, 0, 0)
        for copy in reversed(copies[node.min :]):
            _, f, la = self._concat(copy, tail)
            tail = (True, f, la)
        return self._concat(result, tail)

    def _copies(
        self, base: object, flags: int, times: int, chain: bool
    ) -> tuple[list[tuple[bool, int, int]], bool]:
        """``walk(base)`` ``times`` over, in consecutive positions: the first copy walked,
        the others its positions shifted along (the same sets; the follow links made inside
        it, shifted): a schema's string of ``maxLength`` 40 walked its character's options
        40 times. With ``chain`` (a bounded repeat) and a base that cannot match the empty
        text, each copy's last positions are linked here to the next copy's first, as
        ``_repeat``'s concatenations would link them (with or without the optional
        nesting, a copy leads to the next one only), in the same shifted lists; no other
        link leaves a copy (one copy, ``b?``, has nothing to link, whatever its base). The
        copies, and whether they were so chained."""
        if times <= 1:
            return [self.walk(base, flags) for _ in range(times)], chain and times == 1
        start = len(self.sets)
        nullable, first, last = self.walk(base, flags)
        sets, follow = self.sets[start:], self.follow[start:]
        width = len(sets)
        chained = chain and not nullable
        linked = follow
        if chained:  # copy 0's, shifted for every copy but the last
            following = first << width
            linked = [
                links | following if (last >> (start + i)) & 1 else links
                for i, links in enumerate(follow)
            ]
            self.follow[start:] = linked
        copies = [(nullable, first, last)]
        for k in range(1, times):
            self.clock.check()
            shift = k * width
            self.sets.extend(sets)
            own = linked if k < times - 1 else follow
            self.follow.extend([links << shift for links in own])
            copies.append((nullable, first << shift, last << shift))
        return copies, chained


@dataclass(frozen=True)
class _Group:
    """A group's walk as made: where its positions began, their sets, the links made
    inside it (all its links when its walk ended: the ones out of it come after), its
    positions standing for several (``scaled``), and its (nullable, first, last)."""

    start: int
    sets: list[_CharSet]
    follow: list[int]
    scaled: list[tuple[int, int, int]]
    result: tuple[bool, int, int]

    def again(self, positions: _Positions) -> tuple[bool, int, int]:
        """The group walked again at the end of ``positions``: its positions shifted there."""
        positions.clock.check()
        shift = len(positions.sets) - self.start
        positions.sets.extend(self.sets)
        positions.follow.extend([links << shift for links in self.follow])
        positions.scaled.extend((s + shift, e + shift, n) for s, e, n in self.scaled)
        nullable, first, last = self.result
        return nullable, first << shift, last << shift


SKETCH_FROM = 5
"""``_Sketch`` walks a counted repeat of at most this many copies as three: fewer are
walked whole (a year's ``[0-9]{4}`` after ``[0-9]*`` puts its copies in sets of several,
which a sketch cannot weigh, and costs four positions)."""


class _Sketch(_Positions):
    """``_Positions`` with each counted repeat ``base{min,max}`` of ``SKETCH_FROM`` copies
    or more (a base that cannot match the empty text) walked as three, each standing for
    copies alike: the copies before ``max(min, 1)``, whose last positions lead only to the
    next copy; those from there to the last but one, whose last positions lead to the next
    copy or out of the repeat; the last, which leads out only. A copy's positions have the
    sets of those it stands for and next positions with the same sets, so that each
    moves alike from a state of its own (``_surely_fits``). ``scaled``: the (start, end,
    times) of the positions so standing for ``times`` copies each; ``weights``: for each
    position, how many of the whole walk's it stands for."""

    @property
    def weights(self) -> list[int]:
        weights = [1] * len(self.sets)
        for start, end, times in self.scaled:
            for p in range(start, end):
                weights[p] *= times
        return weights

    def _repeat(self, node: Repeated, flags: int) -> tuple[bool, int, int]:
        if node.max is None or node.max < SKETCH_FROM:
            return super()._repeat(node, flags)
        heads = max(node.min, 1)  # copies 1..heads-1 lead only to the next one
        kinds = [(n, out) for n, out in ((heads - 1, False), (node.max - heads, True),
                                         (1, True)) if n]  # fmt: skip
        start, mark = len(self.sets), len(self.scaled)
        copies, chained = self._copies(node.base, flags, len(kinds), True)
        if not chained:  # a base that may be empty: walked whole, as the whole walk does
            del self.sets[start:], self.follow[start:], self.scaled[mark:]
            return super()._repeat(node, flags)
        width = (len(self.sets) - start) // len(kinds)
        for k, (times, _) in enumerate(kinds):
            if times > 1:
                self.scaled.append((start + k * width, start + (k + 1) * width, times))
        outs = (la for (_, out), (_, _, la) in zip(kinds, copies, strict=True) if out)
        lasts = reduce(or_, outs, 0)
        return node.min == 0, copies[0][1], lasts

    def _copies(
        self, base: object, flags: int, times: int, chain: bool
    ) -> tuple[list[tuple[bool, int, int]], bool]:
        """``_Positions._copies``, each copy's positions standing for as many as the
        first's (a repeat inside the base scaled in every copy)."""
        start, mark = len(self.sets), len(self.scaled)
        copies, chained = super()._copies(base, flags, times, chain)
        if times > 1 and len(self.scaled) > mark:
            width, inner = (len(self.sets) - start) // times, self.scaled[mark:]
            self.scaled.extend((s + k * width, e + k * width, n)
                               for k in range(1, times) for s, e, n in inner)  # fmt: skip
        return copies, chained


def _distinct_sets(
    positions: _Positions,
) -> tuple[dict[_CharSet, int], list[int], set[str], set[str]]:
    """The distinct character sets of ``positions`` (each numbered in the order first met),
    each position's number, the characters any set lists, and those two sets or more list
    (what ``_alphabet`` and ``_sharing_classes`` split on)."""
    index: dict[_CharSet, int] = {}
    set_ids = [index.setdefault(cs, len(index)) for cs in positions.sets]
    seen: set[str] = set()
    shared: set[str] = set()
    for chars, _ in index:
        shared |= seen & chars
        seen |= chars
    return index, set_ids, seen, shared


def _alphabet(
    positions: _Positions,
) -> tuple[
    list[tuple[frozenset[str], bool]], list[tuple[int, ...]], list[int], frozenset[str], list[int]
]:
    """Split characters into classes the pattern of ``positions`` never tells apart: the
    classes (each its characters, and whether it holds the others, as ``CharClass``
    reads them), for each class the distinct character sets that accept it, for each position
    the bitset of classes it accepts, the characters the pattern mentions, and for each
    position its distinct set (numbered in the order first met).

    A character's *signature* is the set of distinct character sets that accept it;
    characters with equal signatures form a class. A character listed by one set only
    (nearly all of a wide class like ``[一-龥]``) has that set's signature, so those are
    grouped with whole-set operations; only characters listed by several sets are
    looked at one by one. Where no character is listed twice and no set is negated (a
    keyword's ``[eE][lL][sS][eE]``, a date's ``\\d`` and ``-``), each set is a class
    of its own (``_apart_alphabet``)."""
    index, set_ids, seen, shared = _distinct_sets(positions)
    if not shared and all(chars and not negated for chars, negated in index):
        return _apart_alphabet(list(index), set_ids, seen)
    return _signature_alphabet(positions, index, set_ids, seen, shared)


def _apart_alphabet(
    distinct: list[_CharSet], set_ids: list[int], seen: set[str]
) -> tuple[
    list[tuple[frozenset[str], bool]], list[tuple[int, ...]], list[int], frozenset[str], list[int]
]:
    """``_alphabet`` of sets that are none negated, none empty, no two sharing a character:
    each set's signature is itself alone, so each is a class, the classes in the order of
    their smallest characters as ``_signature_alphabet`` sorts them (~5 µs, where the
    signatures took ~15-30 for a keyword's 4-8 sets).

    >>> sets = [(frozenset("lL"), False), (frozenset("eE"), False)]  # as met in "lel"
    >>> classes, class_sets, position_classes, _, _ = _apart_alphabet(sets, [0, 1, 0], set())
    >>> [sorted(chars) for chars, _ in classes], class_sets, position_classes
    ([['E', 'e'], ['L', 'l']], [(1,), (0,)], [2, 1, 2])
    """
    order = sorted(range(len(distinct)), key=lambda i: min(distinct[i][0]))
    set_classes = [0] * len(distinct)
    for k, i in enumerate(order):
        set_classes[i] = 1 << k
    classes = [(distinct[i][0], False) for i in order]
    position_classes = [set_classes[i] for i in set_ids]
    return classes, [(i,) for i in order], position_classes, frozenset(seen), set_ids


def _signature_alphabet(
    positions: _Positions,
    index: dict[_CharSet, int],
    set_ids: list[int],
    seen: set[str],
    shared: set[str],
) -> tuple[
    list[tuple[frozenset[str], bool]], list[tuple[int, ...]], list[int], frozenset[str], list[int]
]:
    """``_alphabet`` by signatures, from ``_distinct_sets``' answer for ``positions``."""
    distinct = list(index)
    mentioned = frozenset(seen)
    # A negated set accepts exactly the characters it does not list, so a character's
    # signature is the sets listing it, flipped for the negated ones.
    others = frozenset(i for i, (_, negated) in enumerate(distinct) if negated)
    groups: dict[frozenset[int], frozenset[str]] = {}  # signature -> its characters
    listed_in: dict[str, list[int]] = {}  # shared character -> the sets listing it
    for i, (chars, _) in enumerate(distinct):
        if only_here := chars - shared:
            groups[others.symmetric_difference((i,))] = only_here
        for char in chars & shared:
            listed_in.setdefault(char, []).append(i)
        positions.clock.check()
    by_sets: dict[frozenset[int], set[str]] = {}
    for char, sets in listed_in.items():
        by_sets.setdefault(others.symmetric_difference(sets), set()).add(char)
    groups.update((sig, frozenset(chars)) for sig, chars in by_sets.items())
    classes: list[tuple[frozenset[str], bool]] = []
    class_sets: list[tuple[int, ...]] = []

    def first_char(sig: frozenset[int]) -> tuple[str, bool]:  # a stable drawing order
        return min(groups.get(sig, "\U0010ffff")), sig not in groups

    set_classes = [0] * len(distinct)  # distinct set -> the classes it accepts
    for sig in sorted(set(groups) | {others}, key=first_char):
        if not sig:
            continue  # no position accepts these characters: they never move the DFA
        for i in sig:
            set_classes[i] |= 1 << len(classes)
        positions.clock.check()
        classes.append((groups.get(sig, frozenset()), sig == others))
        class_sets.append(tuple(sig))
    position_classes = [set_classes[i] for i in set_ids]
    return classes, class_sets, position_classes, mentioned, set_ids


def set_bits(mask: int) -> Iterator[int]:
    """The positions of ``mask``'s set bits, ascending: the members of a set kept as an
    int (positions, classes, bytes). ``mask & -mask`` is the lowest set bit alone.

    >>> list(set_bits(0b10110))
    [1, 2, 4]
    """
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


# --- 2. subsets ---------------------------------------------------------------------------


_Moves = dict[int, int]
"""A state's moves while the DFA is built: target state -> bitset of the classes leading
there (``{3: 0b101}``: classes 0 and 2 lead to state 3). A JSON string's state moves on
dozens of classes to one state, so this is one entry where a row by class has dozens.
``Dfa`` keeps the minimal DFA so (``Dfa.moves``) and writes rows by class from it when
asked (``Dfa.transitions``, ``_by_class``)."""


def _subsets(
    nullable: bool,
    first: int,
    last: int,
    follow: list[int],
    class_masks: list[int],
    position_classes: list[int],
    pattern: str,
    clock: _Clock,
    by_future: bool = False,
) -> tuple[set[int], list[_Moves]]:
    """Determinise: a state is the set of positions just matched (0 = the start).

    From a state, the positions that may come next (``reachable``) are told apart by the
    classes they accept: class ``k`` leads to ``reachable & class_masks[k]``. With one
    position next (most of a schema's states: a literal's next character), that position
    is the one target, on the classes it accepts. With few classes, each is asked in turn.
    With many (a JSON schema has 52, the cron pattern 23), only the classes some position
    next accepts (``present``, gathered with ``reachable`` from each position's
    ``next_classes``) are asked, where they are at most ``ASK_PER_POSITION`` per position
    next: the cron pattern's states ask ~6 of 23. Otherwise the classes are split by the
    classes of each reachable position, so classes reaching the same positions stay
    together and their target is looked up once. Example: after ``"`` in ``"[^"]*"`` the
    positions that may come next are ``[^"]`` (accepting every class but ``"``) and the
    closing ``"``: two groups, two lookups, however many classes there are.

    New states are numbered in the order of their smallest class, as asking class 0, 1,
    2... in turn numbers them, and each state's moves are written in that order (its
    targets by smallest class: ``_renumbered`` reads them so). Two states with the same
    positions next (``alike``: a search's states often are, ``[^:]+://…`` half of its 507)
    move alike: the moves found for the first are the second's, its targets all numbered.

    With ``by_future`` (``compile_regex``'s builds), such states are one state where they
    also agree on accepting: what a state may still read is its positions next, and not
    which positions it just matched, so they have one future, and minimising would merge
    them. A subset met is looked up by its positions next and whether it accepts (their
    ``futures``); e.g. the cron pattern's ``/`` and ``-`` after a number lead to one state.
    The corpus's 261 patterns build 10,377 states so, not 13,297 (a search's ``[^:]+://…``
    235, not 507), and 10,009 on positions of one future made one (``_Walked.subsets``:
    95; IPv6 78, not 174); ``compile_stages`` keeps the plain subsets, for the Learn view.
    """
    everything = (1 << len(class_masks)) - 1
    few = len(class_masks) <= FEW_CLASSES
    many = not few and _narrow(position_classes)  # gather the classes each state may read
    next_classes = [_classes_of(links, position_classes) for links in follow] if many else []
    first_classes = _classes_of(first, position_classes) if many else 0
    ids: dict[int, int] = {0: 0}  # a subset met -> its state
    futures = {(first, nullable): 0}  # (positions next, accepts) -> its state (``by_future``)
    reach, presents = [first], [first_classes]  # each state's positions next, their classes
    accepting: set[int] = {0} if nullable else set()
    transitions: list[_Moves] = []
    alike: dict[int, _Moves] = {}  # several positions next -> the moves made from them

    def new_state(target: int) -> int:
        reachable = present = 0
        rest = target
        while rest:  # ``set_bits`` inlined: one generator fewer per subset
            low = rest & -rest
            p = low.bit_length() - 1
            reachable |= follow[p]
            if many:  # and the classes some position next accepts
                present |= next_classes[p]
            rest ^= low
        accepts = target & last != 0
        if by_future and (j := futures.setdefault((reachable, accepts), len(reach))) < len(reach):
            ids[target] = j  # a state with this future is known: the subset is that state
            return j
        j = ids[target] = len(reach)
        reach.append(reachable)
        presents.append(present)
        if accepts:
            accepting.add(j)
        if len(reach) > MAX_STATES:
            raise _too_large(pattern)
        return j

    for i, reachable in enumerate(reach):  # states are appended as they are met
        moves: _Moves = {}
        if reachable & (reachable - 1) == 0:  # one position next, or none (a schema's
            accepted = position_classes[reachable.bit_length() - 1] if reachable else 0
            if accepted:  # states are mostly so): it is the one target, on its classes
                j = ids.get(reachable)
                moves[new_state(reachable) if j is None else j] = accepted
        elif (made := alike.get(reachable)) is not None:
            moves.update(made)  # the same positions next: the same moves, no state new
        elif few or (not many and len(class_masks) <= 2 * reachable.bit_count()):
            alike[reachable] = moves
            for k, mask in enumerate(class_masks):  # new targets are met in class order
                if target := reachable & mask:
                    j = ids.get(target)
                    if j is None:
                        j = new_state(target)
                    moves[j] = moves.get(j, 0) | 1 << k
        elif many and presents[i].bit_count() <= ASK_PER_POSITION * reachable.bit_count():
            moves = alike[reachable] = _asked(reachable, presents[i], class_masks, ids, new_state)
        else:
            groups = _class_groups(reachable, position_classes, everything)
            moves = alike[reachable] = _numbered(groups, ids, new_state)
        clock.check()
        transitions.append(moves)
    return accepting, transitions


ASK_PER_POSITION = 2
"""``_subsets`` asks a state's classes in turn, where there are many, only when those some
position next accepts are at most this many per position next; else it splits them by
position (``_class_groups``)."""


def _asked(
    reachable: int, classes: int, class_masks: list[int], ids: dict[int, int], new: Callable
) -> _Moves:
    """A state's moves from ``reachable`` on ``classes`` (each accepted by some of those
    positions), the classes asked in turn: ``_subsets``'s where they are few of many.
    Targets are looked up in ``ids``, else numbered by ``new``, in class order."""
    moves: _Moves = {}
    while classes:
        low = classes & -classes
        target = reachable & class_masks[low.bit_length() - 1]
        j = ids.get(target)
        if j is None:
            j = new(target)  # (``by_future``: maybe a state already moved to)
        moves[j] = moves.get(j, 0) | low
        classes ^= low
    return moves


def _numbered(groups: Iterable[tuple[int, int]], ids: dict[int, int], new: Callable) -> _Moves:
    """A state's moves from its classes split by position (``_class_groups``: classes,
    target positions), in class order: targets looked up in ``ids``, else numbered by
    ``new`` in the order of their smallest class, as asking each class would meet them."""
    moves: _Moves = {}
    for classes, target in _smallest_class_first([(c, t) for c, t in groups if t]):
        j = ids.get(target)
        if j is None:
            j = new(target)  # (``by_future``: maybe a state already moved to)
        moves[j] = moves.get(j, 0) | classes
    return moves


def _narrow(position_classes: list[int]) -> bool:
    """Whether no position accepts more than ``FEW_CLASSES`` classes: only then is it worth
    gathering the classes a state may read (``_subsets``). A JSON string's ``[^"\\\\]``
    accepts nearly all: a state holding it splits its classes by position anyway.

    >>> _narrow([0b1, 0b10]), _narrow([(1 << 17) - 1])
    (True, False)
    """
    return all(classes.bit_count() <= FEW_CLASSES for classes in set(position_classes))


def _classes_of(positions: int, position_classes: list[int]) -> int:
    """The classes any of ``positions`` accepts (``position_classes``: each one's).

    >>> bin(_classes_of(0b101, [0b001, 0b100, 0b010]))
    '0b11'
    """
    classes = 0
    while positions:
        low = positions & -positions
        classes |= position_classes[low.bit_length() - 1]
        positions ^= low
    return classes


def _class_groups(
    reachable: int, position_classes: list[int], everything: int
) -> Iterable[tuple[int, int]]:
    """The classes split by where they lead from ``reachable``: ``(classes, target)``
    pairs, the classes in each leading to the same positions (an empty target where they
    lead nowhere).

    The reachable positions are first gathered by the classes they accept; each such set
    then cuts every group in two (the classes inside it reach its positions too, those
    outside do not). Example: positions 1 (``[^"]``) and 2 (``"``), classes 0 (``"``) and
    1 (the rest): ``{0b01: 0b100, 0b10: 0b010}``, one lookup per group.

    >>> sorted(_class_groups(0b110, [0, 0b10, 0b01], 0b11))
    [(1, 4), (2, 2)]
    """
    by_classes: dict[int, int] = {}  # a set of classes -> the positions accepting them
    get = by_classes.get
    rest = reachable
    while rest:  # ``set_bits`` inlined, as in ``_subsets``
        low = rest & -rest
        classes = position_classes[low.bit_length() - 1]
        by_classes[classes] = get(classes, 0) | low
        rest ^= low
    if len(by_classes) == 1:  # all alike (35 of the cron pattern's 68 calls): one cut
        ((accepted, positions),) = by_classes.items()
        one_cut = {accepted: positions}
        if outside := everything & ~accepted:
            one_cut[outside] = 0
        return one_cut.items()
    groups = {everything: 0}  # classes alike so far -> the positions they reach
    for accepted, positions in by_classes.items():
        split: dict[int, int] = {}
        for classes, target in groups.items():
            if inside := classes & accepted:
                split[inside] = target | positions
            if outside := classes & ~accepted:
                split[outside] = target
        groups = split
    return groups.items()


def _smallest_class_first(moves: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``(classes, x)`` pairs ordered by their smallest class: the order in which reading
    class 0, 1, 2... meets them, which numbers new states. The lowest set bit of a set of
    classes (``0b10100 & -0b10100`` is ``0b100``) stands for its smallest class.

    >>> _smallest_class_first([(0b1000, 9), (0b10100, 7)])  # classes {3}, then {2, 4}
    [(20, 7), (8, 9)]
    """
    if len(moves) > 1:
        moves.sort(key=lambda move: move[0] & -move[0])
    return moves


class _Rows:
    """Rows by class (``{class: target}``) from moves by target (``{target: classes}``).
    Sets of classes recur (the dozens of string states of a schema all move on the same
    sets), so each set is spelled out once.

    >>> _Rows().row({1: 0b101, 2: 0b010})  # classes 0 and 2 lead to 1, class 1 to 2
    {0: 1, 1: 2, 2: 1}
    """

    def __init__(self) -> None:
        self._spelled: dict[int, list[int]] = {}  # classes -> its classes, ascending

    def row(self, moves: _Moves) -> dict[int, int]:
        """``moves`` by class, ascending."""
        if len(moves) == 1:  # most states: one target, on one class or dozens
            ((target, classes),) = moves.items()
            return dict.fromkeys(self._spell(classes), target)
        # Every class first, ascending (a dict keeps the order its keys came in), then
        # each target's classes set in place: no sort of (class, target) pairs.
        row: dict[int, int] = dict.fromkeys(self._spell(reduce(or_, moves.values(), 0)))
        for target, classes in moves.items():
            row.update(dict.fromkeys(self._spell(classes), target))
        return row

    def _spell(self, classes: int) -> list[int]:
        ks = self._spelled.get(classes)
        if ks is None:
            ks = self._spelled[classes] = list(set_bits(classes))
        return ks


def _by_class(transitions: Sequence[_Moves]) -> tuple[dict[int, int], ...]:
    """Rows by class (``{class: target}``): ``Dfa.transitions``, and
    ``Stages.subset_rows`` (the subset construction's DFA, as the Learn view tabulates it)."""
    rows = _Rows()
    return tuple(rows.row(moves) for moves in transitions)


def _too_large(pattern: str) -> RegexError:
    return RegexError(
        f"the pattern is too large: its DFA needs more than {MAX_STATES:,} states, "
        "typically because it must remember many characters at once, as (a|b)*a(a|b){20} does",
        None,
        "make the ambiguous part unambiguous or bounded, e.g. anchor what follows a repeat",
    )


# --- 3. pruning and minimisation ----------------------------------------------------------


def _kept(accepting: set[int], transitions: list[_Moves]) -> list[int]:
    """The states ``_prune_dead`` keeps, ascending: those that can reach an accepting
    state, and state 0."""
    far = backward_distances(len(transitions), lambda s: transitions[s].keys(), accepting)
    return sorted({0, *np.flatnonzero(far != UNREACHABLE).tolist()})


def _prune_dead(accepting: set[int], transitions: list[_Moves]) -> tuple[set[int], list[_Moves]]:
    """Drop states from which no accepting state is reachable (keeping state 0)."""
    keep = _kept(accepting, transitions)
    if len(keep) == len(transitions):
        return accepting, transitions  # nothing to drop (the usual case)
    live = set(keep)
    renumber = {s: i for i, s in enumerate(keep)}
    pruned = [{renumber[t]: c for t, c in transitions[s].items() if t in live} for s in keep]
    return {renumber[s] for s in accepting}, pruned


def _minimise(
    accepting: set[int], transitions: list[_Moves], clock: _Clock
) -> tuple[set[int], list[_Moves]]:
    """Merge equivalent states (in one pass from the ends back where the DFA allows it,
    else Hopcroft's refinement), then number states breadth-first from the start.

    Example: ``ab|cb`` with classes a=0, c=1, b=2 (moves ``{target: classes}``). After
    ``a`` and after ``c`` the same future remains (one ``b``), so states 1 and 2 merge, and
    so do the two accepting ends:

    >>> moves = [{1: 0b001, 2: 0b010}, {3: 0b100}, {4: 0b100}, {}, {}]
    >>> _minimise({3, 4}, moves, _Clock.after(1.0, "minimising"))
    ({2}, [{1: 3}, {2: 4}, {}])

    ``transitions`` come numbered as ``_subsets`` numbers states (breadth-first from the
    start, each state's new targets in the order of their smallest class; ``_prune_dead``
    keeps that order), which is ``_renumbered``'s numbering, and each state's moves come
    in the order of their smallest class, as ``_renumbered`` writes them. So where no two
    states merge (most small patterns: ``uuid``'s 37 states, a phone number's 15), the
    states and their moves are kept as they are.
    A chain (``_is_chain``: a keyword such as ``[nN][oO][nN][eE]``) is minimal as it is.
    """
    if _is_chain(transitions):
        return accepting, list(transitions)
    block_of = _merged_bottom_up(accepting, transitions, clock)
    if block_of is None:
        block_of = _hopcroft(accepting, transitions, clock)
    if max(block_of, default=-1) + 1 == len(transitions):  # blocks are numbered 0, 1, 2...
        return accepting, list(transitions)
    return _renumbered(accepting, transitions, block_of)


def _is_chain(transitions: list[_Moves]) -> bool:
    """Whether state ``i`` moves to ``i + 1`` alone and the last state nowhere: then no
    two states merge, as minimising would find. The last state accepts (a trim DFA's
    only end), so from ``i`` some word of ``n - 1 - i`` characters is accepted, and from
    any later state every word that long is refused: each state is its own class. The
    numbers are already breadth-first and each state has one move: ``_minimise``'s
    result is the input.

    >>> _is_chain([{1: 0b011}, {2: 0b100}, {}]), _is_chain([{1: 0b01}, {1: 0b10}])
    (True, False)
    """
    last = len(transitions) - 1
    for state, moves in enumerate(transitions):
        if len(moves) != (state < last) or (moves and state + 1 not in moves):
            return False
    return True


def _merged_bottom_up(
    accepting: set[int], transitions: list[_Moves], clock: _Clock
) -> list[int] | None:
    """The equivalence classes of a DFA whose only cycles are loops on one state (a JSON
    schema's: each string or number loops in place), found in one pass from the ends back
    to the start, as a DAWG merges a trie's equal subtrees; None where a longer cycle
    exists (``(ab)*``), which ``_hopcroft`` handles.

    Taken children first, each state meets only targets whose classes are final, so it
    is known by its *signature*: whether it accepts, and the classes leading into each
    class of targets. Its own class is the one unknown, and its loops may lead into it,
    so a class's signature writes moves into itself as ``SELF``. A state joins class X
    when its signature, with X read as ``SELF``, is X's: its loops and its moves into X
    stay in X, every other move agrees with X's. Candidates for X are the classes it
    moves into, and a class it does not move into (its loops only as ``SELF``); if none
    fits, the state starts a class. A class it moves into can take it only if that
    class's signature holds ``SELF`` (its first state looped: ``looping``), so only those
    are tried: a DFA without loops (``ipv4``, a date) tries none. For a schema's 1,170
    states this is one dictionary lookup or two per state, where Hopcroft's refinement
    splits ~900 blocks one by one.

    Example: ``"[^"]*"`` built naively, with an opening state 1 (``[^"]`` to 2) and a
    looping state 2 (``[^"]`` to itself), both ``"`` to the accepting end 3: state 3 is
    ({accepts}, no moves); 2 is ``[^"]`` → SELF and ``"`` → 3's class; 1, with X = 2's
    class read as SELF, has the same signature, so 1 and 2 are one state.

    >>> moves = [{1: 0b01}, {2: 0b10, 3: 0b01}, {2: 0b10, 3: 0b01}, {}]
    >>> _merged_bottom_up({3}, moves, _Clock.after(1.0, "minimising"))
    [2, 1, 1, 0]
    """
    order = _children_first(transitions)
    if order is None:
        return None
    block_of = [-1] * len(transitions)
    known: dict[tuple[bool, tuple[tuple[int, int], ...]], int] = {}  # signature -> class
    looping: set[int] = set()  # classes whose signature holds SELF: a candidate's only kind
    for state in order:
        clock.check()
        loops = 0
        state_moves = transitions[state]
        if len(state_moves) == 1 and state not in state_moves:  # most states: a chain's
            ((target, classes),) = state_moves.items()
            moves = [(block_of[target], classes)]
        else:
            into: dict[int, int] = {}  # class of targets -> the classes leading there
            for target, classes in state_moves.items():
                if target == state:
                    loops = classes
                else:
                    b = block_of[target]
                    into[b] = into.get(b, 0) | classes
            moves = sorted(into.items())
        accepts = state in accepting
        own = ((SELF, loops), *moves) if loops else tuple(moves)
        found = known.get((accepts, own), -1)  # a class it does not move into
        for i, (candidate, classes) in enumerate(moves if found < 0 and looping else ()):
            if candidate not in looping:
                continue
            read = ((SELF, classes | loops), *moves[:i], *moves[i + 1 :])
            if known.get((accepts, read)) == candidate:  # the class it moves into
                found = candidate
                break
        if found < 0:
            found = known[(accepts, own)] = len(known)
            if loops:
                looping.add(found)
        block_of[state] = found
    return block_of


SELF = -1
"""In a class's signature (``_merged_bottom_up``), the moves that stay in the class."""


def _children_first(transitions: list[_Moves]) -> list[int] | None:
    """Every state after all the states it moves to (loops on one state aside), or None
    if the DFA has a longer cycle. An iterative depth-first search: a state is listed when
    its last target is done; meeting a state still on the path is a cycle."""
    ON_PATH, DONE = 1, 2
    mark = [0] * len(transitions)
    order: list[int] = []
    for root in range(len(transitions)):
        if mark[root]:
            continue
        mark[root] = ON_PATH
        path = [(root, iter(transitions[root]))]
        while path:
            state, targets = path[-1]
            for target in targets:
                if target == state or mark[target] == DONE:
                    continue
                if mark[target] == ON_PATH:
                    return None
                mark[target] = ON_PATH
                path.append((target, iter(transitions[target])))
                break
            else:
                mark[state] = DONE
                order.append(state)
                path.pop()
    return order


def _hopcroft(accepting: set[int], transitions: list[_Moves], clock: _Clock) -> list[int]:
    """The equivalence classes of any DFA by Hopcroft's refinement, as a block number per
    state.

    Start from blocks of states alike in what can be seen at once: whether they accept and
    which classes they move on (every state can still reach acceptance, so a class with no
    move is a refusal and tells states apart). Then split blocks until every state in a
    block has the same future. A *splitter* is a block A: states whose edges into A are on
    different classes must be told apart. So each state with an edge into A gets its
    *signature*, the bitset of classes leading into A, and every block is split by
    signature (a state with no edge into A has the empty one). Parallel edges are read
    together: a JSON string's state reaches its next state on dozens of classes, one move
    (``_Moves``) and one entry of ``incoming``.

    Hopcroft's trick is to leave one part of each split unqueued, the largest: its splits
    follow from the other parts' and the whole's, where the whole is the block before the
    split or, for the starting blocks, all states (states in one starting block move on
    the same classes, so they already agree on which classes lead anywhere). That makes
    the refinement O(edges · log states): a chain like ``x{4999}`` takes milliseconds,
    where rounds of Moore's algorithm took one round per state. A missing edge leads to a
    dead state that is never written out: the starting blocks already tell apart the
    states that refuse a class (Valmari and Lehtinen, 2008, refine partial DFAs so).
    """
    incoming, blocks, block_of = _starting_blocks(accepting, transitions)
    largest = max(range(len(blocks)), key=lambda b: len(blocks[b]))
    queued = set(range(len(blocks))) - {largest}
    pending = sorted(queued)
    while pending:
        clock.check()
        splitter = pending.pop()
        queued.discard(splitter)
        members = blocks[splitter]
        if len(members) == 1:  # (half the splitters): its one state's incoming moves
            (target,) = members
            signature = incoming[target]
        else:
            signature = {}  # source -> classes leading into the splitter
            get = signature.get
            for target in members:
                for source, classes in incoming[target].items():
                    signature[source] = get(source, 0) | classes
        hit: dict[int, dict[int, list[int]]] = {}  # block -> signature -> its states
        for source, classes in signature.items():
            b = block_of[source]
            if len(blocks[b]) > 1:  # a block of one state has nothing to split
                by_signature = hit.get(b)
                if by_signature is None:
                    hit[b] = {classes: [source]}
                elif (part := by_signature.get(classes)) is None:
                    by_signature[classes] = [source]
                else:
                    part.append(source)
        for b, by_signature in hit.items():
            if len(by_signature) == 1:  # one signature (as most hit blocks): no sort
                (part,) = by_signature.values()
                if len(part) < len(blocks[b]):  # else nothing to tell apart
                    _split_once(b, part, blocks, block_of, queued, pending)
            else:
                _split(b, by_signature, blocks, block_of, queued, pending)
    return block_of


def _split_once(
    b: int,
    part: list[int],
    blocks: list[set[int]],
    block_of: list[int],
    queued: set[int],
    pending: list[int],
) -> None:
    """``_hopcroft``'s usual split: ``part`` of block ``b`` (not all of it) leaves as a new
    block; the new block is queued if ``b`` is, else the smaller of the two."""
    block = blocks[b]
    block.difference_update(part)
    number = len(blocks)
    for state in part:
        block_of[state] = number
    blocks.append(set(part))
    smaller = number if b in queued or len(part) <= len(block) else b
    queued.add(smaller)
    pending.append(smaller)


def _split(
    b: int,
    by_signature: dict[int, list[int]],
    blocks: list[set[int]],
    block_of: list[int],
    queued: set[int],
    pending: list[int],
) -> None:
    """``_hopcroft``'s split of block ``b`` by several signatures: each part leaves as a
    new block, except the largest where every state was hit (it keeps ``b``). If ``b`` is
    queued, the new blocks join it; else all but the largest of ``b`` and them."""
    block = blocks[b]
    parts = sorted(by_signature.values(), key=len)
    if sum(map(len, parts)) == len(block):
        parts.pop()  # every state was hit: the largest part keeps its number
    first_new = len(blocks)
    for part in parts:
        block.difference_update(part)
        number = len(blocks)
        for state in part:
            block_of[state] = number
        blocks.append(set(part))
    new = range(first_new, len(blocks))
    if b in queued:
        halves = list(new)  # b stays queued: its new parts join it
    else:
        largest = max(new, key=lambda c: len(blocks[c]))
        halves = [c for c in new if c != largest]
        halves.append(b if len(block) < len(blocks[largest]) else largest)
    queued.update(halves)
    pending.extend(halves)


def _starting_blocks(
    accepting: set[int], transitions: list[_Moves]
) -> tuple[list[dict[int, int]], list[set[int]], list[int]]:
    """Hopcroft's starting partition: states alike in whether they accept and which
    classes they move on, as ``(incoming, blocks, block_of)``: each state's incoming moves
    (source -> classes), the blocks, and each state's block number.

    >>> _, blocks, block_of = _starting_blocks({2}, [{1: 0b1}, {2: 0b1}, {}])
    >>> blocks, block_of
    ([{0, 1}, {2}], [0, 0, 1])
    """
    incoming: list[dict[int, int]] = [{} for _ in transitions]  # source -> classes
    alike: dict[tuple[bool, int], int] = {}  # (accepts, classes moved on) -> block
    block_of: list[int] = []
    for source, moves in enumerate(transitions):
        moved_on = 0
        for target, classes in moves.items():
            incoming[target][source] = classes
            moved_on |= classes
        key = (source in accepting, moved_on)
        b = alike.get(key)
        if b is None:
            b = alike[key] = len(alike)
        block_of.append(b)
    blocks: list[set[int]] = [set() for _ in alike]
    for state, b in enumerate(block_of):
        blocks[b].add(state)
    return incoming, blocks, block_of


def _renumbered(
    accepting: set[int], transitions: list[_Moves], block_of: list[int]
) -> tuple[set[int], list[_Moves]]:
    """The DFA of ``block_of``'s blocks, numbered breadth-first from the start, each
    state's targets in the order of their smallest class (as reading classes 0, 1, 2...
    meets them): numbers that keep drawings stable and readable. A block's moves are read
    from the state it was first reached at: the blocks are a congruence (states in one
    block move on each class into one block), so any of its states gives the same. The
    moves come in class order (``_subsets`` writes them so), so the blocks they reach are
    met in class order too, with no sort (a sort per state was ~1 µs: 0.2 ms of the cron
    pattern's 151 states)."""
    order = {block_of[0]: 0}  # block -> its number
    queue = [0]  # a state of each numbered block, by number
    moves: list[_Moves] = []
    while len(moves) < len(queue):
        state_moves = transitions[queue[len(moves)]]
        if len(state_moves) == 1:  # most states: one target, nothing to order or merge
            ((target, classes),) = state_moves.items()
            b = block_of[target]
            if b not in order:
                order[b] = len(queue)
                queue.append(target)
            moves.append({order[b]: classes})
            continue
        merged: _Moves = {}
        for target, classes in state_moves.items():  # in class order, as ``_subsets`` wrote
            b = block_of[target]
            if b not in order:
                order[b] = len(queue)
                queue.append(target)
            n = order[b]
            merged[n] = merged.get(n, 0) | classes
        moves.append(merged)
    accepting_blocks = {order[block_of[s]] for s in accepting if block_of[s] in order}
    return accepting_blocks, moves


# --- labels and ranges --------------------------------------------------------------------


def _code_points(chars: frozenset[str]) -> list[int]:
    """The code points of ``chars``, sorted."""
    return sorted(map(ord, chars))


def point_ranges(points: list[int]) -> tuple[tuple[int, int], ...]:
    """Sorted code points → inclusive ranges of consecutive ones. Many points (a class
    like ``[^a-😀]`` names 128,000) are cut into runs by numpy, a few by a plain loop.

    >>> point_ranges([48, 49, 50, 65, 67])
    ((48, 50), (65, 65), (67, 67))
    """
    if len(points) > 64:
        array = np.asarray(points)
        cuts = np.flatnonzero(np.diff(array) != 1)
        starts = [points[0], *array[cuts + 1].tolist()]
        ends = [*array[cuts].tolist(), points[-1]]
        return tuple(zip(starts, ends, strict=True))
    out: list[tuple[int, int]] = []
    for p in points:
        if out and out[-1][1] == p - 1:
            out[-1] = (out[-1][0], p)
        else:
            out.append((p, p))
    return tuple(out)


def complement_ranges(excluded: list[int]) -> tuple[tuple[int, int], ...]:
    """All Unicode scalar values except ``excluded`` (sorted) and the surrogates: the gaps
    between the runs of ``excluded``.

    >>> complement_ranges([0, 1, 2, 0x41])[:2]
    ((3, 64), (66, 55295))
    """
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in [*point_ranges(excluded), (UNICODE_MAX + 1, UNICODE_MAX + 1)]:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    lo, hi = SURROGATES
    clipped: list[tuple[int, int]] = []
    for a, b in out:
        if b < lo or a > hi:
            clipped.append((a, b))
        else:
            if a < lo:
                clipped.append((a, lo - 1))
            if b > hi:
                clipped.append((hi + 1, b))
    return tuple(clipped)


def show_char(char: str) -> str:
    """A character as it should appear in a label: ``\\n``, ``␣`` for space, ``\\x04``
    (``fsmviz.printable`` with the labels' names)."""
    return escape_char(char, LABEL_NAMES)


def _show_set(chars: frozenset[str]) -> str:
    parts = []
    for a, b in point_ranges(_code_points(chars)):
        if b - a >= 2:
            parts.append(f"{show_char(chr(a))}-{show_char(chr(b))}")
        else:
            parts.extend(show_char(chr(p)) for p in range(a, b + 1))
    return " ".join(parts) if any(len(p) > 1 for p in parts) else "".join(parts)


def _label(chars: frozenset[str], others: bool, mentioned: frozenset[str]) -> str:
    if not others:
        return _show_set(chars)
    excluded = mentioned - chars
    return f"not {_show_set(excluded)}" if excluded else "any"


@dataclass(frozen=True)
class Stages:
    """Every intermediate object of ``compile_regex``, for teaching (``compile_stages``).

    ``positions[p]`` labels Glushkov position ``p`` (``0-9``, ``.``); ``follow[p]``, ``first``
    and ``last`` are bitsets of positions. ``subsets[s]`` is the bitset of positions that
    DFA state ``s`` stands for, in the order the subset construction added them (state 0 is
    the empty set: nothing read yet); ``subset_moves`` (per state, target -> bitset of
    classes, as ``Dfa.moves``) and ``subset_accepting`` are that DFA (``subset_rows``: the
    same by class). ``kept[i]`` is the subset state that pruned state ``i`` was;
    ``pruned_moves`` and ``pruned_accepting`` are the DFA without dead states.
    ``merged_into[i]`` is the state of the minimal ``dfa`` that pruned state ``i`` became.
    """

    pattern: str
    positions: tuple[str, ...]
    follow: tuple[int, ...]
    nullable: bool
    first: int
    last: int
    classes: tuple[CharClass, ...]
    subsets: tuple[int, ...]
    subset_moves: tuple[Mapping[int, int], ...]
    subset_accepting: frozenset[int]
    kept: tuple[int, ...]
    pruned_moves: tuple[Mapping[int, int], ...]
    pruned_accepting: frozenset[int]
    merged_into: tuple[int, ...]
    dfa: Dfa

    @cached_property
    def subset_rows(self) -> tuple[dict[int, int], ...]:
        return _by_class(self.subset_moves)


def compile_stages(pattern: str) -> Stages:
    """``compile_regex`` step by step, keeping what each step made (see ``Stages``).

    >>> st = compile_stages("([0-9]+)?\\\\.[0-9]+")
    >>> st.positions
    ('0-9', '.', '0-9')
    >>> [sorted(set_bits(s)) for s in st.subsets]  # the classes in drawing order: ".", "0-9"
    [[], [1], [0], [2]]
    >>> st.merged_into, st.dfa.num_states  # {0} (a digit read) has the start's future
    ((0, 1, 0, 2), 3)
    """
    built = _Construction.of(pattern)
    core, positions = built.core, built.positions
    nullable, first, last = built.nullable, built.first, built.last
    classes, class_masks = built.classes, built.class_masks
    accepting, moves = built.accepting, built.transitions
    subsets = [0]  # replay the construction's numbering: a target is new when first seen
    for s, state_moves in enumerate(moves):
        reachable = first if s == 0 else 0
        for p in set_bits(subsets[s]):
            reachable |= positions.follow[p]
        for ks, t in _smallest_class_first([(ks, t) for t, ks in state_moves.items()]):
            if t == len(subsets):  # every class of a move reaches the same positions
                subsets.append(reachable & class_masks[next(set_bits(ks))])
    pruned_accepting, pruned_moves = _prune_dead(accepting, moves)
    kept = tuple(_kept(accepting, moves))
    clock = _Clock.after(MAX_SECONDS, "minimising")  # a budget of its own, as in compile_regex
    minimal_accepting, minimal_moves = _minimise(pruned_accepting, pruned_moves, clock)
    dfa = built.dfa(minimal_accepting, minimal_moves)
    minimal = dfa.transitions
    merged = {0: 0}
    queue = [0]
    while queue:  # the pruned and minimal DFAs read the same language: walk them together
        s = queue.pop()
        for t, ks in pruned_moves[s].items():
            if t not in merged:  # any class of the move will do: take its smallest
                merged[t] = minimal[merged[s]][next(set_bits(ks))]
                queue.append(t)
    return Stages(
        pattern=core,
        positions=tuple(
            (f"not {_show_set(chars)}" if chars else "any") if negated else _show_set(chars)
            for chars, negated in positions.sets
        ),
        follow=tuple(positions.follow),
        nullable=nullable,
        first=first,
        last=last,
        classes=tuple(classes),
        subsets=tuple(subsets),
        subset_moves=tuple(moves),
        subset_accepting=frozenset(accepting),
        kept=kept,
        pruned_moves=tuple(pruned_moves),
        pruned_accepting=frozenset(pruned_accepting),
        merged_into=tuple(merged[i] for i in range(len(pruned_moves))),
        dfa=dfa,
    )
