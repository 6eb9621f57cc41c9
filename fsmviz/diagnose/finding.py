"""The record the doctor writes: one ``Finding`` per thing worth knowing, and every kind.

A finding says in plain words what is wrong (or merely worth knowing), how bad it is, and
what to light up: states of the drawn DFA, steps of the trace, the piece of the pattern
concerned, and, when one exists, a rewritten pattern that avoids the problem.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]
RANK: dict[str, int] = {"error": 0, "warning": 1, "info": 2}
"""Sort key for severities: errors first."""

KINDS: dict[str, str] = {
    "regex_error": "the pattern cannot be compiled",
    "empty_language": "no text at all matches the pattern",
    "accepts_empty": "the pattern matches the empty string, so the model may stop at once",
    "dead_end": "no sequence of this vocabulary's tokens can finish a match",
    "unreachable_char": "the pattern allows characters that no token can write",
    "unbounded_repeat": "a repeat without an upper bound that a model can ride forever",
    "budget": "the fewest tokens to a match compared with max_tokens",
    "index_size": "the pattern's token index is too large to walk in full: token-level checks "
    "and the safe end are skipped",
    "no_tokenizer": "no tokenizer was loaded: only the pattern-level checks ran",
    "prefix_alternative": "one alternative is a prefix of another (hot|hotel): the output may "
    "stop at the shorter one",
    "optional_tail": "the match is already complete before an optional part",
    "ascii_class": "\\d \\w \\s mean ASCII only here, unlike Python's re",
    "unescaped_dot": "a bare . between literal characters matches any character",
    "lazy_quantifier": "a lazy quantifier (+? *?) does not make the model stop earlier",
    "valid_mass_collapse": "steps where the allowed tokens held almost none of the model's "
    "probability",
    "loop": "the output circled the same DFA cycle, repeating itself",
    "truncation": "the run hit max_tokens before the text matched",
    "prob_limit": "the run was stopped because the valid mass fell below prob_limit",
    "overshoot": "the model's last token ran past the end of a match: its first part "
    "finished the match and the rest of it was cut off the output",
    "first_match": "the run stopped as soon as the text fully matched, although the "
    "pattern let it go on",
    "engine_refusal": "an engine of vLLM, SGLang or TGI refuses the pattern",
    "engine_difference": "an engine allows different tokens than fsmviz on sampled walks",
    "engine_agrees": "an engine allows the same tokens as fsmviz on sampled walks",
    "engine_missing": "engines not installed, so not compared",
    # the grammar doctor (fsmviz.diagnose.grammar)
    "grammar_error": "the grammar's rules cannot be built as automata",
    "unfinishable_rule": "a rule no string can finish: a run that enters it never ends",
    "unreachable_rule": "a rule no chain of calls from the start rule reaches",
    "unbounded_rule": "a rule whose loop or recursion lets the output grow without end",
    "looping_whitespace": "whitespace that may repeat without bound",
    "overlapping_terminals": "two terminals that may come next match the same text",
    "unspellable_terminal": "a terminal no token of the vocabulary can spell",
    "grammar_budget": "the shortest sentence of the grammar compared with max_tokens",
}
"""Every finding kind, with a one-line description (for legends and documentation)."""


@dataclass(frozen=True)
class FixCheck:
    """What re-running a run's fix showed (``fsmviz.diagnose.checks``): the thing the
    finding names, counted on the run before and on the fixed run, same prompt and seed.

    >>> FixCheck("steps going round a loop", 51, 0, True, "a@b.com").said
    'steps going round a loop: 51 → 0'
    """

    measure: str
    """What was counted, in plain words ("steps below 5 % valid mass")."""
    before: int
    after: int
    helps: bool
    """The fix removes the finding or makes it smaller: only then is it offered."""
    text: str = ""
    """What the fixed run wrote."""

    @property
    def said(self) -> str:
        return f"{self.measure}: {self.before:,} → {self.after:,}"


@dataclass(frozen=True)
class Finding:
    """One diagnosis.

    ``states`` are states of the drawn DFA to light; ``steps`` are step indices of the trace
    (``Step.index``, from 0) to light on the chart. ``suggestion`` is a complete rewritten
    pattern that compiles, when one exists. ``fragment``/``span`` name the part of the
    pattern concerned, as written, and where it is (``pattern[span[0]:span[1]]``).
    ``settings`` are generation options to change instead of (or as well as) the pattern,
    as (name, value) pairs of ``GenerationOptions``' names: ``(("chat", True),)`` says "run
    it with the chat template on". Like ``suggestion``, it is a fix a page can apply as is.
    ``check``: for a finding read off a run, what re-running its fix on the same prompt
    and seed showed (``fsmviz.diagnose.checks``); None until that has been done.
    """

    kind: str
    severity: Severity
    message: str
    states: tuple[int, ...] = ()
    suggestion: str | None = None
    steps: tuple[int, ...] = ()
    fragment: str | None = None
    span: tuple[int, int] | None = None
    settings: tuple[tuple[str, bool | int | float], ...] = ()
    check: FixCheck | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)
