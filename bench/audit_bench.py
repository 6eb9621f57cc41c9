"""An audit against a vLLM server: concurrency's gain, and fsmviz's share of the wall time.

``python -m bench.audit_bench [N]`` (needs ``make vllm``; ``FSMVIZ_VLLM_URL`` uses a server
already running, else one is started from ``tests/vllmserver.py`` and stopped after) audits
the seeds' date pattern over N prompts (default 50) twice, at concurrency 8 and 1, and
prints the wall time of each and fsmviz's analysis share (the replays through the exact
automaton and the rows), with the issue's targets: concurrency 8 at most 1/3 of the time
one at a time; the analysis at most 10 % of the wall time. Not part of ``make bench``.
"""

from __future__ import annotations

import os
import sys
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


def measure(url: str, n: int) -> tuple[list[tuple[object, ...]], dict[int, float], float]:
    model = fsmviz.connect(url)
    fsmviz.audit(model, DATE, prompts(2), max_tokens=16)  # warm: the index, the connections
    rows, walls, worst = [], {}, 0.0
    for concurrency in (8, 1):
        started = time.perf_counter()
        report = fsmviz.audit(model, DATE, prompts(n), max_tokens=16, concurrency=concurrency)
        walls[concurrency] = time.perf_counter() - started
        share = report.analysis_share or 0.0
        worst = max(worst, share)
        wall = walls[concurrency]
        analysis = report.analysis_seconds or 0.0
        rows.append((concurrency, n, f"{wall:.1f}", f"{n / wall:.2f}", f"{analysis:.2f}",
                     f"{share:.1%}", report.summary()))  # fmt: skip
    return rows, walls, worst


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    url = os.environ.get("FSMVIZ_VLLM_URL")
    server = None
    if url is None:
        server = VllmServer(ROOT / ".tmp" / "vllm-audit-bench.log")
        url = server.__enter__()
        print(f"vLLM server up and warm in {server.started_in:.0f} s")
    try:
        rows, walls, worst = measure(url, n)
    finally:
        if server is not None:
            server.stop()
    header = ("concurrency", "prompts", "wall s", "prompts/s", "analysis s", "share", "report")
    print_table("An audit of the date pattern on a vLLM CPU server", header, rows)
    ratio = walls[8] / walls[1]
    targets = [
        check("wall at 8 / wall at 1", ratio * 100, "<= 33 %", ratio <= 1 / 3, "%"),
        check("analysis / wall", worst * 100, "<= 10 %", worst <= 0.10, "%"),
    ]
    print_table("Targets", ("name", "value", "target", "ok"), targets)


if __name__ == "__main__":
    sys.exit(main())
