"""Layer 4, grammars in: a context-free grammar (llama.cpp's GBNF or llguidance's Lark)
becomes a checked parse tree, judged by fsmviz's own Earley recognizer and masked over a
vocabulary by llguidance.

* ``tree``     the grammar's parse tree: frozen records (``Literal``, ``CharSet``,
  ``RegexTerm``, ``RuleRef``, ``Seq``, ``Alt``, ``Repeat``, ``Rule``, ``Grammar``)
* ``gbnf``, ``lark``  the two readers; ``errors`` the ``GrammarError`` they raise
* ``compile``  ``compile_grammar``: read, then check (undefined, unfinishable, bounds)
* ``productions``  the grammar flattened for Earley: numbered productions and terminals,
  with what depends on the grammar alone (nullable rules, shortest texts)
* ``earley``   the naive oracle: a character-level Earley recognizer over those productions
  (``accepts``, ``is_prefix``, the shortest completion)
* ``matcher``  llguidance's exact token masks over a vocabulary, per run
* ``network``  each rule's right-hand side as a small automaton, the rules calling each
  other (a recursive transition network: what ``fsmviz.drawing.rules`` draws)
* ``place``    the parser's place after a text: the stacks of positions in that network

May import: ``fsmviz.automaton``, ``fsmviz.tokens``, ``fsmviz.generation`` and the shared
modules (``matcher`` imports llguidance on first use).
"""

from fsmviz.grammar.compile import compile_grammar
from fsmviz.grammar.errors import GrammarError
from fsmviz.grammar.tree import Grammar

__all__ = ["Grammar", "GrammarError", "compile_grammar"]
