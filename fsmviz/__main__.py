"""``python -m fsmviz``: see ``fsmviz.cli``."""

import os
import sys

from fsmviz.cli import main

status = main()
if "torch" in sys.modules:
    # The model's daemon thread and torch's worker threads can abort the interpreter's
    # shutdown ("terminate called without an active exception", status -6) after the
    # work is done; everything is written, so leave without tearing them down.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
raise SystemExit(status)
