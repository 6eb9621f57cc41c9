"""The web page around the engine: its layout, its events and the runs it streams.
(The automata are drawn one layer down, in ``fsmviz.drawing``.)

Read in this order:

* ``server`` starts the page (``python app.py``, ``python -m fsmviz serve``); ``ui`` lays it
  out and wires its events, nothing else; ``page`` what every tab's run shares (the
  outputs, a run followed while it is the page's, Stop); ``handlers`` what each event of
  the Generate tab does, one short function per event, the page's inputs read once
  (``RunInputs``).
* ``live`` the frames of a generation as it streams, ``regex_run`` a regex run's frames
  start to end (the run, the doctor's checks of its fixes, the shadow run); the page's
  model choice in ``backend`` (the bundled model, another local one the operator offers:
  ``local_models``, or a configured server); ``stopping`` and ``leaving`` a run ended
  by Stop or by its client going away; ``sessions`` and ``scratch`` what a visitor costs
  (a small session, temporary downloads removed).
* The tabs: the regex run with ``examples`` (the seed examples) and ``fix_checks`` (each
  run fix re-run before it is offered; a fix applied and run is ``fsmviz.html.fixes``),
  ``decoding_controls`` (top-k, top-p, the stop rule, overshoot);
  ``schema_page`` and ``schema_run`` (a JSON Schema instead of a regex; its structure drawn
  by ``fsmviz.html.schema_structure``); ``grammar_live`` and ``grammar_page`` (a
  context-free grammar: a run's frames, the tab; its views, and each step's place and
  terminal sent for the browser to step through, in ``fsmviz.html.grammar`` and
  ``fsmviz.html.grammar_steps``);
  ``compare_page``, ``learn`` and ``audit_page``.
* The API: ``api/``, every endpoint in one place (``/trace``, ``/dfa``, ``/diagnose``,
  ``/schema``, ``/schema_engines``, ``/grammar``; every failure a message), each wrapping
  an engine function that answers with plain data.
* GPUs: ``zerogpu`` (Hugging Face ZeroGPU) and ``fork_gpu`` (its fork played locally).

What a pure view writes (records in, HTML or a chart out) lives one layer down, in
``fsmviz.html``; this package lays it out and wires it to events.

The engine (``fsmviz``) never imports this package; this package imports the engine.
"""
