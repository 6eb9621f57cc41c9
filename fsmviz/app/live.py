"""What the page shows, frame by frame, while a generation streams.

The app's handlers only forward these frames to Gradio. A run streams the constrained
generation first (DFA lit at the current state, tokens appearing, table growing), then
the unconstrained *shadow* run for the same prompt and seed: what the model wanted. The
chart is redrawn at most every half second (a plotly redraw costs the browser ~0.7 s)
and once at the end; the doctor looks at the finished trace.

The generation runs ahead on a thread of its own (``ahead``) and is never held back by
the page: each frame shows every token that arrived since the last one.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field

import plotly.graph_objects as go

from ..dfa import Dfa, compile_regex
from ..diagnose import Finding, diagnose
from ..generate import GenerationOptions, Stream, stream
from ..graph import UNREACHABLE
from ..index import IndexTooLarge, build_index
from ..models import Model
from ..syntax import RegexError
from ..trace import Step, Trace
from ..vocab import Vocabulary
from .charts import valid_mass_figure
from .render import RenderError, highlight, to_svg
from .views import error_html, esc, findings_html, output_html, steps_html

__all__ = ["DRAW_LIMIT", "Frame", "PatternView", "live_run", "pattern_view", "path_view"]

DRAW_LIMIT = 300
"""DFAs with more states are described, not drawn: a layout that large is unreadable."""
CHART_EVERY = 0.5
FRAME_EVERY = 0.1
"""Seconds a frame waits for more tokens, so that at most ~10 frames a second reach the
browser whatever the model's speed (each frame is JSON-encoded, compressed and sent)."""


@dataclass(frozen=True)
class PatternView:
    """A pattern as the page shows it before any run: drawing, findings, error."""

    pattern: str
    dfa: Dfa | None
    svg: str
    findings: tuple[Finding, ...]
    error: str

    def dfa_html(
        self, steps: Sequence[Step] = (), upto: int | None = None, marked: Sequence[int] = ()
    ) -> str:
        return dfa_html(self, steps, upto, marked)


def pattern_view(
    pattern: str, vocab: Vocabulary | None, trace: Trace | None = None, distances: bool = False
) -> PatternView:
    """Compile, draw and diagnose ``pattern``; a bad pattern gives an error, not an exception.
    With ``distances``, each state shows the fewest tokens still needed to finish."""
    try:
        dfa = compile_regex(pattern)
    except RegexError as error:
        return PatternView(pattern, None, "", (), error_html(error, pattern))
    findings = tuple(diagnose(pattern, vocab, trace))
    if dfa.num_states > DRAW_LIMIT:
        return PatternView(pattern, dfa, "", findings, "")
    try:
        svg = to_svg(
            dfa,
            title=pattern,
            distances=token_distances(dfa, vocab) if distances and vocab else None,
        )
    except RenderError as error:
        return PatternView(pattern, dfa, "", findings, error_html(error))
    return PatternView(pattern, dfa, svg, findings, "")


def token_distances(dfa: Dfa, vocab: Vocabulary) -> list[int] | None:
    """Fewest tokens from each drawn state to a match (0 where none is reachable); None
    when the index is too large to walk in full (the doctor says so)."""
    try:
        far = build_index(dfa, vocab).token_distances()[: dfa.num_states]
    except IndexTooLarge:
        return None
    return [int(d) if d < UNREACHABLE else 0 for d in far]


def path_view(steps: Sequence[Step], upto: int | None, num_char_states: int):
    """(current state, visited states, taken edges) after step ``upto`` (all steps if None).
    States inside a multi-byte character are not drawn; the path skips over them."""
    chosen = steps if upto is None else steps[: upto + 1]
    visited, edges = {0}, set()
    current = 0
    for step in chosen:
        if step.state_after < num_char_states:
            if step.state_before < num_char_states:
                edges.add((step.state_before, step.state_after))
            current = step.state_after
            visited.add(current)
    return current, visited, edges


def dfa_html(
    view: PatternView,
    steps: Sequence[Step] = (),
    upto: int | None = None,
    marked: Sequence[int] = (),
) -> str:
    if view.dfa is None:
        return '<p class="empty">No automaton: fix the pattern above.</p>'
    dfa = view.dfa
    summary = f"{dfa.num_states} states, {len(dfa.accepting)} accepting (double circles)"
    if not view.svg:
        return (
            f'<div class="dfa-view"><p class="dfa-bar">{summary}</p><p class="empty">'
            f"Too large to draw readably (more than {DRAW_LIMIT} states); the table and "
            "the chart still show every step.</p></div>"
        )
    current, visited, edges = path_view(steps, upto, dfa.num_states)
    svg = highlight(view.svg, current=current, visited=visited, marked=marked, path_edges=edges)
    zoom = "".join(
        f'<button type="button" data-zoom="{z}" title="{t}">{label}</button>'
        for z, label, t in (("out", "−", "zoom out"), ("fit", "fit", "fit"), ("in", "+", "zoom in"))
    )
    return (
        f'<div class="dfa-view" data-states="{dfa.num_states}">'
        f'<div class="dfa-bar">{summary} · current state {current}'
        f'<span class="zoom">{zoom}</span></div><div class="dfa-scroll">{svg}</div></div>'
    )


@dataclass
class Frame:
    """One update of the page. ``chart`` is None when it did not change."""

    dfa: str
    output: str
    shadow: str
    steps: str
    chart: go.Figure | None
    diagnosis: str
    error: str
    status: str
    trace: Trace | None = None
    findings: tuple[Finding, ...] = field(default_factory=tuple)


def live_run(
    model: Model, view: PatternView, prompt: str, options: GenerationOptions
) -> Iterator[Frame]:
    """Stream the constrained run, then the shadow run, as page frames."""
    findings_now = findings_html(view.findings)
    if view.dfa is None:
        yield Frame(
            dfa_html(view),
            "",
            "",
            steps_html([]),
            None,
            findings_now,
            view.error,
            "Fix the pattern first.",
        )
        return
    steps: list[Step] = []
    last_chart = 0.0
    run = stream(model, view.pattern, prompt, options)
    # closing(): a visitor who leaves mid-run stops the generation at once
    with closing(ahead(run)) as arrivals:
        for new in arrivals:
            steps.extend(new)
            now = time.perf_counter()
            chart = None
            if now - last_chart > CHART_EVERY:
                chart, last_chart = valid_mass_figure(steps), now
            yield Frame(
                view.dfa_html(steps),
                output_html(steps),
                "",
                steps_html(steps),
                chart,
                findings_now,
                "",
                f"Generating… {len(steps)} tokens",
            )
    trace = run.trace()
    findings = tuple(diagnose(view.pattern, model.vocab, trace))
    done = _status(trace)
    final = Frame(
        view.dfa_html(steps),
        output_html(steps, final=True),
        "",
        steps_html(steps),
        valid_mass_figure(steps),
        findings_html(findings),
        "",
        done,
        trace,
        findings,
    )
    yield final
    shadow_steps: list[Step] = []
    with closing(ahead(stream(model, None, prompt, options))) as arrivals:
        for new in arrivals:
            shadow_steps.extend(new)
            final.shadow = output_html(shadow_steps)
            final.chart = None
            final.status = f"{done} Now the unconstrained shadow run… {len(shadow_steps)} tokens"
            yield final
    final.shadow = output_html(shadow_steps, final=True)
    final.status = done
    yield final


def ahead(steps: Stream) -> Iterator[list[Step]]:
    """Iterate ``steps`` on a thread of its own; yield, each time, all the steps that
    arrived since the last time (at least one). An error in the stream is raised here.
    Closing this generator stops the stream after its current token."""
    arrived: queue.SimpleQueue[Step | BaseException | None] = queue.SimpleQueue()
    stop = threading.Event()

    def produce() -> None:
        try:
            for step in steps:
                arrived.put(step)
                if stop.is_set():
                    break
        except Exception as error:  # noqa: BLE001 - handed to the reader, raised there
            arrived.put(error)
        finally:
            steps.close()
            arrived.put(None)

    threading.Thread(target=produce, name="fsmviz-stream", daemon=True).start()
    try:
        while True:
            batch = [arrived.get()]
            time.sleep(FRAME_EVERY)  # let more tokens come: see FRAME_EVERY
            while not arrived.empty():
                batch.append(arrived.get())
            for item in batch:
                if isinstance(item, BaseException):
                    raise item
            new = [item for item in batch if isinstance(item, Step)]
            if new:
                yield new
            if batch[-1] is None:
                return
    finally:
        stop.set()


def _status(trace: Trace) -> str:
    verdict = "matches the pattern" if trace.matched else "does NOT match the pattern"
    why = {
        "accepted": "the pattern was complete",
        "max_tokens": "the token budget ran out",
        "prob_limit": "the valid mass fell below the limit",
        "dead_end": "no token could continue",
    }[trace.stop_reason]
    return esc(
        f"Done: {len(trace.steps)} tokens in {trace.seconds:.1f} s "
        f"({trace.tokens_per_second:.1f}/s); stopped because {why}; the output {verdict}."
        + "".join(f" {note}" for note in trace.notes)
    )
