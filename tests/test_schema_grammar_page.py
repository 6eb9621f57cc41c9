"""A grammar-path JSON Schema on the page: the main view's frames (output, steps, chart,
doctor, the JSON view with its verdict and the structure drawing lit), without a browser.
The tiny random model (``tiny``) stands in for speed where only the frames' shape is
checked; the real model writes the tree in ``test_the_real_model_writes_a_valid_tree``."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from fsmviz.app.handlers import Drawn, Page, frame_updates, on_pattern_edit
from fsmviz.app.schema_page import schema_examples
from fsmviz.app.schema_run import schema_frames
from fsmviz.generation.generate import GenerationOptions
from fsmviz.html.schema import grammar_note, grammar_panel, json_view_html, use_schema

TREE = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "maxLength": 10},
        "children": {"type": "array", "items": {"$ref": "#"}, "maxItems": 3},
    },
    "required": ["label"],
    "additionalProperties": False,
}


def tree_choice():
    used = use_schema(json.dumps(TREE), "space", None)
    assert used.choice is not None and used.choice.path == "grammar"
    return used.choice


def test_a_grammar_path_run_streams_frames_and_ends_with_a_trace(tiny):
    choice = tree_choice()
    options = GenerationOptions(max_tokens=12, temperature=1.0, seed=1)
    frames = list(schema_frames(tiny, choice, "A tree:", options))
    first, ended = frames[0], next(f for f in frames if f.trace is not None)
    assert "grammar path" in first.dfa and first.steps and first.output is not None
    assert "No findings" not in first.diagnosis or first.diagnosis  # the schema's findings
    assert ended.trace.steps and ended.text == ended.trace.text
    assert ended.trace.text.startswith("{")  # llguidance's mask held the model to JSON
    assert ended.chart is not None and ended.shadow_next
    assert frames[-1].shadow is not None and frames[-1].trace is None  # the shadow run last


def allowed_data(html: str) -> list[dict]:
    """The allowed-set panel's per-step data (what static/app.js reads)."""
    return json.loads(
        unescape(re.search(r'class="allowed-data" hidden data-json="([^"]*)"', html)[1])
    )


def test_a_grammar_path_run_ends_with_every_steps_allowed_set(tiny):
    choice = tree_choice()
    options = GenerationOptions(max_tokens=10, temperature=1.0, seed=3)
    ended = next(f for f in schema_frames(tiny, choice, "A tree:", options) if f.trace is not None)
    steps = ended.trace.steps
    sets = allowed_data(ended.allowed)
    assert [d["s"] for d in sets] == [s.index for s in steps]
    # llguidance's mask replayed along the run: the sets the run itself masked with
    assert [d["t"] for d in sets] == [s.allowed_count for s in steps]
    assert sets[0]["k"] == [steps[0].token_bytes.decode(), False]  # the token taken
    # the table's "state": the rule of the schema's structure the parser is in
    assert re.search(
        r"<td>(start|start_field|children) → (start|start_field|children|end)<", ended.steps
    )


def test_a_finished_runs_drawing_panel_lights_the_structure_at_every_step():
    from fsmviz.drawing.rules import lighting, lit_names
    from fsmviz.generation.trace import Step
    from fsmviz.html.grammar import place_after, rules_html
    from fsmviz.html.schema_structure import structure_view

    choice = tree_choice()
    text = '{"label": "a", "children": []}'
    steps = [Step(k, c, k, k + 1, 1, 1.0, (), index=k, token_bytes=c.encode())
             for k, c in enumerate(text)]  # fmt: skip
    done = grammar_panel(choice, text, steps=steps)
    lights = json.loads(unescape(re.search(r'class="lights" hidden data-json="([^"]*)"', done)[1]))
    assert len(lights) == len(steps)
    view = structure_view(choice.schema)
    for i in (3, 12, 20):  # inside "label", its value, "children"
        place = place_after(view, text[: i + 1])
        assert lights[i] == lit_names(lighting(place, view.network)) and lights[i]
        lit = [name for name, classes in lights[i].items() if "top" in classes]
        assert all(f"{name} current top" in rules_html(view, place) for name in lit)
    assert lights[3] != lights[12]  # the field being written moves
    assert '<div class="lights"' not in grammar_panel(choice, text)
    # the structure is in the drawing panel, beside the step controls, not in the JSON view
    assert "schema-structure" not in json_view_html(choice, text, done=True, steps=steps)


def test_a_grammar_runs_json_view_and_drawing_panel_show_the_field_being_written():
    choice = tree_choice()
    text = '{"label": "a", "children": [{"label": "b'
    streaming = json_view_html(choice, text)
    assert "writing <code>/children/0/label</code>" in streaming
    panel = grammar_panel(choice, text, streaming=True)
    assert 'id="schema-structure"' in panel and "current top" in panel
    done = json_view_html(choice, '{"label": "a", "children": [{"label": "b"}]}', done=True)
    assert "parses and validates against the schema" in done
    bad = json_view_html(choice, '{"label": "a", "children": [{"label": 5}]}', done=True)
    assert "does not validate" in bad


def test_emptying_the_regex_box_for_a_grammar_schema_shows_the_note_not_an_error():
    page = Page(*(f"c{k}" for k in range(15)), json="json")
    choice = tree_choice()
    updates = on_pattern_edit(page, None, None, Drawn("", schema=choice))
    assert updates["c0"] == grammar_panel(choice) and updates["c6"] == ""
    assert updates["c0"].startswith(grammar_note(choice)) and "schema-structure" in updates["c0"]


def test_a_grammar_frame_updates_the_json_view():
    page = Page(*(f"c{k}" for k in range(15)), json="json")
    choice = tree_choice()
    from fsmviz.app.live import PageFrame as Frame

    updates = frame_updates(Frame("…", output="o", text='{"label": "x'), page, choice)
    assert "json-stream" in updates["json"] and "writing <code>/label</code>" in updates["json"]


@pytest.mark.slow
def test_the_real_model_writes_a_valid_tree():
    from fsmviz import load_model

    example = schema_examples()["tree (grammar path)"]
    choice = use_schema(example.schema, "space", None).choice
    options = GenerationOptions(max_tokens=example.max_tokens)
    frames = list(schema_frames(load_model(), choice, example.prompt, options))
    trace = next(f.trace for f in frames if f.trace is not None)
    assert trace.stop_reason == "accepted", trace.text
    assert json.loads(trace.text)["children"][1] == {"label": "pear"}
    view = json_view_html(choice, trace.text, done=True)
    assert "parses and validates" in view
    ended = next(f for f in frames if f.trace is not None)
    assert "schema-structure" in ended.dfa and 'class="lights"' in ended.dfa


def test_a_stopped_grammar_path_run_keeps_what_was_written_for_stepping(tiny):
    """Stop during the constrained run: the steps written become the trace, drawn for
    stepping as a finished run is (the structure's lights, every step's allowed set)."""
    from fsmviz.app.handlers import RunInputs, StopMark, on_run

    class Models:  # the page's BackgroundModel as on_run uses it, holding the tiny model
        def get(self, timeout=None):
            return tiny

    page = Page(*(f"c{k}" for k in range(15)), json="json")
    mark = StopMark()
    inputs = RunInputs("", "A tree:", 12, 1.0, 5, True, 0, schema=tree_choice())
    run = on_run(page, Models(), inputs, mark=mark)
    seen = []
    for update in run:
        seen.append(update)
        if any(isinstance(u, str) and u.startswith("Generating") for u in update.values()):
            mark.stop()  # Stop, once the first tokens are on the page
    trace = next(u["c8"] for u in seen if u.get("c8") is not None)
    assert trace.steps and trace.notes and "Stopped" in trace.notes[0]
    kept = next(u for u in seen if u.get("c8") is not None)
    assert 'class="lights"' in kept["c0"] and "schema-structure" in kept["c0"]
    assert len(allowed_data(kept["c14"])) == len(trace.steps)
    assert seen[-1]["c7"].startswith("Stopped after")
