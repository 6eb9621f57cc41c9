"""A finished grammar run's masks, replayed: every step's allowed set afterwards.

A regex run can ask its ``TokenIndex`` for the allowed set at any state at any time. A
grammar run has no finite states: llguidance's matcher knows only where it is now. So to
show step ``i``'s whole allowed set after the run, the matcher walks the run again, token
by token, keeping the mask it computes before each one::

    mask_0  t0  mask_1  t1  mask_2  ...   StepMasks.allowed_tokens(i) = mask_i

``StepMasks`` stands where a ``TokenIndex`` does for ``fsmviz.generation.allowed``, the
"state" of a grammar step being the number of tokens before it (``Step.state_before``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fsmviz.generation.allowed import AllowedSet, allowed_sets
from fsmviz.generation.trace import GenerationOptions, Step, Trace, stopped_trace
from fsmviz.grammar.matcher import GrammarMatcher
from fsmviz.grammar.tree import Grammar

__all__ = ["StepMasks", "grammar_allowed_sets", "grammar_stopped_trace", "model_encoder"]


class StepMasks:
    """A grammar run's allowed tokens at each step: llguidance's mask replayed along the
    run's tokens. ``allowed_tokens(state)``, the state of a step counting the tokens
    before it; an empty set past the run's end or off the grammar.

    >>> from fsmviz.grammar import compile_grammar
    >>> from fsmviz.tokens.vocab import Vocabulary
    >>> vocab = Vocabulary.from_strings(["a", "b", "ab", "bb", "</s>"], eos_token="</s>")
    >>> masks = StepMasks(compile_grammar('root ::= ("a" | "b") "b"'), vocab, [0])
    >>> [vocab.token_text(int(t)) for t in masks.allowed_tokens(0)]
    ['a', 'b', 'ab', 'bb']
    >>> [vocab.token_text(int(t)) for t in masks.allowed_tokens(1)]
    ['b']
    """

    def __init__(
        self,
        grammar: Any,
        vocab: Any,
        tokens: Sequence[int],
        encode: Callable[[str], list[int]] | None = None,
    ):
        """``grammar``: fsmviz's ``Grammar``, or a JSON Schema's that llguidance compiled
        (``fsmviz.schema.by_grammar.SchemaGrammar``: its grammar text and parser limits)."""
        if isinstance(grammar, Grammar):
            matcher = GrammarMatcher(grammar, vocab, encode)
        else:
            matcher = GrammarMatcher(grammar.grammar, vocab, encode, grammar.limits())
        self.masks: list[np.ndarray] = []
        for token in [*tokens, None]:
            self.masks.append(matcher.allowed_tokens())
            if token is None or not matcher.consume(int(token)):
                break

    def allowed_tokens(self, state: int) -> np.ndarray:
        if not 0 <= state < len(self.masks):
            return np.zeros(0, dtype=np.int64)
        return self.masks[state]


def model_encoder(model: Any) -> Callable[[str], list[int]]:
    """The model's tokenizer as llguidance's matcher asks for it: text to ids, with no
    special tokens added."""
    tokenizer = model.tokenizer

    def encode(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False))

    return encode


def grammar_allowed_sets(model: Any, grammar: Any, trace: Trace) -> tuple[AllowedSet, ...]:
    """Every step's allowed set of a run under ``grammar`` (a ``Grammar`` or a JSON
    Schema's ``SchemaGrammar``), the model's probabilities with it: llguidance's masks
    replayed along the run's tokens (``StepMasks``) in ``allowed_sets``. The Grammar tab's
    panel and a grammar-path schema run's both come from here."""
    if not trace.steps:
        return ()
    tokens = [s.token_id for s in trace.steps]
    masks = StepMasks(grammar, model.vocab, tokens, model_encoder(model))
    return allowed_sets(model, trace, index=masks)


def grammar_stopped_trace(
    grammar: Any, prompt: str, options: GenerationOptions, written: Sequence[Step]
) -> Trace:
    """The trace of a grammar run the visitor stopped (``stopped_trace``): the steps
    written so far, judged by the grammar's own recognizer (``grammar.accepts``; a JSON
    Schema's grammar judges by its schema), its text as the trace's pattern."""
    return stopped_trace(written, prompt, options, grammar.text, grammar.accepts)
