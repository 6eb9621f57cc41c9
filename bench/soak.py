"""Memory and disk stay flat under anonymous traffic: the real app, many short-lived callers.

``make soak`` (or ``python -m bench.soak --calls 10000 --runs 200``) starts the app
(``app.py``, bundled model, on 127.0.0.1 only, ``--file-ttl`` short so the sweep is seen
within the run) and sends, from ``--clients`` concurrent local clients:

* ``--calls`` cheap REST calls, ``/gradio_api/call/dfa``, each with a fresh pattern (so
  the DFA cache turns over) and, as every REST call does, a fresh Gradio session;
* ``--traces`` short ``/trace`` calls (``RUN_TOKENS`` tokens, a fresh pattern each);
* ``--runs`` page runs: the Generate button's own event through Gradio's queue
  (``/gradio_api/queue/join``, a fresh session each, as an anonymous visitor), a few tokens
  each with the bundled model, each writing its downloads (four files);

then waits for the file sweep and prints the server's resident memory (``VmRSS``) and the
temporary disk (the app's ``TMPDIR``: Gradio's cache and the ``fsmviz-*`` run folders) at
each checkpoint. "Before" is taken after a warm-up that fills the bounded stores once (the
session store's ``SESSIONS`` visitors, the caches), so the rest is the steady state.

Every call is bounded in time (``TIMEOUT``), the whole soak by ``--minutes``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.table import print_table
from fsmviz.app.server import SESSIONS
from tests.appserver import ROOT, AppServer

TIMEOUT = 120.0
"""Seconds one call may take (a guard against a hang, not a target)."""
FILE_TTL = 20
"""The soak's ``--file-ttl``: Gradio's copies are swept after 20 s (the app's default is
1800 s; the bound is the same, reached sooner)."""
RUN_TOKENS = 4
MARGIN_MB = 64.0
"""How much the server's memory may grow from the warmed-up "before" to "after"."""
MARGIN_DISK_MB = 1.0
"""How much the temporary disk may hold after the sweep, beyond what it held before."""


@dataclass
class Tally:
    ok: int = 0
    errors: list[str] = field(default_factory=list)
    worst: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def done(self) -> int:
        return self.ok + len(self.errors)

    def add(self, seconds: float, error: str | None) -> None:
        with self.lock:
            self.worst = max(self.worst, seconds)
            if error is None:
                self.ok += 1
            elif len(self.errors) < 20:
                self.errors.append(error)
            else:
                self.errors.append("")  # counted, not kept


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def disk(tmp: Path) -> tuple[float, int, int]:
    """(MB, files, fsmviz-* run folders) under the app's temporary directory."""
    size, files = 0, 0
    for folder, _, names in os.walk(tmp):
        if "pytest" in folder:
            continue
        for name in names:
            try:
                size += os.lstat(os.path.join(folder, name)).st_blocks * 512
                files += 1
            except OSError:
                pass
    runs = sum(1 for p in [*tmp.glob("fsmviz-*"), *tmp.glob("gradio/fsmviz-*")] if p.is_dir())
    return size / 2**20, files, runs


def distinct_pattern(k: int) -> str:
    """A pattern no other ``k`` gives: two to six parts drawn by ``k`` (bounded and free
    repeats, alternations, classes), then ``x{k}``; a few are over the DFA's limits and
    refused, as some of a hostile visitor's would be."""
    r = random.Random(k)
    parts = [f"[a-z]{{1,{r.randint(3, 30)}}}", "(cat|dog|bird)", f"[0-9]{{{r.randint(1, 9)}}}",
             "\\w+", "(-|_)?", f"[A-Z]{{2,{r.randint(2, 12)}}}"]  # fmt: skip
    return "".join(r.choice(parts) for _ in range(r.randint(2, 6))) + f"x{k}"


def dfa_call(client: httpx.Client, url: str, k: int) -> str | None:
    """One REST call to ``/dfa`` with a pattern no earlier call used (``distinct_pattern``:
    each a DFA of its own, so the caches turn over); None if it answered or refused it."""
    error = rest_call(client, url, "dfa", [distinct_pattern(k)])
    return None if error is None or error.startswith("error") else error


def trace_call(client: httpx.Client, url: str, k: int) -> str | None:
    """One short ``/trace`` call (a fresh pattern, ``RUN_TOKENS`` tokens)."""
    data = [f"[0-9]{{{k % 5 + 2}}}", f"A number? ({k})", RUN_TOKENS, 0.0, k, True]
    return rest_call(client, url, "trace", data)  # REST takes every argument, defaults too


def rest_call(client: httpx.Client, url: str, endpoint: str, data: list) -> str | None:
    """One REST call (``/gradio_api/call/…``): None when it answered, else what went wrong."""
    posted = client.post(f"{url}/gradio_api/call/{endpoint}", json={"data": data})
    posted.raise_for_status()
    event = posted.json()["event_id"]
    with client.stream("GET", f"{url}/gradio_api/call/{endpoint}/{event}") as answer:
        kind = None
        for line in answer.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and kind in ("complete", "error"):
                return None if kind == "complete" else f"error: {line[5:200]}"
    return "no answer"


@dataclass(frozen=True)
class RunEvent:
    fn_index: int
    trigger: int
    inputs: list[int]
    defaults: dict[int, object]


def run_event(client: httpx.Client, url: str) -> RunEvent:
    """The Generate button's event in the page's config: its index and its inputs."""
    config = client.get(f"{url}/config").json()
    components = {c["id"]: c for c in config["components"]}
    button = next(i for i, c in components.items() if c["props"].get("elem_id") == "run")
    for k, dep in enumerate(config["dependencies"]):
        if [button, "click"] in [list(t) for t in dep["targets"]]:
            defaults = {i: components[i]["props"].get("value") for i in dep["inputs"]}
            return RunEvent(dep.get("id", k), button, dep["inputs"], defaults)
    raise RuntimeError("the page has no Generate event")


def page_run(client: httpx.Client, url: str, event: RunEvent, k: int) -> str | None:
    """One Generate click of a fresh anonymous visitor: the page's own inputs, a short run."""
    session = uuid.uuid4().hex[:11]
    data = [event.defaults[i] for i in event.inputs]
    data[1] = f"Give a number. ({k})"  # the prompt
    data[2] = RUN_TOKENS  # max tokens
    joined = client.post(
        f"{url}/gradio_api/queue/join",
        json={"data": data, "fn_index": event.fn_index, "trigger_id": event.trigger,
              "session_hash": session, "event_data": None},
    )  # fmt: skip
    joined.raise_for_status()
    with client.stream(
        "GET", f"{url}/gradio_api/queue/data", params={"session_hash": session}
    ) as s:
        for line in s.iter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("msg") == "process_completed":
                if message.get("success"):
                    return None
                return f"failed: {str(message.get('output'))[:200]}"
    return "no answer"


_SENT = [0]
"""Calls numbered so far: each ``soak`` goes on from there, so no pattern is sent twice (the
warm-up's and every checkpoint's are all distinct)."""


def soak(url: str, n: int, clients: int, deadline: float, call, label: str) -> tuple[Tally, float]:
    tally = Tally()
    counter = iter(range(_SENT[0], _SENT[0] + n))
    _SENT[0] += n
    lock = threading.Lock()

    def worker() -> None:
        with httpx.Client(timeout=TIMEOUT) as client:
            while time.monotonic() < deadline:
                with lock:
                    k = next(counter, None)
                if k is None:
                    return
                start = time.perf_counter()
                try:
                    error = call(client, url, k)
                except Exception as exc:  # noqa: BLE001 - every failure is counted
                    error = f"{type(exc).__name__}: {exc}"
                tally.add(time.perf_counter() - start, error)

    began = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        for future in [pool.submit(worker) for _ in range(clients)]:
            future.result()
    wall = time.perf_counter() - began
    print(f"  {label}: {tally.ok} answered, {len(tally.errors)} errors in {wall:.0f} s")
    return tally, wall


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=1000, help="cheap /dfa calls (default 1000)")
    p.add_argument("--runs", type=int, default=10, help="page runs (default 10)")
    p.add_argument("--traces", type=int, default=20, help="short /trace calls (default 20)")
    p.add_argument("--clients", type=int, default=4, help="concurrent local clients")
    p.add_argument("--minutes", type=float, default=15, help="the whole soak's time limit")
    args = p.parse_args(argv)
    deadline = time.monotonic() + args.minutes * 60
    tmp = ROOT / ".tmp"
    log = tmp / "soak-app.log"
    rows = []
    server = AppServer(log, args=("--file-ttl", str(FILE_TTL)))
    with server as url:
        assert url.startswith("http://127.0.0.1:") and server.process is not None
        pid = server.process.pid
        with httpx.Client(timeout=TIMEOUT) as client:
            event = run_event(client, url)

        def point(name: str) -> tuple[str, float, float, int, int]:
            return (name, rss_mb(pid), *disk(tmp))

        rows.append(point("started"))
        warm_calls = SESSIONS + SESSIONS // 5
        print(f"warm-up: {warm_calls} /dfa calls, 8 /trace calls and 4 page runs (fills the "
              f"{SESSIONS} sessions kept, the caches)")  # fmt: skip
        soak(url, warm_calls, args.clients, deadline, dfa_call, "warm-up /dfa")
        soak(url, 8, args.clients, deadline, trace_call, "warm-up /trace")
        soak(url, 4, args.clients, deadline, lambda c, u, k: page_run(c, u, event, k), "runs")
        time.sleep(FILE_TTL + FILE_TTL // 6 + 2)
        rows.append(before := point("before (warm)"))
        tallies = []
        step, calls = max(args.calls // 4, 1), 0
        for done in range(0, args.calls, step):
            count = min(step, args.calls - done)
            tallies.append(soak(url, count, args.clients, deadline, dfa_call, "/dfa")[0])
            calls += tallies[-1].done
            rows.append(point(f"after {calls} /dfa calls"))
        tallies.append(soak(url, args.traces, args.clients, deadline, trace_call, "/trace")[0])
        rows.append(point(f"after {tallies[-1].done} /trace calls"))
        run = lambda c, u, k: page_run(c, u, event, k)  # noqa: E731
        tallies.append(soak(url, args.runs, args.clients, deadline, run, "page runs")[0])
        rows.append(point(f"after {tallies[-1].done} page runs"))
        if time.monotonic() > deadline:
            print(f"  (stopped at the {args.minutes:g}-minute limit: fewer calls than asked)")
        time.sleep(FILE_TTL + FILE_TTL // 6 + 2)  # Gradio's sweep, then ours
        rows.append(after := point("after the file sweep"))
    print_table(
        f"Soak: {args.calls} /dfa calls, {args.traces} /trace calls and {args.runs} page runs "
        f"({RUN_TOKENS} tokens), "
        f"{args.clients} clients, sessions kept {SESSIONS}, files {FILE_TTL} s",
        ["checkpoint", "RSS MB", "tmp MB", "tmp files", "fsmviz-* folders"],
        rows,
    )
    errors = [e for t in tallies for e in t.errors]
    for error in sorted(set(errors))[:10]:
        print("  error:", error)
    grew, disk_grew = after[1] - before[1], after[2] - before[2]
    print(
        f"\nmemory: {before[1]:.0f} -> {after[1]:.0f} MB ({grew:+.0f} MB; margin "
        f"{MARGIN_MB:.0f} MB); temp disk {before[2]:.1f} -> {after[2]:.1f} MB "
        f"({disk_grew:+.1f} MB; margin {MARGIN_DISK_MB:.0f} MB); errors {len(errors)}; "
        f"worst call {max(t.worst for t in tallies):.1f} s"
    )
    flat = grew <= MARGIN_MB and disk_grew <= MARGIN_DISK_MB and not errors
    print("flat" if flat else "NOT flat")
    return 0 if flat else 1


if __name__ == "__main__":
    raise SystemExit(main())
