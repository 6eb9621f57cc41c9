"""Stop ends a run at once, not at its next frame.

A run's frames come from a generator that blocks while the model writes its next token.
The page's run handler (``handlers.follow``) read them in a plain ``for`` loop and looked
at the session's ``StopMark`` only when a frame came: on a loaded 2-core machine a token
took 1-2.5 s, so Stop waited that long, and the handler then closed the frames, which
waited once more for the token in flight. Issue 47 asks for Stop → "Stopped" within 1 s.

``polled(frames, moved_on)`` iterates the frames on a thread of their own and hands them
over through a one-frame queue; while it waits it asks ``moved_on`` every ``POLL_EVERY``
seconds, and once that is true it ends at once. The frames are then closed on their own
thread as soon as their current ``next`` returns (a generator cannot be closed from
another thread while it runs): the token in flight is finished and dropped, and the
generation ends there (``live.ahead`` stops its stream when closed).

The thread runs in a copy of the caller's context, so what Gradio tells a function through
context variables (the request, the event: ``leaving.client_gone``, ZeroGPU's quota) is
seen by the frames as before.
"""

from __future__ import annotations

import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

__all__ = ["POLL_EVERY", "TICK", "polled", "ticking"]

T = TypeVar("T")

POLL_EVERY = 0.05
"""Seconds between two looks at the mark while a frame is awaited: a Stop is seen within
this (a dictionary look-up each time, nothing else)."""

_FRAME, _ERROR, _END = "frame", "error", "end"


def polled(
    frames: Iterator[T], moved_on: Callable[[], bool], every: float = POLL_EVERY
) -> Iterator[T]:
    """``frames`` as they come, ending as soon as ``moved_on()`` is true (asked every
    ``every`` seconds while a frame is awaited, and before each frame is handed over). An
    error raised by ``frames`` is raised here. Closing this generator, or its ending,
    closes ``frames`` on their own thread after their current frame.

    >>> import time
    >>> def slow():
    ...     yield 1
    ...     time.sleep(5)
    ...     yield 2
    >>> stopped = []
    >>> got = []
    >>> for frame in polled(slow(), lambda: bool(stopped)):
    ...     got.append(frame)
    ...     stopped.append(True)  # Stop pressed after the first frame
    >>> got
    [1]
    """
    handed: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=1)
    done = threading.Event()
    context = contextvars.copy_context()

    def hand(kind: str, item: object) -> None:
        while not done.is_set():  # the reader may have gone: never block for ever
            with contextlib.suppress(queue.Full):
                handed.put((kind, item), timeout=every)
                return

    def produce() -> None:
        try:
            for frame in frames:
                hand(_FRAME, frame)
                if done.is_set():  # the reader has gone: compute no further frame
                    break
        except Exception as error:  # noqa: BLE001 - handed to the reader, raised there
            hand(_ERROR, error)
        finally:
            with contextlib.suppress(Exception):
                frames.close()  # type: ignore[attr-defined]
            hand(_END, None)

    threading.Thread(target=context.run, args=(produce,), name="fsmviz-frames", daemon=True).start()
    try:
        while not moved_on():
            try:
                kind, item = handed.get(timeout=every)
            except queue.Empty:
                continue
            if kind == _END or moved_on():
                return
            if kind == _ERROR:
                raise item  # type: ignore[misc]
            yield item  # type: ignore[misc]
    finally:
        done.set()


TICK = object()
"""What ``ticking`` yields when ``every`` seconds passed with no item."""


def ticking(items: Iterator[T], every: float = 1.0) -> Iterator[T | object]:
    """``items`` as they come (iterated on a thread of their own, in the caller's
    context), and ``TICK`` each time ``every`` seconds pass without one: a handler whose
    items take long (Compare's decodings, ~10-60 s each on a CPU) can redraw its progress
    in between. An error raised by ``items`` is raised here; closing this generator
    closes ``items`` on their thread after their current item.

    >>> list(ticking(iter([1, 2])))
    [1, 2]
    """
    handed: queue.SimpleQueue[tuple[str, object]] = queue.SimpleQueue()
    done = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                handed.put((_FRAME, item))
                if done.is_set():
                    break
        except Exception as error:  # noqa: BLE001 - handed to the reader, raised there
            handed.put((_ERROR, error))
        finally:
            with contextlib.suppress(Exception):
                items.close()  # type: ignore[attr-defined]
            handed.put((_END, None))

    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(produce,), name="fsmviz-ticks", daemon=True).start()
    try:
        while True:
            try:
                kind, item = handed.get(timeout=every)
            except queue.Empty:
                yield TICK
                continue
            if kind == _END:
                return
            if kind == _ERROR:
                raise item  # type: ignore[misc]
            yield item
    finally:
        done.set()
