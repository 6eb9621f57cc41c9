"""The choice of a token: top-k and top-p (nucleus) narrowing, then the draw itself.

The mask comes first: the samplers see only the tokens the pattern allows, renormalised,
so ``top_k=5`` keeps the five likeliest *allowed* tokens, never a forbidden one, and a
nucleus of 0.9 is 90 % of the allowed mass. Each sampler reports how many allowed tokens
it removed, which the steps table shows (``Step.top_k_removed``, ``Step.top_p_removed``).

    allowed distribution ─top_k─▶ the k likeliest ─top_p─▶ the smallest head holding p ─▶ sample

``sample`` is the draw the step loop makes: greedy at temperature 0, else one uniform draw
from the run's seeded generator; given a *draft* (``fsmviz.generation.drafts``) it keeps
the draft exactly as often as it would have drawn it (speculative sampling).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fsmviz.generation.trace import GenerationOptions

__all__ = ["Narrowed", "mass", "narrow", "sample", "softmax"]


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


def sample(
    logits: np.ndarray,
    mask: np.ndarray,
    opts: GenerationOptions,
    rng: np.random.Generator,
    draft: int | None = None,
) -> int:
    """A token from the masked distribution. Given a ``draft``, the same distribution
    through speculative sampling: keep the draft with its probability q, else draw
    from the rest (greedy: keep it exactly when it is the argmax).

    Only the allowed tokens take part, so the work is theirs alone: ``[0-9]`` draws among
    a few dozen entries, not 49,152 (the same draw: forbidden tokens have probability 0
    and add nothing to the running sum).

    >>> logits = np.log(np.array([0.6, 0.3, 0.1]))
    >>> allowed = np.array([False, True, True])
    >>> sample(logits, allowed, GenerationOptions(temperature=0), np.random.default_rng(0))
    1
    """
    allowed = np.flatnonzero(mask)  # ascending ids: ties still go to the lowest
    scores = logits[allowed]
    if opts.temperature == 0:
        return int(allowed[np.argmax(scores)])
    probs = softmax(scores / opts.temperature)
    if opts.top_k or opts.top_p < 1.0:  # on the allowed distribution, after the mask
        probs = narrow(probs, opts.top_k, opts.top_p).probs
    if draft is not None:
        probs = probs / probs.sum(dtype=np.float64)
        at = int(np.searchsorted(allowed, draft))
        kept = at < len(allowed) and allowed[at] == draft
        if rng.random() < (probs[at] if kept else 0.0):
            return draft
        if kept:
            probs[at] = 0.0
    # Inverse-CDF sampling: one uniform draw from the seeded generator.
    cumulative = np.cumsum(probs, dtype=np.float64)
    index = np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right")
    return int(allowed[min(index, len(cumulative) - 1)])


def mass(probs: np.ndarray, mask: np.ndarray) -> float:
    """Total probability of the masked-in tokens, summed in float64 and kept in [0, 1]
    (a step's *valid mass* when ``probs`` is the model's own distribution)."""
    return min(1.0, float(probs.sum(where=mask, dtype=np.float64)))


def softmax(logits: np.ndarray) -> np.ndarray:
    """Probabilities from logits (``-inf`` gives 0), in float32: worked in one array, in
    place (three arrays of 49,152 floats made and filled cost ~50 µs more a step)."""
    shifted = (logits - logits.max()).astype(np.float32, copy=False)
    np.exp(shifted, out=shifted)
    shifted /= shifted.sum(dtype=np.float64).astype(np.float32)
    return shifted
