"""The whole index of a small DFA within ASCII, read off the byte table's runs
(``ByteDfa.byte_runs``) in Python, is the plain one: the runs spell the table, the steps
read off them are the table's (``index._LazySteps``), the bytes they read are the table's
columns with an edge, the liveness shortcut answers as the numpy test, and the successors
are each start's plain row's distinct targets (``test_index_rows.plain_row``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz.automaton.bytedfa import _table_bytes, to_bytes
from fsmviz.automaton.dfa import compile_regex
from fsmviz.tokens import index as index_module
from fsmviz.tokens.fast.successors import WIDE, edge_counts
from fsmviz.tokens.index import (
    _byte_liveness_is_token_liveness,
    _LazySteps,
    _read_bytes,
    _run_steps,
)
from fsmviz.tokens.trie import trie_of
from tests.test_read_walk import assert_same_pairs, plain_pairs

NARROW = (  # each state reads a few bytes: the walk in Python over the runs
    r"[nN][oO][nN][eE]",
    r"[fF][iI][nN][aA][lL][lL][yY]",
    r"abc",
    r"a*",
    r"\d+(\.\d+)?(px|rem)",
    r"(yes|no|maybe)",
    r"[0-9]{4}-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01])",
    r"(ab)+c?",
    r"x?y?z?",
    r"([0-9]+(ns|us|ms|s|m)){1,5}",  # 21 starts, past ``NARROW_STARTS``
    # 17 and 18 classes, few edges (``bytedfa.FEW_ASCII_EDGES``): runs all the same
    r"(extractors|loaders|transforms|orchestrators|transformers|files|utilities|mappers)",
    r"(red|green|blue|cyan|magenta|yellow|black|white)",
)
WIDE_ASCII = (  # a wide state, or a walk past ``SMALL_WORK``: the numpy walks
    r"[0-9a-z-_]+",
    r"[A-Za-z]{2,}",
    r"[0-9\- ]{10,17}X?",  # ~1,500 steps
)
UNTOKENED = (r"\x04abc", r"a\x04?b", r"[\x01-\x05]x")  # bytes SmolLM2 has no token for
BEYOND = (  # past ASCII, or many classes and edges: no runs
    r".*\.py",
    r"caf[eé]",
    r"[^a]",
    r"([a-c]|[e-g]|[i-k]|[m-o]|[q-s]|[u-w]|[y-z]|[A-C]|[E-G]|[I-K]|[M-O]|[Q-S]|[U-W]|[0-2]|[4-6]"
    r"|[8-9]|!|#|%){6}",  # 19 classes, 114 edges
)


def _runs_table(byte_runs) -> np.ndarray:
    table = np.full((len(byte_runs), 256), -1, dtype=np.int32)
    for state, state_runs in enumerate(byte_runs):
        for lo, hi, target in state_runs:
            table[state, lo : hi + 1] = target
    return table


@pytest.mark.parametrize("pattern", NARROW + WIDE_ASCII + UNTOKENED + BEYOND)
def test_byte_runs_spell_the_table(pattern):
    dfa = compile_regex(pattern)
    byte_dfa = to_bytes(dfa)
    plain = _table_bytes(dfa, [cls.ranges(dfa.mentioned) for cls in dfa.classes])
    np.testing.assert_array_equal(byte_dfa.table, plain.table)
    np.testing.assert_array_equal(byte_dfa.accepting, plain.accepting)
    if pattern in BEYOND:
        assert byte_dfa.byte_runs is None
        return
    assert byte_dfa.byte_runs is not None
    np.testing.assert_array_equal(_runs_table(byte_dfa.byte_runs), byte_dfa.table)
    read = _read_bytes(byte_dfa.byte_runs)
    columns = (byte_dfa.table >= 0).any(axis=0)
    assert [bool(read >> b & 1) for b in range(256)] == columns.tolist()


@pytest.mark.parametrize("pattern", NARROW + WIDE_ASCII + UNTOKENED)
def test_run_steps_are_the_tables(pattern):
    table = to_bytes(compile_regex(pattern)).table
    steps = _run_steps(to_bytes(compile_regex(pattern)).byte_runs)
    if (edge_counts(table) >= WIDE).any():
        assert steps is None
        return
    lazy = _LazySteps(table)
    assert steps is not None and len(steps) == len(table)
    for state, (pairs, by_byte) in enumerate(steps):
        assert (pairs, by_byte) == lazy[state]
        assert pairs == sorted(pairs)


def test_untokened_bytes_are_the_bytes_with_no_token(bundled_vocab):
    trie = trie_of(bundled_vocab)
    bits = trie.untokened_bytes
    assert [bool(bits >> b & 1) for b in range(256)] == (~trie.single_byte_tokens).tolist()
    assert bits >> 4 & 1  # SmolLM2 has no token "\x04"


@pytest.mark.parametrize("pattern", NARROW + WIDE_ASCII + UNTOKENED)
def test_liveness_shortcut_answers_as_the_tables(pattern, bundled_vocab):
    trie = trie_of(bundled_vocab)
    byte_dfa = to_bytes(compile_regex(pattern))
    plain = dataclasses.replace(byte_dfa, byte_runs=None)
    found = _byte_liveness_is_token_liveness(byte_dfa, trie)
    assert found == _byte_liveness_is_token_liveness(plain, trie)
    assert found == (pattern != r"\x04abc")  # its start is live by "\x04" alone


def test_liveness_shortcut_reads_no_table(bundled_vocab):
    """Where the runs read only tokened bytes, the answer comes without the table (a
    table that would say otherwise is not looked at)."""
    trie = trie_of(bundled_vocab)
    byte_dfa = to_bytes(compile_regex(r"[nN][oO]"))
    lying = dataclasses.replace(byte_dfa, table=np.full_like(byte_dfa.table, 4))
    assert _byte_liveness_is_token_liveness(lying, trie)


@pytest.mark.parametrize("pattern", NARROW + WIDE_ASCII)
def test_small_route_successors_are_plain(pattern, bundled_vocab, monkeypatch):
    """Every start's successors are its plain row's distinct targets, by the small route
    (where no state is wide and the starts are few) and by ``_successor_pairs``' others;
    where the small route answers, the whole index reads no table (``edge_counts``,
    ``_LazySteps``: called, a TypeError)."""
    index = build_index(pattern + "()" * 3, bundled_vocab)  # a string no test kept
    starts = list(range(index.byte_dfa.num_states))
    plain = plain_pairs(index, starts)
    small = index_module._small_successors(index, starts)
    assert (small is not None) == (pattern in NARROW)
    assert_same_pairs(index_module._successor_pairs(index, starts, None), plain)
    if small is not None:
        assert_same_pairs(index_module._as_pairs(small), plain)
        monkeypatch.setattr(index_module, "_LazySteps", None)
        monkeypatch.setattr(index_module, "edge_counts", None)
    walked = build_index(pattern + "()" * 4, bundled_vocab)
    assert walked.states  # the whole index, by the small route where it answers
    found = [walked.successors(state).tolist() for state in starts]
    assert found == [plain[1][plain[0] == k].tolist() for k in range(len(starts))]


def test_small_route_keeps_a_toy_vocabulary_exact():
    """A toy vocabulary without most single bytes: the liveness goes the numpy way, and
    the states and successors are those of the table (runs stripped)."""
    vocab = Vocabulary.from_strings(["a", "b", "ab", "abc", "1"], eos_token="<eos>")
    index = build_index("(ab)+c?1?", vocab)
    assert index.byte_dfa.byte_runs is not None
    plain = index_module.TokenIndex(
        index.dfa, dataclasses.replace(index.byte_dfa, byte_runs=None), vocab, index.trie
    )
    assert index.states == plain.states
    for state in range(index.byte_dfa.num_states):
        assert index.successors(state).tolist() == plain.successors(state).tolist()


def _nearest(usable: list[bool], byte: int, step: int) -> int:
    """The nearest byte from ``byte`` in direction ``step`` that is a token, else the
    nearest the other way."""
    for b in range(byte + step, 256 if step > 0 else -1, step):
        if usable[b]:
            return b
    return _nearest(usable, byte, -step)


@pytest.mark.parametrize("strings", [None, ["a", "c", "ab", "é"], ["\x7f", "z"]])
def test_untokened_neighbours_are_the_nearest_tokens(strings, bundled_vocab):
    vocab = bundled_vocab if strings is None else Vocabulary.from_strings(strings)
    trie = trie_of(vocab)
    usable = trie.single_byte_tokens.tolist()
    lone, below, above = (a.tolist() for a in trie.untokened_neighbours)
    assert lone == [b for b in range(256) if not usable[b]]
    assert below == [_nearest(usable, b, -1) for b in lone]
    assert above == [_nearest(usable, b, 1) for b in lone]


LIVENESS = (  # states live in bytes, some through bytes that are no token (SmolLM2)
    r"\x04abc",
    r"a\x04?b",
    r"[\x01-\x05]x",
    r".*\.py",
    r"[^\x06]\x06\x13",
    r"(\x13|\x14)z|\x16",
    r'"(?:[^"\\\x00-\x1F\x7F-\x9F]|\\["\\/bfnrt])*"',
    r"[\U00040000-\U0004FFFF]x",  # a 4-byte lead byte (F1) that is no token
    r"[\U00040000-\U0004FFFF]|[\U00010000-\U0001FFFF]",
)


@pytest.mark.parametrize("pattern", LIVENESS)
def test_liveness_is_its_definition(pattern, bundled_vocab):
    """``_byte_liveness_is_token_liveness`` says whether the states live in bytes are the
    states live in single-byte tokens, for any of its shortcuts."""
    trie = trie_of(bundled_vocab)
    byte_dfa = to_bytes(compile_regex(pattern))
    live = byte_dfa.accepting | (byte_dfa.table >= 0).any(axis=1)
    plain = bool((byte_dfa.live_states(usable_bytes=trie.single_byte_tokens) == live).all())
    assert _byte_liveness_is_token_liveness(byte_dfa, trie) == plain
