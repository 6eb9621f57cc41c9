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
import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from fsmviz.automaton.dfa import Dfa, compile_regex
from fsmviz.automaton.graph import UNREACHABLE
from fsmviz.grammar.as_regex import node_regex
from fsmviz.grammar.nodes import (
    Alt,
    CharSet,
    GrammarTree,
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
        """A readable character of the set (a printable one when there is one; never a
        UTF-16 surrogate when there is anything else, since no text can hold one)."""
        for lo, hi in self.ranges:
            if hi >= 0x20 and lo <= 0x7E:
                return chr(max(lo, 0x20))
        for lo, hi in self.ranges:
            if lo < 0xD800 or hi > 0xDFFF:
                return chr(lo if lo < 0xD800 else max(lo, 0xE000))
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


_KEPT_TEXT = 256
"""A rule whose shortest text is at most this long keeps it once spelled (``spell`` then
copies it whole); longer ones are spelled piece by piece, as far as asked."""

Production = tuple[int, tuple[int, ...]]
"""(rule number, symbols): a rule is ``>= 0``, terminal ``k`` is ``-k - 1``."""


class _Flattened:
    """One grammar as numbered productions and terminals: the nesting of its rules' bodies
    flattened, helper rules made for groups, options and repeats."""

    def __init__(self, grammar: GrammarTree):
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
            pattern = node_regex(node) or ""

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


class Productions(_Flattened):
    """One grammar as numbered productions, with what the chart needs to know of them:
    the rules that derive the empty text, each rule's shortest text and how to spell it."""

    def __init__(self, grammar: GrammarTree):
        super().__init__(grammar)
        self.nullable = self._nullable()
        self.length, self.choice = self._shortest_lengths()
        """A shortest text's length of each rule that can finish, and the production it
        takes (``fsmviz.grammar.limits`` bounds the lengths before this is built)."""
        self._suffix: dict[int, list[int | None]] = {}
        self._texts: dict[int, str] = {}  # short rules' and terminals' texts (``_text``)

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

    def _shortest_lengths(self) -> tuple[dict[int, int], dict[int, int]]:
        """Each rule's shortest text as a *length*, and the production that gives it:
        Knuth's generalisation of Dijkstra over the productions (a production is known
        once all its rules are; the least tentative rule is final). Texts are spelled
        only on demand, as long as asked (``text``): a rule may stand for 100,000
        characters, and a completion for many such rules."""
        length: dict[int, int] = {}
        choice: dict[int, int] = {}
        waiting: dict[int, list[int]] = {}  # rule -> productions that use it
        missing: list[int] = []  # per production: its rules not final yet
        partial: list[int | None] = []  # per production: its terminals' lengths
        heap: list[tuple[int, int, int]] = []
        for p, (lhs, symbols) in enumerate(self.prods):
            total: int | None = 0
            rules = set()
            for s in symbols:
                if s >= 0:
                    rules.add(s)
                else:
                    read = self.terminal_length(s)
                    total = None if read is None or total is None else total + read
            missing.append(len(rules))
            partial.append(total)
            for r in rules:
                waiting.setdefault(r, []).append(p)
            if not rules and total is not None:
                heapq.heappush(heap, (total, lhs, p))
        while heap:
            value, rule, p = heapq.heappop(heap)
            if rule in length:
                continue
            length[rule], choice[rule] = value, p
            for q in waiting.get(rule, ()):
                missing[q] -= 1
                if missing[q] == 0 and partial[q] is not None:
                    lhs, symbols = self.prods[q]
                    if lhs not in length:
                        total = partial[q] + sum(length[s] for s in symbols if s >= 0)
                        heapq.heappush(heap, (total, lhs, q))
        return length, choice

    def _text(self, symbol: int) -> str:
        """The whole shortest text of a terminal, or of a rule of at most ``_KEPT_TEXT``
        characters, kept once made. A rule's text is made from its shortest production's
        symbols' (which are shorter, and made first: an explicit stack, no recursion)."""
        known = self._texts.get(symbol)
        if known is not None:
            return known
        todo = [symbol]
        while todo:
            s = todo[-1]
            if s in self._texts:
                todo.pop()
                continue
            if s < 0:
                self._texts[s] = self.terminal_text(s) or ""
                todo.pop()
                continue
            parts = self.prods[self.choice[s]][1]
            missing = [x for x in parts if x not in self._texts]
            if missing:
                todo.extend(missing)
                continue
            self._texts[s] = "".join(self._texts[x] for x in parts)
            todo.pop()
        return self._texts[symbol]

    def terminal_length(self, symbol: int, state: int = -1) -> int | None:
        """Fewest characters terminal ``symbol`` reads (from DFA ``state`` inside a
        regex), or None when it reads none."""
        term = self.terms[-symbol - 1]
        if isinstance(term, Chars):
            return 1 if term.ranges[0][0] >= 0 else None
        far = term.distance[term.dfa.initial if state < 0 else state]
        return None if far >= UNREACHABLE else far

    def terminal_text(self, symbol: int, state: int = -1) -> str | None:
        """A shortest text terminal ``symbol`` reads (from DFA ``state`` inside a regex),
        or None when it reads none."""
        term = self.terms[-symbol - 1]
        if isinstance(term, Chars):
            return term.sample() if term.ranges[0][0] >= 0 else None
        dfa = term.dfa
        state = dfa.initial if state < 0 else state
        return _dfa_shortest(dfa, state)

    def rest_length(self, p: int, dot: int, state: int) -> int | None:
        """The length of a shortest text for the rest of production ``p`` from ``dot``
        (inside the regex terminal at ``dot`` when ``state`` is a DFA state); None when
        there is none."""
        symbols = self.prods[p][1]
        head = 0
        if state >= 0:
            read = self.terminal_length(symbols[dot], state)
            if read is None:
                return None
            head, dot = read, dot + 1
        tails = self._suffix.get(p)
        if tails is None:
            tails = self._suffix[p] = self._suffix_lengths(symbols)
        rest = tails[dot]
        return None if rest is None else head + rest

    def _suffix_lengths(self, symbols: tuple[int, ...]) -> list[int | None]:
        """For each dot of a production, the length of a shortest text of the symbols
        after it (one list of ints per production, made on first use)."""
        out: list[int | None] = [0] * (len(symbols) + 1)
        for i in range(len(symbols) - 1, -1, -1):
            s, after = symbols[i], out[i + 1]
            read = self.length.get(s) if s >= 0 else self.terminal_length(s)
            out[i] = None if read is None or after is None else read + after
        return out

    def rest(self, p: int, dot: int, state: int, limit: int | None = None) -> str | None:
        """A shortest text for the rest of production ``p`` from ``dot`` (inside the
        regex terminal at ``dot`` when ``state`` is a DFA state), at most ``limit``
        characters of it (None: all); None when there is none."""
        if self.rest_length(p, dot, state) is None:
            return None
        return self.spell([(p, dot, state)], limit)

    def spell(self, pieces: Iterable[tuple[int, int, int]], limit: int | None = None) -> str:
        """The text of ``pieces`` (each the rest of production ``p`` from ``dot``, as
        ``rest``), one after another, cut at ``limit`` characters (None: all). Rules are
        expanded along their shortest productions with an explicit stack, so only the
        characters kept are ever made.

        >>> from fsmviz.grammar.compile import compile_grammar
        >>> p = Productions(compile_grammar('root ::= ("ab"{3}){3}'))
        >>> p.spell([(p.start_prod, 0, -1)]), p.spell([(p.start_prod, 0, -1)], limit=5)
        ('ababababababababab', 'ababa')
        """
        out: list[str] = []
        size = 0
        budget = limit if limit is not None else UNREACHABLE
        for p, dot, state in pieces:
            symbols = self.prods[p][1]
            stack: list[int] = []
            if state >= 0:
                head = self.terminal_text(symbols[dot], state) or ""
                out.append(head[: budget - size])
                size += len(out[-1])
                dot += 1
            stack.extend(reversed(symbols[dot:]))
            while stack and size < budget:
                s = stack.pop()
                if s >= 0 and self.length[s] > _KEPT_TEXT:
                    stack.extend(reversed(self.prods[self.choice[s]][1]))
                    continue
                read = self._text(s)[: budget - size]
                out.append(read)
                size += len(read)
            if size >= budget:
                break
        return "".join(out)


def _options(body: Node) -> tuple[Node, ...]:
    return body.options if isinstance(body, Alt) else (body,)


def _span(lo: int, hi: int) -> str:
    if lo < 0:
        return ""  # the empty class
    return chr(lo) if lo == hi else f"{chr(lo)}-{chr(hi)}"


def _dfa_shortest(dfa: Dfa, state: int) -> str | None:
    """A shortest text from ``state`` to acceptance (breadth first; each state keeps the
    edge it was reached by, and the text is read back once, so a DFA of n states costs n
    steps, not n² characters)."""
    if dfa.is_accepting(state):
        return ""
    came: dict[int, tuple[int, str]] = {state: (-1, "")}
    frontier = [state]
    while frontier:
        nxt = []
        for s in frontier:
            for k, target in dfa.transitions[s].items():
                if target in came:
                    continue
                ranges = dfa.classes[k].ranges(dfa.mentioned)
                if not ranges:
                    continue
                came[target] = (s, Chars(ranges).sample())
                if dfa.is_accepting(target):
                    chars = []
                    while target != state:
                        target, char = came[target]
                        chars.append(char)
                    return "".join(reversed(chars))
                nxt.append(target)
        frontier = nxt
    return None
