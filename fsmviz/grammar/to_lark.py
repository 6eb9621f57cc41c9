r"""A GBNF grammar written out as llguidance's Lark, one character a lexeme.

llguidance reads GBNF itself, but two things make fsmviz write the Lark instead:

* its converter spells ``\U0010FFFF`` as ``\U10FFFF``, which its own regex parser then
  refuses ("invalid hexadecimal digit"), so grammars with the full code-point range fail;
* it turns every rule made only of characters into a *terminal*, which llguidance's lexer
  reads greedily: ``root ::= ("a" | "ab") "bc"`` then refuses ``abc``, a sentence of the
  grammar. GBNF means characters, read one by one (llama.cpp reads it that way).

So each literal becomes its characters, each class one ``/[...]/`` of one character, and
every rule a Lark *rule* (lowercase): nothing for a lexer to split two ways, and the
language llguidance masks for is the grammar's own, the one fsmviz's Earley recognizer
decides. Code points are written ``\x{...}`` (Rust's regex syntax); the surrogates
U+D800–DFFF, which no text holds (and Rust's regex refuses), are left out of classes.

>>> from fsmviz.grammar.compile import compile_grammar
>>> print(to_lark(compile_grammar('root ::= "ab" [^"\\\\] x*\nx ::= "-"')))
start: g_root
g_root: "a" "b" /[^\x{22}\x{5c}]/ (g_x)*
g_x: "-"
"""

from __future__ import annotations

import json
import re

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

__all__ = ["to_lark"]

_SURROGATES = (0xD800, 0xDFFF)


def to_lark(grammar: Grammar) -> str:
    """The Lark text llguidance reads for ``grammar`` (GBNF; a Lark grammar is given to
    llguidance as written)."""
    names = _names(grammar)
    lines = [f"start: {names[grammar.start]}"]
    for rule in grammar.rules:
        lines.append(f"{names[rule.name]}: {_write(rule.body, names, top=True)}")
    return "\n".join(lines)


def _names(grammar: Grammar) -> dict[str, str]:
    out: dict[str, str] = {}
    used: set[str] = set()
    for rule in grammar.rules:
        base = "g_" + re.sub(r"[^a-z0-9_]", "_", rule.name.lower())
        name, n = base, 1
        while name in used:
            n += 1
            name = f"{base}_{n}"
        used.add(name)
        out[rule.name] = name
    return out


def _write(node: Node, names: dict[str, str], top: bool = False) -> str:
    if isinstance(node, Literal):
        if not node.text:
            return '""'
        return " ".join(json.dumps(c) for c in node.text)
    if isinstance(node, CharSet):
        return _charset(node)
    if isinstance(node, RegexTerm):
        return "/" + node.pattern.replace("/", "\\/") + "/" + node.flags
    if isinstance(node, RuleRef):
        return names[node.name]
    if isinstance(node, Seq):
        if not node.items:
            return '""'
        return " ".join(_group(item, names) for item in node.items)
    if isinstance(node, Alt):
        body = " | ".join(_write(option, names) for option in node.options)
        return body if top else f"({body})"
    if isinstance(node, Repeat):
        inner = f"({_write(node.item, names, top=True)})"
        if (node.min, node.max) == (0, None):
            return inner + "*"
        if (node.min, node.max) == (1, None):
            return inner + "+"
        if (node.min, node.max) == (0, 1):
            return inner + "?"
        if node.max is None:
            return f"{inner}{{{node.min},}}"
        return f"{inner}{{{node.min},{node.max}}}"
    raise TypeError(node)


def _group(node: Node, names: dict[str, str]) -> str:
    text = _write(node, names)
    return f"({text})" if isinstance(node, Seq) and len(node.items) > 1 else text


def _charset(node: CharSet) -> str:
    """One character of the set, as a Rust regex class.

    >>> _charset(CharSet(((0, 0x10FFFF),), False))
    '/[\\\\x{0}-\\\\x{d7ff}\\\\x{e000}-\\\\x{10ffff}]/'
    """
    ranges = tuple(_without_surrogates(node.ranges))
    if not ranges:
        return "/[\\x{0}-\\x{10ffff}]/" if node.negated else "/[^\\x{0}-\\x{10ffff}]/"
    parts = [f"\\x{{{lo:x}}}" if lo == hi else f"\\x{{{lo:x}}}-\\x{{{hi:x}}}" for lo, hi in ranges]
    return f"/[{'^' if node.negated else ''}{''.join(parts)}]/"


def _without_surrogates(ranges):
    low, high = _SURROGATES
    for lo, hi in ranges:
        if hi < low or lo > high:
            yield lo, hi
            continue
        if lo < low:
            yield lo, low - 1
        if hi > high:
            yield high + 1, hi
