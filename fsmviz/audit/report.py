"""What an audit found, summed up: the counts a team lead reads first, then the places
where runs stall, ranked.

``summarize`` is a pure function of the rows: the same rows give the same report, however
many sessions (a resumed audit) wrote them.

    >>> from fsmviz.audit.rows import AuditRow
    >>> rows = [AuditRow("a", "", True, "accepted", stall_state=0, lowest_mass=0.1),
    ...         AuditRow("b", "", False, "max_tokens", stall_state=4, lowest_mass=0.3),
    ...         AuditRow("c", "", False, "max_tokens", stall_state=4, lowest_mass=0.5)]
    >>> report = summarize(rows, "regex [0-9]+")
    >>> report.total, report.matched, report.max_tokens
    (3, 1, 2)
    >>> [(p.place, p.stalled, p.runs) for p in report.places]
    [('state 4', 2, 2), ('state 0', 0, 1)]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fsmviz.audit.explain import Explanation
from fsmviz.audit.rows import FAILED, AuditRow
from fsmviz.generation.trace import GenerationOptions

__all__ = ["AuditReport", "StallPlace", "summarize"]


@dataclass(frozen=True)
class StallPlace:
    """One place (a state, a schema field, a grammar rule) where runs stall: ``stalled``
    runs that did not match ended there; ``runs`` counts every run whose stall is there
    (a matched run's stall is its step of lowest valid mass); ``mean_mass`` is the mean of
    those runs' lowest valid mass; ``examples`` a few of their ids."""

    place: str
    stalled: int
    runs: int
    mean_mass: float | None
    examples: tuple[str, ...]
    note: str = ""
    """What the place is, in words, where the constraint can say (a regex state: ``after
    `a@` ``, a shortest text that leads there)."""
    mass_bins: tuple[int, ...] = ()
    """The valid-mass distribution there: how many of its runs had their lowest valid
    mass in each tenth, ``[0, 0.1)`` to ``[0.9, 1]`` (``MASS_BINS`` bins)."""


@dataclass(frozen=True)
class AuditReport:
    """A constraint over many prompts (``fsmviz.audit``): the counts, one row per prompt
    (in the prompts' order), and the ranked places where runs stall.

    ``matched`` counts runs whose text the constraint's judge accepts; ``accepted``,
    ``max_tokens``, ``dead_end`` and ``engine_error`` count stop reasons (every stop reason
    is in ``stop_reasons``); ``disagreed`` counts runs where a server's mask and the exact
    automaton disagreed at least once; ``failed`` counts requests that produced no trace.
    ``resumed``: runs found done in the output folder and not redone. ``wall_seconds``: this
    call's time; ``analysis_seconds``: fsmviz's own work in it on a server (the replays and
    the rows; None on a local model, where it is not separable from generation)."""

    constraint: str
    rows: tuple[AuditRow, ...]
    places: tuple[StallPlace, ...]
    stop_reasons: tuple[tuple[str, int], ...]
    total: int
    matched: int
    disagreed: int
    failed: int
    resumed: int = 0
    wall_seconds: float = 0.0
    analysis_seconds: float | None = None
    out: str | None = None
    pattern: str | None = None
    """The regex the runs were held to, when there is one (a regex, a schema on the regex
    path): the report draws its DFA with the stalls on it."""
    options: GenerationOptions | None = None
    """The decoding options every run had (each run's link carries them)."""
    link: tuple[tuple[str, str], ...] = ()
    """The query that puts the constraint back on the page (``fsmviz.audit.links``)."""
    findings: tuple[Explanation, ...] = ()
    """The doctor's findings that explain failed runs, most explained first."""
    structure: tuple[str, ...] = ()
    """Where a constraint's places are its parts, those parts in the order written, for
    the report's heat map: a schema's fields as JSON pointers (``""`` the whole value,
    an array's items ``/*``), or a grammar's rules by name."""

    def count(self, stop_reason: str) -> int:
        """How many runs stopped for ``stop_reason`` (``"failed"``: no trace)."""
        return dict(self.stop_reasons).get(stop_reason, 0)

    @property
    def accepted(self) -> int:
        return self.count("accepted")

    @property
    def max_tokens(self) -> int:
        return self.count("max_tokens")

    @property
    def dead_end(self) -> int:
        return self.count("dead_end")

    @property
    def engine_error(self) -> int:
        return self.count("engine_error")

    @property
    def analysis_share(self) -> float | None:
        """fsmviz's analysis as a share of the wall time (a server audit)."""
        if self.analysis_seconds is None or self.wall_seconds <= 0:
            return None
        return self.analysis_seconds / self.wall_seconds

    def summary(self) -> str:
        """The counts in one line: ``50 runs: 41 matched; stopped: 41 accepted, 9
        max_tokens``."""
        line = f"{self.total} runs: {self.matched} matched"
        if self.stop_reasons:
            line += "; stopped: " + ", ".join(f"{n} {why}" for why, n in self.stop_reasons)
        if self.disagreed:
            line += f"; {self.disagreed} with engine disagreements"
        return line


EXAMPLES = 5
"""Ids a stall place lists."""
MASS_BINS = 10
"""Bins of a place's valid-mass distribution (tenths)."""


def mass_bins(masses: Iterable[float]) -> tuple[int, ...]:
    """How many of ``masses`` fall in each tenth of [0, 1] (1 itself in the last).

    >>> mass_bins([0.0, 0.05, 0.95, 1.0])
    (2, 0, 0, 0, 0, 0, 0, 0, 0, 2)
    """
    bins = [0] * MASS_BINS
    for mass in masses:
        bins[min(max(int(mass * MASS_BINS), 0), MASS_BINS - 1)] += 1
    return tuple(bins)


def summarize(
    rows: Iterable[AuditRow],
    constraint: str,
    *,
    resumed: int = 0,
    wall_seconds: float = 0.0,
    analysis_seconds: float | None = None,
    out: str | None = None,
    describe: Callable[[str], str] | None = None,
    **context: Any,
) -> AuditReport:
    """The report of ``rows`` (one per prompt): counts, and the stall places ranked by
    the runs that did not match there, then by all runs stalling there; ``describe``
    gives a place's ``note``. ``context``: the report's ``pattern``, ``options``, ``link``,
    ``findings`` and ``structure``, kept as given."""
    rows = tuple(rows)
    reasons = Counter(row.stop_reason for row in rows)
    stalled: Counter[str] = Counter()
    runs: Counter[str] = Counter()
    masses: dict[str, list[float]] = {}
    examples: dict[str, list[str]] = {}
    for row in rows:
        if row.stop_reason == FAILED:
            continue
        place = row.place
        runs[place] += 1
        stalled[place] += not row.matched
        if row.lowest_mass is not None:
            masses.setdefault(place, []).append(row.lowest_mass)
        shown = examples.setdefault(place, [])
        if len(shown) < EXAMPLES and (not row.matched or len(shown) < EXAMPLES - 1):
            shown.append(row.id)
    order = sorted(runs, key=lambda p: (-stalled[p], -runs[p], p))
    places = tuple(
        StallPlace(
            place=p,
            stalled=stalled[p],
            runs=runs[p],
            mean_mass=sum(masses[p]) / len(masses[p]) if masses.get(p) else None,
            examples=tuple(examples.get(p, ())),
            note=describe(p) if describe is not None else "",
            mass_bins=mass_bins(masses.get(p, ())),
        )
        for p in order
    )
    return AuditReport(
        constraint=constraint,
        rows=rows,
        places=places,
        stop_reasons=tuple(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
        total=len(rows),
        matched=sum(row.matched for row in rows),
        disagreed=sum(row.disagreements > 0 for row in rows),
        failed=reasons.get(FAILED, 0),
        resumed=resumed,
        wall_seconds=wall_seconds,
        analysis_seconds=analysis_seconds,
        out=out,
        **context,
    )
