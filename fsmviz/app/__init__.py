"""The web page around the engine: everything that writes HTML or needs gradio, plotly or
graphviz's ``dot``.

``render`` draws a DFA with graphviz; ``views`` turns the engine's records into escaped
HTML; ``charts`` draws the valid-mass chart with plotly; ``live`` turns a running
generation into page frames; ``ui`` lays out the Gradio page and wires its events;
``examples`` holds the seed examples the page offers.

The engine (``fsmviz``) never imports this package; this package imports the engine.
"""
