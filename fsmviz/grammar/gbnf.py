r"""GBNF, llama.cpp's grammar format, read into fsmviz's grammar tree.

A GBNF file is rules ``name ::= body``, one per line (a body continues onto more lines
only inside parentheses, or right after ``::=`` or ``|``), starting from ``root``::

    root   ::= object
    object ::= "{" ws ( pair ( "," ws pair )* )? "}"   # a comment
    pair   ::= [a-z]+ ":" ws [0-9]+
    ws     ::= [ \t\n]*

Pieces: ``"literal"``, ``[a-z_]`` and ``[^"\\]`` classes, ``.`` (any character), rule
names (letters, digits, ``-`` and ``_``), ``( ... )`` groups, ``|``, and the repeats
``* + ? {m} {m,} {m,n}``. Escapes, in literals and classes: ``\xNN \uNNNN \UNNNNNNNN
\t \r \n \\ \" \[ \]``. llama.cpp's token references (``<[1234]>``, ``<think>``) are
refused with a ``GrammarError``: a grammar here is about text.

This reader follows llama.cpp's ``grammar-parser`` in where a newline may fall, so a file
that llama.cpp reads is read here the same way.

>>> g = parse_gbnf('root ::= "a" | [b-c]{2}  # two of b, c')
>>> g.rule("root").body.options
(Literal(text='a'), Repeat(item=CharSet(ranges=((98, 99),), negated=False), min=2, max=2))
"""

from __future__ import annotations

from fsmviz.grammar.errors import GrammarError, line_column
from fsmviz.grammar.limits import MAX_NESTING
from fsmviz.grammar.tree import (
    MAX_CODE_POINT,
    Alt,
    CharSet,
    Grammar,
    Literal,
    Node,
    Repeat,
    Rule,
    RuleRef,
    Seq,
)

__all__ = ["START", "parse_gbnf"]

START = "root"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_SIMPLE_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "\\": "\\", '"': '"', "[": "[", "]": "]"}
_MORE_ESCAPES = {"-": "-", "^": "^", "/": "/", "'": "'", "0": "\0", "f": "\f", "v": "\v"}
_HEX_LENGTH = {"x": 2, "u": 4, "U": 8}
MAX_REPEAT = 1_000
"""The largest count a ``{m,n}`` may name (llama.cpp expands repeats into copies, too)."""


def parse_gbnf(text: str) -> Grammar:
    """Read GBNF ``text`` into a ``Grammar`` whose start rule is ``root``; raise
    ``GrammarError`` (with line and column) at the first thing that is not GBNF."""
    return _Reader(text).grammar()


class _Characters:
    """The GBNF text and a place in it: blanks and comments skipped, numbers, and the
    characters of a ``"literal"`` or a ``[class]`` with their escapes decoded."""

    def __init__(self, text: str):
        self.text = text
        self.at = 0
        self.depth = 0  # groups open around the reader (``MAX_NESTING``)

    # --- errors and position -------------------------------------------------------------

    def error(self, message: str, hint: str | None = None, at: int | None = None) -> GrammarError:
        line, column = line_column(self.text, self.at if at is None else at)
        return GrammarError(message, line, column, hint)

    def peek(self, n: int = 1) -> str:
        return self.text[self.at : self.at + n]

    def space(self, newlines: bool) -> None:
        """Skip blanks and ``#`` comments, and newlines too when ``newlines``."""
        text = self.text
        while self.at < len(text):
            char = text[self.at]
            if char in " \t" or (newlines and char in "\r\n"):
                self.at += 1
            elif char == "#":
                end = text.find("\n", self.at)
                self.at = len(text) if end < 0 else end
            else:
                return

    def number(self) -> int | None:
        start = self.at
        while self.peek().isdigit() and self.peek().isascii():
            self.at += 1
        return int(self.text[start : self.at]) if self.at > start else None

    # --- literals and classes ------------------------------------------------------------

    def literal(self) -> Literal:
        start = self.at
        self.at += 1
        chars = []
        while True:
            if self.at >= len(self.text) or self.text[self.at] == "\n":
                raise self.error(
                    "this string is never closed", 'end it with " on the same line', at=start
                )
            char = self.text[self.at]
            if char == '"':
                self.at += 1
                return Literal("".join(chars))
            chars.append(self.char())

    def char(self) -> str:
        """One character of a literal or class, escapes decoded."""
        if self.at >= len(self.text) or self.text[self.at] == "\n":
            raise self.error("a character was expected here", "close the string or class")
        char = self.text[self.at]
        if char != "\\":
            self.at += 1
            return char
        start = self.at
        kind = self.text[self.at + 1 : self.at + 2]
        if kind in _HEX_LENGTH:
            digits = self.text[self.at + 2 : self.at + 2 + _HEX_LENGTH[kind]]
            if len(digits) != _HEX_LENGTH[kind] or not all(
                c in "0123456789abcdefABCDEF" for c in digits
            ):
                raise self.error(
                    f"\\{kind} needs {_HEX_LENGTH[kind]} hex digits",
                    f"write \\{kind}{'0' * (_HEX_LENGTH[kind] - 1)}A",
                    at=start,
                )
            code = int(digits, 16)
            if code > MAX_CODE_POINT:
                raise self.error(f"\\{kind}{digits} is beyond U+10FFFF", None, at=start)
            self.at += 2 + len(digits)
            return chr(code)
        escaped = _SIMPLE_ESCAPES.get(kind) or _MORE_ESCAPES.get(kind)
        if escaped is None:
            raise self.error(
                f"unknown escape \\{kind}",
                'known: \\xNN \\uNNNN \\UNNNNNNNN \\t \\r \\n \\\\ \\" \\[ \\]',
                at=start,
            )
        self.at += 2
        return escaped

    def charset(self) -> CharSet:
        start = self.at
        self.at += 1
        negated = self.peek() == "^"
        if negated:
            self.at += 1
        points: list[tuple[int, int]] = []
        while True:
            if self.at >= len(self.text) or self.text[self.at] == "\n":
                raise self.error(
                    "this [ class is never closed", "end it with ] on the same line", at=start
                )
            if self.text[self.at] == "]":
                self.at += 1
                break
            low = self.char()
            high = low
            if self.peek() == "-" and self.peek(2) not in ("-]", "-"):
                self.at += 1
                high = self.char()
                if ord(high) < ord(low):
                    raise self.error(
                        f"the range {low}-{high} runs backwards",
                        f"write {high}-{low}",
                        at=self.at - 1,
                    )
            points.append((ord(low), ord(high)))
        return CharSet(_merge(points), negated)


class _Reader(_Characters):
    """The rules of a GBNF grammar, one a line, and their bodies: choices, sequences,
    groups, names and repeats (``_Characters`` reads the characters)."""

    # --- rules ---------------------------------------------------------------------------

    def grammar(self) -> Grammar:
        rules: dict[str, Rule] = {}
        self.space(True)
        while self.at < len(self.text):
            rule = self.rule()
            if rule.name in rules:
                first = rules[rule.name]
                raise GrammarError(
                    f"the rule {rule.name!r} is defined twice (first on line {first.line})",
                    rule.line,
                    rule.column,
                    "join the two bodies with | in one definition",
                )
            rules[rule.name] = rule
            self.space(True)
        if not rules:
            raise GrammarError(
                "the grammar is empty", 1, 1, 'write at least one rule: root ::= "yes" | "no"'
            )
        return Grammar(tuple(rules.values()), START, "gbnf", (), self.text)

    def rule(self) -> Rule:
        start = self.at
        name = self.name()
        if not name:
            raise self.error(
                f"expected a rule name, found {self.peek()!r}",
                "a rule starts with its name: name ::= body",
            )
        line, column = line_column(self.text, start)
        self.space(False)
        if self.peek(3) != "::=":
            raise self.error(f"expected ::= after the rule name {name!r}", f"write {name} ::= body")
        self.at += 3
        self.space(True)
        body = self.alternatives(nested=False)
        if self.peek() == "\r":
            self.at += 1
        if self.peek() == "\n":
            self.at += 1
        elif self.at < len(self.text):
            raise self.unexpected()
        return Rule(name, body, line, column, False)

    def name(self) -> str:
        start = self.at
        while self.at < len(self.text) and self.text[self.at] in _NAME_CHARS:
            self.at += 1
        return self.text[start : self.at]

    def unexpected(self) -> GrammarError:
        char = self.peek()
        if char == "<":
            return self.error(
                "token references (<[id]> or <token>) are not supported",
                "write the token's text as a literal instead",
            )
        if char == "'":
            return self.error("GBNF literals use double quotes", "write \"text\", not 'text'")
        if char == ")":
            return self.error("this ) closes no (", "remove it, or add the ( it closes")
        if char in "*+?{":
            return self.error(
                f"{char!r} repeats nothing here", "put it right after the piece it repeats"
            )
        return self.error(
            f"unexpected {char!r}",
            "a rule ends at the end of its line; continue a body on the next line only "
            "inside ( ), or after | or ::=",
        )

    # --- bodies --------------------------------------------------------------------------

    def alternatives(self, nested: bool) -> Node:
        options = [self.sequence(nested)]
        while self.peek() == "|":
            self.at += 1
            self.space(True)
            options.append(self.sequence(nested))
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def sequence(self, nested: bool) -> Node:
        items: list[Node] = []
        while self.at < len(self.text):
            char = self.text[self.at]
            start = self.at
            if char == '"':
                item: Node = self.literal()
            elif char == "[":
                item = self.charset()
            elif char == ".":
                self.at += 1
                item = CharSet(((0, MAX_CODE_POINT),), False)
            elif char in _NAME_CHARS:
                name = self.name()
                line, column = line_column(self.text, start)
                item = RuleRef(name, line, column)
            elif char == "(":
                self.at += 1
                self.depth += 1
                if self.depth > MAX_NESTING:
                    raise self.error(
                        f"groups nest more than {MAX_NESTING} deep here",
                        "move inner groups into rules of their own",
                        at=start,
                    )
                self.space(True)
                item = self.alternatives(nested=True)
                if self.peek() != ")":
                    raise self.error(
                        "this ( is never closed", "add a ) at the end of the group", at=start
                    )
                self.at += 1
                self.depth -= 1
            elif char in "*+?{" and items:
                items[-1] = self.repeat(items[-1])
                self.space(nested)
                continue
            else:
                break
            items.append(item)
            self.space(nested)
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def repeat(self, item: Node) -> Node:
        char = self.text[self.at]
        self.at += 1
        if char == "*":
            return Repeat(item, 0, None)
        if char == "+":
            return Repeat(item, 1, None)
        if char == "?":
            return Repeat(item, 0, 1)
        start = self.at - 1
        low = self.number()
        if low is None:
            raise self.error("expected a number after {", "write {2}, {2,} or {2,5}")
        high: int | None = low
        if self.peek() == ",":
            self.at += 1
            high = self.number()
        if self.peek() != "}":
            raise self.error("expected } to close the repeat", "write {2}, {2,} or {2,5}")
        self.at += 1
        if high is not None and high < low:
            raise self.error(
                f"the repeat {{{low},{high}}} has its bounds the wrong way round",
                f"write {{{high},{low}}}",
                at=start,
            )
        if max(low, high or 0) > MAX_REPEAT:
            raise self.error(
                f"a repeat count above {MAX_REPEAT:,} is too large to check",
                "use * or + for long runs",
                at=start,
            )
        return Repeat(item, low, high)


def _merge(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Sorted, disjoint ranges covering the same code points.

    >>> _merge([(5, 9), (0, 2), (3, 4), (20, 20)])
    ((0, 9), (20, 20))
    """
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)
