"""The audit's targets: concurrency's gain and fsmviz's share on a vLLM server; memory that
stays flat over ten thousand prompts on a local model.

``python -m bench.audit_bench [N] [C1,C2,...]`` (needs ``make vllm``; ``FSMVIZ_VLLM_URL``
uses a server already running, else one is started from ``tests/vllmserver.py`` and stopped
after) audits the seeds' date pattern over N prompts (default 50) at each concurrency
(default 8, then 1), and prints the wall time of each, fsmviz's analysis share (the replays
through the exact automaton and the rows), the client's CPU per prompt and the load
average, with the issue's targets: the best concurrency at most 1/3 of the time one at a
time; the analysis at most 10 % of the wall time. A second table is the server's side, read
from vLLM's own ``/metrics`` before and after each audit: its requests (two a prompt: the
run and the scoring request), their mean end-to-end, queue, prefill and decode seconds,
how many were in flight on average, the prompt tokens it computed (and found cached), the
tokens it generated, and its engine steps with the wall time per step: where the server's
time goes, whatever else loads the machine.

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

import fsmviz
from bench.table import check, print_table
from tests.vllmserver import ROOT, VllmServer

DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
EVENTS = ("Apollo 11 land on the moon", "the Berlin Wall fall", "World War II end in Europe",
          "the first iPhone go on sale", "Yuri Gagarin fly to space")  # fmt: skip


def prompts(n: int) -> list[tuple[str, str]]:
    return [
        (f"p{k}", f"On what date did {EVENTS[k % len(EVENTS)]}? ({k}) Answer as YYYY-MM-DD.")
        for k in range(n)
    ]


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


def measure(
    url: str, n: int, levels: tuple[int, ...]
) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]], dict[int, float], float]:
    """Each concurrency in ``levels`` over the same N prompts: the audit's table and the
    server's (its counters' change over that audit), the walls, the worst analysis share."""
    model = fsmviz.connect(url)
    fsmviz.audit(model, DATE, prompts(2), max_tokens=16)  # warm: the index, the connections
    rows, served, walls, worst = [], [], {}, 0.0
    for concurrency in levels:
        before, cpu, load = server_metrics(url), time.process_time(), loadavg()
        started = time.perf_counter()
        report = fsmviz.audit(model, DATE, prompts(n), max_tokens=16, concurrency=concurrency)
        walls[concurrency] = wall = time.perf_counter() - started
        cpu = time.process_time() - cpu
        after = server_metrics(url)
        share = report.analysis_share or 0.0
        worst = max(worst, share)
        analysis = report.analysis_seconds or 0.0
        rows.append((concurrency, n, f"{wall:.1f}", f"{n / wall:.2f}", f"{analysis:.2f}",
                     f"{share:.1%}", f"{cpu / n * 1000:.0f}", f"{load:.1f}-{loadavg():.1f}",
                     report.summary()))  # fmt: skip
        if after and before:
            d = {key: after[key] - before[key] for key in SERVER_METRICS}
            count = max(d["requests"], 1)
            served.append((concurrency, int(d["requests"]), f"{d['e2e'] / count:.2f}",
                           f"{d['queue'] / count:.2f}", f"{d['prefill'] / count:.2f}",
                           f"{d['decode'] / count:.2f}", f"{d['e2e'] / wall:.1f}",
                           int(d["prompt"] - d["cached"]), int(d["cached"]),
                           int(d["generated"]), int(d["steps"]),
                           f"{wall / max(d['steps'], 1) * 1000:.0f}"))  # fmt: skip
    return rows, served, walls, worst


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
    if len(sys.argv) > 1 and sys.argv[1] == "rss":
        n = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
        return measure_rss(n, sys.argv[3] if len(sys.argv) > 3 else "bundled")
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    levels = tuple(int(c) for c in sys.argv[2].split(",")) if len(sys.argv) > 2 else (8, 1)
    levels = levels if 1 in levels else (*levels, 1)
    url = os.environ.get("FSMVIZ_VLLM_URL")
    server = None
    if url is None:
        server = VllmServer(ROOT / ".tmp" / "vllm-audit-bench.log")
        url = server.__enter__()
        print(f"vLLM server up and warm in {server.started_in:.0f} s")
    try:
        rows, served, walls, worst = measure(url, n, levels)
    finally:
        if server is not None:
            server.stop()
    header = ("concurrency", "prompts", "wall s", "prompts/s", "analysis s", "share",
              "client CPU ms/prompt", "load avg", "report")  # fmt: skip
    print_table("An audit of the date pattern on a vLLM CPU server", header, rows)
    if served:
        header = ("concurrency", "requests", "e2e s/req", "queue s/req", "prefill s/req",
                  "decode s/req", "in flight", "prompt tok computed", "prompt tok cached",
                  "generated tok", "engine steps", "ms/step")  # fmt: skip
        print_table("The server's side (vLLM's /metrics, two requests per prompt: the run "
                    "and the scoring request)", header, served)  # fmt: skip
    best = min((c for c in walls if c != 1), key=walls.__getitem__)
    ratio = walls[best] / walls[1]
    targets = [
        check(f"wall at {best} / wall at 1", ratio * 100, "<= 33 %", ratio <= 1 / 3, "%"),
        check("analysis / wall", worst * 100, "<= 10 %", worst <= 0.10, "%"),
    ]
    print_table("Targets", ("name", "value", "target", "ok"), targets)


if __name__ == "__main__":
    sys.exit(main())
