"""The parser's place after the text so far: the stack(s) of positions in the drawn rules.

A regex run is *in one state* of its DFA. A grammar run is in a *stack* of positions, one
per rule being read: "in ``value``, in ``object`` after ``,``, in ``pair`` expecting
``:``". The bottom is the start rule; each position above it was entered by a call edge
of the position below; the top is where the next character goes.

The positions are those of the drawn automata (``fsmviz.grammar.network``), and the
stacks come from an **Earley chart over those automata**, one character at a time:

* an *item* ``(rule, state, origin)`` of set ``k`` says "a ``rule`` begun at character
  ``origin`` has reached ``state`` after character ``k``"; an item in the middle of a
  terminal also holds the terminal's own DFA state and where the terminal began;
* **predict**: an item at a state with a call edge to ``R`` adds ``(R, 0, k)``;
* **scan**: a character moves every item inside (or at the start of) a terminal along
  the terminal's DFA; where the DFA may stop, the item also steps over the edge;
* **complete**: an item at an accepting state of ``R`` (begun at ``j``) advances every
  item of set ``j`` that was waiting at a call of ``R``.

The text is a prefix of a sentence while the last set is not empty (every drawn state can
still finish), and a sentence when the start rule, begun at 0, sits at an accepting state.

The chart keeps no back-pointers: a stack is found by walking down from a *top* (an item
that has read something and still waits for more) to the items of its origin's set that
called its rule, until the start rule begun at 0. Ambiguous text has several live stacks;
at most ``MAX_STACKS`` are listed (``Place.more`` says when there were more).

    >>> from fsmviz.grammar import tree as t
    >>> from fsmviz.grammar.network import build_network
    >>> L, R = t.Literal, t.RuleRef
    >>> grammar = t.Grammar((
    ...     t.Rule("list", t.Seq((L("["), R("item"), t.Repeat(t.Seq((L(","), R("item"))), 0, None),
    ...                           L("]")))),
    ...     t.Rule("item", t.Alt((R("list"), L("x")))),
    ... ), "list")
    >>> place = place_of(build_network(grammar), "[x,[")
    >>> print(place.lines()[0])
    in `list` after `,`, in `item`, in `list` after `[` expecting `item`
    >>> place.is_prefix, place.accepts
    (True, False)
    >>> place_of(build_network(grammar), "[x]").accepts
    True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import regex

from fsmviz.automaton.dfa import Dfa, compile_regex
from fsmviz.automaton.syntax import RegexError, greedy_quantifiers
from fsmviz.cache import BoundedCache
from fsmviz.generation.trace import Step, pieces
from fsmviz.grammar.network import Arc, Network, Symbol
from fsmviz.printable import printable

__all__ = [
    "MAX_STACKS",
    "Chart",
    "Frame",
    "Place",
    "Stack",
    "place_of",
    "reader",
    "rule_path",
    "rule_states",
    "step_charts",
]

MAX_STACKS = 6
"""Live stacks listed at most (ambiguous text can have many)."""
LOOK_AT_MOST = 400
"""Stacks looked at, repeats included, before the listing stops (``Place.more``)."""
MAX_DEPTH = 64
"""Frames of one stack at most (deeper nesting is cut at the bottom)."""


# --- reading one terminal ------------------------------------------------------------------


class Reader(Protocol):
    """A terminal's own automaton, one character at a time."""

    initial: object

    def step(self, state: object, char: str) -> object | None: ...

    def accepts(self, state: object) -> bool: ...

    def more(self, state: object) -> bool: ...


@dataclass(frozen=True)
class DfaReader:
    """A terminal read along its minimal DFA (``fsmviz.automaton.dfa``)."""

    dfa: Dfa

    @property
    def initial(self) -> int:
        return self.dfa.initial

    def step(self, state: object, char: str) -> int | None:
        return self.dfa.step(state, char)  # type: ignore[arg-type]

    def accepts(self, state: object) -> bool:
        return state in self.dfa.accepting

    def more(self, state: object) -> bool:
        """Can the terminal read another character from ``state``?"""
        return bool(self.dfa.moves[state])  # type: ignore[index]


@dataclass(frozen=True)
class RegexReader:
    """A terminal the DFA construction refuses (lookaround, a huge count) read with the
    ``regex`` module's partial matching: the state is the terminal's text so far."""

    pattern: str
    initial: str = ""

    def step(self, state: object, char: str) -> str | None:
        text = f"{state}{char}"
        greedy = greedy_quantifiers(self.pattern)  # regex's partial match errs on +?
        return text if _bounded_fullmatch(greedy, text, partial=True) else None

    def accepts(self, state: object) -> bool:
        return _bounded_fullmatch(self.pattern, str(state))


READ_BUDGET = 0.25
"""Seconds one backtracking match of a visitor's terminal may take (``(?=a)(a+)+b`` on forty
a's would take hours): past it the terminal counts as not read, and the place shown stops
there rather than the server freezing."""


def _bounded_fullmatch(pattern: str, text: str, partial: bool = False) -> bool:
    try:
        return regex.fullmatch(pattern, text, partial=partial, timeout=READ_BUDGET) is not None
    except TimeoutError:
        return False

    def more(self, state: object) -> bool:
        return True  # partial matching cannot tell; the item may linger unread


_readers: BoundedCache[Reader] = BoundedCache(512)


def reader(pattern: str) -> Reader:
    """The reader of one terminal's regex: its DFA when fsmviz can build it, else partial
    matching (cached by pattern).

    >>> r = reader("ab?")
    >>> s = r.step(r.initial, "a"); r.accepts(s), r.step(s, "c")
    (True, None)
    """

    def build() -> Reader:
        try:
            return DfaReader(compile_regex(pattern))
        except RegexError:
            return RegexReader(pattern)

    return _readers.get_or_build(pattern, build)


# --- the chart -----------------------------------------------------------------------------

# An item: (machine, state, origin, arc, inner, start). ``arc`` is -1 for an item at a
# state; for an item inside a terminal it is the arc's index (``IGNORED`` inside Lark's
# ``%ignore`` text, which returns to the same state), ``inner`` the terminal's reader
# state and ``start`` the character where the terminal began.
Item = tuple[int, int, int, int, object, int]
# Waiting at a call: callee machine -> [(machine, state, origin, call arc index)].
Waiting = dict[int, list[tuple[int, int, int, int]]]
AT_STATE = -1
IGNORED = -2


@dataclass(frozen=True)
class Chart:
    """The Earley sets over ``network`` after ``text``: ``sets[k]`` holds the items after
    ``k`` characters. ``after`` reads more text into a new chart (the old one is kept, so
    a stream extends its chart one token at a time)."""

    network: Network
    text: str
    sets: tuple[tuple[Item, ...], ...]
    waiting: tuple[Waiting, ...]

    @staticmethod
    def start(network: Network) -> Chart:
        """The chart before any text: the start rule predicted."""
        root = network.root.index
        items, waiting = _close(network, 0, [(root, 0, 0, -1, None, -1)], ())
        return Chart(network, "", (items,), (waiting,))

    def after(self, more: str) -> Chart:
        """The chart after ``self.text + more`` (a dead text stays dead: empty sets)."""
        sets, waiting = list(self.sets), list(self.waiting)
        for char in more:
            k = len(sets) - 1
            moved = _scan(self.network, sets[k], char)
            items, waits = _close(self.network, k + 1, moved, waiting)
            sets.append(items)
            waiting.append(waits)
        return Chart(self.network, self.text + more, tuple(sets), tuple(waiting))

    @property
    def is_prefix(self) -> bool:
        """Some sentence of the grammar begins with the text."""
        return bool(self.sets[-1])

    @property
    def accepts(self) -> bool:
        """The text is a whole sentence of the grammar."""
        root = self.network.root
        return any(
            arc == -1 and m == root.index and origin == 0 and s in root.accepting
            for m, s, origin, arc, _, _ in self.sets[-1]
        )


def _symbol_reader(symbol: Symbol) -> Reader:
    assert symbol.regex is not None
    return reader(symbol.regex)


def _close(
    network: Network, k: int, seeds: list[Item], waiting_before: tuple[Waiting, ...] | list
) -> tuple[tuple[Item, ...], Waiting]:
    """Set ``k``: ``seeds`` with everything predicted and completed from them."""
    machines = network.machines
    items: dict[Item, None] = {}
    agenda: list[Item] = []
    waiting: Waiting = {}
    done_here: set[int] = set()  # rules begun and ended at k (nullable here)

    def add(item: Item) -> None:
        if item not in items:
            items[item] = None
            agenda.append(item)

    for seed in seeds:
        add(seed)
    while agenda:
        m, s, origin, arc, _, _ = agenda.pop()
        if arc != AT_STATE:
            continue  # inside a terminal: waits for the next character
        machine = machines[m]
        if network.ignore is not None:
            add((m, s, origin, IGNORED, _symbol_reader(network.ignore).initial, k))
        for out in machine.outgoing[s]:
            symbol = out.symbol
            if symbol.is_call:
                if not network.has(symbol.rule or ""):
                    continue  # an undefined rule: nothing can be read through it
                callee = network.machine(symbol.rule or "").index
                waiting.setdefault(callee, []).append((m, out.target, origin, out.index))
                add((callee, 0, k, -1, None, -1))
                if callee in done_here:
                    add((m, out.target, origin, -1, None, -1))
            else:
                read = _symbol_reader(symbol)
                add((m, s, origin, out.index, read.initial, k))
                if read.accepts(read.initial):
                    add((m, out.target, origin, -1, None, -1))
        if s in machine.accepting:
            if origin == k:
                if m not in done_here:
                    done_here.add(m)
                    for wm, target, wo, _ in waiting.get(m, ()):
                        add((wm, target, wo, -1, None, -1))
            else:
                for wm, target, wo, _ in waiting_before[origin].get(m, ()):
                    add((wm, target, wo, -1, None, -1))
    return tuple(items), waiting


def _scan(network: Network, items: tuple[Item, ...], char: str) -> list[Item]:
    """The items of the next set that reading ``char`` gives."""
    moved: dict[Item, None] = {}
    for m, s, origin, arc, inner, start in items:
        if arc == AT_STATE:
            continue
        ignored = arc == IGNORED
        symbol = network.ignore if ignored else network.machines[m].arcs[arc].symbol
        read = _symbol_reader(symbol)  # type: ignore[arg-type]
        after = read.step(inner, char)
        if after is None:
            continue
        moved[(m, s, origin, arc, after, start)] = None
        if read.accepts(after):
            target = s if ignored else network.machines[m].arcs[arc].target
            moved[(m, target, origin, AT_STATE, None, -1)] = None
    return list(moved)


# --- stacks --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """One position on a stack: in ``rule`` (the automaton ``machine``) at ``state``.

    Below the top, ``arc`` is the call edge being followed (the rule of the frame above);
    at the top, it is the terminal edge being read (``read``: its text so far; ``inner``:
    its DFA state), or None when the top waits at ``state`` for the next edge.
    """

    rule: str
    machine: int
    state: int
    arc: Arc | None = None
    read: str = ""
    inner: object = None
    at: int = 0
    """The character position where the frame reached ``state`` (after ``text[:at]``)."""
    begun: int = 0
    """Where the frame's rule began: it has read something when ``begun < at``."""


@dataclass(frozen=True)
class Stack:
    """A live stack of positions, the start rule first, the top last."""

    frames: tuple[Frame, ...]
    cut: bool = False
    """True when frames below ``MAX_DEPTH`` were left out."""

    @property
    def top(self) -> Frame:
        return self.frames[-1]

    def text(self, network: Network | None = None, read: str = "") -> str:
        """The stack in plain words: ``in `value`, in `object` after `,`, in `pair`
        expecting `:```; ``read`` (the text so far) picks, among the edges into a
        state, those the text ends with."""
        words = [_frame_words(f, network, k == len(self.frames) - 1, read)
                 for k, f in enumerate(self.frames)]  # fmt: skip
        return ("… " if self.cut else "") + ", ".join(words)


@dataclass(frozen=True)
class Place:
    """Where the parser is after ``text``: its live ``stacks`` (at most ``MAX_STACKS``;
    ``more`` when there were more), and whether the text is a prefix of a sentence
    (``is_prefix``) or a whole one (``accepts``)."""

    text: str
    stacks: tuple[Stack, ...]
    more: bool
    is_prefix: bool
    accepts: bool
    network: Network | None = None

    def lines(self) -> list[str]:
        """One plain-English line per stack."""
        return [stack.text(self.network, self.text) for stack in self.stacks]


def place_of(network: Network, text: str, max_stacks: int = MAX_STACKS) -> Place:
    """The parser's place after ``text`` (see the module's docstring)."""
    return place_in(Chart.start(network).after(text), max_stacks)


def place_in(chart: Chart, max_stacks: int = MAX_STACKS) -> Place:
    """The place at the end of ``chart``."""
    stacks: list[Stack] = []
    seen: set[tuple] = set()
    more = False
    for looked, stack in enumerate(_stacks(chart)):
        if looked >= LOOK_AT_MOST:  # a very ambiguous text: its ways down are legion
            more = True
            break
        key = tuple((f.machine, f.state, f.arc.index if f.arc else -1) for f in stack.frames)
        if key in seen:
            continue
        if len(stacks) == max_stacks:
            more = True
            break
        seen.add(key)
        stacks.append(stack)
    return Place(chart.text, tuple(stacks), more, chart.is_prefix, chart.accepts, chart.network)


def step_charts(network: Network, steps: Iterable[Step]) -> list[Chart]:
    """The parser's chart before a run and after each of its ``steps`` (the text each adds,
    ``generation.trace.pieces``): what a run's rules, lights and places are read from."""
    charts = [Chart.start(network)]
    for piece in pieces(steps):
        charts.append(charts[-1].after(piece))
    return charts


def rule_path(chart: Chart) -> str:
    """The innermost rule of the parser's first live stack at the end of ``chart``: a
    grammar run's "state"; ``end`` after a whole sentence that nothing may continue, ``—``
    when the text is no prefix of a sentence."""
    place = place_in(chart, max_stacks=1)
    if place.stacks:
        return place.stacks[0].top.rule
    return "end" if place.accepts else "—"


def rule_states(charts: Sequence[Chart]) -> tuple[tuple[str, str], ...]:
    """Each step's (rule before, rule after) (``rule_path``) from the charts before the
    run and after each step (``step_charts``): a step table's "state" column."""
    names = [rule_path(chart) for chart in charts]
    return tuple(zip(names, names[1:], strict=False))


def _stacks(chart: Chart) -> Iterator[Stack]:
    network = chart.network
    n = len(chart.sets) - 1
    last = chart.sets[n]
    tops: list[Item] = []
    for item in last:
        m, s, origin, arc, _, start = item
        if arc == IGNORED:
            if start < n and (origin < n or s != 0):  # between terminals: at the state
                tops.append((m, s, origin, AT_STATE, None, -1))
        elif arc >= 0:
            read = _symbol_reader(network.machines[m].arcs[arc].symbol)
            if start < n and read.more(item[4]):  # inside a terminal, more may come
                tops.append(item)
        elif origin < n and network.machines[m].outgoing[s]:
            tops.append(item)
    if n == 0:
        tops = [(network.root.index, 0, 0, -1, None, -1)]
    tops.sort(key=lambda item: (item[3] < 0, -item[2]))  # reading first, then innermost
    for m, s, origin, arc, inner, start in tops:
        machine = network.machines[m]
        top = Frame(
            machine.rule,
            m,
            s,
            machine.arcs[arc] if arc >= 0 else None,
            chart.text[start:] if arc >= 0 else "",
            inner if arc >= 0 else None,
            start if arc >= 0 else n,
            origin,
        )
        for below, cut in _callers(chart, m, origin, ((m, s, origin),)):
            yield Stack((*below, top), cut)


def _callers(
    chart: Chart, m: int, origin: int, path: tuple[tuple[int, int, int], ...]
) -> Iterator[tuple[tuple[Frame, ...], bool]]:
    """The ways down from rule ``m`` begun at ``origin`` to the start rule begun at 0."""
    network = chart.network
    if m == network.root.index and origin == 0:
        yield (), False
    if len(path) >= MAX_DEPTH:
        yield (), True
        return
    for wm, _, wo, arc in chart.waiting[origin].get(m, ()):
        machine = network.machines[wm]
        call = machine.arcs[arc]
        key = (wm, call.source, wo)
        if key in path:
            continue  # left recursion: the same call again, no new way down
        frame = Frame(machine.rule, wm, call.source, call, at=origin, begun=wo)
        for below, cut in _callers(chart, wm, wo, (*path, key)):
            yield (*below, frame), cut


# --- words ---------------------------------------------------------------------------------


def symbol_words(symbol: Symbol) -> str:
    """An edge's symbol as a sentence names it: a literal's text or a rule's name in
    backticks, a class or regex as written.

    >>> symbol_words(Symbol("literal", '","', ",", text=",")), symbol_words(Symbol("call", "pair"))
    ('`,`', '`pair`')
    """
    if symbol.kind == "literal" and symbol.text is not None:
        text = printable(symbol.text)
        return f"`{text}`" if "`" not in text else repr(text)
    return f"`{printable(symbol.label)}`"


def _frame_words(frame: Frame, network: Network | None, top: bool, read: str) -> str:
    words = f"in `{frame.rule}`"
    machine = network.machines[frame.machine] if network is not None else None
    if machine is not None and frame.begun < frame.at and machine.incoming[frame.state]:
        words += " after " + _either(_came_by(machine.incoming[frame.state], read[: frame.at]))
    if not top:
        return words
    if frame.arc is not None and not frame.arc.symbol.is_call:
        so_far = json.dumps(frame.read, ensure_ascii=False)
        return f"{words} reading {symbol_words(frame.arc.symbol)} ({so_far} so far)"
    if machine is not None:
        nexts = [a.symbol for a in machine.outgoing[frame.state]]
        end = frame.state in machine.accepting
        if nexts:
            words += " expecting " + _either(nexts) + (" or its end" if end else "")
    return words


def _came_by(arcs: tuple[Arc, ...], before: str) -> list[Symbol]:
    """The symbols of ``arcs`` that may have been taken: a literal only if the text
    before ends with it (``[`` or ``,`` into the same state: the text says which)."""
    symbols = [arc.symbol for arc in arcs]
    kept = [symbol for symbol in symbols if symbol.text is None or before.endswith(symbol.text)]
    return kept or symbols


def _either(symbols: list[Symbol], most: int = 4) -> str:
    names = list(dict.fromkeys(symbol_words(s) for s in symbols))
    if len(names) > most:
        return ", ".join(names[:most]) + f" or {len(names) - most} more"
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " or " + names[-1]
