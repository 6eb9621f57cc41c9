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
import threading
import time

from bench.table import check, print_table
from fsmviz import load_model, stream

USERS = 16
TOKENS = 24
PASSES = 2
PATTERNS = [
    (r"[a-z ]{200,}", "Describe the sea in a few sentences."),
    (r"[0-9, ]{150,}", "Count upward from one, in digits."),
    (r"[A-Za-z ,.]{200,}", "Tell a very short story about a fox."),
    (r"[a-z]+(, [a-z]+){60,}", "List as many fruits as you can."),
]


def request(model, user: int) -> tuple[int, float, float]:
    """(tokens, seconds to the first step, seconds in all) of one user's request."""
    pattern, prompt = PATTERNS[user % len(PATTERNS)]
    start = time.perf_counter()
    run = stream(model, pattern, prompt, max_tokens=TOKENS, temperature=0.8, seed=user)
    first, tokens = None, 0
    for _ in run:
        tokens += 1
        if first is None:
            first = time.perf_counter() - start
    return tokens, first or 0.0, time.perf_counter() - start


def alone(model) -> tuple[float, list[float]]:
    results = [request(model, user) for user in range(len(PATTERNS))]
    return sum(r[0] for r in results) / sum(r[2] for r in results), [r[1] for r in results]


def at_once(model) -> tuple[float, list[float]]:
    results: list[tuple[int, float, float]] = [(0, 0.0, 0.0)] * USERS
    gate = threading.Barrier(USERS + 1)

    def user(i: int) -> None:
        gate.wait()
        results[i] = request(model, i)

    threads = [threading.Thread(target=user, args=(i,)) for i in range(USERS)]
    for t in threads:
        t.start()
    gate.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    return sum(r[0] for r in results) / wall, [r[1] for r in results]


def main() -> list[tuple[str, ...]]:
    model = load_model()
    alone(model)  # warm: every pattern's index built, the model's thread started
    rows, rates_alone, rates_crowd, firsts_alone, firsts_crowd = [], [], [], [], []
    for n in range(1, PASSES + 1):
        rate, firsts = alone(model)
        rates_alone.append(rate)
        firsts_alone.append(statistics.median(firsts))
        rows.append((f"1 user alone, pass {n}", rate, statistics.median(firsts), max(firsts)))
        rate, firsts = at_once(model)
        rates_crowd.append(rate)
        firsts_crowd.append(max(firsts))
        rows.append((f"{USERS} users at once, pass {n}", rate, statistics.median(firsts),
                     max(firsts)))  # fmt: skip
    print_table(
        f"stream() from {USERS} threads against one, in one process ({TOKENS} tokens a "
        "request; first token in s)",
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
