"""One base class for every error fsmviz raises, and the caret line shared by page and terminal."""

from __future__ import annotations

import pytest
from caches import clear_pattern_caches

import fsmviz
from fsmviz import FsmvizError, IndexTooLarge, RegexError, compile_regex
from fsmviz.drawing.render import RenderError
from fsmviz.html.text import error_html


def test_every_error_class_has_the_one_base() -> None:
    for name in ["RegexError", "IndexTooLarge", "ModelLoadError", "ForwardPassError"]:
        assert issubclass(getattr(fsmviz, name), FsmvizError), name
    assert issubclass(fsmviz.BundledModelMissing, FsmvizError)
    assert issubclass(RenderError, FsmvizError)
    assert issubclass(RegexError, ValueError)
    assert not issubclass(IndexTooLarge, RegexError)


def test_the_caret_line_is_one_helper_for_page_and_terminal() -> None:
    pattern = "日本a(?=b)"
    with pytest.raises(RegexError) as caught:
        compile_regex(pattern)
    assert caught.value.position == 3
    assert caught.value.pointer(pattern).split("\n") == [pattern, "     ^"]
    assert "     ^" in error_html(caught.value, pattern)


def test_a_pattern_too_large_to_index_is_told_apart_from_an_unusable_one(monkeypatch) -> None:
    """``IndexTooLarge`` was a ``RegexError``: the doctor said "cannot be used". (The walk
    budget is cut so that this pattern, which the faster index now closes in time, is over.)"""
    monkeypatch.setattr(fsmviz.tokens.index, "CLOSURE_SECONDS", 0.0)
    clear_pattern_caches()  # the index and the doctor's findings, not the vocabulary
    vocab = fsmviz.Vocabulary.bundled()
    findings = fsmviz.diagnose("[a-z ]{2000,}|\\x04\\x04", vocab)
    assert [f.kind for f in findings] == ["index_size"]
    assert "skipped" in findings[0].message


def test_bad_options_and_a_foreign_trace_are_fsmviz_errors_of_the_builtin_kind() -> None:
    """Bad input is an ``FsmvizError`` and still the built-in error a caller catches."""
    from fsmviz import Vocabulary, diagnose
    from fsmviz.errors import InputError
    from fsmviz.generation.trace import GenerationOptions, Step, Trace
    from fsmviz.params import ParameterError, UnknownOptionError, check_generation

    with pytest.raises(ParameterError, match="draft_tokens must be between 0") as caught:
        GenerationOptions(draft_tokens=99)
    assert isinstance(caught.value, FsmvizError) and isinstance(caught.value, ValueError)
    with pytest.raises(UnknownOptionError, match="bogus; the options are max_tokens") as unknown:
        check_generation(bogus=1)
    assert isinstance(unknown.value, FsmvizError) and isinstance(unknown.value, TypeError)
    vocab = Vocabulary.from_strings(["a", "b"], eos_token="<eos>")
    step = Step(0, "a", 0, 40, 1, 1.0, (), index=0, prob=1.0, token_bytes=b"a")
    foreign = Trace("a", (step,), "max_tokens", False)  # state 40: another pattern's run
    with pytest.raises(InputError, match="pass the trace of a run of this same pattern"):
        diagnose("a+", vocab, foreign)
