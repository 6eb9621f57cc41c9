"""A row made by ``rowwalk.walk_row`` (whole subtrees at once, the last tokens in Python)
is the row of the plain pair walk (``index._walk``), token for token and target for target,
on the real 49k vocabulary."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import build_index
from fsmviz.arrays import runs
from fsmviz.tokens.index import _walk, packed

WIDE_SEEDS = ("email", "three_letters_digit", "url", "pink_floyd_json")
EVERYDAY = (
    r"[a-z0-9]+(-[a-z0-9]+)*",  # a slug: one loop state over 36 bytes
    r"([A-Za-z]{1,12} ){2,10}[A-Za-z]{1,12}\.",  # chains that end: 12 letters, then a space
    # A chain that ends where its end state still reads a letter ("example", "process"):
    r"[a-z]{6}(e|s|[0-9]+)",
    r"[0-9a-f]{8}-[0-9a-f]{4}",
    r"(?i)hello( world)*",
    "東京|大阪",  # states inside a character
    r'"[^"\\]*"',  # a loop whose class holds every non-ASCII character
    r"[a-z.]+-*",  # long runs of "-" under a loop
    r"(?s).{0,20}",  # twenty states alike, every byte
    r"(a[a-z]|b[a-z])*",  # a main class leading away and back (a cycle of two states)
)
STATES_CHECKED = 40


def plain_row(index, state: int) -> tuple[np.ndarray, np.ndarray]:
    """The row as the plain pair walk makes it (what ``TokenIndex.row`` used to do)."""
    (_, node, reached), _ = _walk(index.trie, index.byte_dfa.table, [state])
    per_node = index.trie.token_start[node + 1] - index.trie.token_start[node]
    tokens = index.trie.token_ids[runs(index.trie.token_start[node], per_node)]
    reached = np.repeat(reached, per_node)
    order = np.argsort(tokens)
    return tokens[order], reached[order]


def plain_mask(index, state: int) -> np.ndarray:
    """``index.bitmask(state)`` as the plain pair walk makes it: the plain row's tokens,
    and EOS's where ``state`` accepts, packed."""
    tokens, _ = plain_row(index, state)
    if index.is_accepting(state):
        tokens = np.append(tokens, index.vocab.eos_token_id)
    return packed(tokens, len(index.vocab))


def assert_plain_masks(index, states: int) -> None:
    """The index's first ``states`` masks are the plain ones (``plain_mask``)."""
    for state in index.states[:states]:
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), state


def assert_rows_match(index, states) -> None:
    for state in states:
        row = index.row(state)
        tokens, targets = plain_row(index, state)
        if index._live is not None:
            keep = index._live[targets]
            tokens, targets = tokens[keep], targets[keep]
        assert row.tokens.dtype == tokens.dtype and row.targets.dtype == targets.dtype
        assert np.array_equal(row.tokens, tokens), (index.dfa.pattern, state)
        assert np.array_equal(row.targets, targets), (index.dfa.pattern, state)


@pytest.mark.slow
@pytest.mark.parametrize("pattern", EVERYDAY)
def test_rows_match_the_plain_walk(bundled_vocab, pattern):
    index = build_index(pattern, bundled_vocab)
    assert_rows_match(index, range(min(index.byte_dfa.num_states, STATES_CHECKED)))


@pytest.mark.slow
@pytest.mark.parametrize("name", WIDE_SEEDS)
def test_seed_rows_match_the_plain_walk(bundled_vocab, seed_cases, name):
    index = build_index(seed_cases["regexes"][name], bundled_vocab)
    assert_rows_match(index, range(min(index.byte_dfa.num_states, STATES_CHECKED)))


@pytest.mark.slow
def test_wide_rows_take_subtrees_whole(bundled_vocab):
    """A slug's first row meets its loop state's chain, which never ends (else the tests
    above would only hold the plain walk to itself)."""
    from fsmviz.tokens.fast.rowwalk import Chains, walk_row

    index = build_index(r"[a-z0-9]+(-[a-z0-9]+)*", bundled_vocab)
    chains = Chains(index.byte_dfa.table, int(index.trie.height[0]))
    tokens, _ = walk_row(index.trie, index.byte_dfa.table, chains, 0, len(bundled_vocab))
    assert len(tokens) > 10_000
    assert chains.reach.max() == chains.width - 1  # the loop state's chain never ends


@pytest.mark.slow
def test_rows_of_a_pruned_index_match(bundled_vocab):
    """SmolLM2 has no token holding ``\\x04``: after three letters only ``\\x04`` finishes,
    so those states are dead in tokens and rows drop the tokens leading there."""
    index = build_index(r"[a-z]+\x04|[a-z]{2}", bundled_vocab)
    assert index._live is not None
    assert_rows_match(index, range(min(index.byte_dfa.num_states, STATES_CHECKED)))
    plain_tokens, _ = plain_row(index, 0)
    assert len(index.row(0).tokens) < len(plain_tokens)  # the pruning took some away


@pytest.mark.slow
def test_small_rows_match_the_plain_walk(bundled_vocab):
    """A narrow state's row walked in plain Python (``rowwalk.small_row``: a schema's keys,
    digits, punctuation) is the plain walk's; a state whose walk grows long (fifteen
    letters in a loop: thousands of tokens) is left to the numpy walks."""
    from fsmviz.tokens.fast.rowwalk import RowWalker, small_row

    index = build_index(r'\{"name": "[^"\\]*", "age": (0|[1-9][0-9]*), "id": [0-9a-f]{4}\}',
                        bundled_vocab)  # fmt: skip
    walker = RowWalker(index.byte_dfa, index.trie, len(bundled_vocab))
    answered = 0
    for state in range(index.byte_dfa.num_states):
        found = small_row(index.trie.lists, walker._steps, state)
        if found is None:
            continue
        answered += 1
        tokens, targets = plain_row(index, state)
        assert found[0].dtype == tokens.dtype and found[1].dtype == targets.dtype
        assert np.array_equal(found[0], tokens) and np.array_equal(found[1], targets), state
    assert answered >= index.byte_dfa.num_states // 2
    letters = build_index("[a-o]+", bundled_vocab)
    walker = RowWalker(letters.byte_dfa, letters.trie, len(bundled_vocab))
    assert not walker.wide(0) and small_row(letters.trie.lists, walker._steps, 0) is None
    assert np.array_equal(letters.row(0).tokens, plain_row(letters, 0)[0])


def test_kept_steps_leave_the_collector_nothing_to_visit(bundled_vocab):
    """``RowWalker._steps`` keeps a narrow state's row as a dict of ints (byte -> target),
    which the garbage collector never tracks, and a wide one's as an array (its traversal
    reaches its type alone): a list of 256 ints, one of (byte, target) tuples and a tuple
    kept per state were visited by every collection (the hundreds a schema's small walks
    keep made a young one inside a mask cost ~0.3 ms). A narrow row holds the table's live
    bytes, in order; a wide one the table's row."""
    import gc

    from fsmviz.tokens.fast.rowwalk import SMALL_EDGES, RowWalker

    index = build_index(r'\{"id": [0-9a-f]{4}, "name": "[^"\\]*", "n": [0-9]+\}', bundled_vocab)
    walker = RowWalker(index.byte_dfa, index.trie, len(bundled_vocab))
    wide = 0
    for state in range(index.byte_dfa.num_states):
        row = walker._steps(state)
        targets = index.byte_dfa.table[state].tolist()
        live = [(byte, target) for byte, target in enumerate(targets) if target >= 0]
        if len(live) >= SMALL_EDGES:
            wide += 1
            assert len(gc.get_referents(row)) <= 1 and list(row) == targets, state
        else:
            assert not gc.is_tracked(row) and list(row.items()) == live, state
    assert wide  # the string's loop


def test_a_narrow_state_before_a_wide_loop_skips_the_small_walk(bundled_vocab, monkeypatch):
    """A narrow state whose bytes lead through narrow states into a wide loop, many tokens
    below the way (``bar`` before a string's loop: ~1,500 tokens below ``a``), is not
    walked in plain Python (``RowWalker._opens_wide``: that walk would give up); a schema
    key's letters still are. Either way its words are its allowed tokens."""
    from fsmviz.tokens.fast import rowwalk
    from fsmviz.tokens.index import packed

    walked = []
    real = rowwalk._small_walk
    monkeypatch.setattr(
        rowwalk,
        "_small_walk",
        lambda trie, steps, state: walked.append(state) or real(trie, steps, state),
    )
    for pattern, prefix, skipped in (
        (r'bar[^"\\]*', b"b", True),
        (r'\{"name": "[^"\\]*"\}', b'{"', False),
    ):
        index = build_index(pattern, bundled_vocab)
        walker = rowwalk.RowWalker(index.byte_dfa, index.trie, len(bundled_vocab))
        state = 0
        for byte in prefix:
            state = int(index.byte_dfa.table[state, byte])
        walked.clear()
        words = walker.packed(state)
        assert (state not in walked) == skipped, pattern
        want = packed(index.allowed_tokens(state), len(bundled_vocab))
        assert words is not None and np.array_equal(words, want), pattern


@pytest.mark.parametrize(
    "pattern",
    [
        r"[^a-df-zA-DF-Z\s]+(?:[umUM][sS]|[dhmsDHMS])",
        r"[^:]+:[^:]+:[^:]+",
        r"(?:\w*:)?\w+ [^\n]*",
    ],
)
def test_a_wide_state_asks_merge_pair_once(bundled_vocab, monkeypatch, pattern):
    """``rowwalk.pair_at``: ``merge_at``, then ``RowWalker.packed`` where no merge
    happened, ask ``merge_pair`` of a state's chain once between them; every mask is still
    its allowed tokens."""
    from fsmviz.tokens.fast import rowwalk
    from fsmviz.tokens.index import packed

    asked: list[int] = []
    real = rowwalk.merge_pair
    monkeypatch.setattr(
        rowwalk, "merge_pair", lambda chain, *rest: asked.append(id(chain)) or real(chain, *rest)
    )
    index = build_index(pattern, bundled_vocab)
    for state in index.states[:12]:
        got = index.bitmask(state)  # first: a kept row would answer it
        want = packed(index.allowed_tokens(state), len(bundled_vocab))
        assert np.array_equal(got, want), state
    assert asked, "no wide state asked merge_pair: the test says nothing"
    assert len(asked) == len(set(asked)), "merge_pair asked twice of one chain"
