"""A small thread-safe LRU cache: the only kind of shared state the engine keeps.

Every ``BoundedCache``, and every function memoized by ``bounded``, signs itself in to a
weak set here, so ``clear_caches()`` can empty them all (built indexes, vocabulary tries,
loaded models, drawn SVGs…) without anyone naming them: tests and benchmarks that need a
cold start call it.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Hashable
from threading import Event, Lock, get_ident
from typing import Generic, ParamSpec, TypeVar
from weakref import WeakSet

V = TypeVar("V")
P = ParamSpec("P")

__all__ = ["BoundedCache", "OwnedCache", "bounded", "clear_caches"]

_ALL: WeakSet[BoundedCache] = WeakSet()
_FUNCTIONS: WeakSet[Callable] = WeakSet()  # ``bounded`` functions (``functools.lru_cache``)


def clear_caches() -> None:
    """Empty every ``BoundedCache`` (the next call builds or loads afresh).

    >>> squares: BoundedCache[int] = BoundedCache(maxsize=2)
    >>> squares.get_or_build(3, lambda: 9), len(squares)
    (9, 1)
    >>> clear_caches(); len(squares)
    0
    """
    for cache in list(_ALL):
        cache.clear()
    for function in list(_FUNCTIONS):
        function.cache_clear()


class _Building(Generic[V]):
    """One key's build in flight: who builds it, and what it gave (a value or an error)."""

    def __init__(self) -> None:
        self.builder = get_ident()
        self.done = Event()
        self.value: V | None = None
        self.error: BaseException | None = None


class BoundedCache(Generic[V]):
    """Keeps the ``maxsize`` most recently used values. ``get_or_build`` runs ``build``
    outside the lock, so a slow build never blocks readers of other keys, and builds each
    key once: a caller that asks for a key another thread is building waits for that build
    and gets its value (or its error), where each used to build it again (an audit's first
    ``concurrency`` runs each built the same index: 0.8 s of CPU apiece for a schema's
    regex). What is in flight is at most one entry per building thread.

    >>> cache: BoundedCache[int] = BoundedCache(maxsize=2)
    >>> cache.get_or_build("a", lambda: 1), cache.get_or_build("a", lambda: 2)
    (1, 1)
    """

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._building: dict[Hashable, _Building[V]] = {}
        self._lock = Lock()
        _ALL.add(self)

    def get_or_build(self, key: Hashable, build: Callable[[], V]) -> V:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            building = self._building.get(key)
            ours = building is None
            if building is None:
                building = self._building[key] = _Building()
        if not ours and building.builder == get_ident():  # a build that asks for its
            return self._keep(key, build())  # own key builds it again, not waits on itself
        if not ours:
            building.done.wait()
            if building.error is not None:
                raise building.error
            return building.value  # type: ignore[return-value]
        try:
            building.value = self._keep(key, build())
            return building.value
        except BaseException as error:
            building.error = error
            raise
        finally:
            with self._lock:
                del self._building[key]
            building.done.set()

    def put(self, key: Hashable, value: V) -> None:
        """Keep ``value`` under ``key``: a value made elsewhere, with no build to wait for."""
        self._keep(key, value)

    def _keep(self, key: Hashable, value: V) -> V:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)
        return value

    def peek(self, key: Hashable) -> V | None:
        """The value kept under ``key``, if any (not built, not moved to the end)."""
        with self._lock:
            return self._items.get(key)

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


class OwnedCache(Generic[V]):
    """A ``BoundedCache`` of values each made from one object, its *owner* (a trie, a
    tokenizer): kept under the owner's ``id`` (such objects are unhashable, or slow to
    hash), with the owner beside the value, so that a newer object given a freed one's
    ``id`` is noticed; the cache is then emptied and the value built for the new owner.

    >>> sizes: OwnedCache[int] = OwnedCache(maxsize=2)
    >>> owner = [1, 2, 3]
    >>> sizes.get_or_build(owner, "len", lambda: len(owner))
    3
    >>> owner.append(4); sizes.get_or_build(owner, "len", lambda: len(owner))  # kept
    3
    """

    def __init__(self, maxsize: int):
        self._cache: BoundedCache[tuple[object, V]] = BoundedCache(maxsize)

    def get_or_build(self, owner: object, key: Hashable, build: Callable[[], V]) -> V:
        """The value for ``owner`` and ``key``, built by ``build`` if not kept."""
        full = (id(owner), key)
        kept = self._cache.get_or_build(full, lambda: (owner, build()))
        if kept[0] is not owner:  # an id reused by a newer owner
            self._cache.clear()
            kept = self._cache.get_or_build(full, lambda: (owner, build()))
        return kept[1]

    def put(self, owner: object, key: Hashable, value: V) -> None:
        """Keep ``value`` for ``owner`` and ``key``: made elsewhere (a count a parser kept
        as it read), with no build to wait for.

        >>> sizes: OwnedCache[int] = OwnedCache(maxsize=2)
        >>> owner = [1, 2]
        >>> sizes.put(owner, "len", 2); sizes.get_or_build(owner, "len", lambda: 0)
        2
        """
        self._cache.put((id(owner), key), (owner, value))

    def clear(self) -> None:
        self._cache.clear()


def bounded(maxsize: int) -> Callable[[Callable[P, V]], Callable[P, V]]:
    """``functools.lru_cache``, emptied by ``clear_caches()`` like every other cache of the
    engine: a pure function's last ``maxsize`` results, keyed by its (hashable) arguments.
    Its hit is a C dictionary lookup (~0.1 µs), which matters for the small helpers that a
    first mask calls hundreds of times (``tokens/fast/derivatives.py``).

    >>> calls = []
    >>> @bounded(maxsize=8)
    ... def square(n: int) -> int:
    ...     calls.append(n)
    ...     return n * n
    >>> square(3), square(3), calls
    (9, 9, [3])
    >>> clear_caches(); square(3), calls
    (9, [3, 3])
    """

    def decorate(function: Callable[P, V]) -> Callable[P, V]:
        cached = functools.lru_cache(maxsize)(function)
        _FUNCTIONS.add(cached)
        return cached  # type: ignore[return-value]

    return decorate
