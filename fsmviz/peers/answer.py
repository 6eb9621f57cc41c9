"""Which engine gets a JSON Schema right, as plain data: what the app's ``/schema_engines``
endpoint (and MCP tool) answers.

``engines_answer`` asks each installed engine (``schema.engine_verdicts``) and returns the
instances, each engine's verdict and the same as a Markdown table; a bad schema is a
``ParameterError`` or a ``SchemaError`` naming what is wrong, before any engine runs. The
page wraps it for Gradio (``fsmviz.app.api.schema``).
"""

from __future__ import annotations

from typing import Any

from fsmviz.params import ParameterError
from fsmviz.peers.schema import engine_verdicts, verdicts_text

__all__ = ["engines_answer"]


def engines_answer(schema: str) -> dict[str, Any]:
    """``{"instances", "engines", "table"}`` for ``schema`` (JSON text): the instances made
    from it (text, valid, how), one verdict per installed engine, and the Markdown table.
    No key is ``path``: gradio_client would fetch an object with a ``path`` as a file."""
    if not isinstance(schema, str):
        raise ParameterError("schema", schema, "a JSON Schema written as JSON text")
    table = engine_verdicts(schema)
    return {
        "instances": [{"text": i.text, "valid": i.valid, "how": i.how} for i in table.instances],
        "engines": [
            {
                "engine": v.engine,
                "version": v.version,
                "compiled": v.compiled,
                "refusal": v.refusal,
                "route": v.path,
                "invalid_accepted": list(v.invalid_accepted),
                "valid_rejected": list(v.valid_rejected),
                "ignored": list(v.ignored),
                "stricter": list(v.stricter),
            }
            for v in table.verdicts
        ],
        "table": verdicts_text(table),
    }
