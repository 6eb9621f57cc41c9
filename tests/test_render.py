"""Drawing DFAs with the real graphviz `dot`: structure, classes, highlighting, escaping."""

from __future__ import annotations

import os
import stat
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import pytest

from fsmviz import Edge, compile_regex
from fsmviz.drawing import render
from fsmviz.drawing.render import RenderError, highlight, label_text, to_dot, to_svg

SVG = "{http://www.w3.org/2000/svg}"
ALLOWED_TAGS = {"svg", "g", "title", "path", "polygon", "ellipse", "text", "polyline", "a"}

HOSTILE_PATTERNS = [
    "<script>alert(1)</script>",
    "[<>&\"']+",
    "a\\\\b",
    "(<img src=x onerror=alert(1)>)+",
    "\x04",
    "日本|😀",
    "javascript:alert\\(1\\)",
    "&lt;b&gt;|&#60;i&#62;|&amp;",
    '"\\]; s0 \\[URL="javascript:x"\\]',
    "\\\\n|\\\\N|\\\\G|\\\\l",
    "[{}|]+",
    "\u202eevil",
]


@dataclass
class FakeDfa:
    """Just what drawing needs, so labels can be anything a future label format might emit."""

    num_states: int
    accepting: frozenset[int]
    labels: dict[tuple[int, int], str]

    def edges(self) -> list[Edge]:
        return [Edge(s, t, label, (0,)) for (s, t), label in self.labels.items()]


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # raises on anything that is not well-formed XML
    assert root.tag == f"{SVG}svg"
    return root


def classes(element: ET.Element) -> list[str]:
    return element.get("class", "").split()


def groups(root: ET.Element, kind: str) -> dict[str, ET.Element]:
    """``{"s3": <g>, ...}`` for kind "node", ``{"e3-4": <g>}`` for kind "edge"."""
    out = {}
    for g in root.iter(f"{SVG}g"):
        cls = classes(g)
        if cls and cls[0] == kind and ("state" in cls or kind == "edge"):
            key = next((c for c in cls if c[0] in "se" and c[1:2].isdigit()), None)
            if key is not None:
                assert key not in out, f"two groups for {key}"
                out[key] = g
    return out


def assert_shows(group: ET.Element, label: str) -> None:
    """The edge shows ``label`` (shortened with its full text as tooltip when long)."""
    if len(label) <= render.MAX_LABEL:
        assert text_of(group) == label
    else:
        assert text_of(group) == label[: render.MAX_LABEL - 1] + "…"
        tooltips = {a.get("{http://www.w3.org/1999/xlink}title") for a in group.iter(f"{SVG}a")}
        assert tooltips == {label}


def text_of(group: ET.Element) -> str:
    """What a viewer reads in a group: its <text> elements, line by line."""
    lines = ["".join(t.itertext()) for t in group.iter(f"{SVG}text")]
    return "\n".join(lines).replace("\xa0", " ")


def assert_safe(svg: str) -> None:
    root = parse(svg)
    lowered = svg.lower()
    assert "<script" not in lowered and "<img" not in lowered and "<!doctype" not in lowered
    for element in root.iter():
        tag = element.tag.removeprefix(SVG)
        assert tag in ALLOWED_TAGS, tag
        for name, value in element.attrib.items():
            local = name.rsplit("}", 1)[-1].lower()
            assert not local.startswith("on"), (tag, name)
            assert local != "href", (tag, name, value)
            assert "javascript:" not in value.lower() or local == "title", (tag, name, value)
            assert "<" not in value


# --- structure ----------------------------------------------------------------------------


def test_every_state_is_a_node_with_its_classes():
    dfa = compile_regex(r"[0-9]+\.[0-9]+|ab")
    root = parse(to_svg(dfa))
    nodes = groups(root, "node")
    assert set(nodes) == {f"s{s}" for s in dfa.states}
    for s in dfa.states:
        cls = classes(nodes[f"s{s}"])
        assert cls[:3] == ["node", "state", f"s{s}"]
        assert ("accepting" in cls) == (s in dfa.accepting)
        assert text_of(nodes[f"s{s}"]) == str(s)


def test_accepting_states_are_double_circles():
    dfa = compile_regex("(123)+|x")
    assert dfa.accepting and len(dfa.accepting) < dfa.num_states
    nodes = groups(parse(to_svg(dfa)), "node")
    for s in dfa.states:
        ellipses = list(nodes[f"s{s}"].iter(f"{SVG}ellipse"))
        assert len(ellipses) == (2 if s in dfa.accepting else 1), s


def test_edges_have_classes_and_readable_labels():
    dfa = compile_regex("[0-9]+")
    root = parse(to_svg(dfa))
    edges = groups(root, "edge")
    assert set(edges) == {f"e{e.source}-{e.target}" for e in dfa.edges()}
    assert text_of(edges["e0-1"]) == "0-9"
    assert text_of(edges["e1-1"]) == "0-9"
    starts = [g for g in root.iter(f"{SVG}g") if classes(g) == ["edge", "start"]]
    assert len(starts) == 1 and not list(starts[0].iter(f"{SVG}text"))


def test_root_is_inlinable_and_scalable():
    svg = to_svg(compile_regex("ab"))
    assert svg.startswith("<svg ")
    root = parse(svg)
    assert root.get("class") == "fsm" and root.get("id") is None
    assert root.get("width") == "100%" and root.get("height") is None
    assert len(root.get("viewBox").split()) == 4
    assert root.get("data-width").endswith("pt")
    assert not [e for e in root.iter() if e.get("id") is not None]
    assert "<?xml" not in svg and "<!--" not in svg


def test_title_and_state_count_in_caption():
    dfa = compile_regex("hot|cold")
    dot = to_dot(dfa, title="hot|cold")
    assert f"{dfa.num_states} states" in dot
    caption = text_of(parse(to_svg(dfa, title="hot|cold")).find(f"{SVG}g"))
    assert caption.startswith("hot|cold") and f"{dfa.num_states} states, 1 accepting" in caption


def test_distances_shown_under_state_numbers():
    dfa = compile_regex("[0-9]+")
    distances = dfa.distances()
    nodes = groups(parse(to_svg(dfa, distances=distances)), "node")
    assert text_of(nodes["s0"]) == "0\n(1 to go)"
    assert text_of(nodes["s1"]) == "1"  # accepting: nothing left to go
    with pytest.raises(ValueError):
        to_dot(dfa, distances=[1])


def test_long_labels_are_shortened_with_the_full_text_as_tooltip():
    full = "".join(chr(c) for c in range(0x21, 0x21 + 60))  # includes " & < > \
    dfa = FakeDfa(2, frozenset({1}), {(0, 1): full})
    root = parse(to_svg(dfa))
    edge = groups(root, "edge")["e0-1"]
    shown = text_of(edge)
    assert len(shown) == render.MAX_LABEL and shown.endswith("…")
    assert full.startswith(shown[:-1])
    tooltips = {a.get("{http://www.w3.org/1999/xlink}title") for a in edge.iter(f"{SVG}a")}
    assert tooltips == {full}


def test_well_formed_for_every_seed_regex(seed_cases):
    for name, pattern in seed_cases["regexes"].items():
        dfa = compile_regex(pattern)
        for distances in (None, dfa.distances()):
            svg = to_svg(dfa, distances=distances, title=pattern)
            assert_safe(svg)
            root = parse(svg)
            assert len(groups(root, "node")) == dfa.num_states, name
            assert len(groups(root, "edge")) == len(dfa.edges()), name


def test_to_svg_is_cached():
    dfa = compile_regex("cached")
    assert to_svg(dfa) is to_svg(dfa)


# --- highlighting -------------------------------------------------------------------------


def node_classes(svg: str) -> dict[int, set[str]]:
    nodes = groups(parse(svg), "node")
    return {
        int(k[1:]): set(classes(g)) - {"node", "state", k, "accepting"} for k, g in nodes.items()
    }


def test_highlight_marks_exactly_the_given_states():
    dfa = compile_regex("abcdefghijklmnop")
    assert dfa.num_states >= 13
    svg = to_svg(dfa)
    lit = highlight(svg, current=1, visited=[0, 1], marked=[12], path_edges=[(0, 1)])
    got = node_classes(lit)
    assert got[1] == {"current", "visited"}
    assert got[0] == {"visited"}
    assert got[12] == {"marked"}
    assert all(not got[s] for s in dfa.states if s not in (0, 1, 12)), got
    edges = groups(parse(lit), "edge")
    taken = {k for k, g in edges.items() if "taken" in classes(g)}
    assert taken == {"e0-1"}
    assert "accepting" in classes(groups(parse(lit), "node")[f"s{dfa.num_states - 1}"])


def test_highlight_state_12_is_not_state_1_and_edges_are_exact():
    dfa = compile_regex("abcdefghijklmnop")
    lit = highlight(to_svg(dfa), current=12, path_edges=[(1, 2)])
    got = node_classes(lit)
    assert got[12] == {"current"} and got[1] == set()
    edges = groups(parse(lit), "edge")
    assert {k for k, g in edges.items() if "taken" in classes(g)} == {"e1-2"}


def test_highlight_replaces_earlier_highlighting():
    dfa = compile_regex("abcdefghijklmnop")
    svg = to_svg(dfa)
    first = highlight(svg, current=3, visited=[0, 1, 2, 3], marked=[5], path_edges=[(2, 3)])
    second = highlight(first, current=4)
    assert second == highlight(svg, current=4)
    assert highlight(first) == svg


def test_highlight_of_nothing_changes_nothing():
    svg = to_svg(compile_regex("[a-z]+@[a-z]+"))
    assert highlight(svg) == svg


# --- escaping -----------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", HOSTILE_PATTERNS)
def test_hostile_patterns_are_shown_literally_and_safely(pattern):
    dfa = compile_regex(pattern)
    svg = to_svg(dfa, distances=dfa.distances(), title=pattern)
    assert_safe(svg)
    assert_safe(highlight(svg, current=0, visited=[0], marked=[0], path_edges=[(0, 1)]))
    root = parse(svg)
    edges = groups(root, "edge")
    for edge in dfa.edges():
        assert_shows(edges[f"e{edge.source}-{edge.target}"], label_text(edge.label))
    caption = text_of(root.find(f"{SVG}g"))
    assert caption.startswith(label_text(pattern)[: render.MAX_TITLE - 1])


def test_labels_made_of_escape_sequences_are_displayed_as_written():
    assert [e.label for e in compile_regex("\\n").edges()] == ["\\n"]
    newline = groups(parse(to_svg(compile_regex("a\\nb"))), "edge")
    assert text_of(newline["e1-2"]) == "\\n"  # two characters, not a line break
    backslash = groups(parse(to_svg(compile_regex("a\\\\b"))), "edge")
    assert text_of(backslash["e1-2"]) == "\\\\"
    control = compile_regex("\x04")
    assert [e.label for e in control.edges()] == ["\\x04"]
    assert text_of(groups(parse(to_svg(control)), "edge")["e0-1"]) == "\\x04"


HOSTILE_LABELS = [
    '"]; s0 [URL="javascript:alert(1)"]; x [label="',
    "\\N \\G \\E \\T \\H \\L \\n \\l \\r \\",
    "&lt;script&gt; &#60;img&#62; &amp; &foo; &",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "'\"\\{}|<>",
    "日本 😀 é",
]


def test_any_label_text_is_displayed_literally():
    labels = {(0, i + 1): label for i, label in enumerate(HOSTILE_LABELS)}
    dfa = FakeDfa(len(labels) + 1, frozenset(range(1, len(labels) + 1)), labels)
    svg = to_svg(dfa, title=HOSTILE_LABELS[0])
    assert_safe(svg)
    edges = groups(parse(svg), "edge")
    for (s, t), label in labels.items():
        assert_shows(edges[f"e{s}-{t}"], label)


def test_characters_xml_forbids_are_escaped():
    nasty = "a\x00b\x04c\x1bd\x7fe\x85f\u202eg\ud800h\ufffei\U000e0001j\nk\tl"
    dfa = FakeDfa(2, frozenset({1}), {(0, 1): nasty})
    svg = to_svg(dfa, title=nasty)
    assert_safe(svg)
    expected = "a\\x00b\\x04c\\x1bd\\x7fe\\x85f\\u202eg\\ud800h\\ufffei\\U000e0001j\\nk\\tl"
    assert label_text(nasty) == expected
    assert_shows(groups(parse(svg), "edge")["e0-1"], expected)


# --- errors -------------------------------------------------------------------------------


def unique_dfa():
    """A DFA whose drawing is not in the cache yet, so `dot` really runs."""
    return compile_regex(uuid.uuid4().hex)


def fake_dot(folder, script: str) -> None:
    path = folder / "dot"
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_missing_dot_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RenderError, match=r"apt-get install graphviz") as info:
        to_svg(unique_dfa())
    assert "`dot` program was not found" in str(info.value)


def test_failing_dot_is_a_clear_error(tmp_path, monkeypatch):
    fake_dot(tmp_path, "echo 'Error: syntax error in line 1' >&2; exit 3")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(RenderError, match=r"exit 3\): Error: syntax error in line 1"):
        to_svg(unique_dfa())


def test_slow_dot_times_out(tmp_path, monkeypatch):
    fake_dot(tmp_path, "exec sleep 5")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(render, "DOT_TIMEOUT", 0.2)
    with pytest.raises(RenderError, match="longer than 0.2 s"):
        to_svg(unique_dfa())


def test_errors_are_not_cached(tmp_path, monkeypatch):
    dfa = unique_dfa()
    with monkeypatch.context() as patch:
        patch.setenv("PATH", str(tmp_path))
        with pytest.raises(RenderError):
            to_svg(dfa)
    assert parse(to_svg(dfa)).get("class") == "fsm"
