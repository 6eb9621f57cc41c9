"""Every step's whole allowed set, with the model's probability of each token.

A ``Trace`` keeps only each step's few top candidates, not 49k probabilities a step. When
a run ends (or is stopped), the page shows any step's whole allowed set: the tokens the
constraint allowed at that step's state, most probable first, and the model's favourites
it blocked. Both need the model's distribution at every step, which one more pass gives::

    prompt  p0 p1 p2 | t0 t1 t2        the written tokens t0..t2 fed back in one pass
    logits        l0   l1 l2 (l3)      l_i: the distribution step i drew from

    softmax(l_i / temperature)  ->  probs;  allowed = constraint.allowed_tokens(state_before)

So ``allowed_sets`` is one forward pass per ``ALLOWED_CHUNK`` steps over the sequence the
run already wrote (the same numbers as during the run, up to float rounding), and
``allowed_at`` is the check of it: one pass of its own for one step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from fsmviz.generation.trace import Step, Trace
from fsmviz.printable import bytes_label
from fsmviz.tokens.index import build_index
from fsmviz.tokens.vocab import Vocabulary

if TYPE_CHECKING:
    from fsmviz.generation.models import Model

__all__ = [
    "ALLOWED_CHUNK",
    "ALLOWED_SHOWN",
    "FAVOURITES",
    "AllowedSet",
    "Allows",
    "allowed_at",
    "allowed_set",
    "allowed_sets",
    "token_label",
]

ALLOWED_SHOWN = 300
"""Allowed tokens kept for each step, most probable first (a wide state allows ~49k: the
rest are summed up in one line). All steps' lists go to the browser with the run's last
frame, so that choosing a step shows its set at once."""
FAVOURITES = 10
"""The model's blocked favourites kept for each step."""
ALLOWED_CHUNK = 128
"""Steps whose logits one forward pass returns at a time (128 x 49k floats: 25 MB)."""


class Allows(Protocol):
    """What ``allowed_sets`` asks of a constraint: the allowed ids at a step's state
    (``Step.state_before``). A ``TokenIndex`` is one; a grammar run's masks replayed along
    its tokens (``fsmviz.grammar.replay.StepMasks``) another."""

    def allowed_tokens(self, state: int) -> Sequence[int] | np.ndarray: ...


@dataclass(frozen=True)
class AllowedSet:
    """The whole allowed set of one step, with the model's probability of each token."""

    step: int
    allowed: tuple[tuple[str, bool, float], ...]
    """(token as shown, shown as bytes, probability), most probable first, at most
    ``ALLOWED_SHOWN``. A token that is not whole UTF-8 is shown as its bytes in hex pairs
    (``e6 9d``), as in the step table (``token_label``)."""
    total: int
    """How many tokens the constraint allows at this state."""
    mass: float
    """The model's probability of all of them together (the step's valid mass)."""
    blocked: tuple[tuple[str, bool, float], ...]
    """The model's favourites that the constraint blocked, most probable first."""


def _option(trace: Trace, key: str, default: object) -> object:
    options = trace.options
    return options.get(key, default) if isinstance(options, dict) else getattr(options, key)


def token_label(vocab: Vocabulary, token: int) -> tuple[str, bool]:
    """A token as the allowed set lists it: ``EOS``, its text with whitespace made
    visible, or, when its bytes are not whole UTF-8, those bytes as hex pairs (the step
    table's notation); and whether it is shown as bytes.

    >>> vocab = Vocabulary.from_strings(["a b", "x"], eos_token="x")
    >>> token_label(vocab, 0), token_label(vocab, 1)
    (('a␣b', False), ('EOS', False))
    """
    if token == vocab.eos_token_id:
        return "EOS", False
    raw = vocab.token_bytes(int(token))
    if not raw and vocab.is_special(int(token)):
        return vocab.token_text(int(token)), False
    return bytes_label(raw)


def allowed_sets(model: Model, trace: Trace, index: Allows | None = None) -> tuple[AllowedSet, ...]:
    """Every step's allowed set with probabilities (see ``AllowedSet``): the logits of all
    steps from forward passes over the written sequence, ``ALLOWED_CHUNK`` steps a pass.
    ``index`` answers ``allowed_tokens(step.state_before)``: the pattern's ``TokenIndex``
    unless another is given (a grammar run's masks, ``fsmviz.grammar.replay.StepMasks``)."""
    from fsmviz.generation.generate import encode_prompt  # loads torch: on first use only

    if (index is None and trace.pattern is None) or not trace.steps:
        return ()
    prompt = encode_prompt(model, trace.prompt, bool(_option(trace, "chat", True)))
    tokens = [s.token_id for s in trace.steps]
    if index is None:
        index = build_index(trace.pattern, model.vocab)
    temperature = float(_option(trace, "temperature", 0.0) or 0.0)
    out: list[AllowedSet] = []
    sequence = model.passes.open()
    try:
        k = 0
        while k < len(tokens):
            count = min(ALLOWED_CHUNK, len(tokens) - k)
            # the logits of steps k..k+count-1 come after the tokens before each of them
            fed = prompt + tokens[: count - 1] if k == 0 else tokens[k - 1 : k + count - 1]
            logits = np.asarray(sequence.forward(fed, count), dtype=np.float64)
            for j in range(count):
                step = trace.steps[k + j]
                out.append(allowed_set(model.vocab, index, step, logits[j], temperature))
            k += count
    finally:
        sequence.close()
    return tuple(out)


def allowed_at(model: Model, trace: Trace, i: int) -> AllowedSet:
    """Step ``i``'s allowed set with probabilities, from a forward pass of its own over the
    prompt and the tokens before it (``allowed_sets`` gives every step's at once; this is
    what its test compares with)."""
    from fsmviz.generation.generate import encode_prompt  # loads torch: on first use only

    assert trace.pattern is not None
    ids = encode_prompt(model, trace.prompt, bool(_option(trace, "chat", True)))
    ids += [s.token_id for s in trace.steps[:i]]
    sequence = model.passes.open()
    try:
        logits = np.asarray(sequence.forward(ids, 1)[-1], dtype=np.float64)
    finally:
        sequence.close()
    temperature = float(_option(trace, "temperature", 0.0) or 0.0)
    index = build_index(trace.pattern, model.vocab)
    return allowed_set(model.vocab, index, trace.steps[i], logits, temperature)


def allowed_set(
    vocab: Vocabulary, index: Allows, step: Step, logits: np.ndarray, temperature: float
) -> AllowedSet:
    """One step's allowed set from its raw ``logits``: the softmax (at ``temperature``;
    0 is greedy and leaves the logits as they are), the allowed ids at the step's state
    ranked by probability, and the model's favourites among the rest.

    >>> vocab = Vocabulary.from_strings(["a", "b", "c", "</s>"], eos_token="</s>")
    >>> class Only:
    ...     def allowed_tokens(self, state):
    ...         return [0, 1]
    >>> step = Step(0, "a", 0, 1, 2, 0.5, (), token_bytes=b"a")
    >>> got = allowed_set(vocab, Only(), step, np.log([0.2, 0.3, 0.5, 0.0001]), 0.0)
    >>> [(text, round(p, 2)) for text, _, p in got.allowed], round(got.mass, 2)
    ([('b', 0.3), ('a', 0.2)], 0.5)
    >>> [text for text, _, _ in got.blocked][:1]
    ['c']
    """
    logits = logits[: len(vocab)]
    if temperature > 0:
        logits = logits / temperature
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    allowed = np.asarray(index.allowed_tokens(step.state_before), dtype=np.int64)
    is_allowed = np.zeros(len(vocab), dtype=bool)
    is_allowed[allowed] = True
    order = allowed[np.argsort(-probs[allowed], kind="stable")][:ALLOWED_SHOWN]
    many = FAVOURITES * 4  # the blocked favourites are among the model's first 40
    top = np.argpartition(-probs, many)[:many] if len(probs) > many else np.arange(len(probs))
    top = top[np.argsort(-probs[top], kind="stable")]
    blocked = [t for t in top if not is_allowed[t]][:FAVOURITES]
    return AllowedSet(
        step.index,
        tuple((*token_label(vocab, t), float(probs[t])) for t in order),
        len(allowed),
        float(probs[allowed].sum()),
        tuple((*token_label(vocab, t), float(probs[t])) for t in blocked),
    )
