"""The compact drawing (fsmviz.drawing.compact, render.compact_svg, live's lights), the states'
tooltips, and the doctor naming tokens that split a character."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from fsmviz import build_index, compile_regex
from fsmviz.app.live import COMPACT_ABOVE, pattern_view
from fsmviz.diagnose import diagnose
from fsmviz.drawing.compact import CompactPlace, compact
from fsmviz.drawing.lights import compact_lights, path_view, state_tooltips
from fsmviz.drawing.render import compact_dot, compact_svg, highlight, to_svg
from fsmviz.generation.trace import Candidate, Step, Trace

SVG = "{http://www.w3.org/2000/svg}"
XLINK_TITLE = "{http://www.w3.org/1999/xlink}title"
EMAIL83 = r"[a-z]{3,40}@[a-z]{2,30}\.(com|org|net|edu|io)"


def text_steps(text: str) -> list[Step]:
    """One step per character of ``text`` (the drawing only reads the bytes)."""
    return [
        Step(0, c, 0, 0, 1, 1.0, (), index=i, token_bytes=c.encode()) for i, c in enumerate(text)
    ]


def check_partition(pattern: str) -> None:
    """Every exact state has one place, every exact edge one link, and each link's run of
    edges is a path from its source node to its target node."""
    dfa = compile_regex(pattern)
    graph = compact(dfa)
    assert len(graph.places) == dfa.num_states
    in_nodes = [s for node in graph.nodes for s in node.states]
    along = [s for link in graph.links for s in link.inside]
    assert sorted(in_nodes + along) == list(dfa.states)  # each state exactly once
    for s, place in enumerate(graph.places):
        if place.node is not None:
            assert graph.nodes[place.node].states[place.index] == s
        else:
            assert graph.links[place.link].inside[place.index - 1] == s
    exact = {(e.source, e.target) for e in dfa.edges()}
    assert set(graph.edge_links) == exact
    assert sum(len(link.edges) for link in graph.links) == len(exact)
    for link in graph.links:
        source, target = graph.nodes[link.source], graph.nodes[link.target]
        assert link.edges[0][0] in source.states
        assert link.edges[-1][1] in target.states
        if link.inside:  # a run: a path through its inside states
            path = [link.edges[0][0], *link.inside, link.edges[-1][1]]
            assert list(zip(path, path[1:], strict=False)) == list(link.edges)
    assert graph.places[dfa.initial].node == graph.initial


# --- fsmviz.drawing.compact -----------------------------------------------------------------------


def test_a_run_of_single_way_states_is_one_edge_with_its_text():
    dfa = compile_regex("[0-9]{3}-[0-9]{4}")
    graph = compact(dfa)
    assert len(graph.nodes) == 2 and len(graph.links) == 1
    (link,) = graph.links
    assert link.label == "[0-9]{3}-[0-9]{4}"
    assert len(link.inside) == 7 and len(link.edges) == 8
    assert graph.places[dfa.run("12")] == CompactPlace(None, 0, 2, 8)
    assert compact(compile_regex("http://[a-z]+")).links[0].label == "http://[a-z]"


def test_a_run_thousands_of_states_long_is_one_edge():
    """``[a-z ]{2000,}``: 2,001 states in one run. Each of them once started a chain that
    walked the rest of the run again (15 s to draw; ``compact._repeats`` now skips the
    states inside a chain that is no repeat)."""
    dfa = compile_regex("[a-z ]{2000,}")
    graph = compact(dfa)
    assert [(link.label, len(link.edges)) for link in graph.links] == [
        ("[␣ a-z]{2000}", 2000),  # the run, then the loop at its end
        ("[␣ a-z]", 1),
    ]
    assert graph.places[dfa.run("ab" * 600)] == CompactPlace(None, 0, 1200, 2000)


def test_a_counted_repeat_is_one_looped_state():
    dfa = compile_regex("[a-z]{3,40}")
    assert dfa.num_states == 41
    graph = compact(dfa)
    (node,) = graph.nodes
    assert node.loop == "[a-z] ×3..40" and node.accepting and node.ends == tuple(range(3, 41))
    (loop,) = graph.links
    assert (loop.source, loop.target, loop.label) == (0, 0, "[a-z] ×3..40")
    assert graph.places[dfa.run("abcdefg")] == CompactPlace(0, None, 7, 40)


def test_the_83_state_pattern_becomes_four_nodes():
    dfa = compile_regex(EMAIL83)
    assert dfa.num_states == 83
    graph = compact(dfa)
    assert len(graph.nodes) == 4
    assert [n.loop for n in graph.nodes] == ["[a-z] ×3..40", "[a-z] ×2..30", None, None]
    assert sorted(k.label for k in graph.links if k.source != k.target) == sorted(
        ["@", ".", "com", "org", "net", "edu", "io"]
    )
    check_partition(EMAIL83)


def test_an_exit_possible_at_fewer_counts_says_when():
    graph = compact(compile_regex("[a-z]{2,5}@x|[a-z]{4}#y"))
    (looped,) = [n for n in graph.nodes if n.loop]
    assert looped.loop == "[a-z] ×2..5"
    exits = {k.label for k in graph.links if k.source == looped.id != k.target}
    assert exits == {"@", "#y after 4"}


@pytest.mark.parametrize(
    "pattern", ["[0-9]+", "(123)+|x", "[ab]+c", "a*b*c*", "x|y|z", "(a|b)*a(a|b){3}"]
)
def test_nothing_to_fold_leaves_every_state(pattern):
    dfa = compile_regex(pattern)
    graph = compact(dfa)
    if all(
        s == dfa.initial or s in dfa.accepting or len(dfa.transitions[s]) != 1 for s in dfa.states
    ):
        assert len(graph.nodes) == dfa.num_states
    check_partition(pattern)


def test_every_seed_pattern_is_partitioned_and_none_grows(seed_cases):
    for pattern in seed_cases["regexes"].values():
        check_partition(pattern)
        dfa = compile_regex(pattern)
        assert len(compact(dfa).nodes) <= dfa.num_states
    json_like = seed_cases["regexes"]["pink_floyd_json"]
    assert len(compact(compile_regex(json_like)).nodes) < 20  # 115 exact states


# --- drawing and lighting -----------------------------------------------------------------


def lit_groups(svg: str, cls: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [g for g in root.iter(f"{SVG}g") if cls in g.get("class", "").split()]


def test_auto_picks_compact_above_the_threshold_and_exact_below():
    assert pattern_view(EMAIL83, None).graph is not None
    assert pattern_view(EMAIL83, None, drawing="exact").graph is None
    small = "[0-9]{3}-[0-9]{4}"
    assert compile_regex(small).num_states <= COMPACT_ABOVE
    assert pattern_view(small, None).graph is None
    assert pattern_view(small, None, drawing="compact").graph is not None


def test_current_state_inside_a_counted_repeat_is_lit_with_its_count():
    view = pattern_view(EMAIL83, None)
    html = view.dfa_html(text_steps("abcdefg"))
    svg = html[html.index("<svg") : html.index("</svg>") + 6]
    (current,) = lit_groups(svg, "current")
    assert "s0" in current.get("class").split()
    assert "".join(current.find(f".//{SVG}text").itertext()) == "7 of 40"
    assert "7 of 40 read" in html and 'data-drawing="compact"' in html
    (loop,) = lit_groups(svg, "taken")
    assert "l0" in loop.get("class").split()
    # later: past the @, in the second repeat; the first is visited, its label back
    html = view.dfa_html(text_steps("abc@xy"))
    svg = html[html.index("<svg") : html.index("</svg>") + 6]
    (current,) = lit_groups(svg, "current")
    assert f"s{compile_regex(EMAIL83).run('abc@')}" in current.get("class").split()
    assert "".join(current.find(f".//{SVG}text").itertext()) == "2 of 30"
    first = [g for g in lit_groups(svg, "visited") if "s0" in g.get("class").split()]
    assert "".join(first[0].find(f".//{SVG}text").itertext()) == "0"


def test_current_state_along_a_folded_run_lights_that_edge():
    view = pattern_view(EMAIL83, None)
    html = view.dfa_html(text_steps("abc@xy.co"))
    svg = html[html.index("<svg") : html.index("</svg>") + 6]
    assert not lit_groups(svg, "current") or all(
        "edge" in g.get("class") for g in lit_groups(svg, "current")
    )
    (edge,) = lit_groups(svg, "current")
    assert "com" in "".join(edge.itertext())
    assert "2 of 3 along “com”" in html


def test_highlight_puts_the_label_back():
    dfa = compile_regex(EMAIL83)
    graph = compact(dfa)
    svg = compact_svg(graph, dfa)
    lit = highlight(svg, current=0, note="7 of 40", links={0: {"taken", "current"}})
    assert lit != svg and highlight(lit) == svg


def test_marked_states_light_their_node_or_run():
    dfa = compile_regex(EMAIL83)
    graph = compact(dfa)
    inside_com = dfa.run("abc@xy.c")
    current, visited, edges = path_view([], None, dfa)
    lights = compact_lights(graph, current, visited, edges, marked=[dfa.run("abcd"), inside_com])
    assert lights.marked == {0}
    assert "marked" in lights.links[graph.places[inside_com].link]


# --- tooltips -----------------------------------------------------------------------------


def tooltips(svg: str) -> dict[str, str]:
    """Node key (``s3``) -> its tooltip."""
    out = {}
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        cls = g.get("class", "").split()
        if cls[:2] == ["node", "state"]:
            titles = [a.get(XLINK_TITLE) for a in g.iter(f"{SVG}a")]
            out[cls[2]] = titles[0] if titles else None
    return out


def test_every_state_has_an_escaped_tooltip_with_its_shortest_text():
    pattern = '<script>x</script>|"q"'
    view = pattern_view(pattern, None, drawing="exact")
    assert "<script" not in view.svg.lower()
    tips = tooltips(view.svg)
    dfa = view.dfa
    assert set(tips) == {f"s{s}" for s in dfa.states}
    assert tips["s0"] == "state 0: the start"
    after_script = dfa.run("<script>")
    assert tips[f"s{after_script}"] == f"state {after_script}: after “<script>”"
    quoted = dfa.run('"q"')
    assert tips[f"s{quoted}"] == f'state {quoted}: after “"q"”'
    assert "&lt;script&gt;" in view.svg  # escaped in the markup, read back by the parser


def test_tooltips_in_the_compact_drawing_name_the_folded_states():
    view = pattern_view(EMAIL83, None)
    tips = tooltips(view.svg)
    assert tips["s0"].startswith("41 states folded: [a-z] ×3..40. First state 0: the start")
    assert tips[f"s{compile_regex(EMAIL83).run('aaa@aa.')}"] == "state 10: after “aaa@aa.”"


def test_tooltips_say_the_fewest_tokens_only_when_asked(bundled_vocab):
    plain = tooltips(pattern_view("[0-9]{3}-[0-9]{4}", bundled_vocab).svg)
    assert not any("token" in t for t in plain.values())
    counted = tooltips(pattern_view("[0-9]{3}-[0-9]{4}", bundled_vocab, distances=True).svg)
    assert "to a match" in counted["s0"]
    assert any("a match may end here" in t for t in counted.values())


def test_tooltips_are_cheap_and_the_compact_drawing_of_a_big_dfa_is_quick():
    import time

    pattern = "[a-z]{3,100}@[a-z]{2,100}\\.[a-z]{2,60}"
    dfa = compile_regex(pattern)
    assert dfa.num_states > 250  # its exact layout takes graphviz minutes
    started = time.perf_counter()
    tips = state_tooltips(dfa)
    assert time.perf_counter() - started < 0.5 and len(tips) == dfa.num_states
    started = time.perf_counter()
    view = pattern_view(pattern, None)
    assert view.graph is not None and len(view.graph.nodes) == 3 and view.svg
    assert time.perf_counter() - started < 5


def test_a_compact_drawing_of_a_big_dfa_is_allowed_where_the_exact_one_is_not():
    pattern = "[a-z]{1,400}"
    assert compile_regex(pattern).num_states > 300
    assert pattern_view(pattern, None, drawing="exact").svg == ""
    assert "×1..400" in pattern_view(pattern, None).svg


def test_the_exact_drawing_is_unchanged_by_tooltips_being_off():
    dfa = compile_regex("ab")
    assert "tooltip" not in to_svg(dfa) and "xlink:title" not in to_svg(dfa)


# --- the doctor on split characters -------------------------------------------------------


def split_trace(vocab, pattern: str, tokens: list[bytes], masses: list[float]) -> Trace:
    """A trace writing ``tokens`` (byte strings of the real vocabulary)."""
    index = build_index(pattern, vocab)
    ids = {vocab.token_bytes(i): i for i in range(len(vocab)) if vocab.token_bytes(i)}
    state, steps = index.initial_state, []
    for number, (data, mass) in enumerate(zip(tokens, masses, strict=True)):
        after = index.next_state(state, ids[data])
        assert after is not None, data
        wanted = (
            Candidate("Tokyo", 0.7, False),
            Candidate(vocab.token_text(ids[data]), mass, True),
        )
        steps.append(
            Step(ids[data], vocab.token_text(ids[data]), state, after, 1, mass, wanted,
                 index=number, token_bytes=data)
        )  # fmt: skip
        state = after
    text = b"".join(tokens).decode("utf-8", errors="replace")
    return Trace(text, tuple(steps), "accepted", True, pattern, "", {})


SPLIT = "東京|大阪"
SPLIT_TOKENS = [b"\xe6\x9d", b"\xb1", b"\xe4\xba", b"\xac"]  # 東 and 京, each in two


def split_collapse(vocab, masses):
    """The doctor's one valid-mass collapse for ``SPLIT`` written as ``SPLIT_TOKENS``."""
    trace = split_trace(vocab, SPLIT, SPLIT_TOKENS, masses)
    (collapse,) = [f for f in diagnose(SPLIT, vocab, trace) if f.kind == "valid_mass_collapse"]
    return collapse


def test_the_doctor_names_a_split_token_by_its_bytes_and_character(bundled_vocab):
    message = split_collapse(bundled_vocab, [0.9, 0.9, 0.01, 0.9]).message
    assert "\ufffd" not in message
    assert "bytes `e4 ba` that begin `京`" in message
    assert "after `東`" in message
    dfa = compile_regex(SPLIT)
    state = int(re.search(r"state (\d+)", message).group(1))
    assert state == dfa.run("東") and "(inside a character)" not in message


def test_the_doctor_says_when_the_state_is_inside_a_character(bundled_vocab):
    collapse = split_collapse(bundled_vocab, [0.9, 0.9, 0.9, 0.01])
    assert "bytes `ac` that complete `京`" in collapse.message
    assert "after `東`" in collapse.message and "(inside a character)" in collapse.message
    assert "\ufffd" not in collapse.message


def test_the_doctor_names_a_token_in_the_middle_of_a_character(bundled_vocab):
    # what the real model wrote for 東京|大阪: 大 and 阪 one byte a token
    pattern = "東京|大阪"
    tokens = [b"\xe5", b"\xa4", b"\xa7", b"\xe9", b"\x98", b"\xaa"]
    trace = split_trace(bundled_vocab, pattern, tokens, [0.9, 0.001, 0.5, 0.5, 0.5, 0.5])
    (collapse,) = [
        f for f in diagnose(pattern, bundled_vocab, trace) if f.kind == "valid_mass_collapse"
    ]
    assert "it wrote bytes `a4` that continue `大`" in collapse.message
    assert "at the start, state 0 (inside a character)" in collapse.message


@pytest.mark.parametrize(("count", "inches"), [(40, 0.78), (400, 0.95)])
def test_a_looped_state_is_drawn_wide_enough_for_its_widest_note(count: int, inches: float):
    # "105 of 400" overflowed the circle drawn for "12 of 40" (0.75 in)
    dfa = compile_regex(f"[a-z ]{{5,{count}}}")
    dot = compact_dot(compact(dfa), dfa)
    assert re.search(rf"\bs0 \[[^\]]*\bwidth={inches}\b", dot), dot
