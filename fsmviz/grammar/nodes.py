"""The pieces of a grammar's parse tree: what GBNF and Lark both read into.

A context-free grammar is a set of named **rules**; each rule's body is built from five
kinds of piece, nested freely::

    Literal("true")             the exact text
    CharSet(((48, 57),), False) one character from code-point ranges ([0-9]); negated: [^...]
    RegexTerm("[0-9]+")         a Lark /regex/: any text the regex fully matches
    RuleRef("value")            whatever the rule named ``value`` derives
    Seq((a, b)), Alt((a, b))    a then b; a or b
    Repeat(a, 0, None)          a*  (a+ is min 1, a? is max 1, a{2,5} is 2..5)

Lark tells **terminals** (UPPERCASE: read by a lexer, one token of text each) from **rules**
(lowercase: read by the parser, where ``%ignore`` text may come between terminals); GBNF
has only rules, read character by character. ``Rule.terminal`` keeps that difference.

Every record is a frozen dataclass, so a grammar can be a cache key and a test can build
the tree it expects:

>>> GrammarTree((Rule("root", Seq((Literal("a"), Repeat(CharSet(((48, 57),)), 0, None)))),),
...             "root").rule("root").body.items[0]
Literal(text='a')

This is the floor of ``fsmviz.grammar``: it imports no other module of the folder.
``GrammarTree`` is a whole grammar as records only; ``fsmviz.grammar.tree.Grammar``, the
public grammar, is the same record with its questions (``accepts``, ``is_prefix``, a run).
The modules those questions use (the Earley recognizer, the network, the run) read a
``GrammarTree`` and so never import ``tree`` back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal as Kind
from typing import TypeAlias

__all__ = [
    "MAX_CODE_POINT",
    "Alt",
    "CharSet",
    "GrammarTree",
    "Literal",
    "Node",
    "RegexTerm",
    "Repeat",
    "Rule",
    "RuleRef",
    "Seq",
    "children",
    "refs",
]

MAX_CODE_POINT = 0x10FFFF


@dataclass(frozen=True)
class Literal:
    """The exact text ``text`` (``""`` is the empty text, which GBNF writes as ``""``)."""

    text: str


@dataclass(frozen=True)
class CharSet:
    """One character whose code point lies in one of ``ranges`` (inclusive, sorted,
    disjoint) — or, when ``negated``, in none of them."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool = False

    def __contains__(self, char: str) -> bool:
        code = ord(char)
        inside = any(lo <= code <= hi for lo, hi in self.ranges)
        return inside != self.negated

    def positive(self) -> tuple[tuple[int, int], ...]:
        """The same set as plain ranges (the complement worked out when ``negated``).

        >>> CharSet(((0, 9), (11, MAX_CODE_POINT)), True).positive()
        ((10, 10),)
        """
        if not self.negated:
            return self.ranges
        out, start = [], 0
        for lo, hi in self.ranges:
            if lo > start:
                out.append((start, lo - 1))
            start = max(start, hi + 1)
        if start <= MAX_CODE_POINT:
            out.append((start, MAX_CODE_POINT))
        return tuple(out)


@dataclass(frozen=True)
class RegexTerm:
    """A Lark ``/pattern/``: any text the regex fully matches (compiled with fsmviz's own
    ``compile_regex``). ``flags`` holds Lark's trailing flags (only ``i`` is read)."""

    pattern: str
    flags: str = ""


@dataclass(frozen=True)
class RuleRef:
    """A use of the rule ``name``; ``line``/``column`` say where it was written (1-based)."""

    name: str
    line: int | None = field(default=None, compare=False, repr=False)
    column: int | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Seq:
    """The items one after another (an empty ``Seq`` is the empty text)."""

    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    """Any one of the options."""

    options: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    """``item`` written ``min`` to ``max`` times (``max`` None: without bound)."""

    item: Node
    min: int
    max: int | None


Node: TypeAlias = "Literal | CharSet | RegexTerm | RuleRef | Seq | Alt | Repeat"


@dataclass(frozen=True)
class Rule:
    """``name: body`` as written at ``line``:``column``; ``terminal`` for a Lark terminal
    (an UPPERCASE name: lexed as one piece of text, no ``%ignore`` inside)."""

    name: str
    body: Node
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)
    terminal: bool = False


@dataclass(frozen=True)
class GrammarTree:
    """A whole grammar: its ``rules`` in the order written, the ``start`` rule's name, the
    ``format`` it was written in, and (Lark) the ``ignore`` pieces that may come between
    any two terminals of a rule. ``text`` is the source as given.

    Records only: ``fsmviz.grammar.tree.Grammar`` adds the questions.
    """

    rules: tuple[Rule, ...]
    start: str
    format: Kind["gbnf", "lark"] = "gbnf"
    ignore: tuple[Node, ...] = ()
    text: str = field(default="", compare=False, repr=False)

    def rule(self, name: str) -> Rule:
        """The rule called ``name`` (KeyError when there is none)."""
        for rule in self.rules:
            if rule.name == name:
                return rule
        raise KeyError(name)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(rule.name for rule in self.rules)


def children(node: Node) -> tuple[Node, ...]:
    """The pieces directly inside ``node``."""
    if isinstance(node, Seq):
        return node.items
    if isinstance(node, Alt):
        return node.options
    if isinstance(node, Repeat):
        return (node.item,)
    return ()


def refs(node: Node) -> list[RuleRef]:
    """Every rule used inside ``node``, in the order written.

    >>> [r.name for r in refs(Seq((RuleRef("a"), Alt((RuleRef("b"), Literal("x"))))))]
    ['a', 'b']
    """
    if isinstance(node, RuleRef):
        return [node]
    return [ref for child in children(node) for ref in refs(child)]
