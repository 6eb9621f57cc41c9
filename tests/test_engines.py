"""The portability check against the real engines (outlines-core, llguidance, xgrammar) and
the real 49k vocabulary, on patterns where they are known to differ from fsmviz."""

from __future__ import annotations

import pytest

import fsmviz
from fsmviz.diagnose.engines import report_findings
from fsmviz.peers.regex import EngineReport, compare_engines, naive_allows


@pytest.fixture
def vocab() -> fsmviz.Vocabulary:
    return fsmviz.Vocabulary.bundled()


def _by_engine(reports: list[EngineReport]) -> dict[str, EngineReport]:
    return {r.engine: r for r in reports}


def test_outlines_core_is_leftmost_first_on_a_or_ab(vocab) -> None:
    reports = _by_engine(compare_engines("a|ab", vocab))
    outlines = reports["outlines-core"]
    assert outlines.accepted
    forbidden = {(d.prefix, d.token) for d in outlines.differences if not d.engine_allows}
    assert ("a", "b") in forbidden  # after "a" it has already matched and stops
    assert all(d.right == "fsmviz" for d in outlines.differences)
    assert reports["xgrammar"].accepted and not reports["xgrammar"].differences


def test_unicode_digits_in_outlines_core_and_llguidance(vocab) -> None:
    reports = _by_engine(compare_engines("\\d+", vocab))
    for engine in ("outlines-core", "llguidance"):
        extra = [d for d in reports[engine].differences if d.engine_allows]
        assert extra and all(d.right == "fsmviz" for d in extra), engine
    assert not reports["xgrammar"].differences  # ASCII \d, like fsmviz


def test_xgrammar_refuses_case_insensitive_flags(vocab) -> None:
    xgrammar = _by_engine(compare_engines("(?i)yes|no", vocab))["xgrammar"]
    assert not xgrammar.accepted and "not supported" in (xgrammar.error or "")
    finding = report_findings([xgrammar])[0]
    assert finding.kind == "engine_refusal" and "xgrammar 0.2.8 refuses" in finding.message


def test_engines_that_agree_say_so(vocab) -> None:
    reports = compare_engines("[0-9]{4}-[0-9]{2}", vocab)
    assert [r.engine for r in reports] == ["outlines-core", "llguidance", "xgrammar"]
    assert all(r.accepted and not r.differences and r.steps > 0 for r in reports)
    assert {f.kind for f in report_findings(reports)} == {"engine_agrees"}


def test_an_engine_not_installed_is_named_not_failed(vocab) -> None:
    reports = compare_engines("a+", vocab, engines=["outlines-core", "no-such-engine"])
    missing = _by_engine(reports)["no-such-engine"]
    assert not missing.installed and missing.error == "not installed"
    kinds = [f.kind for f in report_findings(reports)]
    assert kinds == ["engine_agrees", "engine_missing"]


def test_diagnose_reports_the_engines_when_asked(vocab) -> None:
    kinds = {f.kind for f in fsmviz.diagnose("a|ab", vocab, engines=True)}
    assert "engine_difference" in kinds
    assert not {f.kind for f in fsmviz.diagnose("a|ab", vocab)} & {"engine_difference"}


def test_the_naive_judge() -> None:
    assert naive_allows("a|ab", b"a", b"b") is True
    assert naive_allows("\\d", b"", "٣".encode()) is False  # fsmviz's ASCII \d
    assert naive_allows("日", b"", "日".encode()[:1]) is True  # the start of a character
    assert naive_allows("[a-z]", b"", "日".encode()[:1]) is False
    assert naive_allows("^ab$", b"ab", None) is True
