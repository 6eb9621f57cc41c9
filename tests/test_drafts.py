"""Speculative drafts (``draft_tokens``): prompt lookup proposes tokens, one pass checks
them, and sampling keeps a draft exactly as often as it would have drawn it, so the
output (greedy) or its distribution (sampling) is the same as without drafts."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz.generation.generate import GenerationOptions, _Run, generate, lookup
from fsmviz.generation.models import Model, load_model

JSON_PROMPT = "List one Pink Floyd song as JSON."


def test_lookup_drafts_what_followed_the_same_tokens_before() -> None:
    assert lookup([1, 2, 3, 9, 8, 1, 2, 3], 4) == [9, 8, 1, 2]  # after the trigram 1 2 3
    assert lookup([5, 1, 2, 7, 4, 1, 2], 2) == [7, 4]  # a bigram when no trigram repeats
    assert lookup([1, 2, 8, 1, 2, 9, 1, 2], 1) == [9]  # the latest occurrence
    assert lookup([1, 2, 3, 4], 3) == []  # nothing repeats: no draft
    assert lookup([7, 7], 3) == []  # too short to repeat two tokens


@pytest.mark.parametrize(("top_p", "draft"), [(1.0, 1), (1.0, 3), (0.7, 0), (0.7, 2)])
def test_a_draft_is_kept_as_often_as_sampling_would_draw_it(tiny, top_p, draft) -> None:
    """Speculative sampling: keep the draft with probability q(draft), else draw from q
    without it. Whatever the draft, the tokens come out distributed as q."""
    probs = np.array([0.5, 0.3, 0.15, 0.05])
    q = probs.copy()
    if top_p < 1.0:  # the nucleus of 0.7: the two likeliest tokens
        q[2:] = 0.0
        q /= q.sum()
    run = _Run(tiny, None, GenerationOptions(temperature=1.0, top_p=top_p, seed=7))
    logits, mask = np.log(probs).astype(np.float32), np.ones(4, dtype=bool)
    draws = np.bincount([run._sample(logits, mask, draft) for _ in range(20_000)], minlength=4)
    np.testing.assert_allclose(draws / draws.sum(), q, atol=0.015)


def test_drafted_runs_of_the_noise_model_still_match(tiny, seed_cases) -> None:
    for name, pattern in seed_cases["regexes"].items():
        trace = generate(tiny, pattern, "x", max_tokens=160 if "json" in name else 48,
                         temperature=1.0, seed=2, draft_tokens=8)  # fmt: skip
        assert trace.matched, (name, trace.text, trace.stop_reason)


@pytest.fixture
def model() -> Model:
    return load_model()


@pytest.mark.slow
def test_drafts_leave_greedy_output_unchanged(model, seed_cases) -> None:
    """The seed JSON: the model repeats its own indentation and keys, prompt lookup guesses
    them, and the pass that checks a draft gives the same numbers as one token at a time."""
    pattern = seed_cases["regexes"]["pink_floyd_json"]
    # 64 tokens: a song of 58 steps, its album the title again, 13 of them drafted (100
    # tokens wrote two chart fields more, 88 steps and 26 drafts, for ~2.5 CPU-s more)
    plain = generate(model, pattern, JSON_PROMPT, max_tokens=64)
    drafted = generate(model, pattern, JSON_PROMPT, max_tokens=64, draft_tokens=8)
    assert drafted.text == plain.text
    assert drafted.matched == plain.matched
    assert sum(step.drafted for step in drafted.steps) >= 10
    for a, b in zip(plain.steps, drafted.steps, strict=True):
        assert a.token_id == b.token_id
        assert a.valid_mass == pytest.approx(b.valid_mass, abs=1e-3)
        assert a.state_after == b.state_after
    assert not any(step.drafted for step in plain.steps)
