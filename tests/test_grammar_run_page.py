"""The Grammar tab's run, without a browser: the frames of a run (as the regex page's, the
rules drawing lit where the DFA is), Stop and a second Generate, a step chosen, the
downloads and a link's inputs put back. The loop runs on the ``tiny`` random model (noise,
which a grammar must still hold), so these say nothing about what the real model writes."""

from __future__ import annotations

import json
import re
from html import escape, unescape
from pathlib import Path
from types import SimpleNamespace

import plotly.graph_objects as go
import pytest

from fsmviz.app.examples import grammar_examples
from fsmviz.app.grammar_live import grammar_frames
from fsmviz.app.grammar_page import GrammarRunInputs, GrammarTab, downloads, on_load, on_run
from fsmviz.app.handlers import Page, StopMark
from fsmviz.generation.trace import GenerationOptions, pieces
from fsmviz.grammar.place import rule_states, step_charts
from fsmviz.grammar.replay import StepMasks
from fsmviz.html.grammar import grammar_view

ARITHMETIC = grammar_examples()["arithmetic"]


class Models:
    """The page's ``BackgroundModel`` as the handlers use it, holding the tiny model."""

    def __init__(self, model):
        self.model = model

    def get(self, timeout=None):
        return self.model

    def vocabulary(self):
        return self.model.vocab


def tab() -> GrammarTab:
    """The tab with names for components: the handlers' updates are keyed by them."""
    names = ["rules", "output", "shadow", "steps", "chart", "doctor", "error", "status",
             "trace", "findings", "step", "downloads", "run", "stop", "allowed"]  # fmt: skip
    return GrammarTab(Page(*names), "place", "terminal")


def frames(tiny, shadow=True, max_tokens=12):
    view = grammar_view(ARITHMETIC.grammar, ARITHMETIC.format)
    options = GenerationOptions(max_tokens=max_tokens, temperature=1.0, seed=3)
    return view, list(grammar_frames(tiny, view, "Sum:", options, shadow=shadow))


def test_a_run_streams_the_regex_pages_frames_then_the_shadow_run(tiny) -> None:
    view, run = frames(tiny)
    ends = [k for k, f in enumerate(run) if f.frame.trace is not None]
    assert len(ends) == 1, "the trace comes once, when the constrained run has ended"
    end = run[ends[0]]
    trace = end.frame.trace
    assert trace.steps and trace.matched == view.grammar.accepts(trace.text)
    # the frame that ends the constrained run: everything for stepping, the shadow next
    assert end.frame.shadow_next
    assert isinstance(end.frame.chart, go.Figure)
    assert 'class="steps"' in end.frame.steps and 'class="fsm rules' in end.frame.dfa
    assert "allowed-data" in (end.frame.allowed or "")
    assert end.place and "grammar-place" in end.place
    # the shadow run's frames set only the shadow output and the status
    later = run[ends[0] + 1 :]
    assert later and all(f.frame.dfa is None and f.frame.steps is None for f in later)
    assert 'class="tokens"' in (later[-1].frame.shadow or "")
    # the streamed frames carried every step once
    assert sum(len(f.frame.new_steps) for f in run) == len(trace.steps)


def test_without_the_shadow_run_the_trace_frame_is_the_last(tiny) -> None:
    _, run = frames(tiny, shadow=False)
    assert run[-1].frame.trace is not None and not run[-1].frame.shadow_next


def test_every_steps_allowed_set_is_llguidances_mask_along_the_run(tiny) -> None:
    view, run = frames(tiny, shadow=False)
    end = run[-1]
    trace, sets = end.frame.trace, hidden_json(end.frame.allowed, "allowed-data")
    assert len(sets) == len(trace.steps)
    masks = StepMasks(view.grammar, tiny.vocab, [s.token_id for s in trace.steps])
    for step, allowed in zip(trace.steps, sets, strict=True):
        assert allowed["t"] == len(masks.allowed_tokens(step.state_before))
        # the run's mask is the grammar's, or narrowed by the safe end
        assert step.allowed_count <= allowed["t"]
        assert 0.0 <= allowed["m"] <= 1.0 + 1e-9
    # the table names the rule the parser is in before and after each step
    states = rule_states(step_charts(view.network, trace.steps))
    assert states[0][0] == "root" and len(states) == len(trace.steps)
    assert states[0][0] in end.frame.steps


def hidden_json(html: str, cls: str):
    """The JSON of the hidden element of class ``cls`` in ``html`` (what the page's
    script reads)."""
    found = re.search(rf'class="{cls}" hidden (?:data-run="[^"]*" )?data-json="([^"]*)"', html)
    assert found, f"no hidden {cls} data in the frame"
    return json.loads(unescape(found[1]))


def test_the_run_brings_each_steps_lights_place_and_terminal_for_the_browser(tiny) -> None:
    """Choosing a step is the browser's (static/grammar.js, no server round trip): the
    run's last frame brings each step's lights of the rules, its place in words and its
    terminal, beside the table and the allowed sets."""
    _, run = frames(tiny, shadow=False)
    end = run[-1]
    steps = end.frame.trace.steps
    assert len(hidden_json(end.frame.dfa, "lights")) == len(steps)
    views = hidden_json(end.place, "step-views")
    assert len(views["s"]) == len(steps)
    for i in range(len(steps)):
        place, terminal = views["p"][views["s"][i][0]], views["t"][views["s"][i][1]]
        text = "".join(pieces(steps[: i + 1]))
        assert escape(json.dumps(text[-60:], ensure_ascii=False)) in place
        assert terminal == "" or "grammar-terminal" in terminal
    # what the script swaps: the place's and the terminal's views
    assert 'class="place-view"' in end.place and 'class="terminal-view"' in end.terminal


def drive(tiny, mark: StopMark, stop_after: int | None = None, new_run_after=None):
    """Run ``on_run`` to its end, pressing Stop (or Generate again) after some updates."""
    t = tab()
    asked = GrammarRunInputs(ARITHMETIC.grammar, ARITHMETIC.format, "Sum:", 40, 1.0, 5, False)
    run = on_run(t, Models(tiny), asked, mark)
    seen = []
    for k, update in enumerate(run):
        seen.append(update)
        if k == stop_after:
            mark.stop()
        if k == new_run_after:
            mark.start()
    return t, seen


def test_stop_keeps_what_was_written_for_stepping(tiny) -> None:
    t, seen = drive(tiny, StopMark(), stop_after=1)
    last = seen[-1]
    assert last[t.page.status].startswith("Stopped")
    assert last[t.page.stop]["visible"] is False
    # stopped after the first tokens came: they are the trace, with every step's set
    kept = [u for u in seen if t.page.trace in u]
    assert kept, "the steps written before Stop were not kept"
    trace = kept[-1][t.page.trace]
    assert trace.steps and "Stopped by the visitor" in trace.notes[0]
    assert len(hidden_json(kept[-1][t.page.allowed], "allowed-data")) == len(trace.steps)
    assert any(p.endswith("trace.json") for p in kept[-1][t.page.downloads])


def test_generate_is_always_available_and_a_new_run_ends_the_old_one(tiny) -> None:
    t, seen = drive(tiny, StopMark(), new_run_after=1)
    assert seen[0][t.page.run]["interactive"] is True
    assert seen[0][t.page.stop]["visible"] is True
    # the old run ends without a word: no "Stopped.", no trace of its own
    assert not any("Stopped" in str(u.get(t.page.status, "")) for u in seen)
    assert len(seen) <= 3


def test_the_downloads_hold_the_trace_the_grammar_and_the_rules_drawing(tiny) -> None:
    view, run = frames(tiny, shadow=False, max_tokens=6)
    files = {Path(p).name: Path(p) for p in downloads(run[-1].frame.trace, view)}
    assert set(files) == {"trace.json", "trace.csv", "grammar.gbnf", "rules.svg"}
    assert json.loads(files["trace.json"].read_text())["pattern"] == view.text
    assert files["rules.svg"].read_text().lstrip().startswith("<svg")
    assert files["grammar.gbnf"].read_text() == ARITHMETIC.grammar


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"grammar": "root ::= <x>", "prompt": "<b>", "max_tokens": "999", "chat": "0",
          "format": "lark", "temperature": "nan", "seed": "7"},
         ("root ::= <x>", "lark", "<b>", 256, None, 7, False)),
        ({"grammar": "a", "format": "evil"}, ("a", None, None, None, None, None, None)),
    ],
)  # fmt: skip
def test_a_links_inputs_are_put_back_checked_and_clamped(query, expected) -> None:
    got = on_load(None, SimpleNamespace(query_params=query))
    values = tuple(None if isinstance(v, dict) else v for v in got)  # gr.skip() is a dict
    assert values == expected


def test_a_link_without_a_grammar_touches_nothing() -> None:
    got = on_load(None, SimpleNamespace(query_params={"regex": "a+", "prompt": "x"}))
    assert all(isinstance(v, dict) for v in got)
