"""A state whose ASCII bytes close a set of states (``safebytes._safe_bytes``: each reads
each byte of ``B`` back into the set) allows the tokens of ``B`` and those the walk below
the nodes leaving ``B`` finds (``searchwords.search_words``): a search's loop and the state
after its needle's first byte, once merged into live blocks (``index._merged_words``,
where ``rowwalk.merge_at`` merges as the walker would). Each answer is the plain row."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz.automaton.bytedfa import to_bytes
from fsmviz.automaton.dfa import compile_regex
from fsmviz.tokens import index as index_module
from fsmviz.tokens.fast import closedsets, packwalk, searchwords
from fsmviz.tokens.fast.knownloops import ANY
from fsmviz.tokens.fast.packwalk import packed_vocab
from fsmviz.tokens.fast.quotient import live_blocks
from fsmviz.tokens.fast.searchwords import search_words
from fsmviz.tokens.index import packed
from tests.test_index_rows import plain_mask, plain_row
from tests.test_levelwalk import answers_of

MERGED = tuple(rf"{ANY}*(?:{needle}){ANY}*" for needle in ("f.o", "t.e", "b.r", ".", "[^ ]"))
ONE_CLASS = MERGED[3:]  # merged, the start's block is a loop alone (its set ``S``: one block)
SEARCHES = (*MERGED, *(rf"{ANY}*(?:{needle}){ANY}*" for needle in ("s[^/]*t", "X_", "[0-9]\\.x")))
OTHERS = (r"[a-z]*x[a-z]*", r".*\.[jJ][sS][oO][nN]", r'"[^"]*"', r"[A-Z][a-z]+ [a-z]+")


def _rows_answered(index, vocab, states: int = 40):
    """How many of the index's first ``states`` states ``search_words`` answers, each
    checked against the plain row."""
    words_of, table, answered = packed_vocab(index.trie, len(vocab)), index.byte_dfa.table, 0
    for state in index.states[:states]:
        reads = index._walker.reads_of(state)
        words = search_words(words_of, index.trie, table, state, reads)
        if words is None:
            continue
        answered += 1
        tokens, _ = plain_row(index, state)
        assert np.array_equal(words.view(np.int32), packed(tokens, len(vocab))), state
    return answered


@pytest.mark.slow
@pytest.mark.parametrize("pattern", SEARCHES + OTHERS)
def test_search_words_are_the_plain_rows(bundled_vocab, pattern):
    index = build_index(pattern + "()" * 5, bundled_vocab)
    answered = _rows_answered(index, bundled_vocab)
    assert answered or pattern not in (*MERGED, OTHERS[0])


@pytest.mark.slow
@pytest.mark.parametrize("pattern", MERGED)
def test_merged_searches_answer_by_their_closed_blocks(
    bundled_vocab, pattern, monkeypatch, no_loop_masks
):
    answered = answers_of(monkeypatch, index_module, "search_words")
    index = build_index(pattern + "()" * 6, bundled_vocab)
    for state in index.states[:40]:
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), state
    assert index._walker.merged, "not merged"
    assert any(answered), "no block was answered by search_words"


@pytest.mark.slow
@pytest.mark.parametrize("pattern", ONE_CLASS)
def test_a_loop_alone_is_answered_by_search_words(
    bundled_vocab, pattern, monkeypatch, no_loop_masks
):
    """A single class searched in a string: merged, the start's block reads the string's
    ASCII back into itself alone (the quote and controls lead to the loop after the
    class): ``search_words`` answers it with ``S`` of one block (the chain path cost
    ~0.5 ms more), equal to the plain row."""
    answered = answers_of(monkeypatch, index_module, "search_words")
    index = build_index(pattern + "()" * 7, bundled_vocab)
    state = index.states[0]
    tokens, _ = plain_row(index, state)
    assert np.array_equal(index.bitmask(state), packed(tokens, len(bundled_vocab)))
    assert answered[:1] == [True], answered


def test_search_words_on_a_toy():
    """``[a-z]*x[a-z]*`` from its start: ``x`` leads to the state after it, both read the
    letters; ``x1``'s digit is read by neither, ``x`` and ``ax`` and ``b`` are allowed."""
    vocab = Vocabulary.from_strings(["ax", "b", "x1", "1", "x"])
    index = build_index("[a-z]*x[a-z]*", vocab)
    table, words = index.byte_dfa.table, packed_vocab(index.trie, len(vocab))
    found = search_words(words, index.trie, table, 0, closedsets._row_reads(table, 0))
    allowed = {vocab.token_bytes(t) for t in np.flatnonzero(np.unpackbits(
        found.view(np.uint8), bitorder="little"))}  # fmt: skip
    assert allowed == {b"ax", b"b", b"x"}
    index2 = build_index("(ab)*", vocab)  # one state reads a, the other b: no set
    table2 = index2.byte_dfa.table
    assert search_words(words, index2.trie, table2, 0, closedsets._row_reads(table2, 0)) is None


def test_utf8_tokens_a_member_reads_more_of_are_walked():
    """``ANY*(?:t.e)ANY*``: the state after ``t`` reads a C1 control (``.``), which the
    strict UTF-8 its set reads back into itself refuses: ``t\\u0085`` is walked from the
    state (``PackedVocab.refused``) and allowed; ``\\u0085`` alone is not."""
    strings = ["t\u0085", "\u0085", "té", "é", 'a"', "t\\", "\\n", "ab", "t"]
    vocab = Vocabulary.from_strings(strings)
    index = build_index(SEARCHES[1], vocab)
    table, words_of = index.byte_dfa.table, packed_vocab(index.trie, len(vocab))
    assert _rows_answered(index, vocab, len(index.states))
    found = search_words(words_of, index.trie, table, 0, index._walker.reads_of(0))
    taken = {vocab.token_bytes(t) for t in np.flatnonzero(np.unpackbits(
        found.view(np.uint8), bitorder="little"))}  # fmt: skip
    assert "t\u0085".encode() in taken and "\u0085".encode() not in taken


def test_a_member_reading_no_utf8_keeps_it_out():
    """``(?:[a-w]|é)*x[a-z]*``: the start reads ``é``, the state after ``x`` no byte past
    ASCII; the set's UTF-8 is not taken at once (``xé`` is refused), its nodes walked
    (``é``, ``éx`` allowed)."""
    vocab = Vocabulary.from_strings(["xé", "é", "ax", "x", "éx"])
    index = build_index("(?:[a-w]|é)*x[a-z]*", vocab)
    table, words_of = index.byte_dfa.table, packed_vocab(index.trie, len(vocab))
    found = search_words(words_of, index.trie, table, 0, index._walker.reads_of(0))
    tokens, _ = plain_row(index, 0)
    assert np.array_equal(found.view(np.int32), packed(tokens, len(vocab)))
    allowed = {vocab.token_bytes(int(t)) for t in tokens}
    assert "xé".encode() not in allowed and {"é".encode(), "éx".encode()} <= allowed


UTF8_PATTERNS = (
    *SEARCHES,
    *OTHERS,
    rf"{ANY}*(?:.){ANY}*",
    rf"{ANY}*(?:[^ ]){ANY}*",
    r".*",
    r"[^a]*é",
    r"(?:é|[a-z])*x",
    r"[\u0080-\u07FF]*a",
    r"[\u00A0-\uFFFF]+b",
    r"(?:[^\u0085]|ab)*",
    r"\S+ \S+",
)


@pytest.mark.parametrize("pattern", UTF8_PATTERNS)
def test_reads_strict_is_the_numpy_check(pattern):
    """``_reads_strict`` (plain Python) answers as ``_reads_into`` (numpy, not exact) for
    each state alone, each state with its ASCII targets, and each DFA's states by halves,
    on the byte DFAs and on their live blocks' quotients."""
    table = to_bytes(compile_regex(pattern)).table
    tables = [table]
    found = live_blocks(table, (-1, -1))
    if found is not None:
        tables.append(found[1])
    checked = 0
    for table in tables:
        states = range(len(table))
        sets = [[state] for state in states]
        sets += [
            sorted({state, *table[state, :0x80][table[state, :0x80] >= 0].tolist()})
            for state in states
        ]
        sets += [list(states)[: len(table) // 2 + 1], list(states)[len(table) // 2 :]]
        for members in sets:
            expected = closedsets._reads_into(
                table, np.array(members), packwalk._UTF8[1], exact=False
            )
            assert searchwords._reads_strict(table, members) == expected, members
            checked += expected
    assert checked or ANY not in pattern  # a JSON string reads UTF-8: some set passes


def test_reads_strict_needs_every_lead_byte():
    """A toy: 0 reads two-byte characters (C2-DF into 1, back by a continuation byte) and
    continuation bytes too, no lead byte from E0: not strict UTF-8 (the missing leads' -1
    is no state whose row may be read)."""
    table = np.full((2, 256), -1, dtype=np.int32)
    table[0, 0xC2:0xE0], table[0, 0x80:0xC0], table[1, 0x80:0xC0] = 1, 0, 0
    assert not closedsets._reads_into(table, np.array([0]), packwalk._UTF8[1], exact=False)
    assert not searchwords._reads_strict(table, [0])
    table[0, 0xE0:0xF5] = 1  # every lead byte read, each into the two-byte state: both agree
    assert searchwords._reads_strict(table, [0]) == closedsets._reads_into(
        table, np.array([0]), packwalk._UTF8[1], exact=False
    )
