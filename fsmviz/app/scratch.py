"""Each run's temporary files (the downloads), removed once they are no longer served.

A run's downloads are written to a fresh ``fsmviz-<pid>-…`` folder inside Gradio's own
cache folder (``GRADIO_TEMP_DIR``), from where Gradio serves them as they are, without a
copy of its own. (Gradio's ``delete_cache`` cannot be trusted with them: a streaming event
that first updates other outputs gives the session its own copy of the File component,
whose files that sweep never sees; measured, every page run's copies stayed forever.)

``Sweeper`` removes this process's folders older than the server's ``--file-ttl`` every
sixth of it, and all of them when the server stops; another process's folders are never
touched. So anonymous traffic leaves at most ``--file-ttl`` worth of run folders on disk.

>>> folder = run_folder()
>>> folder.name.startswith(f"fsmviz-{os.getpid()}-")
True
>>> remove_folders() >= 1, folder.exists()
(True, False)
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["Sweeper", "cache_folder", "remove_folders", "run_folder"]


def cache_folder() -> Path:
    """Gradio's cache folder, whose files it serves (as ``gradio.utils.get_upload_folder``)."""
    from gradio.utils import get_upload_folder

    return Path(get_upload_folder())


def _prefix() -> str:
    return f"fsmviz-{os.getpid()}-"


def run_folder() -> Path:
    """A fresh folder for one run's files, in Gradio's cache folder."""
    root = cache_folder()
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=_prefix(), dir=root))


def remove_folders(age: float | None = None) -> int:
    """Remove this process's run folders older than ``age`` seconds (None: all of them);
    returns how many were removed."""
    now = time.time()
    removed = 0
    for folder in cache_folder().glob(f"{_prefix()}*"):
        try:
            old = age is None or now - folder.stat().st_mtime > age
        except OSError:
            continue
        if old and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


class Sweeper:
    """A daemon thread that removes run folders older than ``age`` seconds, every
    ``age / 6`` seconds (at least every second); ``stop()`` ends it and removes them all."""

    def __init__(self, age: float):
        self.age = age
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fsmviz-sweeper", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        every = max(self.age / 6, 1.0)
        while not self._stopped.wait(every):
            remove_folders(self.age)

    def stop(self) -> None:
        self._stopped.set()
        remove_folders()
