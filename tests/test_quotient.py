"""The live blocks of a byte DFA (``fsmviz.tokens.fast.quotient``): states in one block allow
the same tokens, and a search's packed masks made over the blocks' quotient
(``rowwalk.Merged``) are the plain pair walk's rows packed, bit for bit, on the real 49k
vocabulary."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import build_index
from fsmviz.schema.patterns import whole_match
from fsmviz.tokens.fast.quotient import live_blocks
from fsmviz.tokens.fast.rowwalk import Merged
from tests.test_index_rows import plain_row
from tests.test_packed_masks import expected

SEARCHES = (  # JSON Schema patterns not anchored: a string's characters around a needle
    "foo",
    "world\\.json",
    "https://orcid\\.org/[0-9]{4}-[0-9]{4}",
    "[nN][oO][nN][eE]",
    "\\{\\{matrix",
    "\\wcole",  # UTF-8 letters lead on, others not
    "aaa*",
)
WHOLE = tuple(whole_match(needle)[1:-1] for needle in SEARCHES)
ODD = tuple(whole_match(needle)[1:-1] for needle in ('a"b', "x\\\\y"))  # a raw quote or
# backslash: read by the needle's states alone (no block of the search)
DOTS = (".*bar", ".*\\.[xX][mM][lL]", "[cC][aA][nN][oO][eE]_.*")  # inside a character


@pytest.mark.slow
@pytest.mark.parametrize("pattern", WHOLE + DOTS + ODD)
def test_masks_over_live_blocks_are_the_plain_rows(bundled_vocab, pattern):
    index = build_index(pattern + "()" * 5, bundled_vocab)  # fresh: no row made yet
    for state in index.states[:40]:
        assert np.array_equal(index.bitmask(state), expected(index, state)), (pattern, state)
    if pattern in WHOLE:  # the search's start merged the DFA
        assert isinstance(index._walker._merged, Merged), pattern


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
