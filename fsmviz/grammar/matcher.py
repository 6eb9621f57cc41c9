"""Exact token masks for a grammar, from llguidance (the engine vLLM and SGLang run).

fsmviz does not compute grammar masks itself: a context-free mask over 49k tokens is
llguidance's job, and it does it in microseconds to milliseconds a step. What fsmviz adds
is the naive check beside it (``fsmviz.grammar.oracle``, over its own Earley recognizer)
and the picture around it. The pieces:

* ``llguidance_grammar(grammar)``: the grammar as llguidance reads it. A Lark grammar goes
  as written (llguidance's own dialect); a GBNF grammar as the Lark that
  ``fsmviz.grammar.to_lark`` writes (llguidance's own GBNF import drops the leading zeros
  of ``\\U0010FFFF`` and ``\\u00e9``, which its regex parser then refuses, and lexes
  character rules greedily: it refuses ``a = b\\n`` in llama.cpp's arithmetic grammar,
  where ``ws`` swallows the newline the rule needs).

  llguidance *forces* (its default, as vLLM runs it): where the text ahead is fixed, its
  mask holds only the first token of that text as its tokenizer spells it (after
  ``{"a": t`` only ``rue``, not ``r`` or ``ru``, which the naive definition allows too).
  Those are the steps fsmviz fast-forwards anyway; the tests pin exactly this difference.
* ``lltokenizer(vocab)`` (``fsmviz.tokens.encoding``, the one llguidance adaptor):
  llguidance's tokenizer over fsmviz's byte table (the same bytes every other part of
  fsmviz reads), built once per vocabulary. Forced text is tokenized as the model writes it
  mid-text (no SentencePiece ``▁`` before it).
* ``GrammarMatcher``: one run's ``LLMatcher``: the allowed tokens or the packed bitmask
  now, ``consume``, the forced tokens ahead (``forced``), ``is_accepting``, ``stop_reason``
  and ``error``.

>>> from fsmviz.grammar.compile import compile_grammar
>>> from fsmviz.tokens.vocab import Vocabulary
>>> vocab = Vocabulary.from_strings(["(", ")", "()", "x"])
>>> m = GrammarMatcher(compile_grammar('root ::= "(" root ")" | "x"'), vocab)
>>> [vocab.token_text(t) for t in m.allowed_tokens()]
['(', 'x']
>>> m.consume(0), [vocab.token_text(t) for t in m.allowed_tokens()]
(True, ['(', 'x'])
>>> m.consume(3), [vocab.token_text(t) for t in m.forced()], m.is_accepting()
(True, [')'], False)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fsmviz.cache import BoundedCache
from fsmviz.grammar.errors import GrammarError
from fsmviz.grammar.nodes import GrammarTree
from fsmviz.grammar.to_lark import to_lark
from fsmviz.tokens.encoding import lltokenizer
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["GrammarMatcher", "engine_words", "llguidance_grammar", "lltokenizer"]

_GRAMMARS: BoundedCache[str] = BoundedCache(maxsize=32)


def llguidance_grammar(grammar: GrammarTree) -> str:
    """llguidance's grammar for ``grammar`` (validated; ``GrammarError`` if llguidance
    refuses it, with its message). See ``lowering`` for which way a GBNF grammar goes."""
    return _GRAMMARS.get_or_build(grammar, lambda: _lowered(grammar)[1])


def lowering(grammar: GrammarTree) -> str:
    """How ``grammar`` reaches llguidance: ``"lark"`` (as written) or ``"fsmviz"`` (GBNF
    written out as Lark by ``fsmviz.grammar.to_lark``)."""
    return "lark" if grammar.format == "lark" else "fsmviz"


def _lowered(grammar: GrammarTree) -> tuple[str, str]:
    import llguidance  # a compiled engine: loaded on first use

    text = grammar.text if grammar.format == "lark" else to_lark(grammar)
    problem = "unknown error"
    try:
        compiled = llguidance.grammar_from("lark", text)
        problem = llguidance.LLMatcher.validate_grammar(compiled)
    except Exception as error:  # noqa: BLE001 - the converter's own exceptions vary
        problem = str(error)
    if problem:
        first = problem.strip().splitlines()[0] if problem.strip() else "unknown error"
        raise GrammarError(
            f"llguidance refuses this grammar: {first}", None, None, "simplify what it names"
        )
    return lowering(grammar), compiled


def engine_words(error: str) -> str:
    """llguidance's error message as a sentence a user can read: its first line, without
    the parser's state and the grammar it appends.

    >>> engine_words("Parser Error: Current row has 3000 items; max is 2000\\n<state>...")
    'Current row has 3000 items; max is 2000.'
    """
    first = error.strip().split("<state>")[0].strip().splitlines()
    words = first[0].strip() if first else "it gave no reason"
    for prefix in ("Parser Error:", "Error:"):
        if words.startswith(prefix):
            words = words[len(prefix) :].strip()
    return words if words.endswith(".") else f"{words}."


class GrammarMatcher:
    """One run's grammar state over a vocabulary: what may come next, token by token."""

    def __init__(
        self,
        grammar: GrammarTree | str,
        vocab: Vocabulary,
        encode: Callable[[str], Sequence[int]] | None = None,
        limits: Any = None,
    ):
        """``grammar``: fsmviz's ``Grammar``, or a grammar llguidance already compiled (a
        JSON Schema's, ``fsmviz.schema.by_grammar``), with its parser ``limits``."""
        import llguidance  # a compiled engine: loaded on first use

        self.grammar = grammar
        self.vocab = vocab
        self.tokenizer = lltokenizer(vocab, encode)
        compiled = grammar if isinstance(grammar, str) else llguidance_grammar(grammar)
        extra = {} if limits is None else {"limits": limits}
        self._matcher = llguidance.LLMatcher(self.tokenizer, compiled, log_level=0, **extra)
        self._words = (self.tokenizer.vocab_size + 31) // 32
        self.consumed: list[int] = []

    def bitmask(self) -> np.ndarray:
        """The allowed tokens now, packed 32 to an int32 word (bit ``i % 32`` of word
        ``i // 32``), as llguidance, xgrammar and vLLM pass masks around."""
        bits = np.full(self._words, -1, dtype=np.int32)
        if self._matcher.is_error():
            bits[:] = 0
            return bits
        self._matcher.unsafe_compute_mask_ptr(bits.ctypes.data, bits.nbytes)
        return bits

    def allowed_mask(self) -> np.ndarray:
        """The allowed tokens now as one boolean per token id of the vocabulary."""
        bits = self.bitmask().view(np.uint32)
        unpacked = np.unpackbits(bits.view(np.uint8), bitorder="little").astype(bool)
        return unpacked[: len(self.vocab)]

    def allowed_tokens(self) -> np.ndarray:
        """The allowed token ids now, ascending (EOS among them when the text so far is a
        sentence)."""
        return np.flatnonzero(self.allowed_mask())

    def consume(self, token: int) -> bool:
        """Move past ``token``; False (and ``error`` says why) when it was not allowed."""
        ok = bool(self._matcher.consume_token(int(token)))
        if ok:
            self.consumed.append(int(token))
        return ok

    def rollback(self, count: int) -> None:
        """Forget the last ``count`` tokens."""
        if count:
            self._matcher.rollback(count)
            del self.consumed[-count:]

    def forced(self) -> list[int]:
        """The tokens the grammar leaves no choice about from here (fast-forward), as
        llguidance tokenizes the text that is fixed ahead; empty when there is a choice."""
        return list(self._matcher.compute_ff_tokens())

    def forced_bytes(self) -> bytes:
        """The text fixed ahead, as bytes (what ``forced`` tokenizes)."""
        return bytes(self._matcher.compute_ff_bytes())

    def is_accepting(self) -> bool:
        """Whether the text so far is a whole sentence (EOS may come now)."""
        return bool(self._matcher.is_accepting())

    def is_stopped(self) -> bool:
        """Whether nothing but EOS may come (the sentence is complete and cannot grow)."""
        return bool(self._matcher.is_stopped())

    def stop_reason(self) -> str:
        """llguidance's stop reason (``"NotStopped"`` while running)."""
        return str(self._matcher.stop_reason())

    def error(self) -> str:
        """llguidance's error message, ``""`` when there is none."""
        return str(self._matcher.get_error())
