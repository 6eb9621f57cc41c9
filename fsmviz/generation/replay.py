"""A server's tokens replayed through fsmviz's exact automaton (``ServerRun``'s replay).

The server wrote ``written``; ``replay`` walks them through the pattern's index (or a
grammar's cursor) one by one and writes each down as a ``Step``, as a local run does. At
each step it also holds the candidates the server's answer showed against the exact
allowed set (``EngineCheck``): one the server offered that the automaton refuses, or masked
that it allows, is a ``Disagreement``. A written token the automaton refuses ends the
replay there, named. Nothing here asks the server: the requests are
``fsmviz.generation.exchange``'s (vLLM) or ``fsmviz.generation.llamacpp``'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fsmviz.generation.trace import Candidate, Step, StopReason
from fsmviz.generation.wire import BOUND_SLACK, ServerError, _members
from fsmviz.printable import printable
from fsmviz.tokens.vocab import Vocabulary

TOP = 5
"""The model's likeliest tokens a step keeps (``Step.top``), as a local run keeps them."""
MASKED = -1e3
"""A logprob at or below this is a masked token (vLLM writes −inf as −9999)."""

Mass = Callable[[dict[int, float], int, "float | None", Any], tuple[float, bool]]
"""One step's valid mass and whether it is exact, from the scored logprobs, the written
token, its masked logprob and the allowed set (``valid_mass``, or llama.cpp's)."""


@dataclass(frozen=True)
class Disagreement:
    """A token the server's mask let through where the exact automaton does not allow it
    (written, or only offered among its top logprobs), or masked where it is allowed."""

    step: int
    token_id: int
    text: str
    message: str


@dataclass(frozen=True)
class EngineCheck:
    """The server's mask at one step, as far as its answer shows it, against the exact
    automaton's: the candidates of its top logprobs (after its mask: a masked one comes at
    −9999), those it offered that the automaton refuses (``looser``) and those it masked
    that the automaton allows (``stricter``)."""

    step: int
    visible: int
    looser: tuple[int, ...] = ()
    stricter: tuple[int, ...] = ()

    @property
    def agrees(self) -> bool:
        return not self.looser and not self.stricter


@dataclass(frozen=True)
class Replayed:
    """What a replay found: the ``steps`` it wrote down, the engine check per step
    (``checks``; ``disagreements``, and ``spellings``: a grammar's text in tokens
    llguidance does not offer, where it still fits), the steps whose valid mass is only a
    lower bound (``bounds``), and where the automaton refused a written token: the allowed
    set's size there (``refused_among``) and the note that names it (``refusal``)."""

    steps: list[Step]
    checks: list[EngineCheck]
    disagreements: list[Disagreement]
    spellings: list[Disagreement]
    bounds: list[int]
    refused_among: int = 0
    refusal: str | None = None


def replay(
    vocab: Vocabulary,
    index: Any,
    written: list[int],
    constrained: Sequence[float | None],
    scored: list[dict[int, float]],
    candidates: list[dict[int, float]],
    mass: Mass,
) -> Replayed:
    """Each written token through the exact automaton (``index``: a token index, a
    grammar's cursor, or None for an unconstrained run), with the model's numbers:
    ``scored`` (unconstrained logprobs per step), ``constrained`` (the written token's,
    after the server's mask) and ``candidates`` (what the server showed per step)."""
    eos = vocab.eos_token_id
    state = index.initial_state if index is not None else 0
    found = Replayed([], [], [], [], [])
    for number, token in enumerate(written):
        allowed = index.allowed_tokens(state) if index is not None else None
        if allowed is not None and number < len(candidates):
            _check(found, vocab, index, number, candidates[number], allowed)
        after = index.next_state(state, token) if index is not None else 0
        if after is None:
            refused_among = len(vocab) if allowed is None else len(allowed)
            return _refused(found, vocab, number, written, refused_among)
        logprobs = scored[number]
        masked = constrained[number] if number < len(constrained) else None
        valid, exact = mass(logprobs, token, masked, allowed)
        if not exact:
            found.bounds.append(number)
        top = sorted(logprobs.items(), key=lambda item: (-item[1], item[0]))[:TOP]
        found.steps.append(
            Step(
                token_id=token,
                text="" if token == eos else vocab.token_text(token),
                state_before=state,
                state_after=after,
                allowed_count=len(vocab) if allowed is None else len(allowed),
                valid_mass=valid,
                top=tuple(
                    Candidate(vocab.token_text(t), math.exp(lp), _member(allowed, t))
                    for t, lp in top
                ),
                index=number,
                prob=math.exp(logprobs[token]) if token in logprobs else 0.0,
                token_bytes=b"" if token == eos else vocab.token_bytes(token),
                is_eos=token == eos,
            )
        )
        state = after
        if token == eos:
            break
    return found


def _check(
    found: Replayed,
    vocab: Vocabulary,
    index: Any,
    number: int,
    candidates: dict[int, float],
    allowed: np.ndarray,
) -> None:
    """The server's visible candidates at step ``number`` against ``allowed``, added to
    ``found`` (the index is still at that step: ``_spelled`` asks it)."""
    ids = list(candidates)
    inside = _members(allowed, ids) if ids else np.zeros(0, dtype=bool)
    masked = [candidates[t] <= MASKED for t in ids]
    looser = tuple(t for t, ok, m in zip(ids, inside, masked, strict=True) if not ok and not m)
    stricter = tuple(t for t, ok, m in zip(ids, inside, masked, strict=True) if ok and m)
    found.checks.append(EngineCheck(number, len(ids), looser, stricter))
    for token in looser:
        text = printable(vocab.token_text(token))
        if _spelled(vocab, index, token):
            message = (
                f"your server allowed `{text}` at step {number}, a spelling of the "
                "grammar's text that llguidance does not offer there; the text still fits"
            )
            found.spellings.append(Disagreement(number, token, vocab.token_text(token), message))
            continue
        message = f"your server allowed `{text}` at step {number}; no match can follow it"
        found.disagreements.append(Disagreement(number, token, vocab.token_text(token), message))
    for token in stricter:
        text = printable(vocab.token_text(token))
        message = f"your server masked `{text}` at step {number}, which the pattern allows"
        found.disagreements.append(Disagreement(number, token, vocab.token_text(token), message))


def _spelled(vocab: Vocabulary, index: Any, token: int) -> bool:
    """Whether a token outside llguidance's allowed set still keeps a grammar's text a
    beginning of one of its sentences: another spelling of its fixed text (the grammar
    cursor's chart, ``GrammarCursor.reads_on``). Never for a regex: its index's allowed
    set is exact to the byte."""
    reads_on = getattr(index, "reads_on", None)
    return token != vocab.eos_token_id and bool(reads_on and reads_on(token))


def _refused(
    found: Replayed, vocab: Vocabulary, number: int, written: list[int], among: int
) -> Replayed:
    """``found``, ended where the server wrote ``written[number]`` and the exact automaton
    allows no such token (one of ``among``): the disagreement, and the note naming it."""
    token = written[number]
    text = printable(vocab.token_text(token))
    if token == vocab.eos_token_id:
        message = (
            f"your server ended the text at step {number}, where the pattern cannot end: "
            "the text so far is not a match"
        )
    else:
        message = f"your server allowed `{text}` at step {number}; no match can follow it"
    rest = b"".join(vocab.token_bytes(t) for t in written[number:]).decode("utf-8", "replace")
    found.disagreements.append(Disagreement(number, token, vocab.token_text(token), message))
    refusal = (
        f"Engine disagreement: {message}. The server went on to write "
        f"`{printable(rest[:80])}`; fsmviz's replay stops before it."
    )
    return replace(found, refused_among=among, refusal=refusal)


def stop_reason(
    finish: str | None, dropped: str | None, steps: list[Step], index: Any
) -> tuple[StopReason, str | None]:
    """The server's finish reason as a stop reason, with a note where one is due
    (``Stream`` then judges a claimed match against the pattern): ``stop`` claims a
    match, ``length`` is ``max_tokens``; a stream that broke off (``dropped``) or any
    other reason is an ``engine_error``.

    >>> stop_reason("length", None, [], None)
    ('max_tokens', None)
    >>> stop_reason(None, "timed out", [], None)[1]
    "The server's stream broke off after 0 tokens (timed out); what it wrote is kept."
    """
    if finish == "length":
        return "max_tokens", None
    if finish == "stop":
        ended = steps[-1].state_after if steps else None
        if index is not None and (ended is None or not index.is_accepting(ended)):
            return "accepted", (
                f"The server stopped (finish_reason {finish!r}) where the pattern cannot "
                "end: the text is not a match."
            )
        return "accepted", None
    if dropped is not None:
        return "engine_error", (
            f"The server's stream broke off after {len(steps)} tokens ({dropped}); "
            "what it wrote is kept."
        )
    return "engine_error", f"The server ended the run with finish_reason {finish!r}."


def check_tokenizer(vocab: Vocabulary, text: str, written: list[int], server: str) -> None:
    """The server's token ids must spell the server's ``text`` in fsmviz's vocabulary; the
    first that does not is named (a different tokenizer: ``tokenizer=``)."""
    encoded = text.encode("utf-8")
    spelled = b""
    for number, token in enumerate(written):
        if not 0 <= token < len(vocab):
            raise ServerError(
                f"the server at {server} wrote token {token} at step {number}, "
                f"outside fsmviz's vocabulary of {len(vocab):,} tokens: pass tokenizer= "
                "the server's own tokenizer (a folder or hub id)"
            )
        spelled += vocab.token_bytes(token)
        if not encoded.startswith(spelled) and "\ufffd" not in text:
            start = len(spelled) - len(vocab.token_bytes(token))
            theirs = encoded[start : start + 20].decode("utf-8", "replace")
            raise ServerError(
                f"the server's tokenizer and fsmviz's disagree at step {number}: token "
                f"{token} is `{printable(vocab.token_text(token))}` here, but the "
                f"server's text there reads `{printable(theirs)}`: pass tokenizer= the "
                "server's own tokenizer (a folder or hub id)"
            )


def valid_mass(
    logprobs: dict[int, float], token: int, masked: float | None, allowed: np.ndarray | None
) -> tuple[float, bool]:
    """The valid mass of one step and whether it is exact (see ``fsmviz.generation.server``):
    ``exp(log p − masked)``, held to the bounds of the likeliest tokens the scoring request
    gave; their allowed sum (a lower bound) where it does not fit or ``masked`` is missing.

    >>> allowed = np.array([3, 7])                      # tokens 3 and 7 allowed
    >>> scored = {3: math.log(0.2), 5: math.log(0.7), 7: math.log(0.05)}
    >>> v, exact = valid_mass(scored, 3, math.log(0.2 / 0.3), allowed)
    >>> round(v, 6), exact                               # 0.25 shown, 0.05 more unseen
    (0.3, True)
    >>> valid_mass(scored, 3, None, allowed)             # no masked logprob: the bound
    (0.25, False)
    """
    if allowed is None:
        return 1.0, True
    probs = {t: math.exp(lp) for t, lp in logprobs.items()}
    inside = _members(allowed, list(probs))
    low = sum(p for (t, p), ok in zip(probs.items(), inside, strict=True) if ok)
    high = 1.0 - sum(p for (t, p), ok in zip(probs.items(), inside, strict=True) if not ok)
    if masked is not None and token in logprobs and masked > MASKED:  # -9999: masked out
        mass = min(1.0, math.exp(logprobs[token] - masked))
        if low - BOUND_SLACK <= mass <= high + BOUND_SLACK:
            return mass, True
    return min(1.0, low), False


def _member(allowed: np.ndarray | None, token: int) -> bool:
    return True if allowed is None else bool(_members(allowed, [token])[0])
