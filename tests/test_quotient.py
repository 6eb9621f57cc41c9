"""The live blocks of a byte DFA (``fsmviz.tokens.fast.quotient``): states in one block allow
the same tokens, and a search's packed masks made over the blocks' quotient
(``rowwalk.Merged``) are the plain pair walk's rows packed, bit for bit, on the real 49k
vocabulary; so are those whose frontier leads into loops taken whole below it
(``chains._below_loops``)."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz.schema.patterns import whole_match
from fsmviz.tokens import index as index_module
from fsmviz.tokens.fast import chains, packwalk, quotient, rowwalk, walkbelow
from fsmviz.tokens.fast.quotient import live_blocks
from fsmviz.tokens.fast.rowwalk import Merged
from fsmviz.tokens.index import packed
from tests.test_index_rows import plain_mask, plain_row

# Tests of the live blocks' route, under the loop masks (``knownloops``), which answer a
# search in a string first: the masks are turned off.
pytestmark = pytest.mark.usefixtures("no_loop_masks")


SEARCHES = (  # JSON Schema patterns not anchored: a string's characters around a needle
    "foo",
    "world\\.json",
    "https://orcid\\.org/[0-9]{4}-[0-9]{4}",
    "[nN][oO][nN][eE]",
    "\\{\\{matrix",
    "\\wcole",  # UTF-8 letters lead on, others not
    "aaa*",
    "[a-zA-Z0-9][a-zA-Z0-9_.-]+",  # the chain leads from the start into the loop after it
)
WHOLE = tuple(whole_match(needle)[1:-1] for needle in SEARCHES)
ODD = tuple(whole_match(needle)[1:-1] for needle in ('a"b', "x\\\\y", "f.*o"))  # a raw
# quote or backslash read by the needle's states alone (no block of the search); an o
# before the f, which the loop after it does not read back (walked below the f, not taken)
below_loops, walk_below = chains._below_loops, walkbelow.walk_below
ASCII = (1 << 128) - 1  # the bytes below 0x80, as bits
COLONS = whole_match("[^: ]+:[^: ]+:[^ ]")[1:-1]  # a needle led by a broad class
DOTS = (".*bar", ".*\\.[xX][mM][lL]", "[cC][aA][nN][oO][eE]_.*")  # inside a character


@pytest.mark.slow
@pytest.mark.parametrize("pattern", WHOLE + DOTS + ODD)
def test_masks_over_live_blocks_are_the_plain_rows(bundled_vocab, pattern):
    index = build_index(pattern + "()" * 5, bundled_vocab)  # fresh: no row made yet
    for state in index.states[:40]:
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), (pattern, state)
    if pattern in WHOLE:  # the search's start merged the DFA
        assert isinstance(index._walker.merged, Merged), pattern


@pytest.mark.parametrize("pattern", WHOLE[:4] + DOTS[:1])
def test_states_of_one_block_allow_the_same_tokens(bundled_vocab, pattern):
    index = build_index(pattern, bundled_vocab)
    blocks, table = live_blocks(index.byte_dfa.table)
    assert len(table) < len(blocks)
    rows: dict[int, list[int]] = {}
    for state in range(len(blocks)):
        tokens = plain_row(index, state)[0].tolist()
        assert rows.setdefault(int(blocks[state]), tokens) == tokens, (pattern, state)
    live = index.byte_dfa.table >= 0
    assert np.array_equal(table >= 0, live[[list(blocks).index(b) for b in range(len(table))]])


def test_a_block_splits_by_where_its_bytes_lead():
    """Three states read ``a`` alike; 0 and 2 lead to 1 (which reads ``b``), 3 to 4 (which
    reads nothing): 0 and 2 share a block, not 3, though it reads the same bytes."""
    table = np.full((5, 256), -1, dtype=np.int32)
    table[[0, 2, 3], ord("a")] = [1, 1, 4]
    table[1, ord("b")] = 2
    blocks, quotient = live_blocks(table)
    assert blocks.tolist() == [0, 1, 0, 2, 3]
    assert quotient[:, ord("a")].tolist() == [1, -1, 3, -1]
    assert quotient[:, ord("b")].tolist() == [-1, 0, -1, -1]


def plain_blocks(table: np.ndarray) -> list[int]:
    """The live blocks by their definition, over all 256 bytes in plain Python: states split
    by the bytes they read, then by the blocks each byte leads to, until none splits."""
    rows = table.tolist()
    blocks = [tuple(target >= 0 for target in row) for row in rows]
    while True:
        keys = [
            (blocks[s], *(blocks[t] if t >= 0 else None for t in row)) for s, row in enumerate(rows)
        ]
        numbers: dict[tuple, int] = {}
        split = [numbers.setdefault(key, len(numbers)) for key in keys]
        if len(numbers) == len(set(blocks)):
            return split
        blocks = split


@pytest.mark.parametrize("pattern", (*WHOLE[:3], COLONS, "(ab)+x|[0-9a-f]{2}"))
def test_live_blocks_are_those_of_the_definition(bundled_vocab, pattern, monkeypatch):
    """``live_blocks`` reads only the first byte of each run of equal columns
    (``quotient._run_starts``) and keys rows by hashes: its blocks and quotient are those
    the definition gives over every byte; a pair of states is refused (None) exactly where
    the definition parts them (followed pair by pair first in a DFA past ``PAIRS_FIRST``
    states, ``quotient._apart``), a state's ``(s, s)`` where it leaves ``s`` alone."""
    monkeypatch.setattr(quotient, "ROUNDS", 1_000)  # the blocks to the end
    table = build_index(pattern, bundled_vocab).byte_dfa.table
    want = plain_blocks(table)
    for other in range(1, min(len(table), 12)):
        parted = live_blocks(table, (0, other)) is None
        assert parted == (want[0] != want[other]), (pattern, other)
        alone = live_blocks(table, (other, other)) is None
        assert alone == (want.count(want[other]) == 1), (pattern, other)
    found = live_blocks(table, (-1, -1))
    if found is None:
        assert len(set(want)) == len(want), pattern
        return
    blocks, quotient_table = found
    assert blocks.tolist() == want, pattern
    firsts = [want.index(block) for block in range(len(quotient_table))]
    labels = np.array(want + [-1])
    assert np.array_equal(quotient_table, labels[table[firsts]]), pattern


LOOPS_BELOW = (  # a frontier whose nodes lead to a loop reading their paths' bytes
    whole_match("f.*")[1:-1],  # every f, then any byte but a newline
    whole_match("b.*")[1:-1],
)


@pytest.mark.slow
@pytest.mark.parametrize("pattern", LOOPS_BELOW)
def test_loops_below_a_frontier_taken_whole_are_the_plain_rows(bundled_vocab, pattern, monkeypatch):
    taken = []

    def counted(*args):
        found = below_loops(*args)
        taken.append(found[0] is not None)
        return found

    monkeypatch.setattr(chains, "_below_loops", counted)
    monkeypatch.setattr(index_module, "alone_words", lambda *args: None)  # the chain's path
    index = build_index(pattern + "()" * 6, bundled_vocab)
    for state in index.states[:40]:
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), (pattern, state)
    assert any(taken), pattern


def test_a_loops_frontier_is_walked_below_the_nodes_taken_alone(monkeypatch):
    """Below an ``e`` the loop ``[a-z]*`` leaves at a digit (``be1``); a digit after
    letters elsewhere (``md5``: no ``e`` before it) is no part of the start's mask."""
    monkeypatch.setattr(chains, "LOOP_TOKENS", 0)  # a toy frontier: three nodes
    vocab = Vocabulary.from_strings(["e", "ae", "be1", "md5", "m", "5", "x"])
    index = build_index("[a-df-q]*e[a-z]*([0-9][a-z]+)*", vocab)
    words = index._walker.packed(0)
    assert words is not None
    assert np.array_equal(words, packed(plain_row(index, 0)[0], len(vocab)))
    assert [int(t) for t in index.allowed_tokens(0)] == [0, 1, 2, 4]  # e, ae, be1, m


@pytest.mark.slow
def test_a_small_dfa_merges_the_loops_after_a_needle(bundled_vocab):
    """``ANY*(?:f.*o)ANY*``: after ``f`` any byte but a newline is read (quotes too), an
    ``o`` leads to a state alike (accepting): one block, whose loop holds every ``f``'s
    subtree at once (``_below_loops``)."""
    index = build_index(whole_match("f.*o")[1:-1] + "()", bundled_vocab)
    for state in index.states[:12]:
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), state
    assert isinstance(index._walker.merged, Merged)
    assert 0 not in index._rows
    alone = build_index(whole_match("b.*")[1:-1] + "()", bundled_vocab)  # after b: one state
    walker, table = alone._walker, alone.byte_dfa.table
    pair = rowwalk.merge_pair(walker._chain(0), walker.reads_of, table)
    assert pair == (table[0, ord("b")],) * 2 and live_blocks(table, pair) is None


@pytest.mark.slow
def test_pairs_that_no_longer_thin_out_walk_their_tokens_at_once(bundled_vocab, monkeypatch):
    """``ANY*(?:f.o)ANY*``: below every ``f`` the state after it reads any byte but a newline
    (~3,000 tokens under ~650 nodes): the pair walk passes ``BELOW`` and walks the tokens
    left at once (``ENTRY_WALK``), where it gave up; the masks are the plain rows."""
    walked = []

    def counted(vocab, trie, table, nodes, states, safe=0):
        found = walk_below(vocab, trie, table, nodes, states, safe)
        many = len(nodes) > 64 and int(vocab.span_size[nodes].sum()) > walkbelow.TOKEN_WALK
        walked.append(many and found is not None)  # past BELOW at its first level, answered
        return found

    monkeypatch.setattr(walkbelow, "BELOW", 64)  # the pair walk stops early: more states try
    monkeypatch.setattr(index_module, "search_words", lambda *args: None)  # the chain's path
    monkeypatch.setattr(chains, "walk_below", counted)
    for needle in ("f.o", "[a-z]+:[^ ]+"):
        index = build_index(whole_match(needle)[1:-1] + "()" * 3, bundled_vocab)
        for state in index.states[:16]:
            assert np.array_equal(index.bitmask(state), plain_mask(index, state)), (needle, state)
    assert sum(walked) >= 2, walked  # with ENTRY_WALK 0: none


@pytest.mark.parametrize("pattern", (*WHOLE[:3], ODD[0], COLONS))
def test_pairs_told_apart_share_no_block(bundled_vocab, pattern, monkeypatch):
    """``quotient._apart`` says two states fall apart only where the live blocks part them,
    and says it of most pairs they part (a search's loop and its needle's start)."""
    monkeypatch.setattr(quotient, "ROUNDS", 1_000)  # the blocks to the end
    table = build_index(pattern, bundled_vocab).byte_dfa.table
    found = live_blocks(table, (-1, -1))  # None: every state alone (a"b)
    blocks = np.arange(len(table)) if found is None else found[0]
    told = 0
    for one in range(min(len(table), 24)):
        for other in range(one):
            if quotient._apart(table, one, other):
                told += 1
                assert blocks[one] != blocks[other], (pattern, one, other)
    parted = sum(blocks[a] != blocks[b] for a in range(min(len(table), 24)) for b in range(a))
    assert told > parted // 2, (pattern, told, parted)


@pytest.mark.parametrize("pattern", ("\\s*\\d+\\s*", "[^,\\t\\n\\v\\f\\r]+", ".*x[a-z ]*y"))
def test_long_tokens_jump_through_their_states_loops(bundled_vocab, pattern, monkeypatch):
    """``walk_entries`` moves the tokens still walking past the bytes their state reads
    back into itself (``walkbelow._jump``: runs of spaces under ``\\s*``, a line under
    ``.*``); every token it keeps is the one a byte-by-byte walk keeps, and the masks are
    the plain rows."""
    jumped, jump = [], walkbelow._jump

    def counted(table, padded, states, at, left):
        found = jump(table, padded, states, at, left)
        jumped.append(int((found[1] == 0).sum()))  # walked to their end at once
        return found

    index = build_index(pattern + "()" * 3, bundled_vocab)
    table = index.byte_dfa.table
    vocab = packwalk.packed_vocab(index.trie, len(bundled_vocab))
    entries = np.arange(len(vocab.lengths))
    skip = np.zeros_like(entries)
    monkeypatch.setattr(walkbelow, "_jump", counted)
    for state in index.states[:3]:
        starts = np.full(len(entries), state, dtype=np.int64)
        got = walkbelow.walk_entries(vocab, table, entries, starts, skip)
        want = walkbelow._walk_on(table, vocab.padded, starts, vocab.padded_start, vocab.lengths)
        assert sorted(got.tolist()) == np.flatnonzero(want).tolist(), (pattern, state)
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), (pattern, state)
    assert sum(jumped) >= 20, jumped  # runs of spaces, long lines


@pytest.mark.parametrize("needle", (".", "[^/]+/.+", "\\S/\\S|\\$\\S+"))
def test_a_backslash_state_walks_from_its_first_bytes(bundled_vocab, needle, monkeypatch):
    """After a string's backslash (``bfnrt/"`` lead on, any other byte back into the loop)
    the chain's bytes leave out the loop's own letters; such a state is walked from its
    first bytes (``rowwalk.first_bytes``) and answers there, not by its row; its masks
    are the plain rows."""
    walked, first_bytes = [], rowwalk.first_bytes

    def counted(reads, table, chain):
        found = first_bytes(reads, table, chain)
        walked.append(found and reads & ASCII != 0)
        return found

    monkeypatch.setattr(rowwalk, "first_bytes", counted)
    monkeypatch.setattr(index_module, "search_words", lambda *args: None)  # the chain's path
    index = build_index(whole_match(needle)[1:-1] + "()" * 5, bundled_vocab)
    for state in index.states[:24]:
        taken = len(walked)
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), (needle, state)
        if any(walked[taken:]):  # walked from its first bytes: answered there, no row
            assert state not in index._walker._unpacked, (needle, state)
    assert any(walked), needle  # with first_bytes as before (no ASCII byte read): none


def test_a_few_tokens_below_many_pairs_are_walked_at_once(bundled_vocab, monkeypatch):
    """Below a search's every ``f`` (``ANY*(?:f.o)ANY*``: ~650 pairs, ~3,000 tokens, any
    byte leads on) the tokens are walked at once (``SHALLOW``), not level by level; the
    masks are the plain rows (``_unharmed`` off: it takes most of them unwalked)."""
    walked, walk_entries = [], walkbelow.walk_entries

    def counted(vocab, table, entries, states, skip):
        walked.append(len(entries))
        return walk_entries(vocab, table, entries, states, skip)

    monkeypatch.setattr(walkbelow, "BELOW", 10**9)  # no walk at once past BELOW pairs
    monkeypatch.setattr(walkbelow, "SAFE_TOKENS", 10**9)
    monkeypatch.setattr(index_module, "search_words", lambda *args: None)  # the chain's path
    monkeypatch.setattr(walkbelow, "walk_entries", counted)
    index = build_index(whole_match("f.o")[1:-1] + "()" * 7, bundled_vocab)
    for state in index.states[:8]:
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), state
    assert max(walked) > walkbelow.TOKEN_WALK, walked  # with SHALLOW_PAIRS past 645: none


@pytest.mark.parametrize("needle", ("g.*", "y.*"))
def test_below_loops_asks_only_states_reading_a_byte_back(bundled_vocab, monkeypatch, needle):
    """``ANY*(?:g.*)ANY*``'s start: its frontier leads by ``g`` into the loop after it
    (taken whole, ``_below_loops``) and by a backslash into an escape, which reads no
    node's byte back into itself: no chain is asked of it. The masks are the plain rows."""
    asked, taken, below = [], [], chains._below_loops

    def kept(vocab, trie, table, pairs, chain, prefix, chain_at, utf8):
        def chain_of(state):
            asked.append((table, pairs, state))
            return chain_at(state)

        found = below(vocab, trie, table, pairs, chain, prefix, chain_of, utf8)
        taken.append(found[0] is not None)
        return found

    monkeypatch.setattr(chains, "_below_loops", kept)
    monkeypatch.setattr(index_module, "search_words", lambda *args: None)  # the chain's path
    monkeypatch.setattr(index_module, "alone_words", lambda *args: None)
    index = build_index(whole_match(needle)[1:-1] + "()" * 3, bundled_vocab)
    for state in index.states[:12]:
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), state
    assert any(taken), needle
    for table, (nodes, states), state in asked:
        mine = states == state
        assert (table[state, index.trie.byte[nodes[mine]]] == state).any(), (needle, state)
