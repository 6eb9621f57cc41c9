"""``python app.py --mcp``: the app as an MCP server, called by the ``mcp`` package's own
client over streamable HTTP at Gradio's MCP URL (``/gradio_api/mcp/``). The suite's shared
app server (``app_server`` in conftest.py) runs with ``--mcp``: one app process, not two."""

from __future__ import annotations

import ast
import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

TOOLS = {"dfa", "diagnose", "trace"}

pytestmark = pytest.mark.slow


async def session_calls(url: str) -> tuple[dict[str, object], dict[str, object]]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url + "/gradio_api/mcp/") as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        calls = {
            "dfa": await session.call_tool("dfa", {"regex": "(cat|dog)s?"}),
            "bad": await session.call_tool("dfa", {"regex": "a("}),
            "diagnose": await session.call_tool(
                "diagnose", {"regex": "[a-z.]+@[a-z.]+", "max_tokens": 16}
            ),
            "trace": await session.call_tool(
                "trace",
                {"regex": "(cat|dog)s?", "prompt": "A pet?", "max_tokens": 4, "stop": "first"},
            ),
            "engines": await session.call_tool(
                "schema_engines",
                {"schema": '{"type": "integer", "minimum": 1, "maximum": 9}'},
            ),
        }
        return listed, calls


def text_of(result) -> str:  # noqa: ANN001 - mcp.types.CallToolResult
    return "".join(part.text for part in result.content if part.type == "text")


def data_of(result) -> dict:  # noqa: ANN001
    """The tool's answer: structured content when the server sends it, else its text
    (Gradio writes a returned dict as Python's repr)."""
    if result.structuredContent:
        return result.structuredContent
    return ast.literal_eval(text_of(result))


def test_the_three_tools_are_listed_documented_and_answer(app_server):
    # A thread of its own: the browser tests' sync Playwright leaves an event loop running
    # in this one, and asyncio.run refuses to start a second.
    with ThreadPoolExecutor(1) as pool:
        listed, calls = pool.submit(asyncio.run, session_calls(app_server)).result()
    assert set(listed) >= TOOLS
    for name in TOOLS:
        tool = listed[name]
        assert "regex" in tool.inputSchema["properties"], name
        assert len(tool.description or "") > 80, name  # the docstring, not a bare name
        assert "description" in tool.inputSchema["properties"]["regex"], name  # from Args:
        print(f"{name}({', '.join(tool.inputSchema['properties'])}): {tool.description}")
    trace_params = listed["trace"].inputSchema["properties"]
    assert {"prompt", "max_tokens", "temperature", "seed", "chat"} <= set(trace_params)
    assert {"top_p", "top_k", "prob_limit", "stop", "overshoot"} <= set(trace_params)
    assert "integer" in json.dumps(trace_params["max_tokens"])

    dfa = data_of(calls["dfa"])
    assert dfa["initial"] == 0 and dfa["dot"].startswith("digraph")
    assert calls["bad"].isError and "position 1" in text_of(calls["bad"])

    report = data_of(calls["diagnose"])
    assert report["vocabulary"] == "SmolLM2-135M-Instruct"
    assert "unbounded_repeat" in {f["kind"] for f in report["findings"]}

    engines = data_of(calls["engines"])
    assert "schema" in listed["schema_engines"].inputSchema["properties"]
    fsmviz = next(v for v in engines["engines"] if v["engine"] == "fsmviz")
    assert fsmviz["compiled"] and not fsmviz["invalid_accepted"] and engines["table"]

    trace = data_of(calls["trace"])
    assert trace["matched"] and trace["text"] in {"cat", "cats", "dog", "dogs"}
    assert trace["options"]["stop"] == "first"
