"""``TokenIndex.bitmask``: the allowed set packed as the peers pack it, bit for bit equal to
``allowed_tokens`` (EOS at accepting states included), on toy vocabularies and the real
49k one; and the masks generation applies from it (``fsmviz.generation.masks``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fsmviz import Vocabulary, build_index
from fsmviz.generation.masks import (
    allowed_bitmask,
    apply_bitmask,
    safe_end_tokens,
    unpack,
    unpack_on,
)
from fsmviz.tokens.index import packed

TOY_CASES = [
    (["a", ".", ".2", "1"], r"[0-9]+\.[0-9]+"),
    (["a", "b", "ab", "ba", "c"], "a(b|c)*"),
    (["x"] * 0 + [chr(0x61 + i) for i in range(26)] + ["ab", "abc", "zz"], "[a-m]{1,3}"),
    ([str(i) for i in range(40)], "1[0-9]*|2"),  # 41 tokens with EOS: two words
    (["é", "\u00e9t", "e", "t", "\u00e9\u00e9"], "(é|t)+"),
]


def from_bits(words: np.ndarray, size: int) -> np.ndarray:
    """The ids whose bit is set, read one bit at a time (the peers' definition)."""
    return np.array(
        [i for i in range(size) if (int(words[i // 32]) >> (i % 32)) & 1], dtype=np.int64
    )


def assert_equal_everywhere(index) -> None:
    size = len(index.vocab)
    for state in index.states:
        words = index.bitmask(state)
        assert words.dtype == np.int32 and words.shape == (-(-size // 32),)
        assert not words.flags.writeable
        assert np.array_equal(from_bits(words, size), index.allowed_tokens(state)), state
        eos = index.vocab.eos_token_id
        assert bool((words[eos // 32] >> (eos % 32)) & 1) == index.is_accepting(state)


@pytest.mark.parametrize(("tokens", "pattern"), TOY_CASES)
def test_bitmask_is_allowed_tokens_bit_for_bit_on_toy_vocabularies(tokens, pattern) -> None:
    vocab = Vocabulary.from_strings(tokens, eos_token="</s>")
    assert_equal_everywhere(build_index(pattern, vocab))


def test_a_bitmask_is_made_once_per_state_and_kept() -> None:
    vocab = Vocabulary.from_strings(["a", "b", "ab"], eos_token="</s>")
    index = build_index("(ab)+c?", vocab)
    assert index.bitmask(0) is index.bitmask(0)


def test_the_sign_bit_is_token_31() -> None:
    """Bit 31 of a word makes the int32 negative, as in the peers' masks."""
    assert packed(np.array([31]), 32).tolist() == [-(2**31)]
    assert from_bits(packed(np.array([31, 63]), 64), 64).tolist() == [31, 63]


@pytest.mark.slow
@pytest.mark.parametrize(
    "pattern",
    [
        r"[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?",
        r'[a-z_]+="[^"]*"(, [a-z_]+="[^"]*")*',
        r"([a-z]{2,5}[0-9]{1,3}){2,3}",
        r"(yes|no|maybe)",
        "東京|大阪",
    ],
)
def test_bitmask_is_allowed_tokens_on_the_real_vocabulary(bundled_vocab, pattern) -> None:
    assert_equal_everywhere(build_index(pattern, bundled_vocab))


@pytest.mark.slow
def test_the_bitmask_is_what_the_peers_fill(bundled_vocab) -> None:
    """Same layout as llguidance's ``fill_next_token_bitmask``, word for word."""
    import llguidance
    import llguidance.numpy

    from bench.index_bench import _Wrapped, bundled_tokenizer

    pattern = r"(yes|no|maybe), [0-9]{2}"
    tokenizer = llguidance.LLTokenizer(
        llguidance.TokenizerWrapper(_Wrapped(bundled_vocab, bundled_tokenizer()))
    )
    matcher = llguidance.LLMatcher(tokenizer, llguidance.LLMatcher.grammar_from_regex(pattern))
    theirs = llguidance.numpy.allocate_token_bitmask(1, len(bundled_vocab))
    llguidance.numpy.fill_next_token_bitmask(matcher, theirs)
    index = build_index(pattern, bundled_vocab)
    assert np.array_equal(index.bitmask(index.initial_state), theirs[0])


def test_unpacking_on_the_host_and_on_a_device_agree() -> None:
    rng = np.random.default_rng(0)
    for size in (1, 31, 32, 33, 100):
        tokens = np.flatnonzero(rng.random(size) < 0.4)
        words = packed(tokens, size)
        expected = np.zeros(size + 7, dtype=bool)
        expected[tokens] = True
        assert np.array_equal(unpack(words, size + 7), expected)  # a wider output layer
        assert np.array_equal(unpack_on(torch.from_numpy(words.copy()), size + 7), expected)
        scores = torch.arange(size + 7, dtype=torch.float32)
        masked = apply_bitmask(scores, torch.from_numpy(words.copy()))
        assert torch.equal(torch.isfinite(masked), torch.from_numpy(expected))
        assert torch.equal(masked[expected], scores[expected])


def test_the_safe_end_keeps_only_tokens_that_finish_in_time() -> None:
    vocab = Vocabulary.from_strings(["a", "b", "ab", "c"], eos_token="</s>")
    index = build_index("(ab)+c?", vocab)
    ids = {vocab.token_bytes(i): i for i in range(len(vocab))}
    ab, eos = ids[b"ab"], vocab.eos_token_id
    assert safe_end_tokens(index, 0, 1).tolist() == [ab]
    assert safe_end_tokens(index, 0, 5) is None
    after = index.next_state(0, ab)
    assert index.is_accepting(after)
    # One token left after "ab": "a" would start a pair it cannot finish; EOS and "c" stay.
    left_one = set(safe_end_tokens(index, after, 1).tolist())
    assert left_one == {ab, ids[b"c"], eos}
    assert np.array_equal(from_bits(allowed_bitmask(index, after, 1), len(vocab)), sorted(left_one))
    assert allowed_bitmask(index, after, 9) is index.bitmask(after)
