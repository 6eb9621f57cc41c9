"""A run ends when its client leaves.

A REST client reads an API call's answer as a stream (``GET /gradio_api/call/trace/ID``,
or ``gradio_client``'s ``/queue/data``). When it closes that stream, Gradio marks the
call's event dead (``Event.alive = False``; a call still waiting in the queue is removed
from it) and, for a generator, stops asking it for more. The API functions here are not
generators: each runs a whole generation in a worker thread, which nothing interrupts, so
a 1,024-token ``/trace`` whose client had gone kept a core busy for a minute and more.

``leaves_with_client(fn)`` runs ``fn`` under ``fsmviz.generation.batching.stop_when``
with a check of that event: every forward pass of the run asks it first (a dictionary
look-up), so the run stops within one step of the client leaving, its row leaves the
model's batch, and its pass, if queued for the model's thread, is dropped there.

Gradio tells a function which event it serves through ``gradio.context.LocalContext``
(set in the worker thread before the call); its queue keeps the event in
``event_ids_to_events`` until the call ends. Outside a Gradio call (tests, the library)
there is no event and the check says "still here".
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from fsmviz.generation.batching import stop_when

__all__ = ["client_gone", "leaves_with_client"]

F = TypeVar("F", bound=Callable[..., Any])


def _here() -> bool:
    return False


def client_gone() -> Callable[[], bool]:
    """A check of whether the client of the Gradio call running in this thread has left
    (closed its stream, or cancelled): its event is no longer alive, or no longer known
    to the queue. Outside a Gradio call: a check that is always false."""
    context = sys.modules.get("gradio.context")  # not loaded: no Gradio call either
    if context is None:
        return _here
    blocks = context.LocalContext.blocks.get(None)
    event_id = context.LocalContext.event_id.get(None)
    events = getattr(getattr(blocks, "_queue", None), "event_ids_to_events", None)
    if event_id is None or not isinstance(events, dict) or event_id not in events:
        return _here

    def gone() -> bool:
        event = events.get(event_id)
        return event is None or not getattr(event, "alive", True)

    return gone


def leaves_with_client(fn: F) -> F:
    """``fn`` whose generations stop when the client of its Gradio call leaves (see the
    module's docstring); name, docstring, signature and hints kept for Gradio's schema."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        with stop_when(client_gone()):
            return fn(*args, **kwargs)

    return call  # type: ignore[return-value]
