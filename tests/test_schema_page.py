"""The JSON Schema page part: JSON as it streams, verdicts, findings HTML, examples, corpus."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fsmviz.app.schema_page import (
    findings_html,
    json_stream_html,
    schema_examples,
)
from fsmviz.diagnose.schema import schema_findings
from fsmviz.schema import check_json, compile_schema, json_fields

CASES = Path(__file__).parent / "cases"


def test_json_fields_follow_nested_objects_and_arrays():
    text = '{"name": "Ada", "tags": ["a", "b"], "address": {"city": "Lon'
    fields = json_fields(text)
    assert [(f.path, f.is_key) for f in fields] == [
        ("/name", True),
        ("/name", False),
        ("/tags", True),
        ("/tags/0", False),
        ("/tags/1", False),
        ("/address", True),
        ("/address/city", True),
        ("/address/city", False),
    ]
    assert text[fields[-1].start : fields[-1].end] == '"Lon'


def test_json_fields_read_escaped_quotes_inside_strings():
    fields = json_fields(r'{"q": "say \"hi\", then", "n": 1}')
    assert [f.path for f in fields] == ["/q", "/q", "/n", "/n"]


def test_the_field_being_written_is_highlighted_and_escaped():
    html = json_stream_html('{"note": "<script>alert(1)</script>')
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert html.count("json-current") == 1
    assert "writing <code>/note</code>" in html


def test_a_finished_output_that_validates_says_so():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    html = json_stream_html('{"n": 3}', schema, done=True)
    assert "parses and validates" in html
    assert "json-current" not in html


def test_an_output_breaking_the_schema_names_the_output_path_and_the_rule():
    schema = {"type": "object", "properties": {"tags": {"type": "array", "maxItems": 1}}}
    check = check_json('{"tags": ["a", "b"]}', schema)
    assert (check.parses, check.valid) == (True, False)
    assert check.path == "/tags" and check.schema_path == "/properties/tags/maxItems"
    html = json_stream_html('{"tags": ["a", "b"]}', schema, done=True)
    assert "does not validate" in html and "<code>/tags</code>" in html


def test_a_truncated_output_does_not_parse():
    check = check_json('{"tags": ["a", ', {})
    assert not check.parses and "not JSON" in check.error
    assert "does not parse" in json_stream_html('{"tags": ["a", ', {}, done=True)


def test_findings_html_escapes_and_offers_a_fix():
    schema = {"type": "object", "properties": {"<b>": {"type": "string"}}}
    html = findings_html(schema_findings(schema))
    assert "<b>" not in html and "&lt;b&gt;" in html
    assert 'fix 1 in "Apply a fix"' in html


@pytest.mark.parametrize("name", ["nutrition", "person", "enum", "tags"])
def test_each_example_compiles_and_is_bounded(name):
    example = schema_examples()[name]
    compiled = compile_schema(example.schema, "space")
    assert compiled.regex
    kinds = {f.kind for f in schema_findings(compiled.schema, "space")}
    assert not kinds & {"unbounded_string", "unbounded_array", "free_form_object"}


def test_outlines_cores_test_schemas_compile_or_are_refused_clearly_in_bounded_time():
    script = (
        "import json, sys\n"
        "from fsmviz.schema import SchemaError, compile_schema\n"
        "data = json.load(open(sys.argv[1]))['schemas']\n"
        "out = []\n"
        "for ws in ('none', 'space', 'flexible'):\n"
        "    for s in data:\n"
        "        try:\n"
        "            compile_schema(s, ws); out.append('ok')\n"
        "        except SchemaError as e:\n"
        "            out.append('refused ' + str(e.path))\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(CASES / "outlines_core_schemas.json")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    outcomes = json.loads(done.stdout)
    schemas = json.loads((CASES / "outlines_core_schemas.json").read_text())["schemas"]
    assert len(outcomes) == 3 * len(schemas) >= 150
    assert outcomes.count("ok") >= 0.9 * len(outcomes)
    assert all(o == "ok" or o.startswith("refused /") for o in outcomes)


def test_the_schema_tab_lays_out_its_inputs_with_their_ids():
    import gradio as gr

    from fsmviz.app.schema_page import build_schema_tab

    with gr.Blocks() as page:
        build_schema_tab(lambda: None)
    ids = {c.get("props", {}).get("elem_id") for c in page.get_config_file()["components"]}
    assert {"schema", "schema-whitespace", "schema-prompt", "schema-run", "schema-output"} <= ids


def test_applying_a_fix_puts_its_schema_or_whitespace_in_place():
    from fsmviz.app.schema_page import apply_fix, fix_label

    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    found = schema_findings(schema, "flexible")
    labels = [fix_label(k, f) for k, f in enumerate(found)]
    text, ws = apply_fix(labels[0], found, "old", "flexible")
    assert json.loads(text)["properties"]["name"]["maxLength"] == 50 and ws == "flexible"
    assert apply_fix(labels[-1], found, "old", "flexible") == ("old", "none")
