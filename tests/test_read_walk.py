"""``readwalk``: the successor pairs walked over the readable part of the vocabulary, every
start at once, are the plain ones: for each start, the distinct states its tokens lead to,
token by token (``test_index_rows.plain_row``, or each token's bytes read one by one)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz.tokens.fast import readwalk
from fsmviz.tokens.fast.readwalk import read_walk, readable_pairs
from fsmviz.tokens.index import _successor_pairs
from tests.test_index_rows import plain_row

IPV6 = (
    r"([0-9A-Fa-f]{1,4}(:[0-9A-Fa-f]{1,4}){7}|:(:[0-9A-Fa-f]{1,4}){1,7}"
    r"|[0-9A-Fa-f]{1,4}:(:[0-9A-Fa-f]{1,4}){1,6}|([0-9A-Fa-f]{1,4}:){1,7}:)"
)
TAKEN = (  # many starts that read the same few bytes, and a pair walk that is not small
    IPV6,
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    r"swh:1:(snp|rel|rev|dir|cnt):[0-9a-fA-F]{40}",
    r"[0-9a-f]{64}",
)
GIVEN_UP = r"sha256-[A-Za-z0-9+/]{43}="  # most tokens readable: past ``CELLS`` (and READ_BYTES)
LEFT = (  # a small pair walk, or each start reading its own bytes: pair by pair
    r"#[0-9A-Fa-f]{6}",
    r"([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}",
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}",
    r"(always|never|build|if_not_present|missing|refresh|daily|weekly|monthly)",
)


def plain_pairs(index, starts: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """For each position in ``starts``, the distinct targets of its plain row."""
    origins, states = [], []
    for k, start in enumerate(starts):
        targets = np.unique(plain_row(index, start)[1])
        origins.append(np.full(len(targets), k, dtype=np.int64))
        states.append(targets.astype(np.int64))
    return np.concatenate(origins), np.concatenate(states)


def assert_same_pairs(found, expected) -> None:
    assert found is not None
    for got, want in zip(found, expected, strict=True):
        assert got.dtype == np.int64
        assert np.array_equal(got, want)


@pytest.mark.parametrize("pattern", TAKEN + LEFT)
def test_read_walk_gives_the_plain_pairs(bundled_vocab, pattern):
    index = build_index(pattern, bundled_vocab)
    starts = list(range(index.byte_dfa.num_states))
    found = read_walk(index.trie, index.byte_dfa.table, starts)
    assert_same_pairs(found, plain_pairs(index, starts))


@pytest.mark.parametrize("pattern", TAKEN)
def test_the_index_takes_the_route_and_keeps_the_plain_successors(bundled_vocab, pattern):
    index = build_index(pattern, bundled_vocab)
    starts = list(range(index.byte_dfa.num_states))
    assert readable_pairs(index.trie, index.byte_dfa.table, starts) is not None
    assert_same_pairs(_successor_pairs(index, starts, None), plain_pairs(index, starts))
    for state in index.states:
        assert np.array_equal(index.successors(state), np.unique(plain_row(index, state)[1]))


@pytest.mark.parametrize("pattern", LEFT)
def test_the_route_is_left_where_it_does_not_pay(bundled_vocab, pattern):
    index = build_index(pattern, bundled_vocab)
    starts = list(range(index.byte_dfa.num_states))
    assert readable_pairs(index.trie, index.byte_dfa.table, starts) is None


def test_a_walk_gives_up_past_its_cells_or_levels(bundled_vocab, monkeypatch):
    index = build_index(IPV6, bundled_vocab)
    starts = list(range(index.byte_dfa.num_states))
    assert read_walk(index.trie, index.byte_dfa.table, starts, deepest=1) is None
    monkeypatch.setattr(readwalk, "CELLS", 1_000)
    assert read_walk(index.trie, index.byte_dfa.table, starts) is None


def test_a_walk_given_up_leaves_the_plain_successors(bundled_vocab):
    index = build_index(GIVEN_UP, bundled_vocab)
    starts = list(range(index.byte_dfa.num_states))
    assert read_walk(index.trie, index.byte_dfa.table, starts) is None
    assert readable_pairs(index.trie, index.byte_dfa.table, starts) is None
    assert_same_pairs(_successor_pairs(index, starts, None), plain_pairs(index, starts))


def bytes_pairs(vocab: Vocabulary, table: np.ndarray, starts: list[int]):
    """The plain definition itself: each token's bytes read one by one from each start."""
    pairs = set()
    for k, start in enumerate(starts):
        for token in range(len(vocab)):
            state, data = start, vocab.token_bytes(token)
            if not data:
                continue
            for byte in data:
                state = int(table[state, byte])
                if state < 0:
                    break
            else:
                pairs.add((k, state))
    ordered = sorted(pairs)
    return tuple(np.array([p[i] for p in ordered], dtype=np.int64) for i in (0, 1))


PATTERNS = (r"[ab]{1,3}:[0-9a]+", r"(ab|ba)+c?", r"[a-c]*d[0-9]{2}", r"é?[a:]{2,4}", r"\d+(:\d+)*")


@pytest.mark.parametrize("seed", range(12))
def test_drawn_vocabularies_read_byte_by_byte(seed):
    rng = random.Random(seed)
    letters = "ab:0123cdé xy"
    strings = {"".join(rng.choices(letters, k=rng.randint(1, 5))) for _ in range(120)}
    vocab = Vocabulary.from_strings(sorted(strings), eos_token="</s>")
    index = build_index(rng.choice(PATTERNS), vocab)
    table = index.byte_dfa.table
    starts = list(range(len(table)))
    assert_same_pairs(read_walk(index.trie, table, starts), bytes_pairs(vocab, table, starts))


def test_the_route_answers_before_the_partitions_are_asked_for(bundled_vocab):
    """IPv6's 78 starts are more than ``dawg.MAX_STARTS``: the route used to wait for
    ``shared()``'s byte partitions (~0.3 ms), which it does not need."""
    index = build_index(IPV6, bundled_vocab)
    assert len(index.states) > 64
    assert index._byte_partitions is None
