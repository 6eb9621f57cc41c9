"""Layer 5, the peers: the same constraint asked of the engines people deploy.

* ``schema`` a JSON Schema in the same engines, checked on instances made from it.
* ``regex`` a pattern in outlines-core (TGI, older vLLM), llguidance (vLLM, SGLang) and
  xgrammar (vLLM, SGLang), where installed, compared with fsmviz on the same vocabulary.
* ``answer`` which engine gets a schema right, as plain data (``engines_answer``): what the
  app's ``/schema_engines`` endpoint answers.

May import: ``fsmviz.tokens``, ``fsmviz.automaton``, ``fsmviz.schema`` and the shared modules.
"""
