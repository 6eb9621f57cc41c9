"""A search whose merge into live blocks would be refused is refused without reading the
table where its pair of states parts one byte along, at a byte its chain leaves by
(``rowwalk.parted_by_exits``: ``ANY*(?:[^/]+/.+)ANY*``'s ``/``): no ``live_blocks`` is
made, the masks are the plain rows, and it says "parted" only of pairs that
``quotient.live_blocks`` refuses; searches that merge still do."""

from __future__ import annotations

import pytest

from fsmviz import build_index
from fsmviz.tokens.fast import quotient, rowwalk
from fsmviz.tokens.fast.knownloops import ANY
from tests.test_index_rows import assert_plain_masks

# Tests of the live blocks' refusal, under the loop masks (``knownloops``), which answer these
# patterns' states first: the masks are turned off.
pytestmark = pytest.mark.usefixtures("no_loop_masks")

PARTED = tuple(  # one byte along (``|``, ``;``), two (``%`` and a control byte)
    rf"{ANY}*(?:{needle}){ANY}*" for needle in (r"[^|]+\|[^|]+", "[^;]+;.+", r"\S%\S")
)
MERGED = tuple(rf"{ANY}*(?:{needle}){ANY}*" for needle in ("bar", "[^,]", "q-r"))
FARTHER = rf"{ANY}*(?:\S+@\S+\.\S+){ANY}*"  # parts past EXIT_LEVELS: ``live_blocks`` says


def _blocks_made(monkeypatch) -> list[bool]:
    """Each ``live_blocks`` call the walkers make from now on: whether it merged."""
    made: list[bool] = []

    def counted(table, pair=(0, 0)):
        found = quotient.live_blocks(table, pair)
        made.append(found is not None)
        return found

    monkeypatch.setattr(rowwalk, "live_blocks", counted)
    return made


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PARTED)
def test_a_pair_parted_one_byte_along_reads_no_blocks(bundled_vocab, pattern, monkeypatch):
    made = _blocks_made(monkeypatch)
    index = build_index(pattern + "()" * 3, bundled_vocab)
    assert_plain_masks(index, 12)
    assert index._walker.merged is False, "the merge was not refused"
    assert made == [], made  # refused before the table's blocks were made
    walker = index._walker
    pair = walker._pairs[0]
    assert quotient.live_blocks(walker.byte_dfa.table, pair) is None, pair


@pytest.mark.slow
@pytest.mark.parametrize("pattern", (*MERGED, FARTHER))
def test_pairs_not_parted_at_the_exits_go_to_the_blocks(bundled_vocab, pattern, monkeypatch):
    """A search that merges is not refused; one parting farther along is left to
    ``live_blocks``, which refuses it."""
    made = _blocks_made(monkeypatch)
    index = build_index(pattern + "()" * 3, bundled_vocab)
    assert_plain_masks(index, 6)
    assert made == [pattern != FARTHER], made


@pytest.mark.parametrize("pattern", PARTED + MERGED + (FARTHER,))
def test_parted_pairs_are_refused_by_the_live_blocks(bundled_vocab, pattern):
    """Over the pairs of a state and each of the next few, where the chain of the first
    shows a pair: ``parted_by_exits`` is never True where ``live_blocks`` merges them."""
    walker = build_index(pattern, bundled_vocab)._walker
    table = walker.byte_dfa.table
    chain = walker._chain(0)
    told = 0
    for other in range(1, min(len(table), 16)):
        pair = (0, other)
        if rowwalk.parted_by_exits(chain, pair, walker.reads_of, table):
            told += 1
            assert quotient.live_blocks(table, pair) is None, (pattern, pair)
    assert told, pattern  # some pair is told apart
