"""A run ends when its client leaves (issue 50.4).

Unit level: a generation under ``stop_when(gone)`` stops at the forward pass after
``gone()`` turns true, its row leaves the model's batch, and a pass already queued for the
model's thread is dropped there. App level (the real server): a 1,024-token ``/trace``
whose client closes the stream stops generating; the server's CPU goes back to idle."""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from fsmviz.app.leaving import client_gone, leaves_with_client
from fsmviz.generation.batching import ClientGone, _Job, stop_when
from fsmviz.generation.generate import stream


def test_a_run_stops_at_the_next_pass_once_its_client_is_gone(tiny) -> None:
    left = threading.Event()
    with stop_when(left.is_set):
        steps = stream(tiny, None, "Count:", max_tokens=200)
        first = [next(steps) for _ in range(3)]
        left.set()
        with pytest.raises(ClientGone):
            next(steps)
    assert len(first) == 3 and len(steps.steps) == 3
    sequence = steps._run.sequence
    deadline = time.monotonic() + 5
    while sequence in tiny.passes._group.rows and time.monotonic() < deadline:
        time.sleep(0.01)  # the model's thread frees the row (asynchronously)
    assert sequence not in tiny.passes._group.rows and sequence.cache is None


def test_queued_work_of_a_gone_client_is_dropped_by_the_models_thread(tiny) -> None:
    passes = tiny.passes
    sequence = passes.open()
    job = _Job(sequence, [1, 2, 3], 1, gone=lambda: True)
    passes._run([job])
    assert isinstance(job.error, ClientGone) and job.logits is None
    assert sequence.row is None and sequence.cache is None


def test_outside_a_gradio_call_the_client_is_never_gone(tiny) -> None:
    assert client_gone()() is False
    run = leaves_with_client(lambda: list(stream(tiny, None, "Count:", max_tokens=3)))
    assert len(run()) == 3


# --- the real app --------------------------------------------------------------------------


def _server_pid(port: int) -> int:
    """The pid of the process listening on ``port`` (Linux: /proc/net/tcp's socket inode,
    then the process holding a descriptor of it)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                inodes.add(fields[9])
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(pid)
        except OSError:
            continue
    raise LookupError(f"no process of ours listens on port {port}")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _busy(pid: int, seconds: float) -> float:
    """Share of one core the process used over the next ``seconds``."""
    start = _cpu_seconds(pid)
    time.sleep(seconds)
    return (_cpu_seconds(pid) - start) / seconds


@pytest.mark.e2e
def test_a_rest_stream_closed_by_its_client_stops_its_run(app_server) -> None:
    url = urllib.parse.urlsplit(app_server)
    pid = _server_pid(url.port)
    # the raw REST protocol: POST the call, then read its answer as a stream
    call = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    body = {"data": ["[a-z ]+", "Tell a very long story about a dragon.", 1024, 0.0, 0]}
    call.request(
        "POST", "/gradio_api/call/trace", json.dumps(body), {"Content-Type": "application/json"}
    )
    event = json.loads(call.getresponse().read())["event_id"]
    listen = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    listen.request("GET", f"/gradio_api/call/trace/{event}")
    answer = listen.getresponse()
    assert answer.status == 200
    time.sleep(2)  # the run is under way: the server busy (a core, less on a busy machine)
    running = _busy(pid, 2.0)
    listen.sock.shutdown(2)  # the client leaves
    listen.close()
    time.sleep(2)
    after = _busy(pid, 2.0)  # idle: heartbeats only (~5% of a core)
    assert running > 0.1, f"the run did not seem to run ({running:.0%} of a core)"
    assert after < 0.25 and after < 0.6 * running, (
        f"the server still works for a client that left ({after:.0%} of a core after, "
        f"{running:.0%} while the client listened)"
    )


async def _mcp_call_left_after(url: str, seconds: float, pid: int) -> float:
    """Start a 1,024-token ``trace`` over MCP, leave after ``seconds``; the server's share
    of a core during the last 2 s of the call."""
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url + "/gradio_api/mcp/") as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        busy: list[float] = []

        async def watch() -> None:
            await anyio.sleep(seconds - 2)
            busy.append(await anyio.to_thread.run_sync(_busy, pid, 2.0))

        with anyio.move_on_after(seconds):
            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                await session.call_tool(
                    "trace",
                    {"regex": "[a-z ]+", "prompt": "Tell a very long story.", "max_tokens": 1024},
                )
        return busy[0] if busy else 0.0


@pytest.mark.e2e
def test_an_mcp_call_whose_client_leaves_stops_its_run(app_server) -> None:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    pid = _server_pid(urllib.parse.urlsplit(app_server).port)
    with ThreadPoolExecutor(1) as pool:  # an event loop of its own (see test_mcp.py)
        running = pool.submit(asyncio.run, _mcp_call_left_after(app_server, 5.0, pid)).result()
    time.sleep(2)
    after = _busy(pid, 2.0)
    assert running > 0.1, f"the run did not seem to run ({running:.0%} of a core)"
    assert after < 0.25 and after < 0.6 * running, (
        f"the server still works for an MCP client that left ({after:.0%} of a core after, "
        f"{running:.0%} during the call)"
    )
