"""Layer 4, JSON Schema in: a schema becomes a constraint that keeps its schema names.

* ``limits`` the size and shape bounds checked before any conversion, and the cost of
  outlines-core's regex estimated before it is built.
* ``convert`` a schema (text, mapping, pydantic class, tool list) -> ``compile_schema``: the
  regex path (outlines-core's regex, located by JSON pointer, fsmviz's DFA) or the grammar
  path; the output checked with ``jsonschema``.
* ``patterns`` a ``pattern`` is a search: written as the whole match outlines-core needs.
* ``circular`` a ``$ref`` that leads back into itself, rewritten where llguidance would
  have to intersect it with other keywords.
* ``by_grammar`` the grammar path: llguidance's JSON Schema compiler (lenient, its gaps
  named) and its matcher over bytes for ``.accepts``.
* ``keywords`` which keywords each path enforces; ``unenforced`` names the rest.
* ``stricter`` the other side: the rules by which a path refuses JSON the schema allows
  (keys in the order of ``properties``, its whitespace, ``1`` not ``1.0``...), named.
* ``mend`` two outlines-core bugs mended in its regex (``{}`` under a key, escaped keys).
* ``differential`` why a valid instance is refused: the named rule, or None (a bug).
* ``tools`` a list of tools (OpenAI, MCP) as one schema: one call of one of them.

May import: ``fsmviz.automaton``, ``fsmviz.tokens`` and the shared modules.
"""

from fsmviz.schema.by_grammar import SchemaGrammar
from fsmviz.schema.convert import SchemaError, SchemaRegex, compile_schema, regex_from_schema

__all__ = ["SchemaError", "SchemaGrammar", "SchemaRegex", "compile_schema", "regex_from_schema"]
