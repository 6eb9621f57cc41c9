"""The same index as a transformers ``LogitsProcessor``, for your own ``model.generate``.

    from fsmviz import build_index, Vocabulary
    from fsmviz.processor import RegexLogitsProcessor

    index = build_index(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", Vocabulary.from_tokenizer(tokenizer))
    inputs = tokenizer(prompt, return_tensors="pt")
    out = model.generate(**inputs, logits_processor=[RegexLogitsProcessor(index, inputs)],
                         max_new_tokens=20)

Each row of the batch keeps its own DFA state, advanced by the tokens generated since the
prompt. Once a row has emitted EOS (or, after padding, anything the DFA cannot read), only
EOS stays allowed for it, which is how ``generate`` pads finished rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from transformers import LogitsProcessor

from .index import TokenIndex

__all__ = ["RegexLogitsProcessor"]


class RegexLogitsProcessor(LogitsProcessor):
    """Masks every token the pattern forbids at each row's current DFA state."""

    def __init__(self, index: TokenIndex, prompt: Mapping[str, Any] | torch.Tensor | int):
        """``prompt`` is the tokenized prompt (or its input_ids, or its length): generated
        tokens are those after it."""
        if isinstance(prompt, int):
            self.prompt_length = prompt
        else:
            ids = prompt["input_ids"] if isinstance(prompt, Mapping) else prompt
            self.prompt_length = int(ids.shape[-1])
        self.index = index
        self._rows: dict[int, tuple[int, int | None]] = {}  # row -> (tokens read, state)
        self._masks: dict[tuple[int | None, int], torch.Tensor] = {}  # one per state seen

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        for row in range(input_ids.shape[0]):
            state = self._advance(row, input_ids[row, self.prompt_length :].tolist())
            mask = self._mask(state, scores.shape[-1]).to(scores.device)
            scores[row] = scores[row].masked_fill(~mask, -torch.inf)
        return scores

    def _advance(self, row: int, generated: list[int]) -> int | None:
        read, state = self._rows.get(row, (0, self.index.initial_state))
        for token in generated[read:]:
            state = None if state is None else self.index.next_state(state, token)
        self._rows[row] = (len(generated), state)
        return state

    def _mask(self, state: int | None, size: int) -> torch.Tensor:
        key = (state, size)
        if key not in self._masks:
            mask = np.zeros(size, dtype=bool)
            if state is None:
                mask[self.index.vocab.eos_token_id] = True
            else:
                mask[self.index.allowed_tokens(state)] = True
            self._masks[key] = torch.from_numpy(mask)
        return self._masks[key]
