"""Layer 3, a real model under the mask, one recorded step at a time.

* ``models``   loading the bundled offline model (SmolLM2-135M-Instruct, found by
  ``fsmviz.bundled``), or any Hugging Face model, with its vocabulary;
* ``batching`` one thread runs the forward passes of every concurrent generation, batched;
* ``trace``    what a run records: its options, one ``Step`` per token, the ``Trace``;
* ``constraint`` what the loop and the page ask of any constraint (``fsmviz.Constraint``:
  initial state, allowed set, advance, accepting, shortest completion, the drawing's place),
  a regex's (``RegexConstraint``), and the run's side of it (``Steering``);
* ``generate`` the masked, recorded step loop (safe end, fast-forward, drafts), with
  its pieces beside it: ``fastforward`` (the constant text ahead), ``drafts`` (prompt
  lookup), ``samplers`` (top-k, top-p, the draw), ``records`` (a ``Step`` written down),
  ``masks`` (a step's packed mask and the safe end);
* ``allowed``  every step's whole allowed set after a run, with the model's probabilities:
  one more forward pass over the written tokens, and the softmax;
* ``processor`` the same mask as a transformers ``LogitsProcessor``;
* ``compare``  ways to get text that matches a pattern (the mask, overshoot, the first match,
  extraction, retries) run side by side on one prompt and seed;
* ``server``   a model behind a vLLM server (``fsmviz.connect``): the server writes, the
  same step records come from replaying its tokens through the exact automaton; its
  pieces beside it: ``exchange`` (the two requests to vLLM, and what their answers give),
  ``replay`` (the server's tokens through the automaton, its visible mask checked at each
  step), ``verdict`` (what the replay found, per step and in the run's notes);
* ``llamacpp`` the same for llama.cpp's server (``llama-server``): the constraint in its own
  fields (a regex as GBNF written from fsmviz's DFA), the valid mass from its ``n_probs``;
* ``wire``     the HTTP both speak: a request, a stream of server-sent events, a
  ``ServerError`` that names the server.

May import: ``fsmviz.tokens``, ``fsmviz.automaton`` and the shared modules; torch and
transformers load here (``trace`` alone loads neither).
"""
