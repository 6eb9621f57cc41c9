"""The Learn tab's views: ``fsmviz.learn`` records turned into escaped HTML, one function a
section (construction frames, a walk, the transition table, test strings, a toy vocabulary
token by token, bytes, naive matching against the index, the token-level table).

Every user string (pattern, walked text, test strings, toy tokens) and every token text is
escaped before it reaches markup. The tab itself (layout, events) is ``fsmviz.app.learn``.
"""

from __future__ import annotations

import re

from fsmviz.automaton.dfa import Dfa, compile_regex
from fsmviz.automaton.syntax import RegexError
from fsmviz.cache import bounded
from fsmviz.drawing.render import RenderError, highlight, label_text, to_svg
from fsmviz.html.text import error_html, esc, shown
from fsmviz.learn import (
    ConstructionFrame,
    byte_drawing,
    byte_walk,
    check_tests,
    construction_frames,
    naive_vs_index,
    transition_table,
    walk_string,
)
from fsmviz.learn.naive import NaiveTooSlow
from fsmviz.learn.token_table import token_table
from fsmviz.learn.toy import ToyView
from fsmviz.learn.typed import byte_kind, parse_hex_tokens
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "LEARN_CSS",
    "bytes_html",
    "construction_html",
    "expectations_html",
    "naive_html",
    "table_html",
    "toy_html",
    "token_table_html",
    "walk_html",
]

SCALE = 1.35
"""How much larger than graphviz's natural size a Learn drawing is shown (edge labels at
~14 px natural are too small to read on a projector)."""
DRAW_LIMIT = 120
"""States above which the Learn view does not draw (a teaching picture must be readable)."""

LEARN_CSS = """
<style>
#learn .learn-card { border: 1px solid #e3e3e3; border-radius: 8px; padding: 8px 12px; }
#learn h3 { margin: 0.2em 0 0.4em; }
#learn .notes { margin: 0.3em 0; padding-left: 1.2em; }
#learn, #learn p, #learn li, #learn td, #learn th { font-size: 16px; }
#learn .learn-svg { overflow: auto; max-height: 62vh; }
#learn table.learn { border-collapse: collapse; font-size: 1em; margin: 4px 0; }
#learn table.learn th, #learn table.learn td { border: 1px solid #ddd; padding: 2px 8px;
  text-align: center; font-family: ui-monospace, monospace; }
#learn table.learn td.blank { color: #bbb; }
#learn .chars { display: flex; flex-wrap: wrap; gap: 4px; margin: 6px 0;
  font-family: ui-monospace, monospace; }
#learn .chars span { border: 1px solid #ccc; border-radius: 4px; padding: 2px 6px; }
#learn .chars span.ok { background: #e3efff; }
#learn .chars span.bad { background: #ffe1e1; border-color: #c33; }
#learn .verdict { font-weight: bold; }
#learn .verdict.match { color: #1a7a3a; }
#learn .verdict.partial { color: #8a6d00; }
#learn .verdict.dead { color: #b22; }
#learn .fail { background: #fff3f3; }
#learn .mask td.on { color: #1a7a3a; font-weight: bold; }
#learn .mask td.off { color: #bbb; }
#learn .bar { display: inline-block; height: 8px; background: #2b6cd4; }
#learn .scroll { overflow-x: auto; max-width: 100%; }
#learn .why { color: #555; font-size: 1em; }
</style>
"""


_NATURAL = re.compile(r'data-width="([0-9.]+pt)"')


def code(text: str) -> str:
    """A token or character shown visibly (``␣`` for space) in a code span."""
    return f"<code>{esc(shown(text))}</code>"


@bounded(maxsize=32)
def _frames(pattern: str) -> tuple[ConstructionFrame, ...]:
    return construction_frames(pattern)


def _svg(drawing, title: str, **lit) -> str:
    if drawing.num_states > DRAW_LIMIT:
        return f"<p class='why'>{drawing.num_states} states: too many to draw here.</p>"
    try:
        svg = highlight(to_svg(drawing, title=title), **lit)
    except RenderError as error:
        return error_html(error)
    # A third above natural size, so that a projected page reads from the back of the room,
    # never more: a one-state frame must not fill the screen.
    size = _NATURAL.search(svg)
    if size:
        width = f"calc({SCALE} * {size.group(1)})"
        svg = svg.replace('width="100%"', f'style="width:{width};max-width:100%"', 1)
    return f"<div class='learn-svg'>{svg}</div>"


def _compile(pattern: str) -> tuple[Dfa | None, str]:
    try:
        return compile_regex(pattern), ""
    except RegexError as error:
        return None, error_html(error, pattern)


# --- 1. construction -----------------------------------------------------------------------


def construction_html(pattern: str, i: int) -> tuple[str, int]:
    """Frame ``i`` (clamped) of building ``pattern``'s DFA, and the index shown."""
    try:
        frames = _frames(pattern)
    except RegexError as error:
        return error_html(error, pattern), 0
    i = max(0, min(i, len(frames) - 1))
    f = frames[i]
    lit = {"current": f.current, "marked": f.marked, "path_edges": f.taken}
    notes = "".join(f"<li>{esc(n)}</li>" for n in f.notes)
    head = "position" if f.stage == "positions" else "state"
    legend = "".join(f"<tr><td>{s}</td><td>{esc(label_text(v))}</td></tr>" for s, v in f.legend)
    return (
        f"<h3 data-frames='{len(frames)}'>{esc(f.title)} "
        f"<small>({i + 1} / {len(frames)})</small></h3>"
        f"<ul class='notes'>{notes}</ul>{_svg(f.drawing, pattern, **lit)}"
        f"<table class='learn'><tr><th>{head}</th><th>stands for</th></tr>{legend}</table>",
        i,
    )


# --- 2. walk, 3. table, 4. test strings ----------------------------------------------------

_VERDICT = {"match": "matches", "partial": "could still match", "dead": "dead"}


def walk_html(pattern: str, text: str) -> str:
    dfa, error = _compile(pattern)
    if dfa is None:
        return error
    w = walk_string(dfa, text)
    cells = []
    for s in w.steps:
        cls = "ok" if s.after is not None else "bad"
        move = f"{s.before}→{s.after}" if s.after is not None else f"{s.before}→✗"
        cells.append(f"<span class='{cls}' title='{esc(move)}'>{code(s.char)} {move}</span>")
    verdict = _VERDICT[w.verdict]
    if w.verdict == "dead":
        wanted = ", ".join(code(e) for e in w.expected) or "nothing (the match is complete)"
        verdict += (
            f" at character {w.dead_at + 1} ({code(text[w.dead_at])}): state "
            f"{w.steps[-1].before} reads only {wanted}"
        )
    python = _VERDICT[w.python]
    agree = (
        f"<p>Python's own regex matcher agrees: {esc(python)}.</p>"
        if w.agrees
        else f"<p class='fail'>Python's own regex matcher says {esc(python)}: "
        f"{esc(w.reason or '')}</p>"
    )
    edges = list(zip(w.path, w.path[1:], strict=False))
    last = w.path[-1]
    svg = _svg(dfa, pattern, current=last, visited=w.path, path_edges=edges)
    return (
        f"<div class='chars'>{''.join(cells) or '<i>(empty text)</i>'}</div>"
        f"<p class='verdict {w.verdict}'>{code(text)} {verdict}.</p>{agree}{svg}"
    )


def table_html(pattern: str) -> str:
    dfa, error = _compile(pattern)
    if dfa is None:
        return error
    t = transition_table(dfa)
    if len(t.rows) > DRAW_LIMIT:
        return f"<p class='why'>{len(t.rows)} states: too many rows to show.</p>"
    head = "".join(f"<th>{esc(label_text(c))}</th>" for c in t.classes)
    rows = []
    for r in t.rows:
        mark = ("→" if r.start else "") + ("*" if r.accepting else "")
        cells = "".join(
            "<td class='blank'></td>" if c is None else f"<td>{c}</td>" for c in r.cells
        )
        accepting = "yes" if r.accepting else "no"
        rows.append(f"<tr><td>{mark}</td><td>{r.state}</td><td>{accepting}</td>{cells}</tr>")
    return (
        "<table class='learn'><tr><th></th><th>state</th><th>accepting</th>"
        f"{head}</tr>{''.join(rows)}</table><p class='why'>→ start, * accepting; a blank "
        "cell is impossible (a textbook table has a column for every character; here the "
        "characters the pattern never tells apart share one).</p>"
    )


def token_table_html(pattern: str, vocab: Vocabulary | None = None) -> str:
    """Seed 001's table over the real vocabulary (``fsmviz.learn.token_table``): states ×
    the token ids that move, each cell the next state."""
    try:
        t = token_table(pattern, vocab or Vocabulary.bundled())
    except (RegexError, ValueError) as error:
        return error_html(error, pattern)
    head = "".join(
        f"<th title='token id {i}'>{i}<br>{code(x)}</th>"
        for i, x in zip(t.tokens, t.texts, strict=True)
    )
    rows = []
    for state, accepting, cells in zip(t.states, t.accepting, t.cells, strict=True):
        tds = "".join("<td class='blank'></td>" if c is None else f"<td>{c}</td>" for c in cells)
        rows.append(f"<tr><td>{state}{'*' if accepting else ''}</td>{tds}</tr>")
    more = (
        f" Showing {len(t.tokens)} of the {t.moving:,} tokens that move (the lowest ids)."
        if t.moving > len(t.tokens)
        else ""
    )
    return (
        f"<div class='learn-svg'><table class='learn'><tr><th>state \\ token id</th>{head}</tr>"
        f"{''.join(rows)}</table></div><p class='why'>Seed 001's <code>state_transitions"
        "[state, token_id]</code>: a row per state of the token index (* accepting), a column "
        "per token of the real vocabulary that moves from some state, the next state in each "
        f"cell (blank: the mask forbids it).{more}</p>"
    )


def expectations_html(pattern: str, block: str) -> str:
    dfa, error = _compile(pattern)
    if dfa is None:
        return error
    results = check_tests(dfa, block)
    if not results:
        return (
            "<p class='why'>One string per line: <code>+ text</code> should match, "
            "<code>- text</code> should not (a line without a mark should match).</p>"
        )
    rows = []
    for r in results:
        ok = "✓" if r.passed else "✗"
        cls = "" if r.passed and r.dfa == r.python else " class='fail'"
        rows.append(
            f"<tr{cls}><td>{r.line}</td><td>{code(r.text)}</td>"
            f"<td>{'match' if r.should_match else 'no match'}</td>"
            f"<td>{ok} {'match' if r.dfa else 'no match'}</td>"
            f"<td>{'match' if r.python else 'no match'}</td>"
            f"<td style='text-align:left'>{esc(r.reason or '')}</td></tr>"
        )
    passed = sum(r.passed for r in results)
    return (
        f"<p>{passed} of {len(results)} expectations met.</p>"
        "<div class='scroll'><table class='learn'><tr>"
        "<th>line</th><th>text</th><th>should</th><th>automaton</th><th>Python</th>"
        f"<th>why</th></tr>{''.join(rows)}</table></div>"
    )


# --- 5. toy vocabularies, 8. ZipModel ------------------------------------------------------


def toy_html(view: ToyView | None, problem: str, pattern: str) -> str:
    if view is None:
        return f"<div class='error-box'><b>{esc(problem)}</b></div>"
    vocab = view.index.vocab
    texts = [vocab.token_text(i) for i in range(len(vocab))]
    steps = ", ".join(f"{code(texts[s.token])} {s.state}→{s.after}" for s in view.steps)
    steps = f" — tokens: {steps}" if steps else ""
    head = "".join(f"<th>{code(t)}</th>" for t in texts)
    ticks = "".join(
        f"<td class='{'on' if m else 'off'}'>{'✓' if m else '·'}</td>" for m in view.mask
    )
    logits = "".join(f"<td>{x:.2f}</td>" for x in view.logits)
    probs = "".join(
        f"<td>{p:.2f}<br><span class='bar' style='width:{round(p * 40)}px'></span></td>"
        for p in view.probs
    )
    if view.finished:
        allowed = "nothing: the end token was written, the text is done"
    else:
        allowed = ", ".join(code(t) for t in view.allowed_texts()) or (
            "nothing: no token of this vocabulary leads to a match from here"
        )
    state = "accepting" if view.index.is_accepting(view.state) else "not accepting"
    edges = list(zip(view.path, view.path[1:], strict=False))
    dfa = view.index.dfa
    svg = _svg(
        dfa,
        pattern,
        current=view.state if view.state < dfa.num_states else None,
        visited=[s for s in view.path if s < dfa.num_states],
        path_edges=edges,
    )
    return (
        f"<p>Text so far: {code(view.text) if view.text else '<i>(empty)</i>'} "
        f"{steps}</p><p>State <b>{view.state}</b> ({state}); allowed next: {allowed}.</p>"
        f"<div class='scroll'><table class='learn mask'><tr><th>token</th>{head}</tr>"
        f"<tr><th>mask</th>{ticks}</tr><tr><th>logit</th>{logits}</tr>"
        f"<tr><th>p (masked)</th>{probs}</tr></table></div>{svg}"
    )


# --- 6. bytes ------------------------------------------------------------------------------


def bytes_html(pattern: str, tokens_text: str) -> str:
    dfa, error = _compile(pattern)
    if dfa is None:
        return error
    tokens, problem = parse_hex_tokens(tokens_text)
    if tokens is None:
        return f"<div class='error-box'><b>{esc(problem)}</b></div>"
    bdfa, steps = byte_walk(dfa, tokens)
    rows = "".join(
        f"<tr><td>{s.token + 1}</td><td>{s.value:02x}</td><td>{s.before}</td>"
        f"<td>{'✗' if s.after is None else s.after}</td>"
        f"<td>{byte_kind(s)}</td></tr>"
        for s in steps
    )
    text = b"".join(tokens).decode("utf-8", "backslashreplace")
    ascii_only = all(c.isascii() for c in dfa.mentioned) and not any(c.others for c in dfa.classes)
    note = (
        "<p class='why'>This pattern reads only ASCII: every character is one byte, so the byte "
        "DFA is the character DFA. Try <code>[一-龥]+</code>.</p>"
        if ascii_only
        else f"<p>States 0–{bdfa.num_char_states - 1} are the character DFA's; "
        f"{bdfa.num_states - bdfa.num_char_states} more sit inside multi-byte characters.</p>"
    )
    drawing = byte_drawing(bdfa)
    path = [steps[0].before] + [s.after for s in steps if s.after is not None] if steps else [0]
    svg = (
        _svg(
            drawing,
            pattern + " (bytes)",
            current=path[-1],
            visited=path,
            path_edges=list(zip(path, path[1:], strict=False)),
        )
        if drawing
        else f"<p class='why'>{bdfa.num_states} byte states: too many to draw.</p>"
    )
    return (
        f"{note}<p>The tokens spell {code(text)}.</p><table class='learn'><tr><th>token</th>"
        f"<th>byte</th><th>from</th><th>to</th><th></th></tr>{rows}</table>{svg}"
    )


# --- 7. naive against the index ------------------------------------------------------------


def naive_html(pattern: str, target: str) -> str:
    dfa, error = _compile(pattern)
    if dfa is None:
        return error
    vocab = Vocabulary.bundled()
    try:
        build, steps = naive_vs_index(pattern, vocab, target)
    except NaiveTooSlow as slow:  # a backtracking blow-up: said, not waited for
        return f"<div class='error-box'><b>{esc(str(slow))}</b></div>"
    rows = []
    for s in steps:
        first = ", ".join(code(vocab.token_text(t)) for t in s.indexed[:8])
        same = (
            "same set"
            if s.naive == s.indexed
            else (
                f"naive {len(s.naive):,} vs index {len(s.indexed):,}: the index also drops "
                "tokens that can never finish; the naive one cannot read half characters"
            )
        )
        took = code(vocab.token_text(s.token)) if s.token is not None else "—"
        rows.append(
            f"<tr><td>{code(s.prefix) if s.prefix else '<i>start</i>'}</td>"
            f"<td>{s.naive_seconds * 1000:.1f} ms</td><td>{s.index_seconds * 1e6:.0f} µs</td>"
            f"<td><b>{s.speedup:,.0f}×</b></td><td>{len(s.indexed):,}: {first}</td>"
            f"<td>{esc(same)}</td><td>{took}</td></tr>"
        )
    return (
        f"<p>{len(vocab):,} tokens. Index built in {build * 1000:.0f} ms (once per pattern); "
        "then each step is a lookup.</p><div class='scroll'><table class='learn'><tr><th>after</th>"
        "<th>naive (every token)</th><th>index</th><th>speed-up</th><th>allowed</th>"
        f"<th>compared</th><th>next token</th></tr>{''.join(rows)}</table></div>"
    )
