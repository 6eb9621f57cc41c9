"""Start the page: ``python app.py`` (a Space's entry point) or ``python -m fsmviz serve``.

The order matters, and is the point of this module:

1. **Arguments first**, before torch or gradio is imported (9 s between them), so that
   ``--help`` and a typo answer at once.
2. **``spaces`` before torch** on a ZeroGPU Space (``SPACES_ZERO_GPU`` set): it patches torch.
3. **The device is checked** before anything is served: ``--device cuda`` on a machine
   without CUDA is a message and exit status 2, not a page whose first run fails.
4. **The model**: loaded in the background while the page starts (the page says "loading"),
   except on ZeroGPU, where it is loaded and placed on ``cuda`` before ``launch()`` and
   its forward passes run in the caller's thread (``fsmviz.app.zerogpu``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

__all__ = ["main", "parser"]

RUNS_AT_ONCE = 16  # as fsmviz.app.ui.RUNS_AT_ONCE, which cannot be imported this early
FILE_TTL = 1800  # as fsmviz.app.ui.FILE_TTL
SESSIONS = 500
"""Visitors whose page state (Gradio's per-session copy of the page, ~0.2 MB, and their
last trace) is kept; the least recently active goes first. Every REST call is a session
of its own, so without this bound anonymous API traffic grows the memory until 10,000."""
MAX_UPLOAD = "256kb"
"""The one upload on the page is the Audit tab's prompts file (``audit_page.MAX_FILE_BYTES``);
what Gradio's upload route takes is swept with the cache (``--file-ttl``)."""


def parser() -> argparse.ArgumentParser:
    """The command line; reading it imports nothing heavy."""
    p = argparse.ArgumentParser(
        prog="app.py",
        description="fsmviz: see regex-guided generation with a real language model.",
    )
    p.add_argument(
        "--host",
        default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
        help="address to serve on, 0.0.0.0 for every interface (default: "
        "$GRADIO_SERVER_NAME or %(default)s)",
    )
    p.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("GRADIO_SERVER_PORT", "7860")),
        help="port (default: $GRADIO_SERVER_PORT or %(default)s)",
    )
    p.add_argument(
        "--model",
        action="append",
        metavar="[NAME=]MODEL",
        help="hub id or local model folder (default: $FSMVIZ_MODEL=A,B,..., else the bundled"
        " SmolLM2-135M-Instruct, else it from the hub). Repeatable: the first is the app's, "
        "the others offered in the model menu by NAME, loaded when first picked, two kept",
    )
    p.add_argument(
        "--device",
        choices=("cuda", "mps", "cpu"),
        default=None,
        help="where the model runs (default: cuda, then mps, then cpu)",
    )
    p.add_argument(
        "--runs-at-once",
        type=int,
        default=RUNS_AT_ONCE,
        help="generations served at once, more wait in the queue (default: %(default)s)",
    )
    p.add_argument(
        "--file-ttl",
        type=int,
        default=FILE_TTL,
        metavar="SECONDS",
        help="how long a run's downloads are served before they are deleted (default: %(default)s)",
    )
    p.add_argument(
        "--server",
        action="append",
        default=None,
        metavar="NAME=URL",
        help="offer an OpenAI-compatible server (vLLM) as a model on the page, by NAME; "
        "repeatable (default: $FSMVIZ_SERVERS, NAME=URL,NAME=URL). Visitors choose a "
        "name, never type a URL",
    )
    p.add_argument(
        "--mcp",
        action="store_true",
        default=os.environ.get("GRADIO_MCP_SERVER", "").lower() == "true",
        help="also serve the tools dfa, diagnose and trace over MCP, at "
        "/gradio_api/mcp/ (default: off, on when $GRADIO_MCP_SERVER is true)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> None:
    """Parse ``argv`` (default: ``sys.argv[1:]``), check the device, load, serve."""
    args = parser().parse_args(argv)
    from fsmviz.app.backend import BUNDLED, ENV, parse_servers  # no gradio: reads NAME=URL
    from fsmviz.app.local_models import configure_models, parse_models, split_models
    from fsmviz.errors import InputError

    given = args.server if args.server is not None else os.environ.get(ENV, "").split(",")
    args.model, offered = split_models(args.model, os.environ.get("FSMVIZ_MODEL"))
    try:
        args.servers = parse_servers(given)
        args.offered = parse_models(offered, taken=[BUNDLED, *args.servers])
    except InputError as error:
        print(f"app.py: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    from fsmviz.app.zerogpu import zero_gpu

    on_zero_gpu = zero_gpu()
    if on_zero_gpu:
        import spaces  # noqa: F401  # before torch: it patches torch for ZeroGPU

    from fsmviz.generation.models import BackgroundModel, ModelLoadError, pick_device

    try:
        device = pick_device("cuda" if on_zero_gpu else args.device)
    except ModelLoadError as error:
        print(f"app.py: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    models = BackgroundModel(
        args.model,
        str(device),
        threaded=False if on_zero_gpu else None,
        wait=on_zero_gpu,
        freeze_start_up=True,
    )
    configure_models(args.offered, str(device), threaded=False if on_zero_gpu else None)
    serve(models, args)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def serve(models, args: argparse.Namespace) -> None:  # noqa: ANN001 - BackgroundModel
    """Build the page around ``models`` and serve it until interrupted."""
    import atexit
    import signal

    from fsmviz.app.scratch import Sweeper
    from fsmviz.app.sessions import calm_queue, lighten_sessions
    from fsmviz.app.ui import STATIC, build_ui
    from fsmviz.drawing.render import CSS as DFA_CSS

    lighten_sessions()  # a session's copy of the page made on demand (anonymous API calls)
    demo = build_ui(
        models,
        args.runs_at_once,
        file_ttl=max(args.file_ttl, 1),
        servers=getattr(args, "servers", None),
    )
    if args.mcp:
        from fsmviz.app.leaving import mcp_calls_end_with_their_request

        mcp_calls_end_with_their_request()  # an MCP client that leaves stops its run too
    demo.queue(default_concurrency_limit=4, max_size=64)
    calm_queue(demo)  # no 1 ms polling while idle (fsmviz.app.sessions)
    sweeper = Sweeper(age=max(args.file_ttl, 1))  # each run's downloads (fsmviz.app.scratch)
    atexit.register(sweeper.stop)
    # SIGTERM (a container's stop) ends the server as Ctrl-C does: Gradio closes, and the
    # run folders and Gradio's cache are removed on the way out.
    signal.signal(signal.SIGTERM, _interrupt)
    demo.launch(
        max_file_size=MAX_UPLOAD,
        state_session_capacity=SESSIONS,
        server_name=args.host,
        server_port=args.port,
        css=DFA_CSS + (STATIC / "app.css").read_text(),
        js=(STATIC / "app.js").read_text(),
        # Every error fsmviz raises reaches the caller as a message (fsmviz.app.api.answers);
        # so do Gradio's own refusals ("needed: 6, got: 5" for a REST call short of
        # arguments), rather than {"error": null}. A message only, never a traceback.
        show_error=True,
        mcp_server=args.mcp,
    )
