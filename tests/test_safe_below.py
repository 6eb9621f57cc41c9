"""Below a chain's frontier, tokens whose every byte lies in a set ``B`` that a closed set of
states ``S`` reads into itself are taken without a walk (``safebytes._unharmed``, from
``_safe_bytes``): a search's every ``f`` leads into the state after it, which with the
search's loop reads a string's ASCII and ``f`` back among the two. The walk with the
shortcut equals the plain walk, the shortcut fires, and ``B`` and ``S`` are closed."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz.tokens import index as index_module
from fsmviz.tokens.fast import chains, packwalk, safebytes, walkbelow
from fsmviz.tokens.fast.knownloops import ANY
from tests.test_index_rows import plain_mask

# Tests of the chain's walk below, under the loop masks (``knownloops``), which answer these
# patterns' states first: the masks are turned off.
pytestmark = pytest.mark.usefixtures("no_loop_masks")

SEARCHES = (
    rf"{ANY}*(?:f.o){ANY}*",
    rf"{ANY}*(?:b.r){ANY}*",
    rf"{ANY}*(?:g.o){ANY}*",
    rf"{ANY}*(?:v[^ ]){ANY}*",
)


def _walks(monkeypatch, pattern, vocab, suffix):
    """Each ``walk_below`` call's arguments while the first state's bitmask is made (of a
    fresh index: ``suffix`` ``()``s, one a test)."""
    calls, walk = [], walkbelow.walk_below

    def kept(*args):
        calls.append(args)
        return walk(*args)

    monkeypatch.setattr(chains, "walk_below", kept)
    monkeypatch.setattr(index_module, "search_words", lambda *args: None)  # the chain's path
    index = build_index(pattern + "()" * suffix, vocab)
    index.bitmask(index.states[0])
    monkeypatch.setattr(chains, "walk_below", walk)
    return index, calls


@pytest.mark.slow
@pytest.mark.parametrize("pattern", SEARCHES)
def test_walk_below_with_safe_bytes_is_the_plain_walk(monkeypatch, bundled_vocab, pattern):
    index, calls = _walks(monkeypatch, pattern, bundled_vocab, 3)
    assert calls
    fired = 0
    for vocab, trie, table, nodes, states, safe in calls:
        plain = walkbelow.walk_below(vocab, trie, table, nodes, states)
        quick = walkbelow.walk_below(vocab, trie, table, nodes, states, safe)
        assert sorted(plain.tolist()) == sorted(quick.tolist())
        sizes = vocab.span_size[nodes]
        if int(sizes.sum()) < walkbelow.SAFE_TOKENS:
            continue
        entries = walkbelow.runs(vocab.span_start[nodes], sizes)
        start = safebytes._safe_start(trie, table, (nodes, states), safe)
        sure = safebytes._unharmed(vocab, table, entries, np.repeat(states, sizes), start)
        fired += int(sure.sum())
        assert set(vocab.sorted_ids[entries[sure]].tolist()) <= set(plain.tolist())
    assert fired > 1_000, "the shortcut took no tokens"
    for state in index.states[:40]:  # and the masks as the plain rows
        assert np.array_equal(index.bitmask(state), plain_mask(index, state))


@pytest.mark.slow
@pytest.mark.parametrize("pattern", SEARCHES)
def test_safe_bytes_are_read_back_into_the_set(monkeypatch, bundled_vocab, pattern):
    _, calls = _walks(monkeypatch, pattern, bundled_vocab, 4)
    found = 0
    for _, trie, table, nodes, states, safe in calls:
        start = safebytes._safe_start(trie, table, (nodes, states), safe)
        result = safebytes._safe_bytes(table, *start)
        if result is None:
            continue
        members, good = result
        cols = [byte for byte in range(256) if good >> byte & 1]
        assert len(cols) >= safebytes.MIN_SAFE and max(cols) < 0x80
        inside = np.flatnonzero(members)
        targets = table[inside][:, cols]
        assert (targets >= 0).all() and members[targets].all()
        assert set(start[0]) & set(inside.tolist())
        found += 1
    assert found


def test_safe_bytes_narrow_past_a_backslash():
    """A toy: 0 loops on letters, ``f`` leads to 1, ``\\`` from both to 2, which reads only
    ``n``: ``\\`` leaves ``B``; from 3 (reading one letter) none is found."""
    table = np.full((4, 256), -1, dtype=np.int32)
    letters = [ord(c) for c in "abcdefghijklmnopqrstuvwxyz"]
    table[0, letters], table[1, letters] = 0, 0
    table[0, ord("f")] = table[1, ord("f")] = 1
    table[[0, 1], ord("\\")], table[2, ord("n")], table[3, ord("a")] = 2, 0, 0
    safe = sum(1 << byte for byte in letters) | 1 << ord("\\")
    members, good = safebytes._safe_bytes(table, [1], safe)
    assert members.tolist() == [True, True, False, False]
    assert good == safe & ~(1 << ord("\\"))
    assert safebytes._safe_bytes(table, [3], safe) is None


def test_unharmed_takes_tokens_of_safe_bytes_from_the_set_only():
    """Tokens of letters are taken from the set's state 0, none from state 3 (outside it,
    reading one letter), nor a token holding a byte outside ``B`` (``\\n``)."""
    index = build_index("[a-z]*", Vocabulary.from_strings(["fa", "ab", "\\n", "b"]))
    vocab = packwalk.packed_vocab(index.trie, len(index.vocab))
    table = np.full((4, 256), -1, dtype=np.int32)
    letters = [ord(c) for c in "abcdefghijklmnopqrstuvwxyz"]
    table[0, letters], table[3, ord("a")] = 0, 0
    start = ([0], sum(1 << byte for byte in letters))
    entries = np.arange(4)
    tokens = [index.vocab.token_bytes(int(i)) for i in vocab.sorted_ids[entries]]
    for state in (0, 3):
        sure = safebytes._unharmed(vocab, table, entries, np.full(4, state), start)
        taken = {token for token, yes in zip(tokens, sure.tolist(), strict=True) if yes}
        assert taken == ({b"fa", b"ab", b"b"} if state == 0 else set())


@pytest.mark.parametrize("needle", [r"\S@\S", r"[^:]+:[^:]+", r"[^ ]+ [^ ]+"])
def test_a_few_tokens_below_a_few_hundred_pairs_are_walked_at_once(
    monkeypatch, bundled_vocab, needle
):
    """A search's start whose frontier is ~200 quotes, newlines and UTF-8 lead bytes
    (~1,100-1,300 tokens, ``SHALLOW`` or fewer a pair): its tokens are walked at once
    (``SHALLOW_PAIRS``), not a level of pairs first; the masks are the plain rows."""
    walked, walk_entries = [], walkbelow.walk_entries

    def counted(vocab, table, entries, states, skip):
        walked.append(len(entries))
        return walk_entries(vocab, table, entries, states, skip)

    monkeypatch.setattr(walkbelow, "walk_entries", counted)
    index, calls = _walks(monkeypatch, rf"{ANY}*(?:{needle}){ANY}*", bundled_vocab, 5)
    many = [
        int(vocab.span_size[nodes].sum())
        for vocab, _, _, nodes, _, _ in calls
        if len(nodes) < 256 and int(vocab.span_size[nodes].sum()) > walkbelow.TOKEN_WALK
    ]
    assert many and set(many) <= set(walked), (many, walked)  # each walked whole, at once
    for state in index.states[:8]:
        assert np.array_equal(index.bitmask(state), plain_mask(index, state))
