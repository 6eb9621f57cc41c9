"""Hugging Face ZeroGPU: a GPU attached only while a decorated function runs.

How ``spaces.GPU`` (``spaces`` 0.51) runs a function, and what that asks of us:

* The function runs in a **forked worker process**. Its arguments are pickled to the worker
  and **every value it yields is pickled back**: so the decorated function is the page's
  generation (:func:`fsmviz.app.regex_run.live_run`), yielding plain frames, and the Gradio
  updates (dicts keyed by components, which do not pickle) are made outside it. The model
  is an argument too: a ``Model`` pickles as the arguments that loaded it and is found
  again in the worker's copy of the cache (``fsmviz.generation.models``).
* The fork has none of the parent's threads, so the model's batching thread must not be
  used: on ZeroGPU the model is loaded with ``threaded=False`` (each pass in the caller's
  thread, inside the decorated call).
* ``spaces`` patches torch, so it is imported **before torch** (``fsmviz.app.server`` does
  it first thing), and the model is loaded and placed on ``cuda`` **before** ``launch()``:
  at module level the weights are packed, and each worker moves them to the real GPU.
* Each call is scheduled for ``duration`` seconds (default 60): :func:`gpu_seconds` sizes
  it from the number of tokens asked for.

Off ZeroGPU (``SPACES_ZERO_GPU`` unset) :func:`on_gpu` returns the function unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ZERO_GPU", "gpu_seconds", "on_gpu", "run_seconds", "zero_gpu"]

F = TypeVar("F", bound=Callable[..., Any])

ZERO_GPU = "SPACES_ZERO_GPU"
"""The environment variable ZeroGPU Spaces set (``true``)."""

SECONDS_PER_TOKEN = 0.05
"""A generous decode step for a small model on a shared GPU slice (~0.01-0.02 s measured
for 135M-parameter models), twice over: the constrained run, then the shadow run."""
START_SECONDS = 20
"""Attaching the GPU, moving the weights, compiling the pattern's index."""


def zero_gpu() -> bool:
    """Whether this process runs on a ZeroGPU Space (``spaces`` reads it the same way)."""
    return os.environ.get(ZERO_GPU, "").lower() in ("1", "t", "true")


def gpu_seconds(max_tokens: int, runs: int = 2) -> int:
    """GPU time to ask for ``runs`` generations of up to ``max_tokens`` tokens each (the
    page runs two: the constrained one, then the shadow).

    >>> gpu_seconds(64), gpu_seconds(1024), gpu_seconds(1024, runs=1)
    (26, 122, 71)
    """
    return START_SECONDS + round(runs * SECONDS_PER_TOKEN * int(max_tokens))


def run_seconds(model: Any, view: Any, prompt: str, options: Any) -> int:
    """``duration`` of the page's run: ``live_run(model, view, prompt, options)``."""
    return gpu_seconds(options.max_tokens)


def on_gpu(
    fn: F,
    duration: Callable[..., int] = run_seconds,
    gpu: Callable[..., Callable[[F], F]] | None = None,
) -> F:
    """``fn`` run under ``spaces.GPU(duration=duration)`` on ZeroGPU; else ``fn``.
    ``duration`` is called with ``fn``'s arguments and returns seconds.

    ``gpu`` stands in for ``spaces.GPU`` (tests pass one that forks and pickles as
    ZeroGPU does); when given, it is used wherever this runs.
    """
    if gpu is None:
        if not zero_gpu():
            return fn
        import spaces  # type: ignore[import-not-found]  # imported before torch: server.py

        gpu = spaces.GPU
    return gpu(duration=duration)(fn)
