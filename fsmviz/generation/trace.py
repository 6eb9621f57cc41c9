"""What a constrained generation records: its options, one ``Step`` per token, and the
finished ``Trace``.

Every number the app draws comes from these records, so they say plainly what happened at
each step: the DFA state before and after, how many tokens the DFA allowed, how much of the
model's own probability those tokens held (the *valid mass*), what the model would have
picked without the constraint, and which token was taken.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Literal, NamedTuple, Protocol

from fsmviz.params import GENERATION, MAX_TOKENS_LIMIT, ParameterError

__all__ = [
    "Candidate",
    "MATCH_CLAIMS",
    "MAX_TOKENS_LIMIT",
    "GenerationOptions",
    "Step",
    "StopReason",
    "Trace",
    "drawn_path",
    "pieces",
    "stopped_trace",
]

MAX_DRAFT_TOKENS = 16

CSV_COLUMNS = ("step", "token_id", "text", "state_before", "state_after", "allowed_count",
               "valid_mass", "prob", "forced", "drafted", "top", "cut", "top_k_removed",
               "top_p_removed")  # fmt: skip

StopReason = Literal[
    "accepted",
    "max_tokens",
    "prob_limit",
    "dead_end",
    "first_match",
    "overshoot",
    "not_accepted",
    "engine_error",
]
"""Why a run stopped. Three of them claim a match (``MATCH_CLAIMS``: ``accepted``,
``first_match``, ``overshoot``), and a trace carries one only when the constraint's own
judge accepts its text (``Trace.matched``); where the engine that masked the run let it end
but the judge refuses the text, the run says ``not_accepted``. ``engine_error``: the engine
that computes the mask (llguidance, for a grammar) refused to go on, too complex or past
one of its limits; ``Trace.notes`` quotes its words."""
MATCH_CLAIMS: tuple[StopReason, ...] = ("accepted", "first_match", "overshoot")
StopRule = Literal["eos", "first"]
STOP_RULES: tuple[StopRule, ...] = ("eos", "first")


@dataclass(frozen=True)
class GenerationOptions:
    """The knobs of one generation, checked on construction. The page builds one, hands it
    to ``stream``, and finds it again, unchanged but for what could not be done (``safe_end``
    off for a huge index), as ``Trace.options``, where the doctor reads it.

    >>> GenerationOptions(max_tokens=8).max_tokens
    8
    >>> GenerationOptions(top_p=0)
    Traceback (most recent call last):
    fsmviz.params.ParameterError: top_p must be a number greater than 0 and at most 1; got 0
    """

    max_tokens: int = 64
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    chat: bool = True
    prob_limit: float | None = None
    fast_forward: bool = True
    safe_end: bool = True
    draft_tokens: int = 0
    """Speculative drafts: up to this many tokens guessed by prompt lookup (what followed
    the same words earlier in the prompt or output) fed in the same pass, and kept while
    sampling agrees (same output distribution; greedy output unchanged). 0: off."""
    top_k: int = 0
    """Sample only among the ``top_k`` likeliest *allowed* tokens (0: off); with
    ``top_p``, after the mask (``fsmviz.generation.samplers``)."""
    stop: StopRule = "eos"
    """``"eos"``: the model ends with EOS where the pattern accepts, or the run ends where
    nothing may follow; ``"first"``: stop at the first full match, as ReLLM does (``[0-9]+``
    returns after one digit). Stop reason ``first_match``."""
    overshoot: bool = False
    """Seed 002's smarter token selection: a token whose beginning completes a match may be
    taken even though its rest leaves the pattern (``0,`` after ``27.0``); the run then
    ends with the output cut at the longest match (stop reason ``overshoot``,
    ``Step.cut``). With ``stop="eos"`` this is seed 002's "longest match"."""

    def __post_init__(self) -> None:
        for f in fields(self):  # type and range, as the page, API and CLI check them
            if f.name in GENERATION:
                object.__setattr__(self, f.name, GENERATION[f.name].check(getattr(self, f.name)))
        if not 0 <= self.draft_tokens <= MAX_DRAFT_TOKENS:
            allowed = f"between 0 (off) and {MAX_DRAFT_TOKENS}"
            raise ParameterError("draft_tokens", self.draft_tokens, allowed)
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or self.top_k < 0:
            raise ParameterError("top_k", self.top_k, "a whole number >= 0 (0: off)")
        if self.stop not in STOP_RULES:
            allowed = f"one of {', '.join(map(repr, STOP_RULES))}"
            raise ParameterError("stop", self.stop, allowed)

    def __getitem__(self, name: str) -> object:
        """An option by name, as when ``Trace.options`` was a dict (``options["seed"]``)."""
        if name not in _OPTION_NAMES:
            raise KeyError(name)
        return getattr(self, name)


_OPTION_NAMES = frozenset(f.name for f in fields(GenerationOptions))


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
    cut: str = ""
    """Overshoot (``GenerationOptions.overshoot``): the end of the token that was cut off
    because it left the pattern (``","`` of ``0,``); ``token_bytes`` then holds only the
    part kept, ``text`` the whole token. Empty for every other step."""
    top_k_removed: int = 0
    """Allowed tokens the top-k sampler removed at this step."""
    top_p_removed: int = 0
    """Allowed tokens the top-p (nucleus) sampler removed at this step."""
    overshoot_count: int = 0
    """Tokens allowed at this step only as overshoot tokens (counted in ``allowed_count``)."""


def pieces(steps: Iterable[Step]) -> list[str]:
    r"""The text each step adds to the output: the characters it completes. Tokens may split
    a character's UTF-8 bytes; an incremental decoder walks the bytes, so the pieces join to
    exactly the generated text (a character left unfinished at the end is ``\ufffd``).

    >>> pieces(Step(0, "", 0, 0, 1, 1.0, (), token_bytes=b) for b in (b"a\xe6\x9d", b"\xb1"))
    ['a', '東']
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    out = [decoder.decode(step.token_bytes) for step in steps]
    if out:
        out[-1] += decoder.decode(b"", final=True)
    return out


class Walkable(Protocol):
    """What ``drawn_path`` needs of a character DFA (``fsmviz.automaton.dfa.Dfa``)."""

    initial: int

    def step(self, state: int, char: str) -> int | None: ...


def drawn_path(
    steps: Sequence[Step], dfa: Walkable
) -> list[tuple[int, int, tuple[tuple[int, int], ...]]]:
    r"""For each step: (drawn state before, drawn state after, drawn edges it walked).

    The index works on bytes, so a token that ends inside a multi-byte character (``東`` is
    ``e6 9d b1``) leaves the generation in a byte-level state the drawing does not have.
    Here the characters each step completes (``pieces``) are walked through the
    drawn DFA: a step that ends mid-character stays at the character state it sits in,
    and the step that completes the character lights its edge.

    >>> from fsmviz import compile_regex
    >>> dfa = compile_regex("東京")
    >>> steps = [Step(0, "", 0, 9, 1, 1.0, (), token_bytes=b"\xe6\x9d"),
    ...          Step(1, "", 9, 1, 1, 1.0, (), index=1, token_bytes=b"\xb1\xe4\xba\xac")]
    >>> drawn_path(steps, dfa)
    [(0, 0, ()), (0, 2, ((0, 1), (1, 2)))]
    """
    state, out = dfa.initial, []
    for piece in pieces(steps):
        before, walked = state, []
        for char in piece:
            after = dfa.step(state, char)
            if after is None:  # cannot happen for a constrained run; stay put if it does
                break
            walked.append((state, after))
            state = after
        out.append((before, state, tuple(walked)))
    return out


@dataclass(frozen=True)
class Trace:
    """A finished generation. ``matched`` is whether ``text`` fully matches the pattern.
    ``options`` are those the run used (None for a trace built by hand without them; a
    mapping given here is read as ``GenerationOptions``)."""

    text: str
    steps: tuple[Step, ...]
    stop_reason: StopReason
    matched: bool
    pattern: str | None = None
    prompt: str = ""
    options: GenerationOptions | None = None
    seconds: float = 0.0
    notes: tuple[str, ...] = ()
    """What the run could not do as asked, and why (e.g. no safe end for a huge index)."""
    model: str | None = None
    """The name of the model that wrote it (a served model's as the caller named it: on
    the page, the configured server's name), None where not known."""

    def __post_init__(self) -> None:
        if isinstance(self.options, Mapping):  # the dict a Trace held before the record
            options = GenerationOptions(**self.options) if self.options else None
            object.__setattr__(self, "options", options)

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
                 f"{s.valid_mass:.6f}", f"{s.prob:.6f}", s.forced, s.drafted, top, s.cut,
                 s.top_k_removed, s.top_p_removed]
            )  # fmt: skip
        return out.getvalue()


def stopped_trace(
    written: Sequence[Step],
    prompt: str,
    options: GenerationOptions | None,
    pattern: str | None,
    accepts: Callable[[str], bool],
) -> Trace:
    """The trace of a run the visitor stopped half-way: the steps ``written`` so far, their
    text judged by the constraint's own ``accepts`` (a judge that cannot decide in time,
    by raising ``ValueError``, counts as no match), and a note saying who stopped it. The
    stop reason is ``max_tokens``: the run ended for want of tokens, if not of budget.

    >>> steps = [Step(0, "4", 0, 1, 10, 0.9, (), token_bytes=b"4"),
    ...          Step(1, "2", 1, 2, 10, 0.8, (), index=1, token_bytes=b"2")]
    >>> trace = stopped_trace(steps, "a number", None, "[0-9]+", str.isdigit)
    >>> trace.text, trace.matched, trace.stop_reason, trace.notes
    ('42', True, 'max_tokens', ('Stopped by the visitor after 2 tokens.',))
    """
    text = b"".join(step.token_bytes for step in written).decode("utf-8", errors="replace")
    try:
        matched = bool(accepts(text))
    except ValueError:  # too ambiguous to judge in time (a grammar's Earley recognizer)
        matched = False
    count = f"{len(written):,} token" + ("" if len(written) == 1 else "s")  # as diagnose's plural
    note = f"Stopped by the visitor after {count}."
    return Trace(text, tuple(written), "max_tokens", matched, pattern, prompt, options,
                 notes=(note,))  # fmt: skip
