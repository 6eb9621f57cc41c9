"""The Audit view (page id ``audit``): a file of prompts in, the report of one constraint
over all of them out (``fsmviz.audit``), on the bundled model or a server the operator
configured (its ``backend`` menu, ``audit-backend``: ``fsmviz.app.backend``; the server's
requests go concurrently and it batches them; the page names the server, never its URL,
and each run's link carries ``backend=NAME``).

The constraint is the Generate tab's regex, or a JSON Schema or grammar typed here. The
runs go through ``fsmviz.audit`` into a fresh run folder in Gradio's cache
(``fsmviz.app.scratch``: swept after ``--file-ttl``); the page shows the report's
sections (``report_fragment``) with each run linked to the Generate (or Grammar) tab with
that run loaded, and offers ``report.html`` and ``runs.csv`` to download.

Bounds, for a public Space: the file at most ``MAX_FILE_BYTES``, at most ``MAX_PROMPTS``
prompts an audit, ``MAX_AUDIT_TOKENS`` tokens a run, and ``VISITOR_PROMPTS`` prompts per
visitor in ``VISITOR_WINDOW`` seconds (``Quota``, kept for ``VISITORS`` visitors at most).
More is refused with a message that says so and names the command line, which has none of
these bounds.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gradio as gr

from fsmviz.app.backend import BUNDLED, backend_menu, run_source, server_names
from fsmviz.errors import FsmvizError, InputError
from fsmviz.html.charts import stall_figure
from fsmviz.html.text import error_html

if TYPE_CHECKING:
    from fsmviz.generation.trace import GenerationOptions

__all__ = [
    "KINDS",
    "AuditInputs",
    "MAX_FILE_BYTES",
    "MAX_PROMPTS",
    "Quota",
    "audit_constraint",
    "audit_prompts",
    "build_audit_tab",
    "on_audit",
]

MAX_FILE_BYTES = 250_000
"""The largest prompts file the page takes (``fsmviz.app.server.MAX_UPLOAD`` lets it in)."""
MAX_PROMPTS = 20
"""Prompts one audit on the page runs (``python -m fsmviz audit``: no bound)."""
MAX_AUDIT_TOKENS = 64
"""The most tokens a run of a page audit may write."""
MAX_CONSTRAINT = 20_000
"""Characters of a JSON Schema or grammar typed here (as a link carries)."""
VISITOR_PROMPTS = 100
"""Prompts one visitor may audit in ``VISITOR_WINDOW`` seconds."""
VISITOR_WINDOW = 3600.0
VISITORS = 10_000
"""Visitors whose use the quota remembers (the least recent forgotten first)."""
KINDS = ("regex (the Generate tab's)", "JSON Schema", "grammar")
EMPTY = (
    '<p class="empty">Upload a prompts file (JSON Lines, <code>{"prompt": "...", "id": '
    '"..."}</code> per line, or one prompt per line) and press Audit: every prompt runs '
    "under the constraint, and the report says how many matched and where the others "
    "stalled.</p>"
)


class Quota:
    """Prompts audited per visitor in a sliding ``window`` (seconds): ``take`` counts ``n``
    more or refuses them. Thread-safe; remembers at most ``visitors`` visitors.

    >>> q = Quota(limit=5, window=60.0)
    >>> q.take("a", 3, now=0.0), q.take("b", 5, now=0.0)
    (2, 0)
    >>> q.take("a", 3, now=1.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    fsmviz.errors.InputError: this page audits at most 5 prompts per visitor per hour; 2 are left...
    >>> q.take("a", 3, now=61.0)
    2
    """

    def __init__(self, limit: int, window: float, visitors: int = VISITORS) -> None:
        self.limit = limit
        self.window = window
        self.visitors = visitors
        self._used: OrderedDict[str, list[tuple[float, int]]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, visitor: str, n: int, now: float | None = None) -> int:
        """Count ``n`` prompts for ``visitor``; what is left after them. ``InputError``
        (nothing counted) when they are more than what is left."""
        now = time.monotonic() if now is None else now
        with self._lock:
            used = [(t, k) for t, k in self._used.pop(visitor, []) if now - t < self.window]
            left = self.limit - sum(k for _, k in used)
            if n > left:
                self._used[visitor] = used
                raise InputError(
                    f"this page audits at most {self.limit} prompts per visitor per hour; "
                    f"{left} are left for now: audit fewer, or run `python -m fsmviz audit` "
                    "on your own machine, which has no such bound"
                )
            self._used[visitor] = [*used, (now, n)]
            while len(self._used) > self.visitors:
                self._used.popitem(last=False)
            return left - n


QUOTA = Quota(VISITOR_PROMPTS, VISITOR_WINDOW)


def audit_constraint(kind: str, text: str, regex: str) -> object:
    """The constraint to audit: the Generate tab's ``regex``, or ``text`` compiled as a
    JSON Schema or a grammar (``kind`` is one of ``KINDS``)."""
    import fsmviz

    if kind == KINDS[0]:
        if not regex:
            raise InputError("the Generate tab's Regex box is empty: type a regex there first")
        return regex
    what = "JSON Schema" if kind == KINDS[1] else "grammar"
    if not (text or "").strip():
        raise InputError(f"the {what} box is empty: type the {what} to audit")
    if len(text) > MAX_CONSTRAINT:
        raise InputError(
            f"the {what} has {len(text):,} characters, more than this page takes "
            f"({MAX_CONSTRAINT:,}): audit it with `python -m fsmviz audit`"
        )
    if kind == KINDS[2]:
        return fsmviz.compile_grammar(text)
    try:
        schema = json.loads(text)
    except ValueError as error:
        raise InputError(
            f"the JSON Schema is not JSON (line {getattr(error, 'lineno', '?')}, column "
            f"{getattr(error, 'colno', '?')}): {getattr(error, 'msg', error)}"
        ) from None
    return fsmviz.compile_schema(schema)


def audit_prompts(path: str | None) -> list[tuple[str, str]]:
    """The (id, prompt) pairs of the uploaded file at ``path``, within the page's bounds."""
    from fsmviz.audit.prompts import read_prompts

    if not path:
        raise InputError("upload a prompts file first (.jsonl or .txt, one prompt a line)")
    size = Path(path).stat().st_size
    if size > MAX_FILE_BYTES:
        raise InputError(
            f"the prompts file has {size:,} bytes, more than this page takes "
            f"({MAX_FILE_BYTES:,}): audit it with `python -m fsmviz audit`"
        )
    pairs: list[tuple[str, str]] = []
    for pair in read_prompts(path):
        if len(pairs) == MAX_PROMPTS:
            raise InputError(
                f"the file holds more than {MAX_PROMPTS} prompts, the most this page audits "
                "at once: keep the first ones, or run `python -m fsmviz audit` for them all"
            )
        pairs.append(pair)
    if not pairs:
        raise InputError("the prompts file holds no prompts (blank lines are skipped)")
    return pairs


def progress_html(done: int, total: int) -> str:
    """The line shown while the audit runs."""
    return f'<p class="audit-progress">Auditing: {done} of {total} prompts done…</p>'


@dataclass(frozen=True)
class AuditInputs:
    """What one audit reads from the page, read once and handed down whole (the Audit
    button's inputs, in this order, as ``handlers.RunInputs`` is the Generate tab's).

    >>> inputs = AuditInputs("p.txt", "Regex (Generate tab)", "", "[0-9]+", 200, 0, None, True)
    >>> inputs.options().max_tokens, inputs.options().seed, inputs.server
    (64, 0, None)
    """

    path: str | None
    """The uploaded prompts file (None: none uploaded)."""
    kind: str
    """Where the constraint comes from (``KINDS``)."""
    text: str
    """A JSON Schema or grammar typed on the tab."""
    regex: str
    """The Generate tab's Regex box."""
    max_tokens: float = 24
    temperature: float = 0.0
    seed: float | None = 0
    chat: bool = True
    backend: str | None = None
    """The tab's model menu: the bundled model (None or ``BUNDLED``) or a server's name."""

    def options(self) -> GenerationOptions:
        """The decoding options, ``max_tokens`` held to ``MAX_AUDIT_TOKENS``."""
        from fsmviz.generation.trace import GenerationOptions

        return GenerationOptions(
            max_tokens=min(int(self.max_tokens), MAX_AUDIT_TOKENS),
            temperature=float(self.temperature),
            seed=int(self.seed or 0),
            chat=bool(self.chat),
        )

    @property
    def server(self) -> str | None:
        """The configured server's name, or None for the bundled model."""
        return self.backend if self.backend and self.backend != BUNDLED else None


def on_audit(
    models: Any, inputs: AuditInputs, visitor: str, progress: Any = None
) -> Iterator[tuple[str, Any, Any]]:
    """Audit the uploaded prompts: (the view's HTML, the files to download, the chart) as
    it goes, the report at the end; a bad input is a message, not an exception."""
    try:
        constraint = audit_constraint(inputs.kind, inputs.text, inputs.regex)
        pairs = audit_prompts(inputs.path)
        options = inputs.options()
        QUOTA.take(visitor or "anonymous", len(pairs))
        model = run_source(models, inputs.backend).get(timeout=600)
    except (FsmvizError, ValueError) as error:
        yield error_html(error), None, None
        return
    yield progress_html(0, len(pairs)), None, None
    yield from _audited(model, constraint, pairs, options, progress, inputs.server)


def _audited(
    model, constraint, pairs, options, progress, server=None
) -> Iterator[tuple[str, Any, Any]]:
    """Run the audit in a thread of its own and report its progress from this one (Gradio's
    progress belongs to the event's thread); then the report and its files. ``server``:
    the configured server's name, which each run's link carries."""
    from dataclasses import replace

    from fsmviz.app.scratch import run_folder
    from fsmviz.audit import audit
    from fsmviz.audit.htmlreport import report_fragment

    folder = run_folder()
    done: queue.Queue[Any] = queue.Queue()

    def work() -> None:
        try:
            done.put(audit(model, constraint, pairs, options, out=folder, total=len(pairs),
                           progress=lambda p: done.put(p.done)))  # fmt: skip
        except BaseException as error:  # handed to the event's thread, raised or shown there
            done.put(error)

    threading.Thread(target=work, name="audit-page", daemon=True).start()
    while True:
        item = done.get()
        if isinstance(item, int):
            if progress is not None:
                progress((item, len(pairs)), desc="audit", unit="prompts")
            yield progress_html(item, len(pairs)), None, None
            continue
        if isinstance(item, (FsmvizError, ValueError)):
            yield error_html(item), None, None
            return
        if isinstance(item, BaseException):
            raise item
        break
    report = item
    if server is not None and report.link:
        report = replace(report, link=(*report.link, ("backend", server)))
    prompts = dict(pairs)
    page = report_fragment(report, "", prompts=prompts, traces=f"/gradio_api/file={folder}/")
    files = [str(folder / "report.html"), str(folder / "runs.csv")]
    yield page, files, stall_figure(report)


def build_audit_tab(models: Any, regex_box: Any) -> None:
    """The Audit view's components, created inside the caller's ``gr.Tab``; ``regex_box``
    is the Generate tab's Regex box (its value is the regex audited)."""
    with gr.Column(elem_id="audit"):
        gr.HTML(
            "<p>One constraint over many prompts: how often runs match, where the others "
            f"stall, and why. At most {MAX_PROMPTS} prompts an audit here, and "
            f"{VISITOR_PROMPTS} an hour; <code>python -m fsmviz audit</code> has no bound "
            "and runs on a server too.</p>"
        )
        backend = backend_menu(server_names(), elem_id="audit-backend")
        upload = gr.File(
            label="Prompts file (.jsonl or .txt)", file_types=[".jsonl", ".txt"],
            type="filepath", elem_id="audit-file",
        )  # fmt: skip
        kind = gr.Radio(list(KINDS), value=KINDS[0], label="Constraint", elem_id="audit-kind")
        text = gr.Textbox(
            label="JSON Schema or grammar (when chosen above)", lines=4,
            max_length=MAX_CONSTRAINT, elem_id="audit-constraint",
        )  # fmt: skip
        with gr.Row():
            max_tokens = gr.Slider(
                1, MAX_AUDIT_TOKENS, value=24, step=1, label="Max tokens",
                elem_id="audit-max-tokens",
            )  # fmt: skip
            temperature = gr.Slider(0.0, 2.0, value=0.0, step=0.05, label="Temperature")
            seed = gr.Number(0, label="Seed", precision=0, minimum=0)
            chat = gr.Checkbox(True, label="Chat template", elem_id="audit-chat")
        run = gr.Button("Audit", variant="primary", elem_id="audit-run")
        report = gr.HTML(EMPTY, elem_id="audit-report")
        chart = gr.Plot(label="Where runs stall", show_label=False, elem_id="audit-chart")
        files = gr.File(label="The report and one row per run", elem_id="audit-files")

    def audit_event(path, kind, text, regex, max_tokens, temperature, seed, chat, backend,
                    request: gr.Request, progress=gr.Progress()):  # noqa: B008  # fmt: skip
        # Gradio hands each input as a parameter of its own (it finds the request and the
        # progress by position in the signature): gathered here, once, into one record
        inputs = AuditInputs(path, kind, text, regex, max_tokens, temperature, seed, chat,
                             backend)  # fmt: skip
        visitor = getattr(request, "session_hash", None) or "anonymous"
        yield from on_audit(models, inputs, visitor, progress)

    run.click(
        audit_event,
        [upload, kind, text, regex_box, max_tokens, temperature, seed, chat, backend],
        [report, files, chart],
        concurrency_id="generate",
        api_name="audit",
        api_visibility="undocumented",  # callable (gradio_client), not an MCP tool
    )
