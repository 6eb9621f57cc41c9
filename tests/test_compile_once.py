"""Compile once, hand it down: one page action builds the pattern's DFA once.

A visitor types a pattern, presses Generate, steps through the run (in the browser: no
server call), switches the distances on, clicks a finding and downloads the files. Each
of those asks for the pattern's DFA (the drawing, the index, the doctor, the run, the
downloads); ``compile_regex`` keeps the last DFAs, so the construction itself runs once.
Before the cache it ran 13 times over the same action. The doctor's rewrites (other
patterns it checks before it offers them) are constructions of other patterns and are
not counted.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from unittest import mock

import pytest

from fsmviz.automaton import dfa as dfa_module

pytestmark = pytest.mark.slow

PATTERN = r"[a-z]+@[a-z]+\.(com|org)"


def test_one_page_action_builds_the_pattern_s_dfa_once(tmp_path, monkeypatch) -> None:
    from fsmviz.app import handlers as h
    from fsmviz.generation.models import BackgroundModel

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    models = BackgroundModel(wait=True)
    dfa_module._COMPILED.clear()  # this pattern's DFA only, not every cache
    built: list[str] = []
    real = dfa_module._compile  # a DFA built whole (a chain's too: ``_chain``)

    def counted(pattern: str):
        built.append(pattern)
        return real(pattern)

    with mock.patch.object(dfa_module, "_compile", side_effect=counted):
        h.on_pattern(models, h.Drawn(PATTERN))  # typed: drawn and diagnosed
        opts = h.options(12, 0.0, 0, True, None)
        frames = list(
            h.run_frames(
                models, h.RunInputs(PATTERN, "An e-mail address:", 12, 0.0, 0, True, None), opts
            )
        )
        trace = next(f.trace for f in frames if f.trace is not None)
        h.on_distances(models, trace, 3, h.Drawn(PATTERN, distances=True))
        h.on_finding(models, 0, trace, None, False, h.Drawn(PATTERN))
        h.downloads(trace)
    assert trace.steps, "the run wrote nothing"
    assert built.count(PATTERN) == 1, built


# --- issue 44: the constraint built once at the top of each action and handed down --------

EMAIL = r"[a-z]+@[a-z]+\.(com|org)"


class _Loaded:
    """A ``BackgroundModel`` already loaded: the ``tiny`` model."""

    def __init__(self, model) -> None:
        self.model = model

    def get(self, timeout=None):
        return self.model

    def vocabulary(self):
        return self.model.vocab


def _entry_calls(cache, name: str, calls: list[tuple[str, object]]):
    """``cache.get_or_build`` wrapped so each call (the entry point ``compile_regex`` or
    ``build_index``, a repeat served from the cache included) is written down with its key."""
    real = cache.get_or_build

    def counted(key, build):
        calls.append((name, key if isinstance(key, str) else key[0]))
        return real(key, build)

    return mock.patch.object(cache, "get_or_build", side_effect=counted)


def test_a_generate_compiles_and_indexes_its_pattern_once(tiny, tmp_path, monkeypatch) -> None:
    """Generate (drawing, doctor, run, doctor on the trace, every step's allowed set): one
    ``compile_regex`` and one ``build_index`` of the pattern, asked once and handed down
    (before issue 44: 2 and 4 calls, the repeats caught by the caches keyed by text)."""
    from fsmviz.app import handlers as h
    from fsmviz.tokens import index as index_module

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    dfa_module._COMPILED.clear()
    index_module._INDEXES.clear()
    calls: list[tuple[str, object]] = []
    with (
        _entry_calls(dfa_module._COMPILED, "compile_regex", calls),
        _entry_calls(index_module._INDEXES, "build_index", calls),
    ):
        opts = h.options(4, 0.0, 0, True, None)
        frames = list(
            h.run_frames(
                _Loaded(tiny), h.RunInputs(EMAIL, "An e-mail address:", 4, 0.0, 0, True, None), opts
            )
        )
    assert any(f.trace is not None and f.trace.steps for f in frames), "the run wrote nothing"
    ours = [name for name, key in calls if key == EMAIL]
    assert ours.count("compile_regex") == 1, calls
    assert ours.count("build_index") == 1, calls


def test_a_grammar_run_compiles_its_grammar_once(tiny) -> None:
    """The Grammar tab's run (its view, the doctor, the run, the finish): one grammar
    compile, handed down as the view's ``Grammar``; the run's ``GrammarCursor`` is a
    ``fsmviz.Constraint`` over it."""
    from fsmviz import Constraint
    from fsmviz.app.grammar_live import grammar_frames
    from fsmviz.app.handlers import options
    from fsmviz.grammar import compile as grammar_compile
    from fsmviz.grammar.run import GrammarRun
    from fsmviz.html import grammar as grammar_views

    text = 'root ::= "[" item ("," item)* "]"\nitem ::= [a-z]+'
    grammar_compile._CACHE.clear()
    grammar_views._views.clear()
    calls: list[tuple[str, object]] = []
    with _entry_calls(grammar_compile._CACHE, "compile_grammar", calls):
        view = grammar_views.grammar_view(text, "gbnf")
        found = grammar_views.grammar_findings(view, tiny.vocab, 4)
        frames = list(grammar_frames(tiny, view, "A list:", options(4, 0.0, 0, True, 0), found))
    assert frames and calls == [("compile_grammar", text)], calls
    run = GrammarRun(tiny, view.grammar, options(4, 0.0, 0, True, 0))
    assert isinstance(run.place, Constraint) and run.place.text == view.grammar.text


def test_a_schema_run_compiles_its_schema_once(tiny) -> None:
    """A grammar-path schema run (its frames, the doctor, the finish with every step's
    allowed set): one ``compile_schema``. (The structure drawn beside it is a grammar of
    its own, the drawing's, not the constraint.)"""
    from fsmviz.app import schema_run
    from fsmviz.app.handlers import options
    from fsmviz.html.schema import SchemaChoice
    from fsmviz.schema import convert

    choice = SchemaChoice(
        '{"type": "object", "properties": {"a": {"$ref": "#"}}}', "none", "", "grammar", "x"
    )
    schema_run._compiled.clear()
    real = convert.compile_schema
    built = mock.Mock(wraps=real)
    # every module that imported the function holds its own name for it: count them all
    holders = [m for m in list(sys.modules.values()) if getattr(m, "compile_schema", None) is real]
    with ExitStack() as patches:
        for module in holders:
            patches.enter_context(mock.patch.object(module, "compile_schema", built))
        frames = list(schema_run.schema_frames(tiny, choice, "JSON:", options(4, 0.0, 0, True, 0)))
    assert schema_run in holders and convert in holders
    assert frames and built.call_count == 1, built.call_args_list
