"""``quotient.live_blocks`` keys each state by a hash of its key and its targets' keys a
round, and numbers the blocks only once the count of keys stops growing: the blocks it
gives are those of the definition (``tests/test_quotient.plain_blocks``), and where keys
collide (forced here), the exact check on the runs' columns refuses the partition rather
than give blocks that a token could tell apart."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz.schema.patterns import whole_match
from fsmviz.tokens.fast import quotient
from fsmviz.tokens.fast.quotient import live_blocks
from tests.test_quotient import plain_blocks

NEEDLES = ("[^ ]", "1.0", "f.*o", "k[a-z]+", "(ab)+c")  # searches; a needle with a loop


def _tables() -> list[np.ndarray]:
    """Search DFAs and a few small random ones (columns in runs, as bytes of a class)."""
    vocab = Vocabulary.from_strings(["a"])
    tables = [build_index(whole_match(n)[1:-1], vocab).byte_dfa.table for n in NEEDLES]
    rng = np.random.default_rng(48)
    for _ in range(300):
        states = int(rng.integers(2, 10))
        table = np.full((states, 256), -1, dtype=np.int32)
        for byte in rng.integers(0, 255, size=int(rng.integers(1, 5))):
            table[:, byte : byte + 2] = rng.integers(-1, states, size=(states, 1))
        tables.append(table)
    return tables


TABLES = _tables()


def _checked(table: np.ndarray) -> None:
    """``live_blocks`` of every pair it is asked with, held to the definition."""
    want = plain_blocks(table)
    found = live_blocks(table, (-1, -1))
    if found is not None:
        blocks, quotient_table = found
        assert blocks.tolist() == want
        firsts = [want.index(block) for block in range(len(quotient_table))]
        assert np.array_equal(quotient_table, np.array([*want, -1])[table[firsts]])
    for other in range(1, min(len(table), 8)):
        if live_blocks(table, (0, other)) is not None:
            assert want[0] == want[other]


def test_blocks_keyed_by_hashes_are_those_of_the_definition(monkeypatch):
    monkeypatch.setattr(quotient, "ROUNDS", 1_000)  # to the end
    merged = 0
    for table in TABLES:
        _checked(table)
        merged += live_blocks(table, (-1, -1)) is not None
    assert merged > len(TABLES) // 4


@pytest.mark.parametrize("weights", ("ones", "low bits"))
def test_colliding_keys_are_refused_not_merged(monkeypatch, weights):
    """With weights that make keys collide (every weight 1: rows of the same sum of targets'
    keys; or weights whose low bits alone differ), ``live_blocks`` may refuse more, but
    what it gives is still the definition's blocks: its exact check holds."""
    monkeypatch.setattr(quotient, "ROUNDS", 1_000)
    keys = np.ones_like(quotient._KEYS)
    if weights == "low bits":
        keys = (np.arange(len(keys), dtype=np.int64) % 3) << 62
    monkeypatch.setattr(quotient, "_KEYS", keys)
    refused = 0
    for table in TABLES:
        _checked(table)
        refused += live_blocks(table, (-1, -1)) is None and len(set(plain_blocks(table))) < len(
            table
        )
    assert refused  # the collisions happened, and were caught
