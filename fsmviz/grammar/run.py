"""A generation under a grammar: ``stream``'s step loop with llguidance's mask in it.

``fsmviz.generation.generate`` runs one loop for every constraint; a regex brings its
``TokenIndex`` (state -> allowed tokens -> next state). A grammar has no finite state
table, so ``GrammarRun`` gives the loop the same few answers another way:

* the **state** is the number of tokens written so far (``Step.state_before`` and
  ``state_after`` count tokens for a grammar run; the parser's place itself is drawn from
  the text);
* the **mask** at each step is ``GrammarMatcher.allowed_mask()`` (llguidance), EOS
  included when the text is a sentence; ``allowed_count``, ``valid_mass``, ``top`` and
  ``forced`` are filled from it exactly as for a regex;
* **forced** text (``{"a": t`` leaves only ``rue``) is fast-forwarded: the tokens of
  ``GrammarMatcher.forced()`` go through the model in one pass, marked ``forced``;
* the run is ``accepted`` once EOS is taken or nothing but EOS may follow; drafts are off.

**Safe end.** fsmviz's own Earley chart of the text so far gives the shortest text that
finishes a sentence (``Recognizer.completion``); its length in tokens is that text
through the model's tokenizer (or fewer, when the run is already following such a plan).
When that fits in the tokens left, a sampled token is kept only if the shortest
completion *after* it still fits in what will then be left; otherwise it is struck from
the mask and the sample drawn again (the same distribution as masking first, computed
for the few tokens actually drawn instead of all 49k). After ``MAX_REDRAWS`` strikes the
plan's next token is taken, which always fits. So a grammar run ends in a whole sentence
whenever the shortest completion fits in ``max_tokens`` (tokens that end inside a UTF-8
character are kept only while a few tokens of slack remain).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from fsmviz.generation.generate import encode_text
from fsmviz.generation.models import Model
from fsmviz.generation.trace import GenerationOptions, StopReason
from fsmviz.grammar.earley import Column, recognizer
from fsmviz.grammar.errors import GrammarError
from fsmviz.grammar.matcher import GrammarMatcher, engine_words
from fsmviz.grammar.network import build_network
from fsmviz.grammar.nodes import GrammarTree as Grammar  # tree.Grammar is one; tree imports run
from fsmviz.grammar.oracle import split_utf8
from fsmviz.grammar.place import Place, place_of
from fsmviz.tokens.index import packed

__all__ = ["MAX_REDRAWS", "GrammarRun", "GrammarCursor"]

MAX_REDRAWS = 32
_KEPT_MASKS = 64
_SLACK = 3  # tokens of slack under which a token ending inside a character is struck


class SchemaGrammarLike(Protocol):
    """A grammar llguidance compiled itself (``fsmviz.schema.by_grammar.SchemaGrammar``, a
    JSON Schema's): its text and its parser limits, and no tree for fsmviz's chart."""

    grammar: str

    def limits(self) -> Any: ...

    def accepts(self, text: str) -> bool: ...


class GrammarCursor:
    """Where a grammar run is: llguidance's matcher and fsmviz's Earley chart of the same
    text, moved together token by token. A ``fsmviz.Constraint`` whose state counts the
    tokens written: it only moves on, and the allowed set (``allowed_tokens``,
    ``bitmask``) and ``shortest_completion`` are asked of the state it is at."""

    initial_state = 0

    def __init__(self, grammar: Grammar | SchemaGrammarLike, model: Model):
        self.grammar = grammar
        tokenizer, vocab = model.tokenizer, model.vocab

        def encode(text: str) -> list[int]:  # text as text: never a control token, and
            return encode_text(tokenizer, text, vocab)  # no SentencePiece ``▁`` before it

        self.encode = encode
        self.ends: list[tuple[bool, bool]] = []  # (accepting, stopped) after each token
        self.vocab = model.vocab
        if isinstance(grammar, Grammar):
            self.matcher = GrammarMatcher(grammar, model.vocab, encode)
            self.recognizer = recognizer(grammar)
            self.columns: list[Column] = [self.recognizer.first]
        else:  # a JSON Schema's grammar, compiled by llguidance: no chart, no safe end
            self.matcher = GrammarMatcher(grammar.grammar, model.vocab, encode, grammar.limits())
            self.columns = []
        self.initially = self.verdict()
        self.pending = b""  # bytes of a character the text so far ends inside
        self.plan: list[int] | None = None  # tokens of a shortest completion from here
        self.lost = not isinstance(grammar, Grammar)  # True: no chart (or it died where
        # llguidance went on: they disagree), so no safe end from here

    @property
    def position(self) -> int:
        return len(self.matcher.consumed)

    # --- the Constraint's questions (fsmviz.generation.constraint) ----------------------

    @property
    def text(self) -> str:
        """The grammar's source (a JSON Schema's: llguidance's grammar of it)."""
        grammar = self.grammar
        return grammar.text if isinstance(grammar, Grammar) else grammar.grammar

    def allowed_tokens(self, state: int) -> np.ndarray:
        self._here(state)
        return self.matcher.allowed_tokens()

    def bitmask(self, state: int) -> np.ndarray:
        self._here(state)
        return packed(self.matcher.allowed_tokens(), len(self.vocab))

    def shortest_completion(self, state: int) -> int | None:
        """Fewest tokens known to finish a sentence from here (``need``; None: unknown)."""
        self._here(state)
        return self.need()

    def place(self, text: str) -> Place | None:
        """The parser's place after ``text`` (``fsmviz.grammar.place``); None for a JSON
        Schema's grammar, which llguidance compiled and fsmviz's network does not read."""
        if not isinstance(self.grammar, Grammar):
            return None
        return place_of(build_network(self.grammar), text)

    def accepts(self, text: str) -> bool:
        return self.grammar.accepts(text)

    def _here(self, state: int) -> bool:
        if state != self.position:
            raise RuntimeError(f"a grammar run is at {self.position}, not {state}")
        return True

    def next_state(self, state: int, token: int) -> int | None:
        if state != self.position:
            raise RuntimeError(f"a grammar run only moves on (at {self.position}, not {state})")
        if not self.matcher.consume(token):
            return None
        self.ends.append(self.verdict())
        if self.plan and self.plan[0] == token:
            self.plan = self.plan[1:]
        else:
            self.plan = None
        if token != self.vocab.eos_token_id and not self.lost:
            extended = self.extend(self.columns, self.pending, self.vocab.token_bytes(token))
            if extended is None:
                self.lost = True
            else:
                self.columns, self.pending = extended
        return state + 1

    def is_accepting(self, state: int) -> bool:
        return self.ends_at(state)[0]

    def reads_on(self, token: int) -> bool | None:
        """Whether ``token`` after the text so far keeps it the beginning of a sentence, by
        fsmviz's chart (one token's bytes read on from where the chart is); None where there
        is no chart (a JSON Schema's grammar, or a chart that died). llguidance offers only
        its own spelling of a grammar's fixed text (``Die``, not ``D``): this says whether
        another engine's spelling still fits."""
        if self.lost:
            return None
        return self.extend(self.columns, self.pending, self.vocab.token_bytes(token)) is not None

    def verdict(self) -> tuple[bool, bool]:
        """(accepting, stopped) now. A matcher that gave up (an error) is stopped too in
        llguidance's eyes, but its text is no finished sentence: not stopped here, so the
        next step finds the empty mask and says why (``GrammarRun._stuck``)."""
        matcher = self.matcher
        return matcher.is_accepting(), matcher.is_stopped() and not matcher.error()

    def ends_at(self, state: int) -> tuple[bool, bool]:
        """(accepting, stopped) of the text of the first ``state`` tokens. The matcher
        itself is at ``position``, which a fast-forwarded chain moves past the steps the
        loop has yet to record: the state after the chain's first token is *its* state,
        not the matcher's, and only the state after its last token is the matcher's."""
        if state == self.position:
            return self.verdict()
        if 0 < state <= len(self.ends):
            return self.ends[state - 1]
        if state == 0:  # the start, left behind by a chain
            return self.initially
        raise RuntimeError(f"no verdict kept for step {state}")

    def extend(
        self, columns: list[Column], pending: bytes, data: bytes
    ) -> tuple[list[Column], bytes] | None:
        """The chart after ``data`` more bytes (a new list; None if the chart dies)."""
        split = split_utf8(pending + data)
        if split is None:
            return None
        text, tail = split
        out = list(columns)
        try:
            for char in text:
                column = self.recognizer.step(out, char)
                if not column:
                    return None
                out.append(column)
        except GrammarError:  # too ambiguous to follow in time: no safe end from here
            return None
        return out, tail

    def need(self) -> int | None:
        """Fewest tokens known to finish a sentence from here (None: unknown)."""
        if self.lost or self.pending:
            return None
        if self.plan is None:
            too_many = self._beyond(self.columns, self.most)
            if too_many is not None:  # counted, never spelled (fsmviz.grammar.limits)
                return too_many
            self.plan = self.encode(self.recognizer.completion(self.columns))
        return len(self.plan)

    most: int | None = None
    """The run's whole budget in tokens (``GrammarRun`` sets it): a completion no budget
    that size could hold is counted, not spelled and tokenized (a 100,000-character one
    took 0.2-0.3 s to tokenize at every step)."""

    def _beyond(self, columns: list[Column], budget: int | None) -> int | None:
        """At least how many tokens the shortest completion after ``columns`` takes, when
        that is more than ``budget`` (its characters over the longest token's bytes), or
        None when it may fit (or ``budget`` is None)."""
        if budget is None:
            return None
        length = self.recognizer.completion_length(columns)
        if length <= budget:  # a token holds at least one character: it may fit
            return None
        if self._longest is None:
            self._longest = max(len(self.vocab.token_bytes(t)) for t in range(len(self.vocab)))
        least = -(-length // max(self._longest, 1))
        return least if least > budget else None

    _longest: int | None = None  # the most bytes any token holds (asked once)

    def fits(self, token: int, budget: int) -> bool:
        """Whether a sentence can still be finished within ``budget`` tokens after
        ``token`` (EOS: whether the text is a sentence now)."""
        if token == self.vocab.eos_token_id:
            return self.matcher.is_accepting()
        if self.plan and self.plan[0] == token:
            return True
        extended = self.extend(self.columns, self.pending, self.vocab.token_bytes(token))
        if extended is None:
            return False
        columns, tail = extended
        if tail:
            return budget - (self.need() or 0) >= _SLACK
        if self._beyond(columns, budget) is not None:
            return False
        return len(self.encode(self.recognizer.completion(columns))) <= budget


class GrammarRun:
    """A grammar's answers to the step loop's questions (a
    ``fsmviz.generation.constraint.Steering``) where a regex run asks its ``TokenIndex``:
    ``stream`` puts it in the one loop (``generate._Run``), which holds it."""

    initial_state = 0
    constrained = True

    def __init__(self, model: Model, grammar: Grammar | SchemaGrammarLike, opts: GenerationOptions):
        place = GrammarCursor(grammar, model)
        place.most = opts.max_tokens
        self.model = model
        self.opts = opts
        self.size = model.logits_size
        self.eos = model.vocab.eos_token_id
        self.masks: dict[int, np.ndarray] = {}
        self.notes: list[str] = []
        self.place = self.index = place
        self.grammar = grammar

    def allowed(self, state: int) -> np.ndarray | None:
        mask = self.masks.get(state)
        if mask is None:
            if state != self.place.position:
                raise RuntimeError(f"no mask kept for step {state}")
            allowed = self.place.matcher.allowed_mask()
            if not allowed.any():
                return None
            mask = np.zeros(self.size, dtype=bool)
            mask[: len(allowed)] = allowed[: self.size]
            if len(self.masks) > _KEPT_MASKS:  # a forced chain's masks are kept until drawn
                self.masks = {s: m for s, m in self.masks.items() if s >= state - _KEPT_MASKS}
            self.masks[state] = mask
        return mask

    def accepting(self, state: int) -> bool:
        return self.place.ends_at(state)[0]

    def finished(self, state: int) -> bool:
        """Whether the text of ``state`` tokens is a sentence nothing may extend. Asked of
        *that* state (``GrammarCursor.ends_at``), not of the matcher, which a forced chain
        has already moved to the chain's end."""
        accepting, stopped = self.place.ends_at(state)
        if stopped:
            return True
        if not accepting:
            return False
        allowed = self.allowed(state)
        return allowed is not None and int(allowed.sum()) == 1

    def stuck(self) -> StopReason:
        """``engine_error`` with llguidance's words in the notes where it gave up (a
        grammar too complex for its parser, one of its limits), else ``dead_end``."""
        error = self.place.matcher.error()
        if not error:
            return "dead_end"
        self.notes.append(f"The grammar engine (llguidance) stopped the run: {engine_words(error)}")
        return "engine_error"

    def forced(self, state: int, budget: int) -> list[tuple[int, int]]:
        if not self.opts.fast_forward or budget <= 0:
            return []
        chain = []
        for token in self.place.matcher.forced()[:budget]:
            self.allowed(state)  # kept for the forced step's record
            after = self.place.next_state(state, token)
            if after is None:  # refused: the step at ``state`` asks the matcher again
                self.masks.pop(state, None)
                break
            chain.append((token, after))
            state = after
        return chain

    def drafts(self, context: list[int], state: int, budget: int) -> list[int]:
        return []

    def safe(self, allowed: np.ndarray, state: int, done: int) -> np.ndarray:
        return allowed  # a grammar's safe end strikes a drawn token instead (``choose``)

    def advance(self, state: int, token: int) -> tuple[int | None, int | None]:
        return self.place.next_state(state, token), None

    def overshoots(self, state: int) -> int | None:
        return None  # refused for grammars (``fsmviz.params.check_grammar_options``)

    def choose(self, draw: Callable[[np.ndarray], int], mask: np.ndarray, done: int) -> int:
        """``draw(mask)``, redrawn (``MAX_REDRAWS`` times at most) while the drawn token
        leaves no shortest completion within the tokens left (the module's safe end)."""
        token = first = draw(mask)
        if not self.opts.safe_end:
            return token
        place, left = self.place, self.opts.max_tokens - done  # this token included
        need = place.need()
        if need is None or need > left:
            return token  # even the shortest completion does not fit: nothing to save
        if place.fits(token, left - 1):
            return token
        mask = mask.copy()
        for _ in range(MAX_REDRAWS):
            mask[token] = False
            if not mask.any():
                break
            token = draw(mask)
            if place.fits(token, left - 1):
                return token
        allowed = self.allowed(place.position)  # the plan's next token, or the end,
        for choice in (*(place.plan or [])[:1], self.eos):  # where the engine allows it
            if allowed is not None and choice < len(allowed) and allowed[choice]:
                return choice
        return first  # nothing allowed fits: the model's own first choice
