"""``bitmask`` on a loop over every character past ASCII (``closedsets.looped_words``):
each state's mask is the packed ``allowed_tokens`` of a fresh index (its row's walk), on
the real vocabulary and on a toy one whose tokens start or end inside a character."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz.tokens import index as index_module
from fsmviz.tokens.fast.closedsets import _row_reads, looped_words, utf8_loop
from fsmviz.tokens.fast.levelwalk import loop_tokens
from fsmviz.tokens.fast.packwalk import _ASCII_BYTES, packed_vocab
from tests.test_levelwalk import answers_of

PATTERNS = [
    r"[^=]+",
    r".+",
    r"[^/]*x",
    r"a[^:]+b",
    r"[^/]*/a",  # the loop's bytes lead out too: refused
    r"[^=é]+",  # not every character past ASCII: refused
    r"[^=\x80-\x9f]+",  # every one but the C1 controls (a JSON string's): kind 2
    r"[^=\x80-\x9e]+",  # all but some C1 controls: refused
    r"a[^=]*|é",  # its start's ``a`` leads into the loop, not its ``é``: refused there
    r"[^ ]+",
    r"(?:[^=]+)" + "()" * 3,
]
ANSWERS = {r"[^=]+", r".+", r"[^ ]+", r"(?:[^=]+)" + "()" * 3, r"a[^=]*|é", r"[^=\x80-\x9f]+"}
"""The patterns where the shortcut answers some state (``a[^=]*|é``: its loop, not its
start); on the others it must refuse every state."""


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _toy() -> Vocabulary:
    """Every ASCII character and pairs of them (more than ``FEW_FIRST`` begin the loop's
    bytes: else ``few_first_words`` answers first), whole characters of 2-4 bytes, their
    cut beginnings and ends (a continuation byte first), and bytes no UTF-8 spells."""
    chars = [chr(c) for c in range(1, 128)] + ["é", "ß", "€", "中", "文", "😀", "\u0085"]
    pieces = {c.encode() for c in chars}
    pieces |= {(a + b).encode() for a in "ab=/: x\n" + _LETTERS for b in "é€😀a=:"}
    for c in chars[127:]:
        whole = c.encode()
        pieces |= {whole[:k] for k in range(1, len(whole))} | {
            whole[k:] for k in range(1, len(whole))
        }
        pieces |= {b"a" + whole[:-1], whole + b"=", b"x" + whole}
    pieces |= {b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"a\xfe"}
    tokens = sorted(pieces)
    return Vocabulary("toy-utf8-loop", (*tokens, b""), len(tokens), {len(tokens): "<eos>"})


def _check(pattern: str, vocab: Vocabulary, monkeypatch) -> None:
    # its callers turn the loop masks off (``no_loop_masks``): ``.+``'s loop reads as
    # ``.*``'s and would be answered by them first
    answered = answers_of(monkeypatch, index_module, "looped_words")
    built = build_index(pattern, vocab)
    index, plain = (
        index_module.TokenIndex(built.dfa, built.byte_dfa, vocab, built.trie) for _ in range(2)
    )
    for state in index.states:
        expected = index_module.packed(plain.allowed_tokens(state), len(vocab))
        assert np.array_equal(index.bitmask(state), expected), (pattern, state)
    assert any(answered) == (pattern in ANSWERS), pattern


@pytest.mark.parametrize("pattern", PATTERNS)
def test_bitmask_is_allowed_tokens_bundled(pattern, bundled_vocab, monkeypatch, no_loop_masks):
    _check(pattern, bundled_vocab, monkeypatch)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_bitmask_is_allowed_tokens_toy(pattern, monkeypatch, no_loop_masks):
    _check(pattern, _toy(), monkeypatch)


@pytest.mark.parametrize("pattern", [r"[^=]+", r".+", r"[^ ]+", r"a[^=]*|é"])
@pytest.mark.parametrize("which", ["toy", "bundled"])
def test_looped_words_are_loop_tokens(pattern, which, bundled_vocab):
    """The twins agree: where ``looped_words`` answers a loop reading every character past
    ASCII (kind 1), its words are ``levelwalk.loop_tokens`` of the loop's ASCII bytes
    with ``beyond`` (one reads ``PackedVocab``'s words, the other ``Spelt``'s per token)."""
    vocab = _toy() if which == "toy" else bundled_vocab
    built = build_index(pattern, vocab)
    table, packed = built.byte_dfa.table, packed_vocab(built.trie, len(vocab))
    reads = partial(_row_reads, table)
    answered = 0
    for state in range(len(table)):
        found = looped_words(packed, table, state, reads)
        if found is None:
            continue
        loop, words = found
        assert utf8_loop(table, loop, reads) == 1, (pattern, state)
        ids = np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little"))
        expected = loop_tokens(built.trie, reads(loop) & _ASCII_BYTES, True)
        assert ids.tolist() == expected.tolist(), (pattern, state)
        answered += 1
    assert answered, pattern
