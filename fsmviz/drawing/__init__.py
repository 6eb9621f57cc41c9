"""The automata drawn: DOT text, and SVG from graphviz's ``dot``.

* ``compact`` long chains of states folded into one edge, so a big DFA stays readable;
* ``render``  DOT for a DFA (states lit by CSS class), and SVG from it;
* ``lights``  what a drawing lights as a run goes (the current state, the path, a compact
  drawing's folds), and what each state says on hover (a text reaching it, the fewest
  tokens to a match);
* ``export``  a run's files: the trace as JSON and CSV, its DFA as DOT and SVG, a grammar
  run's grammar and rules drawing (the page's downloads; ``write_files`` for anyone);
* ``rules``   a grammar drawn as automata that call each other (``fsmviz.grammar.network``),
  with the parser's place lit.

Used by the page and the command line alike, so it lives below both. May import:
``fsmviz.automaton``, ``fsmviz.tokens``, ``fsmviz.generation``, ``fsmviz.grammar``, the
doctor's ``examples`` and the shared modules; no gradio, plotly or torch.
"""
