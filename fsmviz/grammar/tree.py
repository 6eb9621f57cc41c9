"""A grammar's own parse tree: what GBNF and Lark both read into.

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

Every record is a frozen dataclass (``fsmviz.grammar.nodes``, re-exported here), so a
grammar can be a cache key and a test can build the tree it expects:

>>> from fsmviz.grammar.gbnf import parse_gbnf
>>> grammar = parse_gbnf('root ::= "a" [0-9]*')
>>> grammar.rule("root").body
Seq(items=(Literal(text='a'), Repeat(item=CharSet(ranges=((48, 57),), negated=False), min=0, \
max=None)))
"""

from __future__ import annotations

from dataclasses import dataclass

from fsmviz.grammar.earley import recognizer
from fsmviz.grammar.nodes import (
    MAX_CODE_POINT,
    Alt,
    CharSet,
    GrammarTree,
    Literal,
    Node,
    RegexTerm,
    Repeat,
    Rule,
    RuleRef,
    Seq,
    children,
    refs,
)

__all__ = [
    "MAX_CODE_POINT",
    "Alt",
    "CharSet",
    "Grammar",
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


@dataclass(frozen=True)
class Grammar(GrammarTree):
    """A whole grammar: its ``rules`` in the order written, the ``start`` rule's name, the
    ``format`` it was written in, and (Lark) the ``ignore`` pieces that may come between
    any two terminals of a rule. ``text`` is the source as given.

    ``accepts`` and ``is_prefix`` answer the naive questions with fsmviz's own Earley
    recognizer (``fsmviz.grammar.earley``): no engine, no tokens, just characters.

    >>> from fsmviz.grammar.compile import compile_grammar
    >>> g = compile_grammar('root ::= "(" root ")" | ""')
    >>> g.accepts("(())"), g.accepts("(()"), g.is_prefix("(()")
    (True, False, True)
    """

    def accepts(self, text: str) -> bool:
        """Whether ``text`` is a whole sentence of the grammar."""
        return recognizer(self).accepts(text)

    def is_prefix(self, text: str) -> bool:
        """Whether some sentence of the grammar begins with ``text``."""
        return recognizer(self).is_prefix(text)

    def generation_run(self, model, options):
        """The step loop of ``fsmviz.stream`` for this grammar (``fsmviz.grammar.run``);
        ``stream(model, grammar, prompt)`` calls it."""
        from fsmviz.grammar.run import GrammarRun  # torch and transformers: on first use

        return GrammarRun(model, self, options)

    def shortest_completion(self, text: str, limit: int | None = None) -> str | None:
        """The shortest text that makes ``text`` a whole sentence (``""`` when it is one),
        or None when no sentence begins with ``text``; cut at ``limit`` characters
        (default: ``fsmviz.grammar.earley.MAX_COMPLETION_CHARS``)."""
        return recognizer(self).shortest_completion(text, limit)
