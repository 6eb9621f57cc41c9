"""Constrained generation on the real bundled model, and loop mechanics on a tiny one.

The tiny model (the ``tiny`` fixture of conftest.py) is a randomly initialised Llama built
from a config (offline, instant): its distributions are noise, which is exactly what
exercises the mask, the safe end and the fast-forward without the cost of the real model.
Everything a user sees is also checked on the real SmolLM2-135M-Instruct.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import regex
import torch
from oracle import load_seed_cases

from fsmviz import RegexError, build_index
from fsmviz.generation.generate import GenerationOptions, generate, stream
from fsmviz.generation.models import Model, load_model
from fsmviz.generation.processor import RegexLogitsProcessor

EMAIL = r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+[a-zA-Z0-9]"
EMAIL_PROMPT = "My name is Jerome Swannack, I work at coolcompany.com and my email address is"

# Budgets large enough for the shortest completion of each seed regex.
BUDGETS = {"pink_floyd_json": 32}
"""The seed JSON's shortest text is 21 tokens: at 32 the model closes a title and a year
itself (32 steps, accepted); 64 let it write a chart field more (50 steps, ~1.2 CPU-s)."""
SEED_BUDGET = 12
"""The real model's budget for every other seed: the date (10 tokens) and the URL (7) end
before it, and five runs that ride their loop to the budget (float, pi, paper float, email,
123) are closed by the safe end within it (24 let them ride 12 tokens more each)."""


SEED_RUNS = "test_generate.py:seed_trace"
"""The xdist group of the tests that read ``seed_trace``: on one worker, its cache serves them
all (each seed's run is made once per ``make test``)."""


@pytest.fixture
def model() -> Model:
    return load_model()


@functools.cache
def seed_trace(name: str):
    """The real model's greedy run on seed ``name`` (its prompt, its budget), made once per
    process: the tests that need the same run share it instead of making it again."""
    cases = load_seed_cases()
    prompt = cases["prompts"].get(name, "Give one example.")
    budget = BUDGETS.get(name, SEED_BUDGET)
    return generate(load_model(), cases["regexes"][name], prompt, max_tokens=budget)


def recomputed_distribution(model: Model, prompt_ids: list[int], generated: list[int], t: float):
    """The model's distribution after ``generated``, computed from scratch (no KV cache)."""
    ids = torch.tensor([prompt_ids + generated])
    with torch.inference_mode():
        logits = model.model(input_ids=ids).logits[0, -1].float()
    return torch.softmax(logits / t if t > 0 else logits, dim=-1)


# --- the real model -----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.xdist_group(SEED_RUNS)
def test_every_seed_regex_trace_fully_matches(seed_cases):
    for name, pattern in seed_cases["regexes"].items():
        trace = seed_trace(name)
        assert trace.matched, (name, trace.text, trace.stop_reason)
        assert regex.fullmatch(pattern, trace.text)
        assert trace.stop_reason in ("accepted", "max_tokens")


@pytest.mark.slow
def test_tight_budgets_still_match(model):
    """With exactly the fewest tokens the pattern needs, the output still fully matches."""
    cases = [(EMAIL, EMAIL_PROMPT), (r"[0-9]+\.[0-9]+", "Pi is"), (r"(ab)+c", "x")]
    for pattern, prompt in cases:
        fewest = int(build_index(pattern, model.vocab).token_distances()[0])
        assert 1 <= fewest <= 6
        tight = generate(model, pattern, prompt, max_tokens=fewest, chat=False)
        assert tight.matched, (pattern, fewest, tight.text)
        assert len(tight.steps) <= fewest
        if fewest > 1:
            short = generate(model, pattern, prompt, max_tokens=fewest - 1, chat=False)
            assert not short.matched and short.stop_reason == "max_tokens", short.text
    unfit = generate(model, r"[a-z]{300}", "Write letters", max_tokens=3)
    assert unfit.stop_reason == "max_tokens" and not unfit.matched


@pytest.mark.slow
def test_safe_end_rescues_a_truncation(model):
    loose = generate(model, EMAIL, EMAIL_PROMPT, max_tokens=6, safe_end=False, chat=False)
    tight = generate(model, EMAIL, EMAIL_PROMPT, max_tokens=6, chat=False)
    assert not loose.matched and loose.stop_reason == "max_tokens"
    assert tight.matched, tight.text


@pytest.mark.slow
def test_sampling_is_reproducible_with_a_seed(model):
    """10 tokens: seed 7's run ends accepted at 8 (twice alike), seed 9's rode on to 19."""
    options = {"temperature": 1.0, "top_p": 0.9, "max_tokens": 10}
    runs = [
        generate(model, r"[A-Za-z ]{5,40}", "Name a colour.", seed=s, **options)
        for s in (7, 7, 8, 9)
    ]
    assert runs[0].text == runs[1].text
    assert [s.token_id for s in runs[0].steps] == [s.token_id for s in runs[1].steps]
    assert len({r.text for r in runs}) > 1, "different seeds should not all agree"


@pytest.mark.slow
def test_valid_mass_equals_a_recomputation(model):
    from fsmviz.generation.generate import encode_prompt

    trace = generate(model, EMAIL, EMAIL_PROMPT, max_tokens=12, chat=False)
    index = build_index(EMAIL, model.vocab)
    prompt_ids = encode_prompt(model, EMAIL_PROMPT, chat=False)
    for i, step in enumerate(trace.steps):
        assert 0.0 <= step.valid_mass <= 1.0 + 1e-6
        probs = recomputed_distribution(model, prompt_ids, [s.token_id for s in trace.steps[:i]], 0)
        allowed = torch.from_numpy(index.allowed_tokens(step.state_before).astype(np.int64))
        assert step.valid_mass == pytest.approx(float(probs[allowed].sum()), abs=2e-4)
        assert step.allowed_count == len(allowed)
        assert step.prob == pytest.approx(float(probs[step.token_id]), abs=2e-4)
        assert [c.allowed for c in step.top] == [
            bool(np.isin(i, allowed.numpy())) for i in torch.topk(probs, 5).indices.tolist()
        ]


@pytest.mark.slow
def test_the_seed_002_email_story_and_prob_limit(model):
    """Seed 002: the email pattern lets the model ride `.I.I.I` after the address; the valid
    mass collapses there. A prob_limit stops at the collapse with a full match instead."""
    # 24 tokens: the mass collapses at the 15th (the first `.` after the address), and the
    # limited run stops there; 40 let the loop ride 16 tokens more.
    trace = generate(model, EMAIL, EMAIL_PROMPT, max_tokens=24, chat=False)
    assert min(s.valid_mass for s in trace.steps[1:]) < 0.05
    limited = generate(model, EMAIL, EMAIL_PROMPT, max_tokens=24, chat=False, prob_limit=0.05)
    assert limited.stop_reason == "prob_limit"
    assert limited.matched
    assert len(limited.steps) < len(trace.steps)


@pytest.mark.slow
def test_eos_only_in_accepting_states(model):
    index = build_index("(hot|cold|hotel)", model.vocab)
    trace = generate(model, "(hot|cold|hotel)", "Is ice hot or cold? One word:", max_tokens=8)
    assert trace.matched
    for step in trace.steps:
        if step.is_eos:
            assert index.is_accepting(step.state_before)
        eos_allowed = model.vocab.eos_token_id in index.allowed_tokens(step.state_before)
        assert eos_allowed == index.is_accepting(step.state_before)


@pytest.mark.slow
@pytest.mark.xdist_group(SEED_RUNS)
def test_fast_forward_writes_constant_text_without_sampling(model, seed_cases):
    pattern = seed_cases["regexes"]["pink_floyd_json"]
    fast = seed_trace("pink_floyd_json")  # the seed run (fast-forward is on by default)
    assert fast.options.fast_forward
    # the same 32 tokens without fast-forward: a title and a year, matched (54 steps at 64
    # tokens cost ~2.5 CPU-s more)
    slow = generate(model, pattern, fast.prompt, max_tokens=32, fast_forward=False)
    assert fast.matched and slow.matched
    assert any(s.forced for s in fast.steps) and not any(s.forced for s in slow.steps)
    forced_text = b"".join(s.token_bytes for s in fast.steps if s.forced)
    assert b'title":' in forced_text and fast.text.startswith("[\n")
    for step in fast.steps:
        assert 0.0 <= step.valid_mass <= 1.0 + 1e-6


@pytest.mark.slow
def test_unconstrained_shadow_run(model):
    trace = generate(model, None, "Say hello.", max_tokens=10)
    assert trace.pattern is None and not trace.matched
    assert all(s.valid_mass == pytest.approx(1.0, abs=1e-5) for s in trace.steps)
    assert trace.stop_reason in ("accepted", "max_tokens")


@pytest.mark.slow
def test_a_pattern_no_token_can_spell_is_a_dead_end(model):
    trace = generate(model, "\x04+", "anything", max_tokens=5)
    assert trace.stop_reason == "dead_end" and trace.steps == () and not trace.matched


@pytest.mark.slow
def test_logits_processor_in_model_generate(model):
    pattern = r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    index = build_index(pattern, model.vocab)
    inputs = model.tokenizer(["The moon landing happened on", "Today is"], return_tensors="pt",
                             padding=True)  # fmt: skip
    out = model.model.generate(
        **inputs,
        logits_processor=[RegexLogitsProcessor(index, inputs)],
        max_new_tokens=12,
        do_sample=False,
        pad_token_id=model.vocab.eos_token_id,
    )
    for row in out[:, inputs["input_ids"].shape[1] :]:
        text = model.tokenizer.decode(row, skip_special_tokens=True)
        assert regex.fullmatch(pattern, text), text


# --- the tiny random model: loop mechanics ----------------------------------------------


def test_noise_model_output_still_matches(tiny, seed_cases):
    for name, pattern in seed_cases["regexes"].items():
        for seed in (0, 1):
            trace = generate(tiny, pattern, "x", max_tokens=BUDGETS.get(name, 48), seed=seed,
                             temperature=1.0)  # fmt: skip
            assert trace.matched, (name, trace.text, trace.stop_reason)


def test_steps_stream_one_at_a_time_and_chain_states(tiny):
    run = stream(tiny, r"[a-z]{3}[0-9]", "x", temperature=1.0, seed=3)
    first = next(run)
    assert run.stop_reason is None
    steps = [first, *run]
    assert run.stop_reason == "accepted"
    assert steps[0].state_before == 0
    for a, b in zip(steps, steps[1:], strict=False):
        assert a.state_after == b.state_before
    assert [s.index for s in steps] == list(range(len(steps)))
    assert run.trace().matched


def test_safe_end_on_noise_for_every_budget(tiny):
    fewest = int(build_index(EMAIL, tiny.vocab).token_distances()[0])
    for budget in range(fewest, fewest + 6):
        trace = generate(tiny, EMAIL, "x", max_tokens=budget, temperature=1.0, seed=budget)
        assert trace.matched, (budget, trace.text)
        assert len(trace.steps) <= budget


def test_fast_forward_marks_forced_steps(tiny):
    trace = generate(tiny, r'\{"name": "[a-z]{2,5}"\}', "x", temperature=1.0)
    assert trace.matched
    assert trace.text.startswith('{"name": "')
    forced = [s for s in trace.steps if s.forced]
    assert forced and b"".join(s.token_bytes for s in forced).startswith(b'{"name": "')


def test_options_are_checked():
    with pytest.raises(ValueError, match="max_tokens"):
        GenerationOptions(max_tokens=0)
    with pytest.raises(ValueError, match="top_p"):
        GenerationOptions(top_p=0)
    with pytest.raises(ValueError, match="temperature"):
        GenerationOptions(temperature=-1)


def test_bad_pattern_fails_before_any_work(tiny):
    with pytest.raises(RegexError):
        stream(tiny, "(?=a)b", "x")


def test_fast_forward_leaves_the_boundary_token_to_the_model(tiny):
    """The constant text "[\\n" is followed by free indentation, and the vocabulary has
    tokens that cross that boundary ("\\n\\t", "\\n  "): writing "\\n" alone would split text
    the model writes as one token, so the newline is the model's choice, not forced."""
    trace = generate(tiny, r"\[\n[ \t]{2}\]", "x", max_tokens=10, temperature=1.0, seed=1)
    assert trace.matched
    assert trace.steps[0].forced and trace.steps[0].text == "["
    newline = next(s for s in trace.steps if "\n" in s.text)
    assert not newline.forced
    # with nothing free after it, the same constant text is all forced
    constant = generate(tiny, r"\[\n  \]", "x", max_tokens=10)
    assert constant.text == "[\n  ]" and all(s.forced for s in constant.steps)
