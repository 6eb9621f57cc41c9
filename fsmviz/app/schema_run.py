"""A grammar-path schema run on the page: the main view's frames without a character DFA.

A schema no regex can hold (a recursive tree, a Kubernetes manifest's ``$defs``) takes the
grammar path: ``compile_schema`` gives a ``SchemaGrammar`` and ``stream`` runs it under
llguidance's exact mask. This module makes of that stream the same ``live.PageFrame`` records a
regex run makes, so the page's handlers show it as they show any run: tokens streaming in
the output, the step table, the valid-mass chart, the doctor (the schema's findings, then
where the valid mass collapsed, named by the schema's structure), the JSON view with its
verdict (``fsmviz.html.schema.json_view_html``), then the shadow run. Where a regex run has its
character DFA, the drawing panel has the schema's structure (``grammar_panel``), lit where
the output is; choosing a step of the finished run lights it there, beside the step
controls. Each step's allowed set comes with the run's end, as on the Grammar tab
(llguidance's mask replayed along the run).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from fsmviz.app.live import (
    SHADOW_LATER,
    PageFrame,
    constrained_frames,
    done_status,
    shadow_announcement,
    shadow_frames,
)
from fsmviz.cache import BoundedCache
from fsmviz.diagnose.grammar import grammar_collapses
from fsmviz.diagnose.schema import diagnose_schema
from fsmviz.generation.generate import GenerationOptions
from fsmviz.generation.trace import Step, Trace, pieces
from fsmviz.grammar.replay import grammar_allowed_sets
from fsmviz.html.charts import valid_mass_figure
from fsmviz.html.schema import (
    SchemaChoice,
    collapses_html,
    grammar_note,
    grammar_panel,
    schema_findings_html,
)
from fsmviz.html.schema_structure import structure_grammar, structure_states
from fsmviz.html.steps import steps_html
from fsmviz.html.tokens import allowed_html, output_html
from fsmviz.schema.convert import compile_schema

__all__ = ["finish_schema", "schema_frames", "grammar_note", "grammar_panel", "on_grammar_path"]

_compiled: BoundedCache[Any] = BoundedCache(16)


def on_grammar_path(choice: SchemaChoice | None) -> bool:
    """Whether ``choice`` (a schema in use) runs on the grammar path."""
    return choice is not None and choice.path == "grammar"


def compiled_of(choice: SchemaChoice) -> Any:
    """The choice's ``SchemaGrammar`` (cached: the page compiles a schema once)."""
    key = (choice.schema, choice.whitespace)
    return _compiled.get_or_build(key, lambda: compile_schema(choice.schema, choice.whitespace))


def schema_frames(
    model: Any, choice: SchemaChoice, prompt: str, options: GenerationOptions
) -> Iterator[PageFrame]:
    """Stream ``model`` under the choice's schema (grammar path), then the shadow run, as
    page frames (``regex_run.live_run``'s order and pace, from the same
    ``live.constrained_frames``); the constrained run ends with ``finish_schema``."""
    compiled = compiled_of(choice)
    found = diagnose_schema(compiled, model.vocab, max_tokens=options.max_tokens)
    trace, first = yield from constrained_frames(
        model, compiled, prompt, options, partial(_drawn, choice, found),
        "Generating (grammar path)",
    )  # fmt: skip
    ending = finish_schema(model, choice, trace, options)
    yield replace(
        ending,
        status=ending.status + shadow_announcement(options, trace),
        shadow=SHADOW_LATER if first else None,
        shadow_next=True,
    )
    yield from shadow_frames(model, prompt, options, ending.status)


VERDICT_OF = "the schema's grammar"
"""What a grammar-path schema run's status says the output matches (``done_status``)."""


def finish_schema(
    model: Any,
    choice: SchemaChoice,
    trace: Trace,
    options: GenerationOptions,
    status: str | None = None,
) -> PageFrame:
    """The frame of a finished (or stopped) grammar-path schema run, drawn for stepping
    through it (``live.finish``'s for a regex): the structure lit at each step, the table
    with each step's rules, the chart, every step's allowed set
    (``fsmviz.grammar.replay.grammar_allowed_sets``: llguidance's masks replayed along the run, as
    the Grammar tab shows them), the schema's findings on the trace and where the valid
    mass collapsed, named by the schema's structure."""
    compiled = compiled_of(choice)
    shape = structure_grammar(choice.schema)  # the drawing's own, compiled once for both
    try:  # where the valid mass collapsed, by the schema's structure
        collapses = grammar_collapses(shape, trace) if shape is not None else []
    except ValueError:  # a trace the structure cannot follow: the schema's findings stand
        collapses = []
    findings = diagnose_schema(compiled, model.vocab, trace, max_tokens=options.max_tokens)
    steps = list(trace.steps)
    text = "".join(pieces(steps))
    sets = grammar_allowed_sets(model, compiled, trace)
    return PageFrame(
        status if status is not None else done_status(trace, VERDICT_OF),
        dfa=grammar_panel(choice, text, steps=steps),
        output=output_html(steps, final=True),
        text=text,
        steps=steps_html(steps, states=structure_states(choice.schema, steps)),
        chart=valid_mass_figure(steps),
        diagnosis=schema_findings_html(findings) + collapses_html(collapses),
        error="",
        trace=trace,
        allowed=allowed_html(sets, steps, selected=len(steps) - 1) if sets else None,
    )


def _drawn(
    choice: SchemaChoice, found: Sequence[Any], steps: Sequence[Step], first: bool
) -> dict[str, str | None]:
    """What a grammar-path schema run draws of its steps so far
    (``live.constrained_frames``' ``drawn``): the structure lit where the output is and
    the step table each time, the schema's findings once."""
    return {
        "dfa": grammar_panel(choice, "".join(pieces(steps)), streaming=True),
        "steps": steps_html(steps, live=True),
        "diagnosis": schema_findings_html(found) if first else None,
    }
