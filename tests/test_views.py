"""The page's HTML pieces: exact output text, escaping, and the live frames of a run."""

from __future__ import annotations

import html
import json
import re
import time
from dataclasses import replace

import pytest

from fsmviz import Candidate, Step, Vocabulary, compile_regex
from fsmviz.app.live import drawn_path, pattern_view
from fsmviz.app.regex_run import live_run
from fsmviz.automaton.syntax import MAX_PATTERN_LENGTH, RegexError
from fsmviz.diagnose import Finding
from fsmviz.diagnose.finding import FixCheck
from fsmviz.diagnose.text import plural
from fsmviz.drawing.lights import path_view
from fsmviz.generation.generate import GenerationOptions
from fsmviz.generation.trace import Trace, pieces
from fsmviz.html.charts import comparison_figure, valid_mass_figure
from fsmviz.html.comparison import comparison_html
from fsmviz.html.findings import findings_html
from fsmviz.html.fixes import Fix, Inputs, fix_of, read_fix, same_run
from fsmviz.html.steps import steps_html
from fsmviz.html.text import error_html, esc
from fsmviz.html.tokens import output_html

HOSTILE = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "\"&'<>", "\x04\u202e"]


def step(i: int, data: bytes, mass: float = 0.5, forced: bool = False) -> Step:
    top = (Candidate("<b>", 0.4, False), Candidate('"&', 0.1, True))
    text = data.decode("utf-8", errors="backslashreplace")
    return Step(i, text, 0, 1, 3, mass, top, forced, i, 0.1, data)


def text_content(markup: str) -> str:
    """What a browser's textContent would give (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_output_text_content_is_exactly_the_generated_text():
    # "日" split across two tokens, a newline, and hostile token text.
    data = [b"\xe6\x97", b"\xa5", b"\n<img src=x onerror=alert(1)>", b" &amp;", b'"']
    steps = [step(i, d) for i, d in enumerate(data)]
    expected = b"".join(data).decode()
    assert "".join(pieces(steps)) == expected
    markup = output_html(steps, final=True)
    assert text_content(markup) == expected
    assert "<img" not in markup and "&lt;img" in markup


def test_steps_table_and_findings_escape_everything():
    for payload in HOSTILE:
        steps = [step(0, payload.encode())]
        table, output = steps_html(steps, selected=0), output_html(steps)
        for markup in (table, output):
            assert "<img" not in markup and "<script" not in markup
            assert "<b>" not in markup  # a top candidate's text, escaped
        assert "\x04" not in table  # control characters are shown as \x04 in the table
    finding = Finding("loop", "warning", HOSTILE[0], (1,), HOSTILE[1])
    markup = findings_html([finding], selected=0)
    assert "<img" not in markup and "<script" not in markup and "&lt;script&gt;" in markup


def test_steps_table_has_one_row_per_step_and_marks_selection():
    steps = [step(i, b"a", forced=i in (1, 3)) for i in range(4)]
    steps[1] = replace(steps[1], allowed_count=1)
    markup = steps_html(steps, selected=2)
    assert markup.count("<tr data-step=") == 4
    assert '<tr data-step="2" class="selected">' in markup
    assert '<tr data-step="1" class="forced">' in markup
    # "forced" only where one token was possible: step 3 was written without sampling,
    # but its state allowed 3 tokens
    assert '<tr data-step="3" class="">' in markup
    assert markup.count(">forced</em>") == 1


def test_steps_table_marks_and_explains_drafted_steps():
    from dataclasses import replace

    markup = steps_html([step(0, b"a"), replace(step(1, b"b"), drafted=True)])
    assert '<tr data-step="1" class="drafted">' in markup
    assert markup.count(">drafted</em>") == 1 and "prompt lookup" in markup


def test_error_box_points_at_the_position():
    pattern = "ab(?=c)<script>"
    markup = error_html(RegexError("lookahead is not supported", 2, "fold it in"), pattern)
    assert "<script>" not in markup
    caret_line = text_content(markup).split("\n")[1]
    assert caret_line.index("^") == 2


def test_path_view_speaks_in_the_drawn_states_of_a_multibyte_pattern():
    # 東京 as e6 9d | b1 e4 ba | ac: the index's byte-level states (9, 11) are not drawn
    dfa = compile_regex("東京")
    data = [b"\xe6\x9d", b"\xb1\xe4\xba", b"\xac"]
    steps = [Step(i, "", 0, 9 + i, 1, 1, (), index=i, token_bytes=d) for i, d in enumerate(data)]
    current, visited, edges = path_view(steps, None, dfa)
    assert current == 2 and visited == {0, 1, 2} and edges == {(0, 1), (1, 2)}
    assert path_view(steps, 0, dfa) == (0, {0}, set())  # mid-character: still in state 0
    assert path_view(steps, 1, dfa)[:2] == (1, {0, 1})
    # the table names the drawn states, and shows split bytes with the character they make
    table = steps_html(steps, states=drawn_path(steps, dfa))
    cells = re.findall(r"<td>(\d+) → (\d+)</td>", table)
    assert cells == [("0", "0"), ("0", "1"), ("1", "2")]
    assert "e6 9d</code> (a character begins)" in table
    assert "b1 e4 ba</code> → 東" in table
    assert "ac</code> → 京" in table


def test_the_chosen_token_is_outlined_in_the_output():
    steps = [step(i, d) for i, d in enumerate([b"ab", b"cd", b"ef"])]
    markup = output_html(steps, final=True, selected=1)
    assert re.findall(r'class="tok selected" data-step="(\d+)"', markup) == ["1"]
    assert text_content(markup) == "abcdef"


def test_chart_axes_read_well():
    steps = [
        replace(step(i, b"a", mass=0.5), allowed_count=n)
        for i, n in enumerate([15_577, 20, 15_550])
    ]
    figure = valid_mass_figure(steps, log=True)
    assert figure.layout.yaxis2.range[0] == 0  # from one token, not auto-scaled to a sliver
    assert figure.layout.yaxis2.range[1] > 4
    assert figure.layout.xaxis.tickformat == "d" and figure.layout.xaxis.dtick == 1
    assert "100%" in figure.layout.yaxis.ticktext and "μ" not in "".join(
        figure.layout.yaxis.ticktext
    )
    assert figure.layout.legend.yanchor == "bottom" and figure.layout.legend.y >= 1


def test_an_empty_pattern_is_explained_and_not_run(tiny):
    view = pattern_view("", tiny.vocab)
    assert view.dfa is None and "pattern is empty" in view.error and "for example" in view.error
    frames = list(live_run(tiny, view, "x", GenerationOptions(max_tokens=4)))
    assert [f.trace for f in frames] == [None]  # nothing generated
    assert "pattern is empty" in frames[0].error


def test_counts_are_singular_for_one():
    assert plural(1, "token") == "1 token" and plural(2, "token") == "2 tokens"
    one = pattern_view("a*", Vocabulary.from_strings(["a", "b"])).dfa_html()
    assert "1 state," in one and "1 states" not in one


def test_chart_has_a_point_per_step():
    steps = [step(i, b"a", mass=m) for i, m in enumerate([0.9, 0.01, 0.5])]
    figure = valid_mass_figure(steps, log=True, selected=1, marked=[1])
    assert list(figure.data[0].x) == [0, 1, 2]
    assert figure.layout.yaxis.type == "log"
    assert len(figure.data) == 3  # valid mass, allowed count, the marked finding


def test_a_bad_pattern_gives_an_error_view_not_an_exception():
    view = pattern_view("(?=a)b", Vocabulary.from_strings(["a", "b"]))
    assert view.dfa is None and "lookahead" in view.error


@pytest.mark.slow
def test_live_frames_of_a_real_run():
    from fsmviz import load_model

    model = load_model()
    view = pattern_view("[0-9]{2}", model.vocab)
    frames = list(live_run(model, view, "Two digits:", GenerationOptions(max_tokens=4)))
    final = next(f for f in frames if f.trace is not None)
    assert final.trace.matched
    assert text_content(final.output) == final.trace.text
    assert 'class="node state s' in final.dfa and "current" in final.dfa
    assert frames[-1].shadow and "Done" in frames[-1].status
    assert compile_regex("[0-9]{2}").accepts(final.trace.text)


def test_the_drawing_can_show_each_states_fewest_tokens_to_a_match(bundled_vocab):
    from fsmviz import build_index

    pattern = "[0-9]{3}-[0-9]{2}"
    plain = pattern_view(pattern, bundled_vocab)
    counted = pattern_view(pattern, bundled_vocab, distances=True)
    fewest = int(build_index(pattern, bundled_vocab).token_distances()[0])
    assert fewest >= 2
    assert "to go" not in plain.svg
    assert f"({fewest} to go)" in counted.svg


def test_an_edit_draws_the_new_pattern_as_the_distances_box_says(bundled_vocab):
    """An example chosen (or a pattern typed) while "Show each state's fewest tokens" is
    ticked: the new pattern's drawing shows them, as the ticked box says."""
    from fsmviz.app import handlers as h

    class Models:
        def vocabulary(self):
            return bundled_vocab

    page = h.Page(*(f"part{i}" for i in range(15)))
    ticked = h.on_pattern_edit(page, Models(), None, h.Drawn("[0-9]{3}-[0-9]{2}", True))
    unticked = h.on_pattern_edit(page, Models(), None, h.Drawn("[0-9]{3}-[0-9]{2}", False))
    assert "to go)" in ticked[page.dfa] and "to go)" not in unticked[page.dfa]


# --- Apply & run: the fix on the button, the comparison, its chart -------------------------


def run_of(pattern: str, data: list[bytes], *, chat: bool, masses: list[float]) -> Trace:
    steps = tuple(step(i, d, mass=m) for i, (d, m) in enumerate(zip(data, masses, strict=True)))
    text = b"".join(data).decode()
    options = GenerationOptions(max_tokens=8, chat=chat)
    return Trace(text, steps, "max_tokens", False, pattern, "Say it", options)


def test_a_finding_with_a_fix_has_an_apply_button_that_carries_it_escaped():
    hostile = '[a-z]{1,9}"><img src=x onerror=alert(1)>'
    helped = FixCheck("steps going round a loop", 9, 0, True)  # run fixes: offered once checked
    findings = [
        Finding("loop", "warning", "went round", suggestion=hostile, check=helped),
        Finding("valid_mass_collapse", "warning", "a space", settings=(("chat", True),),
                check=helped),
        Finding("truncation", "info", "nothing to apply"),
    ]  # fmt: skip
    markup = findings_html(findings)
    assert markup.count('class="apply"') == 2 and markup.count("Apply &amp; run") == 2
    assert "<img" not in markup
    fixes = [html.unescape(f) for f in re.findall(r'data-fix="([^"]*)"', markup)]
    assert [read_fix(f) for f in fixes] == [Fix(pattern=hostile), Fix(chat=True)]
    assert "the chat template on" in text_content(markup)
    # the last finding has no button
    assert 'class="apply"' not in markup.split('data-finding="2"')[1]


def test_a_fix_read_back_from_the_browser_is_checked():
    assert read_fix('{"regex": "[0-9]+", "chat": false, "n": 3}') == Fix("[0-9]+", False)
    for junk in ("", "null", "[1]", '{"regex": 1}', '{"chat": "yes"}', '{"n": 1}', "{", "3"):
        assert read_fix(junk) is None, junk
    assert read_fix(json.dumps({"regex": "a" * (MAX_PATTERN_LENGTH + 1)})) is None
    assert fix_of(Finding("loop", "info", "m", settings=(("chat", "yes"),))) is None
    inputs = Inputs("[a-z]+", "Say it", 8, 0.0, 0, False, 0.0)
    assert Fix(chat=True).applied(inputs) == replace(inputs, chat=True)
    assert Fix("[a-z]{1,5}").applied(inputs).pattern == "[a-z]{1,5}"


def test_the_last_run_is_before_only_when_it_ran_these_inputs():
    trace = run_of("[a-z]+", [b"ab"], chat=False, masses=[0.5])
    same = GenerationOptions(max_tokens=8, chat=False, draft_tokens=8)  # not a page option
    assert same_run(trace, "[a-z]+", "Say it", same)
    assert not same_run(trace, "[a-z]{1,3}", "Say it", same)
    assert not same_run(trace, "[a-z]+", "Say more", same)
    assert not same_run(trace, "[a-z]+", "Say it", replace(same, chat=True))
    assert not same_run(trace, "[a-z]+", "Say it", replace(same, max_tokens=9))
    assert not same_run(None, "[a-z]+", "Say it", same)
    for decoding in ({"top_k": 3}, {"top_p": 0.5}, {"stop": "first"}, {"overshoot": True}):
        assert not same_run(trace, "[a-z]+", "Say it", replace(same, **decoding)), decoding


def test_apply_and_run_runs_with_the_decoding_box_s_options(monkeypatch):
    """Apply & run takes the decoding box's options, as Generate does: the run before the
    fix (none was made yet) and the run with it both use them."""
    from fsmviz.app import handlers as h

    ran = []

    def run_frames(models, run, opts):
        ran.append((run.pattern, opts))
        yield from ()  # no frame: the run failed, so nothing more is run

    monkeypatch.setattr(h, "run_frames", run_frames)
    page = h.Page(*(f"part{i}" for i in range(15)))
    picked = json.dumps({"regex": "[a-z]{1,8}", "n": 1})
    decoding = {"top_k": 3, "top_p": 0.5, "stop": "first", "overshoot": True}
    run = h.RunInputs("[a-z]+", "Say it", 8, 0.0, 0, False, 0.0, **decoding)
    updates = h.on_apply(page, None, picked, None, run)
    assert list(updates)
    assert [pattern for pattern, _ in ran] == ["[a-z]+"]
    assert {name: ran[0][1][name] for name in decoding} == decoding


def test_a_link_restores_the_decoding_box_and_opens_it():
    from fsmviz.app.handlers import on_load

    class Link:
        query_params = {"top_k": "5", "top_p": "0.9", "stop": "first", "overshoot": "1"}

    class Loading:
        status, ready = "Loading…", False

    *_, top_k, top_p, stop, overshoot, box = on_load(Loading(), Link())
    assert (top_k, top_p, stop, overshoot) == (5, 0.9, "first", True)
    assert box.open is True  # an update: the accordion opened
    Link.query_params = {"stop": "<script>", "top_k": "x"}
    *_, top_k, top_p, stop, overshoot, box = on_load(Loading(), Link())
    assert all(v == {"__type__": "update"} for v in (top_k, top_p, stop, overshoot, box))


def test_comparison_shows_both_outputs_with_their_patterns_all_escaped():
    pattern = "<script>alert(1)</script>|[a-z]+"
    before = run_of(pattern, [b"<img src=x onerror=alert(1)>", b" &amp;"], chat=False,
                    masses=[0.02, 0.9])  # fmt: skip
    after = run_of("[a-z]{1,5}", [b"hello"], chat=True, masses=[0.8])
    markup = comparison_html(before, after)
    assert "<img" not in markup and "<script" not in markup
    sides = re.findall(r'<section class="side (\w+)" data-side="\w+">(.*?)</section>', markup)
    assert [name for name, _ in sides] == ["before", "after"]
    (_, left), (_, right) = sides
    assert html.escape(pattern) in left and "[a-z]{1,5}" in right
    tokens = re.compile(r'<div class="tokens">.*?</div>')
    assert text_content(tokens.search(left).group()) == before.text  # the whole output
    assert text_content(tokens.search(right).group()) == "hello"
    assert "chat template off" in left and "chat template on" in right
    assert "lowest valid mass 2.0% (step 0)" in left and "does NOT match" in left


def test_comparison_chart_has_two_curves_named_before_and_after():
    before = [step(i, b"<b>x", mass=m) for i, m in enumerate([0.9, 0.01, 0.02, 0.01])]
    after = [step(i, b"a", mass=m) for i, m in enumerate([0.9, 0.8])]
    figure = comparison_figure(before, after)
    curves = {t.name: t for t in figure.data}
    assert len(figure.data) == 2 and set(curves) == {"before", "after"}
    assert list(curves["before"].y) == [0.9, 0.01, 0.02, 0.01]
    assert list(curves["after"].x) == [0, 1]
    assert curves["before"].line.dash != curves["after"].line.dash  # told apart without colour
    # the legend sits above the plot, where it cannot cover a line
    assert figure.layout.legend.yanchor == "bottom" and figure.layout.legend.y >= 1
    assert figure.layout.yaxis.range[0] == 0 and figure.layout.yaxis.range[1] > 1
    hover = " ".join(curves["before"].hovertext)
    assert "<b>x" not in hover and "&lt;b&gt;x" in hover  # plotly reads tags in hover text


def test_a_long_suggestion_is_shown_by_what_it_changes():
    """A schema's regex runs to 1,500 characters: the doctor shows the changed part in
    context, escaped, with the whole pattern behind a disclosure."""
    field = '"name":"[^"<]*"'
    pattern = "\\{" + ",".join([field] * 12) + "\\}"
    suggestion = pattern.replace('[^"<]*', '[^"<]{0,64}', 1)
    finding = Finding("unbounded_repeat", "warning", "m", suggestion=suggestion)
    html = findings_html([finding], pattern=pattern)
    assert "<ins>{0,64}</ins>" in html and "<del>*</del>" in html
    assert "<details><summary>the whole pattern" in html
    assert '[^"<]' not in html and "[^&quot;&lt;]" in html  # escaped
    short = findings_html([finding])  # without the pattern: the whole of it, as before
    assert "<details>" not in short and esc(suggestion) in short


def test_a_stopped_run_ends_itself_with_stopped_as_its_last_update():
    """Stop moves the session's mark on; the run sees it while it waits for its next frame
    (``stopping.polled``), closes its generator (ending the generation) and says "Stopped."
    last (``handlers.stoppable``: a Gradio-cancelled run's last message could land after
    Stop's and undo it)."""
    from fsmviz.app.handlers import Page, StopMark, on_stop, stoppable

    page = Page(*(f"c{i}" for i in range(20)))
    mark = StopMark()
    on_stop(page, mark)  # a Stop from the previous run does not stop this one
    closed = []

    def frames(first, second):
        try:
            yield {"status": first}
            yield {"status": second}
            yield {"status": "never shown"}
        finally:
            closed.append(True)

    run = stoppable(page, frames)("Generating… 1", "Generating… 2", mark)
    assert next(run) == {"status": "Generating… 1"}
    on_stop(page, mark)  # Stop pressed while the page shows the first frame
    updates = list(run)
    assert len(updates) == 1 and updates[-1][page.status] == "Stopped."
    assert updates[-1][page.run]["interactive"] is True
    assert updates[-1][page.stop]["visible"] is False
    deadline = time.monotonic() + 10
    while not closed and time.monotonic() < deadline:  # closed on the frames' own thread
        time.sleep(0.01)
    assert closed == [True]  # the generation's generator was closed
    # a run whose own mark stays unset (the Stop above set the old one) ends as it was
    assert list(stoppable(page, frames)("a", "b", StopMark())) == [
        {"status": "a"},
        {"status": "b"},
        {"status": "never shown"},
    ]


def test_a_new_run_ends_the_last_one_without_a_word():
    """Generate stays available during a run: a second run moves the session's mark on, and
    the first ends before its next frame, saying nothing (the new run owns the page)."""
    from fsmviz.app.handlers import Page, StopMark, stoppable

    page = Page(*(f"c{i}" for i in range(20)))
    mark = StopMark()

    def frames():
        yield {"status": "old 1"}
        yield {"status": "old 2"}

    run = stoppable(page, frames)(mark)
    assert next(run) == {"status": "old 1"}
    mark.start()  # Generate pressed again: a new run takes a number
    assert list(run) == []
    assert not mark.stopped(1)


# ------------------------------------------------------------------ issue 30: text and figures


ALLOWED_DATA = r'class="allowed-data" hidden data-json="([^"]*)"'


def test_one_notation_for_bytes_in_the_table_its_candidates_and_the_allowed_set():
    """A token that splits a character is its bytes in hex pairs everywhere: the token
    taken, a candidate (whose engine text is Python's ``\\xa6\\x82``), the allowed list."""
    from fsmviz.generation.allowed import AllowedSet
    from fsmviz.html.tokens import allowed_html

    top = (Candidate("\\xa6\\x82", 0.3, True), Candidate("a", 0.2, True))
    steps = [Step(0, "\\xe6\\x9d", 0, 1, 2, 0.5, top, token_bytes=b"\xe6\x9d")]
    table = steps_html(steps)
    assert "\\x" not in table
    assert ">e6 9d</code>" in table and ">a6 82</code>" in table
    allowed = AllowedSet(0, (("e6 9d", True, 0.3), ("a", False, 0.2)), 2, 0.5, ())
    panel = allowed_html([allowed], steps)
    assert '<code class="bytes"' in panel and ">e6 9d</code>" in panel
    data = json.loads(html.unescape(re.search(ALLOWED_DATA, panel)[1]))
    assert data[0]["a"][0] == ["e6 9d", True, 0.3] and data[0]["k"] == ["e6 9d", True]


def test_the_allowed_sets_go_to_the_page_escaped_in_an_attribute():
    from fsmviz.generation.allowed import AllowedSet
    from fsmviz.html.tokens import allowed_html

    sets = [
        AllowedSet(i, ((payload, False, 0.5),), 1, 0.5, ((payload, False, 0.1),))
        for i, payload in enumerate(HOSTILE)
    ]
    steps = [step(i, p.encode()) for i, p in enumerate(HOSTILE)]
    panel = allowed_html(sets, steps, selected=1)
    assert "<img" not in panel and "<script" not in panel
    assert 'data-step="1"' in panel  # the chosen step's set is the one written out
    data = json.loads(html.unescape(re.search(ALLOWED_DATA, panel)[1]))
    assert [d["a"][0][0] for d in data] == HOSTILE


def test_a_state_no_tokens_can_finish_from_is_drawn_so():
    """With the distances on, a state from which no sequence of tokens reaches a match says
    "cannot finish" (it is ``UNREACHABLE``, not 0 as an accepting state would be)."""
    view = pattern_view("ab|c", Vocabulary.from_strings(["a", "c"]), distances=True)
    assert "(cannot finish)" in view.svg
    assert "state 1: after “a”; cannot finish" in view.svg
    assert "to go" not in view.svg.split("(cannot finish)")[0].rsplit("<g", 1)[-1]


def test_the_doctor_renders_its_markdown_and_offers_a_fix_once():
    same = "[a-z]{1,32}"
    findings = [
        Finding("unbounded_repeat", "warning", "loops on `[a-z]+` <b>", suggestion=same),
        Finding("eos_blocked", "warning", "ends **never**", suggestion=same),
    ]
    markup = findings_html(findings)
    assert "<code>[a-z]+</code>" in markup and "`" not in markup and "&lt;b&gt;" in markup
    assert "<b>never</b>" in markup
    assert markup.count('class="apply"') == 1
    assert "The same fix as finding 1." in markup


def test_a_comparisons_lowest_valid_mass_is_the_tables():
    """The end of text is a step of the table and the chart: the summary counts it too."""
    low = replace(step(1, b"", mass=0.003), is_eos=True)
    trace = Trace("a", (step(0, b"a", mass=0.004), low), "accepted", True, pattern="a")
    assert "lowest valid mass 0.3% (step 1)" in comparison_html(trace, trace)


def test_step_lights_give_each_step_what_the_server_would_light(bundled_vocab):
    """The browser lights a step from ``step_lights``: the nodes and edges it adds up to a
    step are those ``path_view`` (the server's drawing) lights there."""
    from fsmviz.drawing.lights import step_lights

    pattern = "[0-9]{3}-[0-9]{4}"
    view = pattern_view(pattern, None)
    data = [b"55", b"5", b"-", b"12", b"34"]
    steps = [Step(i, d.decode(), 0, 0, 1, 1.0, (), index=i, token_bytes=d) for i, d in
             enumerate(data)]  # fmt: skip
    lights = step_lights(view.dfa, view.graph, steps)
    for i in range(len(steps)):
        current, visited, edges = path_view(steps, i, view.dfa)
        assert lights[i]["c"] == f"s{current}"
        assert {v for lit in lights[: i + 1] for v in lit["v"]} == {f"s{s}" for s in visited}
        assert {e for lit in lights[: i + 1] for e in lit["e"]} == {f"e{a}-{b}" for a, b in edges}
    html_ = view.dfa_html(steps, stepping=True)
    data = re.search(r'<div class="lights" hidden data-json="([^"]*)"', html_)[1]
    assert json.loads(html.unescape(data)) == lights


def test_every_steps_allowed_set_from_one_pass_is_each_steps_own(tiny):
    """``allowed_sets`` (one pass over the written sequence, at the end of the run) gives
    each step what a forward pass at that step alone gives (``allowed_at``)."""
    from fsmviz.generation.allowed import allowed_at, allowed_sets
    from fsmviz.generation.generate import generate

    trace = generate(tiny, "[a-z]{2}[0-9]", "Hi", max_tokens=6)
    sets = allowed_sets(tiny, trace)
    assert [s.step for s in sets] == [s.index for s in trace.steps]
    for i in range(len(trace.steps)):
        alone = allowed_at(tiny, trace, i)
        assert sets[i].total == alone.total
        assert [a[0] for a in sets[i].allowed[:5]] == [a[0] for a in alone.allowed[:5]]
        assert sets[i].mass == pytest.approx(alone.mass, abs=1e-4)
        assert sets[i].mass == pytest.approx(trace.steps[i].valid_mass, abs=1e-3)


def test_a_finding_over_many_states_says_what_they_share(bundled_vocab):
    """The "unreachable character" note of a JSON schema's regex names 70 states: it says
    they are all inside strings, with a few numbers, not the 70 numbers."""
    from fsmviz.app.schema_page import schema_examples
    from fsmviz.diagnose import diagnose
    from fsmviz.html.schema import use_schema

    choice = use_schema(schema_examples()["person"].schema, "none", bundled_vocab).choice
    swept = [f for f in diagnose(choice.regex, bundled_vocab) if f.kind == "unreachable_char"]
    assert swept and all(len(f.states) > 6 for f in swept)
    for finding in swept:
        assert f"In {len(finding.states)} states, all inside a quoted string (states " in (
            finding.message
        )
        assert finding.message.count(",") < 12, finding.message


def test_blocked_favourites_the_model_gave_nothing_are_not_listed():
    from fsmviz.generation.allowed import AllowedSet
    from fsmviz.html.tokens import allowed_html

    blocked = (("x", False, 0.2), ("y", False, 0.00001))
    panel = allowed_html([AllowedSet(0, (("a", False, 0.7),), 1, 0.7, blocked)])
    assert "<code>x</code>" in panel and "<code>y</code>" not in panel
    nothing = allowed_html([AllowedSet(0, (("a", False, 1.0),), 1, 1.0, blocked[1:])])
    assert '<ol class="blocked-list"><li>none</li></ol>' in nothing


def test_the_regex_box_set_to_the_run_s_own_pattern_keeps_the_run():
    """Apply & run puts the fixed pattern in the Regex box while the run after the fix goes:
    when the box's change is answered, that run may already be the page's trace. Its pattern
    is the box's: the run stays, drawn lit for stepping; another pattern's run is cleared.
    (A toy two-letter vocabulary: only the drawing and the doctor need one.)"""
    from fsmviz.app import handlers as h

    class Models:
        def vocabulary(self):
            return Vocabulary.from_strings(["a", "b"])

    page = h.Page(*(f"part{i}" for i in range(15)))
    trace = run_of("[ab]{1,3}", [b"a", b"b"], chat=False, masses=[0.5, 0.5])
    kept = h.on_pattern_edit(page, Models(), trace, h.Drawn("[ab]{1,3}"))
    assert page.output not in kept and page.trace not in kept and page.diagnosis not in kept
    assert 'class="lights"' in kept[page.dfa]
    cleared = h.on_pattern_edit(page, Models(), trace, h.Drawn("[ab]{1,4}"))
    assert cleared[page.trace] is None and cleared[page.output] == h.EMPTY_OUTPUT
    assert 'class="lights"' not in cleared[page.dfa]


def test_a_drawing_option_redraws_the_dfa_alone_and_keeps_the_chosen_step():
    """The Regex box, the model menu and the drawing options are one event (``ui.wire_pattern``),
    which does not say which fired it: the pattern and model the panel was last drawn for,
    asked again, is a drawing option. It redraws the DFA alone (the run, its findings and
    the doctor stay), lit at the chosen step; a step the page sent as null (the slider
    being reset) is the run's last. Another pattern is an edit, which clears the run."""
    from fsmviz.app import handlers as h

    class Models:
        def vocabulary(self):
            return Vocabulary.from_strings(["a", "b"])

    page = h.Page(*(f"part{i}" for i in range(15)))
    trace = run_of("[ab]{1,3}", [b"a", b"b", b"a"], chat=False, masses=[0.5, 0.5, 0.5])
    mark = h.StopMark(drawn=("[ab]{1,3}", None))

    def lit(pattern: str, i: int | None) -> dict:
        return h.on_pattern_edit(page, Models(), trace, h.Drawn(pattern, True), mark, i)

    where = re.compile(r'class="where">current state (\d+)')
    at = {}
    for i in (0, 1, 2, None, 9):
        redrawn = lit("[ab]{1,3}", i)
        assert list(redrawn) == [page.dfa], i
        assert "to go)" in redrawn[page.dfa] and 'class="lights"' in redrawn[page.dfa]
        at[i] = where.search(redrawn[page.dfa])[1]
    assert len({at[0], at[1], at[2]}) == 3, at  # lit where each step left the run
    assert at[None] == at[9] == at[2], at  # none chosen, or past the end: the last
    edited = lit("[ab]{1,4}", 1)
    assert edited[page.trace] is None and page.diagnosis in edited
    assert mark.drawn == ("[ab]{1,4}", None)
    assert list(lit("[ab]{1,4}", 1)) == [page.dfa]  # drawn: an option now


def test_an_edit_answered_after_a_run_of_its_pattern_began_leaves_that_run_alone():
    """CI (session 26): a schema example picked, Generate pressed at once; drawing the
    schema's pattern took longer than its run on the loaded machine, and the edit's answer,
    asked with the last run's trace, came last and wiped the new run ("The input changed
    since the last run")."""
    from fsmviz.app import handlers as h

    class Models:
        def vocabulary(self):
            return Vocabulary.from_strings(["a", "b"])

    page = h.Page(*(f"part{i}" for i in range(15)))
    old = run_of("[ab]{1,3}", [b"a", b"b"], chat=False, masses=[0.5, 0.5])
    mark = h.StopMark(drawn=("[ab]{1,3}", None))  # the panel drew the last run's pattern
    mark.start("[ab]{1,4}")  # Generate on the new pattern, before the edit is answered
    assert h.on_pattern_edit(page, Models(), old, h.Drawn("[ab]{1,4}"), mark) == {}
    mark.start("[ab]{1,3}")  # the last run was of another pattern: cleared as before
    mark.drawn = ("[ab]{1,3}", None)  # (the same edit again, as if first asked now)
    cleared = h.on_pattern_edit(page, Models(), old, h.Drawn("[ab]{1,4}"), mark)
    assert cleared[page.output] == h.EMPTY_OUTPUT and page.dfa in cleared
