"""A byte DFA's states merged where no token can tell them apart.

A token is allowed from a state when the byte DFA reads all its bytes from there (no -1
on the way); where it ends does not matter to a mask. So two states that read the same
bytes, and whose targets for each byte are again two such states, allow the same tokens.
The coarsest such partition (*live blocks*) is found as a DFA is minimised, but starting
from the states' sets of bytes read instead of their acceptance: split the blocks by the
blocks their bytes lead to until no block splits. A block's tokens are then those its
*quotient* (one state a block, ``table[block, byte]`` the block of any member's target)
reads, walked as any byte DFA is (``rowwalk.RowWalker``).

Proof: let ``s ~ t`` (same block). A token of no byte is allowed from both. For a token
``b w``: ``s`` and ``t`` read the same bytes, so both read ``b`` or neither; where they
do, their targets share a block (the partition is stable), and by induction on the
token's length they allow ``w`` alike. So ``b w`` is allowed from ``s`` exactly when it
is from ``t``, and exactly when the quotient reads it from the block of ``s`` (the same
induction, the block's row being a member's row).

Worked example, a JSON Schema ``pattern`` that searches: ``ANY*(?:foo)ANY*`` with
``ANY = [^"\\\\\\x00-\\x1F\\x7F-\\x9F]|\\\\["\\\\/bfnrt]``. Its states before and after
``f``, ``fo`` and ``foo`` each read a string's characters (every state reads ``"`` only
after a backslash); ``f`` leads on through the needle, another letter back to the
start, a backslash into an escape state reading ``"\\/bfnrt``, a lead byte of UTF-8
into a character's states. The needle's four states share a block, their escape states
another, and each kind of character's inner states one more: the quotient is a JSON
string's loop, whose frontier is its few backslashes (``chains.chain_words``), where
the DFA's own chain met every token holding an ``f`` (~700 trie nodes, each walked on).
"""

from __future__ import annotations

import numpy as np

__all__ = ["QUOTIENT_STATES", "live_blocks"]

QUOTIENT_STATES = 1_024
"""DFAs with more states than this are not merged (a round reads the whole table)."""
ROUNDS = 6
"""Splitting rounds, at most: a partition still splitting then is given up. Over the
held-out corpus's 269 patterns, the searches that merge were stable after 3 rounds (4 for
two), and states that fall apart did so within 4."""


def live_blocks(
    table: np.ndarray, pair: tuple[int, int] = (0, 0)
) -> tuple[np.ndarray, np.ndarray] | None:
    """The live blocks of the byte DFA ``table`` (``[states, 256]``, -1: no edge): each
    state's block and the quotient's table (``[blocks, 256]``, same dtype); None where
    the two states of ``pair`` fall apart (blocks only split: known as soon as they do;
    ``(s, s)``: where ``s`` is alone; ``(-1, -1)``: where every state is), the DFA has
    more than ``QUOTIENT_STATES`` states, or it is still splitting after ``ROUNDS``
    rounds.

    ``(ab)+`` written with a third state: 0 and 2 read ``a`` into 1, which reads ``b``
    into 2: states 0 and 2 share a block.

    >>> table = np.full((3, 256), -1, dtype=np.int32)
    >>> table[0, ord("a")], table[1, ord("b")], table[2, ord("a")] = 1, 2, 1
    >>> blocks, quotient = live_blocks(table)
    >>> blocks.tolist(), quotient[:, [ord("a"), ord("b")]].tolist()
    ([0, 1, 0], [[1, -1], [-1, 0]])
    >>> live_blocks(table, (1, 1)) is None, live_blocks(table, (0, 1)) is None  # 1 is alone
    (True, True)
    >>> table[2, ord("b")] = 0  # now state 2 reads b as well: no two states alike
    >>> live_blocks(table) is None
    True
    """
    states = len(table)
    if states > QUOTIENT_STATES or not states:
        return None
    starts = _run_starts(table)
    small = table[:, starts]  # each other column repeats the one before it
    if states > PAIRS_FIRST and 0 <= pair[0] != pair[1] and _apart(small, *pair):
        return None
    keys = (small >= 0) @ _KEYS[1 : small.shape[1] + 1]  # keyed by the bytes read
    count = len(set(keys.tolist()))
    led = np.column_stack((np.arange(states), small))  # each state, then its targets
    keyed = np.zeros(states + 1, dtype=np.int64)  # each state's key, then no edge's (0)
    for _ in range(ROUNDS):
        if not _together(keys, count, pair):
            return None
        keyed[:states] = keys
        split = keyed.take(led) @ _KEYS[: led.shape[1]]  # its key and its targets' keys
        split ^= split >> 29  # not linear: else keys of paths in another order cancel out
        split_count = len(set(split.tolist()))
        if split_count == count:  # stable: no block split (checked exactly)
            return _quotient(small, starts, keys, table.dtype)
        keys, count = split, split_count
    return None


PAIRS_FIRST = 64
"""In a DFA of more states than this, the two states of a pair are first followed pair by
pair (``_apart``, over the runs' columns): a round of the refinement reads every state
(158: ~80 µs over all 256 columns), where the pairs their bytes lead to are few
(``ANY*(?:([^: ]+):([^: ]+)...)ANY*``'s loop and needle fell apart in round 4: ~0.35 ms,
now ~0.1)."""
PAIR_LEVELS = 6
"""Levels of pairs ``_apart`` follows, at most."""


def _apart(table: np.ndarray, one: int, other: int) -> bool:
    """Whether states ``one`` and ``other`` of ``table`` (or of its runs' columns,
    ``_run_starts``) surely fall apart: a pair of states the same bytes lead them to (level
    by level, at most ``PAIR_LEVELS``) reads different bytes. States alike lead by each
    byte to states alike, which read the same bytes; so such a pair is never alike, nor are
    ``one`` and ``other``. False: not known (none found).

    >>> table = np.full((4, 256), -1, dtype=np.int32)
    >>> table[0, ord("a")], table[1, ord("a")], table[2, ord("b")] = 2, 3, 0
    >>> _apart(table, 0, 1), _apart(table, 2, 3)  # 2 reads b, 3 nothing; 1 after a
    (True, True)
    >>> table[3, ord("b")] = 1
    >>> _apart(table, 0, 1)  # 0 and 1 alike: a -> (2, 3), b -> (0, 1) again
    False
    """
    states = len(table)
    ones, others = [one], [other]
    seen: set[int] = set()
    for _ in range(PAIR_LEVELS):
        rows = table[ones + others]  # one gather; ``left`` above ``right``
        left, right = rows[: len(ones)], rows[len(ones) :]
        if ((left >= 0) != (right >= 0)).any():
            return True
        differ = left != right  # (both read the byte: both -1 or neither)
        keys = left[differ].astype(np.int64) * states + right[differ]
        new = set(keys.tolist()) - seen
        if not new:
            return False
        seen |= new
        ones, others = [key // states for key in new], [key % states for key in new]
    return False


_KEYS = np.random.default_rng(20261130).integers(
    1, 1 << 62, size=1 + QUOTIENT_STATES, dtype=np.int64
)
"""Random weights: a row of ints is keyed by its weighted sum (wrapping), so that equal
rows share a key. A round of ``live_blocks`` keys each state by its key and its targets'
(a gather and a product, its bits folded: no renumbering of the blocks a round, which cost
a dict of the states each), and numbers the blocks once the count of keys stops growing;
that partition is checked exactly (``_quotient``), so a collision costs a merge, never a
wrong answer (``tests/test_quotient_keys.py``)."""


def _together(keys: np.ndarray, count: int, pair: tuple[int, int]) -> bool:
    """Whether the states of ``pair`` share a key (``count``: how many keys there are),
    with another state where they are one (-1: any two states do). States of one block
    share a key, so keys that differ part them exactly."""
    one, other = pair
    if one < 0:
        return count < len(keys)
    if one != other:
        return bool(keys[one] == keys[other])
    return int(np.count_nonzero(keys == keys[one])) > 1


def _run_starts(table: np.ndarray) -> np.ndarray:
    """The bytes whose column in ``table`` differs from the one before (byte 0 first):
    each other column equals its run's first, so these decide the bytes read, the pairs
    they lead to and a partition's stability exactly (a JSON string's ~20-30 runs; a hash
    of all 256 columns to find the distinct ones cost ~60-100 µs at a fresh table).

    >>> table = np.full((2, 256), -1, dtype=np.int32)
    >>> table[0, ord("a") : ord("z") + 1] = 1
    >>> _run_starts(table).tolist() == [0, ord("a"), ord("z") + 1]
    True
    """
    changes = (table[:, 1:] != table[:, :-1]).any(axis=0)
    return np.flatnonzero(np.concatenate(([True], changes)))


def _quotient(
    small: np.ndarray, starts: np.ndarray, keys: np.ndarray, dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray] | None:
    """Each state's block, numbered as first met, and the quotient's table (of ``dtype``),
    where the blocks of equal ``keys`` are stable, checked exactly on ``small`` (the
    columns of the runs' first bytes, ``starts``: ``_run_starts``): each state's targets'
    blocks, -1 kept, those of its block's first state; else None (two keys collided). The
    quotient's row of a block is its first state's, each run's column repeated."""
    seen: dict[int, int] = {}
    blocks, first = [], []
    for at, key in enumerate(keys.tolist()):
        number = seen.setdefault(key, len(first))
        if number == len(first):
            first.append(at)
        blocks.append(number)
    labels = np.full(len(small) + 1, -1, dtype=np.intp)  # each state's block, -1 after
    labels[:-1] = blocks
    mapped = labels.take(small)
    rows = mapped[first]
    if (mapped != rows[labels[:-1]]).any():
        return None  # a collision of keys merged rows that differ
    column = np.zeros(256, dtype=np.intp)  # each byte's run
    column[starts[1:]] = 1
    return labels[:-1], rows[:, np.cumsum(column, out=column)].astype(dtype)
