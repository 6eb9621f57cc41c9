"""Every API endpoint (and so every MCP tool) answers a hostile call with a message naming
what is wrong, checked before the model is waited for: no ``{"error": null}``, no 500.

The API functions are called directly, wrapped as ``add_api`` wraps them (``answered``);
the model stand-in fails the test if a refused call ever reaches for the model."""

from __future__ import annotations

import json

import gradio as gr
import pytest

from fsmviz.app.api import tools
from fsmviz.app.api.answers import answered, message_for


class NoModelWanted:
    """Where ``BackgroundModel`` would be: a refused call must never wait for a model."""

    def get(self, timeout=None):
        raise AssertionError("a refused call reached for the model")

    def vocabulary(self):
        return None


@pytest.fixture(scope="module")
def api():
    return {name: answered(fn) for name, fn in tools(NoModelWanted()).items()}


def deep_list(depth: int) -> str:
    return "[" * depth + "]" * depth


HOSTILE_CALLS = [
    ("dfa", {"regex": None}, "regex"),
    ("dfa", {"regex": ["a"]}, "regex"),
    ("dfa", {"regex": {"a": 1}}, "regex"),
    ("diagnose", {"regex": None}, "regex"),
    ("diagnose", {"regex": "a", "max_tokens": "64"}, "max_tokens"),
    ("diagnose", {"regex": "a", "max_tokens": float("nan")}, "max_tokens"),
    ("diagnose", {"regex": "a", "max_tokens": [64]}, "max_tokens"),
    ("trace", {"regex": None, "prompt": "x"}, "regex"),
    ("trace", {"regex": ["a"], "prompt": "x"}, "regex"),
    ("trace", {"regex": "a", "prompt": None}, "prompt"),
    ("trace", {"regex": "a", "prompt": "x" * 4001}, "prompt"),
    ("trace", {"regex": "a", "prompt": "x", "max_tokens": json.loads("1e309")}, "max_tokens"),
    ("trace", {"regex": "a", "prompt": "x", "max_tokens": 1.5}, "max_tokens"),
    ("trace", {"regex": "a", "prompt": "x", "max_tokens": True}, "max_tokens"),
    ("trace", {"regex": "a", "prompt": "x", "max_tokens": "64"}, "max_tokens"),
    ("trace", {"regex": "a", "prompt": "x", "temperature": 10}, "temperature"),
    ("trace", {"regex": "a", "prompt": "x", "temperature": float("inf")}, "temperature"),
    ("trace", {"regex": "a", "prompt": "x", "temperature": None}, "temperature"),
    ("trace", {"regex": "a", "prompt": "x", "seed": []}, "seed"),
    ("trace", {"regex": "a", "prompt": "x", "seed": -1}, "seed"),
    ("trace", {"regex": "a", "prompt": "x", "chat": "0"}, "chat"),
    ("schema", {"schema": "{}", "prompt": "x", "whitespace": ["none"]}, "whitespace"),
    ("schema", {"schema": "{}", "prompt": "x", "whitespace": "x" * 10**6}, "whitespace"),
    ("schema", {"schema": "{}", "prompt": "x", "max_tokens": None}, "max_tokens"),
    ("schema", {"schema": {"type": "string"}, "prompt": "x"}, "schema"),
    ("schema", {"schema": None, "prompt": "x"}, "schema"),
    ("schema_engines", {"schema": None}, "schema"),
    ("schema_engines", {"schema": {"type": "string"}}, "schema"),
]


@pytest.mark.parametrize(
    "endpoint,call,named", HOSTILE_CALLS, ids=[f"{e}-{n}" for e, _, n in HOSTILE_CALLS]
)
def test_a_hostile_parameter_is_refused_by_name_before_any_work(api, endpoint, call, named):
    with pytest.raises(gr.Error) as caught:
        api[endpoint](**call)
    message = caught.value.message
    assert message and message.startswith(f"{named} must be ")
    assert len(message) < 240  # a 1 MB value is shortened, never echoed whole


@pytest.mark.parametrize("endpoint", ["dfa", "diagnose"])
def test_deep_nesting_in_a_regex_is_a_message(api, endpoint):
    deep = "(" * 4000 + "a" + ")" * 4000
    if endpoint == "dfa":
        with pytest.raises(gr.Error, match="nested more than"):
            api["dfa"](regex=deep)
    else:
        found = api["diagnose"](regex=deep, max_tokens=8)["findings"]
        assert any("nested more than" in f["message"] for f in found)


def test_a_schema_nested_thousands_deep_is_a_message_not_null(api):
    with pytest.raises(gr.Error) as caught:
        api["schema"](schema=deep_list(20_000), prompt="x", whitespace="none")
    assert caught.value.message  # the schema's own refusal, or the nesting message


def test_anything_unexpected_is_still_a_message():
    def broken() -> dict:
        raise KeyError("oops")

    with pytest.raises(gr.Error, match=r"could not answer \(KeyError: "):
        answered(broken)()
    assert "nested too deeply" in message_for(RecursionError())
    assert message_for(MemoryError()).startswith("the input needs more memory")


def test_the_wrapper_keeps_what_gradio_and_mcp_read(api):
    import inspect

    raw = tools(NoModelWanted())["trace"]
    assert inspect.signature(api["trace"]) == inspect.signature(raw)
    assert api["trace"].__doc__ == raw.__doc__ and api["trace"].__name__ == "trace"


class Link:
    """A share link's query, as ``gr.Request`` gives it to ``on_load``."""

    def __init__(self, **query: str):
        self.query_params = query


class Loading(NoModelWanted):
    status = "Loading…"
    ready = False


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e309", "abc", "[]", ""])
def test_a_share_link_s_hostile_numbers_are_skipped_or_clamped(value):
    from fsmviz.app.handlers import on_load

    values = on_load(Loading(), Link(max_tokens=value, temperature=value, seed=value))
    max_tokens, temperature, seed = values[2], values[3], values[4]
    for got, lo, hi in ((max_tokens, 1, 1024), (temperature, 0.0, 2.0), (seed, 0, 2**31 - 1)):
        assert not isinstance(got, int | float) or lo <= got <= hi, (value, got)


@pytest.mark.parametrize(
    "schema", [deep_list(100_000), '{"a":' * 5000 + "1" + "}" * 5000], ids=["array", "object"]
)
def test_the_page_s_schema_box_says_a_deep_schema_is_too_deep(schema):
    from fsmviz.html.schema import use_schema

    used = use_schema(schema, "none", None)
    assert used.choice is None and "nested too deeply" in used.error
