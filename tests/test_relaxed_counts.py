"""The first allowed set with long counted repeats let go (``regex_terms.TreeTerms.relax_from``),
the longer tokens walked with the pattern as written (``levelwalk.walk_long``), and a
counted repeat's copies written together (``counted_rows.Block.write``).

Each is held to its plain definition: the whole index's first set (on the bundled
vocabulary, and on a toy one whose every token is long), each long token walked alone,
and each counted copy's row derived.
"""

from __future__ import annotations

import numpy as np
import pytest
from caches import forget_indexes

from fsmviz import Vocabulary, build_index, first_allowed_tokens
from fsmviz.tokens.fast import derivatives, levelwalk
from fsmviz.tokens.fast.derivatives import _NearStart, _Regexes, _Rows
from fsmviz.tokens.trie import trie_of

RELAXED = [  # a counted repeat of a set, bounded past the bundled vocabulary's ``long`` (15)
    r"([^,\n]{1,20},){3}[^,\n]{1,20}",  # long tokens of spaces and dashes die at 21 bytes
    r"[^,\n]{1,20}",
    r'"[^"]{0,30}"',
    r"\w{1,15}",
    r"([^ ]{1,16} ){2,3}[^ ]{1,16}",
    r"[^,]{1,18},[^,]{1,18}",
    r"-{15,17}",  # the dashes' own long tokens: 16 and 32 of them
    r"[ ]{16,20}x",
    r"(x{0,20}|y{0,20})z",
    r"(?s).{15,16}x",
    r"[^\n]{20,40}",
    r"[\u00e0-\u00ff]{1,20}é",  # characters of two bytes: no copies written together
    r"[a-z]{0,25}[0-9]{1,30}",
]


def index_first(pattern: str, vocab: Vocabulary) -> np.ndarray:
    index = build_index(pattern, vocab)
    return index.allowed_tokens(index.initial_state)


@pytest.mark.parametrize("pattern", RELAXED)
def test_a_pattern_with_long_counts_let_go_allows_the_index_s_tokens(
    pattern, bundled_vocab, monkeypatch
):
    """The first set is the index's, its repeats relaxed (``walk_long`` then walks the
    tokens longer than the least bound let go)."""
    longer: list[int] = []
    real = derivatives.walk_long
    monkeypatch.setattr(
        derivatives, "walk_long", lambda trie, at, *rest: longer.append(at) or real(trie, at, *rest)
    )
    forget_indexes()
    ours = first_allowed_tokens(pattern, bundled_vocab)
    np.testing.assert_array_equal(ours, index_first(pattern, bundled_vocab), pattern)
    assert longer and min(longer) >= levelwalk.levels_of(trie_of(bundled_vocab)).long.bound


def test_the_long_tokens_walk_is_what_tells_them_apart(bundled_vocab):
    """The relaxed pattern alone allows long tokens the pattern does not (30 spaces in a
    field of 20): what ``walk_long`` takes out."""
    pattern = r"([^,\n]{1,20},){3}[^,\n]{1,20}"
    relaxed = first_allowed_tokens(r"([^,\n]+,){3}[^,\n]+", bundled_vocab)
    exact = first_allowed_tokens(pattern, bundled_vocab)
    extra = np.setdiff1d(relaxed, exact)
    lengths = np.array([len(bundled_vocab.all_token_bytes[t]) for t in extra])
    assert extra.size and (lengths > 20).all()


def test_on_a_vocabulary_of_long_tokens_every_one_is_walked():
    """A toy vocabulary's ``long`` is its shortest token (it has fewer than
    ``LONG_TOKENS``): every bounded repeat is let go and every longer token walked as
    written; the first set is still the index's."""
    texts = ["a" * k for k in range(1, 12)] + ["a,", "aa,a", ",a", "ab", "b" * 7, "aé", "é" * 3]
    texts += ["a" * 4 + "," + "a" * 4, "a\n", ",,", "bbb,aaa,", ",", "b", "\n", "x"]
    vocab = Vocabulary.from_strings(texts, eos_token="</s>")
    assert levelwalk.levels_of(trie_of(vocab)).long.bound == 1
    walked = []
    real = derivatives.walk_long
    for pattern in [r"a{1,3}(,a{1,3})*", r"[ab]{2,5},?", r"[^,]{0,4},[^,]{1,2}", r"a{1,9}|b{1,6}"]:
        forget_indexes()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(derivatives, "walk_long", lambda *a: walked.append(a[1]) or real(*a))
            ours = first_allowed_tokens(pattern, vocab)
        np.testing.assert_array_equal(ours, index_first(pattern, vocab), pattern)
    assert len(walked) >= 3  # [^,] holds "é", spelt by no token alone: the index answers


@pytest.mark.parametrize(
    "pattern", [*RELAXED[:2], r"\w{1,15}", r"[^,]{1,18},[^,]{1,18}", r"[a-z ]{1,20}"]
)
def test_the_python_tail_leaves_the_long_tokens_to_walk_long(pattern, bundled_vocab, monkeypatch):
    """The level walk's tail in Python (``levelwalk._Walk.tail``), begun early here (its
    tokens of every length), walks only the tokens of up to the relaxed bound and takes
    the longer ones unwalked, for ``walk_long`` to walk as written; the first set is
    still the index's, and some tokens were taken so."""
    monkeypatch.setattr(levelwalk, "DEEP_NODES", 40_000)
    monkeypatch.setattr(levelwalk, "TAIL_TOKENS", 4_000)
    monkeypatch.setattr(derivatives, "walk_root", lambda *_: None)
    monkeypatch.setattr(derivatives, "_spelt_loop", lambda *_: None)
    monkeypatch.setattr(derivatives._NearStart, "_small_row", lambda *_: None)
    unwalked: list[int] = []
    real = levelwalk._Walk.tail

    def counting(walk, nodes, states):
        found = real(walk, nodes, states)
        if walk.longer is not None:  # not the index's own walks
            lengths = walk.trie.sorted_lengths[found]
            unwalked.append(int(np.count_nonzero(lengths > walk.longer)))
        return found

    monkeypatch.setattr(levelwalk._Walk, "tail", counting)
    forget_indexes()
    ours = first_allowed_tokens(pattern, bundled_vocab)
    np.testing.assert_array_equal(ours, index_first(pattern, bundled_vocab), pattern)
    assert sum(unwalked) > 0


@pytest.mark.parametrize("more", [0, 5, 20])
@pytest.mark.parametrize("pattern", [r"([^,\n]{1,12},){3}[^,\n]{1,12}", r"[^\n]{1,30}"])
def test_walk_long_walks_each_long_token_as_alone(pattern, more, bundled_vocab):
    """``walk_long`` (each token from the bytes it shares with the one before) takes out
    exactly the allowed tokens longer than ``longer`` that a walk of each alone, byte by
    byte over the same rows, finds dead."""
    trie = trie_of(bundled_vocab)
    longer = levelwalk.levels_of(trie).long.bound + more
    regexes, start = _Regexes.of(pattern, trie.single_byte_tokens)
    rows = _Rows(regexes, start)
    allowed = np.arange(len(bundled_vocab), dtype=np.int32)[::3]  # some, not all
    kept = levelwalk.walk_long(levelwalk.levels_of(trie).long, longer, lambda: rows, allowed)
    expected = []
    for token in allowed.tolist():
        data = bundled_vocab.all_token_bytes[token]
        state = 0
        for byte in data if len(data) > longer else b"":
            rows.make_rows(np.array([state]))
            state = int(rows.table[state, byte])
            if state < 0:
                break
        if state >= 0:
            expected.append(token)
    np.testing.assert_array_equal(kept, expected)
    assert len(kept) < len(allowed)


@pytest.mark.parametrize("pattern", [r"[^\n]{1,40}", r"[a-c]{0,30}x", r"(x[^,]{0,25},){2}"])
def test_copies_written_together_are_their_derivatives(pattern, bundled_vocab):
    """Rows of counted copies written together (``_Rows.ahead``: up to 50 copies after
    the one asked for) are the rows each copy's derivatives give, as those of copies
    written one at a time are; far fewer rows are asked for."""
    asked = []
    for ahead in (0, 50):
        regexes, start = _Regexes.of(pattern, np.ones(256, dtype=bool))
        near = _NearStart(regexes, start)
        near.ahead = ahead
        s = made = 0
        while s < len(near.states) and s < 400:
            if not near.made[s]:
                near.make_row(s)
                made += 1
            s += 1
        asked.append(made)
        for s, (regex, partial) in enumerate(near.states):
            if isinstance(partial, bytes):
                for byte in range(256):
                    target = int(near.table[s, byte])
                    expected = _derived(near, regex, partial, byte)
                    assert target == expected, (pattern, ahead, s, byte)
    assert asked[1] * 3 < asked[0], asked


def _derived(near: _NearStart, regex: int, partial: bytes, byte: int) -> int:
    """The state after ``byte`` from ``(regex, partial)`` by its layout's derivatives, as
    ``_Rows._derived_targets`` finds it (-1: none)."""
    from fsmviz.tokens.fast.counted_rows import ENDS, STAY

    regexes = near.regexes
    layout = near._layout(regexes.heads(regex), partial)
    group = int(layout.group_of[byte])
    if group == len(layout.groups):
        return -1
    _, kind, _, code, extra = layout.groups[group]
    after = regex if kind == STAY else regexes.derive(regex, code)
    if kind == ENDS and after == derivatives.NONE:
        return -1
    return near._ids[after, extra]


def test_new_states_numbers_none_where_one_is_known():
    """``_Rows.new_states`` numbers a block's states one after the other, or none of
    them where one is known already (then ``Block.write`` writes nothing)."""
    regexes = _Regexes()
    a, b = regexes.charset(((97, 97),)), regexes.charset(((98, 98),))
    rows = _Rows(regexes, a)
    first = rows.new_states([(b, b""), (b, b"\xc3")])
    assert first == 1 and rows.states[1:] == [(b, b""), (b, b"\xc3")]
    assert rows.new_states([(a, b"\xc3"), (b, b"")]) is None
    assert len(rows.states) == 3 and (a, b"\xc3") not in rows._ids
