"""Property tests: random small regexes and toy vocabularies, walked against the oracle.

Hypothesis draws a regex as a syntax tree over a small alphabet (literals, classes,
``.``, concatenation, alternation, ``? * + {m,n}``, groups), renders it to a pattern, draws
a toy vocabulary and a random walk, and at every state compares the index's allowed tokens
with the naive oracle of tests/oracle.py.

Equality is exact because every vocabulary contains every single character of the
alphabet (and, when tokens split characters, every UTF-8 continuation byte): then any
partial match can be finished with this vocabulary, so the index's extra rule (refuse
tokens that lead where no token sequence can reach acceptance) never bites. Every class the
generator draws contains a character of the alphabet, so no atom needs a missing character.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import (
    ORACLE_FLAGS,
    engine_allowed,
    oracle_allowed,
    split_utf8,
    strip_anchors,
    walk_against_oracle,
)

from fsmviz import Vocabulary, build_index

# The same 80 examples on every run (CI), nothing saved to disk. For a longer, random
# search: FSMVIZ_PROPERTY_EXAMPLES=2000 pytest tests/test_index_properties.py
_EXAMPLES = os.environ.get("FSMVIZ_PROPERTY_EXAMPLES")
PROPERTY_SETTINGS = settings(
    deadline=None,
    max_examples=int(_EXAMPLES or 80),
    derandomize=not _EXAMPLES,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

ASCII_ALPHABET = ("a", "b", "c", ".", "0", "1")
NON_ASCII_ALPHABET = ("a", "b", ".", "é", "日", "😀")
CONTINUATION_BYTES = tuple(bytes([b]) for b in range(0x80, 0xC0))

# ---------------------------------------------------------------------- regex syntax trees
# A node is a tuple: ("lit", c) ("dot",) ("class", negated, members) ("cat", [nodes])
# ("alt", [nodes]) ("rep", node, quantifier) ("group", node). A class member is a
# character or a (low, high) range.

ALT, CAT, REP, ATOM = range(4)  # binding strength of what a node renders to


def render(node) -> str:
    return _render(node)[0]


def _render(node) -> tuple[str, int]:
    kind = node[0]
    if kind == "lit":
        return ("\\." if node[1] == "." else node[1]), ATOM
    if kind == "dot":
        return ".", ATOM
    if kind == "class":
        _, negated, members = node
        body = "".join(m if isinstance(m, str) else f"{m[0]}-{m[1]}" for m in members)
        return "[" + ("^" if negated else "") + body + "]", ATOM  # "." is literal in a class
    if kind == "group":
        return "(" + render(node[1]) + ")", ATOM
    if kind == "rep":
        text, strength = _render(node[1])
        if strength < ATOM:  # never "a*?" (lazy) or "a?+" (possessive): group first
            text = "(" + text + ")"
        return text + node[2], REP
    if kind == "cat":
        parts = []
        for child in node[1]:
            text, strength = _render(child)
            parts.append("(" + text + ")" if strength < CAT else text)
        return "".join(parts), CAT
    if kind == "alt":
        return "|".join(render(child) for child in node[1]), ALT
    raise ValueError(node)


def _covers(members, ch: str) -> bool:
    return any(
        ch == m if isinstance(m, str) else ord(m[0]) <= ord(ch) <= ord(m[1]) for m in members
    )


def regex_trees(alphabet: Sequence[str]) -> st.SearchStrategy:
    chars = st.sampled_from(alphabet)
    ordered = sorted(alphabet, key=ord)
    ranges = (
        st.tuples(st.integers(0, len(ordered) - 2), st.integers(1, len(ordered) - 1))
        .filter(lambda lh: lh[0] < lh[1])
        .map(lambda lh: (ordered[lh[0]], ordered[lh[1]]))
    )
    members = st.lists(st.one_of(chars, chars, ranges), min_size=1, max_size=3)
    classes = (
        st.tuples(st.booleans(), members)
        .filter(
            # A negated class must still contain a character of the alphabet.
            lambda nm: not nm[0] or not all(_covers(nm[1], c) for c in alphabet)
        )
        .map(lambda nm: ("class", nm[0], nm[1]))
    )
    bounds = st.integers(0, 2).flatmap(
        lambda m: (
            st.sampled_from([f"{{{m}}}", f"{{{m},}}"])
            | st.integers(m, 3).map(lambda n: f"{{{m},{n}}}")
        )
    )
    quantifiers = st.sampled_from(["?", "*", "+"]) | bounds
    leaves = st.one_of(
        chars.map(lambda c: ("lit", c)),
        chars.map(lambda c: ("lit", c)),
        st.just(("dot",)),
        classes,
    )

    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        several = st.lists(children, min_size=2, max_size=3)
        return st.one_of(
            several.map(lambda cs: ("cat", cs)),
            several.map(lambda cs: ("alt", cs)),
            st.tuples(children, quantifiers).map(lambda cq: ("rep", cq[0], cq[1])),
            children.map(lambda c: ("group", c)),
        )

    return st.recursive(leaves, extend, max_leaves=8).map(render)


# ---------------------------------------------------------------------- vocabularies


# Single characters outside the patterns' alphabet, as tokens: what "." and "[^a]" may also
# write ("\n" never for "."), and characters inside the ranges the generator draws.
ASCII_OUTSIDERS = ("\n", "z", "_")
NON_ASCII_OUTSIDERS = ("\n", "ÿ", "本", "🎉")

# Byte strings that probe UTF-8's edges: lone lead bytes, surrogates (ed a0..), overlong
# forms (c0, c1, e0 80, f0 8f), beyond U+10FFFF (f4 90, f5), and the highest valid ones.
EDGE_BYTES = (
    b"\xc2", b"\xdf", b"\xe0", b"\xe0\x80", b"\xe0\xa0", b"\xed", b"\xed\x9f", b"\xed\xa0",
    b"\xef\xbf", b"\xf0", b"\xf0\x8f", b"\xf0\x90", b"\xf4", b"\xf4\x8f", b"\xf4\x90",
    b"\xc0", b"\xc1\xbf", b"\xf5", b"\xff", b"\xbf", b"a\xe6",
)  # fmt: skip


def toy_vocabulary(alphabet: Sequence[str], outsiders: Sequence[str]) -> st.SearchStrategy:
    """Every single character (and a few others), then up to 10 strings of 2-4 characters."""
    extra = st.lists(st.text(alphabet=alphabet, min_size=2, max_size=4), max_size=10, unique=True)
    return extra.map(lambda tokens: Vocabulary.from_strings([*alphabet, *outsiders, *tokens]))


def bytes_vocabulary(tokens: Sequence[bytes]) -> Vocabulary:
    """A toy vocabulary of raw byte strings (EOS appended last).

    ``Vocabulary.from_strings`` takes text only, so pieces of a character's UTF-8 are
    built with the dataclass constructor (the contract names no bytes constructor).
    """
    unique = list(dict.fromkeys(tokens))
    eos = len(unique)
    return Vocabulary("toy-bytes", (*unique, b""), eos, {eos: "<eos>"})


@st.composite
def split_tokens(draw, alphabet: Sequence[str]) -> list[bytes]:
    """Random strings, each cut at random byte offsets (often inside a character), and
    all the byte strings at UTF-8's edges."""
    pieces: list[bytes] = list(EDGE_BYTES)
    for text in draw(st.lists(st.text(alphabet=alphabet, min_size=1, max_size=3), max_size=6)):
        data = text.encode("utf-8")
        cuts = draw(st.sets(st.integers(1, len(data) - 1), max_size=3)) if len(data) > 1 else ()
        bounds = [0, *sorted(cuts), len(data)]
        pieces.extend(data[a:b] for a, b in zip(bounds, bounds[1:], strict=False))
    return pieces


def picker(choices: Sequence[int]):
    it: Iterator[int] = iter(choices)
    return lambda candidates: candidates[next(it) % len(candidates)]


def walk_and_check_end(pattern: str, vocab: Vocabulary, choices: Sequence[int]) -> None:
    """Walk comparing with the oracle at every state; at the end, acceptance = full match."""
    index = build_index(pattern, vocab)
    prefix, state, _ = walk_against_oracle(index, vocab, pattern, picker(choices), len(choices))
    split = split_utf8(prefix)
    matched = (
        split is not None
        and not split[1]
        and regex.fullmatch(strip_anchors(pattern), split[0], flags=ORACLE_FLAGS) is not None
    )
    assert bool(index.is_accepting(state)) == matched, (pattern, prefix)


walks = st.lists(st.integers(0, 2**16), max_size=6)


# ---------------------------------------------------------------------- the properties


@PROPERTY_SETTINGS
@given(
    pattern=regex_trees(ASCII_ALPHABET),
    vocab=toy_vocabulary(ASCII_ALPHABET, ASCII_OUTSIDERS),
    choices=walks,
)
def test_ascii_patterns_match_oracle_along_random_walks(pattern, vocab, choices) -> None:
    regex.compile(pattern)  # the generator only writes valid patterns
    walk_and_check_end(pattern, vocab, choices)


@PROPERTY_SETTINGS
@given(
    pattern=regex_trees(NON_ASCII_ALPHABET),
    vocab=toy_vocabulary(NON_ASCII_ALPHABET, NON_ASCII_OUTSIDERS),
    choices=walks,
)
def test_non_ascii_patterns_with_whole_character_tokens(pattern, vocab, choices) -> None:
    walk_and_check_end(pattern, vocab, choices)


@PROPERTY_SETTINGS
@given(
    pattern=regex_trees(NON_ASCII_ALPHABET),
    pieces=split_tokens(NON_ASCII_ALPHABET),
    choices=walks,
)
def test_non_ascii_patterns_with_tokens_that_split_characters(pattern, pieces, choices) -> None:
    """Tokens cut characters' UTF-8; every continuation byte is a token, so equality is exact."""
    whole = [c.encode("utf-8") for c in (*NON_ASCII_ALPHABET, *NON_ASCII_OUTSIDERS)]
    vocab = bytes_vocabulary([*whole, *CONTINUATION_BYTES, *pieces])
    walk_and_check_end(pattern, vocab, choices)


@PROPERTY_SETTINGS
@given(
    pattern=regex_trees(NON_ASCII_ALPHABET),
    pieces=split_tokens(NON_ASCII_ALPHABET),
    choices=walks,
)
def test_split_tokens_without_fillers_stay_within_oracle_and_live(pattern, pieces, choices) -> None:
    """Without the filler bytes the index may refuse more than the oracle (a piece of 日
    whose other piece is missing), but never allows what the oracle refuses, and every
    token it allows leads to a state that still allows something."""
    vocab = bytes_vocabulary([c.encode("utf-8") for c in NON_ASCII_ALPHABET] + pieces)
    index = build_index(pattern, vocab)
    state, prefix = index.initial_state, b""
    for step in range(len(choices) + 1):
        got = engine_allowed(index, state)
        expected = oracle_allowed(pattern, vocab, prefix)
        assert got <= expected, (pattern, prefix, got - expected)
        assert got, (pattern, prefix, "a reachable state allows nothing")
        assert (vocab.eos_token_id in got) == bool(index.is_accepting(state)), (pattern, prefix)
        candidates = sorted(got - {vocab.eos_token_id})
        if step == len(choices) or not candidates:
            break
        t = candidates[choices[step] % len(candidates)]
        state = index.next_state(state, t)
        assert state is not None, (pattern, prefix, t)
        prefix += vocab.token_bytes(t)
