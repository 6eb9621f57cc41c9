"""The seeds' toy vocabularies, stepped token by token.

Seed 000 explains the token index with the vocabulary ``["a", ".", ".2", "1"]`` and the
pattern ``[0-9]+\\.[0-9]+``: at the start only ``1`` may come; after "1" the tokens ``.``,
``.2`` and ``1``; after "1." only ``1``. Seed 004 uses ``["A", ".", "42", ".2", "1"]``
with ``([0-9]*)?\\.?[0-9]*`` (everything but ``A`` may start), seed 003 spells
``hot|cold|hotel`` letter by letter with ``*`` as the end token (after "hot": ``e`` or
``*``). At every step the index gives the allowed set; the *mask* is that set as a row of
ticks over the whole vocabulary; the model's logits, masked, are what is sampled from.

The model can be a row of numbers typed by hand (uniform by default) or seed 000's
``ZipModel``: the logit of a token is minus the length of the gzip-compressed training
text + context + token (in nats): a token that compresses well with what came before is
"likely". A compressor as a language model, offline, and (as the seed says) very bad.
"""

from __future__ import annotations

import gzip
import math
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fsmviz.errors import InputError
from fsmviz.tokens.index import TokenIndex, build_index
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["TOY_EXAMPLES", "ToyExample", "ToyStep", "ToyView", "ZipModel", "toy_view"]


@dataclass(frozen=True)
class ToyExample:
    """A toy vocabulary from a seed, with the pattern the seed uses it for."""

    name: str
    tokens: tuple[str, ...]
    eos: str
    pattern: str
    source: str
    model: str = "uniform"
    """The logits the example runs with: ``"uniform"`` or ``"ZipModel"``."""
    training: str = ""
    """The ZipModel's training text (lowercased, as the seed reads its book)."""
    prompt: str = ""
    """What the ZipModel reads before the generated text (lowercased, as the seed's
    tokenizer does)."""

    def vocabulary(self) -> Vocabulary:
        return Vocabulary.from_strings(self.tokens, self.eos)


ZIP_VOCABULARY = "qwertyuiopasdfghjklzxcvbnm,.;:1234567890@_\\/ "
"""Seed 000's ``ziplm`` vocabulary, 45 characters as its Python string spells them
(``\\/`` is a backslash and a slash); the end token ``<|endoftext|>`` is id 45."""
MOBY_DICK = (Path(__file__).with_name("mobydick.txt")).read_text(encoding="utf-8").lower()
"""A public-domain passage of Moby-Dick (Melville, 1851): the opening of chapter 1 and lines
of chapter 36, the ZipModel's training text (the seed trained on the whole book)."""


TOY_EXAMPLES: dict[str, ToyExample] = {
    e.name: e
    for e in (
        ToyExample(
            "seed 000: a . .2 1",
            ("a", ".", ".2", "1"),
            "<eos>",
            r"[0-9]+\.[0-9]+",
            "seed 000 (Outlines' blog post): states_to_vocab",
        ),
        ToyExample(
            "seed 004: A . 42 .2 1",
            ("A", ".", "42", ".2", "1"),
            "<eos>",
            r"([0-9]*)?\.?[0-9]*",
            "seed 004: guided generation with Outlines",
        ),
        ToyExample(
            "seed 000: Moby Dick on the ZipModel",
            tuple(ZIP_VOCABULARY),
            "<|endoftext|>",
            "(ishmael|moby dick)",
            "seed 000: a gzip model asked about Moby Dick",
            model="ZipModel",
            training=MOBY_DICK,
            prompt="ahab is seeking vengeance against",
        ),
        ToyExample(
            "seed 003: hot / cold / hotel",
            tuple(string.ascii_letters),
            "*",
            "(hot|cold|hotel)",
            "seed 003: an FSM decoder, * ends the word",
        ),
    )  # fmt: skip
}


@dataclass(frozen=True)
class ZipModel:
    """Seed 000's compressor language model: ``logit(t) = -len(gzip(training + " " +
    context + " " + t)) * ln 256``. Deterministic (gzip's time stamp fixed at 0).

    >>> m = ZipModel("1.5 2.5 3.5 1.5")
    >>> a, b = m.logits("1.", ["5", "a"])
    >>> a >= b
    True
    """

    training: str
    conversion: float = math.log(256)
    prompt: str = ""
    """Read before the context, as the seed's model reads the prompt's tokens."""

    def logits(self, context: str, tokens: Sequence[str]) -> list[float]:
        inputs = self.prompt + context
        return [
            -len(gzip.compress(" ".join([self.training, inputs, t]).encode(), mtime=0))
            * self.conversion
            for t in tokens
        ]


@dataclass(frozen=True)
class ToyStep:
    """One token written: from ``state`` with ``allowed`` ids, ``token`` chosen."""

    state: int
    text: str
    token: int
    after: int


@dataclass(frozen=True)
class ToyView:
    """Where a toy generation stands after ``steps``: the current ``state``, its allowed
    token ids, the mask over the whole vocabulary and the masked probabilities."""

    index: TokenIndex
    steps: tuple[ToyStep, ...]
    text: str
    state: int
    allowed: tuple[int, ...]
    mask: tuple[bool, ...]
    probs: tuple[float, ...]
    logits: tuple[float, ...]
    finished: bool

    @property
    def path(self) -> tuple[int, ...]:
        return (self.index.initial_state, *(s.after for s in self.steps))

    def allowed_texts(self) -> list[str]:
        return [self.index.vocab.token_text(t) for t in self.allowed]

    def sample(self, seed: int) -> int:
        """A token drawn from the masked probabilities (``random.Random(seed)``)."""
        return random.Random(seed).choices(range(len(self.probs)), weights=self.probs)[0]


def _masked_softmax(logits: Sequence[float], mask: Sequence[bool]) -> tuple[float, ...]:
    kept = [x for x, m in zip(logits, mask, strict=True) if m]
    if not kept:
        return tuple(0.0 for _ in logits)
    top = max(kept)
    weights = [math.exp(x - top) if m else 0.0 for x, m in zip(logits, mask, strict=True)]
    total = sum(weights)
    return tuple(w / total for w in weights)


def toy_view(
    pattern: str,
    vocab: Vocabulary,
    history: Sequence[int],
    logits: Sequence[float] | None = None,
    model: ZipModel | None = None,
) -> ToyView:
    """Replay ``history`` (token ids) through the index of ``pattern`` over ``vocab`` and
    describe the next step. ``logits`` (one per token, default 0 = uniform) or ``model``
    give the scores. Raises ``ValueError`` when a token of ``history`` is not allowed.

    >>> v = Vocabulary.from_strings(["a", ".", ".2", "1"])
    >>> [toy_view("[0-9]+\\\\.[0-9]+", v, h).allowed_texts() for h in ([], [3], [3, 1])]
    [['1'], ['.', '.2', '1'], ['1']]
    """
    index = build_index(pattern, vocab)
    state = index.initial_state
    steps: list[ToyStep] = []
    text = ""
    for token in history:
        after = index.next_state(state, token)
        if after is None:
            raise InputError(f"token {vocab.token_text(token)!r} is not allowed after {text!r}")
        steps.append(ToyStep(state, text, token, after))
        text += vocab.token_bytes(token).decode("utf-8", "replace")
        state = after
    finished = bool(history) and history[-1] == vocab.eos_token_id
    allowed = () if finished else tuple(int(t) for t in index.allowed_tokens(state))
    mask = tuple(i in set(allowed) for i in range(len(vocab)))
    if model is not None:
        scores = model.logits(text, [vocab.token_text(i) for i in range(len(vocab))])
    else:
        scores = list(logits) if logits is not None else [0.0] * len(vocab)
    if len(scores) != len(vocab):
        raise InputError(f"{len(scores)} logits for {len(vocab)} tokens")
    probs = _masked_softmax(scores, mask)
    return ToyView(index, tuple(steps), text, state, allowed, mask, probs, tuple(scores), finished)
