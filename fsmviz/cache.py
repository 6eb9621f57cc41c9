"""A small thread-safe LRU cache: the only kind of shared state the engine keeps."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from threading import Lock
from typing import Generic, TypeVar

V = TypeVar("V")

__all__ = ["BoundedCache"]


class BoundedCache(Generic[V]):
    """Keeps the ``maxsize`` most recently used values. ``get_or_build`` runs ``build``
    outside the lock, so a slow build never blocks readers of other keys."""

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = Lock()

    def get_or_build(self, key: Hashable, build: Callable[[], V]) -> V:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = build()
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
