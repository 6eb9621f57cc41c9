"""One validation for every parameter (``fsmviz.params``): every hostile value an attacker
sent to the API is refused with the parameter's name, the value shortened, and the range;
and the API functions (the same as the MCP tools) answer every failure with a message."""

from __future__ import annotations

import json

import pytest

from fsmviz.errors import FsmvizError
from fsmviz.generation.trace import GenerationOptions
from fsmviz.params import (
    MAX_TEMPERATURE,
    SHOWN,
    ParameterError,
    check_generation,
    pattern,
    shorten,
    text,
)

HOSTILE = [
    float("nan"),
    float("inf"),
    float("-inf"),
    json.loads("1e309"),  # JSON reads it as infinity
    None,
    [],
    [1, 2],
    {},
    {"a": 1},
    True,
    False,
    "64",
    "abc",
    "",
    "x" * 1_000_000,
    1.5,
    -1,
    10**400,
]


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("name", ["max_tokens", "seed", "top_k"])
@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_whole_numbers_refuse_every_hostile_value(name, value):
    with pytest.raises(ParameterError) as caught:
        check_generation(**{name: value})
    error = caught.value
    assert isinstance(error, FsmvizError) and isinstance(error, ValueError)
    assert error.name == name
    assert str(error).startswith(f"{name} must be a whole number from ")
    assert len(str(error)) < 160  # the value is shortened, whatever its size


@pytest.mark.parametrize("name", ["temperature", "top_p"])
@pytest.mark.parametrize(
    "value", [v for v in HOSTILE if v not in (1.5,)] + [MAX_TEMPERATURE + 0.01], ids=repr
)
def test_real_numbers_refuse_every_hostile_value(name, value):
    with pytest.raises(ParameterError, match=f"^{name} must be a number "):
        check_generation(**{name: value})


@pytest.mark.parametrize("value", ["0", "false", 0, 1, None, [], "true"], ids=repr)
def test_a_flag_is_a_real_bool(value):
    with pytest.raises(ParameterError, match="^chat must be true or false; got "):
        check_generation(chat=value)


def test_values_in_range_are_normalised():
    assert check_generation(
        max_tokens=64.0, temperature=2, top_p=1, seed=0, chat=False, prob_limit=None
    ) == {
        "max_tokens": 64,
        "temperature": 2.0,
        "top_p": 1.0,
        "seed": 0,
        "chat": False,
        "prob_limit": None,
    }
    assert isinstance(check_generation(max_tokens=64.0)["max_tokens"], int)


def test_the_library_and_the_api_share_the_bounds():
    """``GenerationOptions`` checks through the same table: the docs' 0–2 temperature is the
    library's too (it took up to 10), and a bool is not a max_tokens."""
    with pytest.raises(ParameterError, match="temperature"):
        GenerationOptions(temperature=2.5)
    with pytest.raises(ParameterError, match="max_tokens"):
        GenerationOptions(max_tokens=True)
    assert GenerationOptions(max_tokens=8.0).max_tokens == 8


def test_unknown_options_are_a_type_error():
    with pytest.raises(TypeError, match="bogus"):
        check_generation(bogus=1)


@pytest.mark.parametrize(
    "value",
    [None, ["a"], {"a": 1}, 5, nested(100_000)],
    ids=["null", "list", "dict", "int", "deep"],
)
def test_a_regex_must_be_text_and_null_is_refused(value):
    with pytest.raises(ParameterError, match="^regex must be a regular expression as text"):
        pattern(value)


def test_shorten_is_bounded_and_never_recursive():
    assert len(shorten("x" * 10**6)) < SHOWN + 40
    assert len(shorten(nested(100_000))) <= SHOWN + 1
    assert shorten({"k" * 100: [1] * 100}).endswith("…")


def test_a_prompt_is_text_of_bounded_length_without_lone_surrogates():
    assert text("prompt", "hi", 10) == "hi"
    with pytest.raises(ParameterError, match="U\\+D800 at position 1"):
        text("prompt", "a\ud800", 10)
    with pytest.raises(ParameterError, match="at most 10 characters; got 'x{10}"):
        text("prompt", "x" * 11, 10)
