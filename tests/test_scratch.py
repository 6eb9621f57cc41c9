"""Each run's downloads live in Gradio's cache folder until the server's ``--file-ttl``,
then the sweeper removes them; another process's folders are never touched."""

from __future__ import annotations

import os
import time

import pytest

from fsmviz.app import scratch
from fsmviz.generation.trace import GenerationOptions, Trace


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    return tmp_path


def aged(folder, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(folder, (then, then))


def test_a_run_folder_is_in_gradio_s_cache_and_swept_after_its_age(cache):
    old, new = scratch.run_folder(), scratch.run_folder()
    other = cache / "fsmviz-1-someone-else"
    other.mkdir()
    aged(old, 120)
    aged(other, 10_000)
    assert old.parent == cache and old.name.startswith(f"fsmviz-{os.getpid()}-")
    assert scratch.remove_folders(age=60) == 1
    assert not old.exists() and new.exists() and other.exists()
    assert scratch.remove_folders() == 1 and not new.exists() and other.exists()


def test_the_page_s_downloads_are_written_there(cache):
    from fsmviz.app.handlers import downloads

    trace = Trace(text="", steps=(), stop_reason="max_tokens", matched=False, pattern="ab?",
                  prompt="p", options=GenerationOptions(), seconds=0.0, notes=())  # fmt: skip
    paths = downloads(trace)
    assert {os.path.basename(p) for p in paths} >= {"trace.json", "trace.csv", "dfa.dot"}
    assert all(str(cache) in p for p in paths)
    scratch.remove_folders()
    assert not any(os.path.exists(p) for p in paths)


def test_the_sweeper_runs_in_the_background_and_clears_up_when_stopped(cache):
    folder = scratch.run_folder()
    aged(folder, 100)
    sweeper = scratch.Sweeper(age=6)  # sweeps every second
    try:
        for _ in range(50):
            if not folder.exists():
                break
            time.sleep(0.1)
        assert not folder.exists()
        fresh = scratch.run_folder()
    finally:
        sweeper.stop()
    assert not fresh.exists()
