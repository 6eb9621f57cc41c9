"""Layer 3, a real model under the mask, one recorded step at a time.

* ``bundled``  where the bundled offline model (SmolLM2-135M-Instruct) lives;
* ``models``   loading it, or any Hugging Face model, with its vocabulary;
* ``batching`` one thread runs the forward passes of every concurrent generation, batched;
* ``trace``    what a run records: its options, one ``Step`` per token, the ``Trace``;
* ``generate`` the masked, recorded step loop (safe end, fast-forward, drafts);
* ``processor`` the same mask as a transformers ``LogitsProcessor``.

May import: ``fsmviz.tokens``, ``fsmviz.automaton`` and the shared modules; torch and
transformers load here (``trace`` alone loads neither).
"""
