"""The doctor's portability check: findings from ``fsmviz.peers.regex.compare_engines``.

One finding per engine: it refuses the pattern (warning), it differs from fsmviz on the
sampled walks (warning when the naive definition says the engine is wrong somewhere, info
when only fsmviz is), or it agrees (info). Engines not installed are named in one info
finding. Slow-ish (an engine's index over 49k tokens, up to a second or two), so the
doctor runs it only when asked: ``diagnose(..., engines=True)`` or ``diagnose --engines``.
"""

from __future__ import annotations

from fsmviz.diagnose.finding import Finding
from fsmviz.peers.regex import Difference, EngineReport, compare_engines
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["engine_findings", "report_findings"]

EXAMPLES = 3


def engine_findings(pattern: str, vocab: Vocabulary, **options: object) -> list[Finding]:
    """Findings for ``pattern`` from every engine (see ``compare_engines`` for options)."""
    return report_findings(compare_engines(pattern, vocab, **options))  # type: ignore[arg-type]


def report_findings(reports: list[EngineReport]) -> list[Finding]:
    found = [_finding(r) for r in reports if r.installed]
    missing = [r.engine for r in reports if not r.installed]
    if missing:
        found.append(
            Finding(
                "engine_missing",
                "info",
                f"Not compared (not installed): {', '.join(missing)}. "
                f"pip install {' '.join(missing)} to compare them too"
                + (" (xgrammar also needs apache-tvm-ffi)." if "xgrammar" in missing else "."),
            )
        )
    return found


def _finding(report: EngineReport) -> Finding:
    name = f"{report.engine} {report.version}"
    if not report.accepted:
        return Finding(
            "engine_refusal",
            "warning",
            f"{name} refuses this pattern: {report.error}. A server using it (vLLM, SGLang, "
            f"TGI) will reject the request.",
        )
    if not report.differences:
        return Finding(
            "engine_agrees",
            "info",
            f"{name} allows the same tokens as fsmviz at all {report.steps} steps of the "
            f"sampled walks.",
        )
    engine_wrong = [d for d in report.differences if d.right == "fsmviz"]
    fsmviz_wrong = [d for d in report.differences if d.right == report.engine]
    parts = []
    if engine_wrong:
        parts.append(f"where fsmviz is right by Python's definition: {_examples(engine_wrong)}")
    if fsmviz_wrong:
        parts.append(f"where {report.engine} is right: {_examples(fsmviz_wrong)}")
    unknown = len(report.differences) - len(engine_wrong) - len(fsmviz_wrong)
    if unknown:
        parts.append(f"{unknown} more that the naive check could not judge")
    return Finding(
        "engine_difference",
        "warning" if engine_wrong else "info",
        f"{name} allows different tokens than fsmviz on the sampled walks "
        f"({_count(len(report.differences), 'difference')} in {report.steps} steps), "
        + "; ".join(parts)
        + ". The same pattern will generate differently on a server using it.",
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _examples(differences: list[Difference]) -> str:
    """A few differences in words, whole characters first (a partial UTF-8 token like
    ``\\xd9`` says less than ``٣``)."""
    chosen = sorted(differences, key=lambda d: d.token.startswith("\\x"))[:EXAMPLES]
    said = [
        f"{'at the start' if d.step == 0 else f'after {d.prefix!r}'} it "
        f"{'allows' if d.engine_allows else 'forbids'} {d.token!r}"
        + (" (the first bytes of a character)" if d.token.startswith("\\x") else "")
        for d in chosen
    ]
    more = len(differences) - len(chosen)
    return ", ".join(said) + (f" (and {more} more)" if more else "")
