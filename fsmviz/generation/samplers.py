"""Top-k and top-p (nucleus) sampling, on the distribution the mask left.

The mask comes first: the samplers see only the tokens the pattern allows, renormalised,
so ``top_k=5`` keeps the five likeliest *allowed* tokens, never a forbidden one, and a
nucleus of 0.9 is 90 % of the allowed mass. Each sampler reports how many allowed tokens
it removed, which the steps table shows (``Step.top_k_removed``, ``Step.top_p_removed``).

    allowed distribution ─top_k─▶ the k likeliest ─top_p─▶ the smallest head holding p ─▶ sample
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Narrowed", "narrow"]


class Narrowed(NamedTuple):
    """What the samplers left (``probs``, zero where removed; not renormalised) and how
    many allowed tokens each removed."""

    probs: np.ndarray
    top_k_removed: int
    top_p_removed: int


def narrow(probs: np.ndarray, top_k: int = 0, top_p: float = 1.0) -> Narrowed:
    """Keep the ``top_k`` likeliest tokens (0: all), then the smallest set of the likeliest
    whose mass reaches ``top_p`` of what is left (1.0: all). ``probs`` is the masked
    distribution (0 for forbidden tokens); ties are broken by token id.

    >>> p = np.array([0.5, 0.0, 0.3, 0.15, 0.05])
    >>> n = narrow(p, top_k=3, top_p=0.8)
    >>> n.probs.tolist(), n.top_k_removed, n.top_p_removed
    ([0.5, 0.0, 0.3, 0.0, 0.0], 1, 1)
    """
    alive = int(np.count_nonzero(probs))
    removed_k = removed_p = 0
    if top_k and alive > top_k:
        order = np.argsort(-probs, kind="stable")
        kept = np.zeros_like(probs)
        kept[order[:top_k]] = probs[order[:top_k]]
        probs, removed_k, alive = kept, alive - top_k, top_k
    if top_p < 1.0 and alive > 1:
        order = np.argsort(-probs, kind="stable")
        ordered = probs[order].astype(np.float64)
        total = ordered.sum()
        before = np.cumsum(ordered) - ordered  # mass of the likelier tokens
        inside = (before < top_p * total) & (ordered > 0)
        nucleus = np.zeros_like(probs)
        nucleus[order[inside]] = probs[order[inside]]
        removed_p = alive - int(inside.sum())
        probs = nucleus
    return Narrowed(probs, removed_k, removed_p)
