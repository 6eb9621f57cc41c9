"""Shortcuts of the whole index's node-set walk (``fsmviz.tokens.fast.successors``), each
held to its plain definition on the real 49k vocabulary: the class trie not asked for
where the columns are many (``closure_pairs``), and the deep tail walked pair by pair
(``_few_below``, ``_pairs_below``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fsmviz import build_index
from fsmviz.schema.convert import regex_from_schema
from fsmviz.tokens.fast import successors
from fsmviz.tokens.fast.classwalk import MERGED_CLASSES
from fsmviz.tokens.fast.successors import BytePartitions, by_classes, closure_pairs

ROOT = Path(__file__).resolve().parents[1]


def _schema(path: Path) -> str:
    return regex_from_schema(path.read_text())


SCHEMA_22 = ROOT / "tests" / "cases" / "schema_22_fields.json"
ORDER = ROOT / "bench" / "schemas" / "api-payload" / "order.json"
CLASS_PATTERNS = [
    r"[^\n]{1,20}",  # few classes: the class trie
    r'"[^"\n]{0,12}"',
    r"([A-Za-z]{1,12} ){2,10}[A-Za-z]{1,12}\.",
    "".join(f"{c}?" for c in "abcdefghijklmnopqrstuvwxyzABCDEF"),  # 33 column classes
    "".join(f"{c}?" for c in "abcdefghijklmnopqrstuvwxyzABCD"),  # 31: asked, too many
]


@pytest.mark.parametrize("pattern", [*CLASS_PATTERNS, SCHEMA_22])
def test_closure_pairs_asks_for_classes_only_below_merged_classes(
    pattern, bundled_vocab, monkeypatch
):
    """``closure_pairs`` asks ``by_classes`` exactly where the partitions count fewer
    column classes than ``MERGED_CLASSES``; where it does not ask, ``by_classes`` would
    have answered None, so the pairs are the same."""
    if isinstance(pattern, Path):
        pattern = _schema(pattern)
    index = build_index(pattern, bundled_vocab)
    table, trie = index.byte_dfa.table, index.trie
    partitions = BytePartitions.of(table)
    asked = []
    plain = successors.by_classes
    monkeypatch.setattr(successors, "by_classes", lambda *a: asked.append(1) or plain(*a))
    starts = list(range(len(table)))
    found = closure_pairs(trie, table, starts, partitions)
    assert bool(asked) == (partitions.classes < MERGED_CLASSES)
    if not asked:
        assert by_classes(trie, table) is None
    expected = successors.successor_pairs(trie, table, starts, partitions)
    np.testing.assert_array_equal(np.stack(found), np.stack(expected))


def test_the_partitions_count_the_columns(bundled_vocab):
    """``BytePartitions.classes`` is the number of distinct columns of the table."""
    for pattern in CLASS_PATTERNS:
        table = build_index(pattern, bundled_vocab).byte_dfa.table
        distinct = len({column.tobytes() for column in np.ascontiguousarray(table.T)})
        assert BytePartitions.of(table).classes == distinct


TAIL_PATTERNS = [
    SCHEMA_22,
    ORDER,
    r"([A-Za-z]{1,12} ){2,10}[A-Za-z]{1,12}\.",
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    r'\{"name": "[A-Za-z ]{1,30}", "age": \d{1,3}\}',
    r"( {0,8}[a-z]{1,4}\n){1,6}",  # runs of spaces: a long tail
]


@pytest.mark.parametrize("pattern", TAIL_PATTERNS)
def test_the_pair_tail_is_the_node_set_walk(pattern, bundled_vocab, monkeypatch):
    """The node-set walk with its deep tail walked pair by pair gives the pairs it gives
    walking node sets to the end, whether the tail begins where the walk chooses, at
    the root (every pair walked) or never."""
    if isinstance(pattern, Path):
        pattern = _schema(pattern)
    index = build_index(pattern, bundled_vocab)
    table, trie = index.byte_dfa.table, index.trie
    starts = list(range(len(table)))
    partitions = BytePartitions.of(table)
    tails = []
    plain = successors._pairs_below
    monkeypatch.setattr(successors, "_pairs_below", lambda *a: tails.append(1) or plain(*a))
    chosen = successors.successor_pairs(trie, table, starts, partitions)
    assert tails, "the walk ends pair by pair"
    monkeypatch.setattr(successors, "TAIL_PAIRS", -1)
    never = successors.successor_pairs(trie, table, starts, partitions)
    np.testing.assert_array_equal(np.stack(chosen), np.stack(never))
    if len(starts) <= 64:  # every pair from the root: still few for a few dozen states
        monkeypatch.setattr(successors, "TAIL_PAIRS", 1 << 40)
        monkeypatch.setattr(successors, "TAIL_TOKENS", 1 << 40)
        early = successors.successor_pairs(trie, table, starts, partitions)
        np.testing.assert_array_equal(np.stack(early), np.stack(never))


def _plain_partitions(table: np.ndarray) -> tuple[list[tuple[int, ...]], float]:
    """Each state's partition by its definition (for every byte, the smallest byte with
    the same target, -1 where none), and the wide states per distinct wide partition."""
    rows = []
    for row in table.tolist():
        first: dict[int, int] = {}
        rows.append(tuple(-1 if t < 0 else first.setdefault(t, b) for b, t in enumerate(row)))
    wide = [sum(t >= 0 for t in row) >= successors.WIDE for row in table.tolist()]
    kinds = {rows[s] for s in range(len(rows)) if wide[s]}
    return rows, sum(wide) / max(len(kinds), 1)


@pytest.mark.parametrize("pattern", [SCHEMA_22, ORDER, *CLASS_PATTERNS, r"[a-z]{2}[a-m]{2}!"])
def test_the_partitions_are_their_definition(pattern, bundled_vocab):
    """``BytePartitions.of`` (classes by column, rows numbered by hash) gives each state
    its partition, equal partitions one number, and the sharing, as defined."""
    if isinstance(pattern, Path):
        pattern = _schema(pattern)
    table = build_index(pattern, bundled_vocab).byte_dfa.table
    parts = BytePartitions.of(table)
    rows, sharing = _plain_partitions(table)
    assert [tuple(parts.reps[p]) for p in parts.of_state.tolist()] == rows
    assert len(parts.reps) == len(set(rows))
    assert parts.sharing == pytest.approx(sharing)


def test_same_rows_numbers_equal_rows_alike(monkeypatch):
    """``_same_rows`` gives equal rows one number and each number an equal first row,
    by hash past ``FEW_GROUPS`` rows; with weights that collide (all ones: rows with
    one sum) it falls back and still tells rows apart."""
    rng = np.random.default_rng(7)
    for rows_count in (5, successors.FEW_GROUPS + 1, 700):
        kinds = rng.integers(-1, 12, size=(rows_count // 3 + 1, 12)).astype(np.int32)
        rows = kinds[rng.integers(0, len(kinds), rows_count)]
        distinct = len({row.tobytes() for row in rows})
        for weights in (successors._ROW_WEIGHTS, np.ones(257, dtype=np.int64)):
            monkeypatch.setattr(successors, "_ROW_WEIGHTS", weights)
            ids, first = successors._same_rows(rows)
            assert len(first) == distinct
            np.testing.assert_array_equal(rows[first][ids], rows)
            np.testing.assert_array_equal(first, np.sort(first))  # numbered by first rows
            np.testing.assert_array_equal(ids[first], np.arange(len(first)))


@pytest.mark.parametrize("pattern", [SCHEMA_22, *CLASS_PATTERNS])
def test_edge_counts_and_main_groups_are_their_definitions(pattern, bundled_vocab):
    """``edge_counts`` (set bits of the flags' words) is each row's count of edges, the
    table's and a cut table's (a width not of whole words); ``_WholeSubtrees``' main
    group of each partition is its most frequent group (the smallest, on a tie)."""
    if isinstance(pattern, Path):
        pattern = _schema(pattern)
    table = build_index(pattern, bundled_vocab).byte_dfa.table
    for cut in (table, table[:, :100]):
        np.testing.assert_array_equal(successors.edge_counts(cut), (cut >= 0).sum(axis=1))
    parts = BytePartitions.of(table)
    whole = successors._WholeSubtrees.of(None, table, parts)
    for p, row in enumerate(parts.reps.tolist()):
        counts: dict[int, int] = {}
        for rep in row:
            if rep >= 0:
                counts[rep] = counts.get(rep, 0) + 1
        if whole.group[p] < 0:
            assert max(counts.values(), default=0) < successors.WIDE
            continue
        largest = min(counts, key=lambda rep: (-counts[rep], rep))
        bits = np.unpackbits(whole.main[whole.group[p]].view(np.uint8), bitorder="little")
        assert np.flatnonzero(bits).tolist() == [b for b, r in enumerate(row) if r == largest]


def test_numbered_is_unique_with_inverse(monkeypatch):
    """``arrays.numbered`` (a flag per possible value where they are dense) gives
    ``np.unique``'s sorted values and inverse, dense or sparse, and for no values."""
    from fsmviz import arrays

    rng = np.random.default_rng(3)
    cases = [rng.integers(0, top, size) for top, size in ((50, 200), (5_000, 300), (10**9, 40))]
    for values in [*cases, np.zeros(0, dtype=np.int64)]:
        expected = np.unique(values, return_inverse=True)
        for span in (arrays.DENSE_SPAN, 0, 10**12):  # as chosen, always sorted, always flags
            monkeypatch.setattr(arrays, "DENSE_SPAN", span)
            if span == 10**12 and len(values) and values.max() > 10**6:
                continue  # a flag per value up to 10**9: too large to try
            keys, inverse = arrays.numbered(values)
            np.testing.assert_array_equal(keys, expected[0])
            np.testing.assert_array_equal(inverse, expected[1].reshape(-1))


URL = r"[^:]+://[^:/]+(:[0-9]+)?(/[^?#/]+)*(\?([^=#&]+=[^=#&]+)(&([^=#&]+=[^=#&]+))*)?(#.+)?"
"""A URL's byte DFA: 237 states, 233 wide, each telling a few bytes apart its own way."""


@pytest.mark.parametrize(
    ("pattern", "starts"),
    [(URL, 64), (r"[^:]+://[^:/]+(:[0-9]+)?(/[^?#/]+)*", 4), (r"[^a]+a[^b]+b[^c]*c", 8)],
)
def test_wide_states_past_max_starts_walk_the_dawg_in_turns(
    pattern, starts, bundled_vocab, monkeypatch
):
    """More wide states than ``dawg.MAX_STARTS`` that share no partition go over the
    DAWG, ``MAX_STARTS`` a walk (``index._apart``), and find the pairs the plain walks
    find: the node-set walk and the pair walk (``index._walk``, on the smaller DFAs)."""
    from fsmviz.tokens import index as index_module
    from fsmviz.tokens.fast import dawg

    monkeypatch.setattr(dawg, "MAX_STARTS", starts)
    index = build_index(pattern, bundled_vocab)
    table = index.byte_dfa.table
    todo = list(range(len(table)))
    wide = successors.edge_counts(table) >= successors.WIDE
    assert wide.sum() > starts and not index_module._shared(index, successors.edge_counts(table))
    taken, apart = [], index_module._apart
    monkeypatch.setattr(index_module, "_apart", lambda *a: taken.append(a) or apart(*a))
    found = index_module._successor_pairs(index, todo, None)
    assert len(taken) == 1
    expected = closure_pairs(index.trie, table, todo, index._partitions(), None)
    if len(table) < 100:
        (origin, _, reached), _ = index_module._walk(index.trie, table, todo)
        expected = successors.distinct_pairs(origin, reached, len(table))
    for got, want in zip(found, expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("pattern", [r"\s*\d+\s*", r" *-?[0-9]+ *", r"-*[0-9]+-*"])
def test_deep_pair_walks_go_over_the_dawg(pattern, bundled_vocab, monkeypatch):
    """A pair walk from few starts where a state loops on two bytes or more stops past
    ``index.DEEP_ROUNDS`` rounds (whitespace runs keep a few pairs alive for ~80) and
    goes over the DAWG, with the plain pair walk's pairs."""
    from fsmviz.tokens import index as index_module
    from fsmviz.tokens.fast import dawg

    index = build_index(pattern, bundled_vocab)
    table = index.byte_dfa.table
    todo = list(range(len(table)))
    (origin, _, reached), rounds = index_module._walk(index.trie, table, todo)
    assert rounds > index_module.DEEP_ROUNDS and index_module._most_self_bytes(table) >= 2
    assert index_module._walk(index.trie, table, todo, deepest=index_module.DEEP_ROUNDS) is None
    assert index_module._walk(index.trie, table, todo, deepest=rounds)[1] == rounds
    taken, walk = [], dawg.dawg_successor_pairs
    monkeypatch.setattr(dawg, "dawg_successor_pairs", lambda *a: taken.append(a) or walk(*a))
    found = index_module._successor_pairs(index, todo, None)
    assert len(taken) == 1
    expected = successors.distinct_pairs(origin, reached, len(table))
    for got, want in zip(found, expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("pattern", [r"(\w+,){8}\w+", r"([^;]+;){6}[^;]+"])
def test_few_states_that_loop_widely_go_over_the_dawg_shared_or_not(
    pattern, bundled_vocab, monkeypatch
):
    """At most ``dawg.MAX_STARTS`` states, one looping on ``WIDE`` bytes or more, go over
    the DAWG without their partitions computed, though these share them, and find the
    plain pair walk's pairs."""
    from fsmviz.tokens import index as index_module
    from fsmviz.tokens.fast import dawg

    index = build_index(pattern, bundled_vocab)
    table = index.byte_dfa.table
    todo = list(range(len(table)))
    assert len(todo) <= dawg.MAX_STARTS and index_module._most_self_bytes(table) >= successors.WIDE
    assert index_module._shared(index, successors.edge_counts(table))
    fresh = index_module.TokenIndex(index.dfa, index.byte_dfa, bundled_vocab, index.trie)
    taken, walk = [], dawg.dawg_successor_pairs
    monkeypatch.setattr(dawg, "dawg_successor_pairs", lambda *a: taken.append(a) or walk(*a))
    found = index_module._successor_pairs(fresh, todo, None)
    assert len(taken) == 1 and fresh._byte_partitions is None
    (origin, _, reached), _ = index_module._walk(index.trie, table, todo)
    expected = successors.distinct_pairs(origin, reached, len(table))
    for got, want in zip(found, expected, strict=True):
        np.testing.assert_array_equal(got, want)
