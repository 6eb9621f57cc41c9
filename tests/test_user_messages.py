"""Every message a user sees is fsmviz's (issue 50.6): what is wrong and where, in plain
words, never a library's class name, a Rust parser's position in text fsmviz wrote itself,
or an object's address."""

from __future__ import annotations

import pytest

from fsmviz import compile_schema
from fsmviz.app.api.arity import check_values, signature_of
from fsmviz.grammar import GrammarError, compile_grammar
from fsmviz.schema.convert import SchemaError

TRACE = (
    ("regex", True, None),
    ("prompt", True, None),
    ("max_tokens", False, 64),
    ("temperature", False, 0.0),
)


@pytest.mark.parametrize(
    ("schema", "where", "said"),
    [
        ('{"type": "number", "minimum": NaN}', "/minimum", "NaN at line 1, column 31"),
        (
            '{"description": "a \\" NaN", "type": "array",\n "items": {"maximum": -Infinity}}',
            "/items/maximum",
            "-Infinity at line 2, column 23",
        ),
        ({"type": "number", "maximum": float("inf")}, "/maximum", "Infinity at line 1"),
    ],
)
def test_a_schema_with_nan_or_infinity_says_what_and_where(schema, where, said) -> None:
    with pytest.raises(SchemaError) as caught:
        compile_schema(schema)
    error = caught.value
    assert error.path == where
    assert error.message.startswith(f"the schema is not valid JSON: {said}")
    assert "is no JSON number" in error.message and "expected value" not in str(error)


def test_a_grammar_of_surrogates_is_a_grammar_error_not_a_tokenizer_crash() -> None:
    with pytest.raises(GrammarError) as caught:
        compile_grammar("root ::= [\\uD800-\\uDFFF]")
    assert "U+D800, a UTF-16 surrogate" in caught.value.message
    assert "TextEncodeInput" not in str(caught.value)


def test_an_api_call_with_too_many_values_is_told_which_it_takes() -> None:
    with pytest.raises(ValueError) as caught:
        check_values("trace", TRACE, ["a", "b", 1, 0.0, 0, 1])
    assert str(caught.value) == (
        "/trace takes 4 values (regex, prompt, max_tokens, temperature), in that order; it "
        "was given 6: remove the last 2"
    )


def test_an_api_call_short_of_values_gets_defaults_or_names_the_missing_ones() -> None:
    values = ["[0-9]+", "a number"]
    check_values("trace", TRACE, values)
    assert values == ["[0-9]+", "a number", 64, 0.0]
    with pytest.raises(ValueError) as caught:
        check_values("trace", TRACE, ["[0-9]+"])
    message = str(caught.value)
    assert message == (
        "/trace needs regex, prompt (then, optional: max_tokens, temperature), in that order; "
        "it was given 1 value, so prompt is missing"
    )
    assert "0x" not in message and "Api" not in message


def test_the_signature_read_is_the_one_gradio_reads_through_wrappers() -> None:
    import functools

    def trace(regex: str, prompt: str, max_tokens: int = 64, temperature: float = 0.0) -> str:
        return regex

    @functools.wraps(trace)
    def wrapped(*args, **kwargs):
        return trace(*args, **kwargs)

    assert signature_of(wrapped) == TRACE
