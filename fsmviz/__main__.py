"""``python -m fsmviz``: see ``fsmviz.cli``."""

from .cli import main

raise SystemExit(main())
