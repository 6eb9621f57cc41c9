"""A pattern-level suggestion is offered only if it helps: the doctor, run on the rewritten
pattern, no longer reports the same kind of finding where the rewrite changed the text.

Reordering ``(hot|cold|hotel)`` into ``(hotel|cold|hot)`` was once offered for the early
stop at ``hot``; the reordered pattern has the same automaton, so the doctor finds the same
early stop in it (issue 47). ``held`` catches any rewrite like that, whichever check wrote
it. The re-run is the pattern-level doctor over single bytes (no vocabulary, no model), a
few milliseconds for the patterns it checks; a suggestion too large to compile quickly
(``rewrites.FULL_CHECK_POSITIONS``) is kept as its check made it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher

from fsmviz.automaton.dfa import _expanded_size as expanded_size
from fsmviz.automaton.syntax import RegexError, parse
from fsmviz.cache import bounded
from fsmviz.diagnose.case import Case
from fsmviz.diagnose.finding import Finding
from fsmviz.diagnose.rewrites import FULL_CHECK_POSITIONS
from fsmviz.tokens.index import IndexTooLarge, build_index
from fsmviz.tokens.vocab import Vocabulary

Place = tuple[str, tuple[int, int] | None]
Doctor = Callable[[Case, int | None], list[Finding]]
"""The pattern-level doctor that re-checks a rewrite (``static``'s checks, handed in by
``static_findings``: this module is below it and does not import it)."""


def held(pattern: str, found: Sequence[Finding], doctor: Doctor) -> list[Finding]:
    """``found`` (the static findings of ``pattern``) with each suggestion that does not
    remove its finding, by ``doctor``'s reading of the rewrite, taken away; the finding
    itself, and its explanation, stay.

    >>> from fsmviz.diagnose.static import static_findings
    >>> def doctor(case, max_tokens):
    ...     return static_findings(case, max_tokens, hold=False)
    >>> reorder = Finding("prefix_alternative", "warning", "…", suggestion="(hotel|cold|hot)",
    ...                   span=(1, 15))
    >>> held("(hot|cold|hotel)", [reorder], doctor)[0].suggestion is None
    True
    >>> bound = Finding("unbounded_repeat", "warning", "…", suggestion="[a-z]{1,32}@[a-z]+",
    ...                 span=(0, 6))
    >>> held("[a-z]+@[a-z]+", [bound], doctor)[0].suggestion
    '[a-z]{1,32}@[a-z]+'
    """
    return [
        dataclasses.replace(f, suggestion=None)
        if f.suggestion and not helps(pattern, f, f.suggestion, doctor)
        else f
        for f in found
    ]


def helps(pattern: str, finding: Finding, suggestion: str, doctor: Doctor) -> bool:
    """Whether ``doctor``, run on ``suggestion``, no longer reports ``finding``'s kind at
    its place (its span carried over the rewrite; any place, for a finding without a
    span). True when the suggestion is too large to re-check quickly.

    >>> from fsmviz.diagnose.static import static_findings
    >>> def doctor(case, max_tokens):
    ...     return static_findings(case, max_tokens, hold=False)
    >>> f = Finding("unbounded_repeat", "warning", "…", span=(0, 6))
    >>> helps("[a-z]+@[a-z]+", f, "[a-z]{1,32}@[a-z]+", doctor)
    True
    >>> helps("[a-z]+@[a-z]+", f, "[a-z]+@[a-z]{1,9}", doctor)  # bounds the other one
    False
    """
    places = _places(suggestion, doctor)
    if places is None:
        return True
    there = _carried(pattern, suggestion, finding.span) if finding.span else None
    for kind, span in places:
        if kind != finding.kind:
            continue
        if there is None or span is None:
            return False
        if span[0] < there[1] and there[0] < span[1]:
            return False
    return True


def _carried(before: str, after: str, span: tuple[int, int]) -> tuple[int, int]:
    """``span`` of ``before`` carried over to ``after``: an unchanged end moves with the
    text around it; an end inside a changed piece takes that piece's start or end, so
    the span covers what replaced it.

    >>> _carried("(hot|cold|hotel)", "(hotel|cold|hot)", (1, 15))
    (1, 15)
    >>> _carried("a+b+", "a{1,32}b+", (2, 4))
    (7, 9)
    """
    ops = SequenceMatcher(None, before, after, autojunk=False).get_opcodes()

    def carry(p: int, start: bool) -> int:
        for tag, i1, i2, j1, j2 in ops:
            inside = i1 <= p < i2 if start else i1 < p <= i2
            if tag == "equal" and inside:
                return j1 + p - i1
            if tag != "equal" and (inside or i1 == i2 == p):
                return j1 if start else j2
        return len(after) if p >= len(before) else 0

    a, b = carry(span[0], True), carry(span[1], False)
    return (a, max(a + 1, b))


@bounded(maxsize=1)
def _bytes() -> Vocabulary:
    """Every single byte as a token: the pattern-level doctor's vocabulary."""
    return Vocabulary("bytes", (*(bytes([b]) for b in range(256)), b""), 256, {256: "<eos>"})


@bounded(maxsize=256)
def _places(pattern: str, doctor: Doctor) -> frozenset[Place] | None:
    """(kind, span) of every finding ``doctor`` makes of ``pattern`` over single bytes;
    None when it is too large to check quickly or cannot be built."""
    try:
        if expanded_size(parse(pattern)[1]) > FULL_CHECK_POSITIONS:
            return None
        vocab = _bytes()
        case = Case(pattern, build_index(pattern, vocab), vocab, suggests=False)
    except (RegexError, IndexTooLarge):
        return None
    return frozenset((f.kind, f.span) for f in doctor(case, None))
