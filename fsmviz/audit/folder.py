"""An audit's output folder, written as the runs finish, so a killed audit loses nothing
it finished and a second call with the same folder takes up where it stopped::

    out/
      traces/<id>.json   one per finished run: the page's trace download (Trace.to_json)
      rows.jsonl         the ledger: one row per run as it finished (the last per id wins)
      runs.csv           one row per prompt, rewritten at the end of each call
      report.html        the report (``fsmviz.audit.html``)
      audit.json         the manifest: what made the folder (constraint, model, options)

A run is *done* when its trace file exists. Its row is appended to the ledger first and the
trace renamed into place after, so a done run always has its row; a row whose trace is
missing (killed between the two, or the trace deleted) is run again and its new row wins.
A failed request has a row and no trace: the next call tries it again.

Resuming is only sound into a folder made by the same audit: a folder's runs of another
constraint, model or options would be counted as this audit's. So the first call writes
``audit.json`` and a later call whose constraint, model or options differ is refused
(``FolderMismatch``, naming what differs), unless it is asked to start afresh (``fresh``:
the folder's runs, ledger and report deleted first). A folder from before manifests is
taken as it is, and gets one.
"""

from __future__ import annotations

import csv
import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fsmviz.audit.prompts import file_name
from fsmviz.audit.rows import AuditRow, disagreements_in, load_trace, row_of
from fsmviz.errors import InputError
from fsmviz.generation.trace import Trace
from fsmviz.printable import printable

__all__ = ["CSV_COLUMNS", "MANIFEST", "Folder", "FolderMismatch"]

MANIFEST = "audit.json"
"""The file that says what made an output folder (``Folder.claim``)."""

CSV_COLUMNS = ("id", "matched", "stop_reason", "tokens", "stall_step", "stall_state", "place",
               "field", "rule", "lowest_mass", "lowest_mass_step", "disagreements", "error",
               "attempts", "seconds", "trace_file", "prompt", "text")  # fmt: skip


class FolderMismatch(InputError):
    """An audit resumed into a folder another audit made (another constraint, model or
    options): the message names what differs and what to do instead."""


class Folder:
    """The output folder of one audit (created if missing). Thread-safe: the runs of an
    audit finish in several threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.traces = self.path / "traces"
        self.traces.mkdir(parents=True, exist_ok=True)
        self.ledger = self.path / "rows.jsonl"
        self._lock = threading.Lock()

    def claim(self, manifest: Mapping[str, Any], fresh: bool = False) -> None:
        """Make the folder this audit's: refuse one that ``audit.json`` says another audit
        made (``FolderMismatch``), unless ``fresh``, which first deletes the folder's runs;
        then write ``manifest`` (``constraint``, ``model``, ``options``: JSON values)."""
        path = self.path / MANIFEST
        if fresh:
            self._clear()
        elif path.is_file():
            try:
                theirs = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                theirs = {}
            differs = _differences(theirs if isinstance(theirs, dict) else {}, manifest)
            if differs:
                raise FolderMismatch(
                    f"the folder {printable(str(self.path))} holds another audit's runs: "
                    f"{'; '.join(differs)}. Resuming would count them as this audit's: give "
                    "--out a new folder, or pass --fresh (fresh=True) to delete its runs "
                    "and start over"
                )
        temporary = path.with_name(MANIFEST + ".part")
        temporary.write_text(json.dumps(manifest, indent=1, ensure_ascii=False), "utf-8")
        os.replace(temporary, path)

    def _clear(self) -> None:
        """Delete what earlier calls wrote (traces, ledger, table, report, manifest)."""
        for trace in self.traces.iterdir():
            if trace.is_file():
                trace.unlink()
        for name in ("rows.jsonl", "runs.csv", "report.html", MANIFEST):
            (self.path / name).unlink(missing_ok=True)

    def trace_path(self, ident: str) -> Path:
        return self.traces / file_name(ident)

    def done(self, ident: str) -> bool:
        return self.trace_path(ident).is_file()

    def rows(self) -> dict[str, AuditRow]:
        """The ledger's rows by id (the last for each; a line cut off by a kill is skipped)."""
        found: dict[str, AuditRow] = {}
        if not self.ledger.is_file():
            return found
        with self.ledger.open(encoding="utf-8", errors="replace") as source:
            for line in source:
                try:
                    row = AuditRow.from_dict(json.loads(line))
                except (ValueError, TypeError):
                    continue
                found[row.id] = row
        return found

    def done_row(self, ident: str, prompt: str, ledger: dict[str, AuditRow], placer, grammar):
        """The row of a done run: the ledger's, else rebuilt from its trace file."""
        row = ledger.get(ident)
        if row is not None and not row.failed:
            return row
        path = self.trace_path(ident)
        try:
            trace = load_trace(str(path))
        except (OSError, ValueError, TypeError, KeyError):
            return None  # unreadable: run it again
        return row_of(
            ident, prompt, trace, placer, disagreements=disagreements_in(trace),
            trace_file=self._relative(path), grammar=grammar,
        )  # fmt: skip

    def record(self, row: AuditRow, trace: Trace | None) -> AuditRow:
        """Save a finished run: its row in the ledger, then its trace (atomically)."""
        if trace is not None:
            path = self.trace_path(row.id)
            row = AuditRow.from_dict({**row.to_dict(), "trace_file": self._relative(path)})
        line = json.dumps(row.to_dict(), ensure_ascii=False) + "\n"
        with self._lock, self.ledger.open("a", encoding="utf-8") as ledger:
            ledger.write(line)
            ledger.flush()
            os.fsync(ledger.fileno())
        if trace is not None:
            temporary = path.with_name(path.name + f".{threading.get_ident()}.part")
            temporary.write_text(trace.to_json(indent=1), encoding="utf-8")
            os.replace(temporary, path)
        return row

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.path).as_posix()

    def write_csv(self, rows: list[AuditRow] | tuple[AuditRow, ...]) -> Path:
        path = self.path / "runs.csv"
        with path.open("w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(CSV_COLUMNS)
            for row in rows:
                values = row.to_dict()
                values["place"] = row.place
                if row.lowest_mass is not None:
                    values["lowest_mass"] = f"{row.lowest_mass:.6f}"
                values["seconds"] = f"{row.seconds:.3f}"
                writer.writerow(["" if values[c] is None else values[c] for c in CSV_COLUMNS])
        return path


def _differences(theirs: Mapping[str, Any], ours: Mapping[str, Any]) -> list[str]:
    """What differs between the folder's manifest and this audit's, in words.

    >>> _differences({"constraint": {"label": "regex a", "digest": "1"}, "model": "m",
    ...               "options": {"max_tokens": 32}},
    ...              {"constraint": {"label": "regex b", "digest": "2"}, "model": "m",
    ...               "options": {"max_tokens": 16}})
    ['the constraint (regex a there, regex b here)', 'max_tokens (32 there, 16 here)']
    """
    found = []
    mine, other = ours.get("constraint") or {}, theirs.get("constraint") or {}
    if mine.get("digest") != other.get("digest"):
        there, here = _short(other.get("label") or "unknown"), _short(mine.get("label", ""))
        if there == here:
            found.append(f"the constraint (another {here})")
        else:
            found.append(f"the constraint ({there} there, {here} here)")
    if theirs.get("model") != ours.get("model"):
        there = _short(str(theirs.get("model") or "unknown"))
        found.append(f"the model ({there} there, {_short(str(ours.get('model')))} here)")
    options, others = ours.get("options") or {}, theirs.get("options") or {}
    for name in sorted(set(options) | set(others)):
        if options.get(name) != others.get(name):
            found.append(f"{name} ({others.get(name)} there, {options.get(name)} here)")
    return found


def _short(text: str, limit: int = 60) -> str:
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
