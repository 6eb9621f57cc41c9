"""The same index as a transformers ``LogitsProcessor``, for your own ``model.generate``.

At each step ``model.generate`` hands the processor the ids so far (prompt + generated)
and the next-token scores; the processor walks each row's generated tokens through the
index and sets every token the pattern forbids to ``-inf``:

    prompt ids | generated ids ──index──▶ DFA state s ──▶ scores[token] = -inf
                                                           unless token ∈ allowed(s)

Like transformers' own processors it works from ``input_ids`` alone and returns a new
tensor (the caller's ``scores`` are never written). It remembers, per row, how far it has
read, only to avoid re-walking the whole output each step; a row whose generated part is
shorter than what was read is a new ``generate`` call and starts over from the initial
state, so one processor serves any number of calls.

Once a row has emitted EOS (or, after padding, anything the DFA cannot read), only EOS
stays allowed for it, which is how ``generate`` pads finished rows.

**Safe end.** ``generate`` stops after ``max_new_tokens`` whether or not the text matches.
Given the same ``max_new_tokens``, the processor allows at each step only the tokens from
which a match can still be completed within the tokens left (``index.finishes_within``),
so the output fully matches whenever the shortest completion fits at all. Without it,
the example below gives ``1429-1``: six tokens, cut off inside the month.

Example (the bundled model; ``tests/test_processor.py`` runs it)::

    import fsmviz
    from fsmviz.generation.processor import RegexLogitsProcessor

    model = fsmviz.load_model()
    index = fsmviz.build_index(r"[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?", model.vocab)
    inputs = model.tokenizer("The moon landing was on ", return_tensors="pt")
    mask = RegexLogitsProcessor(index, inputs, max_new_tokens=6)
    out = model.model.generate(
        **inputs, logits_processor=[mask], max_new_tokens=6, do_sample=False
    )
    text = model.tokenizer.decode(out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
    assert text == "1429"  # a full match: the month does not fit in the two tokens left
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from transformers import LogitsProcessor

from fsmviz.cache import BoundedCache
from fsmviz.generation.masks import allowed_bitmask, apply_bitmask
from fsmviz.tokens.index import TokenIndex, packed

__all__ = ["RegexLogitsProcessor"]

MASKS_KEPT = 256
"""Per-state packed masks kept on the scores' device (6 kB each for 49k tokens)."""


class RegexLogitsProcessor(LogitsProcessor):
    """Masks every token the pattern forbids at each row's current DFA state; pass it to
    ``model.generate(..., logits_processor=[processor])``. Given the same
    ``max_new_tokens`` as ``generate``, it also keeps the safe end's promise:

    >>> from fsmviz import Vocabulary, build_index
    >>> vocab = Vocabulary.from_strings(["a", "b", "ab"], eos_token="</s>")  # EOS is id 3
    >>> index = build_index("(ab)+", vocab)
    >>> prompt = torch.tensor([[3]])                   # one prompt id, nothing generated yet
    >>> RegexLogitsProcessor(index, prompt)(prompt, torch.zeros(1, 4)).tolist()
    [[0.0, -inf, 0.0, -inf]]
    >>> safe = RegexLogitsProcessor(index, prompt, max_new_tokens=1)
    >>> safe(prompt, torch.zeros(1, 4)).tolist()       # one token left: only "ab" ends a match
    [[-inf, -inf, 0.0, -inf]]
    """

    def __init__(
        self,
        index: TokenIndex,
        prompt: Mapping[str, Any] | torch.Tensor | int,
        max_new_tokens: int | None = None,
    ):
        """``prompt`` is the tokenized prompt (or its input_ids, or its length): generated
        tokens are those after it. ``max_new_tokens``, the same number given to
        ``generate``, turns on the safe end; raises ``IndexTooLarge`` when the index is
        too large to know every state's distance to a match (then leave it None)."""
        if isinstance(prompt, int):
            self.prompt_length = prompt
        else:
            ids = prompt["input_ids"] if isinstance(prompt, Mapping) else prompt
            self.prompt_length = int(ids.shape[-1])
        self.index = index
        self.max_new_tokens = max_new_tokens
        if max_new_tokens is not None:  # every distance now, so no step can raise
            index.token_distances()
        self._rows: dict[int, tuple[int, int | None]] = {}  # row -> (tokens read, state)
        self._masks: BoundedCache[torch.Tensor] = BoundedCache(MASKS_KEPT)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        """``scores`` with every token the pattern forbids after each row's generated ids
        at ``-inf`` (a new tensor). Here the prompt is two ids, and the rows have written
        nothing yet, then ``"1"``, then ``"a"`` (which ``[0-9]+`` cannot read: only EOS):

        >>> from fsmviz import Vocabulary, build_index
        >>> vocab = Vocabulary.from_strings(["1", "2", "a"], eos_token="<eos>")  # EOS is id 3
        >>> mask = RegexLogitsProcessor(build_index("[0-9]+", vocab), prompt=2)
        >>> ids = torch.tensor([[0, 0, 0], [0, 0, 0], [0, 0, 2]])[:, :2]
        >>> mask(ids, torch.zeros(3, 4))[0].tolist()          # a digit must come first
        [0.0, 0.0, -inf, -inf]
        >>> ids = torch.tensor([[0, 0, 0], [0, 0, 2]])
        >>> mask(ids, torch.zeros(2, 4)).tolist()   # after "1": digits or end; after "a": end
        [[0.0, 0.0, -inf, 0.0], [-inf, -inf, -inf, 0.0]]
        """
        words = torch.stack([
            self._words(self._advance(row, generated), len(generated), scores.device)
            for row, generated in enumerate(input_ids[:, self.prompt_length :].tolist())
        ])  # fmt: skip
        return apply_bitmask(scores, words)  # one operation, on the scores' device

    def _advance(self, row: int, generated: list[int]) -> int | None:
        read, state = self._rows.get(row, (0, self.index.initial_state))
        if len(generated) < read:  # a new generate call: start over
            read, state = 0, self.index.initial_state
        for token in generated[read:]:
            state = None if state is None else self.index.next_state(state, token)
        self._rows[row] = (len(generated), state)
        return state

    def _words(self, state: int | None, done: int, device: torch.device) -> torch.Tensor:
        """The packed mask of a row in ``state`` after ``done`` generated tokens, on
        ``device`` (kept there per state, and per step where the safe end restricts it)."""
        left = None if self.max_new_tokens is None else self.max_new_tokens - done
        if state is None or left is None or not self.index.finishes_within(state, left):
            left = None  # no safe end, or nothing to save: the state's own mask
        key = (state, str(device), left)
        return self._masks.get_or_build(key, lambda: self._build_words(state, left, device))

    def _build_words(
        self, state: int | None, left: int | None, device: torch.device
    ) -> torch.Tensor:
        if state is None:  # finished (or unreadable): EOS only
            words = packed(np.array([self.index.vocab.eos_token_id]), len(self.index.vocab))
        else:
            words = allowed_bitmask(self.index, state, left)
        return torch.from_numpy(words.copy()).to(device)
