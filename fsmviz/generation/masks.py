"""The mask of one step, packed as the peers pack it, and applied where the logits are.

A step's allowed set comes from the index as a *bitmask*: int32 words, bit ``i % 32`` of
word ``i // 32`` for token ``i`` (``TokenIndex.bitmask``, made once per state and kept).
6 kB for 49k tokens, so it moves to a GPU as cheaply as it is looked up, and the logits
are masked on their own device in one operation: the words, shifted by 0..31 and ``& 1``,
are the booleans, and ``masked_fill`` sets every forbidden logit to ``-inf``
(``apply_bitmask``). On the host the same booleans come from ``np.unpackbits``
(``unpack``).

**The safe end** (seed 001) restricts a step's mask when the tokens left are few: only
tokens after which a match can still be finished in the tokens left after them stay
allowed (``safe_end_tokens``). The step loop (``generate``) and the transformers processor
(``processor``) both ask it here, so they cannot disagree.
"""

from __future__ import annotations

import numpy as np
import torch

from fsmviz.tokens.index import TokenIndex, packed, with_eos

__all__ = ["allowed_bitmask", "apply_bitmask", "safe_end_tokens", "unpack", "unpack_on"]


def safe_end_tokens(index: TokenIndex, state: int, left: int) -> np.ndarray | None:
    """The tokens allowed in ``state`` with ``left`` tokens still to write (this one
    included) that leave a match finishable in the ``left - 1`` after it (sorted, EOS
    among them when ``state`` accepts); None when the safe end takes nothing away (every
    allowed token fits, or even the shortest completion does not fit, so there is nothing
    to save). May raise ``IndexTooLarge`` (``TokenIndex.finishes_within``).

    >>> from fsmviz import Vocabulary, build_index
    >>> vocab = Vocabulary.from_strings(["a", "b", "ab"], eos_token="</s>")
    >>> index = build_index("(ab)+", vocab)  # with one token left, only "ab" finishes
    >>> [vocab.token_text(int(t)) for t in safe_end_tokens(index, 0, 1)]
    ['ab']
    >>> safe_end_tokens(index, 0, 2) is None  # "a" then "b" fits in two
    True
    """
    if not index.finishes_within(state, left):
        return None
    row = index.row(state)
    fits = index.finishes_within(row.targets, left - 1)
    if fits.all():
        return None
    tokens = row.tokens[fits]
    return with_eos(tokens, index.vocab.eos_token_id) if index.is_accepting(state) else tokens


def allowed_bitmask(index: TokenIndex, state: int, left: int | None = None) -> np.ndarray:
    """The packed mask of ``state``: ``index.bitmask(state)`` (kept, read-only), or with
    ``left`` tokens to go, restricted by the safe end (``safe_end_tokens``)."""
    restricted = None if left is None else safe_end_tokens(index, state, left)
    if restricted is None:
        return index.bitmask(state)
    return packed(restricted, len(index.vocab))


def unpack(words: np.ndarray, size: int) -> np.ndarray:
    """A packed mask as ``size`` booleans (ids past the words' bits are False).

    >>> unpack(np.array([5], dtype=np.int32), 4).tolist()
    [True, False, True, False]
    """
    bits = np.unpackbits(words.view(np.uint8), bitorder="little", count=min(size, 32 * len(words)))
    if size > len(bits):
        bits = np.concatenate([bits, np.zeros(size - len(bits), dtype=np.uint8)])
    return bits.view(bool)


def unpack_on(words: torch.Tensor, size: int) -> torch.Tensor:
    """Packed masks (``(..., words)`` int32, on any device) as ``(..., size)`` booleans on
    the same device: each word shifted right by 0..31, ``& 1``.

    >>> unpack_on(torch.tensor([[5], [-1]], dtype=torch.int32), 3).tolist()
    [[True, False, True], [True, True, True]]
    """
    shifts = torch.arange(32, dtype=torch.int32, device=words.device)
    bits = ((words.unsqueeze(-1) >> shifts) & 1).flatten(-2).bool()
    if size > bits.shape[-1]:
        return torch.nn.functional.pad(bits, (0, size - bits.shape[-1]))
    return bits[..., :size]


def apply_bitmask(scores: torch.Tensor, words: torch.Tensor) -> torch.Tensor:
    """``scores`` (``(..., vocabulary)``) with every token whose bit is clear in ``words``
    (``(..., words)``, the same device) at ``-inf``: a new tensor, on the scores' device.

    >>> scores = torch.zeros((1, 3))
    >>> apply_bitmask(scores, torch.tensor([[5]], dtype=torch.int32)).tolist()
    [[0.0, -inf, 0.0]]
    """
    return scores.masked_fill(~unpack_on(words, scores.shape[-1]), -torch.inf)
