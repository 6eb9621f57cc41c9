"""The real app (``app.py``, bundled model) in its own process, for tests and benchmarks.

``AppServer`` starts it on a free port in its own process group, waits until the page
answers and a one-token ``/trace`` call has come back (so the model is loaded and warm),
and kills the whole group on exit. The app's output goes to a log file whose tail is
quoted when the start fails. With ``url=`` it starts nothing and only waits for an app that
is already running (``FSMVIZ_E2E_URL`` in the tests).

Used by the ``app_server`` fixture in ``tests/conftest.py`` and by ``bench/load_bench.py``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT = 300  # s: the first start converts the bundled model (~20 s when idle)
LOCAL = "127.0.0.1,localhost"


class AppStartError(RuntimeError):
    """The app did not start; the message ends with the tail of its log."""


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


class AppServer:
    """``with AppServer(log_path) as url:`` — the app, ready, at ``url`` (no trailing /)."""

    def __init__(
        self,
        log_path: Path,
        url: str | None = None,
        timeout: float = STARTUP_TIMEOUT,
        args: tuple[str, ...] = (),
    ) -> None:
        self.args = args
        """Extra command-line arguments for ``app.py``."""
        self.log_path = Path(log_path)
        self.url = url.rstrip("/") if url else None
        self.timeout = timeout
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> str:
        # gradio_client and urllib must reach 127.0.0.1 directly, never through a proxy.
        os.environ["NO_PROXY"] = os.environ["no_proxy"] = LOCAL
        if self.url is None:
            self._start()
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        assert self.url is not None
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _start(self) -> None:
        tmp = ROOT / ".tmp"
        cache = tmp / f"gradio-{self.log_path.stem}"  # its own: an app clears its cache on exit
        cache.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {
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
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    str(ROOT / "app.py"),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    *self.args,
                ],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, killed as a whole in stop()
            )

    def _fail(self, why: str) -> AppStartError:
        tail = self.log_path.read_text(errors="replace")[-3000:] if self.process else ""
        return AppStartError(f"the app did not start: {why}\n--- app log ---\n{tail}")

    def _check_alive(self, deadline: float) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise self._fail(f"exited with code {self.process.returncode}")
        if time.monotonic() > deadline:
            raise self._fail(f"{self.url} was not ready within {self.timeout:.0f} s")

    def _wait_ready(self) -> None:
        from concurrent.futures import TimeoutError as FutureTimeout

        from gradio_client import Client

        deadline = time.monotonic() + self.timeout
        while not answers(self.url + "/"):
            self._check_alive(deadline)
            time.sleep(0.5)
        # The page answers before the model has loaded; /trace waits for it server-side.
        job = Client(self.url + "/", verbose=False).submit(
            "[0-9]", "One digit:", 1, 0.0, 0, api_name="/trace"
        )
        while True:
            try:
                job.result(timeout=1)
                return
            except FutureTimeout:
                self._check_alive(deadline)

    def stop(self) -> None:
        """Kill the app's process group (SIGTERM, then SIGKILL after 15 s)."""
        process, self.process = self.process, None
        stop_group(process, grace=15)


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
