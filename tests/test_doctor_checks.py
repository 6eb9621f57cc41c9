"""No fix without a measured improvement (issue 47 point 3): a fix for what a run did is
offered only once the doctor has re-run it on the same prompt and seed and seen the loop or
collapse it names gone or smaller, and the page shows before → after as numbers.

Hand-built traces for the rule itself (``fsmviz.diagnose.checks.judged``, the page's
``findings_html``), the tiny random model for the page's check frames, and seed 002's
email story on the real model (slow) for a stalling example checked end to end.
"""

from __future__ import annotations

import pytest
from test_diagnose import ASCII, EMAIL, EMAIL_PROMPT, make_trace, only

from fsmviz.diagnose import diagnose
from fsmviz.diagnose.checks import MAX_CHECKS, fix_key, judged, needs_check, to_check
from fsmviz.html.findings import findings_html
from fsmviz.html.fixes import offered

PHONE_LOOP = r"[a-z]+@[a-z]+\.com"
"""A phone-number prompt under this pattern rides the first ``[a-z]+``."""


def looping_run(max_tokens: int = 8):
    """A run that circles the first ``[a-z]+``, cut off at max_tokens."""
    pieces = [("a", 0.3, [("5", 0.6, False)])] * max_tokens
    trace = make_trace(PHONE_LOOP, ASCII, pieces, "max_tokens", max_tokens=max_tokens, seed=3)
    return trace, diagnose(PHONE_LOOP, ASCII, trace)


def ended_run(pattern: str, text: str):
    """The run with the fix: ``text`` letter by letter, then the end of text."""
    pieces = [(c, 0.9, []) for c in text] + [(None, 0.9, [])]
    trace = make_trace(pattern, ASCII, pieces, "accepted", max_tokens=8, seed=3)
    return trace, diagnose(pattern, ASCII, trace)


def test_a_runs_fix_is_not_offered_before_it_is_checked():
    """Today's page offered the loop's bound at once; now the loop, and the pattern finding
    that carries the same bound, say it is not yet checked, with no button."""
    trace, found = looping_run()
    (loop,) = only(found, "loop")
    assert needs_check(loop) and loop.check is None and loop.suggestion
    assert offered(loop, found) is None
    shown = findings_html(found, pattern=PHONE_LOOP)
    assert "Not yet checked" in shown
    assert f'data-fix="{{&quot;regex&quot;: &quot;{loop.suggestion}' not in shown
    # a pattern finding with a fix of its own (not the run's) is still offered at once
    static = [f for f in found if f.kind == "unbounded_repeat" and fix_key(f) != fix_key(loop)]
    assert static and all(offered(f, found) is not None for f in static)


def test_a_fix_that_ends_the_loop_is_offered_with_its_numbers():
    trace, found = looping_run()
    (loop,) = only(found, "loop")
    assert to_check(found) == [fix_key(loop)]
    after, after_found = ended_run(loop.suggestion, "ab@cd.com")
    checked = judged(found, fix_key(loop), trace, after, after_found)
    (loop,) = only(checked, "loop")
    assert loop.check is not None and loop.check.helps
    assert (loop.check.before, loop.check.after) == (len(only(found, "loop")[0].steps), 0)
    assert offered(loop, checked) is not None and to_check(checked) == []
    shown = findings_html(checked, pattern=PHONE_LOOP)
    assert f"steps going round a loop: {loop.check.before} → 0" in shown
    assert 'class="apply"' in shown
    (truncation,) = only(checked, "truncation")  # it carries the same bound
    assert truncation.check.said == "tokens written when max_tokens cut the run off: 8 → 0"


def test_a_fix_that_leaves_the_loop_as_it_was_is_not_offered():
    """The bound moved nothing: the fixed run circles just as long, so the page says so
    with the numbers and keeps the button off."""
    trace, found = looping_run()
    (loop,) = only(found, "loop")
    same, same_found = looping_run()  # the same circling, as if the bound changed nothing
    checked = judged(found, fix_key(loop), trace, same, same_found)
    (loop,) = only(checked, "loop")
    assert loop.check is not None and not loop.check.helps
    assert loop.check.before == loop.check.after > 0
    assert offered(loop, checked) is None
    shown = findings_html(checked, pattern=PHONE_LOOP)
    assert "Checked, no better" in shown and f"{loop.check.before} → {loop.check.after}" in shown
    assert f"&quot;{loop.suggestion}&quot;" not in shown.split("Checked, no better")[0][-400:]


def test_a_collapse_is_judged_by_its_own_steps_below_the_threshold():
    """The chat template for a first-step collapse: counted as steps below 5 % before and
    after, not as loop steps."""
    pieces = [("P", 0.01, [(" Paris", 0.8, False), (" Lyon", 0.1, False)]), ("a", 0.9, [])]
    pieces += [(None, 0.9, [])]
    trace = make_trace("[A-Z][a-z]+", ASCII, pieces, "accepted", chat=False, max_tokens=6)
    found = diagnose("[A-Z][a-z]+", ASCII, trace)
    (collapse,) = only(found, "valid_mass_collapse")
    assert collapse.settings == (("chat", True),) and offered(collapse, found) is None
    fixed = [("P", 0.7, []), ("a", 0.9, []), (None, 0.9, [])]  # with the chat template
    after = make_trace("[A-Z][a-z]+", ASCII, fixed, "accepted", chat=True, max_tokens=6)
    after_found = diagnose("[A-Z][a-z]+", ASCII, after)
    checked = judged(found, fix_key(collapse), trace, after, after_found)
    (collapse,) = only(checked, "valid_mass_collapse")
    assert collapse.check.said == "steps below 5% valid mass: 1 → 0"
    assert offered(collapse, checked) is not None


def test_the_page_checks_each_fix_with_the_model_in_bounded_runs(tiny):
    """The page's check frames (after a run, before the shadow run): each distinct run fix
    run once with the run's own options (at most MAX_CHECKS, each at most max_tokens), the
    findings redrawn with every run fix checked and its numbers shown."""
    from fsmviz.app.fix_checks import check_frames
    from fsmviz.app.live import pattern_view

    trace, found = looping_run(max_tokens=6)
    frames, checked = [], None
    gen = check_frames(tiny, pattern_view(PHONE_LOOP, None, diagnosed=False), trace, found, "Done.")
    while True:
        try:
            frames.append(next(gen))
        except StopIteration as end:
            checked = end.value
            break
    keys = to_check(found)
    assert 1 <= len(keys) <= MAX_CHECKS
    redrawn = [f for f in frames if f.diagnosis is not None]
    assert len(redrawn) == len(keys) and redrawn[-1].findings == checked
    # then, and only then, "Skip shadow run" is offered: Stop before it ends the checks too
    assert [f.shadow_next for f in frames] == [False] * (len(frames) - 1) + [True]
    progress = [f.status for f in frames if f.diagnosis is None and not f.shadow_next]
    assert progress and all(s.startswith("Done. The doctor is checking its fix") for s in progress)
    assert all("of at most 6 tokens" in s for s in progress)
    assert to_check(checked) == []
    firsts = {fix_key(f): f for f in reversed(checked) if needs_check(f)}  # shown in full
    for f in checked:
        if needs_check(f):
            assert f.check is not None
            assert (offered(f, checked) is not None) == f.check.helps
    for f in firsts.values():
        assert f"{f.check.before:,} → {f.check.after:,}" in redrawn[-1].diagnosis


@pytest.mark.slow
def test_seed_002s_loop_is_gone_on_the_same_prompt_and_seed():
    """Seed 002's stalling example on the real model: the email pattern circles `.I.I.I`;
    its bound, re-run on the same prompt and seed, writes no loop at all."""
    from fsmviz.diagnose.checks import check_fixes
    from fsmviz.generation.generate import generate
    from fsmviz.generation.models import load_model

    model = load_model()
    trace = generate(model, EMAIL, EMAIL_PROMPT, max_tokens=32, chat=False, seed=0)
    found = diagnose(EMAIL, model.vocab, trace)
    (loop,) = only(found, "loop")
    checked = check_fixes(model, found, trace, limit=1)  # the loop's fix: the first
    (loop,) = only(checked, "loop")
    assert loop.check.before == len(loop.steps) > 0 and loop.check.after == 0
    assert loop.check.helps and "I.I" not in loop.check.text
    assert offered(loop, checked) is not None
    for f in checked:  # every finding with the same bound was judged by the same run
        assert (f.check is not None) == (fix_key(f) == fix_key(loop))
