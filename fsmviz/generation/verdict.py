"""The verdict on a server's run, after its replay: per step (``StepVerdict``, the page's
engine-check panel) and in words (the run's notes on the engine check, another spelling
of a grammar's text, and the steps whose valid mass is only a bound). Reads only what
``fsmviz.generation.replay`` found; asks nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fsmviz.generation.replay import TOP, Replayed
from fsmviz.generation.trace import Step
from fsmviz.printable import printable


@dataclass(frozen=True)
class StepVerdict:
    """One row of a server run's engine check (``ServerRun.verdicts``): the token the
    server wrote at ``step``, how many tokens the exact automaton allowed there, how many
    of the server's candidates its answer showed (``visible``), and the verdict: ``agrees``,
    or the disagreements at that step in words (``messages``)."""

    step: int
    token: str
    allowed: int
    visible: int
    messages: tuple[str, ...] = ()

    @property
    def agrees(self) -> bool:
        return not self.messages

    @property
    def verdict(self) -> str:
        return "agrees" if self.agrees else "; ".join(self.messages)


def verdicts(found: Replayed, steps: Sequence[Step]) -> tuple[StepVerdict, ...]:
    """The engine check step by step: a row per replayed step (its visible candidates
    held to the exact allowed set), and one more for a token the replay refused (the step
    where it stopped, among ``found.refused_among`` allowed)."""
    checks = {check.step: check for check in found.checks}
    said: dict[int, list[str]] = {}
    for disagreement in found.disagreements:  # each message once (the written token
        said.setdefault(disagreement.step, [])  # may also be among the visible ones)
        if disagreement.message not in said[disagreement.step]:
            said[disagreement.step].append(disagreement.message)
    rows = [
        StepVerdict(
            step.index,
            "EOS" if step.is_eos else printable(step.text),
            step.allowed_count,
            checks[step.index].visible if step.index in checks else 0,
            tuple(said.get(step.index, ())),
        )
        for step in steps
    ]
    for number in sorted(n for n in said if n >= len(steps)):
        refused = next(d for d in found.disagreements if d.step == number)
        shown = checks[number].visible if number in checks else 0
        token = printable(refused.text) or "EOS"
        rows.append(StepVerdict(number, token, found.refused_among, shown, tuple(said[number])))
    return tuple(rows)


def replay_notes(found: Replayed, shown: int) -> list[str]:
    """What the replay found, in words for the run's notes: the engine check over the
    candidates the server showed (vLLM's top ``TOP``), another spelling of a grammar's
    text, and the steps whose valid mass is only a lower bound (the allowed among the
    ``shown`` likeliest)."""
    notes = []
    if found.checks:
        seen = sum(check.visible for check in found.checks)
        wrong = [d.message for d in found.disagreements]
        verdict = "every one agrees with the exact automaton"
        if wrong:
            more = "…" if len(wrong) > 3 else ""
            verdict = f"{len(wrong)} disagree: " + "; ".join(wrong[:3]) + more
        notes.append(
            f"Engine check: {seen} candidates of the server's mask visible at "
            f"{len(found.checks)} steps (its top {TOP} logprobs); {verdict}."
        )
    if found.spellings:
        where = sorted({s.step for s in found.spellings})
        steps = ", ".join(map(str, where[:10])) + ("…" if len(where) > 10 else "")
        example = printable(found.spellings[0].text)
        notes.append(
            f"Spelling: at steps {steps} your server offered the grammar's text in tokens "
            f"llguidance does not offer there (`{example}` at step {where[0]}); the text "
            "still fits the grammar (fsmviz's Earley recognizer), so the engines spell it "
            "differently and neither is wrong. The allowed sets there are llguidance's."
        )
    if found.bounds:
        steps = ", ".join(map(str, found.bounds[:10])) + ("…" if len(found.bounds) > 10 else "")
        notes.append(
            f"The valid mass is a lower bound at steps {steps}: the server's logprobs do "
            f"not give it exactly there (the sum over the allowed of its top {shown})."
        )
    return notes
