"""A chain's main classes read off the character DFA (``rowwalk.char_main_class``): where
a state's classes are all ASCII, the target most of its characters lead to and their
bytes, as ``_row_main_class`` counts them in the byte table's row, without a numpy round
(a counted repeat's chain asks it of ~10 states at each new group of a mask). Where a
class holds a character past ASCII, or the byte table leaves the main edge out, it
answers None and the row decides, as before."""

from __future__ import annotations

import pytest

from fsmviz import build_index, compile_regex
from fsmviz.automaton.bytedfa import to_bytes
from fsmviz.tokens.fast import rowwalk
from tests.test_index_rows import assert_plain_masks

# Counted repeats and ASCII classes (none of them measured on), a schema-like string and
# ``.`` (classes past ASCII: the row decides there), an alternation with ties.
PATTERNS = (
    r"([A-Z][a-z]{2,6}, ){1,3}[A-Z]{2}",
    r"(\d{1,3}\.){3}\d{1,3}",
    r"[a-z]{2,9}@[a-z]{2,6}\.(com|net)",
    r"(ab|cd|ef){2,4}[0-9a-f]{1,5}",
    r'"(?:[^"\\]|\\.){0,12}"',
    r"x.{1,4}y",
)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_each_answer_is_the_row_count(pattern):
    dfa = compile_regex(pattern)
    table = to_bytes(dfa).table
    answered = 0
    for state in range(dfa.num_states):
        found = rowwalk.char_main_class(dfa, table, state)
        reads = sum(1 << b for b in range(256) if table[state, b] >= 0)
        if found is not None:
            answered += 1
            assert found == rowwalk._row_main_class(table[state], reads), state
    ascii_only = all(not cls.others and max(map(ord, cls.chars)) < 0x80 for cls in dfa.classes)
    assert answered == dfa.num_states if ascii_only else answered < dfa.num_states


def test_a_class_past_ascii_or_an_edge_left_out_is_not_answered():
    dfa = compile_regex("[^a]b")  # state 0 reads every character but ``a``
    assert rowwalk.char_main_class(dfa, to_bytes(dfa).table, 0) is None
    dfa = compile_regex("[a-z]+!")
    table = to_bytes(dfa).table.copy()
    assert rowwalk.char_main_class(dfa, table, 0) is not None
    table[0, ord("a")] = -1  # the byte table leaves the main class's first byte out
    assert rowwalk.char_main_class(dfa, table, 0) is None


CHAINED = (PATTERNS[0], PATTERNS[2], PATTERNS[3], r"([a-z]{1,8} ){2,4}[a-z]{1,8}\.")  # chains asked


@pytest.mark.slow
@pytest.mark.parametrize("pattern", CHAINED)
def test_counted_chains_take_no_guess_round_and_masks_are_plain(
    bundled_vocab, pattern, monkeypatch
):
    rounds: list[int] = []
    guess = rowwalk.guess_mains

    def counted(*args):
        rounds.append(args[3])
        return guess(*args)

    monkeypatch.setattr(rowwalk, "guess_mains", counted)
    index = build_index(f"(?:{pattern})" + "()" * 7, bundled_vocab)  # a fresh index
    assert_plain_masks(index, 40)
    walker = index._walker
    assert walker._mains, "no chain asked for main classes"
    assert not [s for s in rounds if s < index.byte_dfa.num_char_states]


@pytest.mark.slow
def test_a_state_reading_past_ascii_is_not_read_off_the_dfa(bundled_vocab, monkeypatch):
    asked: list[int] = []
    read_off = rowwalk.char_main_class

    def counted(dfa, table, state, ascii_of=None):
        asked.append(state)
        return read_off(dfa, table, state, ascii_of)

    monkeypatch.setattr(rowwalk, "char_main_class", counted)
    index = build_index(
        r'\{"note": "(?:[^"\\]|\\.){0,40}", "n": [0-9]{1,3}\}' + "()" * 5, bundled_vocab
    )
    assert_plain_masks(index, 40)
    walker = index._walker
    assert asked, "no main class read off the DFA"
    assert not [s for s in asked if walker.reads_of(s) >> 128]
    assert [s for s in walker._mains if walker.reads_of(s) >> 128]  # those from their rows
