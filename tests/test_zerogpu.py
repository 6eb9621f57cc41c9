"""ZeroGPU, played here: the page's generation run as ``spaces.GPU`` runs it.

``spaces`` 0.51 forks a worker process, pickles the decorated function's arguments to it,
and pickles back every value the function yields (``spaces/zero/wrappers.py``). The
stand-in, ``fsmviz.app.fork_gpu``, does exactly that with ``multiprocessing``'s fork
context, explicitly pickling each value (a value that does not pickle fails the run, as it
would there); ``scripts/gpu_check.py`` runs a real GPU run through the same one.
"""

from __future__ import annotations

import pickle

import pytest

from fsmviz.app.fork_gpu import fork_gpu
from fsmviz.app.zerogpu import on_gpu, run_seconds
from fsmviz.generation.generate import GenerationOptions


def test_gpu_time_grows_with_the_tokens_asked_for():
    from fsmviz.app.api import trace_seconds

    few = run_seconds(None, None, "p", GenerationOptions(max_tokens=8))
    many = run_seconds(None, None, "p", GenerationOptions(max_tokens=1024))
    assert 20 <= few < many
    # /trace: one run, however Gradio passes the arguments
    assert trace_seconds("r", "p", 1024, 0.0, 0, True) == trace_seconds("r", "p", max_tokens=1024)
    assert few < trace_seconds("r", "p", 1024) < many


def test_off_zerogpu_the_function_is_unchanged(monkeypatch):
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)

    def f():
        yield 1

    assert on_gpu(f) is f


def test_stand_in_refuses_what_does_not_pickle():
    """The stand-in is strict: a generator yielding a lambda fails, as on ZeroGPU."""

    def bad(n: int):
        yield lambda: n

    with pytest.raises(RuntimeError, match="pickle"):
        list(on_gpu(bad, lambda n: 1, gpu=fork_gpu([]))(1))


@pytest.mark.slow
def test_the_page_generation_runs_in_a_forked_worker_with_pickled_frames():
    from fsmviz.app.live import PageFrame, pattern_view
    from fsmviz.app.regex_run import live_run
    from fsmviz.generation.models import load_model

    model = load_model(None, "cpu", threaded=False)  # as on ZeroGPU: no batching thread
    assert pickle.loads(pickle.dumps(model)) is model  # found again in the cache
    view = pattern_view(r"(cat|dog)s?", model.vocab)
    calls: list[int] = []
    options = GenerationOptions(max_tokens=6)
    run = on_gpu(live_run, gpu=fork_gpu(calls))
    frames = list(run(model, view, "A pet?", options))
    assert calls == [run_seconds(model, view, "A pet?", options)]
    assert frames and all(isinstance(f, PageFrame) for f in frames)
    done = [f for f in frames if f.trace is not None]
    assert done, "no final frame with the trace"
    trace = done[-1].trace
    assert trace.matched and trace.text in {"cat", "cats", "dog", "dogs"}
    assert "Done:" in frames[-1].status  # the shadow run finished too, in the worker
