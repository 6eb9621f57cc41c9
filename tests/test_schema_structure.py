"""A schema drawn by its structure (``fsmviz.schema.structure``): one small automaton per
object, its fields, array and alternative; a superset of the schema, so every valid
instance of the sample is read by it (the lighting never loses the output)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsmviz.app.schema_page import schema_examples
from fsmviz.grammar import compile_grammar
from fsmviz.grammar.network import build_network
from fsmviz.html.schema_structure import structure_html, structure_view
from fsmviz.peers.schema import instances
from fsmviz.schema.convert import SchemaError
from fsmviz.schema.structure import MAX_RULES, structure_lark

SAMPLE = Path(__file__).resolve().parents[1] / "bench" / "schemas"
TREE = {
    "type": "object",
    "properties": {
        "label": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#"}},
    },
}


def machines(schema):
    network = build_network(compile_grammar(structure_lark(schema), "lark"))
    return {
        m.rule: [(a.source, a.symbol.label, a.target) for a in m.arcs] for m in network.machines
    }


def test_the_person_is_an_object_and_its_fields_strings_and_numbers_one_edge_each():
    drawn = machines(schema_examples()["person"].schema)
    assert list(drawn) == ["start", "start_field"]
    assert sum(len(arcs) for arcs in drawn.values()) <= 12  # the DFA has 186 states
    labels = {label for _, label, _ in drawn["start_field"]}
    assert {"STRING", "INTEGER"} <= labels and "'\"name\":'" in labels


def test_a_recursive_tree_is_a_rule_calling_itself_through_its_children():
    drawn = machines(TREE)
    assert "children" in {label for _, label, _ in drawn["start_field"]}
    assert "start" in {label for _, label, _ in drawn["children"]}


def test_definitions_and_alternatives_are_rules_named_for_them():
    schema = {
        "$defs": {
            "cat": {"type": "object", "properties": {"meow": {"type": "boolean"}}},
            "dog": {"type": "object", "properties": {"bark": {"type": "integer"}}},
        },
        "type": "object",
        "properties": {"pet": {"anyOf": [{"$ref": "#/$defs/cat"}, {"$ref": "#/$defs/dog"}]}},
    }
    drawn = machines(schema)
    assert {"pet", "cat", "dog", "cat_field", "dog_field"} <= set(drawn)
    assert {label for _, label, _ in drawn["pet"]} == {"cat", "dog"}


def test_too_many_subschemas_are_refused_by_pointer_not_drawn():
    wide = {
        "type": "object",
        "properties": {
            f"p{k}": {"type": "object", "properties": {"x": {"type": "string"}}}
            for k in range(MAX_RULES)
        },
    }
    with pytest.raises(SchemaError, match="to draw"):
        structure_lark(wide)
    assert "not drawn" in structure_html(json.dumps(wide))
    assert isinstance(structure_view(json.dumps(wide)), str)


@pytest.mark.parametrize("kind", ["recursive", "kubernetes", "anyOf-objects", "function-calling"])
def test_every_valid_instance_of_the_sample_is_read_by_its_structure(kind):
    for path in sorted((SAMPLE / kind).glob("*.json")):
        schema = json.loads(path.read_text())
        grammar = compile_grammar(structure_lark(schema), "lark")
        for instance in instances(schema, limit=12):
            if instance.valid and len(instance.text) < 2000:
                assert grammar.accepts(instance.text), (path.name, instance.text)


def test_the_drawing_escapes_what_the_schema_names():
    html = structure_html(
        json.dumps({"type": "object", "properties": {"<i>x": {"type": "string"}}})
    )
    assert "&lt;i&gt;x" in html and "<i>" not in html


def test_a_drawing_too_large_to_stream_is_drawn_when_the_run_ends():
    kubernetes = (SAMPLE / "kubernetes" / "deployment.json").read_text()
    streaming = structure_html(kubernetes, '{"apiVersion": "apps/v1"', streaming=True)
    assert "<svg" not in streaming and "when the run ends" in streaming
    assert "<svg" in structure_html(kubernetes, '{"apiVersion": "apps/v1"}')
    small = schema_examples()["person"].schema
    assert "<svg" in structure_html(small, '{"name": "A', streaming=True)
