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
