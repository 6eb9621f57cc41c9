"""The DFA's CPU budget (``dfa.MAX_SECONDS``) when minimising waits (``check_buildable``):
the construction and the minimisation each have a budget of their own, so a pattern that
was checked is finished later even where its construction used nearly all of its budget;
a minimisation that runs out of its own is refused with a message naming it, at compile
time for a construction too large to wait; a full garbage collection is not charged.

The CPU clock is replaced by one that a test moves forward (``FakeCpu``): "the
construction took 0.9 s" is said, not spent."""

from __future__ import annotations

import gc
import json
import time
from pathlib import Path
from unittest import mock

import pytest
from caches import clear_pattern_caches

from fsmviz import compile_schema
from fsmviz.automaton import dfa as dfa_module
from fsmviz.automaton.syntax import RegexError

ORDER = json.loads((Path(__file__).parent / "cases" / "schema_22_fields.json").read_text())
BUDGET = dfa_module.MAX_SECONDS
RAN_OUT_MINIMISING = f"minimising its DFA takes longer than the {BUDGET:g} s limit of CPU time"


class FakeCpu:
    """``time`` for the DFA module: the real CPU clock plus what the test has added."""

    def __init__(self) -> None:
        self.added = 0.0

    def thread_time(self) -> float:
        return time.thread_time() + self.added


def slow_phases(cpu: FakeCpu, building: float, minimising: float):
    """Patches that make the construction take ``building`` seconds more (its walk, when
    it ends: the subsets run on what is left) and the minimisation ``minimising`` more
    (before its first look at the clock)."""
    real_walk, real_minimise = dfa_module._walk, dfa_module._minimise

    def walk(pattern, kind):
        made = real_walk(pattern, kind)
        cpu.added += building
        return made

    def minimise(*args):
        cpu.added += minimising
        return real_minimise(*args)

    return (
        mock.patch.object(dfa_module, "time", cpu),
        mock.patch.object(dfa_module, "_walk", side_effect=walk),
        mock.patch.object(dfa_module, "_minimise", side_effect=minimise),
    )


def test_a_checked_pattern_is_finished_though_its_minimising_needs_more_than_the_build_left():
    # the construction used 0.9 of its budget, the minimisation needs 0.5: on what was left
    # of one budget (the rule before) the run would have started with "too large"
    cpu = FakeCpu()
    clear_pattern_caches()
    patches = slow_phases(cpu, 0.9 * BUDGET, 0.5 * BUDGET)
    with patches[0], patches[1], patches[2] as minimise:
        compiled = compile_schema(ORDER)
        assert compiled.path == "regex" and minimise.call_count == 0  # left for later
        later = dfa_module.compile_regex(compiled.regex)  # the run's first ask
        assert minimise.call_count == 1
        dfa_module._BUILT.clear()  # no kept construction: built whole, under the same rule
        dfa_module._COMPILED.clear()
        whole = dfa_module.compile_regex(compiled.regex)
    # three walks: the check's sketch (over SURE_SPENT: not told), the check's, the build's
    assert cpu.added == pytest.approx(3 * 0.9 * BUDGET + 2 * 0.5 * BUDGET)
    assert (later.num_states, later.accepting, later.moves) == (
        whole.num_states, whole.accepting, whole.moves,
    )  # fmt: skip


def test_a_minimising_past_its_own_budget_is_refused_by_name_at_compile_time_when_large():
    cpu = FakeCpu()
    clear_pattern_caches()
    patches = slow_phases(cpu, 0.1 * BUDGET, 1.5 * BUDGET)
    with patches[0], patches[1], patches[2]:
        with pytest.raises(RegexError, match=RAN_OUT_MINIMISING):
            dfa_module.compile_regex("[0-9]+(\\.[0-9]+)?")
        # a construction over DEFER_EDGES is minimised inside compile_schema, so running
        # out sends the schema to the grammar path instead of failing its run
        with mock.patch.object(dfa_module, "DEFER_EDGES", 0):
            compiled = compile_schema(ORDER)
    assert compiled.path == "grammar"
    assert "automaton cannot hold it" in compiled.reason and "minimising" in compiled.reason


def test_the_checked_schema_sits_well_inside_what_may_wait():
    clear_pattern_caches()
    compiled = compile_schema(ORDER)
    assert dfa_module._TOLD.peek(compiled.regex)  # its sketch told its subsets fit: they wait
    built = dfa_module._Construction.of(compiled.regex)
    assert built.edges <= dfa_module.DEFER_EDGES / 4


def test_subsets_that_wait_run_on_what_the_walk_left_of_the_budget():
    """A walk that took most of the budget has its subsets built at check time (running
    out there sends a schema to the grammar path); one that took little leaves them for
    later, on what it left: 0.2 s of walk and 0.7 s of subsets are finished."""
    cpu = FakeCpu()
    clear_pattern_caches()
    real_subsets = dfa_module._subsets

    def slow_subsets(*args):
        cpu.added += 0.7 * BUDGET
        return real_subsets(*args)

    patches = slow_phases(cpu, 0.5 * BUDGET, 0)
    with patches[0], patches[1]:
        dfa_module.check_buildable("[a-z]+@[a-z]+")  # a walk over SURE_SPENT: built now
    assert dfa_module._BUILT.peek("[a-z]+@[a-z]+") is not None
    patches = slow_phases(cpu, 0.2 * BUDGET, 0)
    subsets = mock.patch.object(dfa_module, "_subsets", side_effect=slow_subsets)
    with patches[0], patches[1], subsets as built:
        dfa_module.check_buildable("[a-z]+:[0-9]+")
        assert built.call_count == 0 and dfa_module._WALKED.peek("[a-z]+:[0-9]+")
        assert dfa_module.compile_regex("[a-z]+:[0-9]+").accepts("ab:12")
    assert built.call_count == 1


def burn(seconds: float) -> None:
    """Spend ``seconds`` of this thread's CPU."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_full_garbage_collection_is_not_charged_to_the_budget():
    assert dfa_module._count_full_collections in gc.callbacks
    before = dfa_module._COLLECTING.__dict__.get("seconds", 0.0)
    gc.collect()  # a real full collection on this thread is counted...
    assert dfa_module._COLLECTING.seconds > before
    clock = dfa_module._Clock.after(0.03, "building")
    dfa_module._count_full_collections("start", {"generation": 2})
    burn(0.06)  # ...and one that takes longer than the whole budget is left out
    dfa_module._count_full_collections("stop", {"generation": 2})
    dfa_module._count_full_collections("start", {"generation": 0})  # young ones count
    burn(0.01)
    dfa_module._count_full_collections("stop", {"generation": 0})
    clock.check()
    burn(0.03)  # the build's own work still runs the clock out
    clock._skip = 0
    with pytest.raises(RegexError, match="building its DFA takes longer"):
        clock.check()
