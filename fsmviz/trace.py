"""What a constrained generation records: one ``Step`` per token, and the finished ``Trace``.

Every number the app draws comes from these records, so they say plainly what happened at
each step: the DFA state before and after, how many tokens the DFA allowed, how much of the
model's own probability those tokens held (the *valid mass*), what the model would have
picked without the constraint, and which token was taken.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from typing import Literal, NamedTuple

__all__ = ["Candidate", "Step", "StopReason", "Trace"]

CSV_COLUMNS = ("step", "token_id", "text", "state_before", "state_after", "allowed_count",
               "valid_mass", "prob", "forced", "drafted", "top")  # fmt: skip

StopReason = Literal["accepted", "max_tokens", "prob_limit", "dead_end"]


class Candidate(NamedTuple):
    """One of the model's top unconstrained choices at a step."""

    text: str
    prob: float
    allowed: bool


@dataclass(frozen=True)
class Step:
    """One generated token.

    ``valid_mass`` is the model's unconstrained probability of all allowed tokens together
    (after temperature): near 1 the constraint agrees with the model, near 0 it is forcing
    text the model did not want. ``forced`` steps were written without asking the model,
    because the pattern left exactly one possible continuation.
    """

    token_id: int
    text: str
    state_before: int
    state_after: int
    allowed_count: int
    valid_mass: float
    top: tuple[Candidate, ...]
    forced: bool = False
    index: int = 0
    prob: float = 0.0
    """The model's unconstrained probability of the token that was taken."""
    token_bytes: bytes = b""
    is_eos: bool = False
    drafted: bool = False
    """Proposed by prompt lookup and kept because sampling agreed (``draft_tokens``): its
    logits came from the same forward pass as the tokens before it."""


@dataclass(frozen=True)
class Trace:
    """A finished generation. ``matched`` is whether ``text`` fully matches the pattern."""

    text: str
    steps: tuple[Step, ...]
    stop_reason: StopReason
    matched: bool
    pattern: str | None = None
    prompt: str = ""
    options: dict[str, object] = field(default_factory=dict)
    seconds: float = 0.0
    notes: tuple[str, ...] = ()
    """What the run could not do as asked, and why (e.g. no safe end for a huge index)."""

    @property
    def tokens_per_second(self) -> float:
        return len(self.steps) / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-ready data (bytes as lists of ints)."""
        data = asdict(self)
        for step in data["steps"]:
            step["token_bytes"] = list(step["token_bytes"])
            step["top"] = [{"text": c[0], "prob": c[1], "allowed": c[2]} for c in step["top"]]
        return data

    def to_json(self, **kwargs: object) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    def to_csv(self) -> str:
        """One row per step, for spreadsheets."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        for s in self.steps:
            top = "; ".join(
                f"{c.text!r} {c.prob:.4f} {'ok' if c.allowed else 'blocked'}" for c in s.top
            )
            writer.writerow(
                [s.index, s.token_id, s.text, s.state_before, s.state_after, s.allowed_count,
                 f"{s.valid_mass:.6f}", f"{s.prob:.6f}", s.forced, s.drafted, top]
            )  # fmt: skip
        return out.getvalue()
