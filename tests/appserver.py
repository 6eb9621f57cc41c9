"""The real app (``app.py``, bundled model) in its own process, for tests and benchmarks.

``AppServer`` starts it on a free port in its own process group, waits until the page
answers and a one-token ``/trace`` call has come back (so the model is loaded and warm),
and kills the whole group on exit. The app's output goes to a log file whose tail is
quoted when the start fails. With ``url=`` it starts nothing and only waits for an app that
is already running (``FSMVIZ_E2E_URL`` in the tests).

Used by the ``app_server`` fixture in ``tests/conftest.py`` and by ``bench/load_bench.py``.

``ServerProcess`` is the same life for a model server (``vllmserver.VllmServer``,
``llamaserver.LlamaServer``): started on a free port in its own process group, waited for
until a URL answers, warmed with one constrained completion, its group killed on exit; a
subclass says only its command, its environment, and what to ask.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT = 300  # s: the first start converts the bundled model (~20 s when idle)
LOCAL = "127.0.0.1,localhost"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def stop_group(process: subprocess.Popen | None, grace: float) -> None:
    """Kill ``process``'s whole process group (it was started with ``start_new_session``):
    SIGTERM, then SIGKILL after ``grace`` seconds."""
    if process is None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=grace)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=grace)


class ServerStartError(RuntimeError):
    """A model server did not start; the message ends with the tail of its log."""


class ServerProcess:
    """``with Server(log_path) as url:`` — a model server, ready and warm (one constrained
    completion done), at ``url`` (its root, without ``/v1``). ``started_in`` is how long
    the start took, in seconds.

    A subclass sets ``what`` (its name in messages), ``ready_path`` (a GET that answers 200
    once it is up), ``warm_path`` and ``warm_body`` (the first completion, posted as JSON),
    ``grace`` (seconds between SIGTERM and SIGKILL), ``startup_timeout``, and writes
    ``command(port)``; it may change ``environment()``, ``cwd``, ``installed()`` and
    ``not_installed`` (what to run first).
    """

    what: ClassVar[str] = "the server"
    ready_path: ClassVar[str] = "/health"
    warm_path: ClassVar[str] = "/v1/completions"
    warm_body: ClassVar[Mapping[str, Any]] = {}
    grace: ClassVar[float] = 10.0
    poll: ClassVar[float] = 0.5
    not_installed: ClassVar[str] = "it is not installed"
    error: ClassVar[type[ServerStartError]] = ServerStartError
    cwd: ClassVar[Path | None] = None
    startup_timeout: ClassVar[float] = STARTUP_TIMEOUT
    default_port: ClassVar[int] = 8000

    def __init__(
        self,
        log_path: Path,
        port: int | None = None,
        timeout: float | None = None,
        args: tuple[str, ...] = (),
    ) -> None:
        self.log_path = Path(log_path)
        self.port = port
        self.timeout = self.startup_timeout if timeout is None else timeout
        self.args = args
        """Extra arguments for the server's command line."""
        self.url: str | None = None
        self.process: subprocess.Popen | None = None
        self.started_in = 0.0

    def __enter__(self) -> str:
        os.environ["NO_PROXY"] = os.environ["no_proxy"] = LOCAL
        started = time.monotonic()
        self._start()
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.started_in = time.monotonic() - started
        assert self.url is not None
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def command(self, port: int) -> list[str]:
        raise NotImplementedError

    def installed(self) -> bool:
        return True

    def environment(self) -> dict[str, str]:
        return {**os.environ, "NO_PROXY": LOCAL, "no_proxy": LOCAL}

    def _start(self) -> None:
        if not self.installed():
            raise self.error(self.not_installed)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        if self.cwd is not None:
            self.cwd.mkdir(parents=True, exist_ok=True)
        port = self.port or free_port()
        self.url = f"http://127.0.0.1:{port}"
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                self.command(port),
                cwd=self.cwd,
                env=self.environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, killed as a whole in stop()
            )

    def _fail(self, why: str) -> ServerStartError:
        tail = self.log_path.read_text(errors="replace")[-3000:] if self.log_path.exists() else ""
        return self.error(f"{self.what} did not start: {why}\n--- its log ---\n{tail}")

    def _check_alive(self, deadline: float) -> None:
        """Fail the start if the process has exited or the deadline has passed."""
        if self.process is not None and self.process.poll() is not None:
            raise self._fail(f"it exited with code {self.process.returncode}")
        if time.monotonic() > deadline:
            raise self._fail(f"{self.url} was not ready within {self.timeout:.0f} s")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.timeout
        while not answers(f"{self.url}{self.ready_path}"):
            self._check_alive(deadline)
            time.sleep(self.poll)
        self._warm(deadline)

    def _warm(self, deadline: float) -> None:
        """One constrained completion: the first one sets up the server's constraint
        engine (48 s measured for vLLM on the busy machine, 5 s after), which no test
        should time."""
        import json

        request = urllib.request.Request(
            f"{self.url}{self.warm_path}",
            json.dumps(self.warm_body).encode(),
            {"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=max(deadline - time.monotonic(), 1)):
                pass
        except OSError as error:
            raise self._fail(f"its first completion failed: {error}") from error

    def stop(self) -> None:
        """Kill the server's process group (SIGTERM, then SIGKILL after ``grace`` s)."""
        process, self.process = self.process, None
        stop_group(process, grace=self.grace)

    def banner(self, url: str) -> str:
        """What ``main`` prints once the server is up."""
        return f"{self.what} serves at {url}"

    @classmethod
    def main(cls, argv: list[str], log_path: Path) -> None:
        """Serve until Ctrl-C (``python tests/vllmserver.py --port 8000``); arguments
        after ``--port`` go to the server."""
        import argparse

        sys.path.insert(0, str(ROOT))  # run as a script: fsmviz from this checkout
        parser = argparse.ArgumentParser(description=f"Serve the bundled model: {cls.what}.")
        parser.add_argument("--port", type=int, default=cls.default_port)
        known, extra = parser.parse_known_args(argv)
        server = cls(log_path, port=known.port, args=tuple(extra))
        with server as url:
            print(f"{server.banner(url)} (log: {log_path}); Ctrl-C stops it")
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass


class AppStartError(ServerStartError):
    """The app did not start; the message ends with the tail of its log."""


class AppServer(ServerProcess):
    """``with AppServer(log_path) as url:`` — the app, ready, at ``url`` (no trailing /).
    With ``url=`` it starts nothing and only waits for an app already running there."""

    what = "the app"
    ready_path = "/"
    grace = 15.0
    error = AppStartError
    cwd = ROOT

    def __init__(
        self,
        log_path: Path,
        url: str | None = None,
        timeout: float = STARTUP_TIMEOUT,
        args: tuple[str, ...] = (),
    ) -> None:
        super().__init__(log_path, timeout=timeout, args=args)
        self.url = url.rstrip("/") if url else None

    def _start(self) -> None:
        if self.url is None:  # else an app already running: only wait for it
            super()._start()

    def command(self, port: int) -> list[str]:
        host = ["--host", "127.0.0.1", "--port", str(port)]
        return [sys.executable, str(ROOT / "app.py"), *host, *self.args]

    def environment(self) -> dict[str, str]:
        tmp = ROOT / ".tmp"
        cache = tmp / f"gradio-{self.log_path.stem}"  # its own: an app clears its cache on exit
        cache.mkdir(parents=True, exist_ok=True)
        return {
            **os.environ,
            "GRADIO_ANALYTICS_ENABLED": "False",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "NO_PROXY": LOCAL,
            "no_proxy": LOCAL,
            "GRADIO_TEMP_DIR": str(cache),
            "TMPDIR": str(tmp),
            "TOKENIZERS_PARALLELISM": "false",
            "PYTHONUNBUFFERED": "1",
        }

    def _warm(self, deadline: float) -> None:
        """The page answers before the model has loaded; a one-token ``/trace`` call
        waits for it server-side."""
        from concurrent.futures import TimeoutError as FutureTimeout

        from gradio_client import Client

        job = Client(self.url + "/", verbose=False).submit(
            "[0-9]", "One digit:", 1, 0.0, 0, api_name="/trace"
        )
        while True:
            try:
                job.result(timeout=1)
                return
            except FutureTimeout:
                self._check_alive(deadline)


def serve_app(name: str, args: tuple[str, ...] = (), url: str | None = None):
    """A pytest fixture's body for one app server: ``yield from serve_app("menu-app",
    ("--model", …))`` yields the URL of the app started with ``args`` (logged to
    ``.tmp/<name>-<worker>.log``), fails the test with the log's tail if it does not start,
    and stops it when the fixture ends. With ``url``, waits for an app already there."""
    import pytest

    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    server = AppServer(ROOT / ".tmp" / f"{name}-{worker}.log", url=url, args=args)
    try:
        url = server.__enter__()
    except AppStartError as error:
        pytest.fail(str(error))
    try:
        yield url
    finally:
        server.stop()
