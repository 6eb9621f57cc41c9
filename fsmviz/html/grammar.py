"""The Grammar tab's views: a grammar compiled and drawn (``GrammarView``), the parser's
place in words, the terminal being read, the doctor's findings, and Learn's regex-to-grammar
view, as pure functions returning data or HTML (every piece of user text and model output
escaped), tested without a browser.

Below the page's Grammar tab (``fsmviz.app.grammar_page``: layout, wiring, handlers; its
examples in ``fsmviz.app.examples``), its run (``fsmviz.app.grammar_live``) and
``grammar_steps`` beside it, which all read from here; this module reads none of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from fsmviz.automaton.dfa import compile_regex
from fsmviz.automaton.syntax import RegexError
from fsmviz.cache import BoundedCache
from fsmviz.diagnose.finding import Finding
from fsmviz.diagnose.grammar import diagnose_grammar
from fsmviz.drawing.compact import compact
from fsmviz.drawing.render import RenderError, compact_svg, highlight, to_svg
from fsmviz.drawing.rules import RULES_CSS, highlight_rules, lighting, lit_names, rules_svg
from fsmviz.errors import FsmvizError
from fsmviz.grammar import compile_grammar
from fsmviz.grammar.errors import GrammarError
from fsmviz.grammar.network import Network, build_network
from fsmviz.grammar.place import Chart, Place, place_in, step_charts
from fsmviz.html.text import code_spans, error_html, shown
from fsmviz.learn.grammar import (
    BRACKETS_GRAMMAR,
    brackets_dfa,
    brackets_regex,
    brackets_rows,
    compare_masks,
)
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "GrammarView",
    "grammar_error_html",
    "grammar_findings",
    "grammar_findings_html",
    "grammar_view",
    "learn_html",
    "masks_html",
    "place_after",
    "place_html",
    "rules_html",
    "rules_lights",
    "step_charts",
    "terminal_html",
]

FORMATS = ("auto", "gbnf", "lark")
DRAW_POSITIONS = 400
"""A grammar whose rules have more positions is not drawn (nor run on the page)."""
DRAW_LIMIT = 300
"""A terminal's DFA with more states is not drawn."""
COMPACT_ABOVE = 30
"""A terminal's DFA with more states is drawn compact (``fsmviz.drawing.compact``)."""
MAX_GRAMMAR = 20_000
"""Characters of a grammar the page takes."""


@dataclass(frozen=True)
class GrammarView:
    """A grammar as the page shows it before a run: the compiled grammar and its network
    (None when it cannot be used), the drawing, the error."""

    text: str
    grammar: Any
    network: Network | None
    svg: str
    error: str


_views: BoundedCache[GrammarView] = BoundedCache(32)
_doctor: BoundedCache[tuple[Finding, ...]] = BoundedCache(32)


def grammar_view(text: str, format: str = "auto") -> GrammarView:
    """Compile and draw ``text``; a bad grammar is an error, never an exception. Cached
    by (text, format)."""
    return _views.get_or_build((text, format), lambda: _grammar_view(text, format))


def grammar_findings(
    view: GrammarView, vocab: Vocabulary | None, max_tokens: int | None = None
) -> tuple[Finding, ...]:
    """The grammar doctor's findings for ``view`` (none for a grammar that failed)."""
    if view.grammar is None:
        return ()
    key = (view.text, view.grammar, vocab.fingerprint if vocab is not None else None, max_tokens)
    return _doctor.get_or_build(
        key, lambda: tuple(diagnose_grammar(view.grammar, vocab, max_tokens=max_tokens))
    )


def _grammar_view(text: str, format: str) -> GrammarView:
    if len(text) > MAX_GRAMMAR:
        error = FsmvizError(
            f"the grammar has {len(text):,} characters, more than the page takes "
            f"({MAX_GRAMMAR:,}): use the library or the command line for it"
        )
        return GrammarView(text, None, None, "", error_html(error))
    try:
        grammar = compile_grammar(text, None if format in ("", "auto", None) else format)
        network = build_network(grammar)
        positions = sum(m.num_states for m in network.machines)
        if positions > DRAW_POSITIONS:
            raise RenderError(
                f"the grammar's rules have {positions} positions, more than the page draws "
                f"({DRAW_POSITIONS}): its drawing would be unreadable; try a smaller grammar"
            )
        svg = rules_svg(network, title=f"{grammar.format} grammar, start: {grammar.start}")
    except (ValueError, RenderError) as error:  # GrammarError, NetworkError are ValueErrors
        return GrammarView(text, None, None, "", grammar_error_html(error, text))
    return GrammarView(text, grammar, network, svg, "")


def grammar_error_html(error: Exception, text: str = "") -> str:
    """A grammar error with its line, column and hint, escaped; with the grammar's
    ``text``, the line it is on with a caret under the column (as a regex error shows).

    >>> from fsmviz.grammar import GrammarError
    >>> grammar_error_html(GrammarError("undefined rule '<x>'", 2, 5, "define it"))
    '<div class="error-box"><b>undefined rule &#x27;&lt;x&gt;&#x27;</b> <span class="where">line 2, column 5</span><div class="hint">define it</div></div>'
    """  # noqa: E501
    message = getattr(error, "message", None)
    if message is None:
        return error_html(error)
    line, column = getattr(error, "line", None), getattr(error, "column", None)
    where = ""
    if line is not None:
        at = f"line {line}" + (f", column {column}" if column is not None else "")
        where = f' <span class="where">{escape(at)}</span>'
    hint = getattr(error, "hint", None)
    tip = f'<div class="hint">{escape(hint)}</div>' if hint else ""
    shown = error.excerpt(text) if text and isinstance(error, GrammarError) else ""
    caret = f"<pre>{escape(shown)}</pre>" if shown else ""
    return f'<div class="error-box"><b>{escape(message)}</b>{where}{caret}{tip}</div>'


PAGE_CSS = """
.rules-drawing { overflow-x: auto; }
@media (max-width: 640px) { .rules-drawing svg.fsm.rules { width: 600px !important; } }
.grammar-place ol.stacks { margin: 0.2em 0 0.4em 1.2em; padding: 0; font-size: 0.92em; }
.grammar-place ol.stacks li { margin: 0.15em 0; }
.grammar-place .bad { color: #c33; } .grammar-place .good { color: #1d6b40; }
"""
"""The tab's own look beside ``RULES_CSS``: a phone scrolls the drawing sideways at a
readable size instead of shrinking it to a thumbnail."""


# --- what a place looks like -----------------------------------------------------------------


def rules_html(view: GrammarView, place: Place | None = None) -> str:
    """The rules drawing (inline SVG, its look with it), lit at ``place`` when given."""
    if view.network is None or not view.svg:
        return '<p class="empty">The rules are drawn here once the grammar compiles.</p>'
    svg = view.svg if place is None else highlight_rules(view.svg, lighting(place, view.network))
    return f'<style>{RULES_CSS}{PAGE_CSS}</style><div class="rules-drawing">{_natural(svg)}</div>'


def rules_lights(
    view: GrammarView, steps: Sequence[Any], charts: Sequence[Chart] | None = None
) -> str:
    """Each step's lights of the rules drawing, as a hidden ``.lights`` element whose
    ``data-json`` the page's script reads (static/app.js, ``lightRules``): for step ``i``
    the lit groups after the text of steps ``0..i`` (``lit_names``), so that choosing a
    step lights the drawing at once, in the browser. "" without a drawing or steps.
    ``charts``: the run's ``step_charts`` when the caller has them.

    >>> from html import unescape
    >>> from fsmviz.generation.trace import Step
    >>> view = grammar_view('root ::= "a" "b"', "gbnf")
    >>> steps = [Step(k, c, k, k + 1, 1, 1.0, (), index=k, token_bytes=c.encode())
    ...          for k, c in enumerate("ab")]
    >>> html = rules_lights(view, steps)
    >>> json.loads(unescape(html.split('data-json="')[1][:-8]))
    [{'r0': 'current', 'r0a1': 'next', 'r0s1': 'current top'}, {}]

    After ``a`` the parser is in ``root`` after its first position, ``b`` next; after
    ``ab``, a whole sentence, nothing is left on its stack.
    """
    if view.network is None or not view.svg or not steps:
        return ""
    after = (step_charts(view.network, steps) if charts is None else charts)[1:]
    lights = [lit_names(lighting(place_in(chart), view.network)) for chart in after]
    data = json.dumps(lights, separators=(",", ":"))
    # in an attribute, not a <template>: Gradio patches a redrawn HTML output node by node
    return f'<div class="lights" hidden data-json="{escape(data)}"></div>'


def _natural(svg: str) -> str:
    """``svg`` no wider than graphviz drew it (a three-rule grammar is not blown up to the
    column's width); wider drawings still shrink to fit."""
    match = re.search(r'data-width="([\d.]+)pt"', svg)
    if match is None:
        return svg
    pixels = round(float(match.group(1)) * 4 / 3)
    return svg.replace("<svg ", f'<svg style="max-width: {pixels}px" ', 1)


def place_html(place: Place | None) -> str:
    """The parser's live stacks in plain words, one line each, escaped.

    >>> from fsmviz.grammar import tree as t
    >>> from fsmviz.grammar.place import place_of
    >>> net = build_network(t.Grammar((t.Rule("s", t.Seq((t.Literal("<"), t.Literal(">")))),), "s"))
    >>> print(place_html(place_of(net, "<")))
    <div class="grammar-place"><p>After <code>&quot;&lt;&quot;</code>, the parser is:</p><ol class="stacks"><li>in <code>s</code> after <code>&lt;</code> expecting <code>&gt;</code></li></ol></div>
    """  # noqa: E501
    if place is None:
        return (
            '<div class="grammar-place"><p class="empty">Run the grammar: the parser\'s place '
            "after each token is said here and lit in the drawing.</p></div>"
        )
    shown = json.dumps(place.text[-60:], ensure_ascii=False)
    head = f"<p>After <code>{escape(shown)}</code>, the parser is:</p>"
    if not place.is_prefix:
        return (
            f'<div class="grammar-place dead">{head}<p class="bad">nowhere: no sentence of the '
            "grammar begins with this text (fsmviz's own parser disagrees with the mask "
            "here: say so in an issue).</p></div>"
        )
    items = "".join(f"<li>{code_spans(line)}</li>" for line in place.lines())
    more = '<p class="more">More stacks are live; the first are shown.</p>' if place.more else ""
    done = ""
    if place.accepts:
        done = '<p class="good">The text is a whole sentence of the grammar: it may end here.</p>'
    stacks = f'<ol class="stacks">{items}</ol>' if items else ""
    return f'<div class="grammar-place">{head}{stacks}{more}{done}</div>'


def terminal_html(place: Place | None) -> str:
    """The terminal the parser is reading, drawn as its own DFA with its state lit ("" when
    no terminal is half read, or it has no drawable DFA)."""
    if place is None or not place.stacks:
        return ""
    top = place.stacks[0].top
    if top.arc is None or top.arc.symbol.is_call or not isinstance(top.inner, int):
        return ""
    symbol = top.arc.symbol
    try:
        dfa = compile_regex(symbol.regex or "")
        if dfa.num_states > DRAW_LIMIT:
            return ""
        if dfa.num_states <= COMPACT_ABOVE:
            lit = highlight(to_svg(dfa, title=f"terminal {symbol.label}"), current=top.inner)
        else:  # a counted repeat is one looped state: "7 of 160"
            graph = compact(dfa)
            svg = compact_svg(graph, dfa, title=f"terminal {symbol.label}")
            at = graph.places[top.inner]
            if at.node is not None:
                node = graph.nodes[at.node]
                note = f"{at.index} of {at.of}" if node.loop else None
                lit = highlight(svg, current=node.first, note=note)
            else:
                lit = highlight(svg, links={at.link: {"current"}})
    except (RegexError, RenderError):
        return ""
    read = json.dumps(top.read, ensure_ascii=False)
    return (
        f'<div class="grammar-terminal"><p>Reading the terminal <code>{escape(symbol.label)}'
        f"</code> of <code>{escape(top.rule)}</code>: <code>{escape(read)}</code> so far, "
        f"state {top.inner} of its DFA.</p>{lit}</div>"
    )


def grammar_findings_html(findings: Sequence[Finding]) -> str:
    """The grammar doctor's findings as a list, each naming its rule (escaped)."""
    if not findings:
        return '<p class="grammar-findings-none">No findings: the grammar looks healthy.</p>'
    items = "".join(
        f'<li class="grammar-finding {escape(f.severity)}" data-kind="{escape(f.kind)}" '
        f'data-rule="{escape(f.fragment or "")}">{code_spans(f.message)}</li>'
        for f in findings
    )
    return f'<ul class="grammar-findings">{items}</ul>'


# --- a run ---------------------------------------------------------------------------------


def place_after(view: GrammarView, text: str) -> Place | None:
    """The place after ``text`` (a step of a finished run), None without a network."""
    if view.network is None:
        return None
    return place_in(Chart.start(view.network).after(text))


# --- learn: from regex to grammar ---------------------------------------------------------

LEARN_DEPTHS = 8


def learn_html(depth: int) -> str:
    """Balanced brackets to ``depth``: the regex and its DFA, which grow with the depth,
    beside the one-rule grammar, its drawing lit after ``depth`` open brackets."""
    depth = max(1, min(int(depth), LEARN_DEPTHS))
    view = grammar_view(BRACKETS_GRAMMAR, "gbnf")
    positions = sum(m.num_states for m in view.network.machines) if view.network else "?"
    rows = "".join(
        f"<tr{' class=chosen' if row.depth == depth else ''}><td>{row.depth}</td>"
        f"<td>{len(row.regex)}</td><td>{row.states}</td><td>{positions}</td></tr>"
        for row in brackets_rows(LEARN_DEPTHS)
    )
    place = place_after(view, "(" * depth)
    try:
        dfa = to_svg(brackets_dfa(depth), title=f"regex, depth ≤ {depth}")
        dfa = highlight(dfa, current=depth)
    except RenderError as error:
        dfa = error_html(error)
    return (
        '<div class="learn-grammar">'
        "<p>No DFA checks balanced brackets to any depth: it can only count the open ones "
        "in its states, one state per count. The regex for depth ≤ k nests k groups, its "
        "DFA has k + 1 states; the grammar is one rule, drawn as one automaton whose middle "
        "edge <em>calls</em> the rule again. What the grammar adds is a <b>stack</b>: each "
        "call remembers where to come back to.</p>"
        "<table class='learn-grammar-table'><thead><tr><th>depth k</th><th>regex characters"
        "</th><th>DFA states</th><th>grammar positions</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        f"<p>The regex for depth ≤ {depth}: <code>{escape(brackets_regex(depth))}</code>. "
        f"After <code>{'(' * depth}</code> its DFA is in state {depth}, the last before "
        "it must close; one more <code>(</code> and it is dead.</p>"
        f"{dfa}"
        f"<p>The grammar <code>{escape(BRACKETS_GRAMMAR.strip())}</code> after the same "
        f"text: {depth} positions on the stack.</p>"
        f"{place_html(place)}{rules_html(view, place)}</div>"
    )


def masks_html(view: GrammarView, vocab: Vocabulary | None, text: str) -> str:
    """ParserLLM's per-terminal mask against the exact one after ``text`` (escaped)."""
    if view.grammar is None:
        return view.error
    if vocab is None:
        return '<p class="empty">The tokenizer is still loading: try again in a moment.</p>'
    if not view.grammar.is_prefix(text):
        return (
            f"<p class='bad'>No sentence of the grammar begins with "
            f"<code>{escape(json.dumps(text, ensure_ascii=False))}</code>.</p>"
        )
    try:
        found = compare_masks(view.grammar, vocab, text)
    except (ValueError, FsmvizError) as error:
        return error_html(error)
    lost = sorted(found.lost, key=lambda t: vocab.token_text(t))
    chips = "".join(
        f'<code class="lost-token">{escape(shown(vocab.token_text(t)))}</code> ' for t in lost[:40]
    )
    more = f" and {len(lost) - 40} more" if len(lost) > 40 else ""
    terminals = ", ".join(f"<code>{escape(name)}</code>" for name in found.terminals)
    return (
        "<div class='masks'><p>After <code>"
        f"{escape(json.dumps(text, ensure_ascii=False))}</code> the parser may read next: "
        f"{terminals}. ParserLLM's method (seed 002) joins those terminals into one regex and "
        "allows a token only if it stays inside one of them.</p>"
        f"<p><b>{len(found.exact):,}</b> tokens are allowed by the definition (P + token a "
        f"prefix of a sentence); the per-terminal method allows <b>{len(found.per_terminal):,}"
        f"</b> and loses <b>{len(lost):,}</b>: tokens that end one terminal and begin the "
        f"next.</p><p>{chips or 'none'}{more}</p></div>"
    )
