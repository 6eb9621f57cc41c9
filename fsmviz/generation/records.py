"""Writing a step down: the ``Step`` record of one token, from the numbers the loop has.

The step loop (``fsmviz.generation.generate``) decides; this module only records. For
each token it keeps what the page, the doctor and the downloads show: the model's five
likeliest tokens and whether the pattern allowed each, how many tokens were allowed, the
*valid mass* (the model's own probability of all of them together), the token's own
probability, and how it was written (``forced`` by fast-forward, ``drafted`` and kept).
``decoding_details`` adds what the decoding options did at that step: the tokens top-k
and top-p removed, the overshoot tokens offered, and where an overshoot token was cut.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from fsmviz.generation.samplers import mass, narrow, softmax
from fsmviz.generation.trace import Candidate, GenerationOptions, Step
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["TOP_CANDIDATES", "decoding_details", "likeliest", "record_step"]

TOP_CANDIDATES = 5
"""How many of the model's likeliest tokens each step keeps (``Step.top``)."""
LIKELY = (1e-3, 1e-5)
"""Probabilities a step's five likeliest tokens reach, tried in turn (``likeliest``): at
most a thousand tokens reach the first; a peaked distribution (one token at 0.99) has
fewer than five there, and a few hundred above the second."""


def record_step(
    vocab: Vocabulary,
    eos: int,
    number: int,
    probs: np.ndarray,
    allowed: np.ndarray | None,
    state: int,
    token: int,
    after: int,
    valid_mass: float | None = None,
    forced: bool = False,
    drafted: bool = False,
) -> Step:
    """The ``Step`` numbered ``number``: ``token`` taken in ``state`` (now ``after``),
    with ``probs`` the model's unconstrained distribution and ``allowed`` the pattern's
    mask (None at a dead end: nothing allowed); ``valid_mass`` when already computed.

    >>> from fsmviz import Vocabulary
    >>> vocab = Vocabulary.from_strings(["a", "b", "c", "d", "e", "f"], eos_token="</s>")
    >>> probs = np.array([0.5, 0.2, 0.1, 0.1, 0.05, 0.05, 0.0], dtype=np.float32)
    >>> allowed = np.array([False, True, True, False, False, False, False])
    >>> step = record_step(vocab, vocab.eos_token_id, 0, probs, allowed, 0, 1, 3)
    >>> step.text, step.allowed_count, round(step.valid_mass, 2), round(step.prob, 2)
    ('b', 2, 0.3, 0.2)
    >>> [(c.text, c.allowed) for c in step.top][:2]    # the model wanted "a"
    [('a', False), ('b', True)]
    """
    allowed_mask = allowed if allowed is not None else np.zeros(len(probs), dtype=bool)
    if valid_mass is None:
        valid_mass = mass(probs, allowed_mask)
    top = tuple(
        Candidate(_text(vocab, int(i)), float(probs[i]), bool(allowed_mask[i]))
        for i in likeliest(probs)
    )
    return Step(
        token_id=token,
        text="" if token == eos else _text(vocab, token),
        state_before=state,
        state_after=after,
        allowed_count=int(np.count_nonzero(allowed_mask)),
        valid_mass=valid_mass,
        top=top,
        forced=forced,
        drafted=drafted,
        index=number,
        prob=float(probs[token]),
        token_bytes=b"" if token == eos else _bytes(vocab, token),
        is_eos=token == eos,
    )


def likeliest(probs: np.ndarray, k: int = TOP_CANDIDATES) -> np.ndarray:
    """The ids of the ``k`` likeliest tokens of the distribution ``probs``, likeliest
    first (ties: the lowest id first). Probabilities sum to 1, so at most 1/t tokens
    reach t: where ``k`` of them reach one of ``LIKELY`` (at nearly every step), they are
    among those few, sorted alone (15 µs over 49,152 tokens, torch's top-k 90 µs, numpy's
    argpartition 270); else (a flat distribution) a top-k over them all.

    >>> likeliest(np.array([0.1, 0.4, 0.1, 0.3, 0.05, 0.05]), 3).tolist()
    [1, 3, 0]
    """
    k = min(k, len(probs))
    for floor in LIKELY:
        ids = np.flatnonzero(probs >= floor)
        if len(ids) >= k:
            break
    if not k <= len(ids) <= 2_048:  # a flat distribution: too many to sort
        ids = np.sort(torch.from_numpy(probs).topk(k).indices.numpy())
    return ids[np.argsort(-probs[ids], kind="stable")[:k]]


def decoding_details(
    step: Step,
    logits: np.ndarray,
    mask: np.ndarray,
    opts: GenerationOptions,
    overshoot_count: int | None,
    kept: int | None,
) -> Step:
    """``step`` with what the samplers removed from the masked ``logits`` (with top-k or
    top-p), the number of overshoot tokens it was offered (``overshoot_count``, with
    ``overshoot``), and, when it overshot (``kept`` bytes of its token kept), the cut."""
    changes: dict[str, object] = {}
    if opts.top_k or opts.top_p < 1.0:
        t = opts.temperature
        scores = logits[mask]  # the allowed tokens, as ``sample`` narrows them
        narrowed = narrow(softmax(scores / t if t > 0 else scores), opts.top_k, opts.top_p)
        changes.update(top_k_removed=narrowed.top_k_removed, top_p_removed=narrowed.top_p_removed)
    if overshoot_count is not None:
        changes["overshoot_count"] = overshoot_count
    if kept is not None:
        whole = step.token_bytes
        changes.update(token_bytes=whole[:kept], cut=whole[kept:].decode("utf-8", errors="replace"))
    return replace(step, **changes) if changes else step


def _text(vocab: Vocabulary, token: int) -> str:
    return vocab.token_text(token) if token < len(vocab) else f"<{token}>"


def _bytes(vocab: Vocabulary, token: int) -> bytes:
    return vocab.token_bytes(token) if token < len(vocab) else b""
