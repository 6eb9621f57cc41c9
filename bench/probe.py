"""Reliability probe: what a hostile visitor of a public Space tries, against the real app.

``make probe`` (or ``python -m bench.probe [--calls 5000]``) starts the app (``app.py``,
bundled model, 127.0.0.1 only) and a local HTTP server that counts every request it is
sent, then runs issue 49's attacks, each with its bound:

* **no network**: schemas whose ``$ref``, ``$dynamicRef``, ``$id``-relative reference or
  ``$schema`` name the counting server, sent to ``/schema`` and ``/schema_engines`` (the
  API, the page and MCP share these functions) and to ``python -m fsmviz schema
  --engines FILE``: the server must count 0 requests;
* **no freeze**: ``{"type": "string", "pattern": "^a{40}!$", "not": {"pattern":
  "^(a+)+$"}}`` on ``/schema`` answered or refused within 5 s, and ``/dfa`` calls made
  meanwhile each within 2 s (Python's ``re`` took minutes on it, holding every request);
* **no growth**: ``--calls`` ``/dfa`` calls, each with a pattern no earlier call used,
  leave the server's resident memory within 100 MB of where it started;
* and a few of the earlier attacks (issue 33's): a deep and a huge schema, a catastrophic
  regex on ``/dfa``, a path traversal, each refused within its bound;
* **grammars** (issue 50): the 34-byte and doubling grammar bombs on ``/grammar``, each
  refused within 2 s and 100 MB of RSS with the server answering after it, and a 1,024-token
  ``/trace`` whose client closes its stream: the server idle again within 5 s.

Prints one row per check (the bound, what was measured, PASS or FAIL); exit status 1 when
any check fails. ~3 minutes with the default 1,500 calls on a shared 2-core CPU.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

from bench.soak import distinct_pattern, rest_call, rss_mb
from bench.table import print_table
from tests.appserver import ROOT, AppServer

TIMEOUT = 120.0
"""Seconds one call may take before it counts as a hang."""
FREEZE_SECONDS = 5.0
DFA_SECONDS = 2.0
GROWTH_MB = 100.0
FREEZE_SCHEMA = {"type": "string", "pattern": "^a{40}!$", "not": {"pattern": "^(a+)+$"}}


class Counter:
    """A loopback HTTP server that answers every GET with a small schema and counts it."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                counter.paths.append(self.path)
                body = b'{"type": "integer"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def remote_schemas(base: str) -> dict[str, dict]:
    """Schemas that would make ``jsonschema``'s default resolver fetch from ``base``."""
    return {
        "$ref": {"type": "object", "properties": {"a": {"$ref": f"{base}/ref.json"}},
                 "required": ["a"]},
        "$dynamicRef": {"type": "object", "properties": {"a": {"$dynamicRef":
                        f"{base}/dyn.json"}}, "required": ["a"]},
        "$dynamicRef at the top": {"$dynamicRef": f"{base}/top.json"},
        "$id-relative $ref": {"$id": f"{base}/base/root.json", "type": "object",
                              "properties": {"a": {"$ref": "other.json"}}, "required": ["a"]},
        "$schema": {"$schema": f"{base}/meta.json", "type": "integer"},
    }  # fmt: skip


@dataclass
class Row:
    check: str
    bound: str
    measured: str
    passed: bool

    def cells(self) -> tuple[str, str, str, str]:
        return (self.check, self.bound, self.measured, "PASS" if self.passed else "FAIL")


def timed(call, *args) -> tuple[float, str | None]:  # noqa: ANN001
    start = time.perf_counter()
    try:
        error = call(*args)
    except Exception as exc:  # noqa: BLE001 - a failure is a measurement here
        error = f"{type(exc).__name__}: {exc}"
    return time.perf_counter() - start, error


def schema_data(schema: dict | str, max_tokens: int = 8) -> list:
    """``/schema``'s REST arguments: schema, prompt, max_tokens, temperature, seed, whitespace."""
    text = schema if isinstance(schema, str) else json.dumps(schema)
    return [text, "Write it.", max_tokens, 0.0, 0, "none"]


def no_network(client: httpx.Client, url: str, counter: Counter) -> list[Row]:
    rows: list[Row] = []
    for name, schema in remote_schemas(counter.url).items():
        before = len(counter.paths)
        for endpoint, data in (
            ("schema", schema_data(schema)),
            ("schema_engines", [json.dumps(schema)]),
        ):
            seconds, _ = timed(rest_call, client, url, endpoint, data)
        sent = len(counter.paths) - before
        rows.append(Row(f"{name} on /schema and /schema_engines", "0 requests out",
                        f"{sent} requests", sent == 0))  # fmt: skip
    before = len(counter.paths)
    path = ROOT / ".tmp" / "probe-remote-schema.json"
    path.write_text(json.dumps(remote_schemas(counter.url)["$ref"]))
    cli = subprocess.run(
        [sys.executable, "-m", "fsmviz", "schema", "--engines", str(path)],
        capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT, check=False,
    )  # fmt: skip
    sent = len(counter.paths) - before
    rows.append(Row("$ref on python -m fsmviz schema --engines", "0 requests out",
                    f"{sent} requests (exit {cli.returncode})", sent == 0))  # fmt: skip
    return rows


def no_freeze(url: str) -> list[Row]:
    """The freeze schema on ``/schema`` in one thread; ``/dfa`` calls in this one meanwhile."""
    answer: list[tuple[float, str | None]] = []

    def hostile() -> None:
        with httpx.Client(timeout=TIMEOUT) as client:
            answer.append(timed(rest_call, client, url, "schema", schema_data(FREEZE_SCHEMA, 64)))

    thread = threading.Thread(target=hostile)
    thread.start()
    worst, calls = 0.0, 0
    with httpx.Client(timeout=TIMEOUT) as client:
        time.sleep(0.3)
        while thread.is_alive() or calls < 3:
            seconds, _ = timed(rest_call, client, url, "dfa", [f"[a-z]{{{calls + 1}}}x"])
            worst, calls = max(worst, seconds), calls + 1
            time.sleep(0.1)
    thread.join()
    seconds, error = answer[0]
    said = "refused" if error else "answered"
    return [
        Row("catastrophic pattern schema (a{40}) on /schema", f"<= {FREEZE_SECONDS:g} s",
            f"{said} in {seconds:.1f} s", seconds <= FREEZE_SECONDS),
        Row("/dfa while it runs (worst call)", f"<= {DFA_SECONDS:g} s",
            f"{worst:.2f} s over {calls} calls", worst <= DFA_SECONDS),
    ]  # fmt: skip


def no_growth(url: str, pid: int, calls: int) -> list[Row]:
    """``calls`` distinct ``/dfa`` patterns, one session each; a refusal (a pattern over the
    DFA's limits) is an answer, a failure to answer is not."""
    start = rss_mb(pid)
    refused, failed = 0, 0
    with httpx.Client(timeout=TIMEOUT) as client:
        for k in range(calls):
            _, error = timed(rest_call, client, url, "dfa", [distinct_pattern(k)])
            refused += error is not None and error.startswith("error")
            failed += error is not None and not error.startswith("error")
            if (k + 1) % max(calls // 5, 1) == 0:
                grew = rss_mb(pid) - start
                print(f"  {k + 1} distinct /dfa calls: RSS {grew:+.0f} MB", flush=True)
    grew = rss_mb(pid) - start
    return [Row(f"RSS growth over {calls:,} distinct /dfa patterns", f"<= {GROWTH_MB:g} MB",
                f"{grew:+.0f} MB ({refused} refused, {failed} unanswered)",
                grew <= GROWTH_MB and not failed)]  # fmt: skip


def earlier(client: httpx.Client, url: str) -> list[Row]:
    """Issue 33's attacks, refused fast: each must answer (refusing is answering)."""
    deep = '{"type": "array", "items": ' * 3000 + '{"type": "string"}' + "}" * 3000
    huge = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(30000)}}
    cases = [
        ("a 3,000-deep schema on /schema", "schema", schema_data(deep), 5.0),
        ("a 30,000-property schema on /schema", "schema", schema_data(huge), 5.0),
        ("(a|aa)+ on /dfa", "dfa", ["(a|aa)+b"], 2.0),
        ("[a-z]{1000}{1000} on /dfa", "dfa", ["[a-z]{1000}{1000}"], 5.0),
    ]
    rows: list[Row] = []
    for label, endpoint, data, bound in cases:
        seconds, error = timed(rest_call, client, url, endpoint, data)
        ok = seconds <= bound and (error is None or error.startswith("error"))
        rows.append(Row(label, f"<= {bound:g} s", f"{'refused' if error else 'answered'} in "
                        f"{seconds:.1f} s", ok))  # fmt: skip
    answer = client.get(f"{url}/gradio_api/file=/etc/passwd")
    served = answer.status_code == 200 and "root:" in answer.text
    rows.append(Row("GET /gradio_api/file=/etc/passwd", "not served",
                    f"HTTP {answer.status_code}", not served))  # fmt: skip
    return rows


def doubling(levels: int) -> str:
    """``root ::= rN``, ``r0 ::= "a"``, ``rK ::= rK-1 rK-1``: 2**N characters."""
    rules = [f"root ::= r{levels}", 'r0 ::= "a"']
    return "\n".join(rules + [f"r{k} ::= r{k - 1} r{k - 1}" for k in range(1, levels + 1)])


GRAMMAR_BOMBS = {
    'root ::= (("a"{1000}){1000}){1000} (34 bytes)': 'root ::= (("a"{1000}){1000}){1000}',
    "doubling grammar, 24 levels (378 bytes)": doubling(24),
    "doubling grammar, 40 levels": doubling(40),
    "3,000 groups nested": "root ::= " + "(" * 3000 + '"a"' + ")" * 3000,
    "surrogates: root ::= [\\uD800-\\uDFFF]": "root ::= [\\uD800-\\uDFFF]",
}
GRAMMAR_SECONDS = 2.0
GRAMMAR_MB = 100.0
IDLE_SECONDS = 5.0


def grammar_bombs(client: httpx.Client, url: str, pid: int) -> list[Row]:
    """Issue 50's grammar bombs on ``/grammar``: each refused (or answered) within 2 s and
    100 MB of the server's RSS, the server answering ``/dfa`` after each."""
    rows: list[Row] = []
    for label, grammar in GRAMMAR_BOMBS.items():
        before = rss_mb(pid)
        seconds, error = timed(rest_call, client, url, "grammar", [grammar, "Write it.", 8])
        grew = rss_mb(pid) - before
        alive = timed(rest_call, client, url, "dfa", ["ab"])[1] is None
        said = "refused" if error else "answered"
        rows.append(Row(f"{label} on /grammar", f"<= {GRAMMAR_SECONDS:g} s, {GRAMMAR_MB:g} MB",
                        f"{said} in {seconds:.2f} s, RSS {grew:+.0f} MB, "
                        f"{'alive' if alive else 'DOWN'}",
                        seconds <= GRAMMAR_SECONDS and grew <= GRAMMAR_MB and alive))  # fmt: skip
    return rows


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of the whole process so far."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def abandoned_run(url: str, pid: int) -> list[Row]:
    """A 1,024-token ``/trace`` whose client closes its stream after 3 s: how long until the
    server is idle again (under 15% of a core over half a second)."""
    with httpx.Client(timeout=TIMEOUT) as client:
        data = ["[a-z ]+", "Tell a very long story about a dragon.", 1024]
        event = client.post(f"{url}/gradio_api/call/trace", json={"data": data}).json()["event_id"]
        with client.stream("GET", f"{url}/gradio_api/call/trace/{event}"):
            time.sleep(1.0)
            start = cpu_seconds(pid)
            time.sleep(2.0)
            busy = (cpu_seconds(pid) - start) / 2.0  # the run's share of a core
        # the client has left here, closing the stream
    left = time.perf_counter()
    while time.perf_counter() - left < 30:
        start = cpu_seconds(pid)
        time.sleep(0.5)
        if cpu_seconds(pid) - start < 0.075:
            break
    idle = time.perf_counter() - left
    return [Row("a 1,024-token /trace whose client left: back to idle", f"<= {IDLE_SECONDS:g} s",
                f"{idle:.1f} s (the run had {busy:.0%} of a core)",
                idle <= IDLE_SECONDS and busy > 0.15)]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.probe", description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=1500, help="distinct /dfa calls (default 1500)")
    args = p.parse_args(argv)
    counter = Counter()
    server = AppServer(ROOT / ".tmp" / "probe-app.log")
    rows: list[Row] = []

    def add(new: list[Row]) -> None:
        rows.extend(new)
        for row in new:
            print("  " + " | ".join(row.cells()), flush=True)

    try:
        with server as url:
            assert url.startswith("http://127.0.0.1:") and server.process is not None
            pid = server.process.pid
            with httpx.Client(timeout=TIMEOUT) as client:
                print("no network ...", flush=True)
                add(no_network(client, url, counter))
                print("no freeze ...", flush=True)
                add(no_freeze(url))
                print("earlier attacks ...", flush=True)
                add(earlier(client, url))
                print("grammar bombs, an abandoned run (issue 50) ...", flush=True)
                add(grammar_bombs(client, url, pid))
                add(abandoned_run(url, pid))
            print(f"no growth: {args.calls} distinct /dfa calls ...", flush=True)
            add(no_growth(url, pid, args.calls))
            add([Row("requests the counting server saw, all told", "0",
                     str(len(counter.paths)), not counter.paths)])  # fmt: skip
    finally:
        counter.close()
    print_table("Probe: a hostile visitor against the real app (issue 49)",
                ["check", "bound", "measured", "verdict"], [r.cells() for r in rows])  # fmt: skip
    failed = [r for r in rows if not r.passed]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} checks pass")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
