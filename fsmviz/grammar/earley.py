r"""The naive oracle for grammars: a plain character-level Earley recognizer.

A regex is judged by a DFA, one character at a time. A context-free grammar needs a
*stack* as well (brackets nest), and Earley's algorithm (1970) keeps every stack the text
so far allows at once, as a chart of **items**: ``A -> α • β, i`` means "a rule ``A`` that
started at position ``i`` has read ``α`` and expects ``β``". Column ``k`` holds the items
alive after ``k`` characters; three moves fill it:

* **predict**: an item expects the rule ``B``: add ``B -> • γ, k`` for each choice of ``B``;
* **scan**: an item expects a character class that holds the next character: move its dot
  over it, into column ``k + 1``;
* **complete**: an item finished (``B -> γ •, i``): every item of column ``i`` that
  expected ``B`` moves its dot over ``B``.

Worked example, ``S -> "(" S ")" | ""`` on ``(``::

    column 0:  S' -> • S, 0     S -> • "(" S ")", 0     S -> •, 0     S' -> S •, 0
    read "(":  S -> "(" • S ")", 0     S -> • "(" S ")", 1     S -> •, 1
               S -> "(" S • ")", 0     (S finished empty at 1, so its user moves on)

The text is a **prefix** of a sentence exactly when its last column is not empty (every
rule here can finish, which ``compile_grammar`` checked), and a **sentence** when the last
column holds the start item finished from 0:

>>> from fsmviz.grammar.compile import compile_grammar
>>> r = recognizer(compile_grammar('root ::= "(" root ")" | ""'))
>>> r.is_prefix("(("), r.accepts("(("), r.accepts("(())"), r.is_prefix("())")
(True, False, True, False)
>>> r.shortest_completion("((")
'))'

Grammar pieces become items this way: a literal is its characters one by one; a class is
one character; ``*``, ``+``, ``?`` and ``{m,n}`` become small helper rules; a Lark
``/regex/`` is compiled to fsmviz's character DFA and an item *inside* it carries the DFA
state (it moves on every character the DFA reads, and its dot moves past the regex
whenever the DFA accepts). Lark's ``%ignore`` text may come before every terminal of a
rule and at the end. A nullable rule's users move on when it is predicted (Aycock and
Horspool's fix), so empty rules need no special case.

Texts arrive as characters; token bytes that end inside a UTF-8 character are judged with
``can_continue``: some character whose encoding begins with those bytes is readable next
(UTF-8 keeps code-point order, so that is a range of code points to test). The work is
bounded: at most ``MAX_TEXT_CHARS`` characters a text.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field

from fsmviz.automaton.dfa import Dfa, compile_regex
from fsmviz.cache import BoundedCache
from fsmviz.grammar.compile import regex_text
from fsmviz.grammar.errors import GrammarError
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

__all__ = [
    "MAX_CHART_WORK",
    "MAX_COLUMN_WORK",
    "MAX_TEXT_CHARS",
    "Column",
    "Recognizer",
    "recognizer",
    "utf8_range",
    "utf8_size",
]

MAX_TEXT_CHARS = 20_000
MAX_COLUMN_WORK = 300_000
MAX_CHART_WORK = 2_000_000
"""Earley's moves one column (one chart) may take: an ambiguous grammar (``s ::= s s |
"a"``) makes the work grow with the cube of the text; past these bounds (a second or
two, seconds) the recognizer refuses with a ``GrammarError`` rather than take minutes."""
_CACHE: BoundedCache[Recognizer] = BoundedCache(maxsize=16)

Item = tuple[int, int, int, int]
"""(production, dot, origin column, DFA state inside a regex terminal or -1)."""


def recognizer(grammar: Grammar) -> Recognizer:
    """The recognizer of ``grammar`` (built once, cached)."""
    return _CACHE.get_or_build(grammar, lambda: Recognizer(grammar))


@dataclass(frozen=True, eq=False)
class _Chars:
    """A terminal that reads one character: sorted disjoint code-point ranges."""

    ranges: tuple[tuple[int, int], ...]
    lows: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lows", tuple(lo for lo, _ in self.ranges))

    def __contains__(self, code: int) -> bool:
        i = bisect.bisect_right(self.lows, code) - 1
        return i >= 0 and code <= self.ranges[i][1]

    def meets(self, lo: int, hi: int) -> bool:
        i = bisect.bisect_right(self.lows, hi) - 1
        return i >= 0 and self.ranges[i][1] >= lo

    def sample(self) -> str:
        """A readable character of the set (a printable one when there is one)."""
        for lo, hi in self.ranges:
            if hi >= 0x20 and lo <= 0x7E:
                return chr(max(lo, 0x20))
        return chr(self.ranges[0][0])


@dataclass(frozen=True, eq=False)
class _Regex:
    """A terminal that reads any text its DFA accepts."""

    dfa: Dfa
    distance: tuple[int, ...]  # fewest characters from each state to acceptance


@dataclass(frozen=True, eq=False)
class Column:
    """The items alive after some characters: ``waiting[B]`` are the items expecting rule
    ``B`` (completions look them up), ``scans`` the items expecting a character."""

    items: frozenset[Item]
    waiting: dict[int, list[Item]]
    scans: tuple[Item, ...]
    # what ``Recognizer.completion`` worked out here (it depends only on this column and
    # the ones before it, which every chart holding this column shares)
    moves: int = 0  # Earley moves it took (for the work bound)
    memo: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    def __bool__(self) -> bool:
        return bool(self.items)


class Recognizer:
    """Earley over one grammar, flattened into numbered productions."""

    def __init__(self, grammar: Grammar):
        self.grammar = grammar
        self.prods: list[tuple[int, tuple[int, ...]]] = []  # (rule number, symbols)
        self.names: list[str] = []  # rule numbers -> names (helper rules get "name/…")
        self.terms: list[_Chars | _Regex] = []  # terminal k is symbol -k-1
        self._term_ids: dict[object, int] = {}
        self._rule_ids: dict[str, int] = {}
        self._terminal_rules = {rule.name for rule in grammar.rules if rule.terminal}
        self._build()
        self.by_lhs: dict[int, list[int]] = {}
        for p, (lhs, _) in enumerate(self.prods):
            self.by_lhs.setdefault(lhs, []).append(p)
        self.nullable = self._nullable()
        self._shortest = self._shortest_texts()
        self._suffix: dict[tuple[int, int], str] = {}
        self.first = self._close(0, [(self.start_prod, 0, 0, -1)], [])

    # --- the grammar, flattened ----------------------------------------------------------

    def _build(self) -> None:
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

    def _term(self, key: object, build) -> int:
        if key not in self._term_ids:
            self._term_ids[key] = len(self.terms)
            self.terms.append(build())
        return -self._term_ids[key] - 1

    def _chars(self, ranges: tuple[tuple[int, int], ...]) -> int:
        return self._term(("chars", ranges), lambda: _Chars(ranges))

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

            def build() -> _Regex:
                dfa = compile_regex(pattern)
                return _Regex(dfa, tuple(dfa.distances()))

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

    def _nullable(self) -> set[int]:
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
        return isinstance(term, _Regex) and term.dfa.is_accepting(term.dfa.initial)

    def _shortest_texts(self) -> dict[int, str]:
        """A shortest text of every rule (a fixed point, like Knuth's shortest derivation)."""
        best: dict[int, str] = {}
        changed = True
        while changed:
            changed = False
            for lhs, symbols in self.prods:
                parts = []
                for s in symbols:
                    text = best.get(s) if s >= 0 else self._term_text(s)
                    if text is None:
                        break
                    parts.append(text)
                else:
                    text = "".join(parts)
                    if lhs not in best or len(text) < len(best[lhs]):
                        best[lhs] = text
                        changed = True
        return best

    def _term_text(self, symbol: int, state: int = -1) -> str | None:
        term = self.terms[-symbol - 1]
        if isinstance(term, _Chars):
            return term.sample() if term.ranges[0][0] >= 0 else None
        dfa = term.dfa
        state = dfa.initial if state < 0 else state
        return _dfa_shortest(dfa, state)

    # --- the chart -----------------------------------------------------------------------

    def _close(self, k: int, seeds: Iterable[Item], columns: list[Column]) -> Column:
        """Column ``k`` from its seed items: predict and complete until nothing is new."""
        items: set[Item] = set()
        work = list(seeds)
        waiting: dict[int, list[Item]] = {}
        scans: list[Item] = []
        prods, by_lhs, nullable, terms = self.prods, self.by_lhs, self.nullable, self.terms
        predicted: set[int] = set()
        moves = 0
        while work:
            if moves > MAX_COLUMN_WORK:
                raise _too_ambiguous(k)
            item = work.pop()
            moves += 1
            if item in items:
                continue
            items.add(item)
            p, dot, origin, state = item
            lhs, symbols = prods[p]
            if dot == len(symbols):
                source = waiting if origin == k else columns[origin].waiting
                for p2, d2, o2, _ in source.get(lhs, ()):
                    work.append((p2, d2 + 1, o2, -1))
                continue
            symbol = symbols[dot]
            if symbol >= 0:
                waiting.setdefault(symbol, []).append(item)
                if symbol not in predicted:
                    predicted.add(symbol)
                    work.extend((q, 0, k, -1) for q in by_lhs.get(symbol, ()))
                if symbol in nullable:
                    work.append((p, dot + 1, origin, -1))
                continue
            term = terms[-symbol - 1]
            if isinstance(term, _Regex) and state < 0:
                start = term.dfa.initial
                work.append((p, dot, origin, start))
                if term.dfa.is_accepting(start):
                    work.append((p, dot + 1, origin, -1))
                continue
            scans.append(item)
        return Column(frozenset(items), waiting, tuple(scans), moves)

    def step(self, columns: list[Column], char: str) -> Column:
        """The column after reading ``char`` at the end of ``columns`` (maybe empty)."""
        code = ord(char)
        seeds: list[Item] = []
        for p, dot, origin, state in columns[-1].scans:
            term = self.terms[-self.prods[p][1][dot] - 1]
            if isinstance(term, _Chars):
                if code in term:
                    seeds.append((p, dot + 1, origin, -1))
                continue
            after = term.dfa.step(state, char)
            if after is not None:
                seeds.append((p, dot, origin, after))
                if term.dfa.is_accepting(after):
                    seeds.append((p, dot + 1, origin, -1))
        return self._close(len(columns), seeds, columns)

    def chart(self, text: str) -> list[Column]:
        """The columns after each character of ``text`` (stops early at an empty one)."""
        if len(text) > MAX_TEXT_CHARS:
            raise GrammarError(
                f"the text is too long to check ({len(text):,} characters; the limit is "
                f"{MAX_TEXT_CHARS:,})"
            )
        columns = [self.first]
        work = 0
        for char in text:
            column = self.step(columns, char)
            columns.append(column)
            work += column.moves
            if work > MAX_CHART_WORK:
                raise _too_ambiguous(len(columns) - 1)
            if not column:
                break
        return columns

    def accepts(self, text: str) -> bool:
        columns = self.chart(text)
        return len(columns) == len(text) + 1 and self.finished(columns[-1])

    def is_prefix(self, text: str) -> bool:
        columns = self.chart(text)
        return len(columns) == len(text) + 1 and bool(columns[-1])

    def finished(self, column: Column) -> bool:
        """Whether the text read so far is a whole sentence."""
        return (self.start_prod, len(self.prods[self.start_prod][1]), 0, -1) in column.items

    def can_continue(self, column: Column, tail: bytes) -> bool:
        """Whether some character whose UTF-8 begins with ``tail`` (the bytes of a
        character cut short) can be read next."""
        span = utf8_range(tail)
        if span is None:
            return False
        lo, hi = span
        for p, dot, _, state in column.scans:
            term = self.terms[-self.prods[p][1][dot] - 1]
            if isinstance(term, _Chars):
                if term.meets(lo, hi):
                    return True
                continue
            dfa = term.dfa
            for k in dfa.transitions[state]:
                for a, b in dfa.classes[k].ranges(dfa.mentioned):
                    if a <= hi and b >= lo:
                        return True
        return False

    # --- the shortest completion ---------------------------------------------------------

    def shortest_completion(self, text: str) -> str | None:
        """The shortest text that completes ``text`` into a sentence ("" for a sentence),
        or None when no sentence begins with ``text``."""
        columns = self.chart(text)
        if len(columns) != len(text) + 1 or not columns[-1]:
            return None
        return self.completion(columns)

    def completion(self, columns: list[Column]) -> str:
        """The shortest completion after the text that built ``columns`` (not empty).

        An item finishes by reading the rest of its production, then its rule's user in
        the item's origin column finishes, and so on down to the start item. ``_after``
        gives, for each column and rule, the cheapest way to finish once that rule is
        complete; it is solved column by column (a Dijkstra inside each column, since
        users that started in the same column can form cycles)."""
        after: list[dict[int, str]] = []
        last = len(columns) - 1
        for k in range(last + 1):
            known = columns[k].memo.get("after")
            if known is None:
                known = columns[k].memo["after"] = self._after(k, columns[k], after)
            after.append(known)  # type: ignore[arg-type]
        best: str | None = None
        for item in columns[last].items:
            p, dot, origin, state = item
            rest = self._rest(p, dot, state)
            if rest is None:
                continue
            tail = after[origin].get(self.prods[p][0])
            if p == self.start_prod:
                tail = ""
            if tail is None:
                continue
            if best is None or len(rest) + len(tail) < len(best):
                best = rest + tail
        return best if best is not None else ""

    def _after(self, k: int, column: Column, after: list[dict[int, str]]) -> dict[int, str]:
        """For each rule ``B`` some item of column ``k`` waits on: the shortest text that
        finishes the sentence once ``B`` (started at ``k``) is complete."""
        found: dict[int, str] = {}
        heap: list[tuple[int, int, str]] = []
        same: dict[int, list[tuple[int, str]]] = {}  # lhs started here -> (B, rest)
        for symbol, users in column.waiting.items():
            for p, dot, origin, _ in users:
                rest = self._rest(p, dot + 1, -1)
                if rest is None:
                    continue
                lhs = self.prods[p][0]
                if p == self.start_prod:
                    heapq.heappush(heap, (len(rest), symbol, rest))
                elif origin < k:
                    tail = after[origin].get(lhs)
                    if tail is not None:
                        heapq.heappush(heap, (len(rest) + len(tail), symbol, rest + tail))
                else:
                    same.setdefault(lhs, []).append((symbol, rest))
        while heap:
            _, symbol, text = heapq.heappop(heap)
            if symbol in found:
                continue
            found[symbol] = text
            for user_symbol, rest in same.get(symbol, ()):
                if user_symbol not in found:
                    total = rest + text
                    heapq.heappush(heap, (len(total), user_symbol, total))
        return found

    def _rest(self, p: int, dot: int, state: int) -> str | None:
        """A shortest text for the rest of production ``p`` from ``dot`` (inside the
        regex terminal at ``dot`` when ``state`` is a DFA state)."""
        symbols = self.prods[p][1]
        head = ""
        if state >= 0:
            text = self._term_text(symbols[dot], state)
            if text is None:
                return None
            head, dot = text, dot + 1
        key = (p, dot)
        if key not in self._suffix:
            parts = []
            for s in symbols[dot:]:
                text = self._shortest.get(s) if s >= 0 else self._term_text(s)
                if text is None:
                    self._suffix[key] = None  # type: ignore[assignment]
                    break
                parts.append(text)
            else:
                self._suffix[key] = "".join(parts)
        rest = self._suffix[key]
        return None if rest is None else head + rest


def _too_ambiguous(k: int) -> GrammarError:
    return GrammarError(
        f"the grammar is too ambiguous to check this text in time (stopped at character {k})",
        None,
        None,
        "make the rules less ambiguous (s ::= s s lets a text split many ways)",
    )


def _options(body: Node) -> tuple[Node, ...]:
    return body.options if isinstance(body, Alt) else (body,)


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
                char = _Chars(ranges).sample()
                seen[target] = seen[s] + char
                if dfa.is_accepting(target):
                    return seen[target]
                nxt.append(target)
        frontier = nxt
    return None


def utf8_range(tail: bytes) -> tuple[int, int] | None:
    """The code points whose UTF-8 encoding begins with ``tail`` (1 to 3 bytes of a
    longer character), or None when no character does.

    >>> [hex(c) for c in utf8_range(b"\\xe6\\x97")]
    ['0x65c0', '0x65ff']
    """
    if not tail:
        return None
    size = utf8_size(tail[0])
    if size < 2 or len(tail) >= size:
        return None
    if any(not 0x80 <= b <= 0xBF for b in tail[1:]):
        return None
    low = tail + b"\x80" * (size - len(tail))
    high = tail + b"\xbf" * (size - len(tail))
    lo = _decode_loose(low)
    hi = _decode_loose(high)
    if lo is None or hi is None:
        # an overlong or surrogate start (E0 80, ED A0, F0 80, F4 90): clip to valid text
        lo, hi = _clip(tail, size)
        if lo is None:
            return None
    return lo, hi


def utf8_size(lead: int) -> int:
    """How many bytes the UTF-8 character starting with ``lead`` has (0: not a start)."""
    if lead < 0x80:
        return 1
    return (
        2
        if 0xC2 <= lead <= 0xDF
        else 3
        if 0xE0 <= lead <= 0xEF
        else 4
        if 0xF0 <= lead <= 0xF4
        else 0
    )


def _decode_loose(data: bytes) -> int | None:
    try:
        return ord(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def _clip(tail: bytes, size: int) -> tuple[int | None, int]:
    """The valid characters among those ``tail`` could begin (slow path, rare)."""
    points = []
    for rest in _fillers(size - len(tail)):
        code = _decode_loose(tail + rest)
        if code is not None:
            points.append(code)
    return (min(points), max(points)) if points else (None, 0)


def _fillers(count: int) -> list[bytes]:
    if count == 0:
        return [b""]
    edge = [bytes([b]) for b in (0x80, 0x9F, 0xA0, 0xBF)]
    return [a + b for a in edge for b in _fillers(count - 1)]
