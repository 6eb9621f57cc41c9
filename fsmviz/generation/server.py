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

Here: ``connect``, ``ServerModel`` and ``ServerRun``, which holds a run together; its
pieces are modules of their own: ``fsmviz.generation.exchange`` (vLLM's two requests),
``fsmviz.generation.replay`` (the tokens through the automaton, the engine checked, the
valid mass) and ``fsmviz.generation.verdict`` (the engine check per step and in words).
"""

from __future__ import annotations

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
from fsmviz.generation.exchange import (
    _candidates,
    _first_choice,
    complete,
    score,
    scored_positions,
)
from fsmviz.generation.llamacpp import LlamaCppEngine, check_vocabulary, props
from fsmviz.generation.replay import (
    TOP,
    Disagreement,
    EngineCheck,
    Replayed,
    check_tokenizer,
    replay,
    stop_reason,
    valid_mass,
)
from fsmviz.generation.trace import GenerationOptions, Step, StopReason
from fsmviz.generation.verdict import StepVerdict, replay_notes, verdicts
from fsmviz.generation.wire import (
    CONNECT_TIMEOUT,
    READ_TIMEOUT,
    ServerError,
    _api_base,
    _fill_row,
    _request,
)
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
    index's build, which runs meanwhile, the replay, the valid mass).

    It holds the run together; its parts live beside it: the requests in
    ``fsmviz.generation.exchange`` (vLLM; llama.cpp's in ``llamacpp``), the replay through
    the exact automaton in ``replay``, the verdict in words and per step in ``verdict``."""

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
        self.replayed = Replayed([], [], [], [], [])
        """What the replay found (``fsmviz.generation.replay``): the properties below."""
        self.candidates: list[dict[int, float]] = []  # per written token, after its mask
        self.server_seconds = 0.0
        self.request_seconds: tuple[float, ...] = ()  # the run's request, the scoring one
        self.replay_seconds = 0.0
        self.finish_reason: str | None = None
        self.server_text = ""
        self.dropped: str | None = None  # how the server's stream broke off, if it did
        self._engine_scores: list[dict[int, float]] = []  # llama.cpp's, per written token
        self.unsent = 0  # tokens llama.cpp wrote last but never sent (a character still cut)

    @property
    def disagreements(self) -> list[Disagreement]:
        return self.replayed.disagreements

    @property
    def spellings(self) -> list[Disagreement]:
        return self.replayed.spellings

    @property
    def checks(self) -> list[EngineCheck]:
        return self.replayed.checks

    @property
    def bounds(self) -> list[int]:
        return self.replayed.bounds

    @property
    def refused_among(self) -> int:
        """The allowed set's size where the replay refused a token (0: none refused)."""
        return self.replayed.refused_among

    @property
    def shown(self) -> int:
        """How many likeliest tokens per step the server's answers give."""
        return TOP if self.engine is None else self.engine.shown

    @property
    def index(self) -> TokenIndex | Constraint | None:
        """The pattern's token index, or a grammar's cursor (waits for its
        build; None for an unconstrained run)."""
        return self._index.result() if self._index is not None else None

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
        """The engine check step by step, after the run (``fsmviz.generation.verdict``)."""
        return verdicts(self.replayed, steps)

    def _complete(self, prompt_ids: list[int]) -> tuple[list[int], list[float | None]]:
        """The constrained run, streamed: the server's token ids and their (masked)
        logprobs; ``candidates``, ``finish_reason``, ``server_text`` and ``dropped`` as
        it gave them (``fsmviz.generation.exchange.complete``)."""
        if self.engine is not None:  # llama.cpp: its run also gives the unconstrained scores
            written, self._engine_scores = self.engine.complete(self, prompt_ids)
            return written, [None] * len(written)
        done = complete(self.model, self.opts, self.constraint, prompt_ids)
        self.candidates = done.candidates
        self.finish_reason, self.server_text = done.finish_reason, done.text
        self.dropped = done.dropped
        return done.written, done.constrained

    def _scored(self, prompt_ids: list[int], written: list[int]) -> list[dict[int, float]]:
        """The scoring request's numbers (``exchange.score``); after a stream that broke
        off, nothing where the server cannot even be asked (each step's valid mass then
        only the trivial bound)."""
        if not written:
            return []
        if self.engine is not None:
            return self._engine_scores
        try:
            return score(self.model, prompt_ids, written)
        except ServerError as error:
            if self.dropped is None:
                raise
            self.notes.append(f"The written tokens could not be scored: {error}.")
            return [{} for _ in written]

    def _check_vocabulary(self, written: list[int]) -> None:
        check_tokenizer(self.model.vocab, self.server_text, written, self.model.url)

    def _replay(
        self, written: list[int], constrained: Sequence[float | None], scored: list[dict]
    ) -> list[Step]:
        """Each written token through the exact automaton (``replay.replay``), and the
        stop reason: where the automaton refused a token, ``engine_error``; else the
        server's finish reason (``replay.stop_reason``)."""
        mass = valid_mass if self.engine is None else self._llama_mass
        index = self.index
        found = replay(self.model.vocab, index, written, constrained, scored, self.candidates, mass)
        self.replayed = found
        if found.refusal is not None:
            self.notes.append(found.refusal)
            self.stop_reason = "engine_error"
        else:
            reason, note = stop_reason(self.finish_reason, self.dropped, found.steps, index)
            self.stop_reason = reason
            self.notes += [note] if note else []
        return found.steps

    def _llama_mass(
        self, logprobs: dict[int, float], token: int, masked: float | None, allowed: Any
    ) -> tuple[float, bool]:
        return self.engine.mass(logprobs, allowed)

    def _note_how_it_went(self, count: int) -> None:
        if self.engine is not None:
            self.notes.append(self.engine.note(self, count))
        self.notes += replay_notes(self.replayed, self.shown)
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
        scored = scored_positions(
            choice, len(self.context), 1, self.model.url,
            "the text (no prompt_logprobs in its answer): is it vLLM?",
        )  # fmt: skip
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
