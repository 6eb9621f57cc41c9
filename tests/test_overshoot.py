"""Overshoot tokens (seed 002) held to the naive definition, and the decoding options that
use them: after the bytes P, token t is an overshoot token iff the oracle does not allow
it and some proper prefix t[:k] (k >= 1) makes P + t[:k] a full match; the cut keeps the
longest such k."""

from __future__ import annotations

import pytest
from oracle import full_match_bytes, oracle_allowed, vocab_token_bytes

from fsmviz import Vocabulary, build_index
from fsmviz.tokens.overshoot import overshoot


def oracle_overshoot(pattern: str, vocab, prefix: bytes) -> dict[int, int]:
    """{token id: bytes kept} by trying every proper prefix of every token."""
    allowed = oracle_allowed(pattern, vocab, prefix)
    found = {}
    for i, data in enumerate(vocab_token_bytes(vocab)):
        if i == vocab.eos_token_id or not data or i in allowed:
            continue
        kept = [k for k in range(1, len(data)) if full_match_bytes(pattern, prefix + data[:k])]
        if kept:
            found[i] = max(kept)
    return found


def engine_overshoot(index, state) -> dict[int, int]:
    found = overshoot(index, state)
    return {int(t): int(k) for t, k in zip(found.tokens, found.kept, strict=True)}


def byte_vocab(tokens: list[bytes]) -> Vocabulary:
    """A toy vocabulary of raw byte strings (tokens may split characters); EOS last."""
    return Vocabulary("toy-bytes", (*tokens, b""), len(tokens), {len(tokens): "<eos>"})


ASCII = Vocabulary.from_strings(
    [*"0123456789.,ab@c -", "0,", "00", "7.", ".0", "0.5,", "ab.", "c.", ".c ", "a@b", "9 ", "-1"]
)
UTF8 = byte_vocab(
    [b"a", b"b", "東".encode(), "京".encode(), b"\xe6\x9d", b"\xb1", b"\xb1a", "東,".encode(),
     "京x".encode(), b"\xe4", b"\xba\xac", b"\xba\xac!", b",", b"x"]
)  # fmt: skip
CASES = [
    (ASCII, r"[0-9]+\.[0-9]+"),
    (ASCII, r"[0-9]+"),
    (ASCII, r"-?[0-9]+(\.[0-9]+)?"),
    (ASCII, r"[a-c.]+@[a-c]+\.c"),
    (ASCII, r"(ab|ab\.c)"),
    (ASCII, r"[0-9]{1,2}"),
    (UTF8, r"東京?"),
    (UTF8, r"(東|京)+a?"),
    (UTF8, r"[a東]+"),
]


def reachable(index, vocab, depth: int) -> list[tuple[bytes, int]]:
    """Every (prefix, state) the index reaches in at most ``depth`` tokens."""
    out, frontier, data = [(b"", index.initial_state)], [(b"", index.initial_state)], None
    data = vocab_token_bytes(vocab)
    for _ in range(depth):
        nxt = []
        for prefix, state in frontier:
            for t in index.allowed_tokens(state):
                if int(t) != vocab.eos_token_id:
                    nxt.append((prefix + data[int(t)], index.next_state(state, int(t))))
        frontier = nxt
        out += nxt
    return out


@pytest.mark.parametrize("vocab,pattern", CASES, ids=[p for _, p in CASES])
def test_overshoot_tokens_equal_the_naive_definition(vocab, pattern: str) -> None:
    index = build_index(pattern, vocab)
    compared = 0
    for prefix, state in reachable(index, vocab, 3)[:400]:
        assert engine_overshoot(index, state) == oracle_overshoot(pattern, vocab, prefix), (
            f"{pattern!r} after {prefix!r}"
        )
        compared += 1
    assert compared > 3


@pytest.mark.parametrize("vocab,pattern", CASES, ids=[p for _, p in CASES])
def test_an_overshoot_cut_lands_on_an_accepting_state(vocab, pattern: str) -> None:
    index = build_index(pattern, vocab)
    data = vocab_token_bytes(vocab)
    for prefix, state in reachable(index, vocab, 2):
        found = overshoot(index, state)
        for t, k, target in zip(found.tokens, found.kept, found.targets, strict=True):
            assert index.is_accepting(int(target))
            assert index.byte_dfa.run(data[int(t)][: int(k)], state) == int(target)
            assert full_match_bytes(pattern, prefix + data[int(t)][: int(k)])


def test_the_seed_float_example_takes_zero_comma() -> None:
    """Seed 002: after ``27.0``, ``0,`` completes the number and its comma is cut."""
    index = build_index(r"[0-9]+\.[0-9]+", ASCII)
    state = index.byte_dfa.run(b"27.0", index.initial_state)
    comma = ASCII.all_token_bytes.index(b"0,")
    assert overshoot(index, state).find(comma) == (1, state)  # "0" kept: 27.00 accepts too


@pytest.mark.slow
def test_overshoot_on_the_real_vocabulary_equals_the_naive_definition(bundled_vocab) -> None:
    email = r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+[a-zA-Z0-9]"
    for pattern, prefix in ((email, b"ian.swannack@gmail.co"), (r"[0-9]+\.[0-9]+", b"27.0")):
        index = build_index(pattern, bundled_vocab)
        state = index.byte_dfa.run(prefix, index.initial_state)
        got = engine_overshoot(index, state)
        assert got == oracle_overshoot(pattern, bundled_vocab, prefix)
        if pattern == email:
            assert got  # e.g. "m" then a character outside the pattern: the address ends
