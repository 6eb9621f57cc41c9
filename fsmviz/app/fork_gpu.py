"""``spaces.GPU`` played on this machine: the call in a forked process, everything pickled.

``spaces`` 0.51 runs a ``@spaces.GPU`` function in a forked worker, pickles its arguments
to the worker and pickles back every value it yields (``spaces/zero/wrappers.py``; what
that asks of the page is in ``fsmviz.app.zerogpu``). ``fork_gpu`` does exactly that with
``multiprocessing``'s fork context, explicitly pickling each value, so a value that does
not pickle fails the run here as it would on a Space. ``tests/test_zerogpu.py`` runs the
page's generation through it, and ``scripts/gpu_check.py`` a run on a real GPU.

Pass it where ``on_gpu`` takes its ``gpu`` decorator::

    calls: list[int] = []
    run = on_gpu(live_run, gpu=fork_gpu(calls))  # calls: the duration asked per call
"""

from __future__ import annotations

import multiprocessing
import pickle
import traceback
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["fork_gpu"]

_END = b"end"
_ERROR = b"error:"
JOIN_SECONDS = 60
"""How long the parent waits for a worker to exit once its values are read, before killing it."""


def fork_gpu(calls: list[int]) -> Callable[..., Callable[[Callable], Callable]]:
    """A stand-in for ``spaces.GPU``: each call runs in a forked process; arguments and
    every yielded value cross the process boundary pickled. ``calls`` records the
    ``duration`` asked for each call. An exception in the worker is raised in the caller
    as a ``RuntimeError`` carrying the worker's traceback."""

    def gpu(duration: Callable[..., int]) -> Callable[[Callable], Callable]:
        def wrap(task: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
            def handler(*args: Any, **kwargs: Any) -> Iterator[Any]:
                calls.append(duration(*args, **kwargs))
                ctx = multiprocessing.get_context("fork")
                results = ctx.SimpleQueue()
                payload = pickle.dumps((args, kwargs))

                def worker() -> None:
                    try:
                        a, k = pickle.loads(payload)
                        for value in task(*a, **k):
                            results.put(pickle.dumps(value))
                        results.put(_END)
                    except BaseException:  # noqa: BLE001 - reported to the parent
                        results.put(_ERROR + traceback.format_exc().encode())

                process = ctx.Process(target=worker, daemon=True)
                process.start()
                try:
                    while (item := results.get()) != _END:
                        if item.startswith(_ERROR):
                            raise RuntimeError(item[len(_ERROR) :].decode())
                        yield pickle.loads(item)
                finally:
                    process.join(timeout=JOIN_SECONDS)
                    if process.is_alive():
                        process.kill()

            return handler

        return wrap

    return gpu
