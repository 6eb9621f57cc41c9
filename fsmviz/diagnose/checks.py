"""No fix without a measured improvement: a run's fix is re-run before it is offered.

A finding read off a run (a ``loop``, a ``valid_mass_collapse``, a ``truncation``) may carry
a fix: a repeat bounded, the chat template on. Whether it helps *this* run is a question
the pattern alone cannot answer: bounding the repeat a run rode can move the loop to the
next one, and a collapse caused by the prompt stays whatever the pattern says. So the
doctor answers it the only honest way, by running it: the fixed pattern (or setting) on
the same prompt, seed and options, and the thing the finding names counted on both runs::

    before  .jerome.swannack@coolcompany.com.I.I.T.I.A.I.A.I.I.I…   51 steps in a loop
    after   .jerome.swannack@coolcompany.com                          0 steps in a loop
                                                        → FixCheck(…, 51, 0, helps=True)

A fix is offered (the page's "Apply & run") only when the count went down; until it has
been checked the finding says so. The cost is bounded: one run per distinct fix, at most
``MAX_CHECKS`` of them, each no longer than the run it checks (its own ``max_tokens``; a fix
that works usually ends sooner).

``to_check`` lists the fixes to run, ``judged`` attaches what a fixed run showed (pure, for
any way of running), ``check_fixes`` does both with a model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from fsmviz.diagnose.finding import Finding, FixCheck
from fsmviz.diagnose.text import percent
from fsmviz.generation.trace import GenerationOptions, Trace

__all__ = [
    "MAX_CHECKS",
    "RUN_KINDS",
    "FixKey",
    "check_fixes",
    "fix_key",
    "fixed_options",
    "judged",
    "needs_check",
    "to_check",
]

RUN_KINDS = frozenset({"loop", "valid_mass_collapse", "truncation"})
"""Findings read off a run: their fixes are checked on it before they are offered."""

MAX_CHECKS = 2
"""At most this many distinct fixes are re-run for one run (the rest stay unchecked)."""

FixKey = tuple[str | None, tuple[tuple[str, bool | int | float], ...]]
"""A fix as (rewritten pattern or None, settings): findings with equal keys share a check."""


def fix_key(finding: Finding) -> FixKey | None:
    """The finding's fix, or None when it has none."""
    if finding.suggestion is None and not finding.settings:
        return None
    return finding.suggestion, finding.settings


def needs_check(finding: Finding) -> bool:
    """A run finding with a fix: offered only once checked (``Finding.check``)."""
    return finding.kind in RUN_KINDS and fix_key(finding) is not None


def to_check(findings: Sequence[Finding], limit: int = MAX_CHECKS) -> list[FixKey]:
    """The distinct fixes of the run findings not yet checked, in the findings' order (errors
    first), at most ``limit``.

    >>> loop = Finding("loop", "error", "…", suggestion="a{1,9}")
    >>> to_check([loop, Finding("unbounded_repeat", "warning", "…", suggestion="a{1,9}"), loop])
    [('a{1,9}', ())]
    """
    keys: list[FixKey] = []
    for f in findings:
        key = fix_key(f)
        if needs_check(f) and f.check is None and key is not None and key not in keys:
            keys.append(key)
    return keys[:limit]


def fixed_options(trace: Trace, key: FixKey) -> GenerationOptions:
    """The run's own options with the fix's settings put in (same prompt, seed, budget)."""
    return replace(trace.options or GenerationOptions(), **dict(key[1]))  # type: ignore[arg-type]


def judged(
    findings: Sequence[Finding],
    key: FixKey,
    before: Trace,
    after: Trace,
    after_findings: Sequence[Finding],
    threshold: float = 0.05,
) -> tuple[Finding, ...]:
    """``findings`` (of the run ``before``) with every finding whose fix is ``key`` given its
    ``check``: the thing its kind names counted on ``before`` and on ``after`` (the run with
    the fix, diagnosed as ``after_findings``). A loop, or a static finding sharing the fix,
    counts the steps going round a loop; a collapse, the steps below ``threshold``; a
    truncation, the tokens written when max_tokens cut the run off.
    """
    out = []
    for f in findings:
        if fix_key(f) != key:
            out.append(f)
            continue
        measure, was = _count(f.kind, before, findings, threshold)
        _, now = _count(f.kind, after, after_findings, threshold)
        out.append(replace(f, check=FixCheck(measure, was, now, now < was, after.text)))
    return tuple(out)


def _count(kind: str, trace: Trace, findings: Sequence[Finding], threshold: float):
    """(what is counted, how many) for a finding of ``kind`` on ``trace``."""
    if kind == "valid_mass_collapse":
        low = sum(
            1
            for s in trace.steps
            if not s.is_eos and not math.isnan(s.valid_mass) and s.valid_mass < threshold
        )
        return f"steps below {percent(threshold)} valid mass", low
    if kind == "truncation":
        cut = len(trace.steps) if trace.stop_reason == "max_tokens" else 0
        return "tokens written when max_tokens cut the run off", cut
    return "steps going round a loop", sum(len(f.steps) for f in findings if f.kind == "loop")


def check_fixes(
    model, findings: Sequence[Finding], trace: Trace, *, limit: int = MAX_CHECKS
) -> tuple[Finding, ...]:
    """``findings`` of ``trace`` with their run fixes checked (``judged``): each of
    ``to_check``'s fixes run with ``model`` on the trace's prompt and options, then
    diagnosed. One generation per fix, each at most the trace's ``max_tokens``.

    Example: the default example's loop (``.I.I.I``) and its bound::

        found = check_fixes(model, diagnose(EMAIL, model.vocab, trace), trace)
        [f.check.said for f in found if f.kind == "loop"]
        # ['steps going round a loop: 51 → 0']
    """
    from fsmviz.diagnose import diagnose
    from fsmviz.generation.generate import generate

    checked = tuple(findings)
    for key in to_check(checked, limit):
        pattern = key[0] if key[0] is not None else trace.pattern
        after = generate(model, pattern, trace.prompt, fixed_options(trace, key))
        checked = judged(checked, key, trace, after, diagnose(pattern, model.vocab, after))
    return checked
