r"""A GBNF grammar written out as llguidance's Lark, one character a lexeme: the exact
way in, used where llguidance's own GBNF import refuses a grammar (``matcher.lowering``).

llguidance reads GBNF itself, but its import has two flaws this way avoids:

* its converter spells ``\U0010FFFF`` as ``\U10FFFF``, which its own regex parser then
  refuses ("invalid hexadecimal digit"), so grammars with the full code-point range fail;
* it turns every rule made only of characters into a *terminal*, which llguidance's lexer
  reads greedily: ``root ::= ("a" | "ab") "bc"`` then refuses ``abc``, a sentence of the
  grammar. GBNF means characters, read one by one (llama.cpp reads it that way).

So each literal becomes its characters, each class one ``/[...]/`` of one character, and
every rule a Lark *rule* (lowercase): nothing for a lexer to split two ways, and the
language llguidance masks for is the grammar's own, the one fsmviz's Earley recognizer
decides. The price: llguidance's parser then works at every byte (JSON's mask: ~12 ms a
step instead of ~0.3 ms), which is why it is the fallback, not the first way.

Code points are written ``\x{...}`` (Rust's regex syntax); the surrogates
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

from fsmviz.automaton.dfa import compile_regex
from fsmviz.errors import FsmvizError
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
    children,
)

__all__ = ["to_lark"]


def to_lark(grammar: GrammarTree) -> str:
    """The Lark text llguidance reads for ``grammar`` (GBNF; a Lark grammar is given to
    llguidance as written)."""
    names = _names(grammar)
    lines = [f"start: {names[grammar.start]}"]
    for rule in grammar.rules:
        lines.append(f"{names[rule.name]}: {_write(rule.body, names, top=True)}")
    return "\n".join(lines)


def _names(grammar: GrammarTree) -> dict[str, str]:
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
    lexeme = _lexeme(node)
    if lexeme is not None:
        return lexeme
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
        return " ".join(_runs(node.items, names))
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


def _lexeme(node: Node) -> str | None:
    """``node`` as one ``/regex/`` lexeme, when that cannot change the language: it holds
    characters only (no rule), repeats something (``"\\"" [^"]* "\\""``: where a mask over
    49k tokens is costly one character at a time), and is *prefix-free*: no text it matches
    can be extended into another it matches (its minimal DFA has no move out of an
    accepting state), so a greedy lexer can end it in one place only."""
    if not isinstance(node, (Seq, Alt, Repeat)) or not _has_repeat(node) or _holds_names(node):
        return None
    try:
        dfa = compile_regex(node_regex(node) or "")
    except FsmvizError:
        return None
    if any(dfa.moves[s] for s in dfa.accepting) or dfa.num_states > 200:
        return None
    return "/" + (node_regex(node, rust=True) or "") + "/"


def _runs(items: tuple[Node, ...], names: dict[str, str]) -> list[str]:
    """A sequence's items written out, the longest runs of them that make one lexeme
    (``"\\"" [^"]* "\\""`` inside ``string ::= "\\"" [^"]* "\\"" ws``) joined."""
    out, i = [], 0
    while i < len(items):
        for j in range(len(items), i + 1, -1):
            lexeme = _lexeme(Seq(items[i:j]))
            if lexeme is not None:
                out.append(lexeme)
                i = j
                break
        else:
            out.append(_group(items[i], names))
            i += 1
    return out


def _has_repeat(node: Node) -> bool:
    if isinstance(node, Repeat):
        return True
    return any(_has_repeat(child) for child in children(node))


def _holds_names(node: Node) -> bool:
    """Whether ``node`` names a rule or holds a Lark ``/regex/`` (written as it is, never
    merged into a lexeme)."""
    if isinstance(node, (RuleRef, RegexTerm)):
        return True
    return any(_holds_names(child) for child in children(node))


def _group(node: Node, names: dict[str, str]) -> str:
    text = _write(node, names)
    return f"({text})" if isinstance(node, Seq) and len(node.items) > 1 else text


def _charset(node: CharSet) -> str:
    """One character of the set, as a Rust regex class.

    >>> _charset(CharSet(((0, 0x10FFFF),), False))
    '/[\\\\x{0}-\\\\x{d7ff}\\\\x{e000}-\\\\x{10ffff}]/'
    """
    return f"/{node_regex(node, rust=True)}/"
