"""The JSON Schema page part: JSON as it streams, verdicts, findings HTML, examples, corpus."""

import html
import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from fsmviz.app.schema_page import schema_examples
from fsmviz.diagnose.schema import schema_findings
from fsmviz.html.schema import (
    MAX_LINKED_SCHEMA,
    apply_fix,
    in_use,
    json_stream_html,
    json_view_html,
    mode_html,
    schema_findings_html,
    use_linked_schema,
    use_schema,
)
from fsmviz.schema.convert import check_json, compile_schema, json_fields

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


def test_findings_html_escapes_and_gives_each_fix_its_own_button():
    schema = {
        "type": "object",
        "properties": {"<b>": {"type": "string"}, "n": {"type": "number"}},
    }
    found = schema_findings(schema, "flexible")
    html = schema_findings_html(found)
    assert "<b>" not in html and "&lt;b&gt;" in html
    fixable = [k for k, f in enumerate(found) if f.schema or f.whitespace]
    assert len(fixable) == 2 < len(found)  # the number's finding has no fix
    buttons = re.findall(r'<button [^>]*data-schema-fix="(\d+)">Fix: ([^<]*)</button>', html)
    assert [int(k) for k, _ in buttons] == fixable
    assert [label for _, label in buttons] == [
        "add &quot;maxLength&quot;: 50",
        "use whitespace none",
    ]


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
        "from fsmviz.schema.convert import SchemaError, compile_schema\n"
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


def test_the_schema_part_lays_out_its_inputs_with_their_ids():
    import gradio as gr

    from fsmviz.app.schema_page import build_schema_part

    with gr.Blocks() as page:
        build_schema_part()
    ids = {c.get("props", {}).get("elem_id") for c in page.get_config_file()["components"]}
    assert {
        "schema",
        "schema-whitespace",
        "schema-use",
        "schema-findings",
        "schema-fix-pick",
    } <= ids


def test_applying_a_fix_by_its_index_puts_its_schema_or_whitespace_in_place():
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    found = schema_findings(schema, "flexible")
    text, ws = apply_fix(0, found, "old", "flexible")
    assert json.loads(text)["properties"]["name"]["maxLength"] == 50 and ws == "flexible"
    assert apply_fix(len(found) - 1, found, "old", "flexible") == ("old", "none")
    assert apply_fix(-1, found, "old", "flexible") is None  # the picker's reset
    assert apply_fix(len(found), found, "old", "flexible") is None


def test_a_fix_writes_only_the_part_it_changes():
    """A fix's answer comes after its click: a whitespace clicked in between stays. The
    schema's fix wrote back the whitespace it was sent with (and a whitespace fix the schema)."""
    import gradio as gr

    from fsmviz.app.schema_page import on_fix

    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    found = schema_findings(schema, "flexible")
    text, whitespace, asked, pick = on_fix(0, found, "old", "flexible")
    assert json.loads(text)["properties"]["name"]["maxLength"] == 50
    assert whitespace == gr.skip() and asked and pick == -1
    text, whitespace, _, _ = on_fix(len(found) - 1, found, "old", "flexible")
    assert (text, whitespace) == (gr.skip(), "none")


def test_the_use_event_tells_an_ask_from_another_model_by_what_it_answered(bundled_vocab):
    """One event uses the schema (asked: Use, a whitespace, an example, a fix) and diagnoses
    it again in another model's tokens; it reads which from the page. Another model alone
    diagnoses the schema in use, never the box's text (typed, not used); a new ask uses the
    box; nothing new, nothing (a trigger deferred behind the answer it asked for)."""
    import gradio as gr

    from fsmviz.app.schema_page import Answered, on_asked

    models = SimpleNamespace(vocabulary=lambda: bundled_vocab)
    schema = '{"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}'
    typed = '{"type": "string", "maxLength": 3}'
    used = on_asked(models, schema, "none", 32, None, "7", Answered(), None, "")
    regex, choice, found, _, error, _, answered = used
    assert choice.regex == regex and not error and answered == Answered("7", None)
    again = on_asked(models, typed, "none", 32, "other", "7", answered, choice, regex)
    assert again[:2] == (gr.skip(), gr.skip()) and again[2] == found  # the schema in use
    assert again[-1] == Answered("7", "other")
    assert (
        on_asked(models, typed, "none", 32, "other", "7", again[-1], choice, regex)[:6]
        == (gr.skip(),) * 6
    )
    asked = on_asked(models, typed, "none", 32, "other", "8", again[-1], choice, regex)
    assert json.loads(asked[1].schema) == json.loads(typed) and asked[-1] == Answered("8", "other")


def test_a_finding_without_a_fix_applies_nothing():
    found = schema_findings({"type": "number"})
    assert [f.kind for f in found] == ["unbounded_digits"]
    assert apply_fix(0, found, "old", "space") is None


def test_using_a_schema_gives_its_regex_and_findings():
    schema = '{"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}'
    used = use_schema(schema, "none", None, max_tokens=32)
    assert used.error == ""
    assert used.choice.regex == compile_schema(schema, "none").regex
    assert used.choice.whitespace == "none"
    assert json.loads(used.choice.schema) == json.loads(schema)
    assert "unbounded_string" in {f.kind for f in used.findings}
    assert 'data-schema-fix="0"' in used.findings_html


def test_a_schema_that_cannot_be_used_is_an_escaped_error_naming_its_pointer():
    used = use_schema('{"type": "object", "properties": {"<i>": {"type": 3}}}', "space", None)
    assert used.choice is None and used.findings == ()
    assert "/properties/&lt;i&gt;/type" in used.error and "<i>" not in used.error
    assert "not valid JSON" in use_schema("{", "space", None).error


def test_the_schema_is_in_use_while_the_regex_box_holds_its_regex():
    choice = use_schema('{"enum": ["a<b", "c"]}', "space", None).choice
    assert in_use(choice, choice.regex) is choice
    assert in_use(choice, choice.regex + "x") is None
    assert in_use(None, choice.regex) is None
    assert "Generate writes JSON" in mode_html(choice, choice.regex)
    assert mode_html(choice, "[0-9]") == ""


def test_the_note_carries_the_schema_for_the_link_escaped():
    schema = '{"enum": ["a<b\\"c", "&"]}'
    choice = use_schema(schema, "space", None).choice
    note = mode_html(choice, choice.regex)
    carried = re.search(r'data-schema="([^"]*)" data-whitespace="space"', note)
    assert carried and "<b" not in carried.group(1)
    assert html.unescape(carried.group(1)) == choice.schema


def test_a_linked_schema_is_used_with_a_known_whitespace_and_a_bounded_size():
    schema = '{"type": "object", "properties": {"n": {"type": "integer"}}}'
    used = use_linked_schema(schema, "<script>", None, 16)
    assert used.choice.whitespace == "space"  # an unknown one is the default
    assert used.choice.regex == use_schema(schema, "space", None).choice.regex
    assert use_linked_schema(schema, "none", None, 16).choice.whitespace == "none"
    padded = schema[:-1] + " " * MAX_LINKED_SCHEMA + "}"
    too_long = use_linked_schema(padded, "none", None, 16)
    assert too_long.choice is None
    assert f"{len(padded):,} characters" in too_long.error


def test_the_json_view_shows_a_schema_run_and_nothing_for_a_regex_run():
    choice = use_schema(schema_examples()["enum"].schema, "space", None).choice
    assert json_view_html(None, '{"a": 1}', done=True) == ""
    streaming = json_view_html(choice, '{ "sentiment": "neg')
    assert "json-current" in streaming and "writing <code>/sentiment</code>" in streaming
    done = json_view_html(choice, '{ "sentiment": "negative", "stars": 9 }', done=True)
    assert "does not validate" in done and "<code>/stars</code>" in done
    good = json_view_html(choice, '{ "sentiment": "negative", "stars": 2 }', done=True)
    assert "parses and validates against the schema" in good
    assert "<script>" not in json_view_html(choice, '{"sentiment": "<script>')


def test_a_schema_runs_frames_update_the_json_view_and_a_regex_runs_clear_it():
    from fsmviz.app.handlers import Page, frame_updates
    from fsmviz.app.live import PageFrame as Frame
    from fsmviz.app.page import started

    page = Page(*(f"c{k}" for k in range(15)), json="json")
    choice = use_schema(schema_examples()["enum"].schema, "none", None).choice
    streaming = frame_updates(Frame("…", output="o", text='{"sentiment":"p'), page, choice)
    assert "json-current" in streaming["json"]
    # a regex run's JSON view was cleared when it started (page.started): its streaming
    # frames leave it alone, not resending "" each frame
    assert "json" not in frame_updates(Frame("…", output="o", text="x"), page, None)
    assert started(page)["json"] == ""
    assert "json" not in frame_updates(Frame("…", shadow="s"), page, choice)  # shadow frames
    no_view = Page(*range(15))  # a page without the JSON view: output (1) and status (7)
    assert set(frame_updates(Frame("…", output="o", text="{"), no_view, choice)) == {1, 7}
