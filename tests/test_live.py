"""The page's view of a running generation (``fsmviz.app.live``): the generation runs ahead of
the frames on a thread of its own, and a frame carries every token that came meanwhile."""

from __future__ import annotations

import pickle
import threading

import pytest

from fsmviz.app.live import ahead, pattern_view, regex_drawn
from fsmviz.app.regex_run import live_run
from fsmviz.generation.generate import GenerationOptions, stream
from fsmviz.html.steps import steps_html
from fsmviz.html.tokens import output_html


def test_every_step_arrives_once_and_in_order(tiny):
    run = stream(tiny, r"[a-z ]{30,}", "x", max_tokens=30, temperature=1.0)
    batches = list(ahead(run))
    steps = [step for batch in batches for step in batch]
    assert steps == run.steps and len(steps) == 30
    assert [s.index for s in steps] == list(range(30))
    assert all(batches)  # no empty frame
    assert run.trace().stop_reason == "max_tokens"


class Failing:
    """A stream whose third step fails (the model ran out of memory, say)."""

    def __init__(self, steps):
        self.steps, self.closed = steps, threading.Event()

    def __iter__(self):
        yield from self.steps[:2]
        raise RuntimeError("out of memory at the third token")

    def close(self):
        self.closed.set()


def test_a_failure_in_the_stream_reaches_the_reader(tiny):
    steps = list(stream(tiny, r"[a-z]{5}", "x", max_tokens=5))
    failing = Failing(steps)
    arrivals = ahead(failing)
    with pytest.raises(RuntimeError, match="out of memory"):
        for _ in arrivals:
            pass
    assert failing.closed.wait(5)


def test_a_page_run_streams_then_shows_the_shadow_run(tiny):
    view = pattern_view(r"[a-z ]{20,}", tiny.vocab)
    frames = list(live_run(tiny, view, "x", GenerationOptions(max_tokens=20, temperature=1.0)))
    ended = [i for i, f in enumerate(frames) if f.trace is not None]
    assert len(ended) == 1  # the constrained run's end: the page can step from here on
    final = frames[ended[0]]
    assert final.trace.stop_reason == "max_tokens" and len(final.trace.steps) == 20
    # the shadow run touches only its own box and the status line, so the step the visitor
    # chose meanwhile (DFA, table, chart) is never overwritten
    shadow = frames[ended[0] + 1 :]
    assert shadow and shadow[-1].shadow and shadow[-1].status.startswith("Done")
    for frame in shadow:
        assert (frame.dfa, frame.steps, frame.chart, frame.output, frame.diagnosis) == (None,) * 5
    counts = [int(f.status.split("… ")[1].split()[0]) for f in frames if "Generating" in f.status]
    assert counts == sorted(counts) and counts[-1] == 20  # tokens only ever added


def test_frames_are_plain_picklable_data(tiny):
    """ZeroGPU runs the frame generator in a worker process and pickles every frame."""
    view = pattern_view(r"[a-z]{3}", tiny.vocab)
    for frame in live_run(tiny, view, "x", GenerationOptions(max_tokens=3)):
        again = pickle.loads(pickle.dumps(frame))
        assert again.status == frame.status and again.dfa == frame.dfa
        assert (again.chart is None) == (frame.chart is None)


def test_the_shadow_box_explains_a_first_choice_of_end_of_text():
    from fsmviz.app.live import shadow_html
    from fsmviz.generation.trace import Step

    eos = Step(2, "", 0, 0, 1, 1.0, (), is_eos=True)
    assert "first choice was end-of-text" in shadow_html([eos])
    words = Step(5, "hi", 0, 0, 1, 1.0, (), token_bytes=b"hi")
    assert "end-of-text" not in shadow_html([words, eos])


def test_each_live_frame_only_adds_to_the_last_one(tiny):
    """A run's frames leave the output and the step table open at their end, so each
    frame's HTML extends the last one's: Gradio then streams only the new tokens and rows
    (an ``append``), not the whole table again at every frame. The last frame closes them."""
    view = pattern_view(r"[a-z ]{40}", tiny.vocab)
    steps = list(stream(tiny, view.pattern, "x", max_tokens=40, temperature=1.0))
    shown = [
        (output_html(steps[:k]), regex_drawn(view, steps[:k], False)["steps"])
        for k in range(1, len(steps) + 1)
    ]
    for (output, table), (next_output, next_table) in zip(shown, shown[1:], strict=False):
        assert next_output.startswith(output) and next_output != output
        assert next_table.startswith(table) and next_table != table
    assert output_html(steps, final=True).endswith("</div>")
    assert steps_html(steps).endswith("</tbody></table>")
