"""Stand-in for the grammar branch's parse tree (replaced by it on merge): the same shape."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Literal:
    text: str


@dataclass(frozen=True)
class CharSet:
    ranges: tuple[tuple[int, int], ...]
    negated: bool = False


@dataclass(frozen=True)
class RegexTerm:
    pattern: str


@dataclass(frozen=True)
class RuleRef:
    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    item: Node
    min: int
    max: int | None


Node = Literal | CharSet | RegexTerm | RuleRef | Seq | Alt | Repeat


@dataclass(frozen=True)
class Rule:
    name: str
    body: Node
    line: int | None = None
    column: int | None = None
    terminal: bool = False


@dataclass(frozen=True)
class Grammar:
    rules: tuple[Rule, ...]
    start: str
