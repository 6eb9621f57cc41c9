"""A JSON Schema run's views: the output as JSON while it streams (the field being written
lit, then whether it parses and validates), the schema doctor's findings with a fix button
each, and which engine gets the schema right. Every piece of user text and model output
escaped; the page (``fsmviz.app.schema_page``) lays them out and wires the buttons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from fsmviz.diagnose.schema import ARRAY_BOUND, DIGITS_BOUND, STRING_BOUND, SchemaFinding
from fsmviz.html.text import code_spans
from fsmviz.schema.convert import check_json, json_fields

__all__ = ["engines_html", "fix_label", "json_stream_html", "schema_findings_html"]


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
