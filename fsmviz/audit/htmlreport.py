"""An audit's report as one plain HTML file, in the order a team lead reads it: the counts;
the stalls drawn as a heat map on the regex's DFA (``fsmviz.audit.heat``); the places where
runs stall, ranked, each with its valid-mass distribution; the doctor's findings that
explain the most failed runs, with their rewrites (``fsmviz.audit.explain``); then one row
per run, linked to its trace file and to the page with that run loaded
(``fsmviz.audit.links``). Self-contained (its style inline, no script, no network) and
every piece of text escaped: prompts and outputs are the user's and the model's, never
markup. Its charts are drawn in HTML and SVG, not plotly: the engine stays free of it, and
the file opens anywhere without a script.

The page's address in the run links: ``page`` (``""`` on the page itself: the links then
load the run in place), else ``$FSMVIZ_PAGE_URL``, else the app's default local address.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from html import escape
from pathlib import Path
from urllib.parse import quote

from fsmviz.audit.links import run_link
from fsmviz.audit.report import AuditReport
from fsmviz.audit.rows import SHOWN_CHARS, AuditRow

__all__ = ["DEFAULT_PAGE", "report_fragment", "report_html", "write_html"]

DEFAULT_PAGE = "http://127.0.0.1:7860/"
"""Where ``python app.py`` listens by default: the run links of a report file point here."""

STYLE = """body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 6px;
text-align:left;vertical-align:top;overflow-wrap:break-word}th{background:#f3f3f3;white-space:nowrap}
.n{text-align:right;white-space:nowrap}
.bad{color:#a00}.ok{color:#070}code{white-space:pre-wrap;word-break:break-all}
.heat svg{max-width:100%;height:auto;max-height:60vh}"""
BAR = "display:inline-block;width:6px;margin-right:1px;vertical-align:bottom;background:"
"""A bar of a valid-mass distribution, styled inline (the report also goes inside a page)."""
SHOWN_ROWS = 10_000
"""Runs listed at most (runs.csv has every one)."""


def _cell(value: object, numeric: bool = False) -> str:
    text = "" if value is None else value if isinstance(value, str) else str(value)
    return f'<td class="n">{escape(text)}</td>' if numeric else f"<td>{escape(text)}</td>"


def report_html(
    report: AuditReport,
    page: str | None = None,
    *,
    prompts: Mapping[str, str] | None = None,
    traces: str = "",
) -> str:
    """The report as an HTML document (see the module docstring): its sections in the
    order a reader wants them. ``prompts``: the whole prompt of each id where the rows keep
    only its start and no trace file has it; ``traces``: put before each trace file's path
    in its link (the folder's address when the report is not read from the folder)."""
    page = os.environ.get("FSMVIZ_PAGE_URL", DEFAULT_PAGE) if page is None else page
    out = _head(report) + _body(report, page, prompts or {}, traces)
    out.append("</body></html>\n")
    return "\n".join(out)


def report_fragment(
    report: AuditReport,
    page: str = "",
    *,
    prompts: Mapping[str, str] | None = None,
    traces: str = "",
) -> str:
    """The report's sections as one ``<div class="audit-report">`` to put inside a page (no
    document, no style sheet: it takes the page's); run links load the run on ``page``."""
    parts = [
        '<div class="audit-report">',
        f"<p>Constraint: <code>{escape(report.constraint)}</code></p>",
        f"<p><b>{escape(report.summary())}</b></p>",
        *_body(report, page, prompts or {}, traces),
        "</div>",
    ]
    return "\n".join(parts)


def _body(report: AuditReport, page: str, prompts: Mapping[str, str], traces: str) -> list[str]:
    out = _counts(report) + _heat(report) + _places(report) + _findings(report)
    return out + _runs(report, page, prompts, traces)


def _heat(report: AuditReport) -> list[str]:
    """The regex's DFA, each state filled by the runs that stalled there; none for a
    schema, whose places are its fields (its regex's DFA, a hundred states of JSON
    punctuation and whitespace, drew as an unreadable strip)."""
    if report.structure and report.rows:
        return _parts(report)
    if report.pattern is None or not report.rows:
        return []
    if any(row.field is not None for row in report.rows):
        return []
    from fsmviz.audit.heat import heat_svg

    svg, words = heat_svg(report.pattern, report.rows)
    out = ["<h2>Where runs stall, on the DFA</h2>", f"<p>{escape(words)}</p>"]
    if svg is not None:
        out.append(f'<div class="heat" style="max-width:100%;overflow:auto">{svg}</div>')
    return out


def _parts(report: AuditReport) -> list[str]:
    """A schema's fields (indented by depth) or a grammar's rules, each filled by the runs
    that stalled there (``heat.parts_heat``): the structure drawn as a heat map."""
    from fsmviz.audit.heat import DARK, parts_heat

    heat = parts_heat(report.structure, report.rows)
    fields = any(row.field is not None for row in report.rows)
    stalled = any(n for _, n, _, _ in heat)
    what = ("runs that did not match and stalled there" if stalled
            else "runs whose lowest valid mass was there (every run matched)")  # fmt: skip
    kind = ("field", "fields") if fields else ("rule", "rules")
    out = [f"<h2>Where runs stall, on the {kind[1]}</h2>",
           f"<p>Each {kind[0]} is filled by the {what}.</p>",
           '<ul class="parts" style="list-style:none;padding-left:0">']  # fmt: skip
    most = max((n if stalled else r for _, n, r, _ in heat), default=0) or 1
    for part, n, r, fill in heat:
        depth = part.count("/") - 1 if fields and part else 0
        name = (part or "/") if fields else part
        ink = "#fff" if (n if stalled else r) / most > DARK else "inherit"
        out.append(
            f'<li style="margin-left:{max(depth, 0) * 1.5}em">'
            f'<code style="background:{fill};color:{ink};padding:0 .4em">{escape(name)}</code>'
            f" {n} not matched, {r} runs</li>"
        )
    return [*out, "</ul>"]


def _bars(bins: tuple[int, ...]) -> str:
    """A place's valid-mass distribution as ten small bars, [0, 0.1) on the left."""
    if not any(bins):
        return ""
    top = max(bins)
    tip = ", ".join(
        f"{k / len(bins):.1f}-{(k + 1) / len(bins):.1f}: {n}" for k, n in enumerate(bins)
    )
    bars = "".join(
        f'<i style="{BAR}#3a7bd5;height:{max(1, round(24 * n / top))}px"></i>'
        if n
        else f'<i style="{BAR}#ddd;height:1px"></i>'
        for n in bins
    )
    return f'<span class="mass-bars" title="{escape(tip)}">{bars}</span>'


def _findings(report: AuditReport) -> list[str]:
    """The doctor's findings that explain failed runs, most first, with their rewrites."""
    if not report.findings:
        return []
    out = [
        "<h2>What the doctor says</h2>",
        "<p>The doctor's findings on the constraint (<code>fsmviz diagnose</code>), ranked by "
        "the runs that did not match they explain: a run stalled in a state (or a grammar's "
        "rule) the finding points at, or stopped the way it says.</p>",
        "<table><tr><th>runs explained</th><th>finding</th><th>rewrite</th>"
        "<th>for example</th></tr>",
    ]
    for e in report.findings:
        fix = f"<code>{escape(e.suggestion)}</code>" if e.suggestion else ""
        if e.settings:
            fix += escape(" or run with " + ", ".join(f"{k}={v}" for k, v in e.settings))
        out.append(
            f"<tr>{_cell(e.explains, True)}<td><b>{escape(e.kind)}</b> ({escape(e.severity)}): "
            f"{escape(e.message)}</td><td>{fix}</td>{_cell(', '.join(e.examples))}</tr>"
        )
    out.append("</table>")
    return out


def _head(report: AuditReport) -> list[str]:
    """The document's head, its title, the constraint and the one-line summary."""
    return [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>fsmviz audit: {escape(report.constraint)}</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>fsmviz audit</h1>",
        f"<p>Constraint: <code>{escape(report.constraint)}</code></p>",
        f"<p><b>{escape(report.summary())}</b></p>",
    ]


def _counts(report: AuditReport) -> list[str]:
    """The counts a team lead reads first, and the call's time."""
    out = ["<h2>Counts</h2><table><tr><th>what</th><th>runs</th></tr>"]
    counts = [("prompts", report.total), ("matched", report.matched)]
    counts += [(f"stopped: {reason}", n) for reason, n in report.stop_reasons]
    counts += [("with engine disagreements", report.disagreed), ("failed requests", report.failed)]
    counts += [("found done and not redone", report.resumed)]
    out += [f"<tr>{_cell(what)}{_cell(n, True)}</tr>" for what, n in counts]
    out.append("</table>")
    timing = f"{report.wall_seconds:.1f} s"
    if report.analysis_share is not None:
        timing += f"; fsmviz's analysis {report.analysis_share:.1%} of it"
    out.append(f"<p>This call took {escape(timing)}.</p>")
    return out


def _places(report: AuditReport) -> list[str]:
    """The places where runs stall, ranked."""
    out = [
        "<h2>Where runs stall</h2>",
        "<p>A run that does not match stalls at its last step; one that matches at its step "
        "of lowest valid mass (the model's own probability of what was allowed).</p>",
        "<table><tr><th>place</th><th>not matched there</th><th>runs stalling there</th>"
        "<th>mean lowest valid mass</th><th>its distribution (0 to 1)</th>"
        "<th>for example</th></tr>",
    ]
    for p in report.places:
        mass = "" if p.mean_mass is None else f"{p.mean_mass:.3f}"
        place = f"{p.place} ({p.note})" if p.note else p.place
        out.append(
            f"<tr>{_cell(place)}{_cell(p.stalled, True)}{_cell(p.runs, True)}"
            f"{_cell(mass, True)}<td>{_bars(p.mass_bins)}</td>{_cell(', '.join(p.examples))}</tr>"
        )
    out.append("</table>")
    return out


def _runs(report: AuditReport, page: str, prompts: Mapping[str, str], traces: str) -> list[str]:
    """One row per run (at most ``SHOWN_ROWS``), its id linked to its trace file and to the
    page with the run loaded."""
    out = [
        "<h2>Runs</h2>",
        "<table><tr><th>id</th><th>on the page</th><th>matched</th><th>stop</th><th>tokens</th>"
        "<th>stalled at</th><th>lowest valid mass</th><th>disagreements</th><th>prompt</th>"
        "<th>output or error</th></tr>",
    ]
    out += [
        _run_row(row, _link(report, row, page, prompts.get(row.id)), traces)
        for row in report.rows[:SHOWN_ROWS]
    ]
    out.append("</table>")
    if len(report.rows) > SHOWN_ROWS:
        out.append(f"<p>… and {len(report.rows) - SHOWN_ROWS:,} more in runs.csv.</p>")
    return out


def _link(report: AuditReport, row: AuditRow, page: str, whole: str | None) -> str | None:
    """The page's address with this run loaded and its stalled step chosen (its whole
    prompt: ``whole``, else read back from its trace file where the row keeps only its
    start)."""
    if report.options is None or not report.link:
        return None
    prompt = whole if whole is not None else row.prompt
    if whole is None and len(prompt) >= SHOWN_CHARS and report.out and row.trace_file:
        try:
            saved = Path(report.out, row.trace_file).read_text(encoding="utf-8")
            prompt = str(json.loads(saved).get("prompt", prompt))
        except (OSError, ValueError):
            return None
    elif len(prompt) >= SHOWN_CHARS:
        return None  # cut: a link would run another prompt
    return run_link(page, report.link, report.options, prompt, row.stall_step)


def _run_row(row: AuditRow, link: str | None = None, traces: str = "") -> str:
    """One run's table row."""
    ident = escape(row.id)
    opened = "<td></td>"  # no link: a constraint or prompt too long for one
    if link:
        opened = f'<td><a href="{escape(link)}" target="_blank" rel="noopener">open</a></td>'
    if row.trace_file:
        ident = f'<a href="{escape(traces + quote(row.trace_file))}">{ident}</a>'
    where = row.place if row.stall_step is None else f"step {row.stall_step}, {row.place}"
    low = "" if row.lowest_mass is None else f"{row.lowest_mass:.3f} (step {row.lowest_mass_step})"
    verdict = '<td class="ok">yes</td>' if row.matched else '<td class="bad">no</td>'
    return (
        f"<tr><td>{ident}</td>{opened}{verdict}{_cell(row.stop_reason)}{_cell(row.tokens, True)}"
        f"{_cell(where)}{_cell(low)}{_cell(row.disagreements, True)}{_cell(row.prompt)}"
        f"<td><code>{escape(row.error or row.text)}</code></td></tr>"
    )


def write_html(report: AuditReport, path: str | Path, page: str | None = None) -> Path:
    path = Path(path)
    path.write_text(report_html(report, page), encoding="utf-8")
    return path
