"""``fsmviz.audit``: one constraint over many prompts, each run recorded, the whole summed up.

    prompts ──▶ at most ``concurrency`` runs at once ──▶ a row each ──▶ AuditReport
                 (threads: a server batches them;          │
                  the bundled model batches its passes)    └▶ out/: trace, ledger row

Each prompt runs through ``stream`` as it would alone, so a server's run is replayed
through the exact automaton and a local run is the recorded step loop; the audit adds only
the row (``fsmviz.audit.rows``) and the sums (``fsmviz.audit.report``). Prompts are read as
they are needed and each trace goes to disk (``out``) as soon as its run ends; only the
rows stay in memory (a few hundred bytes each), never the traces.

A request that fails (a server error, a timeout, a stream that breaks off midway) is tried
again up to ``retries`` times, then kept as a row with the message (stop reason
``failed``), never dropped: a run the server did not finish is not counted as one that
ended where it broke. A prompt fsmviz refuses (too long for the context) fails at once,
with its message.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fsmviz.audit.explain import doctor_findings, explain
from fsmviz.audit.folder import Folder
from fsmviz.audit.htmlreport import write_html
from fsmviz.audit.links import constraint_link
from fsmviz.audit.report import AuditReport, summarize
from fsmviz.audit.rows import AuditRow, Placer, Regex, failed_row, row_of
from fsmviz.errors import FsmvizError, InputError
from fsmviz.generation.trace import GenerationOptions
from fsmviz.printable import printable

__all__ = ["Progress", "audit", "target_of"]

RETRIES = 2
"""Further tries of a request that failed on the server's side."""
BACKOFF = 0.5
"""Seconds before the first retry; doubled before each next one."""
LOCAL_CONCURRENCY = 4
"""Runs at once on a local model (its forward passes are batched on one thread)."""
SERVER_CONCURRENCY = 8
"""Requests in flight at once to a server (it batches them)."""
MAX_CONCURRENCY = 256


@dataclass(frozen=True)
class Progress:
    """How far an audit has come: ``done`` prompts of ``total`` (None when not known),
    ``resumed`` of them found done in the output folder, ``failed`` so far."""

    done: int
    total: int | None
    resumed: int
    failed: int
    seconds: float


@dataclass(frozen=True)
class Target:
    """A constraint as the audit uses it: what ``stream`` takes (``run_with``), what names
    its places (``placer``), whether its states only count tokens (a grammar), and a label."""

    run_with: Any
    placer: Placer
    grammar: bool
    label: str
    link: tuple[tuple[str, str], ...] = ()
    """The query that puts the constraint back on the page (``fsmviz.audit.links``)."""
    doctor: Any = None
    """What ``fsmviz.diagnose`` takes to explain the failed runs: the regex, or the
    grammar (its findings name rules); None for a schema on the grammar path."""
    structure: tuple[str, ...] = ()
    """A schema's fields or a grammar's rules, in order (``AuditReport.structure``)."""

    @property
    def pattern(self) -> str | None:
        """The regex the runs are held to, if there is one."""
        return self.run_with if isinstance(self.run_with, str) else None


@dataclass(frozen=True)
class SchemaPlacer:
    """A schema's place: the field of the output being written (``json_fields``)."""

    def field(self, text: str) -> str | None:
        from fsmviz.schema.convert import json_fields

        found = json_fields(text)
        return found[-1].path if found else ""

    def rule(self, text: str) -> str | None:
        return None


@dataclass(frozen=True)
class RulePlacer:
    """A grammar's place: the rule on top of the parser's stack (``fsmviz.grammar.place``)."""

    grammar: Any

    def field(self, text: str) -> str | None:
        return None

    def rule(self, text: str) -> str | None:
        from fsmviz.grammar.network import build_network
        from fsmviz.grammar.place import place_of

        try:
            place = place_of(build_network(self.grammar), text, max_stacks=1)
        except (FsmvizError, RecursionError):
            return None
        return place.stacks[0].top.rule if place.stacks else None


def target_of(constraint: object) -> Target:
    """A regex (``str``), a compiled JSON Schema (``compile_schema``) or a ``Grammar`` as
    the audit runs it; ``InputError`` for anything else."""
    from fsmviz.grammar.tree import Grammar

    link = constraint_link(constraint)
    if isinstance(constraint, str):
        label = f"regex {constraint}"
        return Target(constraint, Regex(constraint), False, label, link, constraint)
    if isinstance(constraint, Grammar):
        label = f"{constraint.format} grammar, start {constraint.start}"
        rules = tuple(dict.fromkeys(rule.name for rule in constraint.rules))
        return Target(constraint, RulePlacer(constraint), True, label, link, constraint, rules)
    path = getattr(constraint, "path", None)
    if path in ("regex", "grammar") and hasattr(constraint, "schema"):
        run_with = constraint.regex if path == "regex" else constraint  # type: ignore[attr-defined]
        label = f"JSON Schema ({path} path)"
        doctor = run_with if path == "regex" else None
        fields = tuple(_fields(constraint.schema))  # type: ignore[attr-defined]
        return Target(run_with, SchemaPlacer(), path == "grammar", label, link, doctor, fields)
    raise InputError(
        "audit takes a constraint as a regex (a str), a compiled JSON Schema "
        "(fsmviz.compile_schema) or a grammar (fsmviz.compile_grammar)"
    )


def _fields(schema: object, pointer: str = "", depth: int = 0) -> Iterator[str]:
    """A schema's fields as JSON pointers, the whole value first (``""``), an array's
    items as ``/*`` (``heat.part_of`` names a stall's field so).

    >>> list(_fields({"properties": {"a": {"items": {"properties": {"b": {}}}}}}))
    ['', '/a', '/a/*', '/a/*/b']
    """
    yield pointer
    if not isinstance(schema, dict) or depth > 20:
        return
    for name, sub in (schema.get("properties") or {}).items():
        escaped = str(name).replace("~", "~0").replace("/", "~1")
        yield from _fields(sub, f"{pointer}/{escaped}", depth + 1)
    if isinstance(schema.get("items"), dict):
        yield from _fields(schema["items"], f"{pointer}/*", depth + 1)


def audit(
    model: Any,
    constraint: object,
    prompts: Iterable[str | tuple[str, str]],
    options: GenerationOptions | None = None,
    *,
    out: str | Path | None = None,
    concurrency: int | None = None,
    retries: int = RETRIES,
    total: int | None = None,
    progress: Callable[[Progress], None] | None = None,
    fresh: bool = False,
    **overrides: Any,
) -> AuditReport:
    """Run ``constraint`` over every prompt with ``model`` (a local model or
    ``fsmviz.connect``'s server) and report: counts, one row per prompt, the ranked places
    where runs stall.

    ``prompts``: strings (ids ``1``, ``2``...) or ``(id, prompt)`` pairs, read lazily.
    ``options``/keywords: ``generate``'s. ``out``: a folder for each run's trace, the
    ledger, ``runs.csv`` and ``report.html``; an audit into a folder that holds finished
    runs skips them (resumable); a folder another audit made (another constraint, model or
    options, its ``audit.json`` says) is refused, unless ``fresh``, which deletes its runs
    first. ``concurrency``: runs at once (default 8 on a server, 4 on a local model).
    ``retries``: further tries of a request the server failed. ``progress`` is called
    after each prompt (``total``: how many to expect, if known)."""
    opts = replace(options or GenerationOptions(), **overrides)
    target = target_of(constraint)
    server = getattr(model, "server_run", None) is not None
    concurrency = _checked(model, target, opts, server, concurrency, retries)
    from fsmviz.generation.generate import stream  # torch loads here, not at import

    folder = Folder(out) if out is not None else None
    if folder is not None:
        folder.claim(_manifest(model, constraint, opts), fresh=fresh)
    tally = _Tally(total, progress)

    def run_one(position: int, ident: str, prompt: str) -> None:
        row, trace = _run(stream, model, target, ident, prompt, opts, int(retries))
        if folder is not None:
            row = folder.record(row, trace)
        tally.finished(position, row)

    _run_all(_pairs(prompts), run_one, tally, folder, target, concurrency)
    return _report(tally, target, folder, server, opts, getattr(model, "vocab", None))


def _manifest(model: Any, constraint: object, opts: GenerationOptions) -> dict[str, Any]:
    """What makes an audit's runs comparable, for its folder's ``audit.json``: the
    constraint (its label and a digest of its full text), the model, the options that
    change what a run writes (not ``draft_tokens``: greedy output is the same)."""
    import hashlib
    import json
    from dataclasses import asdict

    from fsmviz.grammar.tree import Grammar

    if isinstance(constraint, str):
        text = f"regex\n{constraint}"
    elif isinstance(constraint, Grammar):
        text = f"grammar {constraint.format}\n{constraint.text}"
    else:
        schema = json.dumps(getattr(constraint, "schema", None), sort_keys=True, default=str)
        path, space = getattr(constraint, "path", ""), getattr(constraint, "whitespace", "")
        text = f"schema {path} {space}\n{schema}"
    served = getattr(model, "served", None)
    name = getattr(model, "name", None) or type(model).__name__
    return {
        "constraint": {
            "label": target_of(constraint).label,
            "digest": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
        },
        "model": f"{served} at {model.url}" if served is not None else str(name),
        "options": {k: v for k, v in asdict(opts).items() if k != "draft_tokens"},
    }


def _checked(
    model: Any,
    target: Target,
    opts: GenerationOptions,
    server: bool,
    concurrency: int | None,
    retries: int,
) -> int:
    """Refuse once, before any run, what would fail every run (a bad pattern, options a
    server cannot honour, bounds out of range); the concurrency to use. (The runs share
    one build of a regex's index: the engine's cache builds each key once, whoever asks.)"""
    if isinstance(target.run_with, str):  # a bad pattern refused once, not per prompt
        from fsmviz.automaton.dfa import compile_regex

        compile_regex(target.run_with)
    if server:  # options a server cannot honour, likewise
        model.server_run(target.run_with, opts)
    if concurrency is None:
        concurrency = SERVER_CONCURRENCY if server else LOCAL_CONCURRENCY
    if isinstance(concurrency, bool) or not 1 <= int(concurrency) <= MAX_CONCURRENCY:
        raise InputError(f"concurrency must be between 1 and {MAX_CONCURRENCY}, not {concurrency}")
    if isinstance(retries, bool) or not 0 <= int(retries) <= 10:
        raise InputError(f"retries must be between 0 and 10, not {retries}")
    return int(concurrency)


class _Tally:
    """The rows so far, by the prompt's position, and the counts the progress reports;
    ``finished`` is called from the runs' threads."""

    def __init__(self, total: int | None, progress: Callable[[Progress], None] | None) -> None:
        self.total = total
        self.progress = progress
        self.rows: dict[int, AuditRow] = {}
        self.done = self.resumed = self.failed = 0
        self.analysis = 0.0  # fsmviz's own seconds in this call's runs (not the resumed)
        self.started = time.perf_counter()
        self._lock = threading.Lock()

    def finished(self, position: int, row: AuditRow, resumed: bool = False) -> None:
        with self._lock:
            self.rows[position] = row
            self.done += 1
            self.resumed += resumed
            self.failed += row.failed
            self.analysis += 0.0 if resumed else row.analysis_seconds or 0.0
            report = Progress(self.done, self.total, self.resumed, self.failed,
                              time.perf_counter() - self.started)  # fmt: skip
        if self.progress is not None:
            self.progress(report)

    def ordered(self) -> list[AuditRow]:
        return [self.rows[k] for k in sorted(self.rows)]


def _run_all(
    pairs: Iterable[tuple[str, str]],
    run_one: Callable[[int, str, str], None],
    tally: _Tally,
    folder: Folder | None,
    target: Target,
    concurrency: int,
) -> None:
    """Each prompt once: found done in ``folder`` (resumed), or run on the pool with at
    most ``concurrency`` in flight; prompts are read only as slots free up."""
    ledger = folder.rows() if folder is not None else {}
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="audit") as pool:
        pending: set[Future] = set()
        try:
            for position, (ident, prompt) in enumerate(pairs):
                if folder is not None and folder.done(ident):
                    row = folder.done_row(ident, prompt, ledger, target.placer, target.grammar)
                    if row is not None:
                        tally.finished(position, row, resumed=True)
                        continue
                while len(pending) >= concurrency:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    _raise_any(done)
                pending.add(pool.submit(run_one, position, ident, prompt))
            done, pending = wait(pending)
            _raise_any(done)
        except BaseException:
            for future in pending:
                future.cancel()
            raise


def _report(
    tally: _Tally,
    target: Target,
    folder: Folder | None,
    server: bool,
    opts: GenerationOptions,
    vocab: Any,
) -> AuditReport:
    """The rows summed up, with the doctor's findings that explain them (a regex or a
    grammar), and written to ``folder`` (``runs.csv``, ``report.html``)."""
    ordered = tally.ordered()
    pattern = target.pattern
    failing = any(not row.matched and not row.failed for row in ordered)
    doctor = target.doctor if failing else None
    found = doctor_findings(doctor, vocab, opts.max_tokens) if doctor is not None else []
    report = summarize(
        ordered,
        target.label,
        resumed=tally.resumed,
        wall_seconds=time.perf_counter() - tally.started,
        analysis_seconds=tally.analysis if server else None,  # the resumed ran before
        out=str(folder.path) if folder is not None else None,
        describe=_state_words(pattern) if pattern is not None else None,
        pattern=pattern,
        options=opts,
        link=target.link,
        findings=explain(found, ordered),
        structure=target.structure,
    )
    if folder is not None:
        folder.write_csv(report.rows)
        write_html(report, folder.path / "report.html")
    return report


def _state_words(pattern: str) -> Callable[[str], str]:
    """A regex's place (``state 4``) in words: ``after `a@a` ``, a shortest readable text
    that leads to it (the doctor's ``example_prefixes``), computed once, when first asked."""
    prefixes: list[str] = []

    def describe(place: str) -> str:
        number = place.removeprefix("state ")
        if not number.isdigit():
            return ""
        if not prefixes:
            from fsmviz.automaton.dfa import compile_regex
            from fsmviz.diagnose.examples import example_prefixes

            prefixes.extend(example_prefixes(compile_regex(pattern)))
        state = int(number)
        if state >= len(prefixes):
            return "inside a multi-byte character"
        from fsmviz.diagnose.text import after

        return after(prefixes[state])

    return describe


def _raise_any(done: set[Future]) -> None:
    for future in done:
        future.result()  # a bug in the audit itself: not a failed request


def _pairs(prompts: Iterable[str | tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """(id, prompt) for each prompt; ids unique."""
    seen: set[str] = set()
    for number, item in enumerate(prompts, start=1):
        if isinstance(item, str):
            ident, prompt = str(number), item
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
            ident, prompt = str(item[0]), item[1]
        else:
            raise InputError(
                f"prompt {number} is neither text nor an (id, prompt) pair: give strings or "
                "pairs such as ('q1', 'What year is it?')"
            )
        if ident in seen:
            raise InputError(f"the id {printable(ident)} is used twice: give each prompt its own")
        seen.add(ident)
        yield ident, prompt


def _run(
    stream: Callable[..., Any],
    model: Any,
    target: Target,
    ident: str,
    prompt: str,
    opts: GenerationOptions,
    retries: int,
) -> tuple[AuditRow, Any]:
    """One prompt's run: (its row, its trace), or (a failed row, None) after ``retries``
    further tries of a request the server failed."""
    from fsmviz.generation.server import ServerError

    started = time.perf_counter()
    attempts = 0
    while True:
        attempts += 1
        try:
            steps = stream(model, target.run_with, prompt, opts)
            for _ in steps:
                pass
            trace = steps.trace()
            broke = getattr(getattr(steps, "_run", None), "dropped", None)
            if broke is not None:  # the server's stream broke off (a timeout, a reset):
                raise ServerError(broke)  # a failed request, not a run that ended there
        except ServerError as error:
            if attempts <= retries:
                time.sleep(BACKOFF * 2 ** (attempts - 1))
                continue
            return failed_row(ident, prompt, str(error), attempts, _since(started)), None
        except FsmvizError as error:  # a prompt fsmviz refuses: trying again cannot help
            return failed_row(ident, prompt, str(error), attempts, _since(started)), None
        break
    run = getattr(steps, "_run", None)  # the server run's extras (fsmviz.generation.server)
    replay = getattr(run, "replay_seconds", None)
    begun = time.perf_counter()
    row = row_of(
        ident,
        prompt,
        trace,
        target.placer,
        disagreements=len(getattr(run, "disagreements", ()) or ()),
        attempts=attempts,
        grammar=target.grammar,
    )
    if replay is not None:
        row = replace(row, analysis_seconds=replay + time.perf_counter() - begun)
    return row, trace


def _since(started: float) -> float:
    return time.perf_counter() - started
