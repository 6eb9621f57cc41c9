"""An API call's values against the real app (issue 50.6): too many or too few values are
answered in fsmviz's words (never Gradio's "Api object at 0x..."), optional ones left out
take their defaults, and a grammar bomb is refused at once while the server stays up."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

pytestmark = pytest.mark.e2e

BILLION = 'root ::= (("a"{1000}){1000}){1000}'


def call(url: str, endpoint: str, values: list) -> tuple[str, object]:
    """The raw REST protocol: POST the values, read the answer's stream; (event, data)."""
    post = urllib.request.Request(
        f"{url}/gradio_api/call/{endpoint}",
        json.dumps({"data": values}).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(post, timeout=60) as answer:
        event = json.load(answer)["event_id"]
    with urllib.request.urlopen(f"{url}/gradio_api/call/{endpoint}/{event}", timeout=120) as stream:
        kind = None
        for line in stream.read().decode().splitlines():
            if line.startswith("event: ") and line[7:] != "heartbeat":
                kind = line[7:]
            elif line.startswith("data: ") and kind is not None:
                return kind, json.loads(line[6:])
    raise AssertionError("no answer")


def test_too_many_values_are_refused_in_plain_words(app_server) -> None:
    kind, data = call(app_server, "dfa", ["ab", 1, 2])
    assert kind == "error"
    assert (
        data["error"]
        == "/dfa takes 1 value (regex), in that order; it was given 3: remove the last 2"
    )
    kind, data = call(
        app_server, "trace", ["a", "b", 1, 0.0, 0, True, 1.0, 0, None, "eos", False, 1, 2, 3]
    )
    assert kind == "error" and "/trace takes 12 values (regex, prompt, max_tokens" in data["error"]
    assert "given 14: remove the last 2" in data["error"]  # the 12th: backend (584f79b)


def test_too_few_values_name_what_is_missing_and_optional_ones_take_defaults(app_server) -> None:
    kind, data = call(app_server, "diagnose", [])
    assert kind == "error" and "0x" not in data["error"] and "Api object" not in data["error"]
    assert data["error"].startswith("/diagnose needs regex (then, optional: max_tokens, backend)")
    kind, data = call(app_server, "diagnose", ["a+"])  # max_tokens left out: its default
    assert kind == "complete" and data[0]["pattern"] == "a+"


def test_a_grammar_bomb_is_refused_at_once_and_the_server_stays_up(app_server) -> None:
    start = time.perf_counter()
    kind, data = call(app_server, "grammar", [BILLION, "hi"])
    assert kind == "error" and "cannot finish in fewer than 1,000,000,000" in data["error"]
    assert time.perf_counter() - start < 10  # a loose bound: a queue and a busy machine
    kind, data = call(app_server, "dfa", ["ab"])
    assert kind == "complete" and data[0]["pattern"] == "ab"
