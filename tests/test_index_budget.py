"""Walking a whole index has a budget of CPU time: thousands of wide states that share no
byte partition could take minutes. Past the budget the index says so (``IndexTooLarge``,
with a hint); generation goes on without a safe end and says why; the doctor skips its
token-level checks and says so. The budget is cut to nothing here, so that a modest
pattern runs out of it at its first round."""

from __future__ import annotations

import time

import numpy as np
import pytest
from caches import clear_pattern_caches, forget_indexes

from fsmviz import build_index, diagnose, generate
from fsmviz.automaton.graph import UNREACHABLE
from fsmviz.tokens import index as index_module
from fsmviz.tokens.index import IndexTooLarge

LONG = r"[a-z ]{300,}"


@pytest.fixture
def tight_budget(monkeypatch):
    """No time for a closure walk, every cache cold but the vocabularies' and models' (the
    doctor's and generation's caches hold what an earlier budget decided)."""
    monkeypatch.setattr(index_module, "CLOSURE_SECONDS", 0.0)
    clear_pattern_caches()
    yield
    clear_pattern_caches()


def test_a_walk_past_the_budget_is_refused_with_a_hint(bundled_vocab, tight_budget):
    index = build_index(LONG, bundled_vocab)
    assert len(index.allowed_tokens(index.initial_state)) > 10_000  # rows still come lazily
    with pytest.raises(IndexTooLarge, match="too large to walk in full") as caught:
        index.token_distances()
    assert "{1,200}" in caught.value.hint
    started = time.perf_counter()
    with pytest.raises(IndexTooLarge):
        index.states  # noqa: B018 - the verdict is kept, not walked for again
    assert time.perf_counter() - started < 0.01
    assert index.next_state(index.initial_state, int(index.row(0).tokens[0])) is not None


def test_dropped_rows_change_no_distance(bundled_vocab, monkeypatch):
    """Past ``KEPT_ENTRIES`` the closure keeps successor sets only; rows come back on use."""
    forget_indexes()
    full = build_index(r"[a-c]{40}", bundled_vocab).token_distances().copy()
    forget_indexes()
    monkeypatch.setattr(index_module, "KEPT_ENTRIES", 10)
    lean = build_index(r"[a-c]{40}", bundled_vocab)
    np.testing.assert_array_equal(lean.token_distances(), full)
    assert len(lean._rows) < len(lean.states)
    assert full[0] != UNREACHABLE and len(lean.row(30).tokens) > 0
    forget_indexes()


def test_a_generation_goes_on_without_a_safe_end_and_says_why(tiny, tight_budget):
    trace = generate(tiny, LONG, "x", max_tokens=8, temperature=1.0)
    assert len(trace.steps) == 8 and trace.stop_reason == "max_tokens"
    assert trace.options["safe_end"] is False
    assert trace.notes and "No safe end" in trace.notes[0]


def test_the_doctor_skips_token_checks_and_says_so(bundled_vocab, tight_budget):
    found = diagnose(LONG, bundled_vocab, max_tokens=64)
    kinds = [f.kind for f in found]
    assert kinds.count("index_size") == 1
    assert "unbounded_repeat" in kinds  # the checks on the DFA alone still run


def test_a_safe_end_within_its_bound_never_walks_the_whole_index(tiny, tight_budget):
    """Every match of this pattern is at most 17 bytes away, so with 64 tokens the
    single-byte bound settles every step: the safe end stays on although the whole index
    is out of budget (before, the first token waited for the whole index, and here the
    run went on without a safe end)."""
    pattern = r"[a-z]{2,5}@[a-z]{2,5}\.(com|org)"
    trace = generate(tiny, pattern, "x", max_tokens=64, temperature=1.0)
    assert trace.options["safe_end"] is True and not trace.notes
    assert trace.stop_reason == "accepted" and trace.matched
    with pytest.raises(IndexTooLarge):
        build_index(pattern, tiny.vocab).token_distances()


@pytest.mark.parametrize(
    "pattern", [r"[a-z]{2,5}@[a-z]{2,5}\.(com|org)", r"\d{3}-\d{4}", r'"[^"\\]{0,20}"']
)
def test_finishes_within_agrees_with_the_exact_distances(pattern, bundled_vocab):
    forget_indexes()
    index = build_index(pattern, bundled_vocab)
    spelled = index.spelled_distances()
    states = np.array(index.states)
    exact = index.token_distances()[states]
    assert (exact <= spelled[states]).all()  # an upper bound
    fresh = index_module.TokenIndex(index.dfa, index.byte_dfa, bundled_vocab, index.trie)
    for left in range(24, -1, -1):  # the bound settles the large ones first
        np.testing.assert_array_equal(fresh.finishes_within(states, left), exact <= left)
