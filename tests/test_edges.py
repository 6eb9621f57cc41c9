"""Every edge of the public API answers right or raises an ``FsmvizError`` that names the
bad argument: no numpy wrap-around, no AttributeError from deep inside."""

from __future__ import annotations

import pytest

import fsmviz
from fsmviz import FsmvizError, Vocabulary, build_index


@pytest.fixture(scope="module")
def index():
    return build_index("a+b", Vocabulary.from_strings(["a", "b", "ab"]))


@pytest.mark.parametrize("state", [-1, -3, 999])
@pytest.mark.parametrize("ask", ["allowed_tokens", "is_accepting", "bitmask"])
def test_a_state_outside_the_index_is_refused_by_name(index, ask, state):
    with pytest.raises(FsmvizError, match=f"state {state} is not a state of this index"):
        getattr(index, ask)(state)


def test_next_state_from_an_unknown_state_is_refused(index):
    with pytest.raises(FsmvizError, match="state 999"):
        index.next_state(999, 0)


@pytest.mark.parametrize("token_id", [999, 4, -1])
def test_next_state_names_a_token_id_outside_the_vocabulary(index, token_id):
    # issue 44: next_state(0, 999) answered None, as if the token existed and were masked
    with pytest.raises(FsmvizError, match=f"token_id {token_id} is not a token of this vocab"):
        index.next_state(0, token_id)
    assert index.next_state(0, 3) is None  # EOS, the last id: not allowed where 0 rejects


def test_known_states_still_answer(index):
    last = index.byte_dfa.num_states - 1
    assert index.allowed_tokens(0).tolist() == [0, 2]
    assert isinstance(index.is_accepting(last), bool)


@pytest.mark.parametrize(
    ("tokens", "words"),
    [([], "at least one token"), (["<eos>"], "at least one token"), (["a", ""], "token 1 is empty"),
     ("abc", "list of token strings"), ([b"a"], "list of token strings")],
)  # fmt: skip
def test_a_toy_vocabulary_that_cannot_generate_is_refused(tokens, words):
    with pytest.raises(FsmvizError, match=words):
        Vocabulary.from_strings(tokens)


def test_duplicate_toy_tokens_are_both_allowed():
    vocab = Vocabulary.from_strings(["a", "a", "b"])
    index = build_index("a+b", vocab)
    assert index.allowed_tokens(0).tolist() == [0, 1]
    assert index.next_state(0, 1) == index.next_state(0, 0)


@pytest.mark.parametrize("vocab", [None, "bundled", 3])
def test_build_index_names_a_missing_vocabulary(vocab):
    with pytest.raises(FsmvizError, match="needs a Vocabulary"):
        build_index("a", vocab)


def test_build_index_names_a_pattern_of_the_wrong_type():
    with pytest.raises(FsmvizError, match="must be a str or a Dfa, not int"):
        build_index(3, Vocabulary.from_strings(["a"]))


def test_diagnose_names_a_trace_of_the_wrong_type():
    with pytest.raises(FsmvizError, match="trace must be a Trace"):
        fsmviz.diagnose("a", Vocabulary.from_strings(["a"]), trace="x")
