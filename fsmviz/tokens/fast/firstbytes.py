"""A state from whose bytes few tokens begin: those tokens walked one by one.

What it answers: the packed mask of a state that reads many bytes of which few tokens
begin (inside a UTF-8 character: the 74 tokens that begin with a continuation byte),
from ``PackedVocab.light`` (``packwalk``: by first byte, each token beginning with it, made
once per vocabulary), each token's bytes read in plain Python; no words, no frontier.
"""

from __future__ import annotations

import numpy as np

from fsmviz.automaton.dfa import set_bits
from fsmviz.tokens.fast.packwalk import FEW_FIRST, PackedVocab
from fsmviz.tokens.trie import VocabTrie

__all__ = ["few_first_words"]


FIRST_BYTES = 16
"""A state reading at least ``FIRST_BYTES`` bytes from which at most ``FEW_FIRST`` tokens
begin is walked token by token (``few_first_words``); a narrower one (a key's next letter,
a digit) is left to ``rowwalk.small_row``, whose walk over the trie drops a dead subtree
at once (also where its loop is closed, ``ascii_closed_words``: ten digits' tokens walked
cost less than the words of 246 bytes left out; not where it reads a busy byte, as
``\\s+``'s loop)."""


def few_first_words(
    vocab: PackedVocab, trie: VocabTrie, table: np.ndarray, state: int, reads: int
) -> np.ndarray | None:
    """The packed words (uint32, read-only) of the tokens allowed from ``state`` (``reads``:
    the bytes it reads, 256 bits), where it reads at least ``FIRST_BYTES`` bytes and at
    most ``FEW_FIRST`` tokens begin with one of them; else None. Inside a UTF-8 character
    (``.``, ``\\S``, ``[^ ]``: a state reading the 64 continuation bytes) 74 of 49,152
    tokens begin so, where its chain's words and frontier cost ~0.1-0.3 ms: each is
    walked in plain Python (``table.item``), nothing else (~20-60 µs). A state reading a
    byte that alone begins more (``PackedVocab.busy``) is refused at once (~1 µs)."""
    if reads & vocab.busy or reads.bit_count() < FIRST_BYTES:
        return None
    bytes_read = list(set_bits(reads))
    if sum(vocab.root_span[byte] for byte in bytes_read) > FEW_FIRST:
        return None
    found: dict[int, int] = {}
    row, step = table[state].tolist(), table.item
    for byte in bytes_read:
        for token, tail in vocab.light[byte]:
            at = row[byte]
            for later in tail:
                at = step(at, later)
                if at < 0:
                    break
            else:
                found[token >> 5] = found.get(token >> 5, 0) | 1 << (token & 31)
    words = np.zeros_like(vocab.shorter[-1])
    words[list(found)] = list(found.values())
    words.flags.writeable = False
    return words
