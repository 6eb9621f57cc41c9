"""A grammar as automata that call each other: a recursive transition network.

A teacher draws a context-free grammar on the board as one small automaton per rule. The
automaton of ``object ::= "{" (pair ("," pair)*)? "}"`` reads ``{``, then either ``}`` or a
*call* of ``pair``; after a pair, ``,`` leads back to another call of ``pair`` and ``}``
ends the object::

    object:  (0) --"{"--> (1) --------"}"--------> ((3))
                           |                       ^
                           +--pair--> (2) --"}"----+
                                      | ^
                                     ","  pair
                                      v |
                                      (4)

An edge either reads a *terminal* (a literal, a character class, a regex) or *calls*
another rule: the parser jumps to that rule's start, and when the rule ends it comes back
and takes the edge. The stack of those pending returns is exactly what a DFA lacks.

Each rule's automaton is built from the rule's tree in three steps:

1. **Thompson's construction**: a tree becomes an automaton with empty (ε) moves:
   a sequence chains its parts, an alternative forks and joins, a repeat loops back.
2. **Subset construction**: the ε-moves are removed and the automaton made deterministic,
   treating every terminal and every call as one letter ("symbol").
3. **Minimisation** (Moore's partition refinement): states that behave alike merge.

Parts of a rule that call no rule and repeat (``[0-9]{1,15}``, GBNF's string body
``( [^"\\\\] | "\\\\" ... )*``) are *folded* into one terminal with one regex: they are
what a lexer reads, and their own DFA is drawn apart, with the character being read lit.
A Lark terminal rule (an upper-case name) is not drawn as an automaton either: a call of
it is one terminal edge, labelled with its name.

    >>> from fsmviz.grammar.network import build_network
    >>> from fsmviz.grammar import tree as t
    >>> pair = t.Rule("pair", t.Seq((t.Literal("a"), t.Literal("="), t.RuleRef("v"))), 1, 1)
    >>> v = t.Rule("v", t.Alt((t.Literal("1"), t.Literal("2"))), 2, 1)
    >>> net = build_network(t.Grammar((pair, v), "pair"))
    >>> for arc in net.machine("pair").arcs:
    ...     print(arc.source, arc.symbol.label, arc.target)
    0 "a" 1
    1 "=" 2
    2 v 3
    >>> [(arc.source, arc.symbol.label, arc.target) for arc in net.machine("v").arcs]
    [(0, '"1"', 1), (0, '"2"', 1)]
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal as Kind

from fsmviz.cache import BoundedCache
from fsmviz.errors import FsmvizError
from fsmviz.grammar import nodes as t
from fsmviz.grammar.as_regex import node_regex, repeat_suffix

__all__ = [
    "Arc",
    "Machine",
    "Network",
    "NetworkError",
    "Symbol",
    "build_network",
    "describe",
]

MAX_EXPANDED_REPEAT = 6
"""A counted repeat of parts that call rules (``pair{2,5}``) is unrolled into copies; above
this many copies it is refused (its drawing would be a staircase)."""


class NetworkError(FsmvizError, ValueError):
    """A grammar whose rules cannot be drawn as automata (a huge counted repeat of rule
    calls, a terminal that calls a rule)."""


@dataclass(frozen=True)
class Symbol:
    """What an edge does: read a terminal (``literal``, ``class``, ``regex``, ``token``: a
    Lark terminal rule by name) or ``call`` a rule.

    ``label`` is what the drawing writes on the edge; ``regex`` is the terminal's text as
    one regular expression (None for a call); ``rule`` names the rule a ``call`` or
    ``token`` edge stands for.
    """

    kind: Kind["literal", "class", "regex", "token", "call"]
    label: str
    regex: str | None = None
    rule: str | None = None
    text: str | None = None
    """A literal's own text (``,`` for the label ``","``)."""

    @property
    def is_call(self) -> bool:
        return self.kind == "call"


@dataclass(frozen=True)
class Arc:
    """One edge of a rule's automaton; ``index`` is its place in ``Machine.arcs``."""

    index: int
    source: int
    target: int
    symbol: Symbol


@dataclass(frozen=True)
class Machine:
    """One rule's automaton: states ``0..num_states-1``, start 0, deterministic over
    symbols and minimal. ``line``/``column`` say where the rule is written."""

    rule: str
    index: int
    num_states: int
    accepting: frozenset[int]
    arcs: tuple[Arc, ...]
    line: int | None = None
    column: int | None = None
    initial: int = 0

    @cached_property
    def outgoing(self) -> tuple[tuple[Arc, ...], ...]:
        """``outgoing[s]``: the arcs leaving state ``s``, in ``arcs``' order."""
        out: list[list[Arc]] = [[] for _ in range(self.num_states)]
        for arc in self.arcs:
            out[arc.source].append(arc)
        return tuple(tuple(arcs) for arcs in out)

    @cached_property
    def incoming(self) -> tuple[tuple[Arc, ...], ...]:
        """``incoming[s]``: the arcs entering state ``s``."""
        into: list[list[Arc]] = [[] for _ in range(self.num_states)]
        for arc in self.arcs:
            into[arc.target].append(arc)
        return tuple(tuple(arcs) for arcs in into)


@dataclass(frozen=True)
class Network:
    """The grammar's rules as automata (``machines``, in the grammar's order of rules,
    Lark terminal rules left out) and the ``start`` rule."""

    machines: tuple[Machine, ...]
    start: str
    ignore: Symbol | None = None
    """Lark's ``%ignore``: text that may come between any two terminals of a rule, read
    without moving (not drawn)."""
    _by_name: Mapping[str, int] = field(repr=False, compare=False, hash=False, default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {m.rule: m.index for m in self.machines})

    def machine(self, rule: str) -> Machine:
        """The automaton of ``rule`` (``KeyError`` if it has none)."""
        return self.machines[self._by_name[rule]]

    def has(self, rule: str) -> bool:
        return rule in self._by_name

    @property
    def root(self) -> Machine:
        return self.machine(self.start)


# --- the tree, read ------------------------------------------------------------------------


def describe(node: t.Node) -> str:
    """A tree written back as a grammar writes it (the label of a folded terminal).

    >>> describe(t.Repeat(t.CharSet(((48, 57),), False), 1, 15))
    '[0-9]{1,15}'
    >>> describe(t.Seq((t.Literal('a"'), t.Repeat(t.RuleRef("x"), 0, None))))
    '\\'a"\\' x*'
    """
    if isinstance(node, t.Literal):
        if '"' in node.text and "'" not in node.text:
            return f"'{node.text}'"
        return json.dumps(node.text, ensure_ascii=False)
    if isinstance(node, t.CharSet):
        return _class_text(node)
    if isinstance(node, t.RegexTerm):
        return f"/{node.pattern}/"
    if isinstance(node, t.RuleRef):
        return node.name
    if isinstance(node, t.Seq):
        return " ".join(_grouped(item) for item in node.items) or '""'
    if isinstance(node, t.Alt):
        return " | ".join(describe(option) for option in node.options)
    if isinstance(node, t.Repeat):
        return _grouped(node.item) + repeat_suffix(node.min, node.max)
    raise NetworkError(f"cannot describe grammar node {node!r}")


def _grouped(node: t.Node) -> str:
    text = describe(node)
    if isinstance(node, t.Alt) or (isinstance(node, t.Seq) and len(node.items) > 1):
        return f"({text})"
    return text


def _class_text(node: t.CharSet) -> str:
    parts = []
    for low, high in node.ranges:
        parts.append(_class_char(low) if low == high else f"{_class_char(low)}-{_class_char(high)}")
    return "[" + ("^" if node.negated else "") + "".join(parts) + "]"


def _class_char(code: int) -> str:
    char = chr(code)
    if char in "]\\^-":
        return "\\" + char
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    if char == "\r":
        return "\\r"
    return char if char.isprintable() else f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}"


def _regex(node: t.Node, terminals: Mapping[str, t.Node]) -> str:
    """The one regex of a rule-free part (``fsmviz.grammar.as_regex.node_regex``); a part
    that names a rule that is no terminal is refused, naming it."""
    regex = node_regex(node, terminals)
    if regex is None:
        name = next((r.name for r in t.refs(node) if r.name not in terminals), "?")
        raise NetworkError(
            f"the terminal part {describe(node)!r} names {name!r}, which is not a "
            "terminal: a terminal (an upper-case Lark rule) may only name terminals"
        )
    return regex


def _calls(node: t.Node, terminals: Mapping[str, t.Node]) -> bool:
    """Does ``node`` call a (non-terminal) rule?"""
    if isinstance(node, t.RuleRef):
        return node.name not in terminals
    if isinstance(node, t.Seq):
        return any(_calls(item, terminals) for item in node.items)
    if isinstance(node, t.Alt):
        return any(_calls(option, terminals) for option in node.options)
    if isinstance(node, t.Repeat):
        return _calls(node.item, terminals)
    return False


def _repeats(node: t.Node) -> bool:
    if isinstance(node, t.Repeat):
        return True
    if isinstance(node, t.Seq):
        return any(_repeats(item) for item in node.items)
    if isinstance(node, t.Alt):
        return any(_repeats(option) for option in node.options)
    return False


# --- Thompson's construction ---------------------------------------------------------------


class _Nfa:
    """An automaton under construction: ``moves[s]`` is a list of (symbol or None, target);
    None is an ε-move."""

    def __init__(self) -> None:
        self.moves: list[list[tuple[Symbol | None, int]]] = []

    def state(self) -> int:
        self.moves.append([])
        return len(self.moves) - 1

    def move(self, source: int, symbol: Symbol | None, target: int) -> None:
        self.moves[source].append((symbol, target))


def _symbol(node: t.Node, terminals: Mapping[str, t.Node]) -> Symbol:
    """The one edge a leaf (or a folded, rule-free part) becomes."""
    if isinstance(node, t.RuleRef):
        if node.name in terminals:
            return Symbol("token", node.name, _regex(node, terminals), node.name)
        return Symbol("call", node.name, None, node.name)
    if isinstance(node, t.Literal):
        return Symbol("literal", describe(node), _regex(node, terminals), text=node.text)
    kind = "class" if isinstance(node, t.CharSet) else "regex"
    return Symbol(kind, describe(node), _regex(node, terminals))


def _thompson(nfa: _Nfa, node: t.Node, start: int, end: int, terminals) -> None:
    """Add moves from ``start`` to ``end`` that read what ``node`` reads."""
    if isinstance(node, t.Seq):
        if not node.items:
            nfa.move(start, None, end)
            return
        here = start
        for k, item in enumerate(node.items):
            there = end if k == len(node.items) - 1 else nfa.state()
            _thompson(nfa, item, here, there, terminals)
            here = there
    elif isinstance(node, t.Alt):
        for option in node.options:
            _thompson(nfa, option, start, end, terminals)
    elif isinstance(node, t.Repeat):
        if not _calls(node, terminals):
            nfa.move(start, _symbol(node, terminals), end)
            return
        low, high = node.min, node.max
        copies = low if high is None else high
        if copies > MAX_EXPANDED_REPEAT:
            raise NetworkError(
                f"the repeat {describe(node)!r} calls rules and counts to {copies}: more than "
                f"{MAX_EXPANDED_REPEAT} copies cannot be drawn; write it as a loop (* or +)"
            )
        here = start
        for k in range(copies):
            there = nfa.state()
            if k >= low:
                nfa.move(here, None, end)
            _thompson(nfa, node.item, here, there, terminals)
            here = there
        if high is None:  # a loop: once more, or leave
            _thompson(nfa, node.item, here, here, terminals)
        nfa.move(here, None, end)
    elif isinstance(node, (t.Literal, t.CharSet, t.RegexTerm, t.RuleRef)):
        nfa.move(start, _symbol(node, terminals), end)
    else:
        raise NetworkError(f"cannot build an automaton for grammar node {node!r}")


def _closure(nfa: _Nfa, states: frozenset[int]) -> frozenset[int]:
    seen = set(states)
    todo = list(states)
    while todo:
        for symbol, target in nfa.moves[todo.pop()]:
            if symbol is None and target not in seen:
                seen.add(target)
                todo.append(target)
    return frozenset(seen)


def _machine(rule: t.Rule, index: int, terminals: Mapping[str, t.Node]) -> Machine:
    nfa = _Nfa()
    start, end = nfa.state(), nfa.state()
    _thompson(nfa, rule.body, start, end, terminals)
    # subset construction over symbols
    first = _closure(nfa, frozenset({start}))
    subsets = {first: 0}
    order = [first]
    moves: list[dict[Symbol, int]] = []
    queue = deque([first])
    while queue:
        subset = queue.popleft()
        by_symbol: dict[Symbol, set[int]] = {}
        for s in sorted(subset):
            for symbol, target in nfa.moves[s]:
                if symbol is not None:
                    by_symbol.setdefault(symbol, set()).add(target)
        row = {}
        for symbol, targets in by_symbol.items():
            closed = _closure(nfa, frozenset(targets))
            if closed not in subsets:
                subsets[closed] = len(order)
                order.append(closed)
                queue.append(closed)
            row[symbol] = subsets[closed]
        moves.append(row)
    accepting = {k for k, subset in enumerate(order) if end in subset}
    num, accepting, moves = _minimise(len(order), accepting, moves)
    arcs = []
    for source in range(num):
        for symbol, target in moves[source].items():
            arcs.append(Arc(len(arcs), source, target, symbol))
    return Machine(rule.name, index, num, frozenset(accepting), tuple(arcs), rule.line, rule.column)


def _minimise(
    num: int, accepting: set[int], moves: list[dict[Symbol, int]]
) -> tuple[int, set[int], list[dict[Symbol, int]]]:
    """Moore's partition refinement, then states renumbered breadth-first from 0 (every
    state of a subset construction is reachable; each can finish, as each holds a path
    of the tree to its end)."""
    block = [1 if s in accepting else 0 for s in range(num)]
    while True:
        signature = [
            (block[s], tuple(sorted((sym.kind, sym.label, sym.regex or "", block[d])
                                    for sym, d in moves[s].items())))
            for s in range(num)
        ]  # fmt: skip
        names: dict[tuple, int] = {}
        refined = [names.setdefault(sig, len(names)) for sig in signature]
        if len(names) == len(set(block)):
            block = refined
            break
        block = refined
    # renumber breadth-first from the start's block
    new: dict[int, int] = {block[0]: 0}
    rep: dict[int, int] = {}
    for s in range(num):
        rep.setdefault(block[s], s)
    queue = deque([block[0]])
    while queue:
        b = queue.popleft()
        for _, d in moves[rep[b]].items():
            if block[d] not in new:
                new[block[d]] = len(new)
                queue.append(block[d])
    out: list[dict[Symbol, int]] = [{} for _ in new]
    for b, k in new.items():
        out[k] = {sym: new[block[d]] for sym, d in moves[rep[b]].items()}
    return len(new), {new[block[s]] for s in accepting if block[s] in new}, out


# --- the network ---------------------------------------------------------------------------

_networks: BoundedCache[Network] = BoundedCache(32)


def build_network(grammar: t.GrammarTree) -> Network:
    """Every (non-terminal) rule of ``grammar`` as a minimal automaton over terminals and
    calls (see the module's docstring). Cached by grammar. Raises ``NetworkError`` for a
    counted repeat of calls above ``MAX_EXPANDED_REPEAT`` copies."""
    return _networks.get_or_build(grammar, lambda: _build(grammar))


def _build(grammar: t.GrammarTree) -> Network:
    terminals = {rule.name: rule.body for rule in grammar.rules if rule.terminal}
    drawn = [rule for rule in grammar.rules if not rule.terminal]
    machines = tuple(_machine(rule, k, terminals) for k, rule in enumerate(drawn))
    pieces = tuple(getattr(grammar, "ignore", ()))
    ignore = None
    if pieces:
        text = " | ".join(describe(piece) for piece in pieces)
        ignore = Symbol("regex", f"%ignore {text}", _regex(t.Alt(pieces), terminals))
    return Network(machines, grammar.start, ignore)
