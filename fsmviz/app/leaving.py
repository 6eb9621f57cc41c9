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

An **MCP** tool call reaches the function another way: Gradio's MCP server submits it to
its own queue through a ``gradio_client`` of its own and waits for the job in a thread it
cannot leave (``anyio.to_thread.run_sync`` without ``abandon_on_cancel``). When the MCP
client goes (it disconnects, or cancels the request), the server cancels the tool call, but
that wait holds on to the end of the run and the job is never told. ``mcp_calls_end_with
_their_request()`` makes that wait cancellable and, when it is cancelled, cancels the job
(``Job.cancel``: Gradio's ``/cancel``), which drops the event, which the check above sees.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from fsmviz.generation.batching import stop_when

__all__ = ["client_gone", "leaves_with_client", "mcp_calls_end_with_their_request"]

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


def mcp_calls_end_with_their_request() -> bool:
    """Have Gradio's MCP server cancel a tool call's job when the call itself is cancelled
    (see the module's docstring); whether it could (False: this Gradio lays its MCP server
    out otherwise, and calls run to their end as before)."""
    try:
        from gradio import mcp
    except ImportError:  # the mcp extra is not installed: no MCP server either
        return False
    server = getattr(mcp, "GradioMCPServer", None)
    plain = getattr(server, "_execute_tool_without_progress", None)
    with_progress = getattr(server, "_execute_tool_with_progress", None)
    if server is None or plain is None or with_progress is None:
        return False
    if getattr(server, "_fsmviz_cancels_jobs", False):
        return True
    import anyio

    async def without_progress(self: Any, job: Any) -> list[Any]:
        try:
            return [await anyio.to_thread.run_sync(job.result, abandon_on_cancel=True)]
        except anyio.get_cancelled_exc_class():
            _cancel_soon(job)
            raise

    async def progressing(self: Any, job: Any, progress_token: str | int) -> Any:
        try:
            return await with_progress(self, job, progress_token)
        except anyio.get_cancelled_exc_class():
            _cancel_soon(job)
            raise

    server._execute_tool_without_progress = without_progress
    server._execute_tool_with_progress = progressing
    server._fsmviz_cancels_jobs = True
    return True


def _cancel_soon(job: Any) -> None:
    """``job.cancel()`` on a thread of its own: it is an HTTP call to this very server,
    whose event loop is the one being cancelled here."""
    import threading

    threading.Thread(target=_cancel, args=(job,), name="fsmviz-mcp-cancel", daemon=True).start()


def _cancel(job: Any) -> None:
    with contextlib.suppress(Exception):  # the job may be over already; nobody waits
        job.cancel()
