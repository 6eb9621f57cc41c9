"""A run's files: the trace as JSON and CSV, its DFA as DOT and SVG, a grammar run's grammar
as typed and its rules drawing, by file name, ready to be written anywhere.

The page offers them as downloads (``fsmviz.app``: written to a scratch folder it serves
for a while); the command line or a notebook writes them with ``write_files``. Pure but
for ``write_files``; no gradio.

>>> from fsmviz.generation.trace import Trace
>>> sorted(trace_files(Trace("7", (), "accepted", True, pattern="[0-9]+"), draw_limit=0))
['dfa.dot', 'trace.csv', 'trace.json']
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from fsmviz.automaton.dfa import compile_regex
from fsmviz.automaton.syntax import RegexError
from fsmviz.drawing.render import RenderError, to_dot, to_svg
from fsmviz.generation.trace import Trace

__all__ = ["grammar_files", "trace_files", "write_files"]

DRAW_LIMIT = 300
"""A DFA with more states gets its DOT only: an SVG that large is unreadable (the page's
``live.DRAW_LIMIT``)."""


def trace_files(trace: Trace, draw_limit: int = DRAW_LIMIT) -> dict[str, str]:
    """The trace as JSON and CSV; with a regex, its DFA as DOT always and as SVG when it
    has at most ``draw_limit`` states and graphviz's ``dot`` is there. A pattern that no
    longer compiles leaves the trace's own files, still worth having."""
    files = {"trace.json": trace.to_json(indent=1), "trace.csv": trace.to_csv()}
    if trace.pattern:
        try:
            dfa = compile_regex(trace.pattern)
            files["dfa.dot"] = to_dot(dfa, title=trace.pattern)
            if dfa.num_states <= draw_limit:
                files["dfa.svg"] = to_svg(dfa, title=trace.pattern)
        except (RegexError, RenderError, RuntimeError):
            pass
    return files


def grammar_files(trace: Trace, text: str, format: str, rules_svg: str = "") -> dict[str, str]:
    """A grammar run's trace as JSON and CSV, the grammar as typed (``grammar.lark`` or
    ``grammar.gbnf`` by its ``format``) and, when drawn, its rules as SVG.

    >>> sorted(grammar_files(Trace("a", (), "accepted", True), 'root ::= "a"', "gbnf"))
    ['grammar.gbnf', 'trace.csv', 'trace.json']
    """
    suffix = "lark" if format == "lark" else "gbnf"
    files = {
        "trace.json": trace.to_json(indent=1),
        "trace.csv": trace.to_csv(),
        f"grammar.{suffix}": text,
    }
    if rules_svg:
        files["rules.svg"] = rules_svg
    return files


def write_files(files: Mapping[str, str], folder: Path) -> list[Path]:
    """Write each file (UTF-8) into ``folder`` (made if missing); their paths, in order."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [folder / name for name in files]
