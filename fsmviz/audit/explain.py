"""The doctor's findings over a whole audit: which finding explains the most failed runs.

``fsmviz.diagnose`` says why one pattern may stall; an audit knows where each run did. A
finding *explains* a run that did not match when the run stalled in one of the states the
finding points at (a repeat with no bound: the run stalled on the loop), or, a grammar's,
in the rule the finding names (a rule that loops: the run stalled in it), or, for the
findings about how a run stops, when the run stopped that way (``budget`` and
``truncation``, ``grammar_budget``: cut at ``max_tokens``; ``dead_end``: nothing more was
allowed). The report ranks the findings by the failed runs they explain and shows each
with its rewrite.

    >>> from fsmviz.audit.rows import AuditRow
    >>> from fsmviz.diagnose.finding import Finding
    >>> loop = Finding("unbounded_repeat", "warning", "loops", states=(1,), suggestion="a{1,9}")
    >>> rows = [AuditRow("x", "", False, "max_tokens", stall_state=1),
    ...         AuditRow("y", "", False, "max_tokens", stall_state=2),
    ...         AuditRow("z", "", True, "accepted", stall_state=1)]
    >>> [(e.kind, e.explains, e.examples) for e in explain([loop], rows)]
    [('unbounded_repeat', 1, ('x',))]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fsmviz.audit.rows import AuditRow

__all__ = ["Explanation", "doctor_findings", "explain"]

BY_STOP = {"budget": "max_tokens", "truncation": "max_tokens", "dead_end": "dead_end",
           "grammar_budget": "max_tokens"}  # fmt: skip
"""Finding kinds about how a run ends, and the stop reason of the runs they explain."""
EXAMPLES = 5
"""Ids an explanation lists."""


@dataclass(frozen=True)
class Explanation:
    """A doctor's finding (``kind``, ``severity``, ``message``, its rewrite ``suggestion``
    and ``settings``, the ``states`` it points at) and the ``explains`` failed runs of the
    audit it accounts for, with a few of their ids (``examples``)."""

    kind: str
    severity: str
    message: str
    suggestion: str | None
    settings: tuple[tuple[str, Any], ...]
    states: tuple[int, ...]
    explains: int
    examples: tuple[str, ...]
    rule: str | None = None
    """The grammar rule the finding names (a grammar's), where the runs it explains stalled."""


def _explains(finding: Any, row: AuditRow) -> bool:
    if row.matched or row.failed:
        return False
    if finding.kind in BY_STOP:
        return row.stop_reason == BY_STOP[finding.kind]
    if row.rule is not None:  # a grammar's finding names its rule (``fragment``)
        return getattr(finding, "fragment", None) == row.rule
    return row.stall_state is not None and row.stall_state in finding.states


def explain(findings: Iterable[Any], rows: Sequence[AuditRow]) -> tuple[Explanation, ...]:
    """``findings`` (``fsmviz.diagnose.Finding``) that explain at least one failed run of
    ``rows``, ranked by how many they explain (then errors first, then as found)."""
    from fsmviz.diagnose.grammar import GRAMMAR_KINDS  # a grammar's finding names its rule

    ranked = []
    for order, finding in enumerate(findings):
        hits = [row.id for row in rows if _explains(finding, row)]
        if not hits:
            continue
        severity = {"error": 0, "warning": 1}.get(finding.severity, 2)
        ranked.append((-len(hits), severity, order, finding, hits))
    ranked.sort(key=lambda entry: entry[:3])
    return tuple(
        Explanation(
            kind=f.kind,
            severity=f.severity,
            message=f.message,
            suggestion=f.suggestion,
            settings=tuple(f.settings),
            states=tuple(f.states),
            explains=len(hits),
            examples=tuple(hits[:EXAMPLES]),
            rule=f.fragment if f.kind in GRAMMAR_KINDS and f.kind != "grammar_error" else None,
        )
        for _, _, _, f, hits in ranked
    )


def doctor_findings(pattern: Any, vocab: Any, max_tokens: int) -> list[Any]:
    """The doctor's static findings on ``pattern`` (a regex, or a ``Grammar``: the grammar
    doctor, whose findings name rules) over ``vocab`` (none if it cannot say: the audit's
    report goes on without them)."""
    from fsmviz.diagnose import diagnose
    from fsmviz.errors import FsmvizError

    try:
        return diagnose(pattern, vocab, max_tokens=max_tokens)
    except (FsmvizError, RecursionError):
        return []
