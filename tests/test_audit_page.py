"""The Audit view (``fsmviz.app.audit_page``): a prompts file uploaded through Gradio's
own client, the audit run on the ``tiny`` model, the report's counts on the page.

The view is launched alone (its tab in a Blocks of its own, the Generate tab's Regex box
stood in for by a textbox), so the test takes seconds; the counts it reads are checked
against ``fsmviz.audit`` run on the same prompts directly.
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import gradio as gr
import pytest

import fsmviz
from fsmviz.app import audit_page
from fsmviz.app.audit_page import (
    KINDS,
    MAX_PROMPTS,
    Quota,
    audit_constraint,
    audit_prompts,
    build_audit_tab,
)
from fsmviz.app.backend import BUNDLED
from fsmviz.errors import InputError

LONG = r"[a-z]{30}"
PROMPTS = ["Name a colour.", "Say <b>hi</b> & bye", "Count to three."]


@pytest.fixture
def audit_app(tiny, monkeypatch):
    monkeypatch.setattr(audit_page, "QUOTA", Quota(limit=5, window=3600.0))
    models = SimpleNamespace(get=lambda timeout=None: tiny)
    with gr.Blocks() as demo:
        regex = gr.Textbox(LONG, elem_id="regex")
        build_audit_tab(models, regex)
    demo.queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, max_file_size="256kb", quiet=True)
    try:
        yield url
    finally:
        demo.close()


def test_a_prompts_file_uploaded_is_audited_and_its_counts_shown(audit_app, tiny, tmp_path):
    from gradio_client import Client, handle_file

    prompts = tmp_path / "prompts.txt"
    prompts.write_text("\n".join(PROMPTS) + "\n")
    client = Client(audit_app, verbose=False)
    html, files, chart = client.predict(
        handle_file(str(prompts)), KINDS[0], "", LONG, 4, 0.0, 0, True, BUNDLED, api_name="/audit"
    )
    alone = fsmviz.audit(tiny, LONG, PROMPTS, max_tokens=4)
    assert alone.summary() in html  # "3 runs: 0 matched; stopped: 3 ..."
    counts = dict(re.findall(r"<tr><td>([^<]+)</td><td class=\"n\">(\d+)</td></tr>", html))
    assert counts["prompts"] == "3" and counts["matched"] == str(alone.matched)
    for reason, n in alone.stop_reasons:
        assert counts[f"stopped: {reason}"] == str(n)
    assert "Say &lt;b&gt;hi&lt;/b&gt; &amp; bye" in html and "<b>hi</b>" not in html
    assert html.count('href="?regex=') == 3  # each run: the page with it loaded
    assert sorted(p.rsplit("/", 1)[-1] for p in files) == ["report.html", "runs.csv"]
    # The chart (plotly, on the page only): the not-matched runs of each place, summed.
    bars = {bar["name"]: bar["x"] for bar in json.loads(chart["plot"])["data"]}
    assert sum(bars["not matched: stalled there"]) == alone.total - alone.matched
    # The visitor's quota: 3 of 5 used, so 3 more are refused with the reason.
    html, files, _ = client.predict(
        handle_file(str(prompts)), KINDS[0], "", LONG, 4, 0.0, 0, True, BUNDLED, api_name="/audit"
    )
    assert "at most 5 prompts per visitor per hour; 2 are left" in html and files is None


@pytest.mark.xdist_group("test_server.py:served")  # the worker that holds the vLLM server
def test_an_audit_on_a_configured_server_names_it_and_links_each_run_to_it(
    vllm_server, tmp_path, monkeypatch
):
    """The Audit view with a server configured (``--server vllm=URL``): the ``backend``
    menu's name runs the prompts on the real vLLM server; the report names the server,
    never its address, and each run's link opens it on that server."""
    from pathlib import Path
    from urllib.parse import parse_qs, unquote, urlsplit

    from gradio_client import Client, handle_file

    from fsmviz.app import backend
    from fsmviz.audit.rows import load_trace

    monkeypatch.setattr(audit_page, "QUOTA", Quota(limit=5, window=3600.0))
    backend.configure_servers({"vllm": vllm_server})
    models = SimpleNamespace(get=lambda timeout=None: pytest.fail("not the bundled model"))
    with gr.Blocks() as demo:
        regex = gr.Textbox(r"[0-9]{4}", elem_id="regex")
        build_audit_tab(models, regex)
    demo.queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, max_file_size="256kb", quiet=True)
    try:
        prompts = tmp_path / "prompts.txt"
        prompts.write_text("In what year did Apollo 11 land?\nIn what year did the Wall fall?\n")
        html, files, _ = Client(url, verbose=False).predict(
            handle_file(str(prompts)), KINDS[0], "", r"[0-9]{4}", 6, 0.0, 0, True, "vllm",
            api_name="/audit",
        )  # fmt: skip
    finally:
        demo.close()
        backend.configure_servers({})
    assert "2 runs: " in html and 'failed requests</td><td class="n">0<' in html, html
    host = urlsplit(vllm_server).netloc
    assert host not in html and host not in (tmp_path / "prompts.txt").read_text()
    links = re.findall(r'<a href="(\?regex=[^"]+)"', html)
    assert len(links) == 2
    for link in links:
        assert parse_qs(link.replace("&amp;", "&").lstrip("?"))["backend"] == ["vllm"]
    assert sorted(p.rsplit("/", 1)[-1] for p in files) == ["report.html", "runs.csv"]
    folder = re.search(r'href="/gradio_api/file=([^"]+?)/traces/', html).group(1)
    traces = sorted(Path(unquote(folder), "traces").glob("*.json"))  # the app's own folder
    assert len(traces) == 2
    for path in traces:  # the server's runs, replayed: the server named in their notes
        notes = " ".join(load_trace(str(path)).notes)
        assert "server 'vllm'" in notes and host not in notes, notes


def test_the_page_bounds_the_file_and_names_the_constraint(tmp_path) -> None:
    many = tmp_path / "many.txt"
    many.write_text("".join(f"prompt {k}\n" for k in range(MAX_PROMPTS + 1)))
    with pytest.raises(InputError, match=f"more than {MAX_PROMPTS} prompts"):
        audit_prompts(str(many))
    big = tmp_path / "big.txt"
    big.write_text("x" * (audit_page.MAX_FILE_BYTES + 1))
    with pytest.raises(InputError, match="bytes, more than this page takes"):
        audit_prompts(str(big))
    assert audit_prompts(str(_file(tmp_path, '{"id": "a", "prompt": "Hi"}\n'))) == [("a", "Hi")]
    with pytest.raises(InputError, match="Regex box is empty"):
        audit_constraint(KINDS[0], "", "")
    with pytest.raises(InputError, match="not JSON"):
        audit_constraint(KINDS[1], "{nope", "")
    schema = audit_constraint(KINDS[1], '{"type": "integer"}', "")
    assert schema.accepts("12") and not schema.accepts("x")
    grammar = audit_constraint(KINDS[2], 'root ::= "a"+\n', "")
    assert grammar.start == "root"


def _file(folder, text: str):
    path = folder / "p.jsonl"
    path.write_text(text)
    return path
