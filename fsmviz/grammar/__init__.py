"""Layer 4, grammars in: a context-free grammar (llama.cpp's GBNF or llguidance's Lark)
becomes a checked parse tree, judged by fsmviz's own Earley recognizer and masked over a
vocabulary by llguidance.

Read bottom-up; each module imports only those listed before it (``tests/test_circles.py``):

* ``nodes``    the floor: the tree's frozen records (``Literal``, ``CharSet``, ``RegexTerm``,
  ``RuleRef``, ``Seq``, ``Alt``, ``Repeat``, ``Rule``) and ``GrammarTree``, a whole grammar
  as records; ``errors`` the ``GrammarError`` every reader raises
* ``as_regex`` a rule-free part as one regex: the one translation (Python's syntax for
  fsmviz's DFAs, Rust's for llguidance)
* ``limits``   size, nesting and text bounds, checked before anything walks a grammar
* ``productions``  the grammar flattened for Earley: numbered productions and terminals,
  with what depends on the grammar alone (nullable rules, shortest texts)
* ``earley``   the naive oracle: a character-level Earley recognizer over those productions
  (``accepts``, ``is_prefix``, the shortest completion); ``oracle`` the naive allowed
  tokens it gives over a vocabulary
* ``to_lark`` and ``matcher``  the grammar lowered for llguidance, and its exact token
  masks over a vocabulary, per run
* ``network``  each rule's right-hand side as a small automaton, the rules calling each
  other (a recursive transition network: what ``fsmviz.drawing.rules`` draws); ``place``
  the parser's place after a text: the stacks of positions in that network
* ``run``      a grammar in the step loop: llguidance's mask and the Earley chart together
* ``tree``     ``Grammar``: a ``GrammarTree`` with its questions (``accepts``, ``is_prefix``,
  ``shortest_completion``, a run); the records are re-exported here
* ``replay``   a finished run's llguidance masks replayed along its tokens: every step's
  allowed set afterwards (``StepMasks``), and a stopped run's trace
* ``gbnf``, ``lark``  the two readers; ``compile`` ``compile_grammar``: read, then check
  (undefined, unfinishable, bounds)
* ``answer``   a grammar run as plain data (``grammar_answer``): what the app's ``/grammar``
  endpoint answers

May import: ``fsmviz.automaton``, ``fsmviz.tokens``, ``fsmviz.generation`` and the shared
modules (``matcher`` imports llguidance on first use; ``tree`` the run, with torch, on
first use).
"""

from fsmviz.grammar.compile import compile_grammar
from fsmviz.grammar.errors import GrammarError
from fsmviz.grammar.tree import Grammar

__all__ = ["Grammar", "GrammarError", "compile_grammar"]
