"""Gradio's per-visitor session, made small: what anonymous API traffic costs in memory.

Every REST call (``/gradio_api/call/dfa``) is a session of its own, and Gradio 6 gives each
new session a copy of the whole page's configuration (``SessionState.config_values``: every
component's props, for "deep links"), made eagerly: on this page ~0.4 MB a session, so the
``server.SESSIONS`` sessions kept cost ~190 MB before a single pattern is cached (measured:
+190 MB over the first 500 ``/dfa`` calls, flat after). Here the copy is made per component
when it is first asked for (Gradio asks when a component's value changes in that session,
and for all of them only when a deep link is made): a session that only called ``/dfa``
holds a few small dicts. Nothing else of Gradio's changes.

``lighten_sessions()`` is called once by ``server.serve`` before the page is launched;
so is ``calm_queue(demo)``, after ``demo.queue()``: Gradio's queue looks for a new event
every millisecond and for progress every 10 ms, even when nobody is there, which cost an
idle server 6-7 % of a core (measured: 1.3 CPU-s per 20 s idle, all of it on the event
loop's thread); every 20 ms and 50 ms it costs a fraction of that, and an event starts at
most 20 ms later (a token takes ~30 ms; Stop does not queue).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, MutableMapping
from copy import copy
from typing import Any

__all__ = ["QUEUE_POLL", "LazyConfigs", "calm_queue", "lighten_sessions"]


class LazyConfigs(MutableMapping):
    """``SessionState.config_values`` made on demand: ``keys`` are the page's blocks at the
    session's start; a block's config is built (``config_for_block``) when first read, then
    kept (Gradio writes into it)."""

    def __init__(self, blocks_config: Any, keys: list[int]):
        self._config = blocks_config
        self._keys = dict.fromkeys(keys)
        self._made: dict[int, Any] = {}

    def __getitem__(self, key: int) -> Any:
        if key not in self._made:
            if key not in self._keys:
                raise KeyError(key)
            block = self._config.blocks[key]
            self._made[key] = self._config.config_for_block(key, [], block)
        return self._made[key]

    def __setitem__(self, key: int, value: Any) -> None:
        self._keys[key] = None
        self._made[key] = value

    def __delitem__(self, key: int) -> None:
        del self._keys[key]
        self._made.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[int]:
        return iter(list(self._keys))

    def __len__(self) -> int:
        return len(self._keys)


def _init(self: Any, blocks: Any) -> None:
    """Gradio 6's ``SessionState.__init__``, with ``config_values`` a ``LazyConfigs``."""
    self.blocks_config = copy(blocks.default_config)
    keys = [k for k in self.blocks_config.blocks if k in blocks.blocks]
    self.config_values = LazyConfigs(self.blocks_config, keys)
    self.state_data = {}
    self._state_ttl = {}
    self.is_closed = False
    self.STATE_TTL_WHEN_CLOSED = 1 if os.getenv("GRADIO_IS_E2E_TEST", None) else 3600


def lighten_sessions() -> bool:
    """Make Gradio's sessions build their page copy lazily (see the module doc). True when
    done; False, changing nothing, on a Gradio whose ``SessionState`` is not the one this
    was written for (the page works either way, only heavier)."""
    from gradio import state_holder

    cls = state_holder.SessionState
    if getattr(cls, "_fsmviz_light", False):
        return True
    needed = ("_update_config", "_update_value_in_config", "components", "state_components")
    if not all(hasattr(cls, name) for name in needed):
        return False
    cls.__init__ = _init  # type: ignore[method-assign]
    cls._fsmviz_light = True  # type: ignore[attr-defined]
    return True


QUEUE_POLL = (0.02, 0.05)
"""Seconds between the queue's looks for a new event and for progress to send, while it
has nothing to do (Gradio's own: 0.001 and 0.01 off Windows)."""


def calm_queue(demo: Any) -> bool:
    """Slow the idle polling of ``demo``'s queue to ``QUEUE_POLL`` (see the module doc);
    call after ``demo.queue()``. False, changing nothing, where the queue has no such
    settings (another Gradio)."""
    queue = getattr(demo, "_queue", None)
    names = ("sleep_when_free", "progress_update_sleep_when_free")
    if queue is None or not all(hasattr(queue, name) for name in names):
        return False
    for name, seconds in zip(names, QUEUE_POLL, strict=True):
        setattr(queue, name, max(getattr(queue, name), seconds))
    return True
