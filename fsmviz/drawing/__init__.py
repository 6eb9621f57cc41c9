"""The automata drawn: DOT text, and SVG from graphviz's ``dot``.

* ``compact`` long chains of states folded into one edge, so a big DFA stays readable;
* ``render``  DOT for a DFA (states lit by CSS class), and SVG from it.

Used by the page and the command line alike, so it lives below both. May import:
``fsmviz.automaton`` and the shared modules; no gradio, plotly or torch.
"""
