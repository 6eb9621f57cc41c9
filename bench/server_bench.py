"""A vLLM server's run replayed by fsmviz: what the server costs, what fsmviz's share is.

``python -m bench.server_bench`` (needs ``make vllm``; ``FSMVIZ_VLLM_URL`` uses a server
already running) starts the vLLM CPU server on the bundled model (``tests/vllmserver.py``),
then runs the seeds' e-mail and date patterns through ``fsmviz.connect`` a few times each
and prints, per run: the tokens written, the constrained request, the scoring request
(``prompt_logprobs``, for the valid mass) and fsmviz's replay (the automaton, the allowed
sets, the valid mass), with the issue's target: the replay at most 10 % of the server's
time. Not part of ``make bench``: it needs the vLLM venv and ~4 min to start the server.
"""

from __future__ import annotations

import os
import sys
import time

import fsmviz
from bench.table import check, print_table
from tests.vllmserver import ROOT, VllmServer

PROMPTS = {
    "email": "Write Jerome Swannack's work e-mail address; he works at coolcompany.com. "
    "Reply with the address only.",
    "date": "On what date did Apollo 11 land on the moon? Answer as YYYY-MM-DD.",
}
REPEAT = 3


def measure(url: str) -> tuple[list[tuple[object, ...]], float]:
    """One row per run; the worst replay share."""
    import json

    cases = json.loads((ROOT / "tests" / "cases" / "seed_regexes.json").read_text())
    started = time.perf_counter()
    model = fsmviz.connect(url)
    print(f"connect (tokenizer and vocabulary): {time.perf_counter() - started:.2f} s")
    rows, worst = [], 0.0
    for name, prompt in PROMPTS.items():
        for attempt in range(REPEAT):
            run = fsmviz.stream(model, cases["regexes"][name], prompt, max_tokens=40)
            for _ in run:
                pass
            replay = run._run
            share = replay.replay_seconds / replay.server_seconds
            worst = max(worst, share)
            complete, score = replay.request_seconds
            rows.append(
                (name, attempt, len(run.steps), f"{complete:.2f}", f"{score:.2f}",
                 f"{replay.replay_seconds * 1e3:.1f}", f"{share:.1%}", run.trace().stop_reason)
            )  # fmt: skip
    return rows, worst


def main() -> None:
    url = os.environ.get("FSMVIZ_VLLM_URL")
    server = None
    if url is None:
        server = VllmServer(ROOT / ".tmp" / "vllm-bench.log")
        url = server.__enter__()
        print(f"vLLM server up and warm in {server.started_in:.0f} s")
    try:
        rows, worst = measure(url)
    finally:
        if server is not None:
            server.stop()
    header = ("pattern", "run", "tokens", "request s", "scoring s", "replay ms", "share", "stop")
    print_table("A vLLM CPU server's runs replayed by fsmviz", header, rows)
    target = check("replay / server time", worst * 100, "<= 10 %", worst <= 0.10, "%")
    print_table("Target", ("name", "value", "target", "ok"), [target])


if __name__ == "__main__":
    sys.exit(main())
