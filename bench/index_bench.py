"""Index construction: fsmviz against outlines-core, same process, same vocabulary bytes.

For every seed regex: the full index build from the pattern string (regex compile, byte
DFA, every reachable state), the same for outlines-core 0.2.14's Rust ``Index``, their
ratio, the number of states, the time until the initial state's allowed tokens exist once
the DFA does (what the first generated token waits for), and the naive method's cost of
one step (a partial match per token, ``regex.fullmatch(pattern, token, partial=True)``).
Vocabulary-level work (the trie here, the ``Vocabulary`` object there) is done once,
outside the timings, for both.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import regex
from outlines_core import Index as OutlinesIndex
from outlines_core import Vocabulary as OutlinesVocabulary

from bench.table import best_of, check, geomean, print_table
from fsmviz import Vocabulary, build_index, compile_regex
from fsmviz.index import _INDEXES
from fsmviz.trie import trie_of

CASES = Path(__file__).resolve().parents[1] / "tests" / "cases" / "seed_regexes.json"


def outlines_vocabulary(vocab: Vocabulary) -> OutlinesVocabulary:
    by_bytes: dict[bytes, list[int]] = {}
    for i, data in enumerate(vocab.all_token_bytes):
        if data and i != vocab.eos_token_id:
            by_bytes.setdefault(data, []).append(i)
    return OutlinesVocabulary(vocab.eos_token_id, by_bytes)


def full_build(pattern: str, vocab: Vocabulary) -> int:
    _INDEXES.clear()
    return len(build_index(pattern, vocab).states)


def first_allowed(pattern: str, vocab: Vocabulary) -> float:
    """Seconds from an existing DFA to the initial state's allowed tokens (best of 5)."""
    best = float("inf")
    for _ in range(5):
        dfa = compile_regex(pattern)
        _INDEXES.clear()
        start = time.perf_counter()
        build_index(dfa, vocab).allowed_tokens(0)
        best = min(best, time.perf_counter() - start)
    return best


def naive_step(pattern: str, vocab: Vocabulary) -> float:
    compiled = regex.compile(pattern, flags=regex.ASCII)
    start = time.perf_counter()
    for data in vocab.all_token_bytes:
        text = data.decode("utf-8", errors="ignore")
        compiled.fullmatch(text, partial=True)
    return time.perf_counter() - start


def main() -> list[tuple[str, ...]]:
    regexes = json.loads(CASES.read_text())["regexes"]
    vocab = Vocabulary.bundled()
    trie_of(vocab)
    theirs_vocab = outlines_vocabulary(vocab)
    rows, ratios, firsts = [], [], []
    for name, pattern in regexes.items():
        ours = best_of(lambda p=pattern: full_build(p, vocab))
        theirs = best_of(lambda p=pattern: OutlinesIndex(p, theirs_vocab))
        first = first_allowed(pattern, vocab)
        states = full_build(pattern, vocab)
        ratio = ours / theirs
        ratios.append(ratio)
        firsts.append(first)
        rows.append(
            (name, ours * 1e3, theirs * 1e3, ratio, states, first * 1e3,
             naive_step(pattern, vocab) * 1e3)
        )  # fmt: skip
    print_table(
        f"Index build over {len(vocab):,} tokens (ms; best of 5)",
        ["regex", "fsmviz", "outlines-core", "ratio", "states", "first mask", "naive step"],
        rows,
    )
    mean, worst, first = geomean(ratios), max(ratios), max(firsts)
    return [
        check("index build ratio, geometric mean", mean, "<= 0.5", mean <= 0.5),
        check("index build ratio, worst regex", worst, "<= 1.5", worst <= 1.5),
        check("first allowed set, worst", first * 1e3, "<= 5 ms", first <= 0.005, " ms"),
    ]


if __name__ == "__main__":
    print_table("Targets", ["target", "measured", "wanted", ""], main())
