"""`to_bytes` stamps a whole group of states sharing a template at once; held here to the
state-by-state algorithm it replaced (kept below as the oracle): for every pattern the two
byte DFAs have the same number of states, the character states keep their numbers, and the
tables are isomorphic with equal accepting flags."""

from __future__ import annotations

import contextlib
import json
from collections import deque
from pathlib import Path

import numpy as np
import pytest

from bench.index_bench import benchmark_patterns
from fsmviz import compile_regex
from fsmviz.automaton import bytedfa
from fsmviz.automaton.bytedfa import _SLOT, _TEMPLATES, ByteDfa, _char_table, _Template, to_bytes
from fsmviz.automaton.dfa import Dfa
from fsmviz.automaton.syntax import RegexError

SEEDS = Path(__file__).parent / "cases" / "seed_regexes.json"

EXTRA = [
    "[一-龥]+", "(?s).+", '[^"\\\\]*', "[😀-🙏]+x", "[\U0001f300-\U0001faff]{1,3}",
    "[^a-z]+", "[^\\x00-\\x7f]*", "(?i)straße|kelvin|σ+", "(?i)[a-zé]+", "(日本|東京)[0-9]{2}",
    "(😀|🎉)+", ".{2,3}", "[\\u0080-\\u07ff]b|[\\u0800-\\uffff]c", "[é-ü]|[Ā-ſ]+",
    "[\\ud7f0-\\ue010]+", "[^\\u4e00]+\\u4e00", '"([^"\\\\\\x00-\\x1f]|\\\\["\\\\/bfnrt])*"',
    "(α|β|γ|δ|ε)+[一-龥]?(😀|x)", "\\w+", "[^\\s]+ [^\\d]+",
    "a[\\u0080-\\u00bf]x|b[\\u0080-\\u00be]x",  # two rows apart only at byte 0xBF
    "a[\\u0080-\\u00bf]x|b[\\u0081-\\u00bf]x",  # ... only at byte 0x80
    "(日本語|한국어|русский|ελληνικά|עברית|हिन्दी|café|😀x)+",  # many shapes, 1-3 rows deep
    "[a\\ud800]+b", "[a\\ud800-\\udfffé]+", "(?s)[^\\ud800]{2}",  # lone surrogates: no bytes
]  # fmt: skip


def _patterns() -> list[str]:
    seeds = json.loads(SEEDS.read_text())["regexes"]
    return [*seeds.values(), benchmark_patterns()["schema_22_fields"][0], *EXTRA]


def oracle_to_bytes(dfa: Dfa) -> ByteDfa:
    """THE ORACLE: `to_bytes` as it was before group stamping (commit 018abd2), one state at a
    time, each stamped row hash-consed through a dict. It shares `_char_table` and
    `_Template` with the module (those did not change); only the stamping is its own."""
    ranges = [cls.ranges(dfa.mentioned) for cls in dfa.classes]
    chars = _char_table(dfa, ranges)
    ascii_class = np.full(0x80, len(ranges), dtype=np.intp)
    wide: dict[int, list[tuple[int, int]]] = {}
    for k, class_ranges in enumerate(ranges):
        for lo, hi in class_ranges:
            if lo <= 0x7F:
                ascii_class[lo : min(hi, 0x7F) + 1] = k
            if hi > 0x7F:
                wide.setdefault(k, []).append((max(lo, 0x80), hi))
    table = np.full((dfa.num_states, 256), -1, dtype=np.int32)
    table[:, :0x80] = chars[:, ascii_class]
    rows: list[np.ndarray] = []
    interned: dict[bytes, int] = {}

    def intern(row: np.ndarray) -> int:
        key = row.tobytes()
        if key not in interned:
            interned[key] = len(table) + len(rows)
            rows.append(row)
        return interned[key]

    for state, targets in enumerate(chars[:, list(wide)].tolist()):
        pieces = sorted(
            (lo, hi, t)
            for spans, t in zip(wide.values(), targets, strict=True)
            if t >= 0
            for lo, hi in spans
        )
        if not pieces:
            continue
        slots = {target: _SLOT + k for k, target in enumerate(dict.fromkeys(t for *_, t in pieces))}
        shape = tuple((lo, hi, slots[target]) for lo, hi, target in pieces)
        template = _TEMPLATES.get_or_build(shape, lambda shape=shape: _Template.of(shape))
        values = np.full(len(template.rows) + len(slots) + 1, -1, dtype=np.int32)
        values[len(template.rows) : -1] = list(slots)
        for j, codes in enumerate(template.rows):
            values[j] = intern(values[codes])
        table[state, 0x80:] = values[template.lead_row]  # code -1: the last cell, -1
    accepting = np.zeros(len(table) + len(rows), dtype=bool)
    accepting[list(dfa.accepting)] = True
    return ByteDfa(np.vstack([table, *rows]), accepting, dfa.num_states)


def assert_isomorphic(ours: ByteDfa, theirs: ByteDfa) -> None:
    """Same size, and a bijection fixing every character state (0 .. n-1 keep their numbers)
    that carries every byte edge and accepting flag of one table onto the other."""
    assert ours.num_char_states == theirs.num_char_states
    assert ours.table.shape == theirs.table.shape
    n = ours.num_char_states
    mapping = dict(zip(range(n), range(n), strict=True))
    todo = deque(range(n))
    while todo:
        a = todo.popleft()
        b = mapping[a]
        assert ours.accepting[a] == theirs.accepting[b], (a, b)
        pairs = zip(ours.table[a].tolist(), theirs.table[b].tolist(), strict=True)
        for byte, (x, y) in enumerate(pairs):
            assert (x < 0) == (y < 0), (a, b, byte)
            if x < 0:
                continue
            if x not in mapping:
                assert x >= n and y >= n, (a, b, byte, x, y)
                mapping[x] = y
                todo.append(x)
            assert mapping[x] == y, (a, b, byte, x, y)
    assert len(mapping) == ours.num_states  # every state reached from some character state
    assert len(set(mapping.values())) == theirs.num_states  # and the map is one-to-one


@pytest.mark.parametrize("pattern", _patterns())
def test_group_stamping_matches_the_oracle(pattern):
    dfa = compile_regex(pattern)
    ours = to_bytes(dfa)
    assert_isomorphic(ours, oracle_to_bytes(dfa))
    assert ours.table.dtype == np.int32
    assert np.array_equal(to_bytes(dfa).table, ours.table)  # deterministic


def test_the_check_catches_a_lost_edge():
    """The comparison is not vacuous: one byte edge gone and it fails."""
    dfa = compile_regex("[一-龥]+x")
    ours = to_bytes(dfa)
    table = ours.table.copy()
    state, byte = np.argwhere(table[dfa.num_states :] >= 0)[0]
    table[dfa.num_states + state, byte] = -1
    broken = ByteDfa(table, ours.accepting, ours.num_char_states)
    with pytest.raises(AssertionError):
        assert_isomorphic(broken, oracle_to_bytes(dfa))


@pytest.mark.parametrize(
    "pattern", [*_patterns(), ".*a", ".*[0-9]{3}", ".*(error|warning): [A-Za-z ]+"]
)
def test_few_rows_stamped_in_python_equal_the_steps(pattern, monkeypatch):
    """``_Builder._stamp_few`` (few distinct instances) makes the same table as the
    vectorised steps, state numbers and all."""
    dfa = compile_regex(pattern)
    few = to_bytes(dfa)
    monkeypatch.setattr(bytedfa, "FEW_STAMPED", 0)
    steps = to_bytes(dfa)
    np.testing.assert_array_equal(few.table, steps.table)
    np.testing.assert_array_equal(few.accepting, steps.accepting)


def _small_patterns() -> list[str]:
    """Patterns whose DFAs ``to_bytes`` takes by ``_few_bytes`` (small, past ASCII), from
    the tests' lists and the held-out pool."""
    from bench.heldout import corpus_patterns

    return [*_patterns(), *corpus_patterns(), ".*é", "[^@]+@[^@]+", "(?s).*x", "x[^a]{3}y"]


def test_the_small_path_writes_the_table_path_s_table():
    """``_few_bytes`` (Python, for small DFAs) against ``_table_bytes`` (numpy), exactly,
    at every size."""
    taken = 0
    for pattern in _small_patterns():
        with contextlib.suppress(RegexError):
            dfa = compile_regex(pattern)
            ranges = [cls.ranges(dfa.mentioned) for cls in dfa.classes]
            if to_bytes(dfa).table.shape[0] == dfa.num_states or not all(ranges):
                continue  # nothing past ASCII, or a class with no UTF-8 spelling
            few, table = bytedfa._few_bytes(dfa, ranges), bytedfa._table_bytes(dfa, ranges)
            np.testing.assert_array_equal(few.table, table.table, err_msg=pattern)
            np.testing.assert_array_equal(few.accepting, table.accepting, err_msg=pattern)
            taken += 1
    assert taken >= 100


def test_rows_numbered_ahead_are_the_rows_made_step_by_step(monkeypatch):
    """``_Builder._stamp_new`` numbers every row before making any: the same table as
    ``_stamp_few``'s steps, and it declines (the steps then run) where rows coincide."""
    made = {}
    for pattern in _small_patterns():
        with contextlib.suppress(RegexError):
            made[pattern] = to_bytes(compile_regex(pattern))
    outcomes = []
    stamp_new = bytedfa._Builder._stamp_new

    def noted(self, found, templates):
        outcomes.append(stamp_new(self, found, templates))
        return False

    monkeypatch.setattr(bytedfa._Builder, "_stamp_new", noted)
    for pattern, ours in made.items():
        steps = to_bytes(compile_regex(pattern))
        np.testing.assert_array_equal(ours.table, steps.table, err_msg=pattern)
    assert outcomes.count(True) >= 50 and outcomes.count(False) >= 3


@pytest.mark.parametrize("seed", range(40))
def test_shape_groups_are_the_numpy_groups(seed):
    rng = np.random.default_rng(seed)
    states, width = rng.integers(1, 12), rng.integers(1, 6)
    targets = rng.integers(-1, 3, size=(states, width)) * rng.integers(0, 2, size=(states, 1))
    targets[targets == 0] = -1
    spans = [(0x80 + 16 * i, 0x8F + 16 * i) for i in range(width)]
    plain = bytedfa._groups(targets, spans)
    python = bytedfa._shape_groups(targets.tolist(), spans)
    assert [(g.states, g.shape, g.slot_spans) for g in python] == [
        (g.states, g.shape, g.slot_spans) for g in plain
    ]


def _plain_edges(dfa: Dfa) -> list[tuple[int, int, int]]:
    """THE PLAIN DEFINITION of ``bytedfa._edges_by_class``: every (source, class, target),
    move by move, each move's classes ascending."""
    return [
        (source, k, target)
        for source, moves in enumerate(dfa.moves)
        for target, classes in moves.items()
        for k in range(classes.bit_length())
        if classes >> k & 1
    ]


@pytest.mark.parametrize("classes", [2, 63, 64, 65, 70])
def test_edges_by_class_are_every_move_s_classes_spelled_out(classes):
    """Up to 64 classes the moves' bitsets are read as 64-bit integers, past that spelled
    byte by byte: both list every (source, class, target) of the moves, in order."""
    letters = [chr(0x4E00 + k) for k in range(classes - 1)]  # a class each, and z
    dfa = compile_regex(f"({'|'.join(letters)})+z|{letters[0]}{letters[-1]}")
    assert len(dfa.classes) == classes
    edges = zip(*(column.tolist() for column in bytedfa._edges_by_class(dfa)), strict=True)
    assert list(edges) == _plain_edges(dfa)
