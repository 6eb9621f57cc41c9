"""Drawing a DFA: DOT source → graphviz layout → SVG that a web page can inline and light up.

A DFA is a directed graph: states are circles, a double circle means "the output may stop
here", and every edge is labelled with the characters that move along it. Graphviz's
``dot`` program lays such graphs out in ranks; left-to-right (``rankdir=LR``) reads like
the text being generated.

The drawing is made once per pattern (``to_svg``, cached) and then *re-coloured* on every
streamed token (``highlight``) by adding CSS classes to the SVG text. Re-colouring never
re-runs the layout, so the picture does not jump around while tokens stream in.

Labels come from user-typed patterns, so they are escaped twice, once per language:

* **DOT.** In a quoted DOT string ``"`` ends the string and ``\\`` starts an escape. Graphviz
  then gives labels a second meaning: ``\\n``, ``\\l``, ``\\r`` are line breaks, ``\\N`` is
  the node's name, and HTML entities such as ``&lt;`` or ``&#60;`` are decoded. So ``\\``
  becomes ``\\\\``, ``"`` becomes ``\\"`` and ``&`` becomes ``&amp;``: the edge for the
  newline class, labelled with the two characters ``\\n``, is *shown* as ``\\n``.
* **XML.** ``dot`` itself writes ``<``, ``>``, ``&``, ``"``, ``'`` in SVG text and attributes
  as entities, but it copies control characters through, and XML 1.0 forbids most of them.
  Every label is therefore made printable first (``\\x04``), which also defuses bidi
  overrides and other invisible characters.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Protocol

from fsmviz.automaton.dfa import Edge
from fsmviz.automaton.graph import UNREACHABLE
from fsmviz.cache import BoundedCache
from fsmviz.drawing.compact import CompactGraph
from fsmviz.errors import FsmvizError, InputError
from fsmviz.printable import NEWLINE_AND_TAB
from fsmviz.printable import printable as _printable

__all__ = [
    "CSS",
    "MAX_LABEL",
    "RenderError",
    "compact_dot",
    "compact_svg",
    "highlight",
    "label_text",
    "to_dot",
    "to_svg",
]

MAX_LABEL = 32
"""Edge labels longer than this are shortened with "…"; the full text becomes a tooltip."""
MAX_TITLE = 80
"""Characters of the title shown above the drawing (patterns can be very long)."""
DOT_TIMEOUT = 10.0
"""Seconds ``dot`` may take before rendering gives up."""
QUICK_LAYOUT_ABOVE = 40
"""Drawings with more nodes get a quick layout (``nslimit``): graphviz's network simplex
for node positions is what takes ``dot`` over 10 s on a loaded machine for the 83 states
of ``[a-z]{3,40}@[a-z]{2,30}\\.(com|org|net|edu|io)`` (2 s quick), and for long chains the
quick layout draws a straight line where the full one draws a staircase."""

HIGHLIGHT_CLASSES = frozenset({"current", "visited", "marked", "taken"})
LOOPED_WIDTH = 0.75
"""Inches: the least width of a looped (counted) state."""

LOOPED_INCHES_PER_CHAR = 0.085
"""Inches per character of a lit looped state's note, in the bold 11 pt node font: ``105 of
400`` needs 0.95 in, wider than ``LOOPED_WIDTH``."""


def looped_width(reads: int) -> float:
    """Width in inches of a looped state whose count reaches ``reads``, so its note when lit
    (``reads of reads`` at the widest) stays inside the circle.

    >>> looped_width(9), looped_width(40), looped_width(400)
    (0.75, 0.78, 0.95)
    """
    note = f"{reads} of {reads}"
    return round(max(LOOPED_WIDTH, LOOPED_INCHES_PER_CHAR * len(note) + 0.1), 2)


CSS = """
svg.fsm { width: 100%; height: auto; font-family: sans-serif; }
svg.fsm .graph > polygon { fill: transparent; }
svg.fsm a { text-decoration: none; cursor: help; }
svg.fsm .node ellipse { fill: #fff; stroke: #555; }
svg.fsm .node.accepting ellipse { stroke: #2a7; }
svg.fsm .node.visited ellipse { fill: #e3efff; }
svg.fsm .node.marked ellipse { fill: #ffe1e1; stroke: #c33; stroke-width: 2; }
svg.fsm .node.current ellipse { fill: #2b6cd4; stroke: #1a4a9a; stroke-width: 2; }
svg.fsm .node.current text { fill: #fff; font-weight: bold; }
svg.fsm .node.state.accepting ellipse + ellipse { fill: none; }
svg.fsm .edge path { stroke: #999; }
svg.fsm .edge polygon { fill: #999; stroke: #999; }
svg.fsm .edge text { fill: #555; }
svg.fsm .edge.taken path { stroke: #2b6cd4; stroke-width: 2; }
svg.fsm .edge.taken polygon { fill: #2b6cd4; stroke: #2b6cd4; }
svg.fsm .edge.taken text { fill: #1a4a9a; font-weight: bold; }
svg.fsm .edge.current path { stroke: #2b6cd4; stroke-width: 4; stroke-dasharray: 6 3; }
svg.fsm .edge.current text { fill: #fff; font-weight: bold; paint-order: stroke;
  stroke: #2b6cd4; stroke-width: 4px; }
svg.fsm .edge.marked path { stroke: #c33; stroke-width: 2; }
"""
"""Default look for the classes ``to_svg`` and ``highlight`` put on the drawing. An
accepting state is two ellipses, the inner one first: only the inner one is filled, so the
outer ring stays visible whatever the fill (also on the current state). A tooltip makes
graphviz wrap a node in ``<a>``: it must not look like a link. In a compact
drawing the current state may sit inside a folded run: that edge is ``current``, dashed and
its label written white on blue."""


class RenderError(FsmvizError, RuntimeError):
    """The drawing could not be made (``dot`` missing, failing or too slow)."""


class DrawableDfa(Protocol):
    """What drawing needs from a ``Dfa``."""

    num_states: int
    accepting: frozenset[int]

    def edges(self) -> list[Edge]: ...


# --- DOT ----------------------------------------------------------------------------------


def label_text(text: str) -> str:
    """``text`` with every invisible or non-printable character written as an escape
    (``\\x04``, ``\\u202e``), so it can neither break XML nor hide what a label says."""
    return _printable(text, NEWLINE_AND_TAB)


def quote(text: str) -> str:
    """``text`` as a quoted DOT string that graphviz displays literally."""
    text = label_text(text).replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;")
    return f'"{text}"'


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def to_dot(
    dfa: DrawableDfa,
    *,
    distances: Sequence[int] | None = None,
    title: str | None = None,
    tooltips: Sequence[str] | None = None,
) -> str:
    """DOT source for ``dfa``, laid out left to right.

    Node ``sN`` is state N, labelled ``N`` (over a smaller ``(d to go)`` when ``distances``
    is given and d > 0); accepting states are double circles. Nodes carry the CSS classes
    ``state sN`` (+ ``accepting``), edges ``eA-B``; ``dot`` prepends ``node`` / ``edge``.
    ``tooltips[N]``, when given, is what hovering over state N says.
    """
    n = dfa.num_states
    _check_lengths(n, distances, tooltips)
    count = f"{n} state{'s' if n != 1 else ''}, {len(dfa.accepting)} accepting"
    lines = _head(title, count, "s0", quick=n > QUICK_LAYOUT_ABOVE)
    for s in range(n):
        attrs = f'label={_state_label(s, distances)}, class="state s{s}'
        if s in dfa.accepting:
            attrs += ' accepting", shape=doublecircle'
        else:
            attrs += '"'
        if tooltips is not None:
            attrs += f", tooltip={quote(tooltips[s])}"
        lines.append(f"  s{s} [{attrs}];")
    for edge in dfa.edges():
        attrs = _edge_label(edge.label) + f', class="e{edge.source}-{edge.target}"'
        lines.append(f"  s{edge.source} -> s{edge.target} [{attrs}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def compact_dot(
    graph: CompactGraph,
    dfa: DrawableDfa,
    *,
    distances: Sequence[int] | None = None,
    title: str | None = None,
    tooltips: Sequence[str] | None = None,
) -> str:
    """DOT source for ``graph``, the compact drawing of ``dfa`` (``fsmviz.drawing.compact``).

    A node is named, labelled and classed (``state sN``) after the first exact state N it
    folds, so ``highlight`` takes exact state numbers for nodes; a looped (counted) node is
    drawn wider, with its count on its self-loop. Links carry the
    CSS class ``lK``, which ``highlight``'s ``links`` lights. The caption counts ``dfa``'s
    states and says how many nodes draw them. ``tooltips`` are per *exact* state: a node
    or link says those of the states it folds (the first and the last of a chain).
    """
    n = dfa.num_states
    _check_lengths(n, distances, tooltips)
    drawn = len(graph.nodes)
    count = f"{n} state{'s' if n != 1 else ''} drawn as {drawn}, {len(dfa.accepting)} accepting"
    name = [f"s{node.first}" for node in graph.nodes]
    lines = _head(title, count, name[graph.initial], quick=drawn > QUICK_LAYOUT_ABOVE)
    for node in graph.nodes:
        label = _state_label(node.first, distances)
        attrs = f'label={label}, class="state {name[node.id]}'
        attrs += ' accepting", shape=doublecircle' if node.accepting else '"'
        if node.loop is not None:
            attrs += f", width={looped_width(len(node.states) - 1)}"
        tip = _folded(node.states, tooltips, f"{len(node.states)} states folded: {node.loop}")
        if tip:
            attrs += f", tooltip={quote(tip)}"
        lines.append(f"  {name[node.id]} [{attrs}];")
    for link in graph.links:
        attrs = _edge_label(link.label) + f', class="l{link.id}"'
        tip = _folded(link.inside, tooltips, f"{len(link.inside)} states folded along {link.label}")
        if tip:
            attrs += f", tooltip={quote(tip)}"
        if link.source == link.target:
            attrs += ", penwidth=1.5"
        lines.append(f"  {name[link.source]} -> {name[link.target]} [{attrs}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _check_lengths(n: int, *per_state: Sequence[object] | None) -> None:
    for name, values in zip(("distances", "tooltips"), per_state, strict=True):
        if values is not None and len(values) != n:
            raise InputError(f"{name} has {len(values)} entries for {n} states")


def _state_label(s: int, distances: Sequence[int] | None) -> str:
    """State ``s``'s number, over a smaller ``(d to go)`` when its distance d > 0, or
    ``(cannot finish)`` when it is ``UNREACHABLE`` (no tokens lead from it to a match)."""
    if distances is None or distances[s] <= 0:
        return f'"{s}"'
    # An HTML-like label (only digits and fixed words go in it) lets the second line be
    # smaller, which keeps the circles, and so 100+ state drawings, a third narrower.
    far = "cannot finish" if distances[s] >= UNREACHABLE else f"{distances[s]} to go"
    return f'<{s}<BR/><FONT POINT-SIZE="7">({far})</FONT>>'


def _head(title: str | None, count: str, start: str, *, quick: bool = False) -> list[str]:
    """A drawing's first DOT lines: layout (``quick``: see ``QUICK_LAYOUT_ABOVE``), fonts,
    caption and the start arrow."""
    caption = f"{_shorten(label_text(title), MAX_TITLE)}  ·  {count}" if title else count
    return [
        "digraph fsm {",
        # Compact spacing keeps 100+ state drawings legible when scaled to fit a page.
        "  graph [rankdir=LR, ranksep=0.3, nodesep=0.2, outputorder=edgesfirst,"
        + (" nslimit=1, nslimit1=1," if quick else ""),
        '         fontname="Helvetica,Arial,sans-serif", fontsize=12, labelloc=t, labeljust=l,',
        f"         label={quote(caption)}];",
        '  node [shape=circle, fontname="Helvetica,Arial,sans-serif", fontsize=11,',
        "        width=0.35, height=0.35, margin=0.02];",
        '  edge [fontname="Helvetica,Arial,sans-serif", fontsize=10, arrowsize=0.6];',
        '  __start [shape=point, style=invis, label=""];',
        f'  __start -> {start} [class="start"];',
    ]


SPECKS = frozenset(".,:;'`\"-_^~")
"""Characters that draw as a speck: alone on an edge, a ``.`` is easy to miss (or to take
for a smudge) on a projected page, so such a label is drawn larger and says what it is."""


def _edge_label(label: str) -> str:
    """An edge's label attribute; a long one is shortened, its full text a tooltip. A lone
    speck (``.``, ``,``, ``'``) is drawn larger, with a tooltip naming it.

    >>> _edge_label(".")
    'label=".", fontsize=22, tooltip="the character .", labeltooltip="the character ."'
    """
    full = label_text(label)
    attrs = f"label={quote(_shorten(full, MAX_LABEL))}"
    if len(full) > MAX_LABEL:
        attrs += f", tooltip={quote(full)}, labeltooltip={quote(full)}"
    elif full in SPECKS:
        tip = quote(f"the character {full}")
        attrs += f", fontsize=22, tooltip={tip}, labeltooltip={tip}"
    return attrs


def _folded(states: Sequence[int], tooltips: Sequence[str] | None, what: str) -> str:
    """The tooltip of a node or link folding ``states``: one state's own tooltip, or what
    the fold is with the first and last state's."""
    if tooltips is None or not states:
        return ""
    if len(states) == 1:
        return tooltips[states[0]]
    return f"{what}. First {tooltips[states[0]]}; last {tooltips[states[-1]]}"


# --- SVG ----------------------------------------------------------------------------------

_svg_cache: BoundedCache[str] = BoundedCache(64)

_ROOT = re.compile(r"<svg\b[^>]*>")
_VIEWBOX = re.compile(r'viewBox="([^"]*)"')
_SIZE = re.compile(r'\b(width|height)="([^"]*)"')
_COMMENT = re.compile(r"<!--.*?-->\n?", re.S)
_ID = re.compile(r' id="[^"]*"')


def to_svg(
    dfa: DrawableDfa,
    *,
    distances: Sequence[int] | None = None,
    title: str | None = None,
    tooltips: Sequence[str] | None = None,
) -> str:
    """``dfa`` drawn by graphviz as an ``<svg class="fsm">`` element, ready to inline in HTML.

    The XML prolog, doctype, comments and ids are removed (several drawings may share a
    page); the root keeps its ``viewBox`` and gets ``width="100%"`` so CSS can scale it;
    the natural size in points is kept as ``data-width`` / ``data-height``. Results are
    cached by DOT text. Raises ``RenderError`` if ``dot`` is missing, fails or times out.
    """
    return _svg(to_dot(dfa, distances=distances, title=title, tooltips=tooltips))


def compact_svg(
    graph: CompactGraph,
    dfa: DrawableDfa,
    *,
    title: str | None = None,
    distances: Sequence[int] | None = None,
    tooltips: Sequence[str] | None = None,
) -> str:
    """``compact_dot``'s drawing as SVG, made and cached as ``to_svg``'s."""
    return _svg(compact_dot(graph, dfa, distances=distances, title=title, tooltips=tooltips))


def _svg(dot: str) -> str:
    return _svg_cache.get_or_build(dot, lambda: _clean(_run_dot(dot)))


def _run_dot(dot: str) -> str:
    program = shutil.which("dot")
    if program is None:
        raise RenderError(
            "graphviz's `dot` program was not found; "
            "install the `graphviz` package (apt-get install graphviz)"
        )
    try:
        result = subprocess.run(
            [program, "-Tsvg"],
            input=dot.encode("utf-8"),
            capture_output=True,
            timeout=DOT_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RenderError(
            f"graphviz's `dot` took longer than {DOT_TIMEOUT:g} s to lay out the DFA; "
            "the automaton is too large to draw"
        ) from None
    except OSError as exc:
        raise RenderError(f"graphviz's `dot` program could not be run: {exc}") from None
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip() or "no message"
        raise RenderError(f"graphviz's `dot` failed (exit {result.returncode}): {message}")
    return result.stdout.decode("utf-8", "replace")


def _clean(svg: str) -> str:
    start = svg.find("<svg")
    if start < 0:
        raise RenderError("graphviz's `dot` produced no SVG")
    svg = _COMMENT.sub("", svg[start:])
    svg = _ID.sub("", svg)
    # dot writes "-" as "&#45;" everywhere (it must not appear as "--" in comments); the
    # comments are gone, so a plain "-" keeps class names like "e3-4" easy to match.
    svg = svg.replace("&#45;", "-")
    root = _ROOT.search(svg)
    assert root is not None
    viewbox = _VIEWBOX.search(root.group(0))
    sizes = dict(_SIZE.findall(root.group(0)))
    attrs = ['<svg class="fsm" width="100%"']
    if viewbox:
        attrs.append(f'viewBox="{viewbox.group(1)}"')
    for name in ("width", "height"):
        if name in sizes:
            attrs.append(f'data-{name}="{sizes[name]}"')
    attrs.append(
        'preserveAspectRatio="xMidYMid meet" role="img" '
        'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
    )
    return svg[: root.start()] + " ".join(attrs) + svg[root.end() :].rstrip() + "\n"


# --- highlighting -------------------------------------------------------------------------

_GROUP = re.compile(r'<g class="(?:node state s(\d+)|edge e(\d+)-(\d+)|edge l(\d+))([^"]*)"')
_NOTED = re.compile(r'<text data-was="([^"]*)"([^>]*)>[^<]*</text>')


def highlight(
    svg: str,
    *,
    current: int | None = None,
    visited: Iterable[int] = (),
    marked: Iterable[int] = (),
    path_edges: Iterable[tuple[int, int]] = (),
    links: Mapping[int, Collection[str]] | None = None,
    note: str | None = None,
) -> str:
    """``svg`` (from ``to_svg`` or ``compact_svg``) with CSS classes added to nodes and edges.

    ``current`` state, ``visited`` states, ``marked`` states (what a diagnosis points at)
    and ``taken`` edges; in a compact drawing, ``links`` gives each lit link its classes
    (``taken``, ``current``, ``marked``), and ``note`` replaces the current node's label
    (``7 of 40``: where in a counted repeat it is). Classes and notes from an earlier
    ``highlight`` are replaced, not added to. This is a regular-expression pass over the
    text — no layout — so it is cheap enough to run on every streamed token.
    """
    visited = set(visited)
    marked = set(marked)
    taken = set(path_edges)
    lit = links or {}

    def rewrite(m: re.Match[str]) -> str:
        node, source, target, link, rest = m.groups()
        kept = [c for c in rest.split() if c not in HIGHLIGHT_CLASSES]
        if node is not None:
            s = int(node)
            if s == current:
                kept.append("current")
            if s in visited:
                kept.append("visited")
            if s in marked:
                kept.append("marked")
            head = f"node state s{node}"
        elif link is not None:
            kept.extend(c for c in sorted(lit.get(int(link), ())) if c in HIGHLIGHT_CLASSES)
            head = f"edge l{link}"
        else:
            if (int(source), int(target)) in taken:
                kept.append("taken")
            head = f"edge e{source}-{target}"
        return f'<g class="{" ".join([head, *kept])}"'

    svg = _GROUP.sub(rewrite, svg)
    if "data-was=" in svg:
        svg = _NOTED.sub(lambda m: f"<text{m.group(2)}>{html.unescape(m.group(1))}</text>", svg)
    if note is not None and current is not None:
        svg = _noted(svg, current, note)
    return svg


def _noted(svg: str, node: int, note: str) -> str:
    """``svg`` with node ``node``'s label written as ``note``; its own label is kept in
    ``data-was`` so that the next ``highlight`` can put it back."""
    group = re.search(rf'<g class="node state s{node}[ "]', svg)
    if group is None:
        return svg
    text = re.compile(r"<text([^>]*)>([^<]*)</text>").search(svg, group.end())
    if text is None:
        return svg
    was = html.escape(text.group(2), quote=True)
    new = f'<text data-was="{was}"{text.group(1)}>{html.escape(note)}</text>'
    return svg[: text.start()] + new + svg[text.end() :]
