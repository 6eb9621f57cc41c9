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

import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from typing import Protocol

from ..cache import BoundedCache
from ..dfa import Edge
from ..errors import FsmvizError
from ..printable import NEWLINE_AND_TAB
from ..printable import printable as _printable

__all__ = ["CSS", "MAX_LABEL", "RenderError", "highlight", "printable", "to_dot", "to_svg"]

MAX_LABEL = 32
"""Edge labels longer than this are shortened with "…"; the full text becomes a tooltip."""
MAX_TITLE = 80
"""Characters of the title shown above the drawing (patterns can be very long)."""
DOT_TIMEOUT = 10.0
"""Seconds ``dot`` may take before rendering gives up."""

HIGHLIGHT_CLASSES = frozenset({"current", "visited", "marked", "taken"})

CSS = """
svg.fsm { width: 100%; height: auto; font-family: sans-serif; }
svg.fsm .graph > polygon { fill: transparent; }
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
"""
"""Default look for the classes ``to_svg`` and ``highlight`` put on the drawing. An
accepting state is two ellipses, the inner one first: only the inner one is filled, so the
outer ring stays visible whatever the fill (also on the current state)."""


class RenderError(FsmvizError, RuntimeError):
    """The drawing could not be made (``dot`` missing, failing or too slow)."""


class DrawableDfa(Protocol):
    """What drawing needs from a ``Dfa``."""

    num_states: int
    accepting: frozenset[int]

    def edges(self) -> list[Edge]: ...


# --- DOT ----------------------------------------------------------------------------------


def printable(text: str) -> str:
    """``text`` with every invisible or non-printable character written as an escape
    (``\\x04``, ``\\u202e``), so it can neither break XML nor hide what a label says."""
    return _printable(text, NEWLINE_AND_TAB)


def quote(text: str) -> str:
    """``text`` as a quoted DOT string that graphviz displays literally."""
    text = printable(text).replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;")
    return f'"{text}"'


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def to_dot(
    dfa: DrawableDfa,
    *,
    distances: Sequence[int] | None = None,
    title: str | None = None,
) -> str:
    """DOT source for ``dfa``, laid out left to right.

    Node ``sN`` is state N, labelled ``N`` (over a smaller ``(d to go)`` when ``distances``
    is given and d > 0); accepting states are double circles. Nodes carry the CSS classes
    ``state sN`` (+ ``accepting``), edges ``eA-B``; ``dot`` prepends ``node`` / ``edge``.
    """
    n = dfa.num_states
    if distances is not None and len(distances) != n:
        raise ValueError(f"distances has {len(distances)} entries for {n} states")
    count = f"{n} state{'s' if n != 1 else ''}, {len(dfa.accepting)} accepting"
    caption = f"{_shorten(printable(title), MAX_TITLE)}  ·  {count}" if title else count
    lines = [
        "digraph fsm {",
        # Compact spacing keeps 100+ state drawings legible when scaled to fit a page.
        "  graph [rankdir=LR, ranksep=0.3, nodesep=0.2, outputorder=edgesfirst,",
        '         fontname="Helvetica,Arial,sans-serif", fontsize=12, labelloc=t, labeljust=l,',
        f"         label={quote(caption)}];",
        '  node [shape=circle, fontname="Helvetica,Arial,sans-serif", fontsize=11,',
        "        width=0.35, height=0.35, margin=0.02];",
        '  edge [fontname="Helvetica,Arial,sans-serif", fontsize=10, arrowsize=0.6];',
        '  __start [shape=point, style=invis, label=""];',
        '  __start -> s0 [class="start"];',
    ]
    for s in range(n):
        if distances is not None and distances[s] > 0:
            # An HTML-like label (only digits go in it) lets the second line be smaller,
            # which keeps the circles, and so 100+ state drawings, a third narrower.
            label = f'<{s}<BR/><FONT POINT-SIZE="7">({distances[s]} to go)</FONT>>'
        else:
            label = f'"{s}"'
        attrs = f'label={label}, class="state s{s}'
        if s in dfa.accepting:
            attrs += ' accepting", shape=doublecircle'
        else:
            attrs += '"'
        lines.append(f"  s{s} [{attrs}];")
    for edge in dfa.edges():
        full = printable(edge.label)
        attrs = f'label={quote(_shorten(full, MAX_LABEL))}, class="e{edge.source}-{edge.target}"'
        if len(full) > MAX_LABEL:
            attrs += f", tooltip={quote(full)}, labeltooltip={quote(full)}"
        lines.append(f"  s{edge.source} -> s{edge.target} [{attrs}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


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
) -> str:
    """``dfa`` drawn by graphviz as an ``<svg class="fsm">`` element, ready to inline in HTML.

    The XML prolog, doctype, comments and ids are removed (several drawings may share a
    page); the root keeps its ``viewBox`` and gets ``width="100%"`` so CSS can scale it;
    the natural size in points is kept as ``data-width`` / ``data-height``. Results are
    cached by DOT text. Raises ``RenderError`` if ``dot`` is missing, fails or times out.
    """
    dot = to_dot(dfa, distances=distances, title=title)
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

_GROUP = re.compile(r'<g class="(?:node state s(\d+)|edge e(\d+)-(\d+))([^"]*)"')


def highlight(
    svg: str,
    *,
    current: int | None = None,
    visited: Iterable[int] = (),
    marked: Iterable[int] = (),
    path_edges: Iterable[tuple[int, int]] = (),
) -> str:
    """``svg`` (from ``to_svg``) with CSS classes added to nodes and edges.

    ``current`` state, ``visited`` states, ``marked`` states (what a diagnosis points at)
    and ``taken`` edges. Classes from an earlier ``highlight`` are replaced, not added to.
    This is one regular-expression pass over the text — no layout — so it is cheap enough
    to run on every streamed token.
    """
    visited = set(visited)
    marked = set(marked)
    taken = set(path_edges)

    def rewrite(m: re.Match[str]) -> str:
        node, source, target, rest = m.groups()
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
        else:
            if (int(source), int(target)) in taken:
                kept.append("taken")
            head = f"edge e{source}-{target}"
        return f'<g class="{" ".join([head, *kept])}"'

    return _GROUP.sub(rewrite, svg)
