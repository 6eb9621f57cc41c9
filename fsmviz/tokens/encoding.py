"""Text to tokens as a model writes it *inside* a text, and llguidance's tokenizer over a
vocabulary: the one adaptor every part of fsmviz that runs llguidance shares.

**Mid-text tokens.** A tokenizer encodes a text as if it began a document. SentencePiece
(Llama 2, Phi-3, Mistral) then writes a word boundary ``▁`` before it: ``"Die Stadt "``
becomes ``▁Die ▁Stadt ▁``, the bytes ``" Die Stadt "``, one space too many. Text that a
constraint fixes ahead (fast-forward, a grammar's literal, llguidance's forced text) comes
after other text, so ``as_written`` encodes it after a newline and drops the newline's
tokens: ``\\n`` + ``Die Stadt `` is ``▁ <0x0A> Die ▁Stadt ▁``, and ``Die ▁Stadt ▁`` spells
exactly ``"Die Stadt "``. A byte-level BPE tokenizer (GPT-2, Llama 3, Qwen2, SmolLM2) spells
the text right the first time, and its answer is kept as it is.

**llguidance's tokenizer** (``lltokenizer``): llguidance reads a vocabulary as one byte
string per token, special tokens marked with a leading 0xFF byte, and a function that
tokenizes the text it forces. fsmviz hands it its own byte table (``Vocabulary``) and
``as_written`` over the model's tokenizer; where that does not spell the text either (a
control token's name, ``<|im_end|>``, read as the control token), a greedy longest match
over the ordinary tokens stands in. ``byte_tokenizer`` is the 257-token vocabulary of single
bytes and an end token on which the schema engines are compared (a verdict about the
language, not about a tokenizer).

>>> from fsmviz.tokens.vocab import Vocabulary
>>> vocab = Vocabulary.from_strings(["▁", "\\n", "Die", " Die", " Stadt", " "])
>>> sentencepiece = {"Die Stadt ": [3, 4, 5], "\\n": [0, 1], "\\nDie Stadt ": [0, 1, 2, 4, 5]}
>>> [vocab.token_text(t) for t in as_written(sentencepiece.get, vocab, "Die Stadt ")]
['Die', ' Stadt', ' ']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fsmviz.cache import BoundedCache, bounded
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["BYTE_TOKENS", "as_written", "byte_tokenizer", "greedy_tokens", "lltokenizer"]

Encode = Callable[[str], Sequence[int]]

_BOUNDARY = "\n"
"""What ``as_written`` encodes before a text: a character SentencePiece writes as its own
byte token (``<0x0A>``), after which a word needs no boundary ``▁``."""


def spells(vocab: Vocabulary, ids: Sequence[int], data: bytes) -> bool:
    """Whether the tokens ``ids`` are exactly the bytes ``data`` (a special token, or an id
    past the vocabulary, spells nothing)."""
    table = vocab.all_token_bytes
    return all(0 <= i < len(table) for i in ids) and b"".join(table[i] for i in ids) == data


def as_written(encode: Encode, vocab: Vocabulary, text: str) -> list[int]:
    """``text``'s tokens as a model writes them after other text (see the module
    docstring): ``encode(text)`` when it spells ``text``, else the tokens ``encode`` gives
    it after a newline, without the newline's; else ``encode(text)`` as it is (the caller
    checks what it gets)."""
    ids = list(encode(text))
    data = text.encode("utf-8")
    if not text or spells(vocab, ids, data):
        return ids
    head = list(encode(_BOUNDARY))
    both = list(encode(_BOUNDARY + text))
    if both[: len(head)] == head and spells(vocab, both[len(head) :], data):
        return both[len(head) :]
    return ids


def greedy_tokens(vocab: Vocabulary) -> Callable[[bytes], list[int]]:
    """A tokenizer by greedy longest match over ``vocab``'s ordinary tokens (the lowest id
    among equal spellings); a byte no token spells is skipped.

    >>> greedy = greedy_tokens(Vocabulary.from_strings(["a", "ab", "b", "abc"]))
    >>> greedy(b"abcab"), greedy(b"ax")
    ([3, 1], [0])
    """
    table = vocab.all_token_bytes
    longest = {data: i for i, data in reversed(list(enumerate(table))) if data}
    width = max((len(data) for data in longest), default=1)

    def greedy(text: bytes) -> list[int]:
        out, at = [], 0
        while at < len(text):
            for end in range(min(len(text), at + width), at, -1):
                if text[at:end] in longest:
                    out.append(longest[text[at:end]])
                    at = end
                    break
            else:
                at += 1  # a byte no token spells: llguidance will not force it
        return out

    return greedy


_TOKENIZERS: BoundedCache[Any] = BoundedCache(maxsize=4)


def lltokenizer(vocab: Vocabulary, encode: Encode | None = None) -> Any:
    """llguidance's ``LLTokenizer`` over ``vocab``'s bytes. ``encode`` (text -> ids; the
    model's own tokenizer, text only) tokenizes the text llguidance forces, as written
    mid-text (``as_written``); without it, or where its tokens do not spell the text, a
    greedy longest match over the vocabulary stands in. Kept per vocabulary."""
    key = (vocab.fingerprint, encode is not None)
    return _TOKENIZERS.get_or_build(key, lambda: _build(vocab, encode))


def _build(vocab: Vocabulary, encode: Encode | None) -> Any:
    import llguidance

    tokens = list(vocab.all_token_bytes)
    special = [i for i, data in enumerate(tokens) if not data]
    for i in special:  # llguidance marks special tokens with a leading 0xFF byte
        tokens[i] = b"\xff" + vocab.token_text(i).encode("utf-8", errors="replace")
    greedy = greedy_tokens(vocab)

    class Source:
        eos_token_id = vocab.eos_token_id
        bos_token_id = None
        special_token_ids = special

        def __init__(self) -> None:
            self.tokens = tokens

        def __call__(self, text: bytes) -> list[int]:
            if encode is not None:
                try:
                    ids = as_written(encode, vocab, text.decode("utf-8"))
                except UnicodeDecodeError:
                    ids = []
                if spells(vocab, ids, text):
                    return ids
            # The tokenizer's answer does not spell ``text`` (``<|im_end|>`` read as the
            # control token, whose table entry is its 0xFF mark): ordinary tokens instead.
            return greedy(text)

    return llguidance.LLTokenizer(llguidance.TokenizerWrapper(Source()))


class _Bytes:
    """A vocabulary of the 256 bytes and an end token (256), for ``TokenizerWrapper``."""

    eos_token_id = 256
    bos_token_id = None
    tokens = [bytes([b]) for b in range(256)] + [b"<end>"]
    special_token_ids = [256]

    def __call__(self, text: bytes) -> list[int]:
        return list(text)


BYTE_TOKENS: tuple[bytes, ...] = tuple(_Bytes.tokens)
"""The single-byte vocabulary's tokens: byte ``b`` is token ``b``, the end token is 256."""


@bounded(maxsize=1)
def byte_tokenizer() -> Any:
    """llguidance's tokenizer over single bytes: ``LLMatcher`` then checks text byte by byte."""
    import llguidance

    return llguidance.LLTokenizer(llguidance.TokenizerWrapper(_Bytes()))
