"""Layer 4, JSON Schema in: a schema becomes a constraint that keeps its schema names.

Read bottom-up; each module imports only those listed before it (``tests/test_circles.py``):

* ``document`` the floor: ``SchemaError`` (what is wrong, at which JSON pointer), ``pointer``,
  ``resolve`` (a local ``$ref``), ``children`` and ``walk`` (the subschemas).
* ``ranges`` bounded integers written as regex ranges, and bounds no value can meet
  refused; ``patterns`` a ``pattern`` is a search, written as the whole match
  outlines-core needs; ``mend`` two outlines-core bugs mended in its regex (``{}`` under a
  key, escaped keys).
* ``keywords`` which keywords each path enforces; ``unenforced`` names the rest.
* ``limits`` the size and shape bounds checked before any conversion, and the cost of
  outlines-core's regex estimated before it is built; ``tools`` a list of tools (OpenAI,
  MCP) as one schema: one call of one of them.
* ``guarded`` ``jsonschema`` offline, its patterns in bounded time.
* ``load`` ``load_schema``, the one door: a schema (text, mapping, pydantic class, tool
  list) read, bounded and checked against its metaschema; its references made local.
* ``output`` the output read back: ``json_fields`` as it streams, ``check_json`` finished.
* ``stricter`` the rules by which a path refuses JSON the schema allows (keys in the order
  of ``properties``, its whitespace, ``1`` not ``1.0``...), named.
* ``circular`` a ``$ref`` that leads back into itself, rewritten where llguidance would
  have to intersect it with other keywords.
* ``parsed`` and ``run`` the output as the model's instance; ``.generate`` a run.
* ``by_grammar`` the grammar path: llguidance's JSON Schema compiler (lenient, its gaps
  named) and its matcher over bytes for ``.accepts``.
* ``convert`` ``compile_schema`` and ``regex_from_schema``: the regex path (outlines-core's
  regex, located by JSON pointer, fsmviz's DFA) or the grammar path. The names of the
  floor (``SchemaError``, ``pointer``, ``load_schema``, ``check_json``...) are importable
  from here too.
* ``answer`` a schema run as plain data (``schema_answer``): what the app's ``/schema``
  endpoint answers.
* ``differential`` why a valid instance is refused: the named rule, or None (a bug);
  ``structure`` a schema's shape as a small Lark grammar, drawn on the Schema tab.

May import: ``fsmviz.automaton``, ``fsmviz.tokens``, ``fsmviz.generation`` and the shared
modules (``by_grammar`` runs a compiled schema through ``fsmviz.grammar.run``, on first use;
``answer`` loads the bundled model, with torch, only when no model is given).
"""

from fsmviz.schema.by_grammar import SchemaGrammar
from fsmviz.schema.convert import SchemaError, SchemaRegex, compile_schema, regex_from_schema

__all__ = ["SchemaError", "SchemaGrammar", "SchemaRegex", "compile_schema", "regex_from_schema"]
