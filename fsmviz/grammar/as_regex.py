"""A part of a grammar as one regular expression: the one translation every reader shares.

Three places need a rule-free part of a grammar as a regex: the checks and the Earley
productions compile each Lark ``/regex/`` (``compile``, ``limits``, ``productions``); the
network folds a part that calls no rule into one arc (``network``, drawn and read by
``place``); and the lowering for llguidance joins pieces into one lexeme (``to_lark``, in
Rust's syntax). All of them call ``node_regex``, so a part is written one way and fsmviz's
``compile_regex`` (cached by text) compiles it once:

>>> from fsmviz.grammar.nodes import CharSet, Literal, RegexTerm, Repeat, RuleRef, Seq
>>> digits = Repeat(CharSet(((48, 57),)), 1, 3)
>>> node_regex(digits), node_regex(RuleRef("NUMBER"), {"NUMBER": RegexTerm("[0-9]{1,3}")})
('[0-9]{1,3}', '[0-9]{1,3}')
>>> node_regex(Seq((Literal("a.b"), Repeat(RegexTerm("x|y"), 0, None))))
'a\\\\.b(?:x|y)*'
>>> node_regex(Seq((Literal("-"), digits)), rust=True)
'\\\\x{2d}[\\\\x{30}-\\\\x{39}]{1,3}'
>>> node_regex(RuleRef("value")) is None  # a rule, not a terminal: no regex
True

Groups are written only where they are needed: around an alternation inside a sequence,
and around anything longer than one piece under a repeat.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from fsmviz.grammar.nodes import (
    MAX_CODE_POINT,
    Alt,
    CharSet,
    Literal,
    Node,
    RegexTerm,
    Repeat,
    RuleRef,
    Seq,
)

__all__ = ["node_regex", "repeat_suffix"]

_ATOM, _SEQ, _ALT = range(3)
"""What a written piece is: one atom (takes a quantifier as it is), a sequence or a
quantified piece (fine in a sequence, grouped under a quantifier), an alternation (grouped
in both)."""

_SURROGATES = (0xD800, 0xDFFF)  # no text holds them; Rust's classes refuse them
_SPECIAL = frozenset(".^$*+?{}[]\\|()")
_CLASS_SPECIAL = frozenset("]\\^-[&~")


def _python_char(char: str, special: frozenset[str]) -> str:
    """``char`` as Python's ``regex`` (and fsmviz's ``compile_regex``) reads it: escaped
    when special, by code when invisible."""
    if char in special:
        return "\\" + char
    if char.isprintable():
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else char


def _rust_char(char: str, special: frozenset[str]) -> str:
    """``char`` as llguidance's (Rust) regex reads it: always by code."""
    return f"\\x{{{ord(char):x}}}"


@dataclass(frozen=True)
class _Dialect:
    char: Callable[[str, frozenset[str]], str]
    everything: str  # a class that holds any character
    nothing: str  # a class that holds none


_PYTHON = _Dialect(_python_char, "[\\s\\S]", "[^\\s\\S]")
_RUST = _Dialect(_rust_char, f"[\\x{{0}}-\\x{{{MAX_CODE_POINT:x}}}]",
                 f"[^\\x{{0}}-\\x{{{MAX_CODE_POINT:x}}}]")  # fmt: skip


def node_regex(
    node: Node, terminals: Mapping[str, Node] | None = None, *, rust: bool = False
) -> str | None:
    """One regex for ``node``, or None when it uses a rule that is not among ``terminals``
    (the bodies of the Lark terminals it may name). Python's syntax, or Rust's with
    ``rust`` (every character by code, for llguidance). A Lark ``/regex/`` is its pattern
    (``(?i:...)`` with the ``i`` flag)."""
    written = _written(node, terminals or {}, _RUST if rust else _PYTHON)
    return None if written is None else written[0]


def repeat_suffix(low: int, high: int | None) -> str:
    """A repeat's count as regexes and grammars write it: ``*``, ``+``, ``?``, ``{n}``,
    ``{n,}``, ``{n,m}``.

    >>> [repeat_suffix(*c) for c in ((0, None), (1, None), (0, 1), (2, None), (3, 3), (1, 6))]
    ['*', '+', '?', '{2,}', '{3}', '{1,6}']
    """
    if (low, high) == (0, None):
        return "*"
    if (low, high) == (1, None):
        return "+"
    if (low, high) == (0, 1):
        return "?"
    if high is None:
        return f"{{{low},}}"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def _written(
    node: Node, terminals: Mapping[str, Node], dialect: _Dialect
) -> tuple[str, int] | None:
    """``node`` written in ``dialect``, with what kind of piece it is (``_ATOM``...)."""
    if isinstance(node, Literal):
        text = "".join(dialect.char(c, _SPECIAL) for c in node.text)
        return text, _ATOM if len(node.text) == 1 else _SEQ
    if isinstance(node, CharSet):
        return _charset(node, dialect), _ATOM
    if isinstance(node, RegexTerm):
        if "i" in node.flags:
            return f"(?i:{node.pattern})", _ATOM
        return node.pattern, _ALT  # it may hold a | at its top
    if isinstance(node, RuleRef):
        body = terminals.get(node.name)
        return None if body is None else _written(body, terminals, dialect)
    if isinstance(node, Repeat):
        inner = _written(node.item, terminals, dialect)
        if inner is None:
            return None
        text = inner[0] if inner[1] == _ATOM else f"(?:{inner[0]})"
        return text + repeat_suffix(node.min, node.max), _SEQ
    if isinstance(node, (Seq, Alt)):
        return _joined(node, terminals, dialect)
    raise TypeError(f"not a grammar node: {node!r}")


def _joined(
    node: Seq | Alt, terminals: Mapping[str, Node], dialect: _Dialect
) -> tuple[str, int] | None:
    """A sequence (its alternations grouped) or a choice, written."""
    items = node.items if isinstance(node, Seq) else node.options
    parts = [_written(child, terminals, dialect) for child in items]
    if any(part is None for part in parts):
        return None
    pieces: list[tuple[str, int]] = parts  # type: ignore[assignment]
    if len(pieces) == 1:
        return pieces[0]
    if isinstance(node, Alt):
        return ("|".join(text for text, _ in pieces), _ALT) if pieces else (dialect.nothing, _ATOM)
    return "".join(text if kind != _ALT else f"(?:{text})" for text, kind in pieces), _SEQ


def _charset(node: CharSet, dialect: _Dialect) -> str:
    """One character of the set, surrogates left out (no text holds one)."""
    parts = []
    for low, high in _without_surrogates(node.ranges):
        a = dialect.char(chr(low), _CLASS_SPECIAL)
        parts.append(a if low == high else f"{a}-{dialect.char(chr(high), _CLASS_SPECIAL)}")
    if not parts:
        return dialect.everything if node.negated else dialect.nothing
    return "[" + ("^" if node.negated else "") + "".join(parts) + "]"


def _without_surrogates(ranges: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    low, high = _SURROGATES
    out = []
    for lo, hi in ranges:
        if hi < low or lo > high:
            out.append((lo, hi))
            continue
        if lo < low:
            out.append((lo, low - 1))
        if hi > high:
            out.append((high + 1, hi))
    return out
