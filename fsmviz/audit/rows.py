"""One run of an audit as one row: did it match, why it stopped, and where it stalled.

A run *stalls* at one step. When its text does not match, that is its last step: where the
budget ran out, nothing more was allowed, or the engine disagreed. When it matches, it is
the step of lowest valid mass: where the constraint overruled the model the most (the model
wanted words, the pattern allowed digits). The *place* of a stall is what the constraint
calls it:

* a regex: the state the run was in when it chose that step's token (``state 7``);
* a JSON Schema: the field of the output being written there (``/name``), read from the
  text before the step (``fsmviz.schema.convert.json_fields``: cheap, no parser);
* a grammar: the rule on top of the parser's stack there (``fsmviz.grammar.place``);
  a grammar run's state only counts tokens, so it is not a place.

    >>> from fsmviz.generation.trace import Step, Trace
    >>> steps = tuple(Step(k, "1", k, k + 1, 10, m, (), index=k, token_bytes=b"1")
    ...               for k, m in enumerate([0.9, 0.2, 0.8]))
    >>> row = row_of("q1", "A year?", Trace("111", steps, "max_tokens", False), Regex("1+2"))
    >>> row.stall_step, row.stall_state, row.place, row.lowest_mass_step
    (2, 2, 'state 2', 1)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Protocol

from fsmviz.generation.trace import Candidate, GenerationOptions, Step, Trace

__all__ = ["AuditRow", "Placer", "Regex", "row_of", "trace_from_dict"]

FAILED = "failed"
"""The stop reason of a request that never produced a trace (server error, timeout)."""
SHOWN_CHARS = 200
"""Characters of a prompt or an output a row keeps (the trace file has them whole)."""


@dataclass(frozen=True)
class AuditRow:
    """One prompt's run. ``stop_reason`` is the trace's, or ``"failed"`` when the request
    never produced a trace (``error`` quotes why, ``attempts`` says how often it was
    tried). ``stall_*``: see the module docstring; ``field`` (a schema) or ``rule`` (a
    grammar) names the place where it can; ``disagreements``: the server's mask against
    the exact automaton (0 on a local model)."""

    id: str
    prompt: str
    matched: bool
    stop_reason: str
    tokens: int = 0
    text: str = ""
    stall_step: int | None = None
    stall_state: int | None = None
    field: str | None = None
    rule: str | None = None
    lowest_mass: float | None = None
    lowest_mass_step: int | None = None
    disagreements: int = 0
    error: str | None = None
    attempts: int = 1
    seconds: float = 0.0
    analysis_seconds: float | None = None
    """fsmviz's share of ``seconds`` on a server run: the replay and this row."""
    trace_file: str | None = None

    @property
    def failed(self) -> bool:
        return self.stop_reason == FAILED

    @property
    def place(self) -> str:
        """Where it stalled, in the constraint's words (see the module docstring)."""
        if self.failed:
            return "(request failed)"
        if self.rule is not None:
            return f"rule {self.rule}"
        if self.field is not None:
            return f"field {self.field or '/'}"
        if self.stall_state is not None:
            return f"state {self.stall_state}"
        return "before the first token"

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> AuditRow:
        names = {f.name for f in fields(AuditRow)}
        return AuditRow(**{k: v for k, v in data.items() if k in names})


class Placer(Protocol):
    """What a constraint says about a place: its field or rule after ``text`` (or None)."""

    def field(self, text: str) -> str | None: ...

    def rule(self, text: str) -> str | None: ...


@dataclass(frozen=True)
class Regex:
    """A plain regex: its places are its states; it names no field or rule."""

    pattern: str

    def field(self, text: str) -> str | None:
        return None

    def rule(self, text: str) -> str | None:
        return None


def row_of(
    ident: str,
    prompt: str,
    trace: Trace,
    placer: Placer,
    *,
    disagreements: int = 0,
    attempts: int = 1,
    analysis_seconds: float | None = None,
    trace_file: str | None = None,
    grammar: bool = False,
) -> AuditRow:
    """The row of one finished run (see the module docstring). ``grammar``: the run's
    states count tokens, so no state is named."""
    steps = trace.steps
    lowest = min(steps, key=lambda s: (s.valid_mass, s.index)) if steps else None
    stall = (steps[-1] if not trace.matched else lowest) if steps else None
    before = _text_before(steps, stall.index) if stall is not None else ""
    return AuditRow(
        id=ident,
        prompt=prompt[:SHOWN_CHARS],
        matched=trace.matched,
        stop_reason=trace.stop_reason,
        tokens=len(steps),
        text=trace.text[:SHOWN_CHARS],
        stall_step=stall.index if stall is not None else None,
        stall_state=None if grammar or stall is None else stall.state_before,
        field=placer.field(before) if stall is not None else None,
        rule=placer.rule(before) if stall is not None else None,
        lowest_mass=lowest.valid_mass if lowest is not None else None,
        lowest_mass_step=lowest.index if lowest is not None else None,
        disagreements=disagreements,
        attempts=attempts,
        seconds=trace.seconds,
        analysis_seconds=analysis_seconds,
        trace_file=trace_file,
    )


def failed_row(ident: str, prompt: str, error: str, attempts: int, seconds: float) -> AuditRow:
    """The row of a request that produced no trace: kept, with the message, never dropped."""
    return AuditRow(
        id=ident,
        prompt=prompt[:SHOWN_CHARS],
        matched=False,
        stop_reason=FAILED,
        error=error,
        attempts=attempts,
        seconds=seconds,
    )


def _text_before(steps: tuple[Step, ...], number: int) -> str:
    data = b"".join(s.token_bytes for s in steps if s.index < number)
    return data.decode("utf-8", errors="replace")


def trace_from_dict(data: Mapping[str, Any]) -> Trace:
    """A ``Trace`` back from ``Trace.to_dict()`` (a saved trace file), for a resumed audit
    whose row must be rebuilt from the trace alone."""
    step_names = {f.name for f in fields(Step)}
    steps = []
    for raw in data.get("steps") or ():
        step = {k: v for k, v in raw.items() if k in step_names}
        step["token_bytes"] = bytes(step.get("token_bytes") or ())
        step["top"] = tuple(
            Candidate(c["text"], float(c["prob"]), bool(c["allowed"])) for c in step.get("top", ())
        )
        steps.append(Step(**step))
    options = data.get("options")
    return Trace(
        text=str(data.get("text", "")),
        steps=tuple(steps),
        stop_reason=data.get("stop_reason", "max_tokens"),
        matched=bool(data.get("matched")),
        pattern=data.get("pattern"),
        prompt=str(data.get("prompt", "")),
        options=GenerationOptions(**options) if isinstance(options, Mapping) else None,
        seconds=float(data.get("seconds") or 0.0),
        notes=tuple(data.get("notes") or ()),
    )


def disagreements_in(trace: Trace) -> int:
    """How many engine disagreements a saved server trace's notes name: its ``Engine
    check`` note says ``N disagree`` (the written token the automaton refused among them);
    without that note, one per ``Engine disagreement`` note."""
    written = 0
    for note in trace.notes:
        if note.startswith("Engine check:"):
            head = note.split(" disagree: ")[0].rsplit(";", 1)[-1].strip()
            return int(head) if " disagree: " in note and head.isdigit() else 0
        written += note.startswith("Engine disagreement:")
    return written


def load_trace(path: str) -> Trace:
    with open(path, encoding="utf-8") as source:
        return trace_from_dict(json.load(source))
