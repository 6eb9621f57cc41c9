"""The audit's targets: concurrency's gain and fsmviz's share on a vLLM server; memory that
stays flat over ten thousand prompts on a local model.

``python -m bench.audit_bench [N] [C1,C2,...] [--unscored]`` (needs ``make vllm``;
``FSMVIZ_VLLM_URL`` uses a server already running, else one is started from
``tests/vllmserver.py`` and stopped after) audits the seeds' date pattern over N prompts
(default 200, the issue's number) at each concurrency (default 8, then 1). The levels are
*interleaved*: the prompts go in rounds of ``ROUND``, and each round runs every level on
prompts of its own (no level finds another's prompt in the server's cache), so a load
that rises or falls on a shared machine weighs on every level alike; a level's wall time
is the sum over the rounds. It prints each level's wall, fsmviz's analysis share (the
replays through the exact automaton and the rows), the client's CPU per prompt and the
load average, each round's ratio (the spread says how far to trust the sum), and the
issue's targets: the best concurrency at most 1/3 of the time one at a time; the analysis
at most 10 % of the wall time. ``--unscored`` adds each level again with the scoring
request left out (a what-if, patched in here: every step's valid mass is then unknown),
in the same rounds: the scoring request's share of the time. A second table is the
server's side, read from vLLM's own ``/metrics`` around each audit and summed per level:
its requests (two a prompt: the run and the scoring request), their mean end-to-end,
queue, prefill and decode seconds, how many were in flight on average, the prompt tokens
it computed (and found cached), the tokens it generated, and its engine steps with the
wall time per step: where the server's time goes, whatever else loads the machine.

How long: one at a time, a prompt here costs the server ~1 s on a quiet machine (200
prompts: ~4 minutes, and ~1.5 more at concurrency 8), but ~50 s at the load of seven
engineers on these 2 cores (load average ~17: 200 prompts would take ~3 hours); pass a
smaller N then (16 or 32: one or two rounds), and read the ratio, not the walls.

``python -m bench.audit_bench rss [N] [bundled|tiny]`` audits N short prompts (default
10,000) at ``max_tokens=1``: each run is the first step's analysis only (one forward pass,
the mask, the valid mass, the row, the trace written to disk), no generation after it. The
prompts are made as they are read and every trace goes to an output folder, as the audit
does at scale; the process's resident memory (``VmRSS``) is sampled as the runs finish. The
target: at most 50 MB over the run, counted from the RSS once ``WARM`` prompts are done (the
model, the index and the allocator's pools are in place by then). ``tiny`` is a 2-layer
random Llama over the bundled tokenizer and vocabulary (as the tests' ``tiny``): the same
analysis, 46 ms a prompt on this machine against ~0.6 s for the bundled model's pass.
Neither mode is part of ``make bench``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import fsmviz
from bench.table import check, print_table
from tests.vllmserver import ROOT, VllmServer

DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
EVENTS = ("Apollo 11 land on the moon", "the Berlin Wall fall", "World War II end in Europe",
          "the first iPhone go on sale", "Yuri Gagarin fly to space")  # fmt: skip


def prompts(n: int, start: int = 0) -> list[tuple[str, str]]:
    """N prompts from number ``start`` on, each its own (the number is in its text)."""
    return [
        (f"p{k}", f"On what date did {EVENTS[k % len(EVENTS)]}? ({k}) Answer as YYYY-MM-DD.")
        for k in range(start, start + n)
    ]


ROUND = 16
"""Prompts a level runs in each round of the interleaved measurement."""


SERVER_METRICS = {
    "requests": "vllm:e2e_request_latency_seconds_count",
    "e2e": "vllm:e2e_request_latency_seconds_sum",
    "queue": "vllm:request_queue_time_seconds_sum",
    "prefill": "vllm:request_prefill_time_seconds_sum",
    "decode": "vllm:request_decode_time_seconds_sum",
    "prompt": "vllm:prompt_tokens_total",
    "cached": "vllm:prompt_tokens_cached_total",
    "generated": "vllm:generation_tokens_total",
    "steps": "vllm:iteration_tokens_total_count",
}
"""vLLM's own counters (its Prometheus ``/metrics``) read before and after each audit: the
server's side of the time, whatever else loads the machine."""


def server_metrics(url: str) -> dict[str, float]:
    """``SERVER_METRICS`` now (summed over labels; empty where ``/metrics`` is not there)."""
    import urllib.request

    wanted = {name: key for key, name in SERVER_METRICS.items()}
    found = dict.fromkeys(SERVER_METRICS, 0.0)
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/metrics", timeout=30) as answer:
            text = answer.read().decode("utf-8", "replace")
    except OSError:
        return {}
    for line in text.splitlines():
        name, _, value = line.partition("{") if "{" in line else line.partition(" ")
        if name in wanted:
            found[wanted[name]] += float(line.rsplit(" ", 1)[1])
    return found


def loadavg() -> float:
    return os.getloadavg()[0]


@dataclass
class Level:
    """One level's sums over the rounds (``measure``): its concurrency, whether the
    scoring request was sent, and what its audits took."""

    concurrency: int
    scored: bool = True
    prompts: int = 0
    wall: float = 0.0
    analysis: float = 0.0
    cpu: float = 0.0
    loads: list[float] = field(default_factory=list)
    server: dict[str, float] = field(default_factory=dict)
    rounds: list[float] = field(default_factory=list)
    summary: str = ""

    @property
    def name(self) -> str:
        return f"{self.concurrency}" + ("" if self.scored else " unscored")


@contextmanager
def scoring(on: bool):
    """The scoring request sent (on) or left out (a what-if: no valid mass at any step)."""
    from fsmviz.generation.server import ServerRun

    real = ServerRun._scored
    if not on:
        ServerRun._scored = lambda self, ids, written: [{} for _ in written]  # type: ignore[method-assign]
    try:
        yield
    finally:
        ServerRun._scored = real  # type: ignore[method-assign]


def one_audit(model, url: str, level: Level, batch: list[tuple[str, str]]) -> None:
    """One round's audit at ``level``, added to its sums."""
    before, cpu, load = server_metrics(url), time.process_time(), loadavg()
    started = time.perf_counter()
    with scoring(level.scored):
        report = fsmviz.audit(model, DATE, batch, max_tokens=16, concurrency=level.concurrency)
    wall = time.perf_counter() - started
    after = server_metrics(url)
    level.prompts += len(batch)
    level.wall += wall
    level.rounds.append(wall)
    level.analysis += report.analysis_seconds or 0.0
    level.cpu += time.process_time() - cpu
    level.loads += [load, loadavg()]
    level.summary = report.summary()
    for key in after if before else ():
        level.server[key] = level.server.get(key, 0.0) + after[key] - before[key]


def measure(url: str, n: int, levels: tuple[int, ...], unscored: bool) -> list[Level]:
    """Every level over its own N prompts, interleaved in rounds of ``ROUND`` (see the
    module docstring)."""
    model = fsmviz.connect(url)
    fsmviz.audit(model, DATE, prompts(2, 10**6), max_tokens=16)  # warm: index, connections
    runs = [Level(c) for c in levels] + ([Level(c, False) for c in levels] if unscored else [])
    start = 0
    for first in range(0, n, ROUND):
        size = min(ROUND, n - first)
        for level in runs:
            one_audit(model, url, level, prompts(size, start))
            start += size
        done = " ".join(f"{lv.name}: {lv.rounds[-1]:.0f} s" for lv in runs)
        print(f"round {first // ROUND + 1}: {size} prompts a level; {done}", flush=True)
    return runs


def tables(levels: list[Level]) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """The audit's table and the server's (its counters' change, summed per level)."""
    rows, served = [], []
    for lv in levels:
        share = lv.analysis / lv.wall if lv.wall else 0.0
        rows.append((lv.name, lv.prompts, f"{lv.wall:.1f}", f"{lv.prompts / lv.wall:.2f}",
                     f"{lv.analysis:.2f}", f"{share:.1%}", f"{lv.cpu / lv.prompts * 1000:.0f}",
                     f"{min(lv.loads):.1f}-{max(lv.loads):.1f}", lv.summary))  # fmt: skip
        d = lv.server
        if d:
            count = max(d["requests"], 1)
            served.append((lv.name, int(d["requests"]), f"{d['e2e'] / count:.2f}",
                           f"{d['queue'] / count:.2f}", f"{d['prefill'] / count:.2f}",
                           f"{d['decode'] / count:.2f}", f"{d['e2e'] / lv.wall:.1f}",
                           int(d["prompt"] - d["cached"]), int(d["cached"]),
                           int(d["generated"]), int(d["steps"]),
                           f"{lv.wall / max(d['steps'], 1) * 1000:.0f}"))  # fmt: skip
    return rows, served


WARM = 200
"""Prompts run before the baseline of the RSS check is taken."""
RSS_TARGET_MB = 50.0


def rss_mb() -> float:
    """This process's resident memory, in MB (``VmRSS``)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def tiny_model():
    """A 2-layer random Llama over the bundled tokenizer and vocabulary (the tests' ``tiny``)."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from fsmviz.bundled import bundled_tokenizer_dir
    from fsmviz.generation.models import Model

    tokenizer = AutoTokenizer.from_pretrained(bundled_tokenizer_dir())
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=512)  # fmt: skip
    net = LlamaForCausalLM(config).eval()
    return Model("tiny-random", net, tokenizer, fsmviz.Vocabulary.bundled(), torch.device("cpu"))


def short_prompts(n: int):
    """N short prompts, made one at a time as the audit reads them."""
    for k in range(n):
        yield f"q{k}", f"In what year did {EVENTS[k % len(EVENTS)]}? ({k})"


def measure_rss(n: int, which: str) -> None:
    """The RSS check (see the module docstring): samples as the runs finish, then the table."""
    model = tiny_model() if which == "tiny" else fsmviz.load_model(None)
    samples: list[tuple[int, float]] = []
    every = max(n // 20, 1)

    def sample(p) -> None:
        if p.done == min(WARM, n) or p.done % every == 0 or p.done == n:
            samples.append((p.done, rss_mb()))

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="audit-rss-") as out:
        report = fsmviz.audit(model, r"[0-9]{4}", short_prompts(n), max_tokens=1, out=out,
                              total=n, progress=sample)  # fmt: skip
    wall = time.perf_counter() - started
    base = next(mb for done, mb in samples if done >= min(WARM, n))
    after = [mb for done, mb in samples if done >= min(WARM, n)]
    growth = max(after) - base
    rows = [(done, f"{mb:.1f}", f"{mb - base:+.1f}") for done, mb in samples]
    print_table(f"RSS over {n:,} first-step runs ({which} model)", ("prompts", "RSS MB", "vs warm"),
                rows)  # fmt: skip
    print(f"{report.summary()}; {wall:.0f} s, {n / wall:.1f} prompts/s")
    target = check("RSS growth after warm-up", growth, f"<= {RSS_TARGET_MB:.0f} MB",
                   growth <= RSS_TARGET_MB, " MB")  # fmt: skip
    print_table("Targets", ("name", "value", "target", "ok"), [target])


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--unscored"]
    if args and args[0] == "rss":
        n = int(args[1]) if len(args) > 1 else 10_000
        return measure_rss(n, args[2] if len(args) > 2 else "bundled")
    n = int(args[0]) if args else 200
    levels = tuple(int(c) for c in args[1].split(",")) if len(args) > 1 else (8, 1)
    levels = levels if 1 in levels else (*levels, 1)
    url = os.environ.get("FSMVIZ_VLLM_URL")
    server = None
    if url is None:
        server = VllmServer(ROOT / ".tmp" / "vllm-audit-bench.log")
        url = server.__enter__()
        print(f"vLLM server up and warm in {server.started_in:.0f} s")
    try:
        measured = measure(url, n, levels, "--unscored" in sys.argv)
    finally:
        if server is not None:
            server.stop()
    report(measured)


def report(measured: list[Level]) -> None:
    """The tables, each round's ratio, and the targets."""
    rows, served = tables(measured)
    header = ("concurrency", "prompts", "wall s", "prompts/s", "analysis s", "share",
              "client CPU ms/prompt", "load avg", "report")  # fmt: skip
    print_table("An audit of the date pattern on a vLLM CPU server (levels interleaved)",
                header, rows)  # fmt: skip
    if served:
        header = ("concurrency", "requests", "e2e s/req", "queue s/req", "prefill s/req",
                  "decode s/req", "in flight", "prompt tok computed", "prompt tok cached",
                  "generated tok", "engine steps", "ms/step")  # fmt: skip
        print_table("The server's side (vLLM's /metrics, two requests per prompt: the run "
                    "and the scoring request)", header, served)  # fmt: skip
    for scored in (True, False):
        group = {lv.concurrency: lv for lv in measured if lv.scored == scored}
        if 1 not in group or len(group) < 2:
            continue
        one = group.pop(1)
        best = min(group.values(), key=lambda lv: lv.wall)
        each = ", ".join(f"{a / b:.0%}" for a, b in zip(best.rounds, one.rounds, strict=True))
        ratio = best.wall / one.wall
        print(f"{best.name} / {one.name}: {ratio:.1%} (rounds: {each})")
        if scored:
            worst = max(lv.analysis / lv.wall for lv in measured if lv.wall)
            name = f"wall at {best.concurrency} / wall at 1"
            targets = [
                check(name, ratio * 100, "<= 33 %", ratio <= 1 / 3, "%"),
                check("analysis / wall", worst * 100, "<= 10 %", worst <= 0.10, "%"),
            ]
            print_table("Targets", ("name", "value", "target", "ok"), targets)


if __name__ == "__main__":
    sys.exit(main())
