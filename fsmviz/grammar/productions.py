r"""A grammar flattened for Earley: numbered rules, numbered productions, terminals.

The parse tree (``fsmviz.grammar.tree``) nests: a rule's body holds sequences, choices and
repeats of literals, classes, regexes and other rules. Earley's chart (``earley``) wants
something flatter: **productions** ``A -> X1 X2 … Xn``, each ``X`` one symbol, so that an
item is just (production, dot, origin). This module does that flattening once per grammar,
and works out what depends on the grammar alone (never on a text):

* a symbol is a number: a rule is ``0, 1, 2…`` (``names[r]`` says which), a terminal is
  ``-1, -2…`` (``terms[-s - 1]``): a ``Chars`` (one character of a set of code-point
  ranges) or a ``Regex`` (a Lark ``/regex/``, read through fsmviz's character DFA);
* a literal becomes its characters, one ``Chars`` each; a class one ``Chars``;
* a choice nested inside a sequence becomes a helper rule ``(…|…)`` with one production
  per option; a repeated piece of more than one symbol a helper ``(…)`` first;
* ``x*`` (and ``x{m,}``) becomes ``m`` copies of ``x`` and a helper ``…* -> ε | …* x``;
  ``x{m,n}`` becomes ``m`` copies and a chain of ``n - m`` optional helpers, each
  ``…? -> ε | x next`` (a chain, not ``n - m`` separate optionals, so a text has one
  derivation and the chart stays small);
* Lark's ``%ignore`` becomes a rule ``%ignore -> ε | %ignore piece`` put before every
  terminal of a non-terminal rule and at the end of the start production ``%start``;
* ``nullable``: the rules that can derive the empty text; ``rest(p, dot)``: a shortest
  text that finishes production ``p`` from its dot (what the shortest completion adds up).

Worked example: the repeat helpers, the hardest part of the code to read. ``"x"{1,3}`` is
one ``x``, then the chain's head ``…?#2`` (may read an ``x`` and go on to ``…?#1``), whose
last link ``…?#1`` may read one more ``x``; ``[0-9]*`` is the loop ``…*#3``. Production 6
is ``root``'s, the last one the start production:

>>> from fsmviz.grammar.compile import compile_grammar
>>> p = Productions(compile_grammar('root ::= "x"{1,3} [0-9]*'))
>>> print(p)
0: …?#1 -> ε
1: …?#1 -> "x"
2: …?#2 -> ε
3: …?#2 -> "x" …?#1
4: …*#3 -> ε
5: …*#3 -> …*#3 [0-9]
6: root -> "x" …?#2 …*#3
7: %start -> root
>>> sorted(p.symbol_name(r) for r in p.nullable), p.rest(6, 0, -1), p.rest(6, 1, -1)
(['…*#3', '…?#1', '…?#2'], 'x', '')

And ``%ignore`` in Lark, before each terminal of a rule (not inside the terminal ``D``):

>>> print(Productions(compile_grammar('start: D "-" D\nD: /[0-9]{2}/\n%ignore " "')))
0: %ignore -> ε
1: %ignore/piece -> " "
2: %ignore -> %ignore %ignore/piece
3: start -> %ignore D %ignore "-" %ignore D
4: D -> /[0-9]{2}/
5: %start -> start %ignore
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from fsmviz.automaton.dfa import Dfa, compile_regex
from fsmviz.grammar.compile import regex_text
from fsmviz.grammar.tree import (
    Alt,
    CharSet,
    Grammar,
    Literal,
    Node,
    RegexTerm,
    Repeat,
    RuleRef,
    Seq,
)

__all__ = ["Chars", "Productions", "Regex"]


@dataclass(frozen=True, eq=False)
class Chars:
    """A terminal that reads one character: sorted disjoint code-point ranges."""

    ranges: tuple[tuple[int, int], ...]
    lows: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lows", tuple(lo for lo, _ in self.ranges))

    def __contains__(self, code: int) -> bool:
        i = bisect.bisect_right(self.lows, code) - 1
        return i >= 0 and code <= self.ranges[i][1]

    def meets(self, lo: int, hi: int) -> bool:
        """Whether some code point from ``lo`` to ``hi`` is in the set."""
        i = bisect.bisect_right(self.lows, hi) - 1
        return i >= 0 and self.ranges[i][1] >= lo

    def sample(self) -> str:
        """A readable character of the set (a printable one when there is one)."""
        for lo, hi in self.ranges:
            if hi >= 0x20 and lo <= 0x7E:
                return chr(max(lo, 0x20))
        return chr(self.ranges[0][0])

    def __str__(self) -> str:
        if len(self.ranges) == 1 and self.ranges[0][0] == self.ranges[0][1] >= 0:
            return f'"{chr(self.ranges[0][0])}"'
        return "[" + "".join(_span(lo, hi) for lo, hi in self.ranges) + "]"


@dataclass(frozen=True, eq=False)
class Regex:
    """A terminal that reads any text its DFA accepts."""

    pattern: str
    dfa: Dfa
    distance: tuple[int, ...]  # fewest characters from each state to acceptance

    def __str__(self) -> str:
        return f"/{self.pattern}/"


Production = tuple[int, tuple[int, ...]]
"""(rule number, symbols): a rule is ``>= 0``, terminal ``k`` is ``-k - 1``."""


class Productions:
    """One grammar as numbered productions, with what the chart needs to know of them."""

    def __init__(self, grammar: Grammar):
        self.grammar = grammar
        self.prods: list[Production] = []
        self.names: list[str] = []  # rule numbers -> names (helper rules get "(…)", "…*"…)
        self.terms: list[Chars | Regex] = []  # terminal k is symbol -k-1
        self._term_ids: dict[object, int] = {}
        self._rule_ids: dict[str, int] = {}
        self._terminal_rules = {rule.name for rule in grammar.rules if rule.terminal}
        self._flatten()
        self.by_lhs: dict[int, list[int]] = {}  # rule -> its productions
        for p, (lhs, _) in enumerate(self.prods):
            self.by_lhs.setdefault(lhs, []).append(p)
        self.nullable = self._nullable()
        self._shortest = self._shortest_texts()
        self._suffix: dict[tuple[int, int], str | None] = {}

    def __str__(self) -> str:
        return "\n".join(
            f"{p}: {self.symbol_name(lhs)} -> {' '.join(map(self.symbol_name, symbols)) or 'ε'}"
            for p, (lhs, symbols) in enumerate(self.prods)
        )

    def symbol_name(self, symbol: int) -> str:
        """A symbol as written in ``str(productions)``: a helper rule with its number."""
        if symbol < 0:
            return str(self.terms[-symbol - 1])
        name = self.names[symbol]
        return name if name in self._rule_ids or name[0] == "%" else f"{name}#{symbol}"

    # --- the grammar, flattened ----------------------------------------------------------

    def _flatten(self) -> None:
        """Every rule's productions, the ``%ignore`` rule, and the start production last."""
        for rule in self.grammar.rules:
            self._rule(rule.name)
        ignore = None
        if self.grammar.ignore:
            ignore = self._new("%ignore")
            self._add(ignore, ())
            piece = self._new("%ignore/piece")
            for node in self.grammar.ignore:
                self._add(piece, self._symbols(node, lark_rule=False))
            self._add(ignore, (ignore, piece))
        self.ignore = ignore
        bodies = {rule.name: rule for rule in self.grammar.rules}
        for name, number in list(self._rule_ids.items()):
            rule = bodies[name]
            lark_rule = ignore is not None and not rule.terminal
            for option in _options(rule.body):
                self._add(number, self._symbols(option, lark_rule))
        self.top = self._new("%start")
        tail = (ignore,) if ignore is not None else ()
        self._add(self.top, (self._rule(self.grammar.start), *tail))
        self.start_prod = len(self.prods) - 1

    def _new(self, name: str) -> int:
        self.names.append(name)
        return len(self.names) - 1

    def _rule(self, name: str) -> int:
        if name not in self._rule_ids:
            self._rule_ids[name] = self._new(name)
        return self._rule_ids[name]

    def _add(self, lhs: int, symbols: Iterable[int]) -> None:
        self.prods.append((lhs, tuple(symbols)))

    def _term(self, key: object, build: Callable[[], Chars | Regex]) -> int:
        if key not in self._term_ids:
            self._term_ids[key] = len(self.terms)
            self.terms.append(build())
        return -self._term_ids[key] - 1

    def _chars(self, ranges: tuple[tuple[int, int], ...]) -> int:
        return self._term(("chars", ranges), lambda: Chars(ranges))

    def _symbols(self, node: Node, lark_rule: bool) -> list[int]:
        """The symbols ``node`` spells inside a production (helper rules made as needed);
        in a Lark rule each terminal gets the ``%ignore`` rule before it."""
        before = [self.ignore] if lark_rule and self.ignore is not None else []
        if isinstance(node, Literal):
            chars = [self._chars(((ord(c), ord(c)),)) for c in node.text]
            return [*before, *chars] if chars else []
        if isinstance(node, CharSet):
            ranges = node.positive()
            if not ranges:
                return [self._chars(((-1, -1),))]  # an empty class: nothing can be read
            return [*before, self._chars(ranges)]
        if isinstance(node, RegexTerm):
            pattern = regex_text(node)

            def build() -> Regex:
                dfa = compile_regex(pattern)
                return Regex(pattern, dfa, tuple(dfa.distances()))

            return [*before, self._term(("regex", pattern), build)]
        if isinstance(node, RuleRef):
            if lark_rule and node.name in self._terminal_rules:
                return [*before, self._rule(node.name)]
            return [self._rule(node.name)]
        if isinstance(node, Seq):
            return [s for item in node.items for s in self._symbols(item, lark_rule)]
        if isinstance(node, Alt):
            helper = self._new("(…|…)")
            for option in node.options:
                self._add(helper, self._symbols(option, lark_rule))
            return [helper]
        if isinstance(node, Repeat):
            return self._repeat(node, lark_rule)
        raise TypeError(node)

    def _repeat(self, node: Repeat, lark_rule: bool) -> list[int]:
        """``m`` copies of the item, then a ``…*`` loop or a chain of ``…?`` helpers."""
        item = self._symbols(node.item, lark_rule)
        if len(item) != 1:
            helper = self._new("(…)")
            self._add(helper, item)
            item = [helper]
        (x,) = item
        out = [x] * node.min
        if node.max is None:
            star = self._new("…*")
            self._add(star, ())
            self._add(star, (star, x))
            return [*out, star]
        rest = None
        for _ in range(node.max - node.min):
            optional = self._new("…?")
            self._add(optional, ())
            self._add(optional, (x, rest) if rest is not None else (x,))
            rest = optional
        return [*out, rest] if rest is not None else out

    # --- what depends on the grammar alone -----------------------------------------------

    def _nullable(self) -> set[int]:
        """The rules that derive the empty text (a fixed point over the productions)."""
        done: set[int] = set()
        changed = True
        while changed:
            changed = False
            for lhs, symbols in self.prods:
                if lhs not in done and all(self._empty_ok(s, done) for s in symbols):
                    done.add(lhs)
                    changed = True
        return done

    def _empty_ok(self, symbol: int, done: set[int]) -> bool:
        if symbol >= 0:
            return symbol in done
        term = self.terms[-symbol - 1]
        return isinstance(term, Regex) and term.dfa.is_accepting(term.dfa.initial)

    def _shortest_texts(self) -> dict[int, str]:
        """A shortest text of every rule (a fixed point, like Knuth's shortest derivation)."""
        best: dict[int, str] = {}
        changed = True
        while changed:
            changed = False
            for lhs, symbols in self.prods:
                parts = []
                for s in symbols:
                    text = best.get(s) if s >= 0 else self.terminal_text(s)
                    if text is None:
                        break
                    parts.append(text)
                else:
                    text = "".join(parts)
                    if lhs not in best or len(text) < len(best[lhs]):
                        best[lhs] = text
                        changed = True
        return best

    def terminal_text(self, symbol: int, state: int = -1) -> str | None:
        """A shortest text terminal ``symbol`` reads (from DFA ``state`` inside a regex),
        or None when it reads none."""
        term = self.terms[-symbol - 1]
        if isinstance(term, Chars):
            return term.sample() if term.ranges[0][0] >= 0 else None
        dfa = term.dfa
        state = dfa.initial if state < 0 else state
        return _dfa_shortest(dfa, state)

    def rest(self, p: int, dot: int, state: int) -> str | None:
        """A shortest text for the rest of production ``p`` from ``dot`` (inside the
        regex terminal at ``dot`` when ``state`` is a DFA state); None when there is none."""
        symbols = self.prods[p][1]
        head = ""
        if state >= 0:
            text = self.terminal_text(symbols[dot], state)
            if text is None:
                return None
            head, dot = text, dot + 1
        key = (p, dot)
        if key not in self._suffix:
            parts = []
            for s in symbols[dot:]:
                text = self._shortest.get(s) if s >= 0 else self.terminal_text(s)
                if text is None:
                    self._suffix[key] = None
                    break
                parts.append(text)
            else:
                self._suffix[key] = "".join(parts)
        rest = self._suffix[key]
        return None if rest is None else head + rest


def _options(body: Node) -> tuple[Node, ...]:
    return body.options if isinstance(body, Alt) else (body,)


def _span(lo: int, hi: int) -> str:
    if lo < 0:
        return ""  # the empty class
    return chr(lo) if lo == hi else f"{chr(lo)}-{chr(hi)}"


def _dfa_shortest(dfa: Dfa, state: int) -> str | None:
    """A shortest text from ``state`` to acceptance (breadth first)."""
    if dfa.is_accepting(state):
        return ""
    seen = {state: ""}
    frontier = [state]
    while frontier:
        nxt = []
        for s in frontier:
            for k, target in dfa.transitions[s].items():
                if target in seen:
                    continue
                ranges = dfa.classes[k].ranges(dfa.mentioned)
                if not ranges:
                    continue
                char = Chars(ranges).sample()
                seen[target] = seen[s] + char
                if dfa.is_accepting(target):
                    return seen[target]
                nxt.append(target)
        frontier = nxt
    return None
