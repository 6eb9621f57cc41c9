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
    real = dfa_module._Construction.of

    def counted(pattern: str):
        built.append(pattern)
        return real(pattern)

    with mock.patch.object(dfa_module._Construction, "of", side_effect=counted):
        h.on_pattern(models, PATTERN)  # typed: drawn and diagnosed
        opts = h.options(12, 0.0, 0, True, None)
        frames = list(h.run_frames(models, PATTERN, "An e-mail address:", opts, False))
        trace = next(f.trace for f in frames if f.trace is not None)
        h.on_distances(models, PATTERN, True, trace, 3)
        h.on_finding(models, 0, trace, None, False, PATTERN, False)
        h.downloads(trace)
    assert trace.steps, "the run wrote nothing"
    assert built.count(PATTERN) == 1, built
