"""The mask of one step, beside xgrammar's and llguidance's, along real tokenizations.

For each pattern of ``bench/mask_patterns.py`` (``key="value"`` lists, ``.*``-led patterns,
counted repeats inside counted repeats, JSON Schemas as people write them), a matching
text is tokenized by the bundled tokenizer and walked token by token. At each step:

* **fsmviz** ``index.bitmask(state)``: the packed mask (int32 words), kept per state;
  *new*: the same the first time a state is met, from a fresh pattern string (a wide
  state's words from its chain, ``fsmviz.tokens.fast.chains``, no row made; a narrow
  one's small row packed; the rest walked as rows and packed). Its ratio to xgrammar's
  step weighs lazy work against a cache: xgrammar makes its per-state masks while it
  compiles (untimed here), so its step is a fill (2-10 µs but for counted repeats), where
  fsmviz's first visit of a state makes the mask (CPU, session 32, load ~3-4: ~0.03-0.1 ms
  a schema's key or digit, ~0.3-0.6 a string's loop or a CSV field, ~0.5-0.75 the word
  after a capital of counted_words, SQL's column name): ~3-5 µs a step would be needed
  lazily, or the masks made with the whole index (that row pays). So its target row
  weighs lazy against lazy: llguidance also makes a step's mask when the step comes (its
  lexer states' token sets kept as met), and the *new/llg* column is the pair that does
  the same work. Against xgrammar the fair unit is a new pattern's whole run: *run* (ms)
  is the pattern text to every step's mask along the path, fsmviz's ``build_index`` and
  first ``bitmask`` of each state met, beside xgrammar's compile and its fills (*x.run*),
  the median of 3 fresh strings, wall time (xgrammar compiles on 8 threads);
* **xgrammar** 0.2.8 ``GrammarMatcher.fill_next_token_bitmask`` (its grammar compiled);
* **llguidance** 1.9.1 ``fill_next_token_bitmask`` (``compute_bitmask`` into numpy);
* *b.med*, *b.max*: the first ``bitmask(state)`` of each distinct state on the path (CPU
  ms, each state's median over 3 fresh indexes): a string's loop takes its UTF-8 tokens as words
  (``closedsets.utf8_loop``), ``.*``-led states are closed sets allowing the same tokens
  (``closedsets.closed_words``), the rest as above;
* *apply*: fsmviz's ``apply_bitmask`` on a CPU torch row of the model's 49,152 logits
  (unpack the words, one ``masked_fill``), beside xgrammar's
  ``apply_token_bitmask_inplace`` (CPU).

Each per-step figure is the mean over the path, the best of 3 walks (µs). *first*: the
pattern string -> the initial mask (fsmviz ``first_allowed_tokens``, by derivatives;
llguidance: a matcher and its first bitmask), the median of 5 fresh strings (ms), as wall
time and as this process's CPU time (*cpu*: what waiting for the machine does not inflate;
on a quiet one the two agree). The five are taken in five rounds over every pattern: this
shared 2-core machine has slow spells of seconds (the same first mask 3.4 ms, then 5.7 ms
in the next process), and five runs in a row could all fall in one.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Iterable
from functools import partial

import llguidance
import llguidance.numpy
import numpy as np
import torch
import xgrammar

import fsmviz.automaton.dfa
from bench.cold import Fresh
from bench.index_bench import Engines, Medians, bundled_tokenizer, medians_ms
from bench.mask_patterns import mask_patterns
from bench.table import check, geomean, print_table, walk_us
from fsmviz import Vocabulary, build_index
from fsmviz.generation.masks import apply_bitmask
from fsmviz.tokens.fast.packwalk import packed_vocab
from fsmviz.tokens.index import TokenIndex, warm
from fsmviz.tokens.trie import trie_of

WALKS = 3


def fsmviz_step_us(pattern: str, vocab: Vocabulary, ids: list[int]) -> tuple[float, float]:
    """(kept, new): µs per step of ``bitmask`` once every state on the path has its mask,
    and the first time (a fresh pattern string: rows walked and packed as met)."""
    index = build_index(pattern + "()" * 20, vocab)  # a string the first masks never saw
    state = [index.initial_state]

    def advance(token: int) -> None:
        state[0] = index.next_state(state[0], token)

    def step() -> None:
        index.bitmask(state[0])

    new = walk_us(step, ids, advance)
    best = float("inf")
    for _ in range(WALKS):
        state[0] = index.initial_state
        best = min(best, walk_us(step, ids, advance))
    return best, new


def first_bitmasks_ms(
    pattern: str,
    vocab: Vocabulary,
    states_of: Callable[[TokenIndex], Iterable[int]],
    suffix: int,
    rounds: int = 3,
) -> tuple[float, float]:
    """(median, max) ms of ``bitmask(state)`` the first time each of ``states_of(index)``
    is asked, on a fresh index (``pattern`` and ``suffix`` or more ``()``: a string no
    cache has seen): what a caller that masks through ``bitmask`` pays at a state it has
    not met. The max includes what the index makes once, at its first state that needs it
    (a chain's main classes, a row walk's class trie). The vocabulary's kept frontiers
    (``PackedVocab.forget``) are dropped first: the other columns walked the same pattern.
    CPU time of this thread: on the shared machine a wall clock measures the neighbours.
    Each state's time is its median over ``rounds`` fresh indexes: the maximum of single
    samples measured the machine (one state of ``schema_product`` took 0.32 ms in one run,
    1.68 ms in the next)."""
    times: dict[int, list[float]] = {}
    for round_ in range(rounds):
        packed_vocab(trie_of(vocab), len(vocab)).forget()
        index = build_index(pattern + "()" * (suffix + round_), vocab)
        for state in states_of(index):
            start = time.thread_time()
            index.bitmask(state)
            times.setdefault(state, []).append((time.thread_time() - start) * 1e3)
    per_state = [statistics.median(spent) for spent in times.values()]
    return statistics.median(per_state), max(per_state)


def path_states(index: TokenIndex, ids: list[int]) -> list[int]:
    """The distinct states a tokenization passes through, in the order it meets them
    (``next_state`` reads the token's bytes: no row is made)."""
    state, met = index.initial_state, {}
    for token in ids:
        met.setdefault(state)
        state = index.next_state(state, token)
    return list(met)


def run_ms(engines: Engines, fresh: Fresh, ids: list[int], rounds: int = 3) -> tuple[float, float]:
    """(fsmviz, xgrammar): median wall ms of a new pattern's run, from its text to the
    mask of every step along ``ids``: what a server pays for a request whose pattern it
    has not compiled yet (each engine's kept work of other strings set aside: fsmviz's
    kept frontiers dropped, xgrammar's compiler cache off)."""
    vocab = engines.vocab

    def ours(pattern: str) -> None:
        packed_vocab(trie_of(vocab), len(vocab)).forget()  # a dict cleared: ~1 µs
        index = build_index(pattern, vocab)
        state = index.initial_state
        for token in ids:
            index.bitmask(state)
            state = index.next_state(state, token)

    def theirs(pattern: str) -> None:
        matcher = xgrammar.GrammarMatcher(engines.xgrammar.compile_regex(pattern))
        mask = xgrammar.allocate_token_bitmask(1, len(vocab))
        for token in ids:
            matcher.fill_next_token_bitmask(mask)
            matcher.accept_token(token)

    got = medians_ms({"ours": ours, "xgr": theirs}, fresh, repeat=rounds)
    return got["ours"].wall, got["xgr"].wall


def xgrammar_step_us(engines: Engines, pattern: str, ids: list[int]) -> float:
    compiled = engines.xgrammar.compile_regex(pattern)
    best = float("inf")
    for _ in range(WALKS):
        matcher = xgrammar.GrammarMatcher(compiled)
        mask = xgrammar.allocate_token_bitmask(1, len(engines.vocab))

        def advance(token: int, matcher=matcher) -> None:
            if not matcher.accept_token(token):
                raise ValueError(f"xgrammar refused token {token} of {pattern!r}")

        def step(m=matcher, b=mask) -> None:
            m.fill_next_token_bitmask(b)

        best = min(best, walk_us(step, ids, advance))
    return best


def llguidance_step_us(engines: Engines, pattern: str, ids: list[int]) -> float:
    best = float("inf")
    for _ in range(WALKS):
        matcher = engines.llguidance_matcher(pattern)
        mask = llguidance.numpy.allocate_token_bitmask(1, len(engines.vocab))

        def advance(token: int, matcher=matcher) -> None:
            if not matcher.consume_token(token):
                raise ValueError(f"llguidance refused token {token} of {pattern!r}")

        def step(m=matcher, b=mask) -> None:
            llguidance.numpy.fill_next_token_bitmask(m, b)

        best = min(best, walk_us(step, ids, advance))
    return best


def apply_us(vocab: Vocabulary, pattern: str) -> tuple[float, float]:
    """µs to mask one CPU row of logits with a packed mask: fsmviz's ``apply_bitmask``
    (a new tensor) and xgrammar's ``apply_token_bitmask_inplace``."""
    index = build_index(pattern, vocab)
    words = torch.from_numpy(index.bitmask(index.initial_state).copy())[None]
    logits = torch.randn((1, len(vocab)))

    def ours() -> None:
        apply_bitmask(logits, words)

    def theirs() -> None:
        xgrammar.apply_token_bitmask_inplace(logits, words)

    return [min(_timed(fn) for _ in range(200)) * 1e6 for fn in (ours, theirs)]


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def first_masks_ms(
    engines: Engines, patterns: dict[str, str], rounds: int = 5
) -> dict[str, dict[str, Medians]]:
    """Each pattern's first mask (ours and llguidance's) on ``rounds`` fresh strings, one
    per round over all the patterns; the medians per pattern: {name: {engine: Medians}}."""
    fns = {"ours": engines.fsmviz_first, "llg": engines.llguidance_first}
    fresh = {name: Fresh(pattern) for name, pattern in patterns.items()}
    runs: dict[str, list[dict[str, Medians]]] = {name: [] for name in patterns}
    for _ in range(rounds):
        for name in patterns:
            runs[name].append(medians_ms(fns, fresh[name], repeat=1))
    return {
        name: {
            fn: Medians(
                statistics.median(r[fn].wall for r in got),
                statistics.median(r[fn].cpu for r in got),
            )
            for fn in fns
        }
        for name, got in runs.items()
    }


def main() -> list[tuple[str, ...]]:
    fsmviz.automaton.dfa.MAX_SECONDS = 10.0  # measure a slow DFA rather than refuse it
    vocab = Vocabulary.bundled()
    tokenizer = bundled_tokenizer()
    warm(vocab)  # per vocabulary set-up (trie, DAWG, lists), untimed (as the peers' tokenizers)
    engines = Engines(vocab, tokenizer)
    gc.freeze()
    rows, firsts, first_bitmasks = [], [], []
    ratios: dict[str, list[float]] = {"kept": [], "new": [], "new_llg": [], "run": []}
    patterns = mask_patterns()
    first_masks = first_masks_ms(engines, {name: p for name, (p, _) in patterns.items()})
    for name, (pattern, text) in patterns.items():
        ids = tokenizer.encode(text, add_special_tokens=False)
        first = first_masks[name]
        kept, new = fsmviz_step_us(pattern, vocab, ids)
        first_median, first_max = first_bitmasks_ms(
            pattern, vocab, partial(path_states, ids=ids), suffix=40
        )  # 40-42 ()s: strings new to the other columns
        xgr = xgrammar_step_us(engines, pattern, ids)
        llg = llguidance_step_us(engines, pattern, ids)
        run, xgr_run = run_ms(engines, Fresh(pattern + "()" * 5), ids)  # 6-8: new strings
        pairs = {
            "kept": (kept, xgr),
            "new": (new, xgr),
            "new_llg": (new, llg),
            "run": (run, xgr_run),
        }
        for key, (mine, theirs) in pairs.items():
            ratios[key].append(mine / theirs)
        firsts.append(first["ours"].wall)
        first_bitmasks.append((first_median, first_max))
        rows.append(
            (name, len(ids), first["ours"].wall, first["ours"].cpu, first["llg"].wall, kept, new,
             first_median, first_max, xgr, llg, kept / xgr, new / xgr, new / llg, run, xgr_run)
        )  # fmt: skip
    ours_apply, xgr_apply = apply_us(vocab, "[a-z]+")
    print_table(
        f"One step's mask over {len(vocab):,} tokens along a real tokenization (µs a step; "
        "first mask in ms, median of 5 fresh strings)",
        ["pattern", "tokens", "first", "cpu", "llg", "kept", "new", "b.med", "b.max", "xgr",
         "llg", "kept/xgr", "new/xgr", "new/llg", "run", "x.run"],
        rows,
    )  # fmt: skip
    print(
        "  kept: fsmviz bitmask(state) once made; new: the first time (row walked, packed); "
        "b.med, b.max: CPU ms of the first bitmask(state) of each distinct state on the path "
        "(median, max; each state its median over 3 fresh indexes; the max holds the "
        "index's one-time class trie); "
        "xgr = xgrammar 0.2.8 fill_next_token_bitmask, llg = llguidance 1.9.1 "
        "fill_next_token_bitmask; run, x.run: ms from a new pattern's text to every step's "
        "mask (fsmviz build_index and bitmask; xgrammar compile and fills). Applying a "
        "packed mask to a CPU row: fsmviz "
        f"{ours_apply:.0f} µs, xgrammar {xgr_apply:.0f} µs"
    )
    means = {key: geomean(values) for key, values in ratios.items()}
    first_worst = max(firsts)
    bitmask_median = statistics.median(m for m, _ in first_bitmasks)
    bitmask_max = max(m for _, m in first_bitmasks)
    slowest = rows[int(np.argmax(firsts))][0]
    cpu_worst = max(row[3] for row in rows)
    return [
        check("step mask / xgrammar, geometric mean", means["kept"], "<= 1.0",
              means["kept"] <= 1.0),
        check("first step mask (new) / llguidance's (both lazy), geo. mean", means["new_llg"],
              "<= 1.0", means["new_llg"] <= 1.0),
        check("a new pattern's run (text -> each step's mask) / xgrammar's", means["run"],
              "<= 1.0", means["run"] <= 1.0),
        ("  first step mask (new) / xgrammar's (its masks made at compile)",
         f"{means['new']:.3g}", "(shown)", ""),
        check("first bitmask(state), median of the patterns' medians", bitmask_median,
              "<= 0.1 ms", bitmask_median <= 0.1, " ms"),
        check("first bitmask(state), worst state", bitmask_max, "<= 1 ms", bitmask_max <= 1,
              " ms"),
        check(f"first mask, slowest of {len(rows)} ({slowest}), wall", first_worst, "<= 5 ms",
              first_worst <= 5, " ms"),
        check("  the slowest first mask, CPU time", cpu_worst, "<= 5 ms", cpu_worst <= 5, " ms"),
        ("first mask, median of the set", f"{statistics.median(firsts):.3g} ms", "(shown)", ""),
    ]  # fmt: skip


if __name__ == "__main__":
    print_table("Targets", ["target", "measured", "wanted", ""], main())
