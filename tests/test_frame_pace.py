"""How often a run's frames reach the page (``fsmviz.app.live.ahead``): at most one per
``every`` seconds while tokens stream, the stream's end at once; the constrained run at
``FRAME_EVERY``, the doctor's checks (a token count on the status line) at ``CHECK_EVERY``
and the shadow run at ``SHADOW_EVERY``, each frame costing the app and the page the same
whatever it carries."""

from __future__ import annotations

import time

import fsmviz.app.fix_checks as fix_checks
import fsmviz.app.live as live
from fsmviz.app.live import ahead, pattern_view
from fsmviz.app.regex_run import live_run
from fsmviz.generation.generate import GenerationOptions
from fsmviz.generation.trace import Step


def steps(n: int) -> list[Step]:
    return [Step(i, "a", 0, 0, 1, 1.0, (), index=i) for i in range(n)]


class Paced:
    """A stream whose steps come ``gap`` seconds apart, then ``pause`` seconds before it ends."""

    def __init__(self, steps: list[Step], gap: float, pause: float = 0.0) -> None:
        self.steps, self.gap, self.pause = steps, gap, pause

    def __iter__(self):
        for step in self.steps:
            time.sleep(self.gap)
            yield step
        time.sleep(self.pause)

    def close(self) -> None:
        pass


def test_frames_come_at_most_once_in_every_seconds_and_carry_every_step():
    sent = steps(30)
    batches, times = [], []
    for batch in ahead(Paced(sent, gap=0.05), every=0.4):  # ~1.5 s of tokens
        batches.append(batch)
        times.append(time.monotonic())
    assert [s for batch in batches for s in batch] == sent
    assert all(batches)
    # a frame waits ``every`` after its first token: frames are never closer than that
    # (waits overshoot on a loaded machine, never undershoot), where FRAME_EVERY's pace
    # would send them 0.25 s apart; the last one comes with the stream's end, at once
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)][:-1]
    assert gaps and all(gap >= 0.39 for gap in gaps), gaps


def test_the_end_of_the_stream_is_not_held_back_by_the_wait():
    started = time.monotonic()
    batches = list(ahead(Paced(steps(2), gap=0.0), every=30.0))
    assert batches == [steps(2)]
    assert time.monotonic() - started < 10  # not the 30 s a frame may wait for more tokens


def recording(monkeypatch) -> list[float]:
    """The ``every`` of each stream the page's frames follow, in order."""
    paces: list[float] = []

    def recorded(stream, every=live.FRAME_EVERY):
        paces.append(every)
        return ahead(stream, every)

    monkeypatch.setattr(live, "ahead", recorded)
    monkeypatch.setattr(fix_checks, "ahead", recorded)
    return paces


def test_a_regex_run_paces_its_run_and_its_shadow_run(tiny, monkeypatch):
    paces = recording(monkeypatch)
    view = pattern_view(r"[a-z ]{8}", tiny.vocab)
    frames = list(live_run(tiny, view, "x", GenerationOptions(max_tokens=8)))
    assert frames[-1].status.startswith("Done") and frames[-1].shadow
    assert paces == [live.FRAME_EVERY, live.SHADOW_EVERY]
    assert live.FRAME_EVERY < live.SHADOW_EVERY <= fix_checks.CHECK_EVERY


def test_the_doctors_checks_are_paced_as_a_count(tiny, monkeypatch):
    """A looping run's fix, checked with the model (``test_doctor_checks``' run)."""
    from test_doctor_checks import PHONE_LOOP, looping_run

    paces = recording(monkeypatch)
    trace, found = looping_run(max_tokens=6)
    view = pattern_view(PHONE_LOOP, None, diagnosed=False)
    frames = list(fix_checks.check_frames(tiny, view, trace, found, "Done."))
    assert frames and paces and paces == [fix_checks.CHECK_EVERY] * len(paces)
