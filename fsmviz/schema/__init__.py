"""Layer 4, JSON Schema in: a schema becomes a constraint that keeps its schema names.

* ``convert`` a schema (text or mapping) -> a regex (outlines-core's converter), the
  pieces of that regex located by JSON pointer, and the output checked with ``jsonschema``.

May import: ``fsmviz.automaton``, ``fsmviz.tokens`` and the shared modules.
"""

from fsmviz.schema.convert import SchemaError, compile_schema, regex_from_schema

__all__ = ["SchemaError", "compile_schema", "regex_from_schema"]
