"""Sixteen visitors at once against one, in one process: the engine's batching alone.

``bench/load_bench.py`` measures the same through the app (Gradio, HTTP, the queue); this
one calls ``fsmviz.stream`` from ``USERS`` threads at once, as the app's workers do, so
what it shows is the model's thread and its batches (``fsmviz/generation/batching.py``)
and each generation's own work between steps. Each request writes exactly ``TOKENS``
tokens (sampled, a seed per user, patterns whose shortest match is longer than that).

* *alone*: one user's requests one after the other (tokens / their total time);
* *at once*: ``USERS`` threads started together (all tokens / wall time to the last);
* *first token*: warm (each pattern's index built), from ``stream()`` to its first step,
  the median of the alone runs, and the worst under the crowd.

Alone and at once alternate ``PASSES`` times; each side is judged by its best pass.
"""

from __future__ import annotations

import statistics

import torch

from bench.table import check, print_table
from bench.users import PATTERNS, Timed, at_once, timed_stream
from fsmviz import load_model

USERS = 16
TOKENS = 24
PASSES = 2


def request(model, user: int) -> Timed:
    """One user's request: its pattern, sampled with the user's seed."""
    pattern, prompt = PATTERNS[user % len(PATTERNS)]
    return timed_stream(model, pattern, prompt, TOKENS, temperature=0.8, seed=user)


def alone(model) -> tuple[float, list[float]]:
    """(tokens/s, seconds to each first step) of one user's requests in turn."""
    results = [request(model, user) for user in range(len(PATTERNS))]
    rate = sum(r.tokens for r in results) / sum(r.total for r in results)
    return rate, [r.first for r in results]


def crowd(model) -> tuple[float, list[float]]:
    """(tokens/s in all, seconds to each first step) of ``USERS`` requests at once."""
    results, wall = at_once(USERS, lambda user: request(model, user))
    return sum(r.tokens for r in results) / wall, [r.first for r in results]


def main() -> list[tuple[str, ...]]:
    model = load_model()
    alone(model)  # warm: every pattern's index built, the model's thread started
    rows, rates_alone, rates_crowd, firsts_alone, firsts_crowd = [], [], [], [], []
    for n in range(1, PASSES + 1):
        rate, firsts = alone(model)
        rates_alone.append(rate)
        firsts_alone.append(statistics.median(firsts))
        rows.append((f"1 user alone, pass {n}", rate, statistics.median(firsts), max(firsts)))
        rate, firsts = crowd(model)
        rates_crowd.append(rate)
        firsts_crowd.append(max(firsts))
        rows.append((f"{USERS} users at once, pass {n}", rate, statistics.median(firsts),
                     max(firsts)))  # fmt: skip
    threads = torch.get_num_threads()  # with OMP_NUM_THREADS=1 the crowd made ~76 tokens/s
    # here, against ~96 on both cores (alone: ~14.5 either way)
    print_table(
        f"stream() from {USERS} threads against one, in one process ({TOKENS} tokens a "
        f"request; first token in s; torch on {threads} thread{'s' * (threads > 1)})",
        ["", "tokens/s", "first p50", "first max"],
        rows,
    )
    ratio = max(rates_crowd) / max(rates_alone)
    first = min(firsts_alone)
    return [
        check(f"tokens/s in all, {USERS} users / 1 (in process)", ratio, ">= 6", ratio >= 6),
        check("first streamed token, warm, alone", first, "<= 0.2 s", first <= 0.2, " s"),
        (f"first streamed token, worst of {USERS} at once", f"{min(firsts_crowd):.3g} s",
         "(shown)", ""),
    ]  # fmt: skip


if __name__ == "__main__":
    print_table("Targets", ["target", "measured", "wanted", ""], main())
