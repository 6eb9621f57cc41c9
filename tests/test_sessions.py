"""Gradio's per-visitor sessions made small (issue 49): every REST call is a session, and
Gradio copied the whole page's config into each (~0.4 MB here, 500 kept)."""

from __future__ import annotations

import tracemalloc

import gradio as gr
from gradio.state_holder import SessionState

from fsmviz.app.sessions import QUEUE_POLL, LazyConfigs, calm_queue, lighten_sessions


def page() -> gr.Blocks:
    with gr.Blocks() as demo:
        for i in range(60):
            gr.HTML("<p>" + "x" * 2000 + f"</p>{i}", elem_id=f"h{i}")
        box = gr.Textbox("start", elem_id="box")
        gr.State([1, 2])
    demo.box = box  # type: ignore[attr-defined]
    return demo


def test_a_session_builds_its_page_copy_only_when_asked_and_the_same() -> None:
    demo = page()
    config = demo.default_config
    eager = {k: config.config_for_block(k, [], v) for k, v in config.blocks.items()
             if k in demo.blocks}  # what Gradio's own __init__ builds  # fmt: skip
    assert lighten_sessions() and lighten_sessions()  # once; twice is harmless
    lazy = SessionState(demo)
    assert isinstance(lazy.config_values, LazyConfigs) and not lazy.config_values._made
    assert set(lazy.config_values) == set(eager)
    assert list(lazy.components) == [c for c in eager.values() if c]  # deep links: the same
    key = demo.box._id  # type: ignore[attr-defined]
    lazy._update_value_in_config(key, "typed")  # what a run does to an output's value
    assert lazy.config_values[key]["props"]["value"] == "typed"
    assert SessionState(demo).config_values[key]["props"]["value"] == "start"  # its own copy


def test_a_session_that_only_called_an_endpoint_is_small() -> None:
    demo = page()
    lighten_sessions()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [SessionState(demo) for _ in range(50)]
        each = (tracemalloc.get_traced_memory()[0] - before) / len(kept)
    finally:
        tracemalloc.stop()
    assert each < 20_000, f"{each:,.0f} bytes a session"  # ~130 KB each before


def test_an_idle_queue_polls_at_the_calm_pace_and_gradios_own_pace_is_kept_if_slower() -> None:
    # Gradio's queue looked for work every 1 ms while idle: 6-7 % of a core per server
    demo = page().queue()
    queue = demo._queue
    assert (queue.sleep_when_free, queue.progress_update_sleep_when_free) < QUEUE_POLL
    assert calm_queue(demo)
    assert (queue.sleep_when_free, queue.progress_update_sleep_when_free) == QUEUE_POLL
    queue.sleep_when_free = 1.0  # a slower pace set elsewhere is not made faster
    assert calm_queue(demo) and queue.sleep_when_free == 1.0
    assert not calm_queue(object())  # no such queue (another Gradio): nothing done, and said so
