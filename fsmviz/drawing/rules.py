"""A grammar drawn as automata that call each other, with the parser's place lit.

Each rule of the grammar is one small automaton (``fsmviz.grammar.network``), drawn in
its own box (a graphviz *cluster*) in the style of the regex DFAs: circles for positions,
a double circle where the rule may end, a start arrow. An edge that reads a terminal is
labelled with the terminal as the grammar writes it (``","``, ``[0-9]+``, a Lark
terminal's name); an edge that **calls** another rule is dashed and labelled with the
rule's name, in the calls' colour. Reading the drawing: to take a dashed edge, go and read
the rule it names, then come back.

The place of the parser (``fsmviz.grammar.place``) is a stack of positions, lit by CSS
classes that ``highlight_rules`` puts on the SVG, which is laid out once per grammar:

* ``current`` on every position of a live stack, and on the terminal edge being read;
* ``top`` on the position where the next character goes;
* ``taken`` on each call edge the stack is inside (the rule it called is being read);
* ``next`` on the edges the top may take next;
* ``current`` on the box of every rule on a stack.

Node ``r{m}s{s}`` is state ``s`` of machine ``m`` (CSS classes ``pos r{m}s{s}``, plus
``accepting``); edge ``r{m}a{k}`` is its arc ``k`` (classes ``arc r{m}a{k}`` and one of
``call``, ``term``, ``token``); the box of machine ``m`` has classes ``rule r{m}``.
Everything a user wrote (rule names, literals, classes) is escaped for DOT and made
printable, as the regex drawings' labels are.

    >>> from fsmviz.grammar import tree as t
    >>> from fsmviz.grammar.network import build_network
    >>> net = build_network(t.Grammar((
    ...     t.Rule("pair", t.Seq((t.Literal("<"), t.RuleRef("pair"), t.Literal(">")))),), "pair"))
    >>> for line in rules_dot(net).splitlines():
    ...     if "-> r0s" in line:
    ...         print(line.split(", style")[0].strip())
    r0_in -> r0s0 [class="start"];
    r0s0 -> r0s1 [label="\\"<\\"", class="arc r0a0 term"];
    r0s1 -> r0s2 [label="pair", class="arc r0a1 call"
    r0s2 -> r0s3 [label="\\">\\"", class="arc r0a2 term"];
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fsmviz.drawing.render import _svg, label_text, quote
from fsmviz.grammar.network import Machine, Network
from fsmviz.grammar.place import Place

__all__ = [
    "RULES_CSS",
    "Lighting",
    "highlight_rules",
    "lighting",
    "lit_classes",
    "lit_names",
    "rules_dot",
    "rules_svg",
]

QUICK_LAYOUT_ABOVE = 80
"""Drawings with more positions get graphviz's quick layout (as ``render`` does for DFAs)."""
MAX_EDGE_LABEL = 28
"""Edge labels longer than this are shortened with "…"; the full text is a tooltip."""
CALL_COLOUR = "#7a3db8"

RULES_CSS = """
svg.fsm.rules .cluster > path, svg.fsm.rules .cluster > polygon { fill: #fafafa; stroke: #ccc; }
svg.fsm.rules .cluster.current > path, svg.fsm.rules .cluster.current > polygon {
  fill: #f1f6ff; stroke: #2b6cd4; stroke-width: 1.5; }
svg.fsm.rules .node.pos ellipse { fill: #fff; stroke: #555; }
svg.fsm.rules .node.pos.accepting ellipse { stroke: #2a7; }
svg.fsm.rules .node.pos.accepting ellipse + ellipse { fill: none; }
svg.fsm.rules .node.pos.current ellipse { fill: #9dbdf0 !important; stroke: #1a4a9a; }
svg.fsm.rules .node.pos.current text { fill: #0b2a5c !important; font-weight: bold; }
svg.fsm.rules .node.pos.current.top ellipse { fill: #2b6cd4 !important; }
svg.fsm.rules .node.pos.current.top text { fill: #fff !important; }
svg.fsm.rules .edge.call path { stroke: #7a3db8; }
svg.fsm.rules .edge.call polygon { fill: #7a3db8; stroke: #7a3db8; }
svg.fsm.rules .edge.call text { fill: #7a3db8; font-style: italic; }
svg.fsm.rules .edge.taken path { stroke-width: 3; }
svg.fsm.rules .edge.next path { stroke: #2a7; stroke-width: 2; }
svg.fsm.rules .edge.next text { fill: #1d6b40; font-weight: bold; }
"""
"""The look of the rules drawing and of its lit classes (on top of ``render.CSS``, whose
``.node.current`` rules a page may scope more tightly: hence the ``!important`` that keeps
the stack's lower positions lighter than its top)."""


def _short(text: str) -> str:
    return text if len(text) <= MAX_EDGE_LABEL else text[: MAX_EDGE_LABEL - 1] + "…"


def rules_dot(network: Network, *, title: str | None = None) -> str:
    """DOT source for ``network``: one cluster per rule (see the module's docstring)."""
    positions = sum(m.num_states for m in network.machines)
    count = (
        f"{len(network.machines)} rule{'s' if len(network.machines) != 1 else ''}, "
        f"{positions} positions; dashed: a call of another rule"
    )
    caption = f"{label_text(title)}  ·  {count}" if title else count
    quick = " nslimit=1, nslimit1=1," if positions > QUICK_LAYOUT_ABOVE else ""
    lines = [
        "digraph rules {",
        f"  graph [rankdir=LR, ranksep=0.3, nodesep=0.2, outputorder=edgesfirst,{quick}",
        '         fontname="Helvetica,Arial,sans-serif", fontsize=12, labelloc=t, labeljust=l,',
        f"         label={quote(caption)}];",
        '  node [shape=circle, fontname="Helvetica,Arial,sans-serif", fontsize=11,',
        "        width=0.35, height=0.35, margin=0.02];",
        '  edge [fontname="Helvetica,Arial,sans-serif", fontsize=10, arrowsize=0.6];',
    ]
    # graphviz stacks unconnected boxes bottom-up: written last to first, the start rule
    # (usually the first) is drawn at the top
    for machine in reversed(network.machines):
        lines.extend(_cluster(machine, start=machine.rule == network.start))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _cluster(machine: Machine, *, start: bool) -> list[str]:
    m = machine.index
    label = machine.rule + ("  (start)" if start else "")
    lines = [
        f"  subgraph cluster_r{m} {{",
        f'    class="rule r{m}"; label={quote(label)}; style="rounded,filled";',
        '    fillcolor="#fafafa"; color="#cccccc"; fontsize=12;',
        f'    r{m}_in [shape=point, style=invis, label=""];',
        f'    r{m}_in -> r{m}s0 [class="start"];',
    ]
    for s in range(machine.num_states):
        attrs = f'label="{s}", class="pos r{m}s{s}'
        attrs += ' accepting", shape=doublecircle' if s in machine.accepting else '"'
        where = "may end here" if s in machine.accepting else "cannot end here"
        attrs += f", tooltip={quote(f'{machine.rule}, position {s}: {where}')}"
        lines.append(f"    r{m}s{s} [{attrs}];")
    for arc in machine.arcs:
        symbol = arc.symbol
        kind = {"call": "call", "token": "token"}.get(symbol.kind, "term")
        text = label_text(symbol.label)
        attrs = f'label={quote(_short(text))}, class="arc r{m}a{arc.index} {kind}"'
        tip = text
        if symbol.kind == "token" and symbol.regex:
            tip = f"{text} = /{label_text(symbol.regex)}/"
        if symbol.is_call:
            tip = f"call {text}: read the rule {text}, then come back"
            attrs += f', style=dashed, color="{CALL_COLOUR}", fontcolor="{CALL_COLOUR}"'
        if tip != text or len(text) > MAX_EDGE_LABEL:
            attrs += f", tooltip={quote(tip)}, labeltooltip={quote(tip)}"
        lines.append(f"    r{m}s{arc.source} -> r{m}s{arc.target} [{attrs}];")
    lines.append("  }")
    return lines


def rules_svg(network: Network, *, title: str | None = None) -> str:
    """``rules_dot``'s drawing as inline SVG (``<svg class="fsm rules">``), made and cached
    as the regex drawings are (``fsmviz.drawing.render``). Raises ``RenderError`` when
    graphviz fails."""
    svg = _svg(rules_dot(network, title=title))
    return svg.replace('<svg class="fsm"', '<svg class="fsm rules"', 1)


# --- lighting ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lighting:
    """What to light in the rules drawing: ``positions`` (machine, state) on a stack,
    ``tops`` among them, ``reading`` terminal arcs being read, ``calls`` pending call arcs,
    ``next`` arcs the tops may take, ``rules`` (machine indices) on a stack. Arcs are
    (machine, arc index)."""

    positions: frozenset[tuple[int, int]] = frozenset()
    tops: frozenset[tuple[int, int]] = frozenset()
    reading: frozenset[tuple[int, int]] = frozenset()
    calls: frozenset[tuple[int, int]] = frozenset()
    next: frozenset[tuple[int, int]] = frozenset()
    rules: frozenset[int] = frozenset()


def lighting(place: Place, network: Network) -> Lighting:
    """The ``Lighting`` of every live stack of ``place`` (the union of them)."""
    positions, tops, reading, calls, nexts, rules = set(), set(), set(), set(), set(), set()
    for stack in place.stacks:
        for k, frame in enumerate(stack.frames):
            positions.add((frame.machine, frame.state))
            rules.add(frame.machine)
            top = k == len(stack.frames) - 1
            if not top:
                if frame.arc is not None:
                    calls.add((frame.machine, frame.arc.index))
                continue
            tops.add((frame.machine, frame.state))
            if frame.arc is not None:
                reading.add((frame.machine, frame.arc.index))
            else:
                machine = network.machines[frame.machine]
                nexts.update((frame.machine, a.index) for a in machine.outgoing[frame.state])
    return Lighting(*(frozenset(x) for x in (positions, tops, reading, calls, nexts, rules)))


_LIT = frozenset({"current", "top", "taken", "next"})
_GROUP = re.compile(r'<g class="(node pos r(\d+)s(\d+)|edge arc r(\d+)a(\d+)|cluster rule r(\d+))'
                    r'([^"]*)"')  # fmt: skip


def lit_names(lit: Lighting) -> dict[str, str]:
    """The drawing's groups ``lit`` lights, by name (a position ``r0s1``, an arc ``r0a2``,
    a rule's box ``r1``: each group's class in ``rules_svg``), with their lit classes.
    ``highlight_rules`` writes them into the SVG; the page's script applies a step's
    (static/app.js, ``lightRules``) to a drawing already in the browser.

    >>> lit_names(Lighting(positions=frozenset({(0, 1)}), tops=frozenset({(0, 1)}),
    ...                    next=frozenset({(0, 2)}), rules=frozenset({0})))
    {'r0': 'current', 'r0a2': 'next', 'r0s1': 'current top'}
    """
    names: dict[str, list[str]] = {}
    for pairs, form, cls in (
        (lit.positions, "r{}s{}", "current"),
        (lit.tops, "r{}s{}", "top"),
        (lit.reading, "r{}a{}", "current"),
        (lit.calls, "r{}a{}", "taken"),
        (lit.next, "r{}a{}", "next"),
    ):
        for machine, k in pairs:
            names.setdefault(form.format(machine, k), []).append(cls)
    for machine in lit.rules:
        names.setdefault(f"r{machine}", []).append("current")
    return {name: " ".join(names[name]) for name in sorted(names)}


def highlight_rules(svg: str, lit: Lighting) -> str:
    """``svg`` (from ``rules_svg``) with the classes of ``lit`` on its positions, arcs and
    boxes (``lit_names``); classes of an earlier call are replaced, not added to. A text
    pass, no layout: cheap enough for every streamed token."""
    names = lit_names(lit)

    def rewrite(match: re.Match[str]) -> str:
        head, nm, ns, am, ak, cm, rest = match.groups()
        kept = [c for c in rest.split() if c not in _LIT]
        if nm is not None:
            name = f"r{nm}s{ns}"
        elif am is not None:
            name = f"r{am}a{ak}"
        else:
            name = f"r{cm}"
        kept += names.get(name, "").split()
        return f'<g class="{" ".join([head, *kept])}"'

    return _GROUP.sub(rewrite, svg)


def lit_classes(svg: str, cls: str) -> list[str]:
    """The ``pos``/``arc``/``rule`` names (``r0s1``, ``r2a3``, ``r1``) carrying ``cls``
    in ``svg`` (for tests and the page's checks).

    >>> lit_classes('<g class="node pos r0s1 current top">', "top")
    ['r0s1']
    """
    found = []
    for match in re.finditer(
        r'<g class="(?:node pos|edge arc|cluster rule) (r[\d\w]+)([^"]*)"', svg
    ):
        if cls in match.group(2).split():
            found.append(match.group(1))
    return found
