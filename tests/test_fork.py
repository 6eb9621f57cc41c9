"""A local model used before ``os.fork`` runs in the child (``fsmviz.generation.batching``).

The model's forward passes run on a thread of their own; a fork copies only the thread
that forked, so the child's first pass used to wait forever for a thread that is not
there. The child now starts its own. The child's run is held to the parent's (the same
greedy run on the same weights), and every wait has a deadline: a regression fails in
seconds, it does not hang the suite.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

import fsmviz

DEADLINE = 60.0  # seconds; the child's run takes well under one on the tiny model


def test_a_model_used_before_fork_generates_in_the_child(tiny) -> None:
    parent = fsmviz.generate(tiny, r"[0-9]{2,3}", "A number, please.", max_tokens=3)
    assert tiny.passes._thread is not None and tiny.passes._thread.is_alive()  # in use
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: the same model, its passes thread left behind
        try:
            os.close(read)
            trace = fsmviz.generate(tiny, r"[0-9]{2,3}", "A number, please.", max_tokens=3)
            os.write(write, trace.text.encode("utf-8") or b"-")
        finally:
            os._exit(0)
    os.close(write)
    deadline = time.monotonic() + DEADLINE
    while (ended := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    if ended[0] == 0:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(read)
        pytest.fail(f"the forked child's run did not end in {DEADLINE:.0f} s")
    written = os.read(read, 4096).decode("utf-8")
    os.close(read)
    assert written == (parent.text or "-")
    # and the parent's own thread still serves it
    again = fsmviz.generate(tiny, r"[0-9]{2,3}", "A number, please.", max_tokens=3)
    assert again.text == parent.text
