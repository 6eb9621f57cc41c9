"""The page's JSON Schema part: the examples, JSON as it streams, findings, the API.

Everything but ``build_schema_tab`` is a pure function returning data or HTML (every piece
of user text and model output escaped), so it is tested without a browser; the builder
only lays out components and wires them to these functions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from html import escape
from pathlib import Path
from typing import Any

from ..diagnose.schema import SchemaFinding
from ..schema import WHITESPACE, check_json, compile_schema, json_fields

__all__ = [
    "SchemaExample",
    "findings_html",
    "json_stream_html",
    "schema_api",
    "schema_examples",
]

EXAMPLES_FILE = Path(__file__).with_name("schema_examples.json")
WHITESPACE_CHOICES = tuple(WHITESPACE)
DEFAULT_WHITESPACE = "space"
SCHEMA_CSS = """<style>
.json-text { white-space: pre-wrap; font-size: 0.95em; }
.json-key { color: #6b3fa0; }
.json-current { background: #ffe08a; outline: 1px solid #d4a400; border-radius: 2px; }
.json-where code, .schema-findings code.pointer { font-weight: 600; }
.json-verdict.good { color: #1a7f37; font-weight: 600; }
.json-verdict.bad { color: #b42318; font-weight: 600; }
</style>"""
"""The JSON view's few styles (the field being written, the verdict), laid out once."""


@dataclass(frozen=True)
class SchemaExample:
    """A schema (as pretty JSON text), a prompt for it and a max_tokens that lets it close."""

    name: str
    schema: str
    prompt: str
    max_tokens: int


@cache
def schema_examples() -> dict[str, SchemaExample]:
    """The schema examples by name, in the file's order."""
    data = json.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))["examples"]
    return {
        name: SchemaExample(
            name, json.dumps(item["schema"], indent=2), item["prompt"], int(item["max_tokens"])
        )
        for name, item in data.items()
    }


def json_stream_html(text: str, schema: Mapping[str, Any] | None = None, done: bool = False) -> str:
    """Output as JSON while it streams: each key and value carries its output path as a
    tooltip, the field being written is highlighted; once ``done``, whether it parses and
    validates against ``schema``, with the error's path when not.

    >>> html = json_stream_html('{"a": "<b')
    >>> html[html.index("json-where"):].split("</div>")[0]
    'json-where">writing <code>/a</code>'
    >>> html[html.index("json-current"):].split("</span>")[0]
    'json-current" title="/a">&quot;&lt;b'
    """
    fields = json_fields(text)
    parts: list[str] = []
    at = 0
    for k, field in enumerate(fields):
        current = not done and k == len(fields) - 1
        kind = "json-key" if field.is_key else "json-value"
        cls = f"{kind} json-current" if current else kind
        parts.append(escape(text[at : field.start]))
        parts.append(
            f'<span class="{cls}" title="{escape(field.path or "/")}">'
            f"{escape(text[field.start : field.end])}</span>"
        )
        at = field.end
    parts.append(escape(text[at:]))
    head = ""
    if not done and fields:
        head = (
            f'<div class="json-where">writing <code>{escape(fields[-1].path or "/")}</code></div>'
        )
    tail = _verdict_html(text, schema) if done else ""
    return (
        f'<div class="json-stream">{head}<pre class="json-text">{"".join(parts)}</pre>{tail}</div>'
    )


def _verdict_html(text: str, schema: Mapping[str, Any] | None) -> str:
    check = check_json(text, schema or {})
    if not check.parses:
        return f'<div class="json-verdict bad">does not parse: {escape(check.error or "")}</div>'
    if check.valid:
        what = "parses and validates against the schema" if schema else "parses"
        return f'<div class="json-verdict good">{what}</div>'
    return (
        '<div class="json-verdict bad">parses, but does not validate: '
        f"{escape(check.error or '')} at <code>{escape(check.path or '/')}</code> "
        f"(schema rule <code>{escape(check.schema_path or '/')}</code>)</div>"
    )


def findings_html(findings: list[SchemaFinding]) -> str:
    """The schema findings as a list; each names its JSON pointer and, when it has one,
    offers its fix (a button the page wires to put the rewritten schema in the box)."""
    if not findings:
        return '<p class="schema-findings-none">No findings: the schema is bounded.</p>'
    items = []
    for k, f in enumerate(findings):
        fix = ""
        if f.schema is not None or f.whitespace is not None:
            fix = f' <span class="schema-fix">(fix {k + 1} in "Apply a fix")</span>'
        named = f.pointer and f"`{f.pointer}`" in f.message
        label = "" if named else f'<code class="pointer">{escape(f.pointer or "/")}</code> '
        items.append(
            f'<li class="finding {escape(f.severity)}" data-kind="{escape(f.kind)}">'
            f"{label}"
            f"{escape(f.message)}{fix}</li>"
        )
    return f'<ul class="schema-findings">{"".join(items)}</ul>'


def schema_api(
    schema: str,
    prompt: str,
    max_tokens: int = 64,
    temperature: float = 0.0,
    seed: int = 0,
    whitespace: str = DEFAULT_WHITESPACE,
    *,
    model: Any = None,
) -> dict[str, Any]:
    """Generate JSON for a JSON Schema: ``{"regex", "trace", "json"}``, where ``json`` says
    whether the output parses and validates (``check_json``). ``model`` defaults to the
    bundled one. Raises ``SchemaError`` for a schema that cannot be used."""
    from .. import generate, load_model

    compiled = compile_schema(schema, whitespace or None)
    trace = generate(
        model if model is not None else load_model(),
        compiled.regex,
        prompt,
        max_tokens=int(max_tokens),
        temperature=float(temperature),
        seed=int(seed),
    )
    check = check_json(trace.text, compiled.schema)
    return {
        "regex": compiled.regex,
        "trace": trace.to_dict(),
        "json": {
            "parses": check.parses,
            "valid": check.valid,
            "error": check.error,
            "path": check.path,
            "schema_path": check.schema_path,
        },
    }


def schema_run(
    model: Any, schema: str, prompt: str, whitespace: str, **options: Any
) -> Iterator[tuple[str, str]]:
    """Stream a schema-guided generation as (regex, JSON view HTML) pairs, the last one
    with the verdict. Raises ``SchemaError`` before any work for a bad schema."""
    from .. import stream

    compiled = compile_schema(schema, whitespace or None)
    text = ""
    for step in stream(model, compiled.regex, prompt, **options):
        text += step.text
        yield compiled.regex, json_stream_html(text, compiled.schema)
    yield compiled.regex, json_stream_html(text, compiled.schema, done=True)


def fix_label(k: int, finding: SchemaFinding) -> str:
    """The label of a finding's fix in the page's "Apply a fix" menu."""
    what = f"whitespace: {finding.whitespace}" if finding.schema is None else finding.kind
    return f"{k + 1}. {finding.pointer or '/'}: {what}"


def apply_fix(label: str, findings: list[SchemaFinding], schema: str, whitespace: str):
    """The (schema text, whitespace) after applying the fix named by ``label``."""
    for k, finding in enumerate(findings):
        if fix_label(k, finding) == label:
            return finding.schema or schema, finding.whitespace or whitespace
    return schema, whitespace


def schema_endpoint(get_model: Any) -> Any:
    """The ``/schema`` API function for ``gr.api``: ``schema_api`` with the page's model,
    every bad input a ``gr.Error``."""
    import gradio as gr

    def schema(
        schema: str,
        prompt: str,
        max_tokens: int = 64,
        temperature: float = 0.0,
        seed: int = 0,
        whitespace: str = DEFAULT_WHITESPACE,
    ) -> dict[str, Any]:
        """Generate JSON for a JSON Schema with a small language model, every token
        constrained by the schema's regex, and say whether the output parses and validates.

        Args:
            schema: The JSON Schema, as JSON text, e.g. `{"type": "object", "properties":
                {"name": {"type": "string", "maxLength": 20}}, "required": ["name"]}`.
            prompt: What the model is asked (with the chat template).
            max_tokens: The most tokens to generate (1 to 1024).
            temperature: 0 for greedy decoding; higher samples more freely (up to 2).
            seed: Random seed for sampling, so a run can be repeated.
            whitespace: Between JSON tokens: none, space (at most one) or flexible (any run
                of spaces, tabs and newlines: the commonest cause of endless output).

        Returns:
            The schema's regex, the whole trace, and the JSON check (parses, valid, error).
        """
        try:
            return schema_api(
                schema, prompt, max_tokens, temperature, seed, whitespace, model=get_model()
            )
        except ValueError as error:
            raise gr.Error(str(error)) from None

    return schema


def build_schema_tab(get_model: Any) -> None:
    """Lay out the JSON Schema part inside the current ``gr.Blocks`` (call it inside a
    ``gr.Tab`` or ``gr.Accordion``): the ``schema`` box, examples, the whitespace choice, a
    prompt, a run button, the regex, the JSON view, the findings and a menu applying their
    fixes. ``get_model()`` returns the model."""
    import gradio as gr

    from ..diagnose.schema import diagnose_schema

    first = next(iter(schema_examples().values()))
    gr.HTML(SCHEMA_CSS, padding=False)
    with gr.Row():
        with gr.Column():
            example = gr.Dropdown(
                list(schema_examples()), value=first.name, label="Example", elem_id="schema-example"
            )
            schema_box = gr.Textbox(
                first.schema, label="JSON Schema", lines=12, max_lines=30, elem_id="schema"
            )
            whitespace = gr.Radio(
                list(WHITESPACE_CHOICES),
                value=DEFAULT_WHITESPACE,
                label="Whitespace between JSON tokens (flexible is what loops)",
                elem_id="schema-whitespace",
            )
            prompt = gr.Textbox(first.prompt, label="Prompt", lines=3, elem_id="schema-prompt")
            max_tokens = gr.Slider(8, 256, value=first.max_tokens, step=1, label="max_tokens")
            run = gr.Button("Generate JSON", variant="primary", elem_id="schema-run")
            error = gr.HTML("", elem_id="schema-error")
        with gr.Column():
            regex = gr.Code("", label="Regex", elem_id="schema-regex")
            output = gr.HTML(elem_id="schema-output")
            findings = gr.HTML(elem_id="schema-findings")
            fix = gr.Dropdown([], label="Apply a fix", elem_id="schema-fix", interactive=True)
    found_state = gr.State([])

    def on_example(name):
        item = schema_examples()[name]
        return item.schema, item.prompt, item.max_tokens

    def on_run(text, ws, prompt_text, limit):
        try:
            model = get_model()
            found = diagnose_schema(text, model.vocab, whitespace=ws, max_tokens=int(limit))
            labels = [fix_label(k, f) for k, f in enumerate(found) if f.schema or f.whitespace]
            menu = gr.Dropdown(choices=labels, value=None)
            for rx, view in schema_run(model, text, prompt_text, ws, max_tokens=int(limit)):
                yield rx, view, findings_html(found), "", found, menu
        except ValueError as err:
            html = f'<div class="error">{escape(str(err))}</div>'
            yield "", "", "", html, [], gr.Dropdown(choices=[], value=None)

    private = {"api_visibility": "private"}
    example.change(on_example, example, [schema_box, prompt, max_tokens], **private)
    run.click(
        on_run,
        [schema_box, whitespace, prompt, max_tokens],
        [regex, output, findings, error, found_state, fix],
        **private,
    )
    fix.select(
        apply_fix, [fix, found_state, schema_box, whitespace], [schema_box, whitespace], **private
    )
