"""The token index, held against the naive oracle of the seed article (tests/oracle.py).

A token is allowed after the bytes P exactly when P + token can still become a full match
(``regex.fullmatch(pattern, P + token, partial=True)``, over bytes, with ASCII classes); EOS
exactly when P already is one. See ``oracle.py`` for the precise definition.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numpy as np
import pytest
from oracle import (
    check_state_against_oracle,
    compile_oracle,
    engine_allowed,
    load_seed_cases,
    oracle_allowed,
    oracle_allowed_strings,
    prefix_is_viable,
    split_utf8,
    tail_code_point_ranges,
    walk_against_oracle,
)

from fsmviz import Vocabulary, build_index

SEED_REGEXES: dict[str, str] = load_seed_cases()["regexes"]


def toy_strings(index, vocab: Vocabulary, state) -> set[str]:
    """The allowed tokens at ``state`` as strings, EOS left out."""
    return {
        vocab.token_bytes(i).decode("utf-8")
        for i in engine_allowed(index, state)
        if i != vocab.eos_token_id
    }


def token_id(vocab: Vocabulary, text: str) -> int:
    return vocab.all_token_bytes.index(text.encode("utf-8"))


# ---------------------------------------------------------------------- the oracle itself


def test_oracle_splits_utf8_into_text_and_incomplete_tail() -> None:
    assert split_utf8("a日".encode()) == ("a日", b"")
    assert split_utf8(b"a\xe6\x97") == ("a", b"\xe6\x97")
    assert split_utf8(b"\xf0\x9f\x98") == ("", b"\xf0\x9f\x98")
    for broken in [b"\xa5", b"a\xe6a", b"\xc0", b"\xc1\xbf", b"\xe0\x80", b"\xed\xa0",
                   b"\xf4\x90", b"\xf5", b"\xff", b"\xe6\x97\xa5\xa5"]:  # fmt: skip
        assert split_utf8(broken) is None, broken
    assert tail_code_point_ranges(b"\xed") == [(0xD000, 0xD7FF)]  # surrogates excluded
    assert tail_code_point_ranges(b"\xe0") == [(0x800, 0xFFF)]  # overlong forms excluded
    assert tail_code_point_ranges(b"\xf4\x8f") == [(0x10F000, 0x10FFFF)]


@pytest.mark.parametrize("pattern", ["[一-龥]", "日|本x", "[^日]", ".", "[é-日]x", "a|😀", "\\W"])
@pytest.mark.parametrize("tail", [b"\xe6", b"\xe4", b"\xc3", b"\xe9\xbe", b"\xe9", b"\xf0\x9f"])
def test_oracle_breakpoints_equal_trying_every_code_point(pattern: str, tail: bytes) -> None:
    """Trying a few candidates per tail gives the same answer as trying all of them."""
    compiled = compile_oracle(pattern)
    exhaustive = any(
        compiled.fullmatch(chr(c), partial=True) is not None
        for lo, hi in tail_code_point_ranges(tail)
        for c in range(lo, hi + 1)
    )
    assert prefix_is_viable(pattern, tail) == exhaustive


def test_oracle_works_around_regex_module_negated_class_union() -> None:
    vocab = Vocabulary.from_strings(["a", "b", "x"])
    assert oracle_allowed_strings("[^a]|[^b]", vocab, b"") == {b"a", b"b", b"x"}
    assert oracle_allowed_strings("x[^a]|x[^b]", vocab, b"x") == {b"a", b"b", b"x"}


# ---------------------------------------------------------------------- the seeds' toy examples


def test_seed_000_walk_allows_exactly_the_article_tokens(seed_cases) -> None:
    case = seed_cases["toy_vocabularies"]["seed_000"]
    vocab = Vocabulary.from_strings(case["tokens"], eos_token="<eos>")
    index = build_index(case["regex"], vocab)
    state = index.initial_state
    for taken, expected in case["walk"]:
        if taken:
            state = index.next_state(state, token_id(vocab, taken))
            assert state is not None, f"{taken!r} was allowed but next_state gave None"
        assert toy_strings(index, vocab, state) == set(expected), f"after {taken!r}"


def test_seed_000_article_tokens_agree_with_oracle(seed_cases) -> None:
    """The expected lists in the JSON are the naive algorithm's answers, too."""
    case = seed_cases["toy_vocabularies"]["seed_000"]
    vocab = Vocabulary.from_strings(case["tokens"], eos_token="<eos>")
    prefix = b""
    for taken, expected in case["walk"]:
        prefix += taken.encode()
        got = oracle_allowed_strings(case["regex"], vocab, prefix)
        assert got == {e.encode() for e in expected}


def test_seed_004_empty_output_matches_so_start_accepts(seed_cases) -> None:
    case = seed_cases["toy_vocabularies"]["seed_004"]
    vocab = Vocabulary.from_strings(case["tokens"], eos_token="<eos>")
    index = build_index(case["regex"], vocab)
    start = index.initial_state
    assert toy_strings(index, vocab, start) == set(case["state_0_allowed"])
    assert vocab.eos_token_id in engine_allowed(index, start)
    assert index.is_accepting(start)
    assert index.next_state(start, token_id(vocab, "A")) is None


# ---------------------------------------------------------------------- small exhaustive checks

TOY_ALPHABET = ["a", "b", "c", ".", "0", "1", " ", "\n", "é"]

# Patterns with a known trap each; compared with the oracle on every prefix up to depth 3.
TRICKY_PATTERNS = [
    "a|ab",  # leftmost-first engines stop at "a"; the language does not
    "(a|)b",  # an empty alternative
    "(|a)b",
    "a|",
    "a{2,3}",
    "a{0}b",
    "(ab|a)*c",
    "(a*)*b",
    "[^a]b?",
    ".1",  # the dot is any character but "\n"
    "\\.1",  # an escaped dot is only a dot
    "[.]1",
    "\\d+\\s\\w",  # ASCII classes
    "[a-c]{2}|0+",
    "(a|b)?c?",
    "(hot|cold|hotel)",
    "(123)+",
    "[^a]|[^b]",  # the regex module gets these wrong; the oracle works around it
    "1[^a]|1[^\\n]",
]
TOY_TOKENS = [*TOY_ALPHABET, "ab", "a.", ".1", "00", "abc", "1 a", "hot", "el", "12", "3"]


def compare_every_prefix(pattern: str, vocab: Vocabulary, depth: int) -> int:
    """Compare with the oracle on every state reachable in up to ``depth`` tokens."""
    index = build_index(pattern, vocab)
    frontier = [(index.initial_state, b"")]
    compared = 0
    for level in range(depth + 1):
        following = []
        for state, prefix in frontier:
            allowed = check_state_against_oracle(index, vocab, pattern, state, prefix)
            compared += 1
            if level == depth:
                continue
            for t in sorted(allowed - {vocab.eos_token_id}):
                nxt = index.next_state(state, t)
                assert nxt is not None, f"{pattern!r} {prefix!r}: allowed {t} has no next state"
                following.append((nxt, prefix + vocab.token_bytes(t)))
        frontier = following
    return compared


@pytest.mark.parametrize("pattern", TRICKY_PATTERNS)
def test_tricky_pattern_matches_oracle_on_every_short_prefix(pattern: str) -> None:
    vocab = Vocabulary.from_strings([*TOY_TOKENS, "h", "o", "t", "l", "e", "2", "d"])
    assert compare_every_prefix(pattern, vocab, depth=3) > 0


def test_ascii_classes_do_not_match_other_scripts() -> None:
    """\\d is [0-9], \\w is [A-Za-z0-9_], \\s is ASCII whitespace (as in interegular)."""
    vocab = Vocabulary.from_strings(["1", "٣", "a", "é", " ", "\u00a0", "_"])
    for pattern, yes, no in [("\\d", "1", "٣"), ("\\w", "a", "é"), ("\\s", " ", "\u00a0")]:
        index = build_index(pattern, vocab)
        allowed = toy_strings(index, vocab, index.initial_state)
        assert yes in allowed and no not in allowed, (pattern, allowed)


def test_anchors_mean_nothing() -> None:
    vocab = Vocabulary.from_strings([*TOY_TOKENS, "2", "9"])
    anchored = build_index("^[0-9]+$", vocab)
    plain = build_index("[0-9]+", vocab)
    a, p = anchored.initial_state, plain.initial_state
    for text in ["1", "2", "00", "9"]:
        assert engine_allowed(anchored, a) == engine_allowed(plain, p)
        assert anchored.is_accepting(a) == plain.is_accepting(p)
        t = token_id(vocab, text)
        a, p = anchored.next_state(a, t), plain.next_state(p, t)
        assert a is not None and p is not None
    assert engine_allowed(anchored, a) == engine_allowed(plain, p)
    assert vocab.eos_token_id in engine_allowed(anchored, a)


@pytest.mark.slow
def test_anchors_mean_nothing_with_the_real_vocabulary(bundled_vocab) -> None:
    anchored = build_index("^[0-9]+$", bundled_vocab)
    plain = build_index("[0-9]+", bundled_vocab)
    assert engine_allowed(anchored, anchored.initial_state) == engine_allowed(
        plain, plain.initial_state
    )
    check_state_against_oracle(anchored, bundled_vocab, "[0-9]+", anchored.initial_state, b"")


def test_two_ids_with_the_same_bytes_are_both_allowed() -> None:
    vocab = Vocabulary.from_strings(["1", "a", "1", "12"])
    index = build_index("[0-9]+", vocab)
    start = index.initial_state
    assert engine_allowed(index, start) == {0, 2, 3}
    first, second = index.next_state(start, 0), index.next_state(start, 2)
    assert first is not None and second is not None
    assert engine_allowed(index, first) == engine_allowed(index, second) == {0, 2, 3, 4}


def test_tokens_that_lead_nowhere_with_this_vocabulary_are_refused() -> None:
    """A deliberate difference from the naive oracle (rule 4 of the definition).

    Pattern ``ab`` with tokens ["a", "c"]: "a" is a partial match, so the seeds' naive
    algorithm allows it, but no token can ever add the "b", so generation would be stuck
    after it. The index refuses every token that leads into a state from which acceptance
    is unreachable with this vocabulary's tokens; here that leaves nothing at the start.
    """
    vocab = Vocabulary.from_strings(["a", "c"])
    a = token_id(vocab, "a")
    assert a in oracle_allowed("ab", vocab, b""), "the naive definition allows 'a'"
    index = build_index("ab", vocab)
    start = index.initial_state
    assert engine_allowed(index, start) == set()
    assert index.next_state(start, a) is None
    assert not index.is_accepting(start)

    # The other branch is still open when the vocabulary can finish it.
    vocab = Vocabulary.from_strings(["a", "c", "d"])
    index = build_index("ab|cd", vocab)
    start = index.initial_state
    assert toy_strings(index, vocab, start) == {"c"}
    after_c = index.next_state(start, token_id(vocab, "c"))
    assert toy_strings(index, vocab, after_c) == {"d"}


def test_disallowed_tokens_have_no_next_state() -> None:
    vocab = Vocabulary.from_strings(TOY_TOKENS)
    index = build_index("[0-9]+\\.[0-9]+", vocab)
    start = index.initial_state
    allowed = engine_allowed(index, start)
    for t in range(len(vocab)):
        if t not in allowed and t != vocab.eos_token_id:
            assert index.next_state(start, t) is None, vocab.token_bytes(t)


# ---------------------------------------------------------------------- the real vocabulary

WALKS_PER_REGEX = 2
STEPS_PER_WALK = 8


def random_picker(rng: random.Random, vocab: Vocabulary) -> Callable[[list[int]], int]:
    """Pick uniformly half of the time, else among the longest tokens (walks make progress)."""

    def pick(candidates: list[int]) -> int:
        if rng.random() < 0.5:
            return rng.choice(candidates)
        longest = max(len(vocab.token_bytes(t)) for t in candidates)
        return rng.choice([t for t in candidates if len(vocab.token_bytes(t)) == longest])

    return pick


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SEED_REGEXES))
def test_random_walks_over_real_vocabulary_match_oracle(name: str, bundled_vocab) -> None:
    pattern = SEED_REGEXES[name]
    started = time.perf_counter()
    index = build_index(pattern, bundled_vocab)
    built = time.perf_counter() - started
    compared = 0
    for walk in range(WALKS_PER_REGEX):
        rng = random.Random(f"{name}/{walk}")
        _, _, n = walk_against_oracle(
            index, bundled_vocab, pattern, random_picker(rng, bundled_vocab), STEPS_PER_WALK
        )
        compared += n
    elapsed = time.perf_counter() - started
    print(f"{name}: index {built:.2f} s, {compared} states vs oracle, {elapsed:.2f} s in all")


# Non-ASCII targets: each walked with the real tokenizer's spelling, the greedy longest-match
# spelling and one token per byte (the last one stops inside every multi-byte character).
NON_ASCII_CASES = [
    ("(日本|東京)[0-9]{2}", ["日本42", "東京07"]),
    ("(😀|🎉)+", ["😀🎉😀"]),
    ("café|naïve", ["café", "naïve"]),
    ("[一-龥]{2}", ["中文", "龥一"]),
]


@pytest.fixture(scope="session")
def bundled_tokenizer():
    from transformers import AutoTokenizer

    from fsmviz.bundled import bundled_tokenizer_dir

    return AutoTokenizer.from_pretrained(str(bundled_tokenizer_dir()))


def greedy_spelling(vocab: Vocabulary, data: bytes) -> list[int]:
    """Longest-match tokenization over the vocabulary's bytes (ids of non-special tokens)."""
    by_bytes: dict[bytes, int] = {}
    for i, b in enumerate(vocab.all_token_bytes):
        if b:
            by_bytes.setdefault(b, i)
    longest = max(map(len, by_bytes))
    ids, pos = [], 0
    while pos < len(data):
        for size in range(min(longest, len(data) - pos), 0, -1):
            t = by_bytes.get(data[pos : pos + size])
            if t is not None:
                ids.append(t)
                pos += size
                break
        else:
            raise AssertionError(f"no token spells {data[pos : pos + 1]!r}")
    return ids


def follow_spelling(
    index, vocab: Vocabulary, pattern: str, ids: list[int], checked: dict | None = None
) -> list[bytes]:
    """Take the tokens in turn, each allowed, comparing with the oracle on the way.

    ``checked`` (prefix -> (state, allowed set)) is shared by the spellings of one text:
    the state after a byte prefix is the same whichever tokens wrote it, so a prefix
    compared with the oracle once (49,152 tokens) is not compared again; reaching the same
    state there is asserted instead. (The single-byte spelling passes through every prefix
    the others do: their oracle walks were done twice.)"""
    checked = {} if checked is None else checked

    def check(state, prefix: bytes) -> set[int]:
        if prefix in checked:
            assert checked[prefix][0] == state, f"{pattern!r}: two states after {prefix!r}"
        else:
            checked[prefix] = (
                state,
                check_state_against_oracle(index, vocab, pattern, state, prefix),
            )
        return checked[prefix][1]

    state, prefix, prefixes = index.initial_state, b"", []
    for t in ids:
        allowed = check(state, prefix)
        assert t in allowed, f"{pattern!r}: after {prefix!r}, {vocab.token_bytes(t)!r} refused"
        state = index.next_state(state, t)
        assert state is not None
        prefix += vocab.token_bytes(t)
        prefixes.append(prefix)
    check(state, prefix)
    assert index.is_accepting(state), f"{pattern!r} does not accept {prefix!r}"
    return prefixes


@pytest.mark.slow
@pytest.mark.parametrize(("pattern", "targets"), NON_ASCII_CASES)
def test_non_ascii_targets_walk_with_real_tokens(
    pattern: str, targets: list[str], bundled_vocab, bundled_tokenizer
) -> None:
    index = build_index(pattern, bundled_vocab)
    checked: dict = {}  # the prefixes compared with the oracle, for every spelling
    for target in targets:
        data = target.encode("utf-8")
        real = bundled_tokenizer.encode(target, add_special_tokens=False)
        single_bytes = [bundled_vocab.all_token_bytes.index(bytes([b])) for b in data]
        for ids in (real, greedy_spelling(bundled_vocab, data), single_bytes):
            assert b"".join(bundled_vocab.token_bytes(t) for t in ids) == data
            prefixes = follow_spelling(index, bundled_vocab, pattern, ids, checked)
            assert prefixes[-1] == data
        # One token per byte passes through the middle of every multi-byte character.
        assert any(split_utf8(data[:k])[1] for k in range(1, len(data)))


@pytest.mark.slow
def test_real_tokenizer_spells_japanese_through_a_partial_character(
    bundled_vocab, bundled_tokenizer
) -> None:
    """SmolLM2 writes 日本 as b"\\xe6\\x97" b"\\xa5" ...: a state inside a character."""
    pattern = "(日本|東京)[0-9]{2}"
    ids = bundled_tokenizer.encode("日本42", add_special_tokens=False)
    index = build_index(pattern, bundled_vocab)
    prefixes = follow_spelling(index, bundled_vocab, pattern, ids)
    assert any(split_utf8(p)[1] for p in prefixes), "expected a prefix ending mid-character"


# ---------------------------------------------------------------------- invariants of the states

INVARIANT_REGEXES = ["float", "date", "url", "hot_cold_hotel", "paper_float", "counting_123"]


@pytest.mark.slow
@pytest.mark.parametrize("name", INVARIANT_REGEXES)
def test_every_state_is_live_and_closed(name: str, bundled_vocab) -> None:
    """Every state has an allowed token; EOS only where accepting; no edge leaves the states.

    Every edge is read from the state's row at once (its tokens are the allowed ones, its
    targets all states); ``next_state`` is asked about 50 allowed tokens (it answers the
    row's target) and 50 refused ones a state: asking it about every allowed token was
    three quarters of this test's CPU (url: 450k calls, ~3 CPU-s). The refused tokens are
    a mask's (``np.setdiff1d`` hashed the vocabulary twice a state: half of url's CPU)."""
    index = build_index(SEED_REGEXES[name], bundled_vocab)
    states = set(index.states)
    assert index.initial_state in states
    known = np.array(sorted(states))
    eos = bundled_vocab.eos_token_id
    specials = {i for i, b in enumerate(bundled_vocab.all_token_bytes) if not b} - {eos}
    rng = random.Random(name)
    for state in states:
        allowed = engine_allowed(index, state)
        assert allowed, f"state {state} has no allowed token"
        assert (eos in allowed) == bool(index.is_accepting(state)), f"state {state}"
        assert not allowed & specials, f"state {state} allows special tokens"
        row = index.row(state)
        assert row.tokens.tolist() == sorted(allowed - {eos}), f"state {state}"
        leaving = row.tokens[~np.isin(row.targets, known)]
        assert not leaving.size, f"state {state}, tokens {leaving[:5].tolist()} leave the states"
        for i in rng.sample(range(len(row.tokens)), min(50, len(row.tokens))):
            t, target = int(row.tokens[i]), int(row.targets[i])
            assert index.next_state(state, t) == target, f"state {state}, token {t}"
        free = np.ones(len(bundled_vocab), dtype=bool)
        free[row.tokens] = free[eos] = False  # row.tokens: the allowed ones but EOS
        refused = np.flatnonzero(free)
        for i in rng.sample(range(len(refused)), min(50, len(refused))):
            t = int(refused[i])
            assert index.next_state(state, t) is None, f"state {state}, refused token {t}"
