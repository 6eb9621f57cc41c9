"""The token index beside three compiled engines: same process, same 49,152-token vocabulary.

* **fsmviz** — this project (numpy over a byte trie of the vocabulary).
* **outlines-core** 0.2.14 — Rust; ``Index`` walks every state up front.
* **xgrammar** 0.2.8 — C++; ``compile_regex`` precomputes every state's token mask. Timed
  twice: as configured by default (8 threads), which the targets use, and on one thread
  (xgrammar's advice for 2 cores), which is 3–8× faster on small patterns.
* **llguidance** 1.9.1 — Rust; lazy: the matcher computes a mask when asked.

Three moments, each the median of 5 runs over a **fresh pattern string**: the pattern with
``()`` appended 1, 2, 3... times (the same language under a string no cache has seen),
counted for each engine apart, as each engine's caches see only its own strings. The
*whole* moment counts on from 6 for every engine (``Fresh(pattern + "()" * 5)``): past
the strings fsmviz's *first* moment saw, and the same strings for fsmviz and xgrammar
(counted on from fsmviz's first moment alone, fsmviz's whole index was timed with 6 to 10
empty groups where xgrammar's compile had 1 to 5). The engines' runs of one
moment are interleaved (fsmviz, llguidance, outlines-core, fsmviz, ...): on this shared
machine a slow spell of a second or two would otherwise fall on one engine's five runs
and move a ratio by 1.5×; interleaved, it falls on all alike. xgrammar's cache is off. (No
cache reset for fsmviz: it could drop the vocabulary's trie, which is per-vocabulary set-up
done outside the timings, like the peers' tokenizer set-up.)

* *first*: pattern string -> the initial state's allowed set (fsmviz: ``first_allowed_tokens``,
  the states near the start by derivatives, no DFA built: what ``python -m fsmviz first``
  and a library user asking for the first mask wait for; the page's first token still waits
  for the DFA, which it draws);
* *whole*: pattern string -> every reachable state's allowed set (what xgrammar and
  outlines-core always do, and what fsmviz's safe end used to wait for);
* *step*: the mean time of one mask along a real tokenization of a matching text, the index
  already built and the path's rows computed (fsmviz: ``allowed_tokens``, token ids; the
  others fill their bitmask).

fsmviz's *whole* index is every reachable state's successor set (what the closure, the
safe end and the doctor need); a state's token list (its row) is made when first asked for.

Patterns: the seed regexes, a dozen everyday ones, four whose states read almost every byte
(``DOT_LED``: ``.*``-led ones and a CSV row), and the regex of a realistic 22-field JSON
schema (``bench/schema22.json``, made by outlines-core's ``build_regex_from_schema``).
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import llguidance
import llguidance.numpy
import numpy as np
import regex
import xgrammar
from outlines_core import Index as OutlinesIndex
from outlines_core import Vocabulary as OutlinesVocabulary
from outlines_core.json_schema import build_regex_from_schema

import fsmviz.automaton.dfa
import fsmviz.tokens.index
from bench.cold import Fresh
from bench.mask_patterns import PATTERNS
from bench.order_sample import ORDER
from bench.table import check, geomean, print_table
from fsmviz import Vocabulary, build_index, first_allowed_tokens
from fsmviz.tokens.fast.dawg import dawg_of

HERE = Path(__file__).resolve().parent
SEEDS = HERE.parent / "tests" / "cases" / "seed_regexes.json"
SCHEMA = HERE / "schema22.json"

SEED_SAMPLES = {
    "float": "3.14",
    "moby_choice": "moby dick",
    "url": "https://www.example.com",
    "email": "jerome.swannack@coolcompany.com",
    "protein": "10.3g",
    "three_letters_digit": "abc1",
    "pi_digits": "3.1415926535",
    "pink_floyd_json": '[\n  {\n    "title": "Money",\n    "year": 1973\n  }\n]',
    "date": "2023-07-14",
    "paper_float": "12.5",
    "counting_123": "123123123",
    "hot_cold_hotel": "hotel",
}

EVERYDAY = {  # name: (pattern, a text it matches)
    "phone": (r"\(\d{3}\) \d{3}-\d{4}", "(555) 123-4567"),
    "ipv4": (r"((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)", "192.168.0.1"),
    "hex_color": (r"#[0-9a-fA-F]{6}", "#1a2B3c"),
    "iso_datetime": (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", "2024-05-17T08:30:00Z"),
    "uuid": (
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "123e4567-e89b-12d3-a456-426614174000",
    ),
    "time_24h": (r"([01]\d|2[0-3]):[0-5]\d", "23:59"),
    "yes_no": (r"(yes|no|maybe)", "maybe"),
    "integer": (r"-?(0|[1-9]\d*)", "-1234"),
    "semver": (r"\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?", "1.12.3-beta.2"),
    "slug": (r"[a-z0-9]+(-[a-z0-9]+)*", "fsm-guided-generation-101"),
    "price": (r"\$\d{1,3}(,\d{3})*\.\d{2}", "$1,234,567.89"),
    "words": (r"([A-Za-z]{1,12} ){2,10}[A-Za-z]{1,12}\.", "The keeper lit the lamp at dusk."),
    "name_age": (r'\{"name": "[A-Za-z ]{1,30}", "age": \d{1,3}\}', '{"name": "Ada", "age": 36}'),
}


DOT_LED = ("dot_a", "dot_keyword", "dot_digits", "csv_row")
"""Patterns of ``bench/mask_patterns.py`` whose every state reads almost every byte
(``.*``-led, a field of ``[^,\\n]``): the whole index's hardest case beside xgrammar."""


@dataclass(frozen=True)
class Medians:
    """One engine's median time over fresh strings, in milliseconds: ``wall``, and ``cpu``,
    the CPU time this process spent (what a busy machine does not inflate)."""

    wall: float
    cpu: float


def medians_ms(
    fns: dict[str, Callable[[str], object]], fresh: Fresh, repeat: int = 5
) -> dict[str, Medians]:
    """The median time of each of ``fns`` on fresh strings (made outside the timing; new
    to each engine, named by its key), their runs interleaved: ``a, b, c, a, b, c...``."""
    walls: dict[str, list[float]] = {name: [] for name in fns}
    cpus: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            string = fresh(name)
            start, start_cpu = time.perf_counter(), time.process_time()
            fn(string)
            cpus[name].append(time.process_time() - start_cpu)
            walls[name].append(time.perf_counter() - start)
    return {
        name: Medians(statistics.median(walls[name]) * 1e3, statistics.median(cpus[name]) * 1e3)
        for name in fns
    }


def benchmark_patterns() -> dict[str, tuple[str, str]]:
    """name -> (pattern, a matching text), in table order."""
    seeds = json.loads(SEEDS.read_text())["regexes"]
    cases = {name: (pattern, SEED_SAMPLES[name]) for name, pattern in seeds.items()}
    cases.update(EVERYDAY)
    cases.update({name: PATTERNS[name] for name in DOT_LED})
    schema_regex = build_regex_from_schema(SCHEMA.read_text())
    cases["schema_22_fields"] = (schema_regex, json.dumps(ORDER, separators=(",", ":")))
    for name, (pattern, text) in cases.items():
        if not regex.fullmatch(pattern, text):
            raise ValueError(f"bench sample for {name!r} does not match its pattern")
    return cases


class Engines:
    """The three peers, set up once per vocabulary (outside every timing)."""

    def __init__(self, vocab: Vocabulary, tokenizer) -> None:
        self.vocab = vocab
        tokens = list(vocab.all_token_bytes)
        by_bytes: dict[bytes, list[int]] = {}
        for i, data in enumerate(tokens):
            if data and i != vocab.eos_token_id:
                by_bytes.setdefault(data, []).append(i)
        self.outlines_vocab = OutlinesVocabulary(vocab.eos_token_id, by_bytes)
        info = xgrammar.TokenizerInfo(
            tokens, xgrammar.VocabType.RAW, vocab_size=len(tokens),
            stop_token_ids=[vocab.eos_token_id],
        )  # fmt: skip
        self.xgrammar = xgrammar.GrammarCompiler(info, cache_enabled=False)
        # Its default (8 threads) pays a thread hand-off that costs more than a small
        # pattern's whole compile on a 2-core machine (integer: ~0.8 ms against ~0.1 ms on
        # one thread, which xgrammar's docs advise here: half the virtual cores).
        self.xgrammar_one = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)
        wrapped = llguidance.TokenizerWrapper(_Wrapped(vocab, tokenizer))
        self.llguidance = llguidance.LLTokenizer(wrapped)

    # pattern -> the initial state's allowed set
    def fsmviz_first(self, pattern: str) -> np.ndarray:
        return first_allowed_tokens(pattern, self.vocab)

    def llguidance_first(self, pattern: str) -> np.ndarray:
        matcher = self.llguidance_matcher(pattern)
        mask = llguidance.numpy.allocate_token_bitmask(1, len(self.vocab))
        llguidance.numpy.fill_next_token_bitmask(matcher, mask)
        return mask

    def outlines_first(self, pattern: str) -> object:
        index = OutlinesIndex(pattern, self.outlines_vocab)
        return index.get_allowed_tokens(index.get_initial_state())

    # pattern -> every state's allowed set
    def fsmviz_whole(self, pattern: str) -> int:
        return len(build_index(pattern, self.vocab).states)

    def xgrammar_whole(self, pattern: str) -> object:
        return self.xgrammar.compile_regex(pattern)

    def xgrammar_one_whole(self, pattern: str) -> object:
        return self.xgrammar_one.compile_regex(pattern)

    def outlines_whole(self, pattern: str) -> object:
        return OutlinesIndex(pattern, self.outlines_vocab)

    def llguidance_matcher(self, pattern: str) -> llguidance.LLMatcher:
        grammar = llguidance.LLMatcher.grammar_from_regex(pattern)
        matcher = llguidance.LLMatcher(self.llguidance, grammar)
        if matcher.is_error():
            raise ValueError(matcher.get_error())
        return matcher

    # one mask along a tokenization, index built
    def step_us(self, pattern: str, ids: list[int]) -> tuple[float, float, float]:
        index = build_index(pattern, self.vocab)
        state = index.initial_state
        for token in ids:  # rows along the path computed (and kept) outside the timing
            state = index.next_state(state, token)
        state, spent = index.initial_state, 0.0
        for token in ids:
            start = time.perf_counter()
            index.allowed_tokens(state)
            spent += time.perf_counter() - start
            state = index.next_state(state, token)
        ours = spent / len(ids) * 1e6

        matcher = xgrammar.GrammarMatcher(self.xgrammar.compile_regex(pattern))
        mask, spent = xgrammar.allocate_token_bitmask(1, len(self.vocab)), 0.0
        for token in ids:
            start = time.perf_counter()
            matcher.fill_next_token_bitmask(mask)
            spent += time.perf_counter() - start
            if not matcher.accept_token(token):
                raise ValueError(f"xgrammar refused token {token} of {pattern!r}")
        xg = spent / len(ids) * 1e6

        matcher = self.llguidance_matcher(pattern)
        mask, spent = llguidance.numpy.allocate_token_bitmask(1, len(self.vocab)), 0.0
        for token in ids:
            start = time.perf_counter()
            llguidance.numpy.fill_next_token_bitmask(matcher, mask)
            spent += time.perf_counter() - start
            if not matcher.consume_token(token):
                raise ValueError(f"llguidance refused token {token} of {pattern!r}")
        ll = spent / len(ids) * 1e6
        return ours, xg, ll


class _Wrapped:
    """What ``llguidance.TokenizerWrapper`` reads: token bytes, EOS, and an encoder."""

    def __init__(self, vocab: Vocabulary, tokenizer) -> None:
        self.eos_token_id = vocab.eos_token_id
        self.bos_token_id = None
        self.tokens = list(vocab.all_token_bytes)
        self.special_token_ids = sorted(vocab.special_tokens)
        self._tokenizer = tokenizer

    def __call__(self, text: str) -> list[int]:
        return self._tokenizer.encode(text, add_special_tokens=False)


def bundled_tokenizer():
    from transformers import AutoTokenizer

    from fsmviz.bundled import bundled_tokenizer_dir

    return AutoTokenizer.from_pretrained(str(bundled_tokenizer_dir()))


def main() -> list[tuple[str, ...]]:
    # The app refuses a DFA that takes over 1 s to build; on a loaded machine the 22-field
    # schema can come close, and a benchmark should measure it rather than stop.
    fsmviz.automaton.dfa.MAX_SECONDS = 10.0
    fsmviz.tokens.index.CLOSURE_SECONDS = 60.0  # likewise the whole index's budget
    vocab = Vocabulary.bundled()
    tokenizer = bundled_tokenizer()
    dawg_of(vocab)  # per vocabulary (its trie too), like the peers' tokenizer set-up: untimed
    engines = Engines(vocab, tokenizer)
    gc.freeze()  # what set-up made is never garbage, as the app's server says after start-up
    rows, whole_ratios, one_ratios, first_ratios, firsts = [], [], [], [], []
    schema = {}
    for name, (pattern, text) in benchmark_patterns().items():
        ids = tokenizer.encode(text, add_special_tokens=False)
        fresh = Fresh(pattern)
        firsts_ms = medians_ms(
            {"ours": engines.fsmviz_first, "llg": engines.llguidance_first,
             "oc": engines.outlines_first}, fresh,
        )  # fmt: skip
        wholes_ms = medians_ms(
            {"ours": engines.fsmviz_whole, "xgr": engines.xgrammar_whole,
             "xgr1": engines.xgrammar_one_whole, "oc": engines.outlines_whole},
            Fresh(pattern + "()" * 5),
        )  # fmt: skip
        first, first_ll, first_oc = (firsts_ms[k].wall for k in ("ours", "llg", "oc"))
        whole, whole_xg, whole_xg1, whole_oc = (
            wholes_ms[k].wall for k in ("ours", "xgr", "xgr1", "oc")
        )
        step, step_xg, step_ll = engines.step_us(pattern, ids)
        states = len(build_index(pattern, vocab).states)
        whole_ratios.append(whole / whole_xg)
        one_ratios.append(whole / whole_xg1)
        first_ratios.append(first / first_ll)
        firsts.append(first)
        if name == "schema_22_fields":
            schema = {"first": first, "whole": whole}
        rows.append((
            name, states, first, first_ll, first_oc, first / first_ll,
            whole, whole_xg, whole_oc, whole / whole_xg, whole_xg1, whole / whole_xg1,
            step, step_xg, step_ll,
        ))  # fmt: skip
    print_table(
        f"Token index over {len(vocab):,} tokens, fresh pattern strings (median of 5; "
        "first/whole in ms, step in µs)",
        ["pattern", "states", "first", "llg", "oc", "/llg", "whole", "xgr", "oc", "/xgr",
         "xgr1", "/xgr1", "step", "xgr", "llg"],
        rows,
    )  # fmt: skip
    print("  llg = llguidance 1.9.1, xgr = xgrammar 0.2.8 (default: 8 threads), "
          "xgr1 = the same on 1 thread, oc = outlines-core 0.2.14")  # fmt: skip
    whole_mean, whole_worst = geomean(whole_ratios), max(whole_ratios)
    first_mean, first_worst = geomean(first_ratios), max(firsts)
    return [
        check("whole index / xgrammar, geometric mean", whole_mean, "<= 1.0", whole_mean <= 1.0),
        check("whole index / xgrammar, worst", whole_worst, "<= 2.5", whole_worst <= 2.5),
        ("whole index / xgrammar on 1 thread, geo. mean", f"{geomean(one_ratios):.3g}",
         "(shown)", ""),
        check("first allowed set / llguidance, geo. mean", first_mean, "<= 1.0", first_mean <= 1.0),
        check("first allowed set, slowest", first_worst, "<= 5 ms", first_worst <= 5, " ms"),
        check("22-field schema, first allowed set", schema["first"], "<= 50 ms",
              schema["first"] <= 50, " ms"),
        check("22-field schema, whole index", schema["whole"], "<= 250 ms",
              schema["whole"] <= 250, " ms"),
    ]  # fmt: skip


if __name__ == "__main__":
    print_table("Targets", ["target", "measured", "wanted", ""], main())
