"""Pydantic in, object out: ``compile_schema(...).generate`` returns a ``SchemaTrace`` whose
``parsed`` is the validated value (a model instance for a pydantic class), on both paths;
an output that does not fit is None with ``parse_error`` naming where."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from fsmviz import compile_schema
from fsmviz.schema.run import SchemaTrace

TREE = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "maxLength": 10},
        "children": {"type": "array", "items": {"$ref": "#"}, "maxItems": 2},
    },
    "required": ["label"],
    "additionalProperties": False,
}


class Nutrition(BaseModel):
    protein: float = Field(description="grams of protein per 100 g")
    calories: int = Field(ge=0, le=5000)


def test_a_pydantic_class_is_kept_and_parses_to_an_instance():
    compiled = compile_schema(Nutrition, "space")
    assert compiled.source is Nutrition
    value = compiled.parse('{"protein": 10.3, "calories": 54}')
    assert isinstance(value, Nutrition) and value.calories == 54
    assert compile_schema(Nutrition.model_json_schema()).source is None


def test_a_grammar_path_run_reads_its_output_back_or_says_why_not(tiny):
    compiled = compile_schema(TREE, "none")
    assert compiled.path == "grammar"
    outcomes = set()
    for seed in range(4):
        trace = compiled.generate(tiny, "A tree:", max_tokens=30, temperature=1.0, seed=seed)
        assert isinstance(trace, SchemaTrace)
        if trace.stop_reason == "accepted":
            assert trace.parsed == json.loads(trace.text) and trace.parse_error is None
            outcomes.add("parsed")
        else:
            assert trace.parsed is None and trace.parse_error
            outcomes.add("cut")
        assert json.loads(json.dumps(trace.to_dict()))["parsed"] == trace.parsed
    assert "parsed" in outcomes


def test_a_run_cut_short_has_no_value_and_says_so(tiny):
    trace = compile_schema(TREE, "none").generate(tiny, "A tree:", max_tokens=2)
    assert trace.parsed is None and "not JSON" in trace.parse_error


@pytest.mark.slow
def test_the_real_model_returns_a_pydantic_instance_on_the_regex_path():
    from fsmviz import load_model

    compiled = compile_schema(Nutrition, "space")
    assert compiled.path == "regex"
    prompt = (
        "3g sugars, 10.3g protein, 54 kcal per 100g. How much protein and how many calories? "
        "Answer in JSON."
    )
    trace = compiled.generate(load_model(), prompt, max_tokens=40)
    assert isinstance(trace.parsed, Nutrition), trace.parse_error
    assert trace.to_dict()["parsed"] == trace.parsed.model_dump(mode="json")
