"""An audit's progress on stderr, with a rate and an ETA: tqdm's bar where tqdm is
installed, else one plain line at most every ``EVERY`` seconds (and at the end).

    >>> import io
    >>> out = io.StringIO()
    >>> show = progress_line(4, out, every=0.0)
    >>> show(Progress(done=2, total=4, resumed=0, failed=0, seconds=1.0))
    >>> out.getvalue()
    'audit: 2/4 prompts (50%), 2.0/s, ETA 1 s\\n'
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

from fsmviz.audit.run import Progress

__all__ = ["EVERY", "progress_bar", "progress_line"]

EVERY = 2.0
"""Seconds between two plain progress lines."""


def progress_line(
    total: int | None, out: TextIO, every: float = EVERY
) -> Callable[[Progress], None]:
    """A progress callback for ``audit`` that prints a line now and then: done of total,
    the rate of the runs done in this call (resumed ones are not counted in it), the ETA."""
    last = [-float("inf")]

    def show(p: Progress) -> None:
        now = time.monotonic()
        final = total is not None and p.done >= total
        if now - last[0] < every and not final:
            return
        last[0] = now
        ran = p.done - p.resumed
        rate = ran / p.seconds if p.seconds > 0 else 0.0
        line = f"audit: {p.done}/{total if total is not None else '?'} prompts"
        if total:
            line += f" ({p.done / total:.0%})"
        line += f", {rate:.1f}/s"
        if total and rate > 0:
            line += f", ETA {(total - p.done) / rate:.0f} s"
        if p.resumed:
            line += f", {p.resumed} found done"
        if p.failed:
            line += f", {p.failed} failed"
        print(line, file=out, flush=True)

    return show


def progress_bar(total: int | None, out: TextIO) -> tuple[Callable[[Progress], None], Any]:
    """(callback, closer): tqdm's bar on ``out`` (its own rate and ETA), or the plain line
    where tqdm is not installed; call the closer at the end."""
    try:
        from tqdm import tqdm
    except ImportError:
        return progress_line(total, out), lambda: None
    bar = tqdm(total=total, file=out, unit="prompt", desc="audit", mininterval=1.0)

    def show(p: Progress) -> None:
        bar.update(p.done - bar.n)
        if p.failed or p.resumed:
            bar.set_postfix(found_done=p.resumed, failed=p.failed, refresh=False)

    return show, bar.close
