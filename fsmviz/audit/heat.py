"""Where runs stall, drawn: the regex's DFA (``fsmviz.drawing``) with each state filled by
how many runs stalled there, white for none to deep red for the most.

The drawing is the page's: the exact DFA up to ``COMPACT_ABOVE`` states, the compact one
(chains folded, a node counting the runs of every state it folds) beyond, none past
``DRAW_LIMIT`` drawn nodes or without graphviz (the ranked table says it all then). Each
state's tooltip says its count. A schema's or grammar's places are fields and rules, not
states of one drawing: the report ranks them in a table instead.

    >>> heat_colour(0.0), heat_colour(1.0)
    ('#ffffff', '#c0141c')
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from html import escape

from fsmviz.audit.rows import AuditRow

__all__ = [
    "COMPACT_ABOVE",
    "DRAW_LIMIT",
    "heat_colour",
    "heat_svg",
    "part_of",
    "parts_heat",
    "stall_counts",
]

COMPACT_ABOVE = 30
"""States up to which the exact DFA is drawn (the page's ``COMPACT_ABOVE``)."""
DRAW_LIMIT = 300
"""Nodes past which nothing is drawn (the page's ``DRAW_LIMIT``)."""
_HOT = (0xC0, 0x14, 0x1C)
DARK = 0.6
"""Past this share of the most, a state's fill is dark: its number is written in white."""
_NODE = re.compile(r'(<g class="node state s(\d+)[^"]*">)(.*?</g>)', re.S)
_TITLE = re.compile(r"<title>[^<]*</title>")
_FILL = re.compile(r'(<(?:ellipse|polygon)\b[^>]*?)fill="[^"]*"')
_LINK = re.compile(r'(<g class="edge l(\d+)[^"]*">)(.*?</g>)', re.S)
_STROKE = re.compile(r'(<path\b[^>]*?)stroke="[^"]*"')


def heat_colour(share: float) -> str:
    """A fill from white (``share`` 0) to deep red (1)."""
    share = min(max(share, 0.0), 1.0)
    r, g, b = (round(255 + (hot - 255) * share) for hot in _HOT)
    return f"#{r:02x}{g:02x}{b:02x}"


def stall_counts(rows: Iterable[AuditRow]) -> tuple[Counter[int], Counter[int]]:
    """(runs that did not match, all runs) stalling in each state."""
    stalled: Counter[int] = Counter()
    runs: Counter[int] = Counter()
    for row in rows:
        if row.stall_state is None or row.failed:
            continue
        runs[row.stall_state] += 1
        stalled[row.stall_state] += not row.matched
    return stalled, runs


ZOOM = 1.4
"""The heat map's size against graphviz's own (its 14 pt labels at ~26 px)."""


def heat_svg(pattern: str, rows: Iterable[AuditRow]) -> tuple[str | None, str]:
    """(the SVG, or None; a sentence saying what it shows or why there is none). States
    are filled by the runs that did not match there, or by all runs when every run
    matched."""
    from fsmviz.automaton.dfa import compile_regex
    from fsmviz.drawing.compact import compact
    from fsmviz.drawing.render import compact_svg, to_svg
    from fsmviz.errors import FsmvizError

    stalled, runs = stall_counts(rows)
    counts, what = (stalled, "runs not matched") if stalled else (runs, "runs")
    try:
        dfa = compile_regex(pattern)
        graph = compact(dfa) if dfa.num_states > COMPACT_ABOVE else None
        drawn = graph.num_states if graph is not None else dfa.num_states
        if drawn > DRAW_LIMIT:
            return None, f"The DFA has {drawn:,} nodes, more than {DRAW_LIMIT} to draw."
        svg = compact_svg(graph, dfa) if graph is not None else to_svg(dfa)
    except (FsmvizError, RecursionError) as error:
        return None, f"The DFA could not be drawn: {error}"
    folds = {node.first: node.states for node in graph.nodes} if graph is not None else {}
    inside = {link.id: link.inside for link in graph.links} if graph is not None else {}
    top = max(counts.values(), default=0)

    def paint(m: re.Match[str], states: tuple[int, ...], shape: re.Pattern[str], how: str):
        n = sum(counts[s] for s in states)
        title = f"state {states[0]}" if len(states) == 1 else f"states {states[0]}-{states[-1]}"
        body = _TITLE.sub(f"<title>{escape(title)}: {n} {what}</title>", m.group(3), count=1)
        if n:
            share = n / top if top else 0.0
            body = shape.sub(rf'\1{how}="{heat_colour(share)}"', body)
            if how == "fill" and share > DARK:  # the state's number stays readable
                body = body.replace("<text ", '<text fill="white" ')
        return m.group(1) + body

    def node(m: re.Match[str]) -> str:
        state = int(m.group(2))
        return paint(m, folds.get(state, (state,)), _FILL, "fill")

    def link(m: re.Match[str]) -> str:  # a compact link's folded states: its line coloured
        states = inside.get(int(m.group(2)))
        return paint(m, states, _STROKE, "stroke") if states else m.group(0)

    svg = _natural_width(_LINK.sub(link, _NODE.sub(node, svg)))
    where = " (a chain of folded states: its line)" if inside else ""
    return svg, f"Each state is coloured by its {what} that stalled there{where}."


def _natural_width(svg: str) -> str:
    """The drawing at ``ZOOM`` times its own size (``data-width``, in points), where the
    page's drawing fills its panel (``width="100%"``): a six-state DFA blown up to the
    report's width had letters an inch high. The report's style shrinks a wide one to fit."""
    found = re.search(r'data-width="([0-9.]+)pt"', svg)
    if found is None:
        return svg
    return svg.replace('width="100%"', f'width="{float(found.group(1)) * ZOOM:.0f}pt"', 1)


def part_of(row: AuditRow) -> str | None:
    """The part of a schema or grammar where ``row`` stalled, as ``AuditReport.structure``
    names parts: a field's pointer with each array index as ``*``, or a rule's name.

    >>> part_of(AuditRow("1", "", False, "max_tokens", field="/tags/3/name"))
    '/tags/*/name'
    """
    if row.rule is not None:
        return row.rule
    if row.field is not None:
        return re.sub(r"/[0-9]+(?=/|$)", "/*", row.field)
    return None


def parts_heat(parts: Iterable[str], rows: Iterable[AuditRow]) -> list[tuple[str, int, int, str]]:
    """The schema's fields or grammar's rules as a heat map: (part, runs not matched there,
    all runs there, fill) in the order given, then any part a run stalled in that the list
    lacks. Filled by the runs that did not match, or by all runs when every run matched.

    >>> rows = [AuditRow("1", "", False, "max_tokens", field="/b"),
    ...         AuditRow("2", "", True, "accepted", field="/b")]
    >>> [(p, n, r) for p, n, r, _ in parts_heat(["", "/a", "/b"], rows)]
    [('', 0, 0), ('/a', 0, 0), ('/b', 1, 2)]
    """
    stalled: Counter[str] = Counter()
    runs: Counter[str] = Counter()
    for row in rows:
        part = part_of(row)
        if part is None or row.failed:
            continue
        runs[part] += 1
        stalled[part] += not row.matched
    counts = stalled if stalled else runs
    most = max(counts.values(), default=0) or 1
    order = list(dict.fromkeys([*parts, *runs]))
    return [(p, stalled[p], runs[p], heat_colour(counts[p] / most)) for p in order]
