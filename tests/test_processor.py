"""``RegexLogitsProcessor`` on the real bundled model and its 49k vocabulary."""

from __future__ import annotations

import re
import textwrap

import pytest
import regex
import torch

import fsmviz
import fsmviz.generation.processor
from fsmviz.generation.processor import RegexLogitsProcessor

DATE = r"[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?"
PROMPT = "The moon landing was on "


@pytest.fixture
def model():
    return fsmviz.load_model()


def _run(model, pattern: str, prompt: str, mask, max_new_tokens: int) -> str:
    inputs = model.tokenizer(prompt, return_tensors="pt")
    out = model.model.generate(
        **inputs, logits_processor=[mask], max_new_tokens=max_new_tokens, do_sample=False
    )
    return model.tokenizer.decode(out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)


def test_the_docstring_example_runs(model) -> None:
    doc = fsmviz.generation.processor.__doc__
    code = textwrap.dedent(doc.split("Example (")[1].split("::\n", 1)[1])
    assert "assert text ==" in code
    exec(code, {})  # its own assert checks the output


@pytest.mark.parametrize(
    ("pattern", "prompt", "budget"),
    [(DATE, PROMPT, 6), (r"[A-Z][a-z ]*\.", "Write a sentence about cats: ", 5)],
)
def test_the_safe_end_finishes_a_match_within_max_new_tokens(
    model, pattern: str, prompt: str, budget: int
) -> None:
    index = fsmviz.build_index(pattern, model.vocab)
    inputs = model.tokenizer(prompt, return_tensors="pt")
    cut = _run(model, pattern, prompt, RegexLogitsProcessor(index, inputs), budget)
    safe = _run(model, pattern, prompt, RegexLogitsProcessor(index, inputs, budget), budget)
    assert regex.fullmatch(pattern, cut) is None, cut  # without it the budget cuts the match
    assert regex.fullmatch(pattern, safe) is not None, safe


def test_a_processor_serves_a_second_generate_call_from_the_start(model) -> None:
    """The second call kept the first call's DFA state: step 0 allowed the wrong tokens."""
    index = fsmviz.build_index(DATE, model.vocab)
    inputs = model.tokenizer(PROMPT, return_tensors="pt")
    mask = RegexLogitsProcessor(index, inputs)
    first = _run(model, DATE, PROMPT, mask, 6)
    assert _run(model, DATE, PROMPT, mask, 6) == first
    scores = torch.zeros(1, len(model.vocab))
    fresh = mask(inputs["input_ids"], scores)  # step 0 of a third call
    allowed = torch.nonzero(fresh[0] > -torch.inf).flatten().tolist()
    assert allowed == index.allowed_tokens(index.initial_state).tolist()
    assert all(re.fullmatch("[0-9]+", model.vocab.token_text(t)) for t in allowed)


def test_the_callers_scores_are_never_written(model) -> None:
    index = fsmviz.build_index(DATE, model.vocab)
    inputs = model.tokenizer(PROMPT, return_tensors="pt")
    scores = torch.randn(1, len(model.vocab))
    before = scores.clone()
    out = RegexLogitsProcessor(index, inputs)(inputs["input_ids"], scores)
    assert torch.equal(scores, before)
    assert out is not scores and torch.isinf(out).sum() == len(model.vocab) - 10
