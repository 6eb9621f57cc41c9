"""``fsmviz.cache.BoundedCache``: each key built once, even when asked for at once.

Threads that ask for a key another thread is building wait for that build (an audit's
first runs all ask for the same index at once); builds of different keys still overlap,
an error reaches every waiter and is not kept, and a build that asks for its own key
does not wait on itself. Each test takes milliseconds: the builds wait on events, not
on the clock, and every wait has a timeout so that a regression fails instead of hanging.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from fsmviz.cache import BoundedCache

WAIT = 10.0  # seconds: only a broken cache ever waits this long


def test_concurrent_callers_of_one_key_share_one_build() -> None:
    cache: BoundedCache[object] = BoundedCache(maxsize=4)
    calls: list[int] = []
    release = threading.Event()

    def build() -> object:
        calls.append(1)
        assert release.wait(WAIT)
        return object()

    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = [pool.submit(cache.get_or_build, "k", build) for _ in range(6)]
        while not calls:  # one build has started; the others are asking meanwhile
            threading.Event().wait(0.001)
        threading.Event().wait(0.05)
        release.set()
        values = [future.result(timeout=WAIT) for future in futures]
    assert len(calls) == 1
    assert all(value is values[0] for value in values)
    assert cache.peek("k") is values[0] and not cache._building  # nothing left in flight


def test_builds_of_different_keys_overlap() -> None:
    cache: BoundedCache[str] = BoundedCache(maxsize=4)
    both = threading.Barrier(2, timeout=WAIT)  # each build waits until the other runs too

    def build(key: str) -> str:
        both.wait()
        return key

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(cache.get_or_build, k, lambda k=k: build(k)) for k in "ab"]
        assert [future.result(timeout=WAIT) for future in futures] == ["a", "b"]


def test_a_failed_build_reaches_its_waiters_and_is_not_kept() -> None:
    cache: BoundedCache[int] = BoundedCache(maxsize=4)
    started, release = threading.Event(), threading.Event()

    def broken() -> int:
        started.set()
        assert release.wait(WAIT)
        raise ValueError("no index for you")

    with ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(cache.get_or_build, "k", broken)
        assert started.wait(WAIT)
        second = pool.submit(cache.get_or_build, "k", lambda: 7)  # waits for the first
        threading.Event().wait(0.05)
        release.set()
        for future in (first, second):
            with pytest.raises(ValueError, match="no index"):
                future.result(timeout=WAIT)
    assert cache.get_or_build("k", lambda: 7) == 7  # the error was not cached


def test_a_build_that_asks_for_its_own_key_does_not_wait_on_itself() -> None:
    cache: BoundedCache[int] = BoundedCache(maxsize=4)

    def build() -> int:
        return cache.get_or_build("k", lambda: 1) + 1

    with ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(cache.get_or_build, "k", build).result(timeout=WAIT) == 2
    assert cache.peek("k") == 2 and len(cache) == 1
