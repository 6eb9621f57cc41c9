"""A JSON Schema run's views: the schema in use (``use_schema``: compiled and diagnosed into
a ``SchemaChoice`` for the main run, a bad schema an error, never an exception; the note
under the Regex box while it holds the schema's regex), the output as JSON while it streams
(the field being written lit, then whether it parses and validates), the schema doctor's
findings with a fix button each, and which engine gets the schema right. Every piece of
user text and model output escaped; the page (``fsmviz.app.schema_page``) lays them out and
wires the buttons.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from fsmviz.diagnose.schema import (
    ARRAY_BOUND,
    DIGITS_BOUND,
    STRING_BOUND,
    SchemaFinding,
    diagnose_schema,
)
from fsmviz.generation.trace import Step
from fsmviz.html.grammar import grammar_findings_html
from fsmviz.html.schema_structure import structure_html
from fsmviz.html.text import code_spans, error_html
from fsmviz.schema.answer import DEFAULT_WHITESPACE, WHITESPACE_CHOICES
from fsmviz.schema.convert import SchemaError, check_json, compile_schema, json_fields
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "MAX_LINKED_SCHEMA",
    "SchemaChoice",
    "SchemaUse",
    "apply_fix",
    "collapses_html",
    "engines_html",
    "fix_label",
    "grammar_note",
    "grammar_panel",
    "in_use",
    "json_stream_html",
    "json_view_html",
    "mode_html",
    "schema_findings_html",
    "use_linked_schema",
    "use_schema",
]


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


FIX_LABELS = {
    "unbounded_string": f'add "maxLength": {STRING_BOUND}',
    "unbounded_array": f'add "maxItems": {ARRAY_BOUND}',
    "free_form_object": f'add "maxProperties": {ARRAY_BOUND}',
    "unbounded_digits": f'add "maxDigits": {DIGITS_BOUND}',
}
"""What each kind's fix button does (the finding carries the whole rewritten schema)."""


def fix_label(finding: SchemaFinding) -> str | None:
    """What the finding's fix button says, or None when it has no fix.

    >>> fix_label(SchemaFinding("flexible_whitespace", "warning", "…", "", whitespace="none"))
    'use whitespace none'
    """
    if finding.whitespace is not None:
        return f"use whitespace {finding.whitespace}"
    if finding.schema is not None:
        return FIX_LABELS.get(finding.kind, "rewrite the schema")
    return None


def schema_findings_html(findings: Sequence[SchemaFinding]) -> str:
    """The schema findings as a list; each names its JSON pointer and, when it has a fix,
    carries a button for it (``data-schema-fix`` is the finding's index: the page's script
    hands it to the server, which applies that finding's fix)."""
    if not findings:
        return '<p class="schema-findings-none">No findings: the schema is bounded.</p>'
    items = []
    for k, f in enumerate(findings):
        label = fix_label(f)
        fix = (
            f' <button type="button" class="schema-fix" data-schema-fix="{k}">'
            f"Fix: {escape(label)}</button>"
            if label
            else ""
        )
        named = f.pointer and f"`{f.pointer}`" in f.message
        where = "" if named else f'<code class="pointer">{escape(f.pointer or "/")}</code> '
        items.append(
            f'<li class="schema-finding {escape(f.severity)}" data-kind="{escape(f.kind)}">'
            f"{where}{code_spans(f.message)}{fix}</li>"
        )
    return f'<ul class="schema-findings">{"".join(items)}</ul>'


def engines_html(table: Any) -> str:
    """Which engine gets the schema right (``fsmviz.peers.schema.engine_verdicts``), as an
    HTML table: compiled or refused (its message), the invalid instances it accepts, the
    valid ones it rejects, the keywords it names as not enforced and the rules by which it
    refuses JSON the schema allows (``.stricter``); every cell escaped.

    >>> from fsmviz.peers.schema import EngineVerdict, Instance, VerdictTable
    >>> table = VerdictTable((Instance("0", False, "minimum crossed"),),
    ...     (EngineVerdict("x<y>", "1", True, invalid_accepted=("minimum crossed",)),))
    >>> html = engines_html(table)
    >>> "x&lt;y&gt; 1" in html, "1 of 1: minimum crossed" in html
    (True, True)
    """
    valid = sum(i.valid for i in table.instances)
    rows = []
    for v in table.verdicts:
        name = escape(f"{v.engine} {v.version}" if v.version != "this" else v.engine)
        if not v.compiled:
            rows.append(f'<tr class="refused"><td>{name}</td><td colspan="5">refused: '
                        f"{escape(v.refusal[:300])}</td></tr>")  # fmt: skip
            continue
        path = f" ({escape(v.path)} path)" if v.path else ""
        bad = len(table.instances) - valid
        cells = [
            f"yes{path}",
            _hows(v.invalid_accepted, bad),
            _hows(v.valid_rejected, valid),
            escape(", ".join(v.ignored)) or "—",
            escape("; ".join(v.stricter)) or "—",
        ]
        right = "right" if v.right else "wrong"
        rows.append(f'<tr class="{right}"><td>{name}</td>'
                    + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")  # fmt: skip
    head = (
        "<tr><th>engine</th><th>compiled</th><th>invalid JSON accepted</th>"
        "<th>valid JSON rejected</th><th>keywords named as not enforced</th>"
        "<th>rules stricter than the schema</th></tr>"
    )
    return (
        f'<div class="schema-engines"><p>{len(table.instances)} instances made from the '
        f"schema: {valid} valid, {len(table.instances) - valid} near-misses (a bound crossed, "
        "a required key dropped, a wrong type), labelled by jsonschema; each checked by "
        f"every engine's matcher.</p><table>{head}{''.join(rows)}</table></div>"
    )


def _hows(hows: tuple[str, ...], of: int) -> str:
    if not hows:
        return f"0 of {of}"
    shown = "; ".join(hows[:3]) + ("; …" if len(hows) > 3 else "")
    return f"{len(hows)} of {of}: {escape(shown)}"


def apply_fix(
    k: int, findings: Sequence[SchemaFinding], schema: str, whitespace: str
) -> tuple[str, str] | None:
    """The (schema text, whitespace) after applying finding ``k``'s fix; None when ``k``
    names no finding with a fix (the page's fix picker is reset to -1 after each fix)."""
    k = int(k) if k is not None else -1
    if not 0 <= k < len(findings) or fix_label(findings[k]) is None:
        return None
    finding = findings[k]
    return finding.schema or schema, finding.whitespace or whitespace


@dataclass(frozen=True)
class SchemaChoice:
    """The schema whose regex was put in the Regex box ("Use this schema").

    ``schema`` is the schema as JSON text. While the Regex box still holds ``regex``
    (``in_use``), Generate is a schema run: the output is also shown as JSON and checked
    against the schema; an edit of the regex makes it a plain regex again.
    """

    schema: str
    whitespace: str
    regex: str
    path: str = "regex"
    """``"grammar"`` for a schema no regex holds (``SchemaGrammar``): the Regex box is then
    emptied (``regex`` is ""), and Generate runs llguidance's mask (``schema_run``)."""
    reason: str = ""
    """Why the grammar path (``SchemaGrammar.reason``)."""


@dataclass(frozen=True)
class SchemaUse:
    """What "Use this schema" gives the page: the choice (None when the schema cannot be
    used, ``error`` says why), the schema findings and their HTML (with fix buttons)."""

    choice: SchemaChoice | None
    findings: tuple[SchemaFinding, ...]
    findings_html: str
    error: str


def use_schema(
    schema: str, whitespace: str, vocab: Vocabulary | None, max_tokens: int | None = None
) -> SchemaUse:
    """Compile and diagnose ``schema`` for the main run; a bad schema is an error, never
    an exception.

    >>> used = use_schema('{"type": "object", "properties": {"n": {"enum": [1, 2]}}}', "none", None)
    >>> used.choice.regex, used.error
    ('\\\\{("n":(1|2))?\\\\}', '')
    """
    try:
        compiled = compile_schema(schema, whitespace or None)
        found = diagnose_schema(
            compiled, vocab, whitespace=whitespace or None, max_tokens=max_tokens
        )
    except SchemaError as error:
        return SchemaUse(None, (), "", error_html(error))
    except RecursionError:  # JSON nested thousands deep: Python's reader gives up
        return SchemaUse(None, (), "", error_html(SchemaError(NESTED_SCHEMA)))
    if compiled.path == "grammar":
        choice = SchemaChoice(compiled.text, whitespace, "", "grammar", compiled.reason)
    else:
        choice = SchemaChoice(compiled.text, whitespace, compiled.regex)
    return SchemaUse(choice, tuple(found), schema_findings_html(found), "")


NESTED_SCHEMA = "the schema is nested too deeply to read: write fewer levels of nesting"


MAX_LINKED_SCHEMA = 20_000
"""Characters of a schema a link may carry (a 22-field schema is ~3,000)."""


def use_linked_schema(
    schema: str, whitespace: str | None, vocab: Vocabulary | None, max_tokens: int | None
) -> SchemaUse:
    """``use_schema`` for a schema a link carries: an unknown whitespace is the default
    and a schema over ``MAX_LINKED_SCHEMA`` characters is refused with its size."""
    if len(schema) > MAX_LINKED_SCHEMA:
        error = SchemaError(
            f"the linked schema has {len(schema):,} characters, more than a link carries "
            f"({MAX_LINKED_SCHEMA:,}): paste it into the JSON Schema box instead"
        )
        return SchemaUse(None, (), "", error_html(error))
    if whitespace not in WHITESPACE_CHOICES:
        whitespace = DEFAULT_WHITESPACE
    return use_schema(schema, whitespace, vocab, max_tokens)


def in_use(choice: SchemaChoice | None, pattern: str) -> SchemaChoice | None:
    """``choice`` while the Regex box still holds its regex, else None."""
    return choice if choice is not None and choice.regex == pattern else None


def mode_html(choice: SchemaChoice | None, pattern: str) -> str:
    """The note under the Regex box while it holds a schema's regex ("" otherwise)."""
    if in_use(choice, pattern) is None:
        return ""
    assert choice is not None
    # the schema and its whitespace ride along for the page's link (static/app.js)
    head = (
        f'<p class="schema-mode" data-schema="{escape(choice.schema, quote=True)}" '
        f'data-whitespace="{escape(choice.whitespace, quote=True)}" '
        f'data-path="{escape(choice.path)}">'
    )
    if choice.path == "grammar":
        return (
            f"{head}The JSON Schema takes the <b>grammar path</b> ({escape(choice.reason)}): "
            "no regex holds it, so the Regex box is empty and Generate runs llguidance's "
            f"mask for it (whitespace <code>{escape(choice.whitespace)}</code>), writes JSON "
            "and checks it against the schema. Type a regex and it is a plain regex run "
            "again.</p>"
        )
    return (
        f"{head}This regex is the JSON Schema's (whitespace "
        f"<code>{escape(choice.whitespace)}</code>): Generate writes JSON and checks it "
        "against the schema. Edit the regex and it is a plain regex again.</p>"
    )


def json_view_html(
    choice: SchemaChoice | None, text: str, done: bool = False, steps: Sequence[Any] = ()
) -> str:
    """The output as JSON (``json_stream_html``) for a schema run, "" for a plain regex
    run; ``choice`` is the schema in use (``in_use``). Under it, for a regex-path schema
    (whose character DFA has the drawing panel), the schema drawn by its structure, lit
    where the output is (``fsmviz.html.schema_structure.structure_html``), and with a finished run's
    ``steps`` lit at whichever step the page chooses; a grammar-path schema's structure is
    in the drawing panel instead (``grammar_panel``)."""
    if choice is None:
        return ""
    schema = json.loads(choice.schema) if done else None
    structure = ""  # a grammar-path schema's is in the drawing panel
    if choice.path != "grammar":
        structure = structure_html(choice.schema, text, streaming=not done, steps=steps)
    return (
        '<div class="json-view"><div class="json-head">The output as JSON'
        f"{' (streaming)' if not done else ''}</div>"
        f"{json_stream_html(text, schema, done)}"
        f"{structure}</div>"
    )


def grammar_note(choice: SchemaChoice) -> str:
    """What the drawing panel says for a grammar-path schema (it has no character DFA).

    >>> print(grammar_note(SchemaChoice('{"$ref": "#"}', "none", "", "grammar", "it recurses")))
    <div class="schema-grammar-note"><p>This JSON Schema runs on the <b>grammar path</b> (llguidance's exact mask): it recurses. No regex holds it, so there is no character DFA to draw: its structure is drawn here instead, lit where the output is.</p></div>
    """  # noqa: E501
    return (
        '<div class="schema-grammar-note"><p>This JSON Schema runs on the <b>grammar path</b> '
        f"(llguidance's exact mask): {escape(choice.reason)}. No regex holds it, so there is "
        "no character DFA to draw: its structure is drawn here instead, lit where the output "
        "is.</p></div>"
    )


def grammar_panel(
    choice: SchemaChoice,
    text: str | None = None,
    streaming: bool = False,
    steps: Sequence[Step] = (),
) -> str:
    """The drawing panel of a grammar-path schema: the note, then the schema's structure
    where a regex run has its DFA, lit at the place after ``text`` and, with a finished
    run's ``steps``, at whichever step is chosen (``fsmviz.html.schema_structure.structure_html``):
    the drawing stays beside the step controls while a run is stepped through.

    >>> choice = SchemaChoice('{"type": "array"}', "none", "", "grammar", "it is large")
    >>> html = grammar_panel(choice)
    >>> html.startswith(grammar_note(choice)), 'id="schema-structure"' in html
    (True, True)
    """
    return grammar_note(choice) + structure_html(choice.schema, text, streaming, steps)


def collapses_html(collapses: list[Any]) -> str:
    """Where the run's valid mass collapsed, each named by the schema's structure ("" if
    nowhere): the grammar doctor's words (``fsmviz.html.grammar.grammar_findings_html``)."""
    if not collapses:
        return ""
    return f'<div class="schema-collapses">{grammar_findings_html(collapses)}</div>'
