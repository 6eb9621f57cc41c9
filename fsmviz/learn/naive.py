"""The seeds' naive method against the index, timed on the real vocabulary.

Seed 000 ("High hopes"): after the text P, a token t may come next when
``regex.fullmatch(pattern, P + t, partial=True)`` matches. That is one partial match per
token of a 49,152-token vocabulary, at *every* step ("this algorithm will explode in your
face"). The index does the work once per state; a step is then a lookup. Both are timed
here, live, on the same step, and their allowed sets compared.

The naive sets differ from the index's in two honest ways, counted in ``only_naive``:
tokens that are not valid UTF-8 alone (half of "日") cannot be matched as text at all,
and the index also refuses a token that leads where no token of the vocabulary can ever
finish the match (tests/oracle.py explains both).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import regex

from fsmviz.automaton.syntax import greedy_quantifiers
from fsmviz.errors import FsmvizError
from fsmviz.tokens.index import build_index
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["NAIVE_SECONDS", "NaiveStep", "NaiveTooSlow", "naive_allowed", "naive_vs_index"]

NAIVE_SECONDS = 20.0
"""Seconds the naive method may spend on one walk, all steps together (a step takes 0.2-1.5 s
here): it runs Python's backtracking matcher once per token, ~49,000 times a step, and
``(a|aa)+b`` after forty a's takes hours."""


class NaiveTooSlow(FsmvizError):
    """The naive method passed ``NAIVE_SECONDS``: the point of the comparison, made loudly."""


@dataclass(frozen=True)
class NaiveStep:
    """One step of the walk: the prefix, both allowed sets and both times (seconds)."""

    prefix: str
    token: int | None  # the token taken next (None at the last step)
    naive: tuple[int, ...]
    indexed: tuple[int, ...]
    naive_seconds: float
    index_seconds: float

    @property
    def speedup(self) -> float:
        return self.naive_seconds / max(self.index_seconds, 1e-9)


def naive_allowed(
    pattern: str, vocab: Vocabulary, prefix: str, seconds: float = NAIVE_SECONDS
) -> tuple[int, ...]:
    """Token ids t with ``regex.fullmatch(pattern, prefix + t, partial=True)`` (ASCII
    classes, like the engine), plus EOS when ``prefix`` fully matches. ``NaiveTooSlow``
    after ``seconds``."""
    compiled = regex.compile(greedy_quantifiers(pattern), regex.ASCII)  # partial: no +?
    deadline = time.monotonic() + seconds
    try:
        return _naive_allowed(compiled, vocab, prefix, deadline)
    except TimeoutError:
        raise NaiveTooSlow(
            f"the naive method ran out of time at the text {prefix[:40]!r}: "
            "Python's backtracking matcher tries every way to split the text for a pattern "
            "like (a|aa)+, once per token of the vocabulary; the index reads each state once"
        ) from None


def _naive_allowed(
    compiled: regex.Pattern, vocab: Vocabulary, prefix: str, deadline: float
) -> tuple[int, ...]:
    out = []
    for i, data in enumerate(vocab.all_token_bytes):
        if not data:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        left = deadline - time.monotonic()  # regex checks its timeout only now and then
        if left <= 0:
            raise TimeoutError
        if compiled.fullmatch(prefix + text, partial=True, timeout=left) is not None:
            out.append(i)
    if compiled.fullmatch(prefix, timeout=max(deadline - time.monotonic(), 0.001)) is not None:
        out.append(vocab.eos_token_id)
    return tuple(sorted(out))


def naive_vs_index(
    pattern: str, vocab: Vocabulary, target: str, max_steps: int = 6
) -> tuple[float, list[NaiveStep]]:
    """Walk towards ``target`` (at each step the longest allowed token that is a prefix of
    what is left), timing both methods at each step. Returns (index build seconds, steps).
    ``NaiveTooSlow`` when the naive method's steps take over ``NAIVE_SECONDS`` together.
    """
    started = time.perf_counter()
    index = build_index(pattern, vocab)
    index.allowed_tokens(index.initial_state)
    build_seconds = time.perf_counter() - started
    core = index.dfa.pattern
    state, prefix = index.initial_state, ""
    steps: list[NaiveStep] = []
    spent = 0.0
    for _ in range(max_steps):
        t0 = time.perf_counter()
        naive = naive_allowed(core, vocab, prefix, max(NAIVE_SECONDS - spent, 0.001))
        t1 = time.perf_counter()
        indexed = tuple(int(t) for t in index.allowed_tokens(state))
        t2 = time.perf_counter()
        spent += t1 - t0
        rest = target[len(prefix) :]
        best = max(
            (
                t
                for t in indexed
                if vocab.token_bytes(t) and rest.encode().startswith(vocab.token_bytes(t))
            ),
            key=lambda t: len(vocab.token_bytes(t)),
            default=None,
        )
        steps.append(NaiveStep(prefix, best, naive, indexed, t1 - t0, t2 - t1))
        if best is None:
            break
        state = index.next_state(state, best)
        prefix += vocab.token_bytes(best).decode("utf-8", "replace")
    return build_seconds, steps
