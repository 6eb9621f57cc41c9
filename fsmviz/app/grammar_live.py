"""What the Grammar tab shows, frame by frame, while a grammar run streams.

The same frames as a regex run (``live.PageFrame``: output, step table, valid-mass chart,
the doctor, every step's allowed set at the end, then the unconstrained shadow run from
``live.shadow_frames``), with the rules drawing lit at the parser's place where a regex
run has its DFA (``PageFrame.dfa``), and two pieces of their own: the parser's place in words
and the terminal being read (``GrammarFrame``). The page's handlers turn them into
component updates with the regex page's ``handlers.frame_updates``.

A grammar run has no finite states: the step table's "state" column names the rule the
parser is in before and after each token (the innermost rule of its first live stack),
and each step's allowed set comes from llguidance's mask replayed along the written
tokens (``fsmviz.grammar.replay.StepMasks``) instead of a ``TokenIndex``.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from html import escape
from typing import Any

from fsmviz.app.live import (
    SHADOW_LATER,
    ChartPace,
    PageFrame,
    ahead,
    plural,
    progress,
    shadow_announcement,
    shadow_frames,
)
from fsmviz.diagnose.finding import Finding
from fsmviz.diagnose.grammar import grammar_collapses
from fsmviz.generation.generate import stream
from fsmviz.generation.trace import GenerationOptions, Step, Trace, pieces
from fsmviz.grammar.place import Chart, place_in, rule_path, rule_states, step_charts
from fsmviz.grammar.replay import grammar_allowed_sets
from fsmviz.html import grammar as gp
from fsmviz.html.charts import valid_mass_figure
from fsmviz.html.grammar_steps import step_views
from fsmviz.html.steps import steps_html
from fsmviz.html.tokens import allowed_html, output_html

__all__ = [
    "GrammarFrame",
    "grammar_frames",
    "grammar_status",
    "finish_grammar",
    "grammar_allowed_sets",
]

WHY = {
    "accepted": "the sentence was complete",
    "max_tokens": "the token budget ran out",
    "prob_limit": "the valid mass fell below the limit",
    "dead_end": "no token could continue",
    "first_match": "the text was a whole sentence (stop at the first match)",
    "overshoot": "a token completed the sentence and its rest was cut",
    "not_accepted": "the engine let it end, but the grammar's own judge refuses the text",
    "engine_error": "the grammar engine (llguidance) gave up",
}
"""Why a grammar run stopped, in words."""


@dataclass(frozen=True)
class GrammarFrame:
    """One update of the Grammar tab: ``frame`` as for a regex run (its ``dfa`` is the
    lit rules drawing), and the parser's place in words and the terminal being read
    (None: unchanged)."""

    frame: PageFrame
    place: str | None = None
    terminal: str | None = None


def grammar_status(trace: Trace) -> str:
    """The status line of a finished grammar run: tokens, time, why, the verdict.

    >>> print(grammar_status(Trace("1+2", (), "accepted", True, seconds=0.5)))
    Done: 0 tokens in 0.5 s (0.0/s); stopped because the sentence was complete; the output is a sentence of the grammar.
    """  # noqa: E501
    verdict = "is a sentence" if trace.matched else "is NOT a sentence"
    return escape(
        f"Done: {plural(len(trace.steps), 'token')} in {trace.seconds:.1f} s "
        f"({trace.tokens_per_second:.1f}/s); stopped because "
        f"{WHY.get(trace.stop_reason, trace.stop_reason)}; the output {verdict} of the grammar."
        + "".join(f" {note}" for note in trace.notes)
    )


def grammar_frames(
    model: Any,
    view: Any,
    prompt: str,
    options: GenerationOptions,
    findings: tuple[Finding, ...] = (),
    shadow: bool = True,
) -> Iterator[GrammarFrame]:
    """Stream ``model`` under ``view``'s grammar (a ``fsmviz.html.grammar.GrammarView``), then the
    shadow run: frames as the regex page's (``regex_run.live_run``), the place lit in each.
    ``findings``: the grammar doctor's, shown with the run's collapses at the end."""
    trace, first = yield from _constrained_frames(model, view, prompt, options)
    ending = finish_grammar(model, view, trace, findings)
    if not shadow:
        yield ending
        return
    yield _shadow_announced(ending, trace, options, first)
    for later in shadow_frames(model, prompt, options, ending.frame.status):
        yield GrammarFrame(later)


def _constrained_frames(
    model: Any, view: Any, prompt: str, options: GenerationOptions
) -> Generator[GrammarFrame, None, tuple[Trace, bool]]:
    """The constrained run's frames, one per arrival of steps: the parser's chart follows
    the decoded text, each step records the rule path before and after it, and the chart
    is redrawn at the ``ChartPace``. Returns the run's trace and whether
    no frame was yielded (the run wrote nothing)."""
    chart = Chart.start(view.network)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    steps: list[Step] = []
    rules: list[tuple[str, str]] = []
    before = rule_path(chart)
    pace = ChartPace()
    started = time.perf_counter()
    run = stream(model, view.grammar, prompt, options)
    first = True
    with closing(ahead(run)) as arrivals:
        for new in arrivals:
            for step in new:
                steps.append(step)
                chart = chart.after(decoder.decode(step.token_bytes))
                after = rule_path(chart)
                rules.append((before, after))
                before = after
            now = time.perf_counter()
            figure = valid_mass_figure(steps) if pace.due(now) else None
            status = progress("Generating", len(steps), options.max_tokens, now - started)
            yield _lit_frame(view, status, steps, rules, place_in(chart), figure, new, first)
            first = False
    return run.trace(), first


def _lit_frame(
    view: Any,
    status: str,
    steps: list[Step],
    rules: list[tuple[str, str]],
    place: Any,
    figure: Any,
    new: Sequence[Step],
    first: bool,
) -> GrammarFrame:
    """One frame of the constrained run: the rules drawing with ``place`` lit, the output
    and steps so far, the place and its terminal in words; the first frame also clears the
    error and says the shadow run comes later."""
    return GrammarFrame(
        PageFrame(
            status,
            dfa=gp.rules_html(view, place),
            output=output_html(steps),
            text="".join(pieces(steps)),
            shadow=SHADOW_LATER if first else None,
            steps=steps_html(steps, states=rules, live=True),
            chart=figure,
            error="" if first else None,
            new_steps=tuple(new),
        ),
        gp.place_html(place),
        gp.terminal_html(place),
    )


def _shadow_announced(
    ending: GrammarFrame, trace: Trace, options: GenerationOptions, first: bool
) -> GrammarFrame:
    """The constrained run's last frame with the shadow run announced: its cost at the
    run's speed, and how to skip it."""
    frame = ending.frame
    return GrammarFrame(
        PageFrame(
            frame.status + shadow_announcement(options, trace),
            **{k: getattr(frame, k) for k in _FINAL},
            shadow=SHADOW_LATER if first else None,
            shadow_next=True,
        ),
        ending.place,
        ending.terminal,
    )


_FINAL = ("dfa", "output", "text", "steps", "chart", "diagnosis", "error", "trace", "findings",
          "allowed")  # fmt: skip


def finish_grammar(
    model: Any,
    view: Any,
    trace: Trace,
    findings: tuple[Finding, ...] = (),
    status: str | None = None,
) -> GrammarFrame:
    """The frame of a finished (or stopped) grammar run: the place after its text, the
    table, the chart, every step's allowed set (llguidance's masks along the run), and the
    doctor's findings with the run's collapses named by rule; with each step's lights,
    place and terminal (``fsmviz.html.grammar.rules_lights``, ``fsmviz.html.grammar_steps``),
    so that the browser shows any step at once."""
    steps = list(trace.steps)
    charts = step_charts(view.network, steps)
    states = rule_states(charts)
    place = place_in(charts[-1])
    collapses = tuple(grammar_collapses(view.grammar, trace))
    found = (*findings, *collapses)
    sets = grammar_allowed_sets(model, view.grammar, trace)
    frame = PageFrame(
        status if status is not None else grammar_status(trace),
        dfa=gp.rules_html(view, place) + gp.rules_lights(view, steps, charts),
        output=output_html(steps, final=True),
        text="".join(pieces(steps)),
        steps=steps_html(steps, states=states),
        chart=valid_mass_figure(steps),
        diagnosis=gp.grammar_findings_html(found),
        error="",
        trace=trace,
        findings=found,
        allowed=allowed_html(sets, steps, selected=len(steps) - 1) if sets else None,
    )
    # each step's place and terminal go with it: the browser steps (static/grammar.js)
    shown = f'<div class="place-view">{gp.place_html(place)}</div>{step_views(charts)}'
    terminal = f'<div class="terminal-view">{gp.terminal_html(place)}</div>'
    return GrammarFrame(frame, shown, terminal)
