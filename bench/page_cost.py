"""Chromium's CPU per user action, for app copies side by side: a before/after check of
the page's cost on a loaded machine (CPU seconds, never wall).

    python -m bench.page_cost old=/tmp/old-copy:7861 new=.:7862 --reps 4

Each ``LABEL=DIR:PORT`` is an app started from ``DIR`` (its own ``fsmviz``, on ``PORT``)
and opened in a Chromium of its own (``scripts.pagecapture``'s flags); the copies take
turns, action by action. Each action is measured from just before it to 3 s after it is
over (the idle page's ~0.1 CPU-s a second included: the ``idle`` row is 3 s of nothing):

- ``edit``: a new regex typed in ``#regex textarea``, until the new drawing is in;
- ``run``: Generate, 16 tokens, the shadow run skipped, until the status says Done;
- ``step``: a click on a row of the step table.

Columns: Chromium's process tree CPU-s (psutil: browser and every child), the app's
CPU-s, CDP Performance deltas (TaskDuration, ScriptDuration, LayoutDuration,
RecalcStyleDuration, in seconds of the renderer's main thread: wall-like under load),
the events sent (queue joins), and the tree's CPU-s by process type. Medians last.
Not part of ``python -m bench`` (it needs two app copies).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import urllib.request

import psutil
from playwright.sync_api import sync_playwright

sys.path.insert(0, os.getcwd())
from scripts.pagecapture import (  # noqa: E402
    ARGS,
    CHROMIUM,
    LOADED_WITH_REGEX,
    SKIP_OFFERED,
    TRACKER,
)

PATTERNS = [
    r"[a-z]{3}-\d{2}",
    r"(cat|dog)s? (big|small)",
    r"\d{3}\.\d{2} [A-Z][a-z]+",
    r"(yes|no|maybe)!",
    r"[A-Z]{2}[0-9]{4}",
    r"(red|blue|green) [a-z]+",
]
METRICS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")


def tree_cpu(proc, by=None):
    t = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            c = p.cpu_times()
            x = c.user + c.system + c.children_user + c.children_system
            t += x
            if by is not None:
                cl = " ".join(p.cmdline())
                kind = cl.split("--type=")[1].split()[0] if "--type=" in cl else "browser"
                by[kind] = by.get(kind, 0) + x
        except psutil.Error:
            pass
    return t


def start_app(d, port):
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        OMP_NUM_THREADS="1",
        PYTHONPATH=os.path.abspath(d),
        GRADIO_ANALYTICS_ENABLED="False",
    )
    log = open(f".tmp/page_cost_{port}.log", "w")  # noqa: SIM115  (the app's, while it runs)
    proc = subprocess.Popen(
        [os.path.abspath(".venv/bin/python"), "app.py", "--host", "127.0.0.1", "--port", str(port)],
        cwd=d,
        env=env,
        stdout=log,
        stderr=log,
    )
    return proc


def wait_up(port, proc):
    for _ in range(600):
        if proc.poll() is not None:
            raise SystemExit(f"app on {port} died")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
            return
        except Exception:
            time.sleep(1)
    raise SystemExit("app not up")


class Side:
    def __init__(self, pw, label, port, app):
        self.label, self.app = label, psutil.Process(app.pid)
        self.browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=[*ARGS, f"--fsmviz-probe={label}"]
        )
        self.root = next(
            p
            for p in psutil.process_iter(["cmdline"])
            if f"--fsmviz-probe={label}" in " ".join(p.info["cmdline"] or [])
            and "--type=" not in " ".join(p.info["cmdline"] or [])
        )
        self.page = self.browser.new_page(viewport={"width": 1440, "height": 900})
        self.page.set_default_timeout(300_000)
        self.page.goto(f"http://127.0.0.1:{port}/")
        self.page.wait_for_selector("body[data-restored=yes]", state="attached")
        self.page.wait_for_function(LOADED_WITH_REGEX)
        self.cdp = self.page.context.new_cdp_session(self.page)
        self.cdp.send("Performance.enable")
        self.rows = {}
        self.joins = 0
        self.page.on("request", self._req)

    def _req(self, r):
        if "queue/join" in r.url:
            self.joins += 1

    def metrics(self):
        m = {x["name"]: x["value"] for x in self.cdp.send("Performance.getMetrics")["metrics"]}
        return [m[k] for k in METRICS]

    def measure(self, name, act, settle=1.5):
        b0, b1 = {}, {}
        c0, a0, m0, j0 = tree_cpu(self.root, b0), self.app.cpu_times(), self.metrics(), self.joins
        act(self.page)
        self.page.wait_for_timeout(settle * 1000)
        c1, a1, m1 = tree_cpu(self.root, b1), self.app.cpu_times(), self.metrics()
        row = [
            c1 - c0,
            (a1.user + a1.system) - (a0.user + a0.system),
            *[b - a for a, b in zip(m0, m1, strict=True)],
            self.joins - j0,
            *[
                b1.get(k, 0) - b0.get(k, 0)
                for k in ("renderer", "browser", "gpu-process", "utility")
            ],
        ]
        self.rows.setdefault(name, []).append(row)
        print(self.label, name, " ".join(f"{x:.2f}" for x in row), flush=True)


def edit(pattern):
    def act(page):
        page.evaluate(
            "() => document.querySelectorAll('#dfa .dfa-view').forEach(e => e.dataset.old = 1)"
        )
        page.fill("#regex textarea", pattern)
        page.wait_for_selector("#dfa .dfa-view:not([data-old])", state="attached")

    return act


def run16(page):
    page.click("#run")
    page.wait_for_selector("#dfa .lights", state="attached")
    hidden = f"document.querySelector('{TRACKER}')?.classList.contains('hide')"
    page.wait_for_function(f"() => ({SKIP_OFFERED})() || {hidden}")
    page.evaluate(f"() => ({SKIP_OFFERED})()?.click()")
    page.wait_for_function(f"() => {hidden}")
    page.wait_for_function(
        "() => /Done/.test(document.querySelector('#status')?.textContent || '')"
    )


def step(i):
    i = 1 + i % 2

    def act(page):
        page.click(f"#steps tbody tr[data-step='{i}']")

    return act


def idle(page):
    pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("apps", nargs="+")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    specs = []
    for s in a.apps:
        label, rest = s.split("=")
        d, port = rest.split(":")
        specs.append((label, d, int(port)))
    procs = [start_app(d, port) for _, d, port in specs]
    try:
        for (_, _, port), pr in zip(specs, procs, strict=True):
            wait_up(port, pr)
        with sync_playwright() as pw:
            pairs = zip(specs, procs, strict=True)
            sides = [Side(pw, label, port, pr) for (label, _, port), pr in pairs]
            for s in sides:  # set inputs, warm up: one edit + one run
                s.page.fill("#prompt textarea", "Say something.")
                box = s.page.locator("#max-tokens input[type=number]")
                box.fill("16")
                box.press("Enter")
                edit(PATTERNS[-1])(s.page)
                s.page.wait_for_timeout(2000)
                run16(s.page)
                s.page.wait_for_timeout(2000)
            for r in range(a.reps):
                for s in sides if r % 2 == 0 else sides[::-1]:
                    s.measure("idle", idle, settle=3.0)
                    s.measure("edit", edit(PATTERNS[r % (len(PATTERNS) - 1)]), settle=3.0)
                    s.measure("run", run16, settle=3.0)
                    s.measure("step", step(r + 1), settle=3.0)
            print(
                "\nmedian over reps: chromium_cpu app_cpu "
                + " ".join(METRICS)
                + " joins renderer browser gpu utility"
            )
            for s in sides:
                for name, rows in s.rows.items():
                    med = [statistics.median(c) for c in zip(*rows, strict=True)]
                    print(f"{s.label:6} {name:5} " + " ".join(f"{x:6.2f}" for x in med))
            for s in sides:
                s.browser.close()
    finally:
        for pr in procs:
            pr.terminate()
        for pr in procs:
            try:
                pr.wait(20)
            except Exception:
                pr.kill()


if __name__ == "__main__":
    main()
