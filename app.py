"""fsmviz: see regex-guided generation. `python app.py [--host] [--port] [--model]`."""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from fsmviz.app.render import CSS as DFA_CSS  # noqa: E402
from fsmviz.app.ui import RUNS_AT_ONCE, STATIC, build_ui  # noqa: E402
from fsmviz.models import BackgroundModel  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", 7860)))
    parser.add_argument("--model", default=None, help="hub id or local folder (default: bundled)")
    parser.add_argument("--device", default=None, help="cuda, mps or cpu (default: auto)")
    parser.add_argument(
        "--runs-at-once", type=int, default=RUNS_AT_ONCE, help="generations served at once"
    )
    args = parser.parse_args()

    models = BackgroundModel(args.model, args.device)
    demo = build_ui(models, args.runs_at_once)
    demo.queue(default_concurrency_limit=4, max_size=64)
    demo.launch(
        server_name=args.host,
        server_port=args.port,
        css=DFA_CSS + (STATIC / "app.css").read_text(),
        js=(STATIC / "app.js").read_text(),
        show_error=False,
    )


if __name__ == "__main__":
    main()
