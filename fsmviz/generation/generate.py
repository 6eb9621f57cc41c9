"""Constrained generation, one token at a time, recording everything.

The loop is the textbook one with a mask in the middle:

1. run the model on the tokens not yet seen (the prompt first, then each new token),
   reusing the KV cache so every step costs one token's worth of compute;
2. turn the last logits into the model's own distribution (after temperature) and
   measure it against the DFA: the *valid mass* is the probability of all allowed tokens;
3. mask every token the DFA forbids (``-inf``) and sample from what is left;
4. move the DFA along the chosen token's bytes; yield a ``Step``.

Four refinements make it end well and run fast:

* **EOS only in accepting states**, and the run stops as ``accepted`` once the state
  accepts and nothing else may follow.
* **Safe end** (seed 001). The index knows the fewest tokens from each state to
  acceptance. When the budget gets tight, only tokens that can still finish in time stay
  allowed, so the output fully matches whenever the shortest completion fits in
  ``max_tokens``. Other engines return invalid text on truncation.
* **Fast-forward** (seed 002). When the pattern leaves exactly one way to continue — the
  constant ``{"title": "`` of a JSON template — the text is appended without sampling,
  and all its tokens go through the model in a single forward pass. Those steps are
  marked ``forced``; their statistics still come from the model's logits.
* **Drafts** (``draft_tokens``, off by default). Tokens guessed by prompt lookup ride in
  the same pass after the forced ones; step 3 then runs at each draft's position in turn,
  and a draft is kept while the sample equals it (``drafted`` steps), so one pass can
  write several sampled tokens. The rejected rest is forgotten by the next pass.

Beside them, the decoding choices seed 002 contrasts (``GenerationOptions``): ``stop="first"``
ends at the first full match (ReLLM); ``overshoot`` also allows a token whose beginning
completes a match, and cuts the output there (``fsmviz.tokens.overshoot``); ``top_k`` and
``top_p`` narrow the allowed distribution (``fsmviz.generation.samplers``).

So each forward pass is planned as a ``_Pass`` record — what the model has not read yet,
the forced tokens, the drafts, what to forget first — and ``_Run._loop`` is steps 2–4
over its rows. The pieces live beside this module, one idea each:

* ``_IndexSteering`` (here): what the loop asks of the pattern — a state's mask, the safe
  end, whether a state ends a match (``fsmviz.generation.constraint.Steering``); a grammar
  run (``fsmviz.grammar.run.GrammarRun``) answers the same questions from llguidance, and
  the loop holds either (it is never subclassed);
* ``fastforward``: the constant text ahead of a state and its tokens;
* ``drafts``: prompt lookup, cut where the pattern forbids a guess;
* ``samplers``: top-k, top-p and the (speculative) draw;
* ``records``: the ``Step`` written down for each token.

``stream`` keeps all per-call state (KV cache, random generator, DFA state) in the call,
so one loaded ``Model`` can serve concurrent callers. The forward passes themselves go
through ``model.passes`` (``fsmviz.generation.batching``), which runs them on the model's own thread
and batches concurrent callers; everything else here is numpy on the logits it returns.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import regex

from fsmviz.errors import FsmvizError, InputError
from fsmviz.generation.batching import Sequence
from fsmviz.generation.constraint import RegexConstraint, Steering
from fsmviz.generation.drafts import draft_chain, lookup
from fsmviz.generation.fastforward import forced_chain
from fsmviz.generation.masks import safe_end_tokens, unpack
from fsmviz.generation.models import Model
from fsmviz.generation.records import decoding_details, record_step
from fsmviz.generation.samplers import mass, sample, softmax
from fsmviz.generation.trace import (
    MATCH_CLAIMS,
    MAX_DRAFT_TOKENS,
    MAX_TOKENS_LIMIT,
    GenerationOptions,
    Step,
    StopReason,
    Trace,
)
from fsmviz.params import MAX_PROMPT_CHARS as _PROMPT_LIMIT
from fsmviz.params import check_grammar_options
from fsmviz.params import text as _checked_text
from fsmviz.tokens.encoding import as_written
from fsmviz.tokens.index import IndexTooLarge, TokenIndex, build_index
from fsmviz.tokens.overshoot import Overshoot, overshoot
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "MAX_DRAFT_TOKENS",
    "MAX_PROMPT_CHARS",
    "MAX_TOKENS_LIMIT",
    "GenerationOptions",
    "Stream",
    "encode_text",
    "generate",
    "judged_stop",
    "lookup",
    "sample",
    "stream",
]


class GrammarLike(Protocol):
    """What ``stream`` needs of a grammar (``fsmviz.grammar.Grammar``, a higher layer):
    its source ``text``, its own judge ``accepts`` (``Trace.matched``), and the run that
    puts its mask into this loop where a regex puts its ``TokenIndex``."""

    text: str

    def accepts(self, text: str) -> bool: ...

    def generation_run(self, model: Model, options: GenerationOptions) -> Steering: ...


MAX_PROMPT_CHARS = _PROMPT_LIMIT
"""The longest prompt ``stream`` accepts, in characters (the page, the API and the command
line alike): enough for a worked example or two, not a book to read before each run."""


def generate(
    model: Model,
    pattern: str | GrammarLike | None,
    prompt: str,
    options: GenerationOptions | None = None,
    **overrides: object,
) -> Trace:
    """Run ``stream`` to the end and return the finished ``Trace``: the text, every step,
    why it stopped and whether the text matches.

    >>> from fsmviz import load_model
    >>> model = load_model()              # the bundled SmolLM2-135M-Instruct, offline
    >>> trace = generate(model, r"(yes|no)", "Is the sky blue? Answer yes or no.")
    >>> trace.text, trace.matched, trace.stop_reason
    ('no', True, 'accepted')
    >>> round(trace.steps[0].valid_mass, 2)   # the model wanted to write a sentence
    0.01

    The pattern holds the form, not the facts: 1% of the model's probability was on "yes"
    or "no" at all, which is what the valid-mass chart and the doctor point at.
    """
    run = stream(model, pattern, prompt, options, **overrides)
    for _ in run:
        pass
    return run.trace()


def stream(
    model: Model,
    pattern: str | GrammarLike | None,
    prompt: str,
    options: GenerationOptions | None = None,
    **overrides: object,
) -> Stream:
    """Generate token by token, yielding a ``Step`` for each as soon as it exists.
    ``pattern=None`` runs the same loop unconstrained; a ``Grammar``
    (``fsmviz.compile_grammar``) or a compiled JSON Schema on the grammar path runs it
    under llguidance's mask.

    Each step says what was allowed, what the model wanted, and what was taken:

    >>> from fsmviz import load_model
    >>> steps = stream(load_model(), r"[0-9]{4}", "When did Apollo 11 land on the moon?")
    >>> [(s.text, s.allowed_count) for s in steps]         # ten digit tokens each time
    [('1', 10), ('9', 10), ('6', 10), ('9', 10)]
    >>> [round(s.valid_mass, 1) for s in steps.trace().steps]  # it wanted words first
    [0.0, 1.0, 1.0, 1.0]
    >>> steps.trace().text, steps.trace().stop_reason
    ('1969', 'accepted')

    The knobs come as a ``GenerationOptions`` record, as keyword arguments, or both (the
    keywords win): ``stream(m, p, q, max_tokens=8)`` is ``stream(m, p, q,
    GenerationOptions(max_tokens=8))``. Raises ``RegexError`` for a bad pattern and
    ``ValueError`` for bad options or a bad prompt, before any work is done."""
    opts = replace(options or GenerationOptions(), **overrides)
    _check_prompt(prompt)
    given, pattern = pattern, _runnable(pattern)
    if isinstance(given, RegexConstraint) and getattr(model, "server_run", None) is not None:
        given = pattern = given.pattern  # a server compiles the regex with its own engine
    server_run = getattr(model, "server_run", None)
    if server_run is not None:  # a served model (fsmviz.connect): it writes, fsmviz replays
        # (a compiled schema goes to the server as the schema, not as its regex)
        return Stream(server_run(given, opts), pattern, prompt, _name(model))
    if pattern is not None and not isinstance(pattern, (str, RegexConstraint)):
        # A grammar (``fsmviz.grammar.Grammar``, a higher layer): it brings its own run,
        # this loop with llguidance's mask where a regex has its index.
        check_grammar_options(opts.overshoot)
        run = _Run(model, pattern.generation_run(model, opts), opts)
        return Stream(run, pattern, prompt, _name(model))
    index = _index_of(pattern, model.vocab)
    run = _Run(model, _IndexSteering(model, index, opts), opts)
    if index is not None and opts.safe_end:
        try:
            index.prepare_safe_end()
        except IndexTooLarge as error:
            run.give_up_safe_end(error)
    return Stream(run, pattern, prompt, _name(model))


def _name(model: object) -> str | None:
    """The model's name for its trace (``Trace.model``)."""
    name = getattr(model, "name", None)
    return name if isinstance(name, str) else None


def _index_of(pattern: str | RegexConstraint | None, vocab: Vocabulary) -> TokenIndex | None:
    """The index a regex run steers by: a ``RegexConstraint``'s own (built once, by the
    caller; it must be over this model's vocabulary), or built here for a pattern."""
    if pattern is None:
        return None
    if not isinstance(pattern, RegexConstraint):
        return build_index(pattern, vocab)
    if pattern.vocab.fingerprint != vocab.fingerprint:
        raise InputError(
            "the constraint was built for another vocabulary than this model's: build it "
            "with the model's own (fsmviz.constraint(regex=..., vocab=model.vocab))"
        )
    return pattern.index


def _runnable(pattern: str | GrammarLike | None) -> str | GrammarLike | None:
    """``pattern`` as the loop runs it: a JSON Schema compiled on the regex path
    (``compile_schema(...)``, a ``SchemaRegex``: no run of its own) runs as its regex,
    exactly as ``compile_schema(...).generate`` runs it; anything else as it is.
    (``SchemaRuns.generate`` also reads the output back into the schema's value.)"""
    if pattern is None or isinstance(pattern, (str, RegexConstraint)):
        return pattern
    if hasattr(pattern, "generation_run"):
        return pattern
    regex_text = getattr(pattern, "regex", None)
    if isinstance(regex_text, str):
        return regex_text
    raise InputError(
        f"cannot generate under a {type(pattern).__name__}: give a regex (text), a grammar "
        "(fsmviz.compile_grammar) or a JSON Schema (fsmviz.compile_schema)"
    )


def _check_prompt(prompt: str) -> None:
    """A prompt must be text of at most ``MAX_PROMPT_CHARS`` that a tokenizer can encode:
    a lone surrogate (``"\\ud800"``, which JSON can carry but UTF-8 cannot) would fail deep
    inside the tokenizer."""
    _checked_text("prompt", prompt, MAX_PROMPT_CHARS)


class Stream(Iterator[Step]):
    """The steps of one generation as they come; ``stop_reason`` and ``trace()`` once
    it is exhausted."""

    def __init__(
        self, run: _Run, pattern: str | GrammarLike | None, prompt: str, model: str | None = None
    ):
        self.pattern = pattern
        self.prompt = prompt
        self.model = model
        """The name of the model that writes (``Trace.model``)."""
        self.steps: list[Step] = []
        self._run = run
        self._started = time.perf_counter()
        self._seconds = 0.0
        self._judgement: tuple[int, bool, StopReason] | None = None
        ids = encode_prompt(run.model, prompt, run.opts.chat)
        context = getattr(run.model.model.config, "max_position_embeddings", None)
        if context and len(ids) + run.opts.max_tokens > context:
            raise InputError(
                f"the prompt is {len(ids):,} tokens; with max_tokens={run.opts.max_tokens} that "
                f"exceeds the model's context of {context:,} tokens: shorten the prompt"
            )
        self._steps = run.steps(ids)

    def __next__(self) -> Step:
        try:
            step = next(self._steps)
        except StopIteration:
            self._seconds = self._seconds or time.perf_counter() - self._started
            raise
        self.steps.append(step)
        return step

    def close(self) -> None:
        """Stop early (the reader went away): the model's cache for this run is freed now
        rather than when the stream is garbage-collected."""
        self._steps.close()

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the generation stopped (judged: ``judged_stop``), or None while it runs."""
        if self._run.stop_reason is None:
            return None
        return self._judged()[1]

    @property
    def text(self) -> bytes:
        return b"".join(step.token_bytes for step in self.steps)

    def trace(self) -> Trace:
        """The finished generation (call after the stream is exhausted)."""
        text = self.text.decode("utf-8", errors="replace")
        matched, stop_reason = self._judged()
        pattern = self.pattern
        notes = tuple(self._run.notes)
        if stop_reason != (self._run.stop_reason or "max_tokens"):
            notes += (
                f"The constraint's engine let the run end here ({self._run.stop_reason}), but "
                "the constraint's own judge refuses the text, so the run is not counted as "
                "a match.",
            )
        if pattern is not None and not isinstance(pattern, str):
            pattern = pattern.text
        return Trace(
            text=text,
            steps=tuple(self.steps),
            stop_reason=stop_reason,
            matched=matched,
            pattern=pattern,
            prompt=self.prompt,
            options=self._run.opts,
            seconds=self._seconds or time.perf_counter() - self._started,
            notes=notes,
            model=self.model,
        )

    def _judged(self) -> tuple[bool, StopReason]:
        """The constraint's own verdict on the text so far (``Trace.matched``) and the stop
        reason it allows (``judged_stop``): the one place where a run's end is judged, for
        every constraint (regex, schema on either path, grammar). Kept until a step more."""
        if self._judgement is None or self._judgement[0] != len(self.steps):
            matched = self._matched(self.text.decode("utf-8", errors="replace"))
            reason = self._run.stop_reason or "max_tokens"
            if self.pattern is not None:  # an unconstrained run's EOS claims no match
                reason = judged_stop(reason, matched)
            self._judgement = (len(self.steps), matched, reason)
        return self._judgement[1], self._judgement[2]

    def _matched(self, text: str) -> bool:
        """Whether ``text`` is what the constraint asks for, by its own judge: a
        grammar's (or a compiled schema's) ``accepts``, a regex's ``regex.fullmatch``."""
        pattern = self.pattern
        if pattern is None:
            return False
        if not isinstance(pattern, str):  # a grammar: its own judge
            try:
                return pattern.accepts(text)
            except FsmvizError:  # a text too ambiguous to judge in time: the mask's verdict
                return bool(self.steps) and self._run._accepting(self.steps[-1].state_after)
        index = self._run.index
        if index is None:
            return False
        end = self.steps[-1].state_after if self.steps else index.initial_state
        return full_match(pattern, text, index.is_accepting(end))


def judged_stop(reason: StopReason, matched: bool) -> StopReason:
    """``reason`` as a constrained run may report it: a reason that claims a match
    (``MATCH_CLAIMS``: ``accepted``, ``first_match``, ``overshoot``) stands only when the
    constraint's judge accepts the text (``matched``); otherwise ``not_accepted``. The
    mask's engine and the judge should never disagree; where they do (an engine bug, a
    fast-forward misread), the run must not call its text a success.

    >>> judged_stop("accepted", True), judged_stop("accepted", False)
    ('accepted', 'not_accepted')
    >>> judged_stop("max_tokens", False)
    'max_tokens'
    """
    if reason in MATCH_CLAIMS and not matched:
        return "not_accepted"
    return reason


MATCH_TIMEOUT = 0.25
"""Seconds ``regex.fullmatch`` may spend judging a finished text."""


def full_match(pattern: str, text: str, dfa_accepts: bool) -> bool:
    """Whether ``text`` fully matches ``pattern``: ``regex.fullmatch``, as the seeds judged.
    A backtracking matcher can take exponential time on a text that *almost* matches
    (``(a|aa)+b`` against sixty a's runs for hours), so after ``MATCH_TIMEOUT`` — or if
    ``regex`` cannot read a pattern Python's ``re`` accepted — the DFA's own verdict, whether
    the run ended in an accepting state, stands in."""
    try:
        return regex.fullmatch(pattern, text, timeout=MATCH_TIMEOUT) is not None
    except (TimeoutError, regex.error):
        return dfa_accepts


def encode_prompt(model: Model, prompt: str, chat: bool) -> list[int]:
    """Prompt token ids: through the chat template when ``chat`` (and the model has one).

    The prompt is always text: ``<|im_end|>`` typed by a user is tokenized as its
    characters, never as the control token, so a prompt cannot close its own turn and open
    a ``system`` one. The template is rendered around a marker and only its own text is
    read for special tokens (``_prompt_text_ids``).

    Encoding holds ``_ENCODING``: reading the prompt as plain text flips a setting on the
    tokenizer (``split_special_tokens``), and the tokenizer is shared by every visitor's
    thread; without the lock a visitor encoding meanwhile read its chat template's
    ``<|im_start|>`` as seven characters of text (3 times in 10 with six threads)."""
    tokenizer = model.tokenizer
    with _ENCODING:
        if chat and getattr(tokenizer, "chat_template", None):
            ids = _chat_ids(tokenizer, prompt)
        else:
            ids = _prompt_text_ids(tokenizer, prompt, add_special_tokens=True)
    if not ids:  # an empty raw prompt: start from a boundary token
        start = tokenizer.bos_token_id
        ids = [start if start is not None else model.vocab.eos_token_id]
    return list(ids)


_ENCODING = threading.Lock()
"""Held while a prompt is encoded (``encode_prompt``): the tokenizer is shared."""

_MARK = "\x00fsmviz-prompt\x00"
"""Stands for the prompt while the chat template is rendered: no template writes it."""


def _chat_ids(tokenizer, prompt: str) -> list[int]:
    """The chat template's text around the prompt (special tokens read as such), the
    prompt itself as plain text."""
    rendered = tokenizer.apply_chat_template(
        [{"role": "user", "content": _MARK}], add_generation_prompt=True, tokenize=False
    )
    before, mark, after = rendered.partition(_MARK)
    if not mark or _MARK in after:  # a template that rewrites its content: refuse the tags
        special = [t for t in tokenizer.all_special_tokens if t and t in prompt]
        if special:
            raise InputError(
                f"the prompt contains the control token {special[0]!r}, which this model's "
                "chat template would read as one: write it another way, or turn chat off"
            )
        rendered = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=False
        )
        return tokenizer(rendered, add_special_tokens=False)["input_ids"]
    return (
        tokenizer(before, add_special_tokens=False)["input_ids"]
        + _prompt_text_ids(tokenizer, prompt, add_special_tokens=False)
        + tokenizer(after, add_special_tokens=False)["input_ids"]
    )


def _prompt_text_ids(tokenizer, prompt: str, *, add_special_tokens: bool) -> list[int]:
    """``prompt`` tokenized as text: special-token strings in it are split like any text."""
    return tokenizer(prompt, add_special_tokens=add_special_tokens, split_special_tokens=True)[
        "input_ids"
    ]


def encode_text(tokenizer, text: str, vocab: Vocabulary | None = None) -> list[int]:
    """``text`` as the tokens a model writes it with: ordinary tokens only, no BOS, and a
    special token's spelling (``<|im_end|>`` in a grammar literal or a pattern's constant
    text) split like any other text, exactly as a prompt is (``encode_prompt``). What
    fast-forward writes and what a grammar's safe end plans are text, never control tokens:
    ``<|im_end|>`` as the end-of-sequence token would end the run instead of writing it.
    With ``vocab``, as written after other text (``fsmviz.tokens.encoding.as_written``): no
    SentencePiece ``▁`` before it, which would write a space the text does not have.

    >>> from fsmviz.bundled import bundled_tokenizer_dir
    >>> from transformers import AutoTokenizer
    >>> tokenizer = AutoTokenizer.from_pretrained(bundled_tokenizer_dir())
    >>> tokenizer.encode("<|im_end|>", add_special_tokens=False)   # the control token
    [2]
    >>> [tokenizer.decode([t]) for t in encode_text(tokenizer, "<|im_end|>")]
    ['<', '|', 'im', '_', 'end', '|', '>']
    """

    def encode(piece: str) -> list[int]:
        with _ENCODING:
            return list(_prompt_text_ids(tokenizer, piece, add_special_tokens=False))

    return encode(text) if vocab is None else as_written(encode, vocab, text)


@dataclass(frozen=True, eq=False)
class _Pass:
    """One forward pass, planned before it runs. It feeds ``pending`` (what the model has
    not read yet: the prompt, or the token sampled last), the ``forced`` tokens (with the
    state after each) and the ``drafts``; first it forgets ``drop`` tokens (the previous
    pass's rejected drafts). ``carried``: the first forced token's logits, when the pass
    before already computed them (its kept drafts ran into constant text)."""

    pending: tuple[int, ...]
    forced: tuple[tuple[int, int], ...]
    drafts: tuple[int, ...]
    drop: int = 0
    carried: np.ndarray | None = None

    @property
    def feed(self) -> list[int]:
        return [*self.pending, *(token for token, _ in self.forced), *self.drafts]


@dataclass(eq=False)
class _Cursor:
    """Where a run is between two steps: the pattern's ``state``, the tokens ``written``
    so far, and the ``context`` the model has read or will (the prompt, then the output).
    Drafts are guessed from the context."""

    state: int
    written: int
    context: list[int]


class _IndexSteering:
    """The step loop's questions (``fsmviz.generation.constraint.Steering``), answered from
    a ``TokenIndex`` (``index`` None: no pattern, every token allowed). A grammar answers
    the same questions from llguidance (``fsmviz.grammar.run.GrammarRun``):

    * ``allowed``, ``accepting``, ``finished``: a state's mask, and whether it ends a match;
    * ``stuck``: why the run stops where nothing can follow;
    * ``safe``: that mask narrowed to the tokens that can still finish in time (safe end);
    * ``choose``, ``advance``: the draw (kept as drawn: the safe end came first) and the
      state after it (an overshoot token's kept bytes too);
    * ``forced``: the tokens fast-forward writes unasked (``fsmviz.generation.fastforward``);
    * ``drafts``: the tokens tried ahead in the same pass (``fsmviz.generation.drafts``).

    A run keeps each state's mask (``masks``) and overshoot tokens (``_overshoots``) for as
    long as it lasts; what it had to give up on the way goes to ``notes``."""

    def __init__(self, model: Model, index: TokenIndex | None, opts: GenerationOptions):
        self.model = model
        self.index = index
        self.opts = opts
        self.size = model.logits_size
        self.eos = model.vocab.eos_token_id
        self.masks: dict[int, np.ndarray] = {}
        self.notes: list[str] = []  # what the trace should say about how the run went
        self._overshoots: dict[int, Overshoot] = {}  # per state, with ``opts.overshoot``

    def give_up_safe_end(self, error: IndexTooLarge) -> None:
        """Go on without a safe end, and say why: the index is too large to know every
        state's distance to a match (found before the run, or the first time a state's
        bound did not settle it)."""
        self.opts = replace(self.opts, safe_end=False)
        self.notes.append(f"No safe end: {error.message}.")

    def accepting(self, state: int) -> bool:
        return self.index.is_accepting(state) if self.index else True

    def stuck(self) -> StopReason:
        """Why the run cannot go on where its mask is empty (or its engine refused the
        token its own mask allowed): ``dead_end`` for an index, whose states are exact; a
        grammar run also says when its engine gave up (``engine_error``)."""
        return "dead_end"

    def finished(self, state: int) -> bool:
        """Accepting, and no token may follow: the match is complete."""
        return bool(self.index) and self.accepting(state) and len(self.index.row(state).tokens) == 0

    def allowed(self, state: int) -> np.ndarray | None:
        """Boolean mask of DFA-allowed tokens (cached per state), None at a dead end."""
        if self.index is None:
            state = -1
        mask = self.masks.get(state)
        if mask is None:
            if self.index is None:
                mask = np.ones(self.size, dtype=bool)
            else:  # the index keeps each state's packed mask; this run its booleans
                mask = unpack(self.index.bitmask(state), self.size)
                if self.opts.overshoot:  # seed 002: also tokens that overshoot a match
                    mask[self._overshoot(state).tokens] = True
                if not mask.any():
                    return None
            self.masks[state] = mask
        return mask

    def _overshoot(self, state: int) -> Overshoot:
        """The overshoot tokens of ``state`` (``fsmviz.tokens.overshoot``), once per run."""
        found = self._overshoots.get(state)
        if found is None:
            found = self._overshoots[state] = overshoot(self.index, state)
        return found

    def safe(self, allowed: np.ndarray, state: int, done: int) -> np.ndarray:
        """Restrict ``allowed`` to tokens that can still reach acceptance within budget."""
        if self.index is None or not self.opts.safe_end:
            return allowed
        left = self.opts.max_tokens - done  # tokens we may still emit, this one included
        try:
            restricted = safe_end_tokens(self.index, state, left)
        except IndexTooLarge as error:
            self.give_up_safe_end(error)
            return allowed
        if restricted is None:
            return allowed
        mask = np.zeros(self.size, dtype=bool)
        mask[restricted] = True
        if self.opts.overshoot:  # an overshoot token ends the run on a match: it fits
            mask[self._overshoot(state).tokens] = True
        return mask

    def _fits(self, before: int, after: int, left: int) -> bool:
        """Whether a forced token from ``before`` to ``after`` keeps the safe end's promise:
        a match is still finishable in the ``left`` tokens after it (or was not before)."""
        if not self.opts.safe_end:
            return True
        finishes = self.index.finishes_within
        try:
            return bool(finishes(after, left) or not finishes(before, left + 1))
        except IndexTooLarge as error:
            self.give_up_safe_end(error)
            return True

    def forced(self, state: int, budget: int) -> list[tuple[int, int]]:
        """The tokens of the only possible continuation from ``state`` (fast-forward), as
        (token, state after) pairs, at most ``budget``; empty when the model has a choice."""
        if self.index is None or not self.opts.fast_forward or budget <= 0:
            return []
        tokenizer, vocab = self.model.tokenizer, self.model.vocab

        def encode(text: str) -> list[int]:
            return encode_text(tokenizer, text, vocab)

        return forced_chain(self.index, vocab, encode, state, budget, self._fits, self.accepting)

    def drafts(self, context: list[int], state: int, budget: int) -> list[int]:
        """Tokens to try ahead (``draft_tokens``), room left for the token after them. None
        while other generations share the model's passes: batching serves them better."""
        if not self.opts.draft_tokens or budget <= 1 or self.model.passes.sharing:
            return []
        count = min(self.opts.draft_tokens, budget - 1)
        return draft_chain(context, state, count, self.eos, self.index)

    def choose(self, draw: Callable[[np.ndarray], int], mask: np.ndarray, done: int) -> int:
        """The token ``draw`` samples from ``mask``: the safe end already narrowed it."""
        return draw(mask)

    def advance(self, state: int, token: int) -> tuple[int | None, int | None]:
        """The state after a sampled ``token`` (None: refused), and with ``overshoot`` the
        bytes of an overshoot token kept (None for an ordinary token)."""
        if self.index is None:
            return 0, None
        after = self.index.next_state(state, token)
        if after is None and self.opts.overshoot:  # allowed only as an overshoot token
            kept, after = self._overshoot(state).find(token)  # type: ignore[misc]
            return after, kept
        return after, None

    def overshoots(self, state: int) -> int | None:
        """How many overshoot tokens ``state`` has (``overshoot`` runs), else None."""
        if not self.opts.overshoot or self.index is None:
            return None
        return len(self._overshoot(state))

    @property
    def initial_state(self) -> int:
        return self.index.initial_state if self.index is not None else 0

    @property
    def constrained(self) -> bool:
        return self.index is not None


class _Run:
    """One generation: everything here belongs to this call only.

    The loop runs in forward passes. ``_plan`` decides what the next pass feeds (a
    ``_Pass``: the token sampled last, the forced chain, the drafts); ``_feed`` runs it and
    returns one row of logits per position; ``_loop`` yields the forced steps, then
    ``_choose`` samples at each remaining row in turn (``_sampled``: stop or choose, then
    record) until a sample is not the draft there, and plans the next pass from it. What
    the pattern allows at each step comes from its ``steering`` (a
    ``fsmviz.generation.constraint.Steering``: ``_IndexSteering`` for a regex, a grammar's
    own ``GrammarRun``), which the loop holds and never subclasses."""

    def __init__(self, model: Model, steering: Steering | None, opts: GenerationOptions):
        self.model = model
        self.steering = steering or _IndexSteering(model, None, opts)  # None: unconstrained
        self.eos = model.vocab.eos_token_id
        self.sequence: Sequence | None = None  # our KV cache, once the prompt went in
        self.stop_reason: StopReason | None = None
        self.rng = np.random.default_rng(opts.seed)
        self.overshot = False  # the last step took an overshoot token: the run ends

    @property
    def opts(self) -> GenerationOptions:
        """The run's options (the steering's: a safe end given up turns it off there)."""
        return self.steering.opts

    @property
    def notes(self) -> list[str]:
        return self.steering.notes

    @property
    def index(self):
        """What the run steers by (a ``TokenIndex``, a grammar's cursor; None: nothing)."""
        return self.steering.index

    def _accepting(self, state: int) -> bool:
        return self.steering.accepting(state)

    def give_up_safe_end(self, error: IndexTooLarge) -> None:
        self.steering.give_up_safe_end(error)  # type: ignore[attr-defined]

    # --- the loop -------------------------------------------------------------------------

    def steps(self, prompt_ids: list[int]) -> Iterator[Step]:
        try:
            yield from self._loop(prompt_ids)
        finally:  # also when the consumer stops early: the cache is freed at once
            if self.sequence is not None:
                self.sequence.close()

    def _loop(self, prompt_ids: list[int]) -> Iterator[Step]:
        """Each turn is one forward pass (a ``_Pass``): it yields the pass's forced steps,
        then the sampled ones (``_choose``), which also plans the next pass."""
        at = _Cursor(self.steering.initial_state, 0, list(prompt_ids))
        step_pass: _Pass | None = self._plan(at, pending=tuple(prompt_ids))
        while step_pass is not None:
            logits = self._feed(step_pass)
            for (token, after), row in zip(step_pass.forced, logits, strict=False):
                step = self._step(at.written, row, at.state, token, after, forced=True)
                yield self._advance(at, step)
                if self.stop_reason:
                    return
            step_pass = yield from self._choose(step_pass, logits[len(step_pass.forced) :], at)

    def _choose(
        self, step_pass: _Pass, rows: np.ndarray, at: _Cursor
    ) -> Generator[Step, None, _Pass | None]:
        """Sample at each draft's position in turn (``rows``: one per draft, and one for
        the token after them), keeping drafts while the sample equals them; yield each
        step and return the next pass, or None when the run stops."""
        drafts = step_pass.drafts
        for i, row in enumerate(rows):
            if i and self.steering.constrained:
                chain = self.steering.forced(at.state, self.opts.max_tokens - at.written)
                if chain:
                    # Kept drafts reached constant text: fast-forward it in the next pass,
                    # exactly as without drafts (this row gives its first token's numbers).
                    return self._plan(at, drop=len(drafts) - i, carried=row, chain=chain)
            draft = drafts[i] if i < len(drafts) else None
            step = self._sampled(row, at.state, at.written, draft)
            if step is None:
                return None
            yield self._advance(at, step)
            if self.stop_reason:
                return None
            if step.token_id != draft:  # a rejected draft (or the pass's last row): its
                # wrong drafts leave the cache next pass, which feeds this token first
                return self._plan(at, pending=(step.token_id,), drop=len(drafts) - i)
        return None  # not reached: the last row has no draft, so it plans the next pass

    def _advance(self, at: _Cursor, step: Step) -> Step:
        """Move ``at`` past ``step`` and decide whether the run stops after it."""
        at.state, at.written = step.state_after, at.written + 1
        at.context.append(step.token_id)
        self.stop_reason = self._stop_after(step.token_id, at.state, at.written)
        return step

    def _stop_after(self, token: int, state: int, done: int) -> StopReason | None:
        """Why the run stops after writing ``token`` (now in ``state``, ``done`` tokens
        written), or None to go on."""
        if token == self.eos:
            return "accepted"
        if self.overshot:
            return "overshoot"
        if self.steering.finished(state):
            return "accepted"
        if self.opts.stop == "first" and self.steering.constrained and self._accepting(state):
            return "first_match"
        if done == self.opts.max_tokens:
            return "max_tokens"
        return None

    # --- the passes -----------------------------------------------------------------------

    def _plan(
        self,
        at: _Cursor,
        pending: tuple[int, ...] = (),
        drop: int = 0,
        carried: np.ndarray | None = None,
        chain: list[tuple[int, int]] | None = None,
    ) -> _Pass:
        """The next pass from where the run is: the forced chain (``chain`` when the last
        pass found it), then drafts guessed after it."""
        budget = self.opts.max_tokens - at.written
        if chain is None:
            chain = self.steering.forced(at.state, budget)
        forced = tuple(chain)
        end = forced[-1][1] if forced else at.state
        ahead = [*at.context, *(token for token, _ in forced)]
        drafts = tuple(self.steering.drafts(ahead, end, budget - len(forced)))
        return _Pass(pending, forced, drafts, drop, carried)

    def _feed(self, step_pass: _Pass) -> np.ndarray:
        """Run the pass: one row of logits per forced token, per draft, and for the token
        after them (the first row carried over from the pass before, when there is one)."""
        rows = len(step_pass.forced) + len(step_pass.drafts) + 1
        if step_pass.carried is None:
            return self._forward(step_pass.feed, rows, step_pass.drop)
        fresh = self._forward(step_pass.feed, rows - 1, step_pass.drop)
        return np.concatenate([step_pass.carried[None], fresh])

    def _forward(self, ids: list[int], last: int, drop: int) -> np.ndarray:
        """Forget the last ``drop`` tokens of our KV cache (rejected drafts), feed ``ids``
        through the model; float32 logits of the last ``last`` positions."""
        if self.sequence is None:
            self.sequence = self.model.passes.open()
        return self.sequence.forward(ids, last, drop)

    # --- one step: stop or choose, then record --------------------------------------------

    def _sampled(self, row: np.ndarray, state: int, written: int, draft: int | None) -> Step | None:
        """The step sampled from ``row`` (keeping ``draft`` when sampling agrees), or None
        when the run stops before it (``stop_reason`` says why)."""
        if written >= self.opts.max_tokens:
            self.stop_reason = "max_tokens"
            return None
        allowed = self.steering.allowed(state)
        if allowed is None:
            self.stop_reason = self.steering.stuck()  # no token can follow, and no match so far
            return None
        probs = self._distribution(row)
        valid_mass = mass(probs, allowed)
        limit = self.opts.prob_limit
        if limit is not None and self._accepting(state) and valid_mass < limit:
            self.stop_reason = "prob_limit"
            return None
        mask = self.steering.safe(allowed, state, written)
        token = self.steering.choose(lambda m: self._sample(row, m, draft), mask, written)
        after, kept = self.steering.advance(state, token)  # kept: an overshoot's bytes
        if after is None:  # the engine refused its own mask's token: nothing is
            self.stop_reason = self.steering.stuck()  # written, the run stops
            return None
        step = self._step(
            written, row, state, token, after, probs=probs, valid_mass=valid_mass,
            drafted=token == draft,
        )  # fmt: skip
        return self._decoding_details(step, row, mask, kept)

    def _sample(self, logits: np.ndarray, mask: np.ndarray, draft: int | None = None) -> int:
        """``sample`` with this run's options and seeded generator."""
        return sample(logits, mask, self.opts, self.rng, draft)

    def _distribution(self, logits: np.ndarray) -> np.ndarray:
        """The model's unconstrained distribution after temperature (greedy shows T=1)."""
        t = self.opts.temperature
        return softmax(logits / t if t > 0 else logits)

    def _step(
        self,
        number: int,
        logits: np.ndarray,
        state: int,
        token: int,
        after: int,
        probs: np.ndarray | None = None,
        valid_mass: float | None = None,
        forced: bool = False,
        drafted: bool = False,
    ) -> Step:
        """The record of a step (``fsmviz.generation.records``); ``probs`` and
        ``valid_mass`` when already computed."""
        if probs is None:
            probs = self._distribution(logits)
        allowed = self.steering.allowed(state)
        vocab = self.model.vocab
        return record_step(
            vocab, self.eos, number, probs, allowed, state, token, after, valid_mass, forced,
            drafted,
        )  # fmt: skip

    def _decoding_details(
        self, step: Step, row: np.ndarray, mask: np.ndarray, kept: int | None
    ) -> Step:
        """The step with what the decoding options did (``records.decoding_details``); an
        overshoot (``kept`` bytes of its token kept) ends the run."""
        count = self.steering.overshoots(step.state_before)
        if kept is not None:
            self.overshot = True
        return decoding_details(step, row, mask, self.opts, count, kept)
