"""A served model as a model: ``fsmviz.connect`` to an OpenAI-compatible server (vLLM).

fsmviz does not serve big models; the engine that does (vLLM, with its own structured-output
backend: xgrammar, llguidance or outlines-core) writes the text, and fsmviz replays every
token it wrote through fsmviz's own exact automaton. The result is the same ``Step``
records as a local run, so everything that reads a run reads a server's run::

    fsmviz                                          the server
    ──────                                          ──────────
    prompt ─chat template─▶ ids ──────────────────▶ POST /v1/completions
                                                      prompt: ids, structured_outputs: {regex},
                                                      logprobs: 1 (after its mask)
    token ids, their constrained logprobs ◀────────
    ids + written ────────────────────────────────▶ POST /v1/completions  (the scoring request)
                                                      prompt: ids + written, prompt_logprobs: 5
    each written token's unconstrained logprob,  ◀──
    the model's five likeliest there
    replay: state ─token─▶ index.next_state(state, token) ─▶ Step, ..., Trace

**The valid mass from two numbers.** The server's logprob of a written token is taken
after its mask, a softmax over the allowed tokens only: ``log(p / V)``, where ``p`` is the
token's unconstrained probability and ``V`` the valid mass. The scoring request gives
``log p``. So ``V = exp(log p − log(p / V))``, exact, without the 49,152 numbers of the full
distribution. It is checked against the bounds the five likeliest give (the allowed among
them are at least ``V``; the forbidden among them leave at most ``1 − theirs``); where the
server's numbers do not fit (a server whose logprobs are taken before its mask), the lower
bound stands, and the trace says at which steps (``ServerRun.bounds``).

**The engine checked.** Every token the server wrote must be allowed by the exact
automaton. The first that is not ends the replay (stop reason ``engine_error``) and is
named: "your server allowed ``X`` at step k; no match can follow it" (``Disagreement``).

A regex goes to the server as vLLM's ``regex``, a JSON Schema as ``json`` (the server
compiles it with its own backend; fsmviz replays through its own compile, either path) and
a grammar as ``grammar`` (``server_constraint``); a grammar's exact mask is llguidance's
with fsmviz's chart, as in a local grammar run (the run's own cursor, a
``fsmviz.Constraint``, asked as an index is; llguidance allows only its own spelling of
text the grammar fixes ahead, ``rue`` and not ``r`` after ``{"a": t``, so a server that
spells it otherwise is named there as a disagreement). The run is streamed
(server-sent events), so each wait is for one token and a stream that breaks off keeps
what was written (stop reason ``engine_error``, the break quoted); the steps come once the
scoring request has answered. The HTTP is ``fsmviz.generation.wire``'s: a server that
is down, refuses, or does not answer in time is a ``ServerError`` naming it and quoting
what it said, within the timeouts. llama.cpp's server (told apart by its ``/props``) is
asked and read by ``fsmviz.generation.llamacpp.LlamaCppEngine``; the replay is this one.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Generic, TypeVar

import numpy as np

from fsmviz.automaton.dfa import compile_regex
from fsmviz.cache import BoundedCache
from fsmviz.errors import InputError
from fsmviz.generation.constraint import Constraint
from fsmviz.generation.llamacpp import LlamaCppEngine, check_vocabulary, props
from fsmviz.generation.trace import Candidate, GenerationOptions, Step, StopReason
from fsmviz.generation.wire import (
    BOUND_SLACK,
    CONNECT_TIMEOUT,
    READ_TIMEOUT,
    ServerError,
    _api_base,
    _events,
    _fill_row,
    _members,
    _request,
)
from fsmviz.printable import printable
from fsmviz.tokens.index import TokenIndex, build_index
from fsmviz.tokens.vocab import Vocabulary

T = TypeVar("T")

__all__ = [
    "CONNECT_TIMEOUT",
    "READ_TIMEOUT",
    "Disagreement",
    "EngineCheck",
    "ServerError",
    "ServerModel",
    "ServerRun",
    "StepVerdict",
    "connect",
    "server_constraint",
]

TOP = 5
"""The model's likeliest tokens a step keeps (``Step.top``), as a local run keeps them."""
MASKED = -1e3
"""A logprob at or below this is a masked token (vLLM writes −inf as −9999)."""


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


@dataclass(frozen=True, eq=False)
class ServerModel:
    """A model behind an OpenAI-compatible server (``connect``), usable wherever ``stream``
    and ``generate`` take a local ``Model``: the server writes, fsmviz replays.

    ``tokenizer`` and ``vocab`` are fsmviz's copy of the server's tokenizer (the prompt is
    encoded here, through its chat template, and sent as token ids, so both sides read the
    same prompt); ``context`` is the server's ``max_model_len``."""

    name: str
    url: str
    """The API's base, ending in ``/v1``."""
    served: str
    """The model's id on the server (the request's ``model``)."""
    tokenizer: Any = field(repr=False)
    vocab: Vocabulary = field(repr=False)
    context: int | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = READ_TIMEOUT
    engine: Any = field(default=None, repr=False)
    """How a run is asked of the server and read back where it is not vLLM: llama.cpp's
    (``fsmviz.generation.llamacpp.LlamaCppEngine``; ``connect`` tells them apart)."""

    @property
    def kind(self) -> str:
        """The server's engine: ``"vllm"`` or ``"llama.cpp"``."""
        return self.engine.kind if self.engine is not None else "vllm"

    @property
    def model(self) -> Any:
        """Where ``Stream`` reads a local model's context length
        (``model.config.max_position_embeddings``): here the server's ``max_model_len``."""
        return SimpleNamespace(config=SimpleNamespace(max_position_embeddings=self.context))

    @property
    def passes(self) -> ScoringPasses:
        """Where the page asks a local model for forward passes after a run (every
        step's allowed set with its probabilities): here the server's scoring request
        (llama.cpp: a request per position)."""
        return self.engine.passes(self) if self.engine is not None else ScoringPasses(self)

    @property
    def logits_size(self) -> int:
        """Where a run reads a local model's logits width: the vocabulary's size here."""
        return len(self.vocab)

    def server_run(self, pattern: object, options: GenerationOptions) -> ServerRun:
        """The run ``stream`` drives for this model (``fsmviz.generation.generate``):
        ``pattern`` a regex, a compiled JSON Schema (``compile_schema``) or a grammar
        (``compile_grammar``), as the caller gave it."""
        return ServerRun(self, pattern, options)

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` as JSON to ``path`` under the API base; the JSON answer."""
        return _request(self.url + path, body, self.api_key, self.timeout)


class ServerRun:
    """One run on a server, as ``Stream`` drives a local one: ``steps(prompt_ids)`` yields
    the replayed steps; ``stop_reason``, ``notes``, ``index`` and ``opts`` as ``_Run`` has
    them. After the run: ``disagreements`` (the engine checked), ``spellings`` (a grammar's
    text offered in tokens llguidance does not offer, where it still fits), ``bounds`` (steps whose
    valid mass is only a lower bound), ``server_seconds`` (both requests) and
    ``replay_seconds`` (what fsmviz adds after the server's answers: the rest of the
    index's build, which runs meanwhile, the replay, the valid mass)."""

    def __init__(self, model: ServerModel, pattern: object, opts: GenerationOptions):
        for name, active, why in (
            ("overshoot", opts.overshoot, "the server cannot cut a token it wrote"),
            ("stop", opts.stop != "eos", 'the server stops at EOS only; use stop="eos"'),
            ("prob_limit", opts.prob_limit is not None, "the server cannot stop on it"),
        ):
            if active:
                raise InputError(f"{name} is not available on a server run: {why}")
        self.model = model
        self.pattern = pattern
        self.opts = opts
        self.engine = model.engine
        self.constraint = (
            server_constraint(pattern) if self.engine is None else self.engine.constraint(pattern)
        )
        """What the request asks of the server's engine: ``{"regex": ...}``, ``{"json":
        ...}`` or ``{"grammar": ...}`` (vLLM's ``structured_outputs``; llama.cpp's fields
        for llama.cpp); None: nothing."""
        # The automaton is built while the server writes (an index's first build over a
        # 49k vocabulary takes seconds); a pattern fsmviz cannot use is refused here,
        # before any request.
        self._index: _Job[TokenIndex | Constraint] | None = None
        regex_text = pattern if isinstance(pattern, str) else getattr(pattern, "regex", None)
        if isinstance(regex_text, str):  # a regex, or a JSON Schema on the regex path
            compile_regex(regex_text)
            self._index = _Job(lambda: build_index(regex_text, model.vocab))
        elif pattern is not None:  # a grammar, or a JSON Schema on the grammar path
            # the grammar run's cursor (llguidance's matcher and fsmviz's chart, moved
            # token by token: its state counts tokens and only moves on) is a Constraint
            self._index = _Job(lambda: pattern.generation_run(model, opts).place)
        self.stop_reason: StopReason | None = None
        self.notes: list[str] = []
        self.disagreements: list[Disagreement] = []
        self.spellings: list[Disagreement] = []  # another spelling of a grammar's text
        self.checks: list[EngineCheck] = []
        self.candidates: list[dict[int, float]] = []  # per written token, after its mask
        self.bounds: list[int] = []
        self.server_seconds = 0.0
        self.request_seconds: tuple[float, ...] = ()  # the run's request, the scoring one
        self.replay_seconds = 0.0
        self.finish_reason: str | None = None
        self.server_text = ""
        self.dropped: str | None = None  # how the server's stream broke off, if it did
        self.refused_among = 0  # the allowed set's size where the replay refused a token
        self._engine_scores: list[dict[int, float]] = []  # llama.cpp's, per written token
        self.unsent = 0  # tokens llama.cpp wrote last but never sent (a character still cut)

    @property
    def shown(self) -> int:
        """How many likeliest tokens per step the server's answers give."""
        return TOP if self.engine is None else self.engine.shown

    @property
    def index(self) -> TokenIndex | Constraint | None:
        """The pattern's token index, or a grammar's cursor (waits for its
        build; None for an unconstrained run)."""
        return self._index.result() if self._index is not None else None

    def _accepting(self, state: int) -> bool:
        return self.index.is_accepting(state) if self.index else True

    def steps(self, prompt_ids: list[int]) -> Iterator[Step]:
        context = self.model.context
        if context and len(prompt_ids) + self.opts.max_tokens >= context:
            raise InputError(
                f"the prompt is {len(prompt_ids):,} tokens; with max_tokens="
                f"{self.opts.max_tokens} that leaves no room in the server's context of "
                f"{context:,} tokens for the scoring request (one token): shorten the prompt"
            )
        started = time.perf_counter()
        written, constrained = self._complete(prompt_ids)
        self.request_seconds = (time.perf_counter() - started,)
        scored = self._scored(prompt_ids, written)
        self.server_seconds = time.perf_counter() - started
        self.request_seconds += (self.server_seconds - self.request_seconds[0],)
        started = time.perf_counter()
        self._check_vocabulary(written)
        steps = self._replay(written, constrained, scored)
        self.replay_seconds = time.perf_counter() - started
        self._note_how_it_went(len(written))
        yield from steps

    def verdicts(self, steps: Sequence[Step]) -> tuple[StepVerdict, ...]:
        """The engine check step by step, after the run: a row per replayed step (its
        visible candidates held to the exact allowed set), and one more for a token the
        replay refused (the step where it stopped)."""
        checks = {check.step: check for check in self.checks}
        said: dict[int, list[str]] = {}
        for disagreement in self.disagreements:  # each message once (the written token
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
            refused = next(d for d in self.disagreements if d.step == number)
            shown = checks[number].visible if number in checks else 0
            token = printable(refused.text) or "EOS"
            rows.append(StepVerdict(number, token, self.refused_among, shown, tuple(said[number])))
        return tuple(rows)

    # --- the two requests -----------------------------------------------------------------

    def _complete(self, prompt_ids: list[int]) -> tuple[list[int], list[float | None]]:
        """The constrained run, streamed: the server's token ids and their (masked)
        logprobs; ``finish_reason`` and ``server_text`` as it gave them. A stream that
        breaks off after some tokens keeps them (``dropped`` says how it ended)."""
        if self.engine is not None:  # llama.cpp: its run also gives the unconstrained scores
            written, self._engine_scores = self.engine.complete(self, prompt_ids)
            return written, [None] * len(written)
        opts = self.opts
        body: dict[str, Any] = {
            "model": self.model.served,
            "prompt": prompt_ids,
            "max_tokens": opts.max_tokens,
            "temperature": opts.temperature,
            "top_p": opts.top_p,
            "seed": opts.seed,
            "logprobs": TOP,  # its top candidates after its mask: the engine check
            "return_tokens_as_token_ids": True,
        }
        if opts.top_k:
            body["top_k"] = opts.top_k
        if self.constraint is not None:
            body["structured_outputs"] = self.constraint
        model = self.model
        written: list[int] = []
        constrained: list[float | None] = []
        text: list[str] = []
        try:
            for event in _events(model.url + "/completions", body, model.api_key, model.timeout):
                for choice in event.get("choices") or []:
                    ids = _token_ids(choice, model.url)
                    written += ids
                    given = choice.get("logprobs") or {}
                    logprobs = given.get("token_logprobs") or []
                    constrained += [*logprobs, *[None] * (len(ids) - len(logprobs))][: len(ids)]
                    tops = [_candidates(top) for top in given.get("top_logprobs") or []]
                    self.candidates += [*tops, *[{}] * (len(ids) - len(tops))][: len(ids)]
                    text.append(str(choice.get("text") or ""))
                    self.finish_reason = choice.get("finish_reason") or self.finish_reason
        except ServerError as error:
            if not written:
                raise
            self.dropped = str(error)
            self.finish_reason = None
        self.server_text = "".join(text)
        return written, constrained

    def _scored(self, prompt_ids: list[int], written: list[int]) -> list[dict[int, float]]:
        """``_score``; after a stream that broke off, nothing where the server cannot even
        be asked (each step's valid mass then only the trivial bound)."""
        if not written:
            return []
        if self.engine is not None:
            return self._engine_scores
        try:
            return self._score(prompt_ids, written)
        except ServerError as error:
            if self.dropped is None:
                raise
            self.notes.append(f"The written tokens could not be scored: {error}.")
            return [{} for _ in written]

    def _score(self, prompt_ids: list[int], written: list[int]) -> list[dict[int, float]]:
        """The unconstrained logprobs at each written token's step: the scoring request's
        ``prompt_logprobs`` over the prompt and the written tokens (the top ``TOP`` and the
        written token itself, per position), one mapping per written token."""
        body = {
            "model": self.model.served,
            "prompt": [*prompt_ids, *written],
            "max_tokens": 1,
            "temperature": 0.0,
            "prompt_logprobs": TOP,
        }
        choice = _first_choice(self.model.post("/completions", body), self.model.url)
        positions = choice.get("prompt_logprobs")
        if not isinstance(positions, list) or len(positions) != len(prompt_ids) + len(written):
            raise ServerError(
                f"the server at {self.model.url} did not score the prompt (no "
                "prompt_logprobs in its answer): fsmviz needs them for the valid mass; "
                "is it vLLM?"
            )
        return [
            {int(token): float(entry["logprob"]) for token, entry in (position or {}).items()}
            for position in positions[len(prompt_ids) :]
        ]

    # --- the replay -----------------------------------------------------------------------

    def _check_vocabulary(self, written: list[int]) -> None:
        """The server's token ids must spell the server's text in fsmviz's vocabulary; the
        first that does not is named (a different tokenizer: ``tokenizer=``)."""
        vocab = self.model.vocab
        text = self.server_text.encode("utf-8")
        spelled = b""
        for number, token in enumerate(written):
            if not 0 <= token < len(vocab):
                raise ServerError(
                    f"the server at {self.model.url} wrote token {token} at step {number}, "
                    f"outside fsmviz's vocabulary of {len(vocab):,} tokens: pass tokenizer= "
                    "the server's own tokenizer (a folder or hub id)"
                )
            spelled += vocab.token_bytes(token)
            if not text.startswith(spelled) and "\ufffd" not in self.server_text:
                start = len(spelled) - len(vocab.token_bytes(token))
                theirs = text[start : start + 20].decode("utf-8", "replace")
                raise ServerError(
                    f"the server's tokenizer and fsmviz's disagree at step {number}: token "
                    f"{token} is `{printable(vocab.token_text(token))}` here, but the "
                    f"server's text there reads `{printable(theirs)}`: pass tokenizer= the "
                    "server's own tokenizer (a folder or hub id)"
                )

    def _replay(
        self, written: list[int], constrained: Sequence[float | None], scored: list[dict]
    ) -> list[Step]:
        """Each written token through the exact automaton, with the model's numbers."""
        vocab, index = self.model.vocab, self.index
        eos = vocab.eos_token_id
        state = index.initial_state if index is not None else 0
        steps: list[Step] = []
        for number, token in enumerate(written):
            allowed = index.allowed_tokens(state) if index is not None else None
            if allowed is not None and number < len(self.candidates):
                self._check(number, self.candidates[number], allowed)
            after = index.next_state(state, token) if index is not None else 0
            if after is None:
                self.refused_among = len(vocab) if allowed is None else len(allowed)
                self._disagree(number, token, written)
                return steps
            logprobs = scored[number]
            masked = constrained[number] if number < len(constrained) else None
            mass, exact = self._mass(logprobs, token, masked, allowed)
            if not exact:
                self.bounds.append(number)
            top = sorted(logprobs.items(), key=lambda item: (-item[1], item[0]))[:TOP]
            steps.append(
                Step(
                    token_id=token,
                    text="" if token == eos else vocab.token_text(token),
                    state_before=state,
                    state_after=after,
                    allowed_count=len(vocab) if allowed is None else len(allowed),
                    valid_mass=mass,
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
        self.stop_reason = self._stop(steps)
        return steps

    def _mass(
        self, logprobs: dict[int, float], token: int, masked: float | None, allowed: Any
    ) -> tuple[float, bool]:
        """One step's valid mass and whether it is exact (``_valid_mass``)."""
        if self.engine is not None:
            return self.engine.mass(logprobs, allowed)
        return _valid_mass(logprobs, token, masked, allowed)

    def _check(self, number: int, candidates: dict[int, float], allowed: np.ndarray) -> None:
        """The server's visible candidates at step ``number`` against ``allowed`` (the
        index is still at that step: ``_spelled`` asks it)."""
        ids = list(candidates)
        inside = _members(allowed, ids) if ids else np.zeros(0, dtype=bool)
        masked = [candidates[t] <= MASKED for t in ids]
        looser = tuple(t for t, ok, m in zip(ids, inside, masked, strict=True) if not ok and not m)
        stricter = tuple(t for t, ok, m in zip(ids, inside, masked, strict=True) if ok and m)
        check = EngineCheck(number, len(ids), looser, stricter)
        self.checks.append(check)
        vocab = self.model.vocab
        for token in looser:
            text = printable(vocab.token_text(token))
            if self._spelled(token):
                message = (
                    f"your server allowed `{text}` at step {number}, a spelling of the "
                    "grammar's text that llguidance does not offer there; the text still fits"
                )
                self.spellings.append(Disagreement(number, token, vocab.token_text(token), message))
                continue
            message = f"your server allowed `{text}` at step {number}; no match can follow it"
            self.disagreements.append(Disagreement(number, token, vocab.token_text(token), message))
        for token in stricter:
            text = printable(vocab.token_text(token))
            message = f"your server masked `{text}` at step {number}, which the pattern allows"
            self.disagreements.append(Disagreement(number, token, vocab.token_text(token), message))

    def _spelled(self, token: int) -> bool:
        """Whether a token outside llguidance's allowed set still keeps a grammar's text a
        beginning of one of its sentences: another spelling of its fixed text (the grammar
        cursor's chart, ``GrammarCursor.reads_on``). Never for a regex: its index's allowed
        set is exact to the byte."""
        reads_on = getattr(self.index, "reads_on", None)
        return token != self.model.vocab.eos_token_id and bool(reads_on and reads_on(token))

    def _disagree(self, number: int, token: int, written: list[int]) -> None:
        """The server wrote ``token`` where the exact automaton allows no such token."""
        vocab = self.model.vocab
        text = printable(vocab.token_text(token))
        if token == vocab.eos_token_id:
            message = (
                f"your server ended the text at step {number}, where the pattern cannot end: "
                "the text so far is not a match"
            )
        else:
            message = f"your server allowed `{text}` at step {number}; no match can follow it"
        rest = b"".join(vocab.token_bytes(t) for t in written[number:]).decode("utf-8", "replace")
        self.disagreements.append(Disagreement(number, token, vocab.token_text(token), message))
        self.notes.append(
            f"Engine disagreement: {message}. The server went on to write "
            f"`{printable(rest[:80])}`; fsmviz's replay stops before it."
        )
        self.stop_reason = "engine_error"

    def _stop(self, steps: list[Step]) -> StopReason:
        """The server's finish reason as a stop reason (``Stream`` then judges a claimed
        match against the pattern): ``stop`` claims a match, ``length`` is ``max_tokens``."""
        finish = self.finish_reason
        if finish == "length":
            return "max_tokens"
        if finish == "stop":
            ended = steps[-1].state_after if steps else None
            if self.index is not None and (ended is None or not self.index.is_accepting(ended)):
                self.notes.append(
                    f"The server stopped (finish_reason {finish!r}) where the pattern cannot "
                    "end: the text is not a match."
                )
            return "accepted"
        if self.dropped is not None:
            self.notes.append(
                f"The server's stream broke off after {len(steps)} tokens ({self.dropped}); "
                "what it wrote is kept."
            )
        else:
            self.notes.append(f"The server ended the run with finish_reason {finish!r}.")
        return "engine_error"

    def _note_how_it_went(self, count: int) -> None:
        if self.engine is not None:
            self.notes.append(self.engine.note(self, count))
        if self.checks:
            seen = sum(check.visible for check in self.checks)
            wrong = [d.message for d in self.disagreements]
            verdict = "every one agrees with the exact automaton"
            if wrong:
                more = "…" if len(wrong) > 3 else ""
                verdict = f"{len(wrong)} disagree: " + "; ".join(wrong[:3]) + more
            self.notes.append(
                f"Engine check: {seen} candidates of the server's mask visible at "
                f"{len(self.checks)} steps (its top {TOP} logprobs); {verdict}."
            )
        if self.spellings:
            where = sorted({s.step for s in self.spellings})
            shown = ", ".join(map(str, where[:10])) + ("…" if len(where) > 10 else "")
            example = printable(self.spellings[0].text)
            self.notes.append(
                f"Spelling: at steps {shown} your server offered the grammar's text in tokens "
                f"llguidance does not offer there (`{example}` at step {where[0]}); the text "
                "still fits the grammar (fsmviz's Earley recognizer), so the engines spell it "
                "differently and neither is wrong. The allowed sets there are llguidance's."
            )
        if self.bounds:
            shown = ", ".join(map(str, self.bounds[:10])) + ("…" if len(self.bounds) > 10 else "")
            self.notes.append(
                f"The valid mass is a lower bound at steps {shown}: the server's logprobs do "
                f"not give it exactly there (the sum over the allowed of its top {self.shown})."
            )
        if self.opts.safe_end and self.index is not None and self.stop_reason == "max_tokens":
            self.notes.append(
                "The server has no safe end: it wrote on until max_tokens cut the text, where "
                "fsmviz's own run keeps only tokens after which a match still fits."
            )
        if self.opts.temperature not in (0.0, 1.0):
            self.notes.append(
                "The valid mass is the model's at temperature 1: the server's logprobs are "
                "taken before temperature."
            )
        asked = "two requests" if self.engine is None else "one request"
        self.notes.append(
            f"The server ({self.model.name} at {self.model.url}) wrote {count} tokens in "
            f"{self.server_seconds:.2f} s ({asked}); fsmviz's replay took "
            f"{self.replay_seconds:.3f} s."
        )


class ScoringPasses:
    """``model.passes`` of a served model: ``open()`` a sequence whose ``forward(fed,
    count)`` gives, like a local model's, one row per position for the last ``count``
    positions of everything fed so far, from one scoring request (``prompt_logprobs`` and
    the next token's ``logprobs``). The server returns its ``TOP`` likeliest tokens per
    position (and the token written there): those rows hold their exact log
    probabilities, and the tokens it did not name share what is left evenly, so a row's
    softmax gives the named tokens their exact probability and the rest an estimate."""

    sharing = False  # no batch shared with other runs (``_Run._drafts`` asks)

    def __init__(self, model: ServerModel) -> None:
        self.model = model

    def open(self) -> ScoredSequence:
        return ScoredSequence(self.model)


class ScoredSequence:
    """One sequence of ``ScoringPasses``: the tokens fed so far, scored on each
    ``forward``; ``close`` forgets them."""

    def __init__(self, model: ServerModel) -> None:
        self.model = model
        self.context: list[int] = []

    def forward(self, fed: Sequence[int], count: int) -> np.ndarray:
        self.context += [int(t) for t in fed]
        body = {
            "model": self.model.served,
            "prompt": self.context,
            "max_tokens": 1,
            "temperature": 0.0,
            "prompt_logprobs": TOP,
            "logprobs": TOP,
            "return_tokens_as_token_ids": True,
        }
        choice = _first_choice(self.model.post("/completions", body), self.model.url)
        positions = choice.get("prompt_logprobs")
        if not isinstance(positions, list) or len(positions) != len(self.context):
            raise ServerError(
                f"the server at {self.model.url} did not score the text (no prompt_logprobs "
                "in its answer): is it vLLM?"
            )
        scored = [
            {int(token): float(entry["logprob"]) for token, entry in (position or {}).items()}
            for position in positions[1:]
        ]
        nexts = (choice.get("logprobs") or {}).get("top_logprobs") or [{}]
        scored.append(_candidates(nexts[0]))
        rows = np.empty((count, len(self.model.vocab)), dtype=np.float64)
        for row, known in zip(rows, scored[len(scored) - count :], strict=True):
            _fill_row(row, known)
        return rows

    def close(self) -> None:
        self.context = []


def server_constraint(pattern: object) -> dict[str, Any] | None:
    """What a run asks of the server's own engine, in vLLM's ``structured_outputs``: a
    regex as ``regex``; a compiled JSON Schema (either path) as ``json``, the schema itself
    (the server compiles it with its own backend, as a deployment does, its whitespace
    too: vLLM's xgrammar allows any between JSON tokens, which fsmviz's replay follows only
    with ``whitespace="flexible"``; fsmviz replays through its own compile); a grammar
    (``compile_grammar``) as ``grammar``, its text as written (GBNF is xgrammar's own
    dialect; vLLM turns a Lark grammar into it). None: unconstrained.

    >>> server_constraint("[0-9]+")
    {'regex': '[0-9]+'}
    """
    if pattern is None:
        return None
    if isinstance(pattern, str):
        return {"regex": pattern}
    schema = getattr(pattern, "schema", None)
    if isinstance(schema, dict):
        return {"json": schema}
    text = getattr(pattern, "text", None)
    if isinstance(text, str) and hasattr(pattern, "generation_run"):
        return {"grammar": text}
    raise InputError(
        f"a server run takes a regex, a JSON Schema (fsmviz.compile_schema) or a grammar "
        f"(fsmviz.compile_grammar), not a {type(pattern).__name__}"
    )


class _Job(Generic[T]):
    """``build()`` in a thread of its own, started now; ``result()`` waits for it (and
    raises what it raised)."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(build,), daemon=True)
        self._thread.start()

    def _run(self, build: Callable[[], T]) -> None:
        try:
            self._value = build()
        except BaseException as error:  # noqa: BLE001 - handed to whoever waits
            self._error = error

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


def _valid_mass(
    logprobs: dict[int, float], token: int, masked: float | None, allowed: np.ndarray | None
) -> tuple[float, bool]:
    """The valid mass of one step and whether it is exact (see the module docstring):
    ``exp(log p − masked)``, held to the bounds of the likeliest tokens the scoring request
    gave; their allowed sum (a lower bound) where it does not fit or ``masked`` is missing.

    >>> import math
    >>> allowed = np.array([3, 7])                      # tokens 3 and 7 allowed
    >>> scored = {3: math.log(0.2), 5: math.log(0.7), 7: math.log(0.05)}
    >>> v, exact = _valid_mass(scored, 3, math.log(0.2 / 0.3), allowed)
    >>> round(v, 6), exact                               # 0.25 shown, 0.05 more unseen
    (0.3, True)
    >>> _valid_mass(scored, 3, None, allowed)            # no masked logprob: the bound
    (0.25, False)
    """
    if allowed is None:
        return 1.0, True
    probs = {t: math.exp(lp) for t, lp in logprobs.items()}
    inside = _members(allowed, list(probs))
    low = sum(p for (t, p), ok in zip(probs.items(), inside, strict=True) if ok)
    high = 1.0 - sum(p for (t, p), ok in zip(probs.items(), inside, strict=True) if not ok)
    if masked is not None and token in logprobs and masked > -1e3:  # -9999: masked out
        mass = min(1.0, math.exp(logprobs[token] - masked))
        if low - BOUND_SLACK <= mass <= high + BOUND_SLACK:
            return mass, True
    return min(1.0, low), False


def _candidates(top: object) -> dict[int, float]:
    """A step's top logprobs (``{"token_id:N": logprob}``) by token id."""
    if not isinstance(top, dict):
        return {}
    found = {}
    for key, value in top.items():
        try:
            found[int(str(key).rpartition("token_id:")[2])] = float(value)
        except (TypeError, ValueError):
            continue  # a token given as text: not comparable
    return found


def _member(allowed: np.ndarray | None, token: int) -> bool:
    return True if allowed is None else bool(_members(allowed, [token])[0])


# --- connecting -----------------------------------------------------------------------------


def connect(
    base_url: str,
    model: str | None = None,
    *,
    tokenizer: str | None = None,
    api_key: str | None = None,
    timeout: float = READ_TIMEOUT,
) -> ServerModel:
    """A model served by an OpenAI-compatible server (vLLM, or llama.cpp's
    ``llama-server``, told apart by its ``/props``), for ``stream`` and ``generate``:
    ``connect("http://127.0.0.1:8000")`` asks the server which models it serves
    (``/v1/models``) and takes ``model`` (default: the only one, or the first).

    ``tokenizer``: a folder or hub id with the server's tokenizer; by default the model
    folder vLLM names (its ``root``) or the GGUF llama.cpp names (its ``/props``), else
    the model's id as a hub id. fsmviz needs
    it to encode the prompt and to replay the tokens. ``api_key`` is sent as a bearer
    token. Raises ``ServerError`` (the server cannot be reached, does not serve ``model``,
    or its tokenizer cannot be loaded).

    With a vLLM server started as ``python -m vllm.entrypoints.openai.api_server --model
    FOLDER --port 8000`` (``tests/vllmserver.py`` starts one on the bundled model)::

        model = fsmviz.connect("http://127.0.0.1:8000")
        date = r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
        ask = "On what date did Apollo 11 land on the moon? Answer as YYYY-MM-DD."
        trace = fsmviz.generate(model, date, ask)
        trace.text, trace.stop_reason   # ('1969-01-26', 'accepted'): the server's text
        trace.steps[1].valid_mass       # 0.306: after "1" it wanted "4" (0.43), not "9"
        trace.notes                     # the engine check, the server's time and fsmviz's
    """
    base = _api_base(base_url)
    served = _models(base, api_key, timeout)
    names = [str(entry.get("id")) for entry in served]
    if model is None:
        entry = served[0]
    elif model in names:
        entry = served[names.index(model)]
    else:
        raise ServerError(
            f"the server at {base} does not serve {model!r}; it serves "
            + ", ".join(map(repr, names))
        )
    llama = props(base, api_key, timeout)  # llama.cpp's server answers it, vLLM does not
    if llama is not None:  # its /props name the GGUF it serves, and the context it runs
        root = llama.get("model_path")
        context = (llama.get("default_generation_settings") or {}).get("n_ctx")
    else:
        root, context = entry.get("root"), entry.get("max_model_len")
    source = tokenizer or str(root or entry["id"])
    loaded, vocab = _tokenizer(source, str(entry["id"]))
    if llama is not None:  # its /tokenize spells a probe text as fsmviz's vocabulary does
        check_vocabulary(base, vocab, source, api_key, timeout)
    return ServerModel(
        name=Path(root).name if llama is not None and root == entry["id"] else str(entry["id"]),
        url=base,
        served=str(entry["id"]),
        tokenizer=loaded,
        vocab=vocab,
        context=int(context) if isinstance(context, int) else None,
        api_key=api_key,
        timeout=timeout,
        engine=None if llama is None else LlamaCppEngine(),
    )


def _models(base: str, api_key: str | None, timeout: float) -> list[dict[str, Any]]:
    """The server's ``/v1/models`` list; a ``ServerError`` that says so in plain words
    where the address is not a model server's (no such path) or it serves none."""
    try:
        listing = _request(base + "/models", None, api_key, timeout)
    except ServerError as error:
        if error.status not in (404, 405):
            raise
        raise ServerError(
            f"the server at {base.removesuffix('/v1')} is not a model server fsmviz can use: "
            "it has no /v1/models (the list of models that vLLM, llama.cpp's llama-server "
            "and other OpenAI-compatible servers answer). Give the address of one of those"
        ) from error
    served = [entry for entry in listing.get("data") or [] if isinstance(entry, dict)]
    if not served:
        raise ServerError(f"the server at {base} serves no model (its /models list is empty)")
    return served


_TOKENIZERS: BoundedCache[tuple[Any, Vocabulary]] = BoundedCache(maxsize=4)


def _tokenizer(source: str, name: str) -> tuple[Any, Vocabulary]:
    """The tokenizer at ``source`` (a folder or hub id) and its vocabulary (cached)."""

    def load() -> tuple[Any, Vocabulary]:
        from transformers import AutoTokenizer

        path = Path(source)
        try:
            if path.suffix == ".gguf" and path.is_file():  # a GGUF (llama.cpp's /props)
                path = gguf_tokenizer_dir(path)
            loaded = AutoTokenizer.from_pretrained(str(path), local_files_only=path.is_dir())
        except Exception as error:  # transformers raises many kinds; all mean "cannot load"
            first = (str(error).strip().splitlines() or [""])[0]
            raise ServerError(
                f"could not load the tokenizer {source!r} for the served model {name!r}: "
                f"{first}. Pass tokenizer= a folder or hub id holding the server's tokenizer"
            ) from error
        return loaded, Vocabulary.from_tokenizer(loaded, name=name)

    return _TOKENIZERS.get_or_build((source, name), load)


def gguf_tokenizer_dir(gguf: Path) -> Path:
    """The tokenizer of a GGUF file as a Hugging Face folder, converted once (transformers
    reads a GGUF's 49k-token vocabulary in ~5 s idle, a minute on a busy machine) into
    fsmviz's cache, keyed by the file's name, size and time; the bundled GGUF's is
    ``bundled_tokenizer_dir``'s."""
    from fsmviz.bundled import (
        bundled_available,
        bundled_tokenizer_dir,
        cache_dir,
        convert_once,
        gguf_path,
    )

    if bundled_available() and gguf.resolve() == gguf_path().resolve():
        return bundled_tokenizer_dir()
    stat = gguf.stat()
    name = f"{gguf.stem}-{stat.st_size}-{stat.st_mtime_ns}"
    target = cache_dir() / "gguf-tokenizers" / name

    def save(tmp: Path) -> None:
        from transformers import AutoTokenizer

        AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(tmp)

    return convert_once(target, save, ("tokenizer_config.json",))


def _first_choice(answer: dict[str, Any], server: str) -> dict[str, Any]:
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ServerError(f"the server at {server} answered without a completion: {answer!r:.300}")
    return choices[0]


def _token_ids(choice: dict[str, Any], server: str) -> list[int]:
    """The token ids of a completion (or a streamed piece of one): vLLM's ``token_ids``, or
    its logprobs' ``token_id:N`` (``return_tokens_as_token_ids``); none in a piece that
    only says how the run finished."""
    ids = choice.get("token_ids")
    if isinstance(ids, list) and all(isinstance(t, int) for t in ids):
        return list(ids)
    tokens = (choice.get("logprobs") or {}).get("tokens")
    if tokens is None and not choice.get("text"):
        return []
    if not isinstance(tokens, list):
        raise ServerError(
            f"the server at {server} gave no token ids (no logprobs in its answer): fsmviz "
            "needs them to replay the run"
        )
    try:
        return [int(str(token).rpartition("token_id:")[2]) for token in tokens]
    except ValueError as error:
        raise ServerError(
            f"the server at {server} gave tokens as text, not ids ({tokens[:3]!r}…): fsmviz "
            "asks for return_tokens_as_token_ids (vLLM)"
        ) from error
