"""Grammars in generation: ``stream``/``generate`` take a ``Grammar`` where they take a
regex. The loop mechanics run on the ``tiny`` random model (noise, which is what tests a
mask and a safe end hardest); the real SmolLM2 writes nested JSON in the slow test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsmviz import compile_grammar
from fsmviz.generation.generate import generate, stream
from fsmviz.grammar.matcher import GrammarMatcher

CASES = Path(__file__).parent / "cases" / "grammars"
JSON = compile_grammar((CASES / "json.gbnf").read_text())

# Nested JSON: an object whose "items" hold objects that may nest again.
NESTED = compile_grammar(
    r"""
root  ::= "{\"name\": " str ", \"items\": [" ( item ( ", " item )* )? "]}"
item  ::= "{\"id\": " [0-9]{1,3} ( ", \"sub\": " root )? "}"
str   ::= "\"" [a-zA-Z ]{0,12} "\""
"""
)


@pytest.mark.parametrize("budget", [2, 3, 5, 8, 13, 21, 40])
def test_json_runs_end_as_json_whenever_the_shortest_completion_fits(tiny, budget) -> None:
    for seed in range(3):
        trace = generate(tiny, JSON, "", max_tokens=budget, temperature=1.0, seed=seed)
        assert trace.matched, (budget, seed, trace.text)
        assert trace.matched == JSON.accepts(trace.text)
        json.loads(trace.text)


@pytest.mark.parametrize("budget", [14, 20, 30, 50])
def test_nested_json_closes_in_time(tiny, budget) -> None:
    for seed in range(2):
        trace = generate(tiny, NESTED, "", max_tokens=budget, temperature=1.0, seed=seed)
        assert trace.matched, (budget, seed, trace.text)
        assert len(trace.steps) <= budget
        json.loads(trace.text)


def test_without_a_safe_end_a_tight_budget_cuts_the_text(tiny) -> None:
    cut = [
        generate(tiny, NESTED, "", max_tokens=14, temperature=1.0, seed=s, safe_end=False)
        for s in range(4)
    ]
    assert not all(trace.matched for trace in cut)  # the safe end above is doing the work


def test_forced_text_is_fast_forwarded_and_steps_match_the_matcher(tiny) -> None:
    trace = generate(tiny, NESTED, "", max_tokens=30, temperature=1.0, seed=1)
    assert trace.text.startswith('{"name": "')
    assert trace.steps[0].forced  # the constant start goes through in one pass
    assert trace.pattern == NESTED.text
    matcher = GrammarMatcher(NESTED, tiny.vocab)
    for step in trace.steps:
        assert step.state_before == len(matcher.consumed)  # a grammar run counts tokens
        allowed = matcher.allowed_mask()
        assert step.allowed_count == int(allowed.sum())
        assert 0.0 <= step.valid_mass <= 1.0
        assert allowed[step.token_id] and matcher.consume(step.token_id)


def test_stream_yields_steps_and_stops_when_the_sentence_is_complete(tiny) -> None:
    g = compile_grammar('root ::= "yes" | "no"')
    run = stream(tiny, g, "", max_tokens=10, temperature=0.0)
    steps = list(run)
    assert run.stop_reason == "accepted"
    assert b"".join(s.token_bytes for s in steps) in (b"yes", b"no")
    assert run.trace().matched


@pytest.mark.slow
def test_real_model_writes_nested_json_that_parses(bundled_model_for_grammar) -> None:
    model = bundled_model_for_grammar
    prompt = "Give a JSON object for a shop with a name and items that contain sub-items."
    for budget in (12, 48):  # cut short by the safe end, and longer
        trace = generate(model, NESTED, prompt, max_tokens=budget, temperature=0.7, seed=0)
        assert trace.matched, (budget, trace.text)
        json.loads(trace.text)
    # 24 tokens: greedy JSON reaches an object in the list, closed by the safe end (~70 ms a
    # token; 40 wrote two objects to the same end)
    trace = generate(model, JSON, prompt, max_tokens=24, temperature=0.0)
    assert trace.matched and isinstance(json.loads(trace.text), dict)


@pytest.fixture
def bundled_model_for_grammar():
    from fsmviz.generation.models import load_model

    return load_model()
