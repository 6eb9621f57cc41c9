"""The automata drawn: DOT text, and SVG from graphviz's ``dot``.

* ``compact`` long chains of states folded into one edge, so a big DFA stays readable;
* ``render``  DOT for a DFA (states lit by CSS class), and SVG from it;
* ``rules``   a grammar drawn as automata that call each other (``fsmviz.grammar.network``),
  with the parser's place lit.

Used by the page and the command line alike, so it lives below both. May import:
``fsmviz.automaton``, ``fsmviz.grammar`` and the shared modules; no gradio, plotly or torch.
"""
