"""A language model's vocabulary, seen as raw bytes.

Why bytes and not strings? A regex (and the FSM compiled from it) reads text one character at
a time, but a language model writes text one *token* at a time, and tokens do not respect
character boundaries. SmolLM2 spells "日本" as three tokens::

    b"\\xe6\\x97"   b"\\xa5"   b"\\xe6\\x9c\\xac"
    (日 = e6 97 a5, 本 = e6 9c ac)

The first two are not valid UTF-8 on their own; only their concatenation is. So an FSM index
that decides which tokens may come next has to walk the regex automaton over the *bytes* of
each token (with the automaton itself working on UTF-8 bytes). This module turns any Hugging
Face tokenizer into exactly that: a table ``id -> bytes``.

Tokenizers store their pieces in one of two spellings, which we undo:

* **Byte-level BPE** (GPT-2, SmolLM2, Llama 3, Qwen): every byte is mapped to a printable
  stand-in character (GPT-2's ``bytes_to_unicode``: a space becomes ``Ġ``, a newline ``Ċ``).
  The piece ``"Ġthe"`` is the bytes ``b" the"``; we invert the table character by character.
* **SentencePiece** (Llama 2, Mistral, Gemma): ``▁`` stands for a space, and with *byte
  fallback* pieces like ``<0x0A>`` stand for one raw byte (here a newline).

Special tokens (``<|im_end|>``, ``<|im_start|>`` ...) are control signals, not text: their
bytes are ``b""`` and a constrained generator never emits them, except EOS, which ends the
text once the FSM is in an accepting state. So are tokens a tokenizer adds *without*
calling them special when they are spelled as control tokens (Phi-3's ``</s>``, Qwen2's
290 ``[PAD151646]``...: padding slots no model was trained to write); an added token
spelled as text (Qwen2's ``<tool_call>``) stays text, its bytes its spelling.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from fsmviz.cache import OwnedCache, bounded
from fsmviz.errors import InputError

__all__ = ["Vocabulary"]

#: A SentencePiece byte-fallback piece: ``<0x0A>`` is the single byte 0x0A.
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")

#: How a control token is spelled: a name between ``<|`` and ``>`` or ``<`` and ``|>``
#: (ChatML, Llama 3, Phi-3, Gemma 4's ``<|tool_call>``), SentencePiece's own control pieces
#: (``</s>``), or a padding, unused or reserved slot (Qwen2's ``[PAD151646]``, Gemma's
#: ``<unused12>``, T5's ``<extra_id_0>``). Some tokenizers add such tokens without calling them
#: special; ``Vocabulary.from_tokenizer`` treats them as control tokens all the same.
_PADDING_SLOT = re.compile(r"\[PAD\d+\]")
"""What llama.cpp's converter writes for an id the original vocabulary leaves empty (Phi-3's
``[PAD32011]`` to ``[PAD32063]``): transformers reads them back as ordinary pieces."""

_CONTROL_SPELLING = re.compile(
    r"<\|[^<>\s]*>|<[^<>\s]*\|>"
    r"|</?s>|<(?:unk|pad|mask|bos|eos|cls|sep)>"
    r"|[<\[](?:PAD|pad|unused|UNUSED|reserved|placeholder|extra_id)[\w-]*[>\]]"
)


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """An immutable table from token id to the raw bytes that token stands for.

    Build one with :meth:`bundled`, :meth:`from_tokenizer` or :meth:`from_strings`.
    Two vocabularies are equal when their :attr:`fingerprint` is equal (same bytes for every
    id, same EOS id, same size); the name does not matter.

    Note for FSM indexes: a token whose bytes are ``b""`` (a special token, an unused id, or
    an empty toy string) does not move the automaton, so allowing it would let a generator
    loop forever. Never allow such tokens, except EOS in an accepting state.
    """

    #: A display name, e.g. ``"SmolLM2-135M-Instruct"`` or ``"toy"``.
    name: str
    #: The bytes of every token; the index is the token id. Special tokens are ``b""``.
    all_token_bytes: tuple[bytes, ...] = field(repr=False)
    #: The id of the end-of-sequence token (also special, with bytes ``b""``).
    eos_token_id: int
    #: Special token ids -> their names (e.g. ``2 -> "<|im_end|>"``), used for display.
    special_tokens: Mapping[int, str] = field(repr=False)

    def __post_init__(self) -> None:
        size = len(self.all_token_bytes)
        if not 0 <= self.eos_token_id < size:
            raise InputError(f"eos_token_id {self.eos_token_id} is outside 0..{size - 1}")
        if self.eos_token_id not in self.special_tokens:
            raise InputError("the EOS token must be one of the special tokens")
        for i in self.special_tokens:
            if not 0 <= i < size:
                raise InputError(f"special token id {i} is outside 0..{size - 1}")
            if self.all_token_bytes[i] != b"":
                raise InputError(f"special token {i} must have the bytes b''")
        # Freeze the mapping so that nobody can change it behind our back.
        frozen = MappingProxyType(dict(self.special_tokens))
        object.__setattr__(self, "special_tokens", frozen)

    # ------------------------------------------------------------------ constructors

    @staticmethod
    def bundled() -> Vocabulary:
        """The vocabulary of the bundled SmolLM2-135M-Instruct tokenizer (offline).

        49,152 tokens, EOS ``<|im_end|>`` = id 2. The first call in a process loads the
        tokenizer: about 0.4 s from the cache (plus about 2 s to import transformers'
        tokenizer code if nothing imported it yet), or about 5 s more on the very first run,
        when it is converted from the GGUF file (see :mod:`fsmviz.bundled`). Later calls
        return the same object at once.

        Beware: SmolLM2 has no token at all containing the bytes 0x04, 0x06, 0x13, 0x14,
        0x16, 0x1D, 0xF1 or 0xF2 (nor 0xC0, 0xC1, 0xF5-0xFF, which UTF-8 never uses), and its
        tokenizer silently drops them. Text with those control characters or with characters
        U+40000..U+BFFFF cannot be generated.
        """
        return _bundled_vocabulary()

    @classmethod
    def from_tokenizer(
        cls,
        tokenizer: Any,
        eos_token_id: int | None = None,
        name: str | None = None,
    ) -> Vocabulary:
        """Build the byte table of any Hugging Face tokenizer.

        Args:
            tokenizer: a ``transformers`` tokenizer (fast ones are read exactly; slow ones
                without a Rust backend fall back to ``convert_tokens_to_string``).
            eos_token_id: the EOS id; defaults to ``tokenizer.eos_token_id``.
            name: a display name; defaults to ``tokenizer.name_or_path`` (or ``"tokenizer"``).

        Raises:
            ValueError: if no EOS id is given and the tokenizer has none.

        Built once per tokenizer object (and size, EOS and name) among the last few: a
        262k vocabulary takes seconds to read, and ``load_model``, the server and the
        page each asked for it (``_read_tokenizer`` does the reading).
        """
        key = (cls, len(tokenizer), eos_token_id, name)
        return _FROM_TOKENIZER.get_or_build(
            tokenizer, key, lambda: cls._read_tokenizer(tokenizer, eos_token_id, name)
        )

    @classmethod
    def _read_tokenizer(
        cls, tokenizer: Any, eos_token_id: int | None, name: str | None
    ) -> Vocabulary:
        """``from_tokenizer``'s work: every token's bytes."""
        if eos_token_id is None:
            eos_token_id = tokenizer.eos_token_id
        if eos_token_id is None:
            raise InputError("the tokenizer has no eos_token_id; pass eos_token_id= explicitly")
        eos_token_id = int(eos_token_id)

        added: dict[int, Any] = dict(getattr(tokenizer, "added_tokens_decoder", {}) or {})
        vocab_ids = tokenizer.get_vocab().values()
        max_id = max([*vocab_ids, *added, *tokenizer.all_special_ids, eos_token_id])
        size = max(len(tokenizer), max_id + 1)

        pieces = tokenizer.convert_ids_to_tokens(list(range(size)))
        decode_piece = _piece_decoder(tokenizer)

        special: dict[int, str] = {}
        for i, token in added.items():
            if getattr(token, "special", False) or _CONTROL_SPELLING.fullmatch(str(token.content)):
                special[int(i)] = str(token.content)
        for i in tokenizer.all_special_ids:
            if int(i) not in special:
                special[int(i)] = pieces[i] if pieces[i] is not None else f"<special {i}>"
        if eos_token_id not in special:
            eos_piece = pieces[eos_token_id]
            special[eos_token_id] = eos_piece if eos_piece is not None else "<eos>"

        table: list[bytes] = []
        for i, piece in enumerate(pieces):
            if i in special or piece is None:
                table.append(b"")
            elif piece[:4] == "[PAD" and _PADDING_SLOT.fullmatch(piece):
                special[i] = piece
                table.append(b"")
            elif i in added:
                # A non-special added token spelled as text (Qwen2's ``<tool_call>``) is
                # matched literally in the text: its bytes are its text.
                table.append(str(added[i].content).encode("utf-8"))
            else:
                table.append(decode_piece(piece))

        if name is None:
            name = str(getattr(tokenizer, "name_or_path", "") or "tokenizer")
        return cls(name, tuple(table), eos_token_id, special)

    @classmethod
    def from_strings(cls, tokens: Iterable[str], eos_token: str = "<eos>") -> Vocabulary:
        """A toy vocabulary for tests and examples: token ``i`` is ``tokens[i].encode()``.

        The EOS token is appended as the last id, or, if ``eos_token`` is already in
        ``tokens``, its first occurrence is used. Either way its bytes are ``b""``.

        >>> v = Vocabulary.from_strings(["a", ".", ".2", "1"])
        >>> len(v), v.eos_token_id, v.token_bytes(2)
        (5, 4, b'.2')
        """
        strings = list(tokens)
        if isinstance(tokens, str) or not all(isinstance(s, str) for s in strings):
            raise InputError("from_strings takes a list of token strings, e.g. ['a', '.', '.2']")
        if not [s for s in strings if s != eos_token]:
            raise InputError("a toy vocabulary needs at least one token besides EOS")
        if "" in strings and eos_token != "":
            raise InputError(
                f"token {strings.index('')} is empty: every token but EOS must hold at least "
                "one character (an empty token could be written forever)"
            )
        if eos_token in strings:
            eos_id = strings.index(eos_token)
        else:
            eos_id = len(strings)
            strings.append(eos_token)
        table = tuple(b"" if i == eos_id else s.encode("utf-8") for i, s in enumerate(strings))
        return cls("toy", table, eos_id, {eos_id: eos_token})

    # ------------------------------------------------------------------ queries

    def __len__(self) -> int:
        return len(self.all_token_bytes)

    def token_bytes(self, token_id: int) -> bytes:
        """The raw bytes of token ``token_id`` (``b""`` for special tokens)."""
        return self.all_token_bytes[token_id]

    def token_text(self, token_id: int) -> str:
        """A printable form of a token, for display (never for matching).

        Special tokens show their name (``"<|im_end|>"``). Other tokens are decoded as UTF-8;
        bytes that are not valid UTF-8 on their own (a token holding half of "日") are shown
        as escapes like ``\\xe6``.
        """
        name = self.special_tokens.get(token_id)
        if name is not None:
            return name
        return self.all_token_bytes[token_id].decode("utf-8", errors="backslashreplace")

    def is_special(self, token_id: int) -> bool:
        """True for control tokens (EOS included): bytes ``b""``, not text."""
        return token_id in self.special_tokens

    @functools.cached_property
    def fingerprint(self) -> str:
        """A SHA-256 hex digest of the size, the EOS id and every token's bytes (with lengths).

        Two vocabularies with the same fingerprint produce the same FSM index, so indexes can
        be cached under it. Computed once per object.
        """
        digest = hashlib.sha256()
        digest.update(b"fsmviz-vocabulary-v1\0")
        digest.update(len(self).to_bytes(8, "little"))
        digest.update(self.eos_token_id.to_bytes(8, "little"))
        for token in self.all_token_bytes:
            digest.update(len(token).to_bytes(4, "little"))
            digest.update(token)
        return digest.hexdigest()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocabulary):
            return NotImplemented
        return self is other or self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return (
            f"Vocabulary(name={self.name!r}, size={len(self)}, "
            f"eos_token_id={self.eos_token_id}, special={len(self.special_tokens)})"
        )


# ---------------------------------------------------------------------- decoding schemes


@bounded(maxsize=1)
def _byte_decoder() -> Mapping[str, int]:
    """GPT-2's ``bytes_to_unicode`` table, inverted: stand-in character -> byte."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return MappingProxyType({char: byte for byte, char in bytes_to_unicode().items()})


def _decoder_config(tokenizer: Any) -> dict[str, Any] | None:
    """The ``decoder`` section of the tokenizer's ``tokenizer.json``, or None if unknown."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    # Fast path: serialise only the decoder (its pickle state is its JSON), which is much
    # cheaper than serialising the whole tokenizer with its 49k-entry vocabulary (~0.13 s).
    try:
        decoder = json.loads(backend.decoder.__getstate__())
    except Exception:
        try:
            decoder = json.loads(backend.to_str()).get("decoder")
        except (AttributeError, TypeError, ValueError):
            return None
    return decoder if isinstance(decoder, dict) else None


def _flatten(decoder: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The steps of a decoder, with nested ``Sequence`` decoders unpacked."""
    if decoder.get("type") == "Sequence":
        return [step for inner in decoder.get("decoders", []) for step in _flatten(inner)]
    return [decoder]


def _piece_decoder(tokenizer: Any) -> Any:
    """Pick the function that turns one vocabulary piece (a str) into its bytes."""
    config = _decoder_config(tokenizer)
    if config is not None:
        steps = _flatten(config)
        kinds = {step.get("type") for step in steps}
        if "ByteLevel" in kinds:
            return _decode_byte_level
        replacements: list[tuple[str, str]] = []
        for step in steps:
            if step.get("type") == "Replace" and "String" in step.get("pattern", {}):
                replacements.append((step["pattern"]["String"], step.get("content", "")))
            elif step.get("type") == "Metaspace":
                replacements.append((step.get("replacement", "▁"), " "))
        if replacements or "ByteFallback" in kinds:
            return functools.partial(
                _decode_sentencepiece,
                replacements=tuple(replacements),
                byte_fallback="ByteFallback" in kinds,
            )
    elif hasattr(tokenizer, "byte_encoder"):
        # A slow GPT-2 style tokenizer: same byte-level scheme, no Rust backend.
        return _decode_byte_level

    # Unknown scheme (e.g. WordPiece): ask the tokenizer to spell the piece on its own.
    # Good enough for display; word-boundary markers like "##" may be lost.
    def decode_with_tokenizer(piece: str) -> bytes:
        return str(tokenizer.convert_tokens_to_string([piece])).encode("utf-8")

    return decode_with_tokenizer


@bounded(maxsize=1)
def _byte_translation() -> Mapping[int, str]:
    """For ``str.translate``: each stand-in character to the Latin-1 character of its byte,
    so that ``.encode("latin-1")`` spells the piece in C (10x a loop over its characters,
    seconds at 152k tokens). A character under U+0100 that is no stand-in (a raw ``\\n``)
    becomes itself and U+FFFF, which Latin-1 refuses: such a piece takes the loop."""
    table: dict[int, str] = {code: chr(code) + "\uffff" for code in range(256)}
    table.update({ord(char): chr(byte) for char, byte in _byte_decoder().items()})
    return MappingProxyType(table)


def _decode_byte_level(piece: str) -> bytes:
    """``"ĠcafÃ©"`` -> ``b" caf\\xc3\\xa9"``: undo GPT-2's byte-to-character mapping."""
    try:
        return piece.translate(_byte_translation()).encode("latin-1")
    except UnicodeEncodeError:  # a character that is no stand-in: kept as UTF-8 text
        pass
    table = _byte_decoder()
    out = bytearray()
    for char in piece:
        byte = table.get(char)
        if byte is None:  # not a stand-in character: keep it as UTF-8 text
            out += char.encode("utf-8")
        else:
            out.append(byte)
    return bytes(out)


def _decode_sentencepiece(
    piece: str, replacements: tuple[tuple[str, str], ...], byte_fallback: bool
) -> bytes:
    """``"▁the"`` -> ``b" the"``; with byte fallback, ``"<0x0A>"`` -> ``b"\\n"``."""
    if byte_fallback:
        match = _BYTE_PIECE.fullmatch(piece)
        if match:
            return bytes([int(match.group(1), 16)])
    for old, new in replacements:
        piece = piece.replace(old, new)
    return piece.encode("utf-8")


# ---------------------------------------------------------------------- bundled vocabulary


_FROM_TOKENIZER: OwnedCache[Vocabulary] = OwnedCache(maxsize=4)
"""``Vocabulary.from_tokenizer``'s, with the tokenizer each was read from."""


@bounded(maxsize=1)
def _bundled_vocabulary() -> Vocabulary:
    # The fast tokenizer's own class, which is what AutoTokenizer answers for this folder:
    # AutoTokenizer first reads the model's configuration, and transformers' configuration
    # code imports torch (~3.5 CPU-s), which `python -m fsmviz first` and `dfa` never need.
    from transformers import PreTrainedTokenizerFast

    from fsmviz.bundled import BUNDLED_MODEL_NAME, bundled_tokenizer_dir

    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(bundled_tokenizer_dir()))
    return Vocabulary.from_tokenizer(tokenizer, name=BUNDLED_MODEL_NAME)
