"""The decoding options of issue 31 on the tiny random model (the ``tiny`` fixture: noise
over the real tokenizer, so thousands of tokens compete): stop rules, overshoot, samplers."""

from __future__ import annotations

import numpy as np
import pytest
import regex

from fsmviz import build_index
from fsmviz.generation.generate import GenerationOptions, generate
from fsmviz.generation.samplers import narrow
from fsmviz.tokens.overshoot import overshoot


def test_options_check_the_new_knobs() -> None:
    with pytest.raises(ValueError, match="top_k"):
        GenerationOptions(top_k=-1)
    with pytest.raises(ValueError, match="stop"):
        GenerationOptions(stop="longest")  # type: ignore[arg-type]
    assert GenerationOptions(top_k=5, stop="first", overshoot=True)["stop"] == "first"


def test_first_match_stops_at_the_first_full_match(tiny) -> None:
    trace = generate(tiny, "[a-z]+", "x", max_tokens=12, stop="first", chat=False)
    assert trace.stop_reason == "first_match"
    assert len(trace.steps) == 1 and trace.matched  # one token of letters already matches


def test_eos_rule_goes_on_past_the_first_match(tiny) -> None:
    trace = generate(tiny, "[a-z]+", "x", max_tokens=6, chat=False)
    assert trace.stop_reason != "first_match" and len(trace.steps) > 1


def test_overshoot_takes_a_token_and_cuts_it_at_the_match(tiny) -> None:
    """With ``[a-z]``, the 26 single letters are allowed, and thousands of tokens that
    start with a letter (" the" does not, "the" does) overshoot: noise picks one."""
    trace = generate(tiny, "[a-z]", "x", max_tokens=6, overshoot=True, chat=False, seed=1)
    last = trace.steps[-1]
    assert trace.stop_reason == "overshoot"
    assert trace.matched and regex.fullmatch("[a-z]", trace.text)
    assert last.cut and last.text == trace.text + last.cut  # the whole token, then the cut
    assert last.token_bytes == trace.text.encode()
    assert last.overshoot_count > 1000
    index = build_index("[a-z]", tiny.vocab)
    assert overshoot(index, 0).find(last.token_id) == (1, last.state_after)


def test_without_overshoot_the_same_run_never_cuts(tiny) -> None:
    trace = generate(tiny, "[a-z]", "x", max_tokens=6, chat=False, seed=1)
    assert trace.stop_reason == "accepted" and all(not s.cut for s in trace.steps)
    assert all(s.overshoot_count == 0 for s in trace.steps)


def test_prob_limit_still_stops_with_the_new_rules(tiny) -> None:
    for extra in ({"overshoot": True}, {"stop": "first"}, {}):
        trace = generate(tiny, "[a-z]+", "x", max_tokens=8, chat=False, prob_limit=1.0, **extra)
        # prob_limit=1 stops at the first accepting state where any mass is outside
        assert trace.stop_reason in ("prob_limit", "first_match", "overshoot")
        assert trace.matched


def test_samplers_record_what_they_removed(tiny) -> None:
    trace = generate(
        tiny, "[a-z]+", "x", max_tokens=4, chat=False, temperature=1.0, top_k=5, top_p=0.5
    )
    for step in trace.steps:
        if step.forced:
            continue
        assert step.top_k_removed == step.allowed_count - 5
        assert 0 <= step.top_p_removed < 5


def test_top_k_one_is_greedy_over_the_allowed_tokens(tiny) -> None:
    greedy = generate(tiny, "[a-z ]+", "x", max_tokens=6, chat=False)
    sampled = generate(tiny, "[a-z ]+", "x", max_tokens=6, chat=False, temperature=2.0, top_k=1)
    assert sampled.text == greedy.text


def test_narrow_keeps_the_nucleus_and_the_top_k() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        probs = rng.dirichlet(np.ones(20)) * (rng.random(20) < 0.7)
        k, p = int(rng.integers(0, 8)), float(rng.uniform(0.1, 1.0))
        out = narrow(probs, k, p)
        kept = np.flatnonzero(out.probs)
        alive = np.flatnonzero(probs)
        after_k = alive if not k or len(alive) <= k else np.argsort(-probs, kind="stable")[:k]
        assert set(kept) <= set(after_k)
        assert out.top_k_removed == len(alive) - len(after_k)
        assert out.top_p_removed == len(after_k) - len(kept)
        total = probs[after_k].sum()
        if len(kept):  # the smallest head: without its last token it holds less than p
            ordered = np.sort(probs[kept])[::-1]
            assert ordered[:-1].sum() < p * total + 1e-12
            assert ordered.sum() >= min(p * total, total) - 1e-9


def test_the_doctor_names_where_overshoot_fired(tiny) -> None:
    from fsmviz import diagnose

    trace = generate(tiny, "[a-z]", "x", max_tokens=6, overshoot=True, chat=False, seed=1)
    found = [f for f in diagnose("[a-z]", tiny.vocab, trace) if f.kind == "overshoot"]
    assert len(found) == 1 and found[0].steps == (trace.steps[-1].index,)
    assert "was cut" in found[0].message and trace.steps[-1].cut.strip() in found[0].message


def test_the_doctor_says_a_first_match_could_have_gone_on(tiny) -> None:
    from fsmviz import diagnose

    trace = generate(tiny, "[a-z]+", "x", max_tokens=6, stop="first", chat=False)
    found = [f for f in diagnose("[a-z]+", tiny.vocab, trace) if f.kind == "first_match"]
    assert len(found) == 1 and "longer match was still possible" in found[0].message


def test_the_steps_table_shows_the_cut_and_the_samplers(tiny) -> None:
    from fsmviz.html.steps import steps_html
    from fsmviz.html.tokens import output_html

    trace = generate(tiny, "[a-z]", "x", max_tokens=6, overshoot=True, chat=False, seed=1, top_k=3)
    table = steps_html(trace.steps)
    assert "overshoot:" in table and "was cut" in table and "top-k removed" in table
    assert "by overshoot" in table
    out = output_html(trace.steps, final=True)
    assert 'class="tok overshoot"' in out and "data-cut=" in out


def test_every_stop_reason_has_words_on_the_page() -> None:
    from typing import get_args

    from fsmviz.app import live
    from fsmviz.generation.trace import StopReason, Trace
    from fsmviz.html.comparison import STOPPED

    assert set(get_args(StopReason)) == set(STOPPED)
    for reason in get_args(StopReason):
        assert "stopped because" in live.done_status(Trace("", (), reason, True))
