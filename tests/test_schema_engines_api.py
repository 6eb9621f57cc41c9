"""``/schema_engines`` (and the MCP tool of that name): which engine gets the schema right,
answered without a model; the API family builders of ``fsmviz.app.api`` keep every
endpoint's name."""

from __future__ import annotations

import json

import gradio as gr
import pytest

from fsmviz.app.api import GENERATING, schema_engines, tools
from fsmviz.app.api.answers import answered

ORDER = {
    "type": "object",
    "properties": {"qty": {"type": "integer", "minimum": 1}, "note": {"type": "string"}},
    "required": ["qty"],
    "additionalProperties": False,
}


def file_like(value: object) -> bool:
    """Whether any dict in an answer is one gradio_client would download as a file: with
    Gradio 6's protocol it takes every dict whose ``path`` is a string for one
    (``gradio_client.utils.is_file_obj``), so an answer's ``path`` key broke the call."""
    from gradio_client.utils import is_file_obj

    if is_file_obj(value):
        return True
    children = value.values() if isinstance(value, dict) else value
    return isinstance(value, dict | list) and any(file_like(v) for v in children)


class NoModel:
    def get(self, timeout=None):
        raise AssertionError("the engines table needs no model")

    def vocabulary(self):
        return None


def test_the_families_give_every_endpoint_once():
    names = set(tools(NoModel()))
    assert names == {"trace", "dfa", "diagnose", "schema", "schema_engines", "grammar"}
    assert set(GENERATING) <= names


def test_the_engines_table_names_each_engine_and_the_instances_that_split_them():
    result = answered(schema_engines)(json.dumps(ORDER))
    engines = {v["engine"]: v for v in result["engines"]}
    assert "fsmviz" in engines and engines["fsmviz"]["compiled"]
    assert engines["fsmviz"]["route"] == "regex" and not engines["fsmviz"]["invalid_accepted"]
    assert any(not i["valid"] and "minimum" in i["how"] for i in result["instances"])
    assert result["table"].startswith(f"{len(result['instances'])} instances")
    assert "| fsmviz | yes (regex path) |" in result["table"]
    json.dumps(result)  # plain JSON, as an MCP client reads it
    assert not file_like(result)


def test_a_schema_fsmviz_cannot_read_is_a_message():
    with pytest.raises(gr.Error, match="JSON"):
        answered(schema_engines)("{not json")
