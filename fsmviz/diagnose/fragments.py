"""The pattern's own text, in pieces that keep their positions, so findings can quote it.

The DFA forgets which part of the pattern made each state; a finding that says "the
pattern can loop forever" is only useful if it can say *which* part, as written. This
small lexer splits the pattern text into a tree of ``PatternNode``s (alternations, sequences,
groups, repeats with their bounds, single-character atoms), each with its span.

To learn which piece of the pattern produced a given text, ``instrument`` wraps pieces in
named groups and ``fullmatch`` asks the ``regex`` module which group captured what.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import regex

from fsmviz.automaton.dfa import compile_regex
from fsmviz.automaton.syntax import RegexError
from fsmviz.cache import bounded

WHITESPACE = frozenset(" \t\n\r\f\v")


@dataclass(eq=False)
class PatternNode:
    """A piece of the pattern text, ``pattern[start:end]``. ``kind``: alt, seq, group,
    repeat, atom (one character class: a literal, an escape, ``[...]`` or ``.``) or zero
    (anchors, flag groups). A repeat's one child is its base, which ends at ``quant_start``;
    ``lo``/``hi`` are its bounds (``hi`` None when unbounded). Nodes compare by identity."""

    kind: str
    start: int
    end: int
    children: list[PatternNode] = field(default_factory=list)
    lo: int = 1
    hi: int | None = 1
    lazy: bool = False
    quant_start: int = 0

    def walk(self) -> Iterable[PatternNode]:
        yield self
        for child in self.children:
            yield from child.walk()


def parse_pieces(pattern: str) -> list[PatternNode]:
    """Every piece of ``pattern``, outermost first; none when the lexer cannot read it."""
    try:
        return list(_PieceParser(pattern).parse().walk())
    except (ValueError, IndexError):
        return []


_QUANT = re.compile(r"\{(\d*)(,?)(\d*)\}")
_FLAGS_ONLY = re.compile(r"\(\?[aiLmsux]+\)")
_GROUP_OPEN = re.compile(r"\((?:\?(?:P<\w+>|<\w+>|:|[aiLmsux]*(?:-[imsx]+)?:))?")
_ESCAPE = re.compile(
    r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|0[0-7]{0,2}|N\{[^}]*\}|.)", re.S
)


class _PieceParser:
    """The pattern's text read into ``PatternNode`` pieces with their spans, for the
    doctor's rewrites (``fsmviz.automaton.syntax`` reads it into the DFA's syntax tree).
    Recursive descent: alt = seq ('|' seq)*, seq = item*, item = atom quantifier*."""

    def __init__(self, text: str):
        self.text = text
        self.i = 0

    def parse(self) -> PatternNode:
        node = self.alt()
        if self.i != len(self.text):
            raise ValueError(f"unexpected {self.text[self.i]!r} at {self.i}")
        return node

    def alt(self) -> PatternNode:
        start = self.i
        options = [self.seq()]
        while self.i < len(self.text) and self.text[self.i] == "|":
            self.i += 1
            options.append(self.seq())
        if len(options) == 1:
            return options[0]
        return PatternNode("alt", start, self.i, options)

    def seq(self) -> PatternNode:
        start = self.i
        items = []
        while self.i < len(self.text) and self.text[self.i] not in "|)":
            items.append(self.item())
        return PatternNode("seq", start, self.i, items)

    def item(self) -> PatternNode:
        node = self.atom()
        while True:
            quantifier = self.quantifier()
            if quantifier is None:
                return node
            lo, hi, lazy = quantifier
            node = PatternNode("repeat", node.start, self.i, [node], lo, hi, lazy, node.end)

    def atom(self) -> PatternNode:
        text, i = self.text, self.i
        c = text[i]
        if c == "(":
            flags = _FLAGS_ONLY.match(text, i)
            if flags:
                self.i = flags.end()
                return PatternNode("zero", i, self.i)
            opening = _GROUP_OPEN.match(text, i)
            self.i = opening.end() if opening else i + 1
            inner = self.alt()
            if self.i >= len(text) or text[self.i] != ")":
                raise ValueError("missing )")
            self.i += 1
            return PatternNode("group", i, self.i, [inner])
        if c == "[":
            self.i = _class_end(text, i)
            return PatternNode("atom", i, self.i)
        if c == "\\":
            m = _ESCAPE.match(text, i)
            self.i = m.end() if m else i + 1
            kind = "zero" if text[i : self.i] in ("\\A", "\\Z", "\\z") else "atom"
            return PatternNode(kind, i, self.i)
        self.i = i + 1
        return PatternNode("zero" if c in "^$" else "atom", i, self.i)

    def quantifier(self) -> tuple[int, int | None, bool] | None:
        text, i = self.text, self.i
        if i >= len(text):
            return None
        c = text[i]
        if c in "*+?":
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            self.i = i + 1
        elif c == "{":
            m = _QUANT.match(text, i)
            if not m or not (m.group(1) or m.group(3)):
                return None
            lo = int(m.group(1) or 0)
            hi = int(m.group(3)) if m.group(3) else (None if m.group(2) else lo)
            self.i = m.end()
        else:
            return None
        lazy = self.i < len(text) and text[self.i] == "?"
        if lazy:
            self.i += 1
        return lo, hi, lazy


def _class_end(text: str, i: int) -> int:
    """Index just after the ``]`` closing the class that opens at ``i``."""
    j = i + 1
    if j < len(text) and text[j] == "^":
        j += 1
    if j < len(text) and text[j] == "]":
        j += 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == "]":
            return j + 1
        j += 1
    raise ValueError("missing ]")


def class_members(body: str) -> list[tuple[int, int, bool]]:
    """Members of a class body (between ``[`` or ``[^`` and ``]``) as (start, end, is_range)."""

    def one(j: int) -> int:
        if body[j] == "\\":
            m = _ESCAPE.match(body, j)
            return m.end() if m else j + 2
        return j + 1

    members = []
    j = 0
    while j < len(body):
        end = one(j)
        if end + 1 < len(body) and body[end] == "-":
            members.append((j, one(end + 1), True))
            j = one(end + 1)
        else:
            members.append((j, end, False))
            j = end
    return members


def escapes_in(atom: str) -> set[str]:
    """Two-character escapes like ``\\d`` written in an atom (a class or a single escape)."""
    out = set()
    j = 0
    while j < len(atom):
        if atom[j] == "\\" and j + 1 < len(atom):
            out.add(atom[j : j + 2])
            j += 2
        else:
            j += 1
    return out


@bounded(maxsize=2048)
def atom_chars(atom: str) -> tuple[frozenset[str], bool] | None:
    """(characters, also every unmentioned character) one atom of the pattern stands for."""
    try:
        dfa = compile_regex(atom)
    except RegexError:
        return None
    chars: set[str] = set()
    others = False
    for k in dfa.transitions[dfa.initial]:
        chars |= dfa.classes[k].chars
        others = others or dfa.classes[k].others
    return frozenset(chars), others


def instrument(pattern: str, spans: list[tuple[int, int, str]]) -> str:
    """``pattern`` with a named group ``(?P<name>…)`` around each (start, end) span."""
    opens: dict[int, list[tuple[int, str]]] = {}
    closes: dict[int, list[int]] = {}
    for start, end, name in spans:
        opens.setdefault(start, []).append((end, name))
        closes.setdefault(end, []).append(start)
    out = []
    for i in range(len(pattern) + 1):
        out.extend(")" for _ in closes.get(i, ()))
        out.extend(f"(?P<{name}>" for _, name in sorted(opens.get(i, ()), reverse=True))
        if i < len(pattern):
            out.append(pattern[i])
    return "".join(out)


def fullmatch(pattern: str, text: str) -> regex.Match | None:
    """``regex.fullmatch`` with ASCII classes, as the DFA reads them; None on any trouble."""
    try:
        return regex.fullmatch(pattern, text, flags=regex.ASCII, timeout=0.05)
    except (regex.error, TimeoutError):
        return None
