"""An audit's report as one plain HTML file: counts first, then the places where runs
stall, ranked, then one row per run linked to its trace file. Self-contained (its style
inline, no script, no network) and every piece of text escaped: prompts and outputs are
the user's and the model's, never markup. No plotly: the engine stays free of it.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from urllib.parse import quote

from fsmviz.audit.report import AuditReport
from fsmviz.audit.rows import AuditRow

__all__ = ["report_html", "write_html"]

STYLE = """body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 6px;
text-align:left;vertical-align:top}th{background:#f3f3f3}.n{text-align:right}
.bad{color:#a00}.ok{color:#070}code{white-space:pre-wrap;word-break:break-all}"""
SHOWN_ROWS = 10_000
"""Runs listed at most (runs.csv has every one)."""


def _cell(value: object, numeric: bool = False) -> str:
    text = "" if value is None else value if isinstance(value, str) else str(value)
    return f'<td class="n">{escape(text)}</td>' if numeric else f"<td>{escape(text)}</td>"


def report_html(report: AuditReport) -> str:
    """The report as an HTML document (see the module docstring): its sections in the
    order a reader wants them."""
    out = _head(report) + _counts(report) + _places(report) + _runs(report)
    out.append("</body></html>\n")
    return "\n".join(out)


def _head(report: AuditReport) -> list[str]:
    """The document's head, the constraint and the one-line summary."""
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
        "<th>mean lowest valid mass</th><th>for example</th></tr>",
    ]
    for p in report.places:
        mass = "" if p.mean_mass is None else f"{p.mean_mass:.3f}"
        place = f"{p.place} ({p.note})" if p.note else p.place
        out.append(
            f"<tr>{_cell(place)}{_cell(p.stalled, True)}{_cell(p.runs, True)}"
            f"{_cell(mass, True)}{_cell(', '.join(p.examples))}</tr>"
        )
    out.append("</table>")
    return out


def _runs(report: AuditReport) -> list[str]:
    """One row per run (at most ``SHOWN_ROWS``), its id linked to its trace file."""
    out = [
        "<h2>Runs</h2>",
        "<table><tr><th>id</th><th>matched</th><th>stop</th><th>tokens</th><th>stalled at</th>"
        "<th>lowest valid mass</th><th>disagreements</th><th>prompt</th><th>output or error</th>"
        "</tr>",
    ]
    out += [_run_row(row) for row in report.rows[:SHOWN_ROWS]]
    out.append("</table>")
    if len(report.rows) > SHOWN_ROWS:
        out.append(f"<p>… and {len(report.rows) - SHOWN_ROWS:,} more in runs.csv.</p>")
    return out


def _run_row(row: AuditRow) -> str:
    """One run's table row."""
    ident = escape(row.id)
    if row.trace_file:
        ident = f'<a href="{escape(quote(row.trace_file))}">{ident}</a>'
    where = row.place if row.stall_step is None else f"step {row.stall_step}, {row.place}"
    low = "" if row.lowest_mass is None else f"{row.lowest_mass:.3f} (step {row.lowest_mass_step})"
    verdict = '<td class="ok">yes</td>' if row.matched else '<td class="bad">no</td>'
    return (
        f"<tr><td>{ident}</td>{verdict}{_cell(row.stop_reason)}{_cell(row.tokens, True)}"
        f"{_cell(where)}{_cell(low)}{_cell(row.disagreements, True)}{_cell(row.prompt)}"
        f"<td><code>{escape(row.error or row.text)}</code></td></tr>"
    )


def write_html(report: AuditReport, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(report_html(report), encoding="utf-8")
    return path
