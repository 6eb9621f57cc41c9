"""A grammar's own parse tree: what GBNF and Lark both read into.

The pieces (``Literal``, ``CharSet``, ``RegexTerm``, ``RuleRef``, ``Seq``, ``Alt``,
``Repeat``) and ``Rule`` are frozen records of ``fsmviz.grammar.nodes`` (read it first: it
says what each piece means), re-exported here. ``Grammar`` is a ``GrammarTree`` that can
also judge text (``accepts``, ``is_prefix``, ``shortest_completion``) and start a run:

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
