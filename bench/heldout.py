"""Held-out patterns: regexes nobody on this project wrote, a fresh sample each run.

The index and mask benchmarks measure the same thirty-odd patterns every time, and the
work of many sessions was tuned on them. This one draws its patterns at random from the
``pattern`` and ``patternProperties`` regexes of the public corpora in the tree: the 120
published schemas of ``bench/schemas_public`` (SchemaStore, check-jsonschema) and the
official JSON-Schema-Test-Suite (``../shared/corpora``, where the tree has it), 270-odd
distinct regexes such as ``^[a-zA-Z0-9_-]+$``, ``^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}``
or ``^.*\\.[yY][aA][mM][lL]$``. Each is written as the whole match its schema means
(``fsmviz.schema.patterns.whole_match``: a side not anchored may hold any string
characters, as outlines-core's converter now writes it), and kept when all three engines
compile it; the seed is printed (``HELDOUT_SEED=<n>`` draws the same sample again).

Per pattern, the median of 3 fresh strings (``bench.cold.Fresh``), interleaved across the
engines as in ``bench/index_bench.py``, wall time: *first* (``first_allowed_tokens``;
llguidance: a matcher and its first bitmask), *whole* (``build_index(...).states``;
xgrammar 0.2.8's ``compile_regex``, default 8 threads, cache off); and *b.med*, *b.max*:
the first ``bitmask(state)`` of each of the index's states (at most ``STATES`` of them, in
the order the closure lists them), CPU ms, each state's median over 3 fresh indexes
(``bench.mask_bench.first_bitmasks_ms``).
"""

from __future__ import annotations

import gc
import json
import os
import random
import statistics
from pathlib import Path

import fsmviz.automaton.dfa
import fsmviz.tokens.index
from bench.cold import Fresh
from bench.index_bench import Engines, bundled_tokenizer, medians_ms
from bench.mask_bench import first_bitmasks_ms
from bench.table import check, geomean, print_table
from fsmviz import Vocabulary, build_index
from fsmviz.schema.patterns import whole_match
from fsmviz.tokens.index import warm

HERE = Path(__file__).resolve().parent
CORPORA = (HERE / "schemas_public", HERE.parent.parent / "shared" / "corpora")
SAMPLE = 30
"""Patterns drawn per run."""
STATES = 40
"""States of an index whose first bitmask is timed, at most."""


def corpus_patterns(roots: tuple[Path, ...] = CORPORA) -> list[str]:
    """Every distinct ``pattern`` value and ``patternProperties`` key in the JSON files
    under ``roots``, as whole matches (sorted; those ``whole_match`` cannot place left
    out)."""
    found: set[str] = set()
    for root in roots:
        for path in sorted(root.rglob("*.json")):
            try:
                todo = [json.loads(path.read_text(encoding="utf-8"))]
            except (ValueError, UnicodeDecodeError):
                continue
            while todo:
                node = todo.pop()
                if isinstance(node, list):
                    todo += node
                elif isinstance(node, dict):
                    if isinstance(node.get("pattern"), str):
                        found.add(node["pattern"])
                    if isinstance(node.get("patternProperties"), dict):
                        found.update(node["patternProperties"])
                    todo += node.values()
    whole = (whole_match(pattern) for pattern in found)
    return sorted({w[1:-1] for w in whole if w is not None})  # outlines-core drops ^ $


def drawn(engines: Engines, seed: int, count: int = SAMPLE) -> list[str]:
    """``count`` patterns of the corpora in a random order from ``seed``, each kept when
    fsmviz, xgrammar and llguidance all compile it (the others are passed over, counted
    in the printed line, and not timed)."""
    pool = corpus_patterns()
    random.Random(seed).shuffle(pool)
    kept, passed = [], 0
    for pattern in pool:
        if len(kept) == count:
            break
        try:
            build_index(pattern, engines.vocab)
            engines.xgrammar_whole(pattern)
            engines.llguidance_matcher(pattern)
        except Exception:  # noqa: BLE001  (any engine's refusal: not a shared pattern)
            passed += 1
            continue
        kept.append(pattern)
    print(f"\nHeld-out sample: seed {seed}, {len(kept)} of {len(pool)} corpus patterns "
          f"({passed} passed over: an engine refused them)")  # fmt: skip
    return kept


def main() -> list[tuple[str, ...]]:
    fsmviz.automaton.dfa.MAX_SECONDS = 10.0  # measure a slow DFA rather than refuse it
    fsmviz.tokens.index.CLOSURE_SECONDS = 60.0
    vocab = Vocabulary.bundled()
    warm(vocab)  # per vocabulary, untimed (as the peers' tokenizers)
    engines = Engines(vocab, bundled_tokenizer())
    gc.freeze()
    seed = int(os.environ.get("HELDOUT_SEED") or random.SystemRandom().randrange(1 << 31))
    rows, whole_ratios, first_ratios, bitmasks = [], [], [], []
    for pattern in drawn(engines, seed):
        fresh = Fresh(pattern + "()" * 30)  # past the strings ``drawn`` and the masks used
        first = medians_ms(
            {"ours": engines.fsmviz_first, "llg": engines.llguidance_first}, fresh, repeat=3
        )
        whole = medians_ms(
            {"ours": engines.fsmviz_whole, "xgr": engines.xgrammar_whole}, fresh, repeat=3
        )
        b_med, b_max = first_bitmasks_ms(pattern, vocab, lambda i: i.states[:STATES], suffix=20)
        states = len(build_index(pattern, vocab).states)
        first_ratios.append(first["ours"].wall / first["llg"].wall)
        whole_ratios.append(whole["ours"].wall / whole["xgr"].wall)
        bitmasks.append((b_med, b_max))
        shown = pattern if len(pattern) <= 48 else pattern[:45] + "..."
        rows.append((
            shown, states, first["ours"].wall, first["llg"].wall, first_ratios[-1],
            whole["ours"].wall, whole["xgr"].wall, whole_ratios[-1], b_med, b_max,
        ))  # fmt: skip
    print_table(
        "Held-out corpus patterns (ms; median of 3 fresh strings; b.med/b.max: CPU ms)",
        ["pattern", "states", "first", "llg", "/llg", "whole", "xgr", "/xgr", "b.med", "b.max"],
        rows,
    )
    whole_mean, whole_worst = geomean(whole_ratios), max(whole_ratios)
    first_mean = geomean(first_ratios)
    b_median = statistics.median(m for m, _ in bitmasks)
    b_worst = max(m for _, m in bitmasks)
    return [
        check("held-out: whole index / xgrammar, geo. mean", whole_mean, "<= 1.0",
              whole_mean <= 1.0),
        check("held-out: whole index / xgrammar, worst", whole_worst, "<= 2.5",
              whole_worst <= 2.5),
        check("held-out: first allowed set / llguidance, geo. mean", first_mean, "<= 1.0",
              first_mean <= 1.0),
        check("held-out: first bitmask(state), median", b_median, "<= 0.1 ms", b_median <= 0.1,
              " ms"),
        check("held-out: first bitmask(state), worst state", b_worst, "<= 1 ms", b_worst <= 1,
              " ms"),
    ]  # fmt: skip


if __name__ == "__main__":
    print_table("Targets", ["target", "measured", "wanted", ""], main())
