"""The doctor's findings as the page lists them: errors first, each with its suggestion,
and a fix the page can apply as an "Apply & run" button carrying it (``fixes``); a run's
fix only once the doctor has checked it. Every message escaped, its light Markdown read.
"""

from __future__ import annotations

from collections.abc import Sequence

from fsmviz.diagnose import Finding
from fsmviz.html.fixes import check_html, fix_json, fix_of
from fsmviz.html.fixes import offered as offered_fix
from fsmviz.html.text import change_html, esc, markdown_html, summarised

__all__ = ["LONG_SUGGESTION", "findings_html", "suggestion_html"]


def findings_html(
    findings: Sequence[Finding], *, selected: int | None = None, pattern: str | None = None
) -> str:
    """The doctor's findings, errors first, each with its suggestion; a finding with a fix
    the page can apply (``fixes.fix_of``) has an "Apply & run" button carrying it. With the
    ``pattern`` they concern, a long suggested pattern is shown by what it changes."""
    if not findings:
        return '<p class="empty">No problems found.</p>'
    items = []
    offered: dict[str, int] = {}  # a fix already offered: by the number of its finding
    for i, f in enumerate(findings):
        chosen = " selected" if i == selected else ""
        fix = offered_fix(f, findings)  # a run's fix only once checked (fixes.offered)
        key = fix_json(fix) if fix is not None else None
        if key is not None and key in offered:
            suggestion = (
                f'<div class="suggestion same">The same fix as finding {offered[key] + 1}.</div>'
            )
        else:
            suggestion = suggestion_html(f, pattern, findings)
            if key is not None:
                offered[key] = i
        items.append(
            f'<li class="finding {esc(f.severity)}{chosen}" data-finding="{i}">'
            f'<span class="severity">{esc(f.severity)}</span> '
            f'<span class="kind">{esc(f.kind.replace("_", " "))}</span>'
            f'<div class="message">{markdown_html(summarised(f.message))}</div>{suggestion}</li>'
        )
    return f'<ol class="findings">{"".join(items)}</ol>'


LONG_SUGGESTION = 120
"""A suggested pattern longer than this (a JSON Schema's regex runs to 1,500 characters) is
shown by the part it changes, the whole of it one click away."""


def suggestion_html(
    finding: Finding, pattern: str | None = None, among: Sequence[Finding] = ()
) -> str:
    """``Try: <pattern>`` (and the settings), with the button that applies it and runs;
    a run's fix (or one shared with a run finding ``among`` the others) only once checked,
    with its numbers (``fixes.offered``, ``fixes.check_html``)."""
    fix = fix_of(finding)
    if fix is None:
        return ""
    shown = ""
    if fix.pattern is not None:
        shown = f"<code>{esc(fix.pattern)}</code>"
        if pattern and len(fix.pattern) > LONG_SUGGESTION:
            shown = (
                f"{change_html(pattern, fix.pattern)}<details><summary>the whole pattern "
                f"({len(fix.pattern):,} characters)</summary>{shown}</details>"
            )
    chat = "" if fix.chat is None else f"the chat template {'on' if fix.chat else 'off'}"
    words = " with ".join(part for part in (shown, chat) if part)
    if offered_fix(finding, among) is None:  # a run's fix not checked, or no better
        return f'<div class="suggestion unchecked">{check_html(finding, words)}</div>'
    button = (
        f'<button type="button" class="apply" data-fix="{esc(fix_json(fix))}" '
        'title="keep this run as before, apply the fix, run it, and compare">'
        "Apply &amp; run</button>"
    )
    return f'<div class="suggestion">Try: {words} {button}{check_html(finding)}</div>'
