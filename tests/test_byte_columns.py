"""``ByteColumns.of`` (columns hashed by one product, then checked) against its definition:
two bytes share a class exactly when every state sends them to the same place, and classes
are numbered by their smallest byte."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import compile_regex
from fsmviz.automaton.bytedfa import ByteColumns, _hashed_columns, to_bytes


def classes_by_definition(table: np.ndarray) -> tuple[list[int], list[int]]:
    byte_class, smallest = [], []
    for byte in range(table.shape[1]):
        same = [c for c, b in enumerate(smallest) if (table[:, b] == table[:, byte]).all()]
        if not same:
            same = [len(smallest)]
            smallest.append(byte)
        byte_class.append(same[0])
    return byte_class, smallest


def assert_follows_definition(columns: ByteColumns, table: np.ndarray) -> None:
    byte_class, smallest = classes_by_definition(table)
    assert columns.byte_class.tolist() == byte_class
    assert columns.smallest.tolist() == smallest


@pytest.mark.parametrize(
    "pattern",
    [r"[0-9]+\.[0-9]+", r'"([^"\\\x00-\x1F]|\\["\\/bfnrt]){0,8}"', r"(é|a|[^a-😀]|.)x", "日本|x"],
)
def test_columns_of_real_tables(pattern: str) -> None:
    table = to_bytes(compile_regex(pattern)).table
    assert _hashed_columns(table) is not None  # the fast path answers for these
    assert_follows_definition(ByteColumns.of(table), table)


def test_columns_of_random_tables_with_many_equal_columns() -> None:
    rng = np.random.default_rng(3)
    for _ in range(30):
        rows = int(rng.integers(1, 40))
        kinds = rng.integers(-1, 4, size=(rows, int(rng.integers(1, 12))), dtype=np.int32)
        table = kinds[:, rng.integers(0, kinds.shape[1], 256)]  # few distinct columns
        table[rng.random(table.shape) < 0.002] = 5  # and now and then one column apart
        assert_follows_definition(ByteColumns.of(table), table)


def test_columns_too_large_for_exact_sums_are_compared() -> None:
    table = np.full((200, 256), -1, dtype=np.int32)
    table[:, ::2] = 2**31 - 1  # sums could pass 2**53: no hashing
    table[7, 10] = 3
    assert _hashed_columns(table) is None
    assert_follows_definition(ByteColumns.of(table), table)


def test_columns_of_a_table_past_the_weights_drawn_once() -> None:
    """A table whose entries leave less room than the weights drawn once
    (``_WEIGHT_BOUND``) draws its own, smaller ones: still hashed, still the definition."""
    from fsmviz.automaton.bytedfa import _WEIGHT_BOUND

    rng = np.random.default_rng(5)
    table = rng.integers(0, 3, size=(100, 8), dtype=np.int32)[:, rng.integers(0, 8, 256)]
    table[0, 200] = 2**20  # 100 rows x 2**20: room for weights below ~2**26 only
    assert _WEIGHT_BOUND > 2**53 // (100 * 2**20)
    assert _hashed_columns(table) is not None
    assert_follows_definition(ByteColumns.of(table), table)
