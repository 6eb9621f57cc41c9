"""JSON Schema with the real model (SmolLM2-135M, greedy): valid JSON, the API, the command."""

import io
import json
from pathlib import Path

import pytest
from test_schema_engines_api import file_like

from fsmviz import load_model
from fsmviz.app.live import pattern_view
from fsmviz.app.regex_run import live_run
from fsmviz.app.schema_page import schema_examples
from fsmviz.cli import schema_command
from fsmviz.generation.generate import GenerationOptions
from fsmviz.html.schema import json_view_html, use_schema
from fsmviz.schema.answer import schema_answer


@pytest.fixture
def model():
    """The bundled model, cached by ``load_model()``: a plain fixture, so the file is not
    tied to one xdist worker (see conftest.py)."""
    return load_model()


@pytest.mark.parametrize("name", ["nutrition", "person", "enum", "tags"])
def test_each_example_schema_gives_json_that_parses_and_validates(model, name):
    example = schema_examples()[name]
    result = schema_answer(
        example.schema, example.prompt, example.max_tokens, whitespace="space", model=model
    )
    assert result["trace"]["stop_reason"] == "accepted"
    assert result["json"] == {
        "parses": True,
        "valid": True,
        "error": None,
        "instance_path": None,
        "schema_path": None,
    }
    assert result["route"] == "regex" and not file_like(result)
    assert json.loads(result["trace"]["text"])


def test_a_schema_used_in_the_main_run_streams_json_and_ends_with_the_verdict(model):
    example = schema_examples()["enum"]
    choice = use_schema(example.schema, "none", model.vocab).choice
    view = pattern_view(choice.regex, model.vocab, diagnosed=False)
    frames = list(live_run(model, view, example.prompt, GenerationOptions(max_tokens=24)))
    texts = [(f.text, f.trace is not None) for f in frames if f.text is not None]
    assert texts[0][0].startswith("{") and not texts[0][1]
    assert "json-current" in json_view_html(choice, texts[0][0])
    final, done = texts[-1]
    assert done and final == next(f.trace.text for f in frames if f.trace is not None)
    assert "parses and validates" in json_view_html(choice, final, done=True)


def test_schema_command_prints_the_regex_or_generates(model, tmp_path: Path):
    path = tmp_path / "enum.json"
    path.write_text(schema_examples()["enum"].schema)
    out, err = io.StringIO(), io.StringIO()
    assert schema_command(str(path), whitespace="none", out=out, err=err) == 0
    assert out.getvalue().startswith(r'\{"sentiment":')
    out = io.StringIO()
    status = schema_command(
        str(path), schema_examples()["enum"].prompt, max_tokens=24, model=model, out=out, err=err
    )
    assert status == 0
    assert json.loads(out.getvalue())["sentiment"] in {"positive", "negative", "neutral"}
    assert "valid JSON for the schema" in err.getvalue()


def test_schema_command_refuses_a_bad_schema_with_status_2(tmp_path: Path):
    path = tmp_path / "bad.json"
    path.write_text('{"type": "strng"}')
    err = io.StringIO()
    assert schema_command(str(path), out=io.StringIO(), err=err) == 2
    assert "/type" in err.getvalue()
    assert schema_command(str(tmp_path / "missing.json"), err=err) == 2
