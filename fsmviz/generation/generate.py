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
over its rows.

``stream`` keeps all per-call state (KV cache, random generator, DFA state) in the call,
so one loaded ``Model`` can serve concurrent callers. The forward passes themselves go
through ``model.passes`` (``fsmviz.generation.batching``), which runs them on the model's own thread
and batches concurrent callers; everything else here is numpy on the logits it returns.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import regex
import torch

from fsmviz.automaton.dfa import SURROGATES
from fsmviz.errors import FsmvizError
from fsmviz.generation.batching import Sequence
from fsmviz.generation.masks import safe_end_tokens, unpack
from fsmviz.generation.models import Model
from fsmviz.generation.samplers import narrow
from fsmviz.generation.trace import (
    MAX_DRAFT_TOKENS,
    MAX_TOKENS_LIMIT,
    Candidate,
    GenerationOptions,
    Step,
    StopReason,
    Trace,
)
from fsmviz.params import MAX_PROMPT_CHARS as _PROMPT_LIMIT
from fsmviz.params import text as _checked_text
from fsmviz.tokens.index import IndexTooLarge, TokenIndex, build_index
from fsmviz.tokens.overshoot import Overshoot, overshoot

__all__ = [
    "MAX_DRAFT_TOKENS",
    "MAX_PROMPT_CHARS",
    "MAX_TOKENS_LIMIT",
    "GenerationOptions",
    "Stream",
    "generate",
    "stream",
]


class GrammarLike(Protocol):
    """What ``stream`` needs of a grammar (``fsmviz.grammar.Grammar``, a higher layer):
    its source ``text``, its own judge ``accepts`` (``Trace.matched``), and the run that
    puts its mask into this loop where a regex puts its ``TokenIndex``."""

    text: str

    def accepts(self, text: str) -> bool: ...

    def generation_run(self, model: Model, options: GenerationOptions) -> _Run: ...


TOP_CANDIDATES = 5
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
    if pattern is not None and not isinstance(pattern, str):
        # A grammar (``fsmviz.grammar.Grammar``, a higher layer): it brings its own run,
        # this loop with llguidance's mask where a regex has its index.
        return Stream(pattern.generation_run(model, opts), pattern, prompt)
    index = build_index(pattern, model.vocab) if pattern is not None else None
    run = _Run(model, index, opts)
    if index is not None and opts.safe_end:
        try:
            index.prepare_safe_end()
        except IndexTooLarge as error:
            run.give_up_safe_end(error)
    return Stream(run, pattern, prompt)


def _check_prompt(prompt: str) -> None:
    """A prompt must be text of at most ``MAX_PROMPT_CHARS`` that a tokenizer can encode:
    a lone surrogate (``"\\ud800"``, which JSON can carry but UTF-8 cannot) would fail deep
    inside the tokenizer."""
    _checked_text("prompt", prompt, MAX_PROMPT_CHARS)


class Stream(Iterator[Step]):
    """The steps of one generation as they come; ``stop_reason`` and ``trace()`` once
    it is exhausted."""

    def __init__(self, run: _Run, pattern: str | GrammarLike | None, prompt: str):
        self.pattern = pattern
        self.prompt = prompt
        self.steps: list[Step] = []
        self._run = run
        self._started = time.perf_counter()
        self._seconds = 0.0
        ids = encode_prompt(run.model, prompt, run.opts.chat)
        context = getattr(run.model.model.config, "max_position_embeddings", None)
        if context and len(ids) + run.opts.max_tokens > context:
            raise ValueError(
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
        """Why the generation stopped, or None while it runs."""
        return self._run.stop_reason

    @property
    def text(self) -> bytes:
        return b"".join(step.token_bytes for step in self.steps)

    def trace(self) -> Trace:
        """The finished generation (call after the stream is exhausted)."""
        text = self.text.decode("utf-8", errors="replace")
        matched = False
        pattern = self.pattern
        if pattern is not None and not isinstance(pattern, str):  # a grammar: its own judge
            try:
                matched = pattern.accepts(text)
            except FsmvizError:  # a text too ambiguous to judge in time: the mask's verdict
                matched = bool(self.steps) and self._run._accepting(self.steps[-1].state_after)
            pattern = pattern.text
        elif self.pattern is not None and self._run.index is not None:
            index = self._run.index
            end = self.steps[-1].state_after if self.steps else index.initial_state
            matched = full_match(self.pattern, text, index.is_accepting(end))
        return Trace(
            text=text,
            steps=tuple(self.steps),
            stop_reason=self.stop_reason or "max_tokens",
            matched=matched,
            pattern=pattern,
            prompt=self.prompt,
            options=self._run.opts,
            seconds=self._seconds or time.perf_counter() - self._started,
            notes=tuple(self._run.notes),
        )


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
    read for special tokens (``_prompt_text_ids``)."""
    tokenizer = model.tokenizer
    if chat and getattr(tokenizer, "chat_template", None):
        ids = _chat_ids(tokenizer, prompt)
    else:
        ids = _prompt_text_ids(tokenizer, prompt, add_special_tokens=True)
    if not ids:  # an empty raw prompt: start from a boundary token
        start = tokenizer.bos_token_id
        ids = [start if start is not None else model.vocab.eos_token_id]
    return list(ids)


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
            raise ValueError(
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


class _Run:
    """One generation: everything here belongs to this call only."""

    def __init__(self, model: Model, index: TokenIndex | None, opts: GenerationOptions):
        self.model = model
        self.index = index
        self.opts = opts
        self.size = model.logits_size
        self.eos = model.vocab.eos_token_id
        self.masks: dict[int, np.ndarray] = {}
        self.sequence: Sequence | None = None  # our KV cache, once the prompt went in
        self.stop_reason: StopReason | None = None
        self.rng = np.random.default_rng(opts.seed)
        self.notes: list[str] = []  # what the trace should say about how the run went
        self.overshoots: dict[int, Overshoot] = {}  # per state, with ``opts.overshoot``
        self.overshot = False  # the last step took an overshoot token: the run ends

    def give_up_safe_end(self, error: IndexTooLarge) -> None:
        """Go on without a safe end, and say why: the index is too large to know every
        state's distance to a match (found before the run, or the first time a state's
        bound did not settle it)."""
        self.opts = replace(self.opts, safe_end=False)
        self.notes.append(f"No safe end: {error.message}.")

    # --- the loop -------------------------------------------------------------------------

    def steps(self, prompt_ids: list[int]) -> Iterator[Step]:
        try:
            yield from self._loop(prompt_ids)
        finally:  # also when the consumer stops early: the cache is freed at once
            if self.sequence is not None:
                self.sequence.close()

    def _loop(self, prompt_ids: list[int]) -> Iterator[Step]:
        """Each turn is one forward pass (a ``_Pass``): it yields the pass's forced steps,
        then samples at each draft's position in turn, keeping drafts while the sample
        equals them, and ends with one token the pass did not feed, which the next pass
        feeds first."""
        state = self.index.initial_state if self.index else 0
        context = list(prompt_ids)  # what the model has read or will: prompt, then output
        written = 0
        step_pass = self._plan(state, written, context, pending=tuple(prompt_ids))
        while True:
            logits = self._feed(step_pass)
            for (token, after), row in zip(step_pass.forced, logits, strict=False):
                step = self._step(written, row, state, token, after, forced=True)
                state, written = after, written + 1
                context.append(token)
                self.stop_reason = self._stop_after(token, state, written)
                yield step
                if self.stop_reason:
                    return
            drafts = step_pass.drafts
            for i, row in enumerate(logits[len(step_pass.forced) :]):
                budget = self.opts.max_tokens - written
                chain = self._forced(state, budget) if i and self.index else []
                if chain:
                    # Kept drafts reached constant text: fast-forward it in the next pass,
                    # exactly as without drafts (this row gives its first token's numbers).
                    step_pass = self._plan(
                        state, written, context, drop=len(drafts) - i, carried=row, chain=chain
                    )
                    break
                draft = drafts[i] if i < len(drafts) else None
                step = self._sampled(row, state, written, draft)
                if step is None:
                    return
                state, written = step.state_after, written + 1
                context.append(step.token_id)
                self.stop_reason = self._stop_after(step.token_id, state, written)
                yield step
                if self.stop_reason:
                    return
                if step.token_id != draft:  # a rejected draft (or the pass's last row):
                    step_pass = self._plan(  # its wrong drafts leave the cache next pass
                        state, written, context, pending=(step.token_id,), drop=len(drafts) - i
                    )
                    break

    def _plan(
        self,
        state: int,
        written: int,
        context: list[int],
        pending: tuple[int, ...] = (),
        drop: int = 0,
        carried: np.ndarray | None = None,
        chain: list[tuple[int, int]] | None = None,
    ) -> _Pass:
        """The next pass from ``state``, ``written`` tokens written so far: the forced
        chain (``chain`` when the last pass found it), then drafts guessed after it."""
        budget = self.opts.max_tokens - written
        if chain is None:
            chain = self._forced(state, budget) if self.index else []
        forced = tuple(chain)
        end = forced[-1][1] if forced else state
        ahead = [*context, *(token for token, _ in forced)]
        drafts = tuple(self._drafts(ahead, end, budget - len(forced)))
        return _Pass(pending, forced, drafts, drop, carried)

    def _feed(self, step_pass: _Pass) -> np.ndarray:
        """Run the pass: one row of logits per forced token, per draft, and for the token
        after them (the first row carried over from the pass before, when there is one)."""
        rows = len(step_pass.forced) + len(step_pass.drafts) + 1
        if step_pass.carried is None:
            return self._forward(step_pass.feed, rows, step_pass.drop)
        fresh = self._forward(step_pass.feed, rows - 1, step_pass.drop)
        return np.concatenate([step_pass.carried[None], fresh])

    def _sampled(self, row: np.ndarray, state: int, written: int, draft: int | None) -> Step | None:
        """The step sampled from ``row`` (keeping ``draft`` when sampling agrees), or None
        when the run stops before it (``stop_reason`` says why)."""
        if written >= self.opts.max_tokens:
            self.stop_reason = "max_tokens"
            return None
        allowed = self._allowed(state)
        if allowed is None:
            self.stop_reason = "dead_end"  # no token can follow, and no match so far
            return None
        probs = self._distribution(row)
        valid_mass = _mass(probs, allowed)
        limit = self.opts.prob_limit
        if limit is not None and self._accepting(state) and valid_mass < limit:
            self.stop_reason = "prob_limit"
            return None
        mask = self._safe(allowed, state, written)
        token = self._sample(row, mask, draft)
        after = self.index.next_state(state, token) if self.index else 0
        kept = None
        if after is None:  # allowed only as an overshoot token: its end is cut off
            kept, after = self._overshoot(state).find(token)  # type: ignore[misc]
        step = self._step(
            written, row, state, token, after, probs, valid_mass, drafted=token == draft
        )
        return self._decoding_details(step, row, mask, kept)

    def _decoding_details(
        self, step: Step, row: np.ndarray, mask: np.ndarray, kept: int | None
    ) -> Step:
        """The step with what the samplers removed, the overshoot tokens it was offered,
        and, when it overshot (``kept`` bytes of its token kept), the cut."""
        changes: dict[str, object] = {}
        if self.opts.top_k or self.opts.top_p < 1.0:
            t = self.opts.temperature
            masked = _softmax(np.where(mask, row / t if t > 0 else row, -np.inf))
            narrowed = narrow(masked, self.opts.top_k, self.opts.top_p)
            changes.update(
                top_k_removed=narrowed.top_k_removed, top_p_removed=narrowed.top_p_removed
            )
        if self.opts.overshoot and self.index is not None:
            changes["overshoot_count"] = len(self._overshoot(step.state_before))
        if kept is not None:
            self.overshot = True
            whole = step.token_bytes
            changes.update(
                token_bytes=whole[:kept], cut=whole[kept:].decode("utf-8", errors="replace")
            )
        return replace(step, **changes) if changes else step

    def _overshoot(self, state: int) -> Overshoot:
        """The overshoot tokens of ``state`` (``fsmviz.tokens.overshoot``), once per run."""
        found = self.overshoots.get(state)
        if found is None:
            found = self.overshoots[state] = overshoot(self.index, state)
        return found

    # --- pieces ---------------------------------------------------------------------------

    def _stop_after(self, token: int, state: int, done: int) -> StopReason | None:
        """Why the run stops after writing ``token`` (now in ``state``, ``done`` tokens
        written), or None to go on."""
        if token == self.eos:
            return "accepted"
        if self.overshot:
            return "overshoot"
        if self._finished(state):
            return "accepted"
        if self.opts.stop == "first" and self.index is not None and self._accepting(state):
            return "first_match"
        if done == self.opts.max_tokens:
            return "max_tokens"
        return None

    def _forward(self, ids: list[int], last: int, drop: int) -> np.ndarray:
        """Forget the last ``drop`` tokens of our KV cache (rejected drafts), feed ``ids``
        through the model; float32 logits of the last ``last`` positions."""
        if self.sequence is None:
            self.sequence = self.model.passes.open()
        return self.sequence.forward(ids, last, drop)

    def _distribution(self, logits: np.ndarray) -> np.ndarray:
        """The model's unconstrained distribution after temperature (greedy shows T=1)."""
        t = self.opts.temperature
        return _softmax(logits / t if t > 0 else logits)

    def _accepting(self, state: int) -> bool:
        return self.index.is_accepting(state) if self.index else True

    def _finished(self, state: int) -> bool:
        """Accepting, and no token may follow: the match is complete."""
        return (
            bool(self.index) and self._accepting(state) and len(self.index.row(state).tokens) == 0
        )

    def _allowed(self, state: int) -> np.ndarray | None:
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

    def _safe(self, allowed: np.ndarray, state: int, done: int) -> np.ndarray:
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

    def _sample(self, logits: np.ndarray, mask: np.ndarray, draft: int | None = None) -> int:
        """``sample`` with this run's options and seeded generator."""
        return sample(logits, mask, self.opts, self.rng, draft)

    def _forced(self, state: int, budget: int) -> list[tuple[int, int]]:
        """The tokens of the only possible continuation from ``state`` (fast-forward), as
        (token, state after) pairs; empty when the model has a choice to make. The chain
        stops where a token could run past the constant text, and, with a safe end, before
        a token that would leave too few tokens to finish."""
        if not self.opts.fast_forward or budget <= 0:
            return []
        text = _forced_text(self.index, state)
        ids = self.model.tokenizer.encode(text, add_special_tokens=False) if text else []
        chain: list[tuple[int, int]] = []

        def fits(after: int) -> bool:
            if not self.opts.safe_end:
                return True
            left = budget - len(chain) - 1  # tokens left after this one
            finishes = self.index.finishes_within
            try:
                return bool(finishes(after, left) or not finishes(state, left + 1))
            except IndexTooLarge as error:
                self.give_up_safe_end(error)
                return True

        vocab = self.model.vocab
        left = len(text.encode())  # bytes of constant text still ahead
        for token in ids[:budget]:
            after = self.index.next_state(state, token)
            if after is None or not fits(after):
                return chain
            if any(len(vocab.token_bytes(t)) > left for t in self.index.row(state).tokens):
                # A token here reaches past the constant text (``"\n"`` + indentation as
                # one token ``"\n\t"``): how to cross the boundary is the model's choice.
                # Forcing the short token would split text the model writes as one token.
                return chain
            chain.append((token, after))
            left -= len(vocab.token_bytes(token))
            state = after
        while len(chain) < budget and not self._accepting(state):
            row = self.index.row(state)  # a single allowed token is forced too (toy vocabs)
            if len(row.tokens) != 1:
                break
            chain.append((int(row.tokens[0]), int(row.targets[0])))
            state = int(row.targets[0])
        return chain

    def _drafts(self, context: list[int], state: int, budget: int) -> list[int]:
        """Tokens to try ahead (``draft_tokens``): what followed the latest earlier
        occurrence of the context's last few tokens, cut where the pattern forbids a token
        (a draft the DFA rejects could never be kept). Room is left for the token after.
        None while other generations share the model's passes: batching serves them better."""
        if not self.opts.draft_tokens or budget <= 1 or self.model.passes.sharing:
            return []
        drafts = []
        for token in lookup(context, min(self.opts.draft_tokens, budget - 1)):
            if token == self.eos:
                break
            if self.index is not None:
                state = self.index.next_state(state, token)
                if state is None:
                    break
            drafts.append(token)
        return drafts

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
        """The record of a step; ``probs`` and ``valid_mass`` when already computed."""
        if probs is None:
            probs = self._distribution(logits)
        allowed = self._allowed(state)
        allowed_mask = allowed if allowed is not None else np.zeros(len(probs), dtype=bool)
        if valid_mass is None:
            valid_mass = _mass(probs, allowed_mask)
        # torch's top-k: a third of argpartition's time over 49k, every step of every run
        top_ids = torch.from_numpy(probs).topk(TOP_CANDIDATES).indices.numpy()
        top_ids = top_ids[np.argsort(-probs[top_ids], kind="stable")]
        vocab = self.model.vocab
        top = tuple(
            Candidate(_text(vocab, int(i)), float(probs[i]), bool(allowed_mask[i])) for i in top_ids
        )
        return Step(
            token_id=token,
            text="" if token == self.eos else _text(vocab, token),
            state_before=state,
            state_after=after,
            allowed_count=int(allowed_mask.sum()),
            valid_mass=valid_mass,
            top=top,
            forced=forced,
            drafted=drafted,
            index=number,
            prob=float(probs[token]),
            token_bytes=b"" if token == self.eos else _bytes(vocab, token),
            is_eos=token == self.eos,
        )


def sample(
    logits: np.ndarray,
    mask: np.ndarray,
    opts: GenerationOptions,
    rng: np.random.Generator,
    draft: int | None = None,
) -> int:
    """A token from the masked distribution. Given a ``draft``, the same distribution
    through speculative sampling: keep the draft with its probability q, else draw
    from the rest (greedy: keep it exactly when it is the argmax)."""
    masked = np.where(mask, logits, -np.inf)
    if opts.temperature == 0:
        return int(np.argmax(masked))
    probs = _softmax(masked / opts.temperature)
    if opts.top_k or opts.top_p < 1.0:  # on the allowed distribution, after the mask
        probs = narrow(probs, opts.top_k, opts.top_p).probs
    if draft is not None:
        probs = probs / probs.sum(dtype=np.float64)
        if rng.random() < probs[draft]:
            return draft
        probs[draft] = 0.0
    # Inverse-CDF sampling: one uniform draw from the seeded generator.
    cumulative = np.cumsum(probs, dtype=np.float64)
    index = np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right")
    return int(min(index, len(cumulative) - 1))


def lookup(context: list[int], count: int, longest: int = 3, shortest: int = 2) -> list[int]:
    """Prompt-lookup drafting: find the latest earlier place where the last ``n`` tokens
    of ``context`` occurred (``n`` from ``longest`` down to ``shortest``) and return up to
    ``count`` tokens that followed it there. Repeated structure (JSON keys, indentation,
    a name from the prompt) is guessed right; elsewhere there is no match and no draft."""
    tokens = np.asarray(context)
    for n in range(longest, shortest - 1, -1):
        if len(tokens) <= n:
            continue
        tail = tokens[-n:]
        windows = np.lib.stride_tricks.sliding_window_view(tokens[:-1], n)
        hits = np.flatnonzero((windows == tail).all(axis=1))
        if len(hits):
            start = int(hits[-1]) + n
            return tokens[start : start + count].tolist()
    return []


def _mass(probs: np.ndarray, mask: np.ndarray) -> float:
    """Total probability of the masked-in tokens, summed in float64 and kept in [0, 1]."""
    return min(1.0, float(probs.sum(where=mask, dtype=np.float64)))


def _softmax(logits: np.ndarray) -> np.ndarray:
    """Probabilities from logits (``-inf`` gives 0), in float32."""
    shifted = np.exp(logits - logits.max(), dtype=np.float32)
    return shifted / shifted.sum(dtype=np.float64).astype(np.float32)


def _text(vocab, token: int) -> str:
    return vocab.token_text(token) if token < len(vocab) else f"<{token}>"


def _bytes(vocab, token: int) -> bytes:
    return vocab.token_bytes(token) if token < len(vocab) else b""


def _forced_text(index: TokenIndex, state: int) -> str:
    """The constant text ahead of ``state``: follow the DFA while exactly one character is
    possible and the text so far is not yet a match. It stops before a lone surrogate
    (``\\ud800`` in a pattern): no UTF-8 text, and so no tokenizer, can write one."""
    if not index.is_char_state(state):
        return ""
    dfa = index.dfa
    chars = []
    while not dfa.is_accepting(state) and len(dfa.transitions[state]) == 1:
        ((k, target),) = dfa.transitions[state].items()
        cls = dfa.classes[k]
        if cls.others or len(cls.chars) != 1:
            break
        char = next(iter(cls.chars))
        if SURROGATES[0] <= ord(char) <= SURROGATES[1]:
            break
        chars.append(char)
        state = target
    return "".join(chars)
