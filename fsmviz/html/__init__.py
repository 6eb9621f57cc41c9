"""The page's HTML and charts, written from the engine's records: pure functions that take
records (a ``Step``, a ``Finding``, a compiled grammar, a toy vocabulary) and return an HTML
string or a chart figure, every piece of user text and model output escaped. No gradio: the
page (``fsmviz.app``) lays them out and wires them to events; tested without a browser.

Read bottom-up:

* ``text``       the shared escapers: ``esc``, ``shown`` (whitespace made visible),
  ``code_spans`` (backticks as ``<code>``), ``error_html`` (any failure, a regex error with
  a caret under its position), ``markdown_html``, ``summarised``, ``change_html``;
* ``decoding``   how the decoding options of a step read (overshoot, what top-k and top-p
  removed), the same words in the steps table, the output and the chart;
* ``tokens``     a run's tokens: the output one span per token, a token's label (bytes in
  hex where it splits a character), each step's whole allowed set;
* ``steps``      a run's step table (states, token, allowed count, valid mass, the model's
  top candidates) and the buttons that step through it;
* ``comparison`` Apply & run's two runs side by side, and why a run stopped in words;
* ``fixes``      a doctor's fix as the page carries it (JSON in an "Apply & run" button, read
  back checked), put into the page's inputs, and what its check says;
* ``findings``   the doctor's findings listed, each with its suggestion and its fix's button;
* ``charts``     the valid-mass chart, the before/after chart and the audit's stall chart
  (plotly figures; plotly is imported on the first chart drawn, never at import time);
* ``compare``    the Compare view's table of decodings side by side and its chart;
* ``engine_check`` a server run's tokens and visible mask against the exact automaton, step
  by step (the ``engine-check`` panel);
* ``grammar``    a grammar compiled and drawn (``GrammarView``), the parser's place in words,
  the terminal being read, the grammar doctor's findings, Learn's regex-to-grammar view;
* ``grammar_steps``  each step of a finished grammar run (its place and terminal), sent
  with the run's last frame for the browser to step through;
* ``schema_structure``  a JSON Schema drawn by its structure (a grammar of its objects and
  fields), lit where the output is;
* ``schema``     a JSON Schema run's output as JSON while it streams, the schema doctor's
  findings with their fix buttons, which engine gets the schema right;
* ``learn``      the Learn tab's lessons: construction frames, a walk, the transition table,
  test strings, a toy vocabulary token by token, bytes, naive matching against the index.

Above the drawing, the doctor and Learn, whose results it shows; beside the audit, below the
page. May import every engine folder below it and the shared modules; no gradio, no torch,
and plotly only inside the functions that draw a chart.
"""
