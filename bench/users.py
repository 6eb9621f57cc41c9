"""What the benches of many users share: the requests they send, one streamed request
timed, and a number of users released at the same moment.

Used by ``bench/crowd_bench.py`` (threads calling ``stream`` in one process),
``bench/load_bench.py`` (``gradio_client`` sessions against the app) and
``scripts/gpu_check.py`` (the same crowd on a GPU). Imports only the standard library
(``timed_stream`` loads the engine when called): the GPU machine has no gradio.

>>> results, wall = at_once(3, lambda user: user * user)
>>> results, wall >= 0
([0, 1, 4], True)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

PATTERNS = [
    (r"[a-z ]{200,}", "Describe the sea in a few sentences."),
    (r"[0-9, ]{150,}", "Count upward from one, in digits."),
    (r"[A-Za-z ,.]{200,}", "Tell a very short story about a fox."),
    (r"[a-z]+(, [a-z]+){60,}", "List as many fruits as you can."),
]
"""(pattern, prompt) pairs whose shortest match is far longer than a request's tokens, so
that every request writes exactly the tokens it asks for."""


@dataclass(frozen=True)
class Timed:
    """One streamed request, timed: seconds from ``stream()`` to its first step and in
    all, the tokens written and why it stopped."""

    first: float
    total: float
    tokens: int
    stop_reason: str

    @property
    def rate(self) -> float:
        """Tokens per second, end to end."""
        return self.tokens / self.total


def timed_stream(model: Any, pattern: object, prompt: str, tokens: int, **options: Any) -> Timed:
    """Run ``fsmviz.stream`` for at most ``tokens`` tokens and time it."""
    from fsmviz.generation.generate import stream

    start = time.perf_counter()
    run = stream(model, pattern, prompt, max_tokens=tokens, **options)
    first: float | None = None
    for _ in run:
        if first is None:
            first = time.perf_counter() - start
    total = time.perf_counter() - start
    first = total if first is None else first
    return Timed(first, total, len(run.steps), run.trace().stop_reason)


def at_once(
    users: int, job: Callable[[int], T], timeout: float | None = None
) -> tuple[list[T], float]:
    """``job(user)`` for each of ``users`` threads, released together by a barrier: the
    results in user order, and the wall time from the release to the last one's end.
    ``timeout`` guards the barrier against a hang; an error in a job is raised here."""
    results: list[Any] = [None] * users
    errors: list[BaseException] = []
    gate = threading.Barrier(users + 1, timeout=timeout)

    def user(i: int) -> None:
        gate.wait()
        try:
            results[i] = job(i)
        except BaseException as error:  # noqa: BLE001 - raised again in the caller's thread
            errors.append(error)

    threads = [threading.Thread(target=user, args=(i,)) for i in range(users)]
    for thread in threads:
        thread.start()
    gate.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    if errors:
        raise errors[0]
    return results, wall
