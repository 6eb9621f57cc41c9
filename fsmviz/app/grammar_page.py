"""The page's grammar mode: a context-free grammar typed or chosen, drawn as automata that
call each other, and a real model run under it with the parser's place lit at each step.

The tab holds the grammar box (``#grammar``), one button per example (each fills the
boxes and runs at once), the rules drawing (``#rules``: one box per rule, the positions
on the parser's stacks carrying the CSS class ``current``), the stacks in plain words,
the terminal being read drawn as its own DFA with its state lit, the output, and the
grammar doctor's findings. A step slider replays the run: the place after any step.

Everything but ``build_grammar_tab`` (a layout calling small builders, then the wiring)
and the ``on_*`` handlers (one call each) is a pure function returning data or HTML, with
every piece of user text and model output escaped, tested without a browser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from html import escape
from pathlib import Path
from typing import Any

from fsmviz.app.live import run_event
from fsmviz.app.views import code_spans, error_html
from fsmviz.automaton.dfa import compile_regex
from fsmviz.automaton.syntax import RegexError
from fsmviz.cache import BoundedCache, bounded
from fsmviz.diagnose.finding import Finding
from fsmviz.diagnose.grammar import diagnose_grammar
from fsmviz.drawing.compact import compact
from fsmviz.drawing.render import RenderError, compact_svg, highlight, to_svg
from fsmviz.drawing.rules import RULES_CSS, highlight_rules, lighting, lit_names, rules_svg
from fsmviz.errors import FsmvizError
from fsmviz.grammar.errors import GrammarError
from fsmviz.grammar.network import Network, build_network
from fsmviz.grammar.place import Chart, Place, place_in
from fsmviz.grammar.replay import grammar_stopped_trace
from fsmviz.params import MAX_PROMPT_CHARS
from fsmviz.params import text as checked_text
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "GrammarExample",
    "GrammarView",
    "build_grammar_tab",
    "grammar_examples",
    "grammar_view",
    "masks_html",
    "place_html",
    "rules_html",
    "rules_lights",
    "terminal_html",
]

EXAMPLES_FILE = Path(__file__).with_name("grammar_examples.json")
FORMATS = ("auto", "gbnf", "lark")
FRAME_EVERY = 0.1
"""Seconds between streamed frames at most (each carries the lit drawing)."""
DRAW_POSITIONS = 400
"""A grammar whose rules have more positions is not drawn (nor run on the page)."""
DRAW_LIMIT = 300
"""A terminal's DFA with more states is not drawn."""
COMPACT_ABOVE = 30
"""A terminal's DFA with more states is drawn compact (``fsmviz.drawing.compact``)."""
MAX_GRAMMAR = 20_000
"""Characters of a grammar the page takes."""


@dataclass(frozen=True)
class GrammarExample:
    """A grammar (``format`` gbnf or lark), a prompt for it and a max_tokens that fits."""

    name: str
    format: str
    grammar: str
    prompt: str
    max_tokens: int


@bounded(maxsize=1)
def grammar_examples() -> dict[str, GrammarExample]:
    """The examples by name, in the file's order.

    >>> list(grammar_examples())[:2]
    ['nested JSON', 'arithmetic']
    """
    data = json.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))["examples"]
    return {
        name: GrammarExample(
            name, item["format"], item["grammar"], item["prompt"], int(item["max_tokens"])
        )
        for name, item in data.items()
    }


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
    from fsmviz.grammar import compile_grammar

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
# A run's frames are ``grammar_live``'s (the regex page's frames, the place lit in them).


def step_charts(network: Network, steps: Sequence[Any]) -> list[Chart]:
    """The parser's chart before the run and after each of ``steps`` (the text each adds,
    ``trace.pieces``): what the step table's rules, the lights of each step and the
    place after it are read from."""
    from fsmviz.generation.trace import pieces

    charts = [Chart.start(network)]
    for piece in pieces(steps):
        charts.append(charts[-1].after(piece))
    return charts


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
    from fsmviz.learn.grammar import BRACKETS_GRAMMAR, brackets_dfa, brackets_regex, brackets_rows

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
    from fsmviz.app.views import shown
    from fsmviz.learn.grammar import compare_masks

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


# --- the tab -------------------------------------------------------------------------------

GRAMMAR_JS = (Path(__file__).resolve().parents[2] / "static" / "grammar.js").read_text(
    encoding="utf-8"
)
"""The tab's behaviour in the browser (static/grammar.js): a click on a step's row, its
token or its point on the chart chooses that step; the address follows the tab's inputs
and chosen step, and opening such a link restores them and the run."""
PRIVATE = {"api_visibility": "private"}


@dataclass(frozen=True)
class GrammarTab:
    """The tab's components: ``page`` those a run writes as on the regex page
    (``handlers.Page``: its ``dfa`` is the rules drawing), and the tab's own."""

    page: Any
    place: Any
    terminal: Any
    stepping: Any
    """A ``gr.State``: the finished run's ``grammar_live.Stepping`` (names, allowed sets)."""


@dataclass(frozen=True)
class _Settings:
    """The left column's inputs: what a run reads."""

    box: Any
    fmt: Any
    prompt: Any
    max_tokens: Any
    temperature: Any
    seed: Any
    chat: Any
    backend: Any = None
    """The model menu (``fsmviz.app.backend``: the bundled model or a configured server)."""

    def run_inputs(self, mark: Any) -> list:
        """The inputs ``on_run`` takes, in its order: the Stop mark, then the model menu."""
        return [self.box, self.fmt, self.prompt, self.max_tokens, self.temperature, self.seed,
                self.chat, mark, *([self.backend] if self.backend is not None else [])]  # fmt: skip


@dataclass(frozen=True)
class _Learn:
    """The Learn accordion's parts: the depth slider and its view, the masks comparison."""

    depth: Any
    view: Any
    prefix: Any
    compare: Any
    masks: Any


def build_grammar_tab(models: Any, demo: Any = None, runs_at_once: int = 16) -> None:
    """Lay out and wire the grammar tab inside the current ``gr.Tab``; with ``demo`` (the
    page's ``gr.Blocks``), a link's grammar, prompt, options, run and step are restored
    when the page loads (``on_load``, static/grammar.js).

    A layout: each builder below adds its components in page order and returns them;
    the last ones wire the events."""
    import gradio as gr

    from fsmviz.app.page import Page, StopMark

    first = next(iter(grammar_examples().values()))
    start = grammar_view(first.grammar, first.format)
    buttons = _example_buttons()
    # as on the Generate tab: the whole run (chart, steps) under the inputs on the left,
    # the chosen step's views on the right, which stay in view on a wide screen while the
    # left column scrolls (static/app.css): the lit rules beside the steps
    with gr.Row(equal_height=False, elem_id="grammar-top"):
        with gr.Column(scale=2, min_width=300, elem_id="grammar-controls"):
            settings = _settings(first)
            run, stop = _actions()
            error, status, output, shadow, doctor = _results(start)
            chart, steps, downloads = _run_record()
        with gr.Column(scale=3, min_width=320, elem_id="grammar-drawing"):
            step = _stepper()
            place, rules, terminal, allowed = _run_views(start)
    learn = _learn()
    state = {"time_to_live": 3600}
    page = Page(
        rules, output, shadow, steps, chart, doctor, error, status, gr.State(None, **state),
        gr.State((), **state), step, downloads, run, stop, allowed,
    )  # fmt: skip
    tab = GrammarTab(page, place, terminal, gr.State(None, **state))
    mark = gr.State(StopMark())
    _wire_grammar(models, settings, learn, tab)
    _wire_runs(models, settings, tab, mark, buttons, runs_at_once)
    learn.compare.click(
        partial(on_compare, models),
        [settings.box, settings.fmt, learn.prefix],
        learn.masks,
        **PRIVATE,
    )
    if demo is not None:
        _restore_on_load(demo, models, settings)


def _example_buttons() -> list:
    """The tab's lead paragraph and one button per example: ``(button, example name)``."""
    import gradio as gr

    gr.HTML(
        "<p class='lead'>A context-free grammar (llama.cpp's GBNF or llguidance's Lark) "
        "drawn as small automata that <em>call</em> each other: a dashed edge reads a whole "
        "rule, then comes back. While the model writes, the parser's place, a stack of "
        "positions, is lit across the boxes.</p>",
        elem_id="grammar-intro",
    )
    with gr.Row(elem_id="grammar-examples"):
        return [
            (gr.Button(name, size="sm", elem_classes="grammar-example"), name)
            for name in grammar_examples()
        ]


def _settings(first: GrammarExample) -> _Settings:
    """The grammar box, its format, the prompt and the sampling options, filled from the
    first example."""
    import gradio as gr

    from fsmviz.app.backend import backend_menu, server_names

    backend = backend_menu(server_names(), elem_id="grammar-backend")
    box = gr.Textbox(first.grammar, label="Grammar", elem_id="grammar", lines=10, max_lines=24)
    fmt = gr.Radio(list(FORMATS), value="auto", label="Format", elem_id="grammar-format")
    prompt = gr.Textbox(first.prompt, label="Prompt", elem_id="grammar-prompt", lines=2)
    with gr.Row():
        max_tokens = gr.Slider(
            1, 256, value=first.max_tokens, step=1, label="Max tokens",
            elem_id="grammar-max-tokens",
        )  # fmt: skip
        temperature = gr.Slider(
            0.0, 2.0, value=0.0, step=0.05, label="Temperature (0 = greedy)",
            elem_id="grammar-temperature",
        )  # fmt: skip
    with gr.Row():
        seed = gr.Number(0, label="Seed", precision=0, minimum=0, elem_id="grammar-seed")
        chat = gr.Checkbox(True, label="Chat template", elem_id="grammar-chat")
    return _Settings(box, fmt, prompt, max_tokens, temperature, seed, chat, backend)


def _actions() -> tuple[Any, Any]:
    """Generate, Stop (shown while a run streams) and the copy-link button: ``(run, stop)``."""
    import gradio as gr

    with gr.Row(elem_id="grammar-actions"):
        run = gr.Button("Generate", variant="primary", elem_id="grammar-run")
        stop = gr.Button("Stop", variant="stop", elem_id="grammar-stop", visible=False)
        gr.HTML(
            '<button type="button" id="grammar-copy-link" title="copy a link to this '
            'grammar, prompt, settings and step">Copy link</button>',
            elem_id="grammar-share",
        )
    return run, stop


def _results(start: GrammarView) -> tuple[Any, ...]:
    """What a run writes under the inputs: ``(error, status, output, shadow, doctor)``; the
    doctor starts with the first example's findings."""
    import gradio as gr

    error = gr.HTML(start.error, elem_id="grammar-error")
    status = gr.HTML("", elem_id="grammar-status")
    gr.HTML("<h3>Constrained output</h3>", elem_id="grammar-output-head")
    output = gr.HTML(
        '<p class="empty">Press Generate: the output appears here.</p>',
        elem_id="grammar-output",
    )
    gr.HTML("<h3>What the model wanted (unconstrained, same prompt and seed)</h3>")
    shadow = gr.HTML(
        '<p class="empty">After the run, the model writes freely here.</p>',
        elem_id="grammar-shadow",
    )
    gr.HTML("<h3>Grammar doctor</h3>")
    doctor = gr.HTML(grammar_findings_html(grammar_findings(start, None)), elem_id="grammar-doctor")
    return error, status, output, shadow, doctor


STEP_CARD = (
    '<div class="step-card" aria-live="polite"><p class="empty">After a run, choose a step '
    "(Prev, Next, a row, a token, a point): its token and the model's top candidates show "
    "here, the parser's place lights in the rules.</p></div>"
)
"""The chosen step's card (filled by static/app.js's ``renderCard`` from the step's row)."""


def _stepper() -> Any:
    """Prev, Play and Next (the Generate tab's buttons: the ← → keys too), the chosen
    step's card and the Step slider; fixed until a run. Stepping is the browser's
    (static/grammar.js paints what the run's last frame brought): no server round trip."""
    import gradio as gr

    from fsmviz.app.views import STEP_BUTTONS

    with gr.Column(elem_id="grammar-stepper"):
        gr.HTML(STEP_BUTTONS + STEP_CARD, elem_id="grammar-step-buttons", padding=False)
        step = gr.Slider(
            0, 1, value=0, step=1, label="Step", elem_id="grammar-step", interactive=False
        )
    return step


def _run_views(start: GrammarView) -> tuple[Any, Any, Any, Any]:
    """The right column's views of one step: ``(place, rules, terminal, allowed)``."""
    import gradio as gr

    place = gr.HTML(place_html(None), elem_id="grammar-place")
    rules = gr.HTML(rules_html(start), elem_id="rules")
    terminal = gr.HTML("", elem_id="grammar-terminal")
    allowed = gr.HTML(
        '<p class="empty">After a run, every token each step allowed, and the '
        "model's favourites the grammar blocked.</p>",
        elem_id="grammar-allowed",
    )
    return place, rules, terminal, allowed


def _run_record() -> tuple[Any, Any, Any]:
    """Under the inputs and the output, the whole run: ``(chart, steps, downloads)``."""
    import gradio as gr

    gr.HTML("<h3>Valid mass per step</h3>")
    chart = gr.Plot(label="Valid mass per step", show_label=False, elem_id="grammar-chart")
    gr.HTML("<h3>Steps</h3>")
    steps = gr.HTML('<p class="empty">Run a generation to see each step.</p>',
                    elem_id="grammar-steps")  # fmt: skip
    with gr.Accordion("Downloads: the trace as JSON and CSV, the grammar, its rules drawing "
                      "as SVG", open=False):  # fmt: skip
        downloads = gr.File(file_count="multiple", elem_id="grammar-downloads", interactive=False)
    return chart, steps, downloads


def _learn() -> _Learn:
    """The Learn accordion: regex to grammar by depth, and ParserLLM's mask against ours."""
    import gradio as gr

    with gr.Accordion("Learn: from regex to grammar", open=False, elem_id="grammar-learn"):
        depth = gr.Slider(1, LEARN_DEPTHS, value=3, step=1, label="Depth k",
                          elem_id="grammar-learn-depth")  # fmt: skip
        view = gr.HTML(learn_html(3), elem_id="grammar-learn-view")
        gr.HTML(
            "<h4>ParserLLM's method against the exact mask</h4><p>Seed 002's ParserLLM asks "
            "the parser which terminals may come next and masks with their regex: a token "
            "that crosses from one terminal into the next is lost. Type a text the grammar "
            "above may begin with.</p>"
        )
        with gr.Row():
            prefix = gr.Textbox('{"title', label="Text so far", elem_id="grammar-learn-prefix")
            compare = gr.Button("Compare the masks", elem_id="grammar-learn-compare")
        masks = gr.HTML("", elem_id="grammar-learn-masks")
    return _Learn(depth, view, prefix, compare, masks)


def _wire_grammar(models: Any, settings: _Settings, learn: _Learn, tab: GrammarTab) -> None:
    """The grammar box and its format redraw the rules and the doctor; Learn's depth
    redraws Learn's view."""
    page = tab.page
    learn.depth.change(learn_html, learn.depth, learn.view, trigger_mode="always_last", **PRIVATE)
    drawn = grammar_edit_outputs(tab)  # the drawing, the doctor, and a stale run cleared
    typed = [settings.box, settings.fmt, settings.max_tokens, page.trace]
    edited = partial(on_grammar_edit, tab, models)
    settings.box.change(edited, typed, drawn, trigger_mode="always_last", **PRIVATE)
    settings.fmt.input(edited, typed, drawn, **PRIVATE)


def _wire_runs(
    models: Any, settings: _Settings, tab: GrammarTab, mark: Any, buttons: list, at_once: int
) -> None:
    """Generate and each example button start a run (an example fills the boxes first);
    Stop marks the run to end. At most ``at_once`` runs share the model."""
    outputs = run_outputs(tab)
    inputs = settings.run_inputs(mark)
    running = {**run_event(tab.page.status, at_once), **PRIVATE}
    tab.page.run.click(
        partial(on_run, tab, models), inputs, outputs, trigger_mode="multiple", **running
    )
    filled = [settings.box, settings.fmt, settings.prompt, settings.max_tokens]
    for button, name in buttons:
        button.click(partial(on_example, name), None, filled, **PRIVATE).then(
            partial(on_run, tab, models), inputs, outputs, **running
        )
    stopped = [tab.page.stop, tab.page.status]  # the status says "Stopped" in Stop's answer
    tab.page.stop.click(partial(on_stop, tab), mark, stopped, queue=False, **PRIVATE)


def _restore_on_load(demo: Any, models: Any, settings: _Settings) -> None:
    """On page load, a link's grammar, prompt and options fill the boxes (``on_load``);
    static/grammar.js then restores the run and the step."""
    import gradio as gr

    def load(request):  # Gradio hands the request in by this annotation
        return on_load(models, request)

    load.__annotations__["request"] = gr.Request
    # the seven boxes on_load fills (not run_inputs: the Stop mark and the model menu)
    filled = [settings.box, settings.fmt, settings.prompt, settings.max_tokens,
              settings.temperature, settings.seed, settings.chat]  # fmt: skip
    demo.load(load, None, filled, js=GRAMMAR_JS, **PRIVATE)


def run_outputs(tab: GrammarTab) -> list:
    """What a grammar run writes: the regex page's run outputs and the tab's own."""
    from fsmviz.app.page import run_outputs as page_outputs

    return [*page_outputs(tab.page), tab.place, tab.terminal, tab.stepping]


def on_example(name: str):
    """An example button: its grammar, format, prompt and max tokens."""
    item = grammar_examples()[name]
    return item.grammar, item.format, item.prompt, item.max_tokens


def on_grammar(models: Any, text: str, fmt: str, max_tokens):
    """The grammar box changed: drawing, findings, error. A grammar that does not compile
    has no findings to show: the doctor says it waits (it said "the grammar looks
    healthy" under a broken grammar)."""
    view = grammar_view(text, fmt)
    if view.grammar is None:
        return rules_html(view), DOCTOR_WAITS, view.error
    found = grammar_findings(view, models.vocabulary(), int(max_tokens))
    return rules_html(view), grammar_findings_html(found), view.error


DOCTOR_WAITS = (
    '<p class="grammar-findings-wait">The doctor reads the grammar once it compiles: '
    "the box under Generate says what is wrong.</p>"
)


def on_grammar_edit(tab: GrammarTab, models: Any, text: str, fmt: str, max_tokens, trace):
    """The grammar box or its format changed: the drawing, the doctor and the error
    (``on_grammar``); and a run of another grammar (its output, steps, verdict, place,
    slider, allowed sets, downloads) is cleared, since none of it belongs to what the box
    now says (issue 47, point 2: they stayed, under a broken grammar too)."""
    from fsmviz.app.page import cleared

    page = tab.page
    rules, doctor, error = on_grammar(models, text, fmt, max_tokens)
    updates = {page.dfa: rules, page.diagnosis: doctor, page.error: error}
    if trace is not None and trace.pattern != text:
        updates.update(cleared(page))
        updates.update({tab.place: place_html(None), tab.terminal: "", tab.stepping: None})
    return updates


def grammar_edit_outputs(tab: GrammarTab) -> list:
    """The components ``on_grammar_edit`` may write."""
    from fsmviz.app.page import cleared

    page = tab.page
    return [page.dfa, page.diagnosis, page.error, *cleared(page), tab.place, tab.terminal,
            tab.stepping]  # fmt: skip


def updates(frame: Any, tab: GrammarTab, view: GrammarView) -> dict:
    """A ``grammar_live.GrammarFrame`` as Gradio updates: the regex page's
    (``handlers.frame_updates``) with the place and the terminal; once the constrained run
    has ended, the trace, the Step slider, the downloads and what stepping needs."""
    import gradio as gr

    from fsmviz.app.grammar_live import grammar_downloads
    from fsmviz.app.page import frame_updates

    page = tab.page
    out = frame_updates(replace(frame.frame, trace=None), page)
    if frame.place is not None:
        out[tab.place] = frame.place
    if frame.terminal is not None:
        out[tab.terminal] = frame.terminal
    trace = frame.frame.trace
    if trace is not None:
        last = max(len(trace.steps) - 1, 0)
        out[page.trace] = trace
        out[page.findings] = frame.frame.findings
        out[tab.stepping] = frame.stepping
        # a slider needs minimum < maximum: a one-step trace leaves it fixed at 0
        out[page.step] = gr.update(maximum=max(last, 1), value=last, interactive=last > 0)
        out[page.downloads] = grammar_downloads(trace, view)
    return out


def on_run(
    tab: GrammarTab,
    models: Any,
    text, fmt, prompt, max_tokens, temperature, seed, chat, mark,
    backend=None,
):  # fmt: skip
    """Generate under the grammar: as the regex page's Generate (``handlers.on_run``),
    Stop shown while it streams and Generate always available (a new run ends this one:
    ``handlers.StopMark``). Stopped during the constrained run, the steps written so far
    become the run's trace (stepping, allowed sets, downloads work on them); stopped
    during the shadow run, the shadow run is skipped. ``backend``: the bundled model or a
    configured server by name (``fsmviz.app.backend.run_source``)."""
    from fsmviz.app.backend import run_source
    from fsmviz.app.grammar_live import grammar_frames, grammar_status
    from fsmviz.app.page import follow, idle, options, started

    models = run_source(models, backend)
    page = tab.page
    me = mark.start()
    yield {**started(page), page.status: "Starting: the grammar's parser, then the model "
           "reads the prompt…"}  # fmt: skip
    view = grammar_view(text, fmt)
    if view.network is None:
        said = "Fix the grammar first: the box under Generate says what is wrong."
        yield {page.error: view.error, page.status: said, **idle(page)}
        return
    try:
        opts = options(max_tokens, temperature, seed, chat, 0)
        checked_text("prompt", prompt, MAX_PROMPT_CHARS)
        model = models.get(timeout=600)
    except (ValueError, FsmvizError) as error:
        yield {page.error: error_html(error), page.status: escape(str(error)), **idle(page)}
        return
    found = grammar_findings(view, model.vocab, int(max_tokens))
    frames = grammar_frames(model, view, prompt, opts, found)
    try:
        written = yield from follow(
            page, mark, me, frames, partial(updates, tab=tab, view=view), grammar_status
        )
    except Exception as error:  # e.g. out of memory: a message, never a traceback
        said = (  # fsmviz's own errors (a server's refusal) say what happened themselves
            f"The generation stopped: {error}"
            if isinstance(error, FsmvizError)
            else f"The generation failed: {type(error).__name__}: {error}"
        )
        yield {page.error: error_html(RuntimeError(said)), page.status: escape(said),
               **idle(page)}  # fmt: skip
        return
    if written is None:
        return
    yield from _stopped(tab, model, view, prompt, opts, found, written)


def _stopped(tab, model, view, prompt, opts, found, written):
    """A run stopped during its constrained part: what was written kept, for stepping."""
    from fsmviz.app.grammar_live import finish_grammar
    from fsmviz.app.page import idle
    from fsmviz.diagnose.text import plural

    page = tab.page
    said = f"Stopped after {plural(len(written), 'token')}."
    if written:
        yield {page.status: f"{said[:-1]}: keeping what was written…"}
        trace = grammar_stopped_trace(view.grammar, prompt, opts, written)
        yield updates(finish_grammar(model, view, trace, found, status=said), tab, view)
    yield {**idle(page), page.status: said if written else "Stopped."}


def on_stop(tab: GrammarTab, mark: Any):
    """Stop: the run sees the mark before its next frame and ends (``on_run``)."""
    from fsmviz.app.page import on_stop as page_stop

    return page_stop(tab.page, mark)


def on_compare(models: Any, text: str, fmt: str, prefix: str):
    """Compare the masks after ``prefix`` under the grammar in the box."""
    return masks_html(grammar_view(text, fmt), models.vocabulary(), prefix)


def on_load(models: Any, request: Any):
    """A Grammar tab link (``?grammar=…``): its grammar, format, prompt and options put
    back, each checked and clamped; without one, nothing is touched. (static/grammar.js
    opens the tab, runs when the link says ``run=1``, and chooses its ``step``.)"""
    import gradio as gr

    from fsmviz.generation.generate import MAX_TOKENS_LIMIT

    q = dict(request.query_params) if request is not None else {}
    if "grammar" not in q:
        return (gr.skip(),) * 7

    def given(key, cast, lo, hi):
        try:
            value = cast(q[key])
        except (KeyError, ValueError, OverflowError):
            return gr.skip()
        return min(max(value, lo), hi) if value == value else gr.skip()

    return (
        q["grammar"][:MAX_GRAMMAR],
        q["format"] if q.get("format") in FORMATS else gr.skip(),
        q["prompt"][:MAX_PROMPT_CHARS] if "prompt" in q else gr.skip(),
        given("max_tokens", int, 1, min(256, MAX_TOKENS_LIMIT)),
        given("temperature", float, 0.0, 2.0),
        given("seed", int, 0, 2**31 - 1),
        q["chat"] != "0" if "chat" in q else gr.skip(),
    )
