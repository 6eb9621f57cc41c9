"""A string read one character at a time, the transition table, and test strings.

Reading ``23.37`` with ``([0-9]+)?\\.[0-9]+`` (seed 000's animation)::

    0 ─2─▶ 0 ─3─▶ 0 ─.─▶ 1 ─3─▶ 2 ─7─▶ 2      state 2 accepts: a match

Three verdicts are possible: the text **matches** (it ends in an accepting state), it
**could still match** (it ends in a state that is not accepting, and every state of the
minimal DFA can still reach one), or it is **dead** at character k: no edge of the state
reached reads that character, and the walk says which classes the state would have read.

Every answer is held against Python's ``regex.fullmatch`` (with ``partial=True`` for "could
still match"). They can disagree: fsmviz, like interegular and outlines, reads ``\\d``,
``\\w`` and ``\\s`` as ASCII, while Python's regex reads them as Unicode, so ``\\d`` matches
"٣" (an Arabic-Indic three) in Python and not here. The reason is given with the verdict.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import regex

from fsmviz.automaton.dfa import Dfa
from fsmviz.automaton.syntax import greedy_quantifiers

__all__ = [
    "TableRow",
    "TestResult",
    "TransitionTable",
    "Walk",
    "WalkStep",
    "check_tests",
    "parse_tests",
    "transition_table",
    "walk_string",
]

Verdict = Literal["match", "partial", "dead"]


@dataclass(frozen=True)
class WalkStep:
    """Character ``index`` of the text moved ``before`` → ``after`` along class ``label``
    (``after`` None: no edge reads it)."""

    index: int
    char: str
    before: int
    after: int | None
    label: str | None


@dataclass(frozen=True)
class Walk:
    """The whole walk, the DFA's verdict and Python's.

    ``expected`` lists the classes the last state reached could read (what would have been
    accepted at the dead character). ``python`` is ``"match"``, ``"partial"`` or
    ``"dead"`` from ``regex.fullmatch``; ``reason`` explains a disagreement."""

    text: str
    steps: tuple[WalkStep, ...]
    verdict: Verdict
    dead_at: int | None
    expected: tuple[str, ...]
    python: Verdict
    reason: str | None

    @property
    def path(self) -> tuple[int, ...]:
        """States visited, the start first (the dead step's ``None`` left out)."""
        start = self.steps[0].before if self.steps else 0
        return (start, *(s.after for s in self.steps if s.after is not None))

    @property
    def agrees(self) -> bool:
        return self.verdict == self.python


PYTHON_SECONDS = 0.25
"""Seconds Python's backtracking matcher may spend on one check (all of a test block's
lines share four times as much): ``(a|aa)+`` against forty a's and a ``c`` would take hours.
Past it, the DFA's own verdict stands (it is linear in the text)."""


def _python_verdict(
    pattern: str, text: str, flags: int = 0, ours: Verdict = "dead", seconds: float = 0.25
) -> Verdict:
    """``regex.fullmatch``'s verdict, or ``ours`` (the DFA's) when it takes over ``seconds``."""
    try:
        if regex.fullmatch(pattern, text, flags=flags, timeout=seconds) is not None:
            return "match"
        greedy = greedy_quantifiers(pattern)  # regex's partial matching errs on lazy ones
        if regex.fullmatch(greedy, text, flags=flags, partial=True, timeout=seconds) is not None:
            return "partial"
    except TimeoutError:
        return ours
    return "dead"


def disagreement(
    dfa: Dfa, text: str, ours: Verdict, python: Verdict, seconds: float = PYTHON_SECONDS
) -> str | None:
    """Why the DFA and ``regex.fullmatch`` disagree on ``text`` (None when they agree)."""
    if ours == python:
        return None
    ascii_python = _python_verdict(dfa.pattern, text, regex.ASCII, ours, seconds)
    if ascii_python == ours:
        odd = sorted({c for c in text if not c.isascii()})
        return (
            "fsmviz reads \\d, \\w, \\s (and case-insensitive matching) over ASCII, as "
            "interegular and outlines do; Python's regex reads them over Unicode"
            + (f" and so treats {', '.join(map(repr, odd))} differently" if odd else "")
            + ". Write the characters you mean, e.g. [0-9] or [٠-٩0-9]."
        )
    return "the DFA and Python's regex module read this pattern differently here"


def walk_string(dfa: Dfa, text: str, seconds: float = PYTHON_SECONDS) -> Walk:
    """Read ``text`` with ``dfa`` one character at a time.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> w = walk_string(compile_regex("[0-9]+\\\\.[0-9]+"), "1.x")
    >>> w.verdict, w.dead_at, w.expected, w.path
    ('dead', 2, ('0-9',), (0, 1, 2))
    """
    state = dfa.initial
    steps: list[WalkStep] = []
    verdict: Verdict = "partial"
    dead_at = None
    for i, char in enumerate(text):
        k = dfa.class_of(char)
        target = None if k is None else dfa.transitions[state].get(k)
        steps.append(WalkStep(i, char, state, target, None if k is None else dfa.class_label(k)))
        if target is None:
            verdict, dead_at = "dead", i
            break
        state = target
    else:
        verdict = "match" if dfa.is_accepting(state) else "partial"
    expected = tuple(dfa.class_label(k) for k in sorted(dfa.transitions[state]))
    python = _python_verdict(dfa.pattern, text, ours=verdict, seconds=seconds)
    return Walk(text, tuple(steps), verdict, dead_at, expected, python,
                disagreement(dfa, text, verdict, python, seconds))  # fmt: skip


# --- the transition table -----------------------------------------------------------------


@dataclass(frozen=True)
class TableRow:
    state: int
    start: bool
    accepting: bool
    cells: tuple[int | None, ...]  # one per class: the next state, None when impossible


@dataclass(frozen=True)
class TransitionTable:
    """States × character classes, as seed 000 prints interegular's FSM (but with the
    classes merged, so ``0-9`` is one column instead of ten)."""

    classes: tuple[str, ...]
    rows: tuple[TableRow, ...]


def transition_table(dfa: Dfa) -> TransitionTable:
    """>>> from fsmviz.automaton.dfa import compile_regex
    >>> t = transition_table(compile_regex("([0-9]+)?\\\\.[0-9]+"))
    >>> t.classes, [r.cells for r in t.rows]
    (('.', '0-9'), [(1, 0), (None, 2), (None, 2)])
    """
    classes = tuple(dfa.class_label(k) for k in range(len(dfa.classes)))
    rows = tuple(
        TableRow(
            s,
            s == dfa.initial,
            dfa.is_accepting(s),
            tuple(dfa.transitions[s].get(k) for k in range(len(classes))),
        )  # fmt: skip
        for s in dfa.states
    )
    return TransitionTable(classes, rows)


# --- test strings -------------------------------------------------------------------------


@dataclass(frozen=True)
class TestResult:
    """One test string: what was expected, what the DFA and Python said, and why not."""

    __test__ = False  # not a pytest test class

    line: int
    text: str
    should_match: bool
    dfa: bool
    python: bool
    reason: str | None

    @property
    def passed(self) -> bool:
        return self.dfa == self.should_match


def parse_tests(block: str) -> list[tuple[int, str, bool]]:
    """``+ text`` should match, ``- text`` should not; a line without a mark should match.
    Blank lines are skipped. ``(line number, text, should match)``.

    >>> parse_tests("+ 1.5\\n- 1.\\n\\n2.0")
    [(1, '1.5', True), (2, '1.', False), (4, '2.0', True)]
    """
    out = []
    for number, line in enumerate(block.splitlines(), start=1):
        if not line.strip():
            continue
        if line[:2] in ("+ ", "- "):
            out.append((number, line[2:], line[0] == "+"))
        else:
            out.append((number, line, True))
    return out


def check_tests(dfa: Dfa, block: str) -> list[TestResult]:
    """Every test string of ``block`` (see ``parse_tests``) checked against the DFA and
    ``regex.fullmatch``."""
    results = []
    deadline = time.monotonic() + 4 * PYTHON_SECONDS
    for number, text, should in parse_tests(block):
        ours = dfa.accepts(text)
        left = max(deadline - time.monotonic(), 0.001)
        try:
            python = regex.fullmatch(dfa.pattern, text, timeout=left) is not None
        except TimeoutError:
            python = ours  # the DFA's verdict stands
        reason = None
        if ours != python:
            reason = disagreement(dfa, text, "match" if ours else "dead",
                                  "match" if python else "dead", left)  # fmt: skip
        elif ours != should:
            walk = walk_string(dfa, text, left)
            if walk.verdict == "dead":
                reads = ", ".join(walk.expected) or "nothing"
                char = text[walk.dead_at]
                reason = f"character {walk.dead_at + 1} ({char!r}) is impossible; it reads {reads}"
            elif walk.verdict == "partial":
                reason = "the text stops too early: it could still match if it went on"
            else:
                reason = "the pattern matches this text"
        results.append(TestResult(number, text, should, ours, python, reason))
    return results
