"""``fsmviz.Constraint``: one protocol for a regex, a schema and a grammar, built once.

A regex's constraint answers from its token index exactly as the index does, its judge is
the seeds' ``regex.fullmatch`` and its place is the drawn DFA's state; ``stream`` takes it
where it takes the pattern and writes the same run without building anything again; the
doctor reads its index. A grammar run's cursor answers the same questions from llguidance.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

import fsmviz
from fsmviz import Constraint, Vocabulary, constraint
from fsmviz.errors import FsmvizError
from fsmviz.generation.constraint import RegexConstraint
from fsmviz.tokens import index as index_module

TOY = Vocabulary.from_strings(["1", "2", "12", ".", "a"], eos_token="</s>")
NUMBER = r"[0-9]+\.[0-9]"


def test_a_regex_constraint_answers_as_its_index() -> None:
    c = constraint(regex=NUMBER, vocab=TOY)
    index = fsmviz.build_index(NUMBER, TOY)
    assert isinstance(c, Constraint) and isinstance(c, RegexConstraint)
    assert c.text == NUMBER and c.initial_state == index.initial_state
    for state in index.states:
        assert list(c.allowed_tokens(state)) == list(index.allowed_tokens(state))
        assert np.array_equal(c.bitmask(state), index.bitmask(state))
        assert c.is_accepting(state) == index.is_accepting(state)
        for token in range(len(TOY)):
            assert c.next_state(state, token) == index.next_state(state, token)


def test_shortest_completion_counts_the_fewest_tokens_to_a_match() -> None:
    vocab = Vocabulary.from_strings(["1", "2", "a", ".", "12"], eos_token="</s>")
    c = constraint(regex=r"1212|a\.", vocab=vocab)
    assert c.shortest_completion(c.initial_state) == 2  # "12" "12" (or "a" ".")
    after_a = c.next_state(c.initial_state, 2)
    assert c.shortest_completion(after_a) == 1  # "."
    assert c.shortest_completion(c.next_state(after_a, 3)) == 0  # a match already


def test_place_is_the_drawn_dfa_s_state_and_the_judge_is_fullmatch() -> None:
    c = constraint(regex=NUMBER, vocab=TOY)
    assert c.place("") == c.dfa.initial
    assert c.place("12.") == c.dfa.step(c.dfa.step(c.dfa.step(0, "1"), "2"), ".")
    assert c.place("x") is None
    assert c.accepts("12.1") and not c.accepts("12.") and not c.accepts("12.11")


def test_the_constructor_takes_exactly_one_constraint_and_a_vocabulary_for_a_regex() -> None:
    with pytest.raises(FsmvizError, match="exactly one"):
        constraint(vocab=TOY)
    with pytest.raises(FsmvizError, match="regex and grammar"):
        constraint(regex="a", grammar='root ::= "a"', vocab=TOY)
    with pytest.raises(FsmvizError, match="vocab="):
        constraint(regex="a")
    with pytest.raises(fsmviz.RegexError):
        constraint(regex="(", vocab=TOY)


def test_a_regex_path_schema_becomes_its_regex_s_constraint_from_the_schema_s_dfa() -> None:
    from fsmviz.automaton import dfa as dfa_module

    compiled = fsmviz.compile_schema({"type": "integer"})
    with mock.patch.object(dfa_module, "_compile", side_effect=AssertionError("compiled twice")):
        c = constraint(schema={"type": "integer"}, vocab=TOY)  # the DFA comes with the schema
    assert isinstance(c, RegexConstraint) and c.text == compiled.regex
    assert c.accepts("12") and not c.accepts("1.2")


def test_a_grammar_and_a_grammar_path_schema_come_back_compiled_once() -> None:
    grammar = constraint(grammar='root ::= "a" [0-9]')
    assert isinstance(grammar, fsmviz.Grammar) and constraint(grammar=grammar) is grammar
    schema = constraint(schema={"type": "object", "properties": {"a": {"$ref": "#"}}})
    assert hasattr(schema, "generation_run") and not isinstance(schema, RegexConstraint)


def test_the_doctor_reads_the_constraint_s_index(bundled_vocab) -> None:
    c = constraint(regex=r"[a-z]+@[a-z]+\.com", vocab=bundled_vocab)
    with mock.patch.object(index_module, "build_index", side_effect=AssertionError("rebuilt")):
        found = fsmviz.diagnose(c, bundled_vocab)
    assert found == fsmviz.diagnose(c.pattern, bundled_vocab)
    assert {f.kind for f in found} >= {"unbounded_repeat"}


@pytest.mark.slow
def test_stream_takes_the_constraint_and_writes_the_pattern_s_run(tiny) -> None:
    pattern = r"(yes|no)( [0-9]{1,2})?"
    c = constraint(regex=pattern, vocab=tiny.vocab)
    by_text = fsmviz.generate(tiny, pattern, "Answer:", max_tokens=6)
    with mock.patch.object(index_module._INDEXES, "get_or_build", side_effect=AssertionError):
        by_constraint = fsmviz.generate(tiny, c, "Answer:", max_tokens=6)
    assert by_constraint.pattern == pattern
    assert by_constraint.text == by_text.text and by_constraint.matched == by_text.matched
    assert [s.state_after for s in by_constraint.steps] == [s.state_after for s in by_text.steps]
    other = constraint(regex=pattern, vocab=TOY)
    with pytest.raises(FsmvizError, match="another vocabulary"):
        fsmviz.generate(tiny, other, "Answer:", max_tokens=2)


@pytest.mark.slow
def test_a_grammar_run_s_cursor_is_a_constraint(tiny) -> None:
    from fsmviz.generation.trace import GenerationOptions
    from fsmviz.grammar.run import GrammarRun

    grammar = fsmviz.compile_grammar('root ::= "[" [a-z]+ "]"')
    cursor = GrammarRun(tiny, grammar, GenerationOptions(max_tokens=8)).place
    assert isinstance(cursor, Constraint) and cursor.text == grammar.text
    start = cursor.initial_state
    allowed = cursor.allowed_tokens(start)
    bits = np.unpackbits(cursor.bitmask(start).view(np.uint8), bitorder="little")
    assert list(np.flatnonzero(bits[: len(tiny.vocab)])) == list(allowed)
    assert all(tiny.vocab.token_bytes(int(t)).startswith(b"[") for t in allowed)
    assert 1 <= cursor.shortest_completion(start) <= 3  # "[a]": at most a token a byte
    bracket = next(int(t) for t in allowed if tiny.vocab.token_bytes(int(t)) == b"[")
    assert cursor.next_state(start, bracket) == 1 and not cursor.is_accepting(1)
    assert cursor.place("[ab").accepts is False and cursor.place("[ab]").accepts
    assert cursor.accepts("[ab]") and not cursor.accepts("[ab")
    with pytest.raises(RuntimeError):
        cursor.allowed_tokens(0)  # a grammar run only moves on
