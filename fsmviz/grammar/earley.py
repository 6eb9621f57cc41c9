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

The productions the items point into are the grammar flattened once
(``fsmviz.grammar.productions``: literals become characters, repeats helper rules); this
module holds what depends on the text: the chart, and the shortest completion read off it.
Two details of the moves: an item before a Lark ``/regex/`` carries the regex's DFA state
(it moves on every character the DFA reads, and its dot moves past the regex whenever
the DFA accepts); and a nullable rule's users move on as soon as it is predicted (Aycock
and Horspool's fix), so empty rules need no special case.

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

**The shortest completion** (the hardest part of the code) is read off the chart from the
bottom up. ``after[k][B]`` is the shortest text that finishes the sentence once a rule
``B`` begun at column ``k`` is complete: some item of column ``k`` waits on ``B``; it needs
the shortest rest of its own production, then ``after`` of *its* rule at *its* origin.
On ``((``::

    column 0:  S' -> • S, 0         waits on S: rest ""         after[0][S] = ""
    column 1:  S -> "(" • S ")", 0  waits on S: rest ")" + after[0][S]   = ")"
    column 2:  S -> "(" • S ")", 1  waits on S: rest ")" + after[1][S]   = "))"
    finish:    S -> •, 2            rest "" + after[2][S]                = "))"

An item's origin is never later than its column, so one pass from column 0 fills the
table, but for the items predicted in the column itself (``A -> • B γ, k``): their own
``after[k][A]`` is in the row being made, and such items can wait on each other in a cycle
(left recursion: ``e ::= e "+" t | t``). Within a column the row is therefore a
shortest-path problem, solved by Dijkstra from the items begun earlier. Each column keeps
its row (``Column.memo``), so the completion after one more token costs one more row.
A row holds lengths and links, never text (``Tail``): a rule may stand for 100,000
characters, and a text 20,000 characters deep would otherwise copy them into every row.

>>> r.shortest_completion("((")
'))'

Texts arrive as characters; token bytes that end inside a UTF-8 character are judged with
``can_continue``: some character whose encoding begins with those bytes is readable next
(UTF-8 keeps code-point order, so that is a range of code points to test). The work is
bounded: at most ``MAX_TEXT_CHARS`` characters a text.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from fsmviz.cache import BoundedCache
from fsmviz.grammar.errors import GrammarError
from fsmviz.grammar.nodes import GrammarTree
from fsmviz.grammar.productions import Chars, Productions, Regex

__all__ = [
    "MAX_CHART_WORK",
    "MAX_COMPLETION_CHARS",
    "MAX_COLUMN_WORK",
    "MAX_TEXT_CHARS",
    "Column",
    "Recognizer",
    "recognizer",
    "utf8_range",
    "utf8_size",
]

MAX_TEXT_CHARS = 20_000
MAX_COMPLETION_CHARS = 100_000
"""The most characters of a completion spelled unless asked for more (its length is
always exact: ``Recognizer.completion_length``)."""
MAX_COLUMN_WORK = 300_000
MAX_CHART_WORK = 2_000_000
"""Earley's moves one column (one chart) may take: an ambiguous grammar (``s ::= s s |
"a"``) makes the work grow with the cube of the text; past these bounds (a second or
two, seconds) the recognizer refuses with a ``GrammarError`` rather than take minutes."""
_CACHE: BoundedCache[Recognizer] = BoundedCache(maxsize=16)

Item = tuple[int, int, int, int]
"""(production, dot, origin column, DFA state inside a regex terminal or -1)."""
Tail = tuple[int, int, int, "Tail | None"]
"""A way to finish the sentence, as a linked list that later columns share: (its length,
production, dot, the way on once that production is done). Its text is the rest of the
production from the dot, then the next link's; it is spelled only when asked, and only as
far as asked (``Productions.spell``), however long it is."""


def recognizer(grammar: GrammarTree) -> Recognizer:
    """The recognizer of ``grammar`` (built once, cached)."""
    return _CACHE.get_or_build(grammar, lambda: Recognizer(grammar))


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
    """Earley's chart over one grammar's productions: columns, and what they answer."""

    def __init__(self, grammar: GrammarTree):
        self.grammar = grammar
        self.productions = g = Productions(grammar)
        self.first = self._close(0, [(g.start_prod, 0, 0, -1)], [])
        self._sentence = (g.start_prod, len(g.prods[g.start_prod][1]), 0, -1)

    # --- the chart -----------------------------------------------------------------------

    def _close(self, k: int, seeds: Iterable[Item], columns: list[Column]) -> Column:
        """Column ``k`` from its seed items: predict and complete until nothing is new."""
        items: set[Item] = set()
        work = list(seeds)
        waiting: dict[int, list[Item]] = {}
        scans: list[Item] = []
        g = self.productions
        prods, by_lhs, nullable, terms = g.prods, g.by_lhs, g.nullable, g.terms
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
            if isinstance(term, Regex) and state < 0:
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
        prods, terms = self.productions.prods, self.productions.terms
        for p, dot, origin, state in columns[-1].scans:
            term = terms[-prods[p][1][dot] - 1]
            if isinstance(term, Chars):
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
        return self._sentence in column.items

    def can_continue(self, column: Column, tail: bytes) -> bool:
        """Whether some character whose UTF-8 begins with ``tail`` (the bytes of a
        character cut short) can be read next."""
        span = utf8_range(tail)
        if span is None:
            return False
        prods, terms = self.productions.prods, self.productions.terms
        return any(_meets(terms[-prods[p][1][dot] - 1], state, *span)
                   for p, dot, _, state in column.scans)  # fmt: skip

    # --- the shortest completion ---------------------------------------------------------

    def shortest_completion(self, text: str, limit: int | None = None) -> str | None:
        """The shortest text that completes ``text`` into a sentence ("" for a sentence),
        cut at ``limit`` characters (default ``MAX_COMPLETION_CHARS``), or None when no
        sentence begins with ``text``."""
        columns = self.chart(text)
        if len(columns) != len(text) + 1 or not columns[-1]:
            return None
        return self.completion(columns, limit)

    def completion(self, columns: list[Column], limit: int | None = None) -> str:
        """The shortest completion after the text that built ``columns`` (not empty), cut
        at ``limit`` characters (default ``MAX_COMPLETION_CHARS``; its whole length is
        ``completion_length``).

        An item finishes by reading the rest of its production, then its rule's user in
        the item's origin column finishes, and so on down to the start item. ``_after``
        gives, for each column and rule, the cheapest way to finish once that rule is
        complete; it is solved column by column (a Dijkstra inside each column, since
        users that started in the same column can form cycles). Ways are lengths and
        links (``Tail``), never text: the text is spelled once, only as far as asked."""
        best = self._best(columns)
        if best is None:
            return ""
        _, p, dot, state, tail = best
        return self.productions.spell(
            _pieces(p, dot, state, tail), MAX_COMPLETION_CHARS if limit is None else limit
        )

    def completion_length(self, columns: list[Column]) -> int:
        """How many characters the shortest completion after ``columns`` has (counted,
        not spelled: cheap however long it is)."""
        best = self._best(columns)
        return 0 if best is None else best[0]

    def _best(self, columns: list[Column]) -> tuple[int, int, int, int, Tail | None] | None:
        """The shortest way to finish after ``columns``: (length, production, dot, DFA
        state, the ``Tail`` after that production), or None."""
        after: list[dict[int, Tail]] = []
        last = len(columns) - 1
        for k in range(last + 1):
            known = columns[k].memo.get("after")
            if known is None:
                known = columns[k].memo["after"] = self._after(k, columns[k], after)
            after.append(known)  # type: ignore[arg-type]
        g = self.productions
        best: tuple[int, int, int, int, Tail | None] | None = None
        for item in columns[last].items:
            p, dot, origin, state = item
            rest = g.rest_length(p, dot, state)
            if rest is None:
                continue
            tail: Tail | None = None
            if p != g.start_prod:
                tail = after[origin].get(g.prods[p][0])
                if tail is None:
                    continue
            total = rest + (tail[0] if tail is not None else 0)
            if best is None or total < best[0]:
                best = (total, p, dot, state, tail)
        return best

    def _after(self, k: int, column: Column, after: list[dict[int, Tail]]) -> dict[int, Tail]:
        """For each rule ``B`` some item of column ``k`` waits on: the shortest way to
        finish the sentence once ``B`` (started at ``k``) is complete, as a ``Tail``."""
        found: dict[int, Tail] = {}
        heap: list[tuple[int, int, int, Tail]] = []
        same: dict[int, list[tuple[int, int, int, int]]] = {}  # lhs begun here -> users
        g = self.productions
        order = 0  # ties: the first way found
        for symbol, users in column.waiting.items():
            for p, dot, origin, _ in users:
                rest = g.rest_length(p, dot + 1, -1)
                if rest is None:
                    continue
                lhs = g.prods[p][0]
                if p == g.start_prod:
                    heap.append((rest, symbol, order, (rest, p, dot + 1, None)))
                elif origin < k:
                    tail = after[origin].get(lhs)
                    if tail is not None:
                        total = rest + tail[0]
                        heap.append((total, symbol, order, (total, p, dot + 1, tail)))
                else:
                    same.setdefault(lhs, []).append((symbol, p, dot + 1, rest))
                order += 1
        heapq.heapify(heap)
        while heap:
            _, symbol, _, cell = heapq.heappop(heap)
            if symbol in found:
                continue
            found[symbol] = cell
            for user_symbol, p, dot, rest in same.get(symbol, ()):
                if user_symbol not in found:
                    total = rest + cell[0]
                    heapq.heappush(heap, (total, user_symbol, order, (total, p, dot, cell)))
                    order += 1
        return found


def _meets(term: Chars | Regex, state: int, lo: int, hi: int) -> bool:
    """Whether ``term`` (at DFA ``state``, for a regex) can read a character in ``lo..hi``."""
    if isinstance(term, Chars):
        return term.meets(lo, hi)
    dfa = term.dfa
    return any(a <= hi and b >= lo for k in dfa.transitions[state]
               for a, b in dfa.classes[k].ranges(dfa.mentioned))  # fmt: skip


def _pieces(p: int, dot: int, state: int, tail: Tail | None) -> Iterator[tuple[int, int, int]]:
    """The (production, dot, state) pieces a completion reads, first to last."""
    yield p, dot, state
    while tail is not None:
        _, p, dot, tail = tail
        yield p, dot, -1


def _too_ambiguous(k: int) -> GrammarError:
    return GrammarError(
        f"the grammar is too ambiguous to check this text in time (stopped at character {k})",
        None,
        None,
        "make the rules less ambiguous (s ::= s s lets a text split many ways)",
    )


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
