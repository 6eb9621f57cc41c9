r"""Lark, in the dialect llguidance reads (vLLM's and SGLang's grammar format), read into
fsmviz's grammar tree.

A Lark grammar has **rules** (lowercase names), read by the parser, and **terminals**
(UPPERCASE names), each one piece of text read by a lexer; ``start`` is where it begins::

    start: expr
    expr: term (("+" | "-") term)*
    term: NUMBER | "(" expr ")"
    NUMBER: /[0-9]+/
    %ignore " "

Pieces: ``"literal"`` (``"abc"i`` ignores case), ``/regex/``, ``"a".."z"``, names,
``( ... )``, ``[ ... ]`` (optional), ``|``, the repeats ``? * +``, ``~ n``, ``~ n..m``
and llguidance's ``{m}``, ``{m,}``, ``{m,n}``. A definition ends at the end of its line,
unless the next line begins with ``|``. Statements: ``%ignore`` (text allowed between any
two terminals of a rule), ``%import common.NAME`` (Lark's common terminals: ``WS``,
``NUMBER``, ``ESCAPED_STRING``...), ``%llguidance {...}`` (options, read and set aside).
Rule prefixes ``?`` ``!`` ``_``, priorities ``.2`` and aliases ``-> name`` change Lark's
parse *tree*, not the language, so they are read and dropped.

Refused with a ``GrammarError`` naming the construct: llguidance's embedded grammars
(``%json``, ``%regex``, ``@name``), special tokens (``<|im_end|>``, ``<[12]>``), rule
attributes (``name[lazy]:``), terminal algebra (``&``, ``~`` as negation), templates, and
``%declare``/``%override``.

>>> g = parse_lark('start: "a" B?\nB: /[0-9]+/')
>>> g.rule("start").body, g.rule("B").terminal
(Seq(items=(Literal(text='a'), Repeat(item=RuleRef(name='B'), min=0, max=1))), True)
"""

from __future__ import annotations

import re

from fsmviz.grammar.errors import GrammarError, line_column
from fsmviz.grammar.limits import MAX_NESTING
from fsmviz.grammar.tree import (
    Alt,
    CharSet,
    Grammar,
    Literal,
    Node,
    RegexTerm,
    Repeat,
    Rule,
    RuleRef,
    Seq,
)

__all__ = ["COMMON", "START", "parse_lark"]

START = "start"
MAX_REPEAT = 1_000

COMMON = {
    "DIGIT": r"[0-9]",
    "HEXDIGIT": r"[a-fA-F0-9]",
    "INT": r"[0-9]+",
    "SIGNED_INT": r"[+-]?[0-9]+",
    "DECIMAL": r"[0-9]+\.[0-9]*|\.[0-9]+",
    "FLOAT": r"([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+",
    "NUMBER": r"([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[0-9]+([eE][+-]?[0-9]+)?",
    "SIGNED_NUMBER": r"[+-]?(([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[0-9]+([eE][+-]?[0-9]+)?)",
    "ESCAPED_STRING": r'"([^"\\\n]|\\.)*"',
    "LCASE_LETTER": r"[a-z]",
    "UCASE_LETTER": r"[A-Z]",
    "LETTER": r"[a-zA-Z]",
    "WORD": r"[a-zA-Z]+",
    "CNAME": r"[_a-zA-Z][_a-zA-Z0-9]*",
    "WS_INLINE": r"[ \t]+",
    "WS": r"[ \t\f\r\n]+",
    "CR": r"\r",
    "LF": r"\n",
    "NEWLINE": r"(\r?\n)+",
}
"""Lark's ``common.lark`` terminals that ``%import common.NAME`` brings in (as regexes)."""

_TOKEN = re.compile(
    r"""
    (?P<blank>[ \t\f]+|\\\r?\n)
  | (?P<comment>//[^\n]*|\#[^\n]*)
  | (?P<newline>\r?\n)
  | (?P<string>"(?:[^"\\\n]|\\.)*"i?)
  | (?P<regex>/(?![/*])(?:[^/\\\n]|\\.)+/[imslux]*)
  | (?P<special><[^<>\s]*>)
  | (?P<directive>%[a-z_]+)
  | (?P<name>[?!]?[_a-zA-Z][_a-zA-Z0-9]*(?:\.[_a-zA-Z][_a-zA-Z0-9]*)*)
  | (?P<number>[0-9]+)
  | (?P<op>\.\.|->|[:|()\[\]?*+~{},.&@=-])
    """,
    re.VERBOSE,
)


def parse_lark(text: str) -> Grammar:
    """Read Lark ``text`` into a ``Grammar`` whose start rule is ``start``; raise
    ``GrammarError`` (with line and column) at the first thing fsmviz does not read."""
    return _Reader(text).grammar()


class _Token:
    __slots__ = ("kind", "text", "at")

    def __init__(self, kind: str, text: str, at: int):
        self.kind, self.text, self.at = kind, text, at


class _Tokens:
    """The lexer's tokens of a Lark text and a cursor over them: what every part of the
    reader steps through, and where its errors point."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = self.lex(text)
        self.i = 0

    # --- lexing --------------------------------------------------------------------------

    def lex(self, text: str) -> list[_Token]:
        tokens, at = [], 0
        while at < len(text):
            match = _TOKEN.match(text, at)
            if match is None:
                raise self.error(f"unexpected {text[at]!r}", None, at)
            kind = match.lastgroup or ""
            if kind not in ("blank", "comment"):
                tokens.append(_Token(kind, match.group(), at))
            at = match.end()
        tokens.append(_Token("newline", "", len(text)))
        tokens.append(_Token("end", "", len(text)))
        return tokens

    def error(self, message: str, hint: str | None, at: int | None = None) -> GrammarError:
        line, column = line_column(self.text, self.peek().at if at is None else at)
        return GrammarError(message, line, column, hint)

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.peek()
        self.i += 1
        return token

    def skip_newlines(self) -> None:
        while self.peek().kind == "newline":
            self.i += 1

    def expect(self, text: str, hint: str) -> _Token:
        token = self.peek()
        if token.text != text:
            found = repr(token.text) if token.text else "the end of the line"
            raise self.error(f"expected {text!r}, found {found}", hint)
        return self.take()


class _Bodies(_Tokens):
    """A definition's body: choices, sequences, atoms (strings, ranges, regexes, names,
    groups) and their repeats, read into the tree's nodes."""

    def __init__(self, text: str):
        super().__init__(text)
        self.depth = 0  # groups open around the reader (``MAX_NESTING``)

    # --- bodies --------------------------------------------------------------------------

    def alternatives(self, terminal: bool, nested: bool = False) -> Node:
        options = [self.sequence(terminal, nested)]
        while True:
            if self.peek().text == "|":
                self.take()
            elif self.peek().kind == "newline" and self._bar_follows():
                self.skip_newlines()
                self.take()
            else:
                break
            if nested:
                self.skip_newlines()
            options.append(self.sequence(terminal, nested))
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def _bar_follows(self) -> bool:
        ahead = 0
        while self.peek(ahead).kind == "newline" and self.peek(ahead).text:
            ahead += 1
        return self.peek(ahead).text == "|"

    def sequence(self, terminal: bool, nested: bool) -> Node:
        items: list[Node] = []
        while True:
            if nested:
                self.skip_newlines()
            token = self.peek()
            if token.text == "->":
                self.take()
                self.take()  # an alias names Lark's tree node; the language is the same
                continue
            atom = self.atom(terminal)
            if atom is None:
                break
            items.append(self.postfix(atom))
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def atom(self, terminal: bool) -> Node | None:
        """One atom of a sequence: a string or a range, a /regex/, a rule's name, a group
        ``( )`` or an optional ``[ ]``; ``None`` where the sequence ends, and a clear refusal
        for Lark's and llguidance's constructs this reader does not take."""
        token = self.peek()
        kind, text = token.kind, token.text
        if kind == "string":
            return self.string(self.take())
        if kind == "regex":
            return self.regex(self.take())
        if kind == "name" and not text.startswith(("?", "!")):
            return self.reference(token)
        if text in ("(", "["):
            return self.group(self.take(), terminal)
        self.refuse_unsupported(token)
        return None

    def string(self, token: _Token) -> Node:
        """A ``"literal"`` (``"abc"i`` ignores case), or a range ``"a".."z"`` of single
        characters, lowest first."""
        text = token.text
        literal = _string(text.rstrip("i") if text.endswith("i") else text, self, token)
        if self.peek().text == "..":
            self.take()
            end = self.take()
            if end.kind != "string":
                raise self.error('a range is written "a".."z"', None, end.at)
            last = _string(end.text, self, end)
            if len(literal) != 1 or len(last) != 1 or ord(last) < ord(literal):
                raise self.error(
                    'a range joins two single characters, lowest first: "a".."z"',
                    None,
                    token.at,
                )
            return CharSet(((ord(literal), ord(last)),), False)
        if text.endswith("i") and any(c.isalpha() for c in literal):
            return RegexTerm(re.escape(literal), "i")
        return Literal(literal)

    def regex(self, token: _Token) -> Node:
        """A ``/regex/`` with at most the flag ``i``; ``\\/`` inside is a slash."""
        text = token.text
        end = text.rfind("/")
        flags = text[end + 1 :]
        if set(flags) - {"i"}:
            raise self.error(
                f"the regex flags {flags!r} are not supported (only i)",
                "write the regex without them",
                token.at,
            )
        return RegexTerm(text[1:end].replace("\\/", "/"), flags)

    def reference(self, token: _Token) -> Node:
        """A rule's or terminal's name, with its line and column for the messages; dotted
        names (imports) and templates ``name{…}`` are refused."""
        text = token.text
        if "." in text:
            raise self.error(f"{text!r}: dotted names are not supported", None, token.at)
        self.take()
        line, column = line_column(self.text, token.at)
        if self.peek().text == "{":
            raise self.error("templates are not supported", "write the rule out", token.at)
        return RuleRef(text, line, column)

    def group(self, token: _Token, terminal: bool) -> Node:
        """``( alternatives )``, or ``[ alternatives ]``: the same, optional."""
        text = token.text
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(
                f"groups nest more than {MAX_NESTING} deep here",
                "move inner groups into rules of their own",
                token.at,
            )
        body = self.alternatives(terminal, nested=True)
        self.skip_newlines()
        close = ")" if text == "(" else "]"
        if self.peek().text != close:
            raise self.error(f"this {text} is never closed", f"add a {close} at the end", token.at)
        self.take()
        self.depth -= 1
        return body if text == "(" else Repeat(body, 0, 1)

    def refuse_unsupported(self, token: _Token) -> None:
        """Refuse a construct of Lark's or llguidance's that this reader does not take:
        special tokens, the terminal operators ``&`` and ``~``, other grammars (``@name``).
        Anything else ends the sequence (the caller reads it)."""
        kind, text = token.kind, token.text
        if kind == "special":
            raise self.error(
                f"special tokens ({text}) are not supported",
                "a grammar here is about text; write the text as a literal",
                token.at,
            )
        if text in ("&", "~") and kind == "op":
            raise self.error(
                f"llguidance's terminal operator {text!r} is not supported",
                "write the terminal as one /regex/",
                token.at,
            )
        if text == "@":
            raise self.error(
                "references to other grammars (@name) are not supported",
                "write the grammar's rules here",
                token.at,
            )

    def postfix(self, atom: Node) -> Node:
        while True:
            token = self.peek()
            if token.text in ("?", "*", "+"):
                self.take()
                atom = {"?": Repeat(atom, 0, 1), "*": Repeat(atom, 0, None)}.get(
                    token.text, Repeat(atom, 1, None)
                )
            elif token.text == "~":
                self.take()
                low = self.count()
                high: int | None = low
                if self.peek().text == "..":
                    self.take()
                    high = self.count()
                atom = self.bounded(atom, low, high, token)
            elif token.text == "{":
                self.take()
                low = self.count()
                high = low
                if self.peek().text == ",":
                    self.take()
                    high = self.count() if self.peek().kind == "number" else None
                self.expect("}", "write {2}, {2,} or {2,5}")
                atom = self.bounded(atom, low, high, token)
            elif token.text == "&":
                raise self.error(
                    "llguidance's terminal operator '&' is not supported",
                    "write the terminal as one /regex/",
                    token.at,
                )
            else:
                return atom

    def count(self) -> int:
        token = self.take()
        if token.kind != "number":
            raise self.error("expected a number", "write ~ 3, ~ 2..5 or {2,5}", token.at)
        return int(token.text)

    def bounded(self, atom: Node, low: int, high: int | None, token: _Token) -> Node:
        if high is not None and high < low:
            raise self.error(
                f"the repeat {low}..{high} has its bounds the wrong way round", None, token.at
            )
        if max(low, high or 0) > MAX_REPEAT:
            raise self.error(
                f"a repeat count above {MAX_REPEAT:,} is too large to check",
                "use * or + for long runs",
                token.at,
            )
        return Repeat(atom, low, high)


class _Reader(_Bodies):
    """The statements of a Lark grammar: definitions of rules and terminals, ``%ignore``,
    ``%import common.NAME`` and ``%llguidance`` (set aside); their bodies are ``_Bodies``'."""

    def __init__(self, text: str):
        super().__init__(text)
        self.rules: dict[str, Rule] = {}
        self.ignore: list[Node] = []

    # --- statements ----------------------------------------------------------------------

    def grammar(self) -> Grammar:
        self.skip_newlines()
        while self.peek().kind != "end":
            token = self.peek()
            if token.kind == "directive":
                self.directive()
            elif token.kind == "name":
                self.definition()
            else:
                raise self.error(
                    f"expected a rule, a terminal or a %statement, found {token.text!r}",
                    "a definition starts with its name: expr: term | NUMBER",
                )
            self.skip_newlines()
        if not self.rules:
            raise GrammarError("the grammar is empty", 1, 1, 'write at least: start: "yes"')
        return Grammar(tuple(self.rules.values()), START, "lark", tuple(self.ignore), self.text)

    def directive(self) -> None:
        token = self.take()
        word = token.text
        if word == "%ignore":
            self.ignore.append(self.alternatives(terminal=True))
            self.end_of_line()
        elif word == "%import":
            self.imports(token)
        elif word == "%llguidance":
            self.skip_braces(token)
        else:
            hints = {
                "%json": "fsmviz reads the grammar's own rules only; write the JSON as rules",
                "%regex": "write the regex as a terminal: NAME: /.../",
                "%lark": "write the nested grammar's rules into this grammar",
            }
            raise self.error(
                f"the statement {word} is not supported",
                hints.get(word, "use rules, terminals, %ignore and %import common.NAME"),
                token.at,
            )

    def imports(self, token: _Token) -> None:
        path = self.take()
        names: list[tuple[str, str]] = []
        if path.kind == "name" and path.text.startswith("common.") and path.text.count(".") == 1:
            name = path.text.split(".", 1)[1]
            alias = name
            if self.peek().text == "->":
                self.take()
                alias = self.take().text
            names.append((name, alias))
        elif path.kind == "name" and path.text == "common" and self.peek().text == "(":
            self.take()
            while self.peek().text != ")":
                item = self.take()
                if item.kind != "name":
                    raise self.error("expected a terminal name", None, item.at)
                names.append((item.text, item.text))
                if self.peek().text == ",":
                    self.take()
            self.take()
        else:
            raise self.error(
                "only %import common.NAME is supported",
                "define the rule here instead of importing it",
                token.at,
            )
        for name, alias in names:
            if name not in COMMON:
                raise self.error(
                    f"common.{name} is not one of the common terminals fsmviz knows",
                    "known: " + ", ".join(sorted(COMMON)),
                    token.at,
                )
            line, column = line_column(self.text, token.at)
            self.add(Rule(alias, RegexTerm(COMMON[name]), line, column, True))
        self.end_of_line()

    def skip_braces(self, token: _Token) -> None:
        depth = 0
        while True:
            item = self.take()
            if item.kind == "end":
                raise self.error("this { is never closed", "close it with }", token.at)
            if item.text == "{":
                depth += 1
            elif item.text == "}":
                depth -= 1
                if depth == 0:
                    return

    def end_of_line(self) -> None:
        token = self.peek()
        if token.kind not in ("newline", "end"):
            raise self.error(
                f"unexpected {token.text!r} after the end of the definition",
                "one definition a line; continue the next line with |",
            )

    def add(self, rule: Rule) -> None:
        if rule.name in self.rules:
            first = self.rules[rule.name]
            raise GrammarError(
                f"{rule.name!r} is defined twice (first on line {first.line})",
                rule.line,
                rule.column,
                "join the two bodies with | in one definition",
            )
        self.rules[rule.name] = rule

    def definition(self) -> None:
        token = self.take()
        name = token.text.lstrip("?!")
        if "." in name:
            raise self.error(f"{name!r} is not a name a definition may have", None, token.at)
        terminal = name.lstrip("_")[:1].isupper()
        if self.peek().text == "{":
            raise self.error(
                f"templates ({name}{{...}}) are not supported", "write the rule out", token.at
            )
        if self.peek().text == "[":
            raise self.error(
                f"rule attributes ({name}[...]) are not supported",
                "remove the [...] after the name (lazy, max_tokens, stop, capture)",
                token.at,
            )
        if self.peek().text == "." and self.peek(1).kind == "number":
            self.take()
            self.take()  # a priority changes Lark's tree, not the language
        self.expect(":", f"a definition is {name}: body")
        body = self.alternatives(terminal=terminal)
        self.end_of_line()
        line, column = line_column(self.text, token.at)
        self.add(Rule(name, body, line, column, terminal))


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "f": "\f", "v": "\v"}
_ESCAPES |= {"0": "\0", "'": "'", "/": "/", "b": "\b", "a": "\a"}


def _string(text: str, reader: _Tokens, token: _Token) -> str:
    r"""The text of a Lark string token (quotes removed, escapes decoded).

    >>> _string(r'"a\n\u00e9\x41"', None, None)
    'a\néA'
    """
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        kind = body[i + 1 : i + 2]
        size = {"x": 2, "u": 4, "U": 8}.get(kind)
        if size is not None:
            digits = body[i + 2 : i + 2 + size]
            try:
                out.append(chr(int(digits, 16)) if len(digits) == size else "")
            except ValueError:
                digits = ""
            if len(digits) != size:
                raise reader.error(f"\\{kind} needs {size} hex digits", None, token.at)
            i += 2 + size
        elif kind in _ESCAPES:
            out.append(_ESCAPES[kind])
            i += 2
        else:
            out.append("\\" + kind)  # Lark keeps an unknown escape as written
            i += 2
    return "".join(out)
