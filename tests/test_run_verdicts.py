"""A run never ends "accepted" unless its text is accepted (issue 41).

For every kind of constraint — a regex, a JSON Schema on the regex path and on the grammar
path, a grammar in GBNF and in Lark — and every way a run can go (fast-forward on and off,
drafts, overshoot, ``stop="first"``, the safe end on and off, budgets down to one token),
over ASCII, non-ASCII and text whose characters the tokenizer splits (SmolLM2 spells
``日本`` with tokens that end inside a character):

* a stop reason that claims a match (``accepted``, ``first_match``, ``overshoot``) comes
  only with text the constraint's own judge accepts, and ``Trace.matched`` is that judge's
  verdict, asked again here;
* the run's engine and the judge agree (no ``not_accepted``): the structural rule in
  ``Stream._judged`` is a safety net, not what makes these runs honest;
* the text is exactly what the tokens decode to, and each step's bytes are its token's.

The loop runs on the ``tiny`` random model (noise tries the mask hardest); a few fixed
cases run on the bundled SmolLM2 (slow). The two grammars of the issue are fixed examples:
before the fix, fast-forward ended them after the first forced token ("W", "accepted").
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsmviz import compile_grammar, compile_schema
from fsmviz.generation.generate import generate
from fsmviz.generation.trace import MATCH_CLAIMS, Trace

SKYSCRAPER = 'root ::= "Wolkenkratzerbaustelle"'
CITY = 'root ::= "Die Stadt " ("München" | "Köln") " liegt in " ("Japan" | "Deutschland")'
PROMPT = 'Die Stadt Köln liegt in Deutschland. 日本と東京. yes, 1234, {"a": 12}'

POINT = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 4}, "n": {"type": "integer"}},
    "required": ["name", "n"],
    "additionalProperties": False,
}
PLACE = {"enum": ["Köln", "東京", "日本", "Zürich"]}


@dataclass(frozen=True)
class Mode:
    """One constraint as ``generate`` takes it, and its own judge of a finished text."""

    name: str
    constraint: Any
    judge: Callable[[str], bool]
    overshoot: bool = False  # whether the constraint takes ``overshoot`` (regexes only)


def _regex(pattern: str) -> Mode:
    return Mode(
        f"regex {pattern}", pattern, lambda t: regex.fullmatch(pattern, t) is not None, True
    )


def _grammar(text: str, kind: str) -> Mode:
    grammar = compile_grammar(text)
    assert grammar.format == kind
    return Mode(f"{kind} {text[:30]}", grammar, grammar.accepts)


def _schema(schema: dict[str, Any], path: str) -> Mode:
    compiled = compile_schema(schema, "none", path=path)
    assert compiled.path == path
    if path == "regex":  # ``stream`` takes the regex; ``matched`` is regex.fullmatch
        return _regex(compiled.regex)
    return Mode(f"schema-grammar {schema}", compiled, compiled.accepts)


MODES = [
    _regex(r"[0-9]{2,4}"),
    _regex(r"(yes|no)"),
    _regex(r"(日本|東京)+"),  # characters split across tokens
    _regex(r"[a-zé]{1,5}x"),
    _regex(r"Köln|München"),
    _regex(r'\{"a": [0-9]+\}'),  # constant text: fast-forward
    _schema(POINT, "regex"),
    _schema(PLACE, "regex"),
    _schema(POINT, "grammar"),
    _schema(PLACE, "grammar"),
    _grammar(SKYSCRAPER, "gbnf"),
    _grammar(CITY, "gbnf"),
    _grammar('root ::= "{\\"ort\\": \\"" ("Köln" | "東京" | [a-z]{1,3}) "\\"}"', "gbnf"),
    _grammar('root ::= "<|im_end|>" | "a" root', "gbnf"),  # a special token's text
    _grammar('start: "Die Stadt " CITY "."\nCITY: "Köln" | "日本" | "東京"', "lark"),
    _grammar('start: NUM ("," NUM)*\nNUM: /[0-9]{1,3}/', "lark"),
]


def options(mode: Mode) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "max_tokens": st.integers(1, 14),
            "fast_forward": st.booleans(),
            "safe_end": st.booleans(),
            "stop": st.sampled_from(["eos", "first"]),
            "draft_tokens": st.sampled_from([0, 0, 3]),
            "temperature": st.sampled_from([0.0, 1.0, 1.5]),
            "seed": st.integers(0, 2**16),
            "overshoot": st.booleans() if mode.overshoot else st.just(False),
        }
    )


def check_honest(trace: Trace, mode: Mode, vocab: Any, max_tokens: int) -> None:
    """The properties every run must have (see the module's docstring)."""
    verdict = mode.judge(trace.text)
    assert trace.matched == verdict, (mode.name, trace.text)
    if trace.stop_reason in MATCH_CLAIMS:
        assert verdict, (mode.name, trace.stop_reason, trace.text)
    assert trace.stop_reason not in ("not_accepted", "engine_error"), (mode.name, trace.notes)
    data = b"".join(step.token_bytes for step in trace.steps)
    assert trace.text == data.decode("utf-8", errors="replace")
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    assert trace.text == "".join(decoder.decode(s.token_bytes) for s in trace.steps) + (
        decoder.decode(b"", final=True)
    )
    for step in trace.steps:
        whole = b"" if step.is_eos else vocab.token_bytes(step.token_id)
        if step.cut:  # overshoot: the kept part of its token, and only on the last step
            assert step is trace.steps[-1] and trace.stop_reason == "overshoot"
            assert whole.startswith(step.token_bytes) and step.token_bytes != whole
        else:
            assert step.token_bytes == whole, (mode.name, step)
    assert len(trace.steps) <= max_tokens
    assert [s.index for s in trace.steps] == list(range(len(trace.steps)))


RUNS = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_a_run_claims_a_match_only_for_text_its_constraint_accepts(tiny, mode: Mode) -> None:
    @RUNS
    @given(opts=options(mode))
    def run(opts: dict[str, Any]) -> None:
        trace = generate(tiny, mode.constraint, PROMPT, **opts)
        check_honest(trace, mode, tiny.vocab, opts["max_tokens"])

    run()


@pytest.mark.parametrize("text", [SKYSCRAPER, CITY])
@pytest.mark.parametrize("fast_forward", [True, False])
def test_the_issues_grammars_are_written_whole_with_and_without_fast_forward(
    tiny, text: str, fast_forward: bool
) -> None:
    """A grammar with one sentence per choice: the whole sentence, whatever fast-forward
    does (before the fix: 'W' and 'Die Stadt Köln liegt in Deutsch', "accepted")."""
    grammar = compile_grammar(text)
    trace = generate(tiny, grammar, "Where?", fast_forward=fast_forward)
    assert trace.stop_reason == "accepted" and trace.matched, trace.text
    assert grammar.accepts(trace.text)
    assert trace.text.startswith("Wolkenkratzer" if text == SKYSCRAPER else "Die Stadt ")
    if fast_forward:
        assert trace.steps[0].forced
    check_honest(trace, _grammar(text, "gbnf"), tiny.vocab, 64)


def test_first_match_is_judged_on_the_state_after_the_forced_chain(tiny) -> None:
    """``stop="first"``: the run stops where the text is a sentence, not one step into a
    chain the matcher has already read (the state after a chain is after its last token)."""
    grammar = compile_grammar('root ::= "Die Stadt " ("Köln" | "Köln am Rhein")')
    for fast_forward in (True, False):
        for seed in range(3):
            trace = generate(
                tiny, grammar, "Where?", stop="first", fast_forward=fast_forward,
                temperature=1.0, seed=seed,
            )  # fmt: skip
            assert trace.text in ("Die Stadt Köln", "Die Stadt Köln am Rhein"), trace.text
            assert trace.stop_reason in ("first_match", "accepted") and trace.matched


@pytest.mark.slow
@pytest.mark.parametrize("fast_forward", [True, False])
def test_the_bundled_model_writes_the_issues_sentences_whole(bundled_model, fast_forward) -> None:
    for text in (SKYSCRAPER, CITY):
        grammar = compile_grammar(text)
        trace = generate(bundled_model, grammar, "Where?", fast_forward=fast_forward)
        assert trace.stop_reason == "accepted" and trace.matched, trace.text
        check_honest(trace, _grammar(text, "gbnf"), bundled_model.vocab, 64)


BUNDLED_MODES = [MODES[2], MODES[6], MODES[8], MODES[14]]  # split characters, schema x2, Lark


@pytest.mark.slow
@pytest.mark.parametrize("mode", BUNDLED_MODES, ids=lambda m: m.name)
def test_the_bundled_model_runs_are_honest(bundled_model, mode: Mode) -> None:
    for opts in (
        {"max_tokens": 12},
        {"max_tokens": 4, "stop": "first", "safe_end": False, "fast_forward": False,
         "temperature": 1.0, "seed": 3},
    ):  # fmt: skip
        trace = generate(bundled_model, mode.constraint, PROMPT, **opts)
        check_honest(trace, mode, bundled_model.vocab, opts["max_tokens"])


@pytest.fixture
def bundled_model():
    from fsmviz.generation.models import load_model

    return load_model()
