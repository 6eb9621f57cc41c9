"""Hostile inputs, counted and timed: every bad parameter, regex shape and command line the
attacker of issue 33 sent, each refused with a message (never ``{"error": null}``, never a
traceback). ``python -m bench.hostile`` prints one row per kind: how many were tried, how
many were answered with a message, the worst time and the worst memory.

The API rows call the endpoint functions as ``add_api`` registers them (``answered``), with
no model behind them: a refused call never waits for one (a call that reached for the model
would count as a failure). Memory: the largest Python allocation during one call
(``tracemalloc``) for the API rows, the process's peak RSS for the command-line rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from bench.table import print_table

ROOT = Path(__file__).resolve().parents[1]
BAD_VALUES = [float("nan"), float("inf"), json.loads("1e309"), None, [], [1], {}, {"a": [1]},
              True, "64", "abc", "", "x" * 1_000_000, 1.5, -1, 10**400]  # fmt: skip


class NoModel:
    def get(self, timeout=None):
        raise AssertionError("reached for the model")

    def vocabulary(self):
        return None


def api_cases() -> dict[str, list[tuple[str, dict]]]:
    base = {"trace": {"regex": "a", "prompt": "x"}, "schema": {"schema": "{}", "prompt": "x"}}
    params = []
    for value in BAD_VALUES:
        for name in ("max_tokens", "temperature", "seed", "chat"):
            valid = (name == "temperature" and value == 1.5) or (
                name == "chat" and isinstance(value, bool)
            )
            if not valid:
                params.append(("trace", {**base["trace"], name: value}))
        params.append(("diagnose", {"regex": "a", "max_tokens": value}))
        if not isinstance(value, str) or len(value) > 4000:  # any other text is a regex
            params.append(("trace", {**base["trace"], "prompt": value}))
        if isinstance(value, str):
            continue
        params.append(("trace", {**base["trace"], "regex": value}))
        params.append(("dfa", {"regex": value}))
        params.append(("diagnose", {"regex": value}))
        for name in ("max_tokens", "temperature", "seed", "whitespace"):
            if not (name == "temperature" and value == 1.5):
                params.append(("schema", {**base["schema"], name: value}))
    deep = 5000
    shapes = [
        ("dfa", {"regex": "(" * deep + "a" + ")" * deep}),
        ("dfa", {"regex": "(" * 4000 + "a" + ")" * 4000}),
        ("dfa", {"regex": "[" * 10_000}),
        ("dfa", {"regex": "a|" * 4999}),
        ("dfa", {"regex": "x" * 100_000}),
        ("dfa", {"regex": "(a|b)*a(a|b){20}"}),
        ("dfa", {"regex": "a{100000}"}),
        ("dfa", {"regex": "[\\x00-\\U0010ffff]{3}"}),
        ("diagnose", {"regex": "(" * 4000 + "a" + ")" * 4000}),
        ("diagnose", {"regex": "(a|b)*a(a|b){20}"}),
        ("schema", {"schema": "[" * 100_000 + "]" * 100_000, "prompt": "x", "whitespace": "none"}),
        ("schema", {"schema": '{"a":' * 5000 + "1" + "}" * 5000, "prompt": "x"}),
    ]
    return {
        "API parameters (/trace /dfa /diagnose /schema)": params,
        "regex and JSON shapes": shapes,
    }


def run_api(cases: list[tuple[str, dict]], may_answer: bool) -> tuple[int, int, float, float]:
    """(tried, handled, worst s, worst MB): handled is refused with a message, or, where
    ``may_answer`` (a shape that is valid, only large), answered."""
    import gradio as gr

    from fsmviz.app.api import tools
    from fsmviz.app.api.answers import answered

    api = {name: answered(fn) for name, fn in tools(NoModel()).items()}
    answered_ok, worst_s, worst_mb = 0, 0.0, 0.0
    for endpoint, call in cases:
        tracemalloc.start()
        start = time.perf_counter()
        try:
            api[endpoint](**call)
            message = "answered"
        except gr.Error as error:
            message = error.message
        worst_s = max(worst_s, time.perf_counter() - start)
        worst_mb = max(worst_mb, tracemalloc.get_traced_memory()[1] / 2**20)
        tracemalloc.stop()
        if message and (may_answer or message != "answered") and "reached for" not in message:
            answered_ok += 1
        else:
            print("  not refused:", endpoint, {k: str(v)[:20] for k, v in call.items()}, message)
    return len(cases), answered_ok, worst_s, worst_mb


def cli_cases(here: Path) -> list[list[str]]:
    (here / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (here / "binary.json").write_bytes(b"\xff\xfe")
    (here / "folder").mkdir(exist_ok=True)
    bad = os.fsdecode(b"a\xff")
    return [
        ["schema", "/dev/zero"], ["schema", "folder"], ["schema", "missing.json"],
        ["schema", "deep.json"], ["schema", "binary.json"], ["schema", "/proc/version"],
        ["dfa", "ab", "--svg", "folder"], ["dfa", "ab", "--svg", "no/folder.svg"],
        ["dfa", "ab", "--svg", "/dev/full"], ["dfa", "ab", "--svg", "/proc/version"],
        ["dfa", bad], ["diagnose", bad], ["generate", "a", bad], ["dfa", "(" * 5000],
        ["diagnose", "a", "--max-tokens", "0"], ["generate", "a", "x", "--temperature", "nan"],
        ["generate", "a", "x", "--seed", "-1"], ["generate", "a", "x", "--max-tokens", "5000"],
        ["generate", "a", "x", "--model", "/no/such/model"],
        ["schema", "deep.json", "x", "--max-tokens", "0"],
    ]  # fmt: skip


def run_cli(cases: list[list[str]], here: Path) -> tuple[int, int, float, float]:
    ok, worst_s, worst_mb = 0, 0.0, 0.0
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    for args in cases:
        start = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "fsmviz", *args],
            capture_output=True, text=True, errors="replace", cwd=here, env=env, timeout=300,
        )  # fmt: skip
        worst_s = max(worst_s, time.perf_counter() - start)
        lines = done.stderr.strip().splitlines()
        worst_mb = max(worst_mb, int(lines[-1]) / 1024)
        message = [line for line in lines[:-1] if not line.startswith("Command exited")]
        said = message[:1] and message[0].startswith(("error: ", "fsmviz schema: "))
        if done.returncode == 2 and said and "Traceback" not in done.stderr:
            ok += 1
        else:
            print("  not a clear message:", args[:3], done.returncode, message[-3:])
    return len(cases), ok, worst_s, worst_mb


def main() -> int:
    rows = []
    for name, cases in api_cases().items():
        rows.append((name, *run_api(cases, may_answer="shapes" in name)))
    with tempfile.TemporaryDirectory() as folder:
        rows.append(("command line", *run_cli(cli_cases(Path(folder)), Path(folder))))
    print_table(
        "Hostile inputs: each refused with a message",
        ["inputs", "tried", "refused (or answered)", "worst s", "worst MB"],
        rows,
    )
    return 0 if all(r[1] == r[2] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
