"""A tool list becomes one schema: "one call of one of these tools".

Function calling hands the model a list of tools, each a name and a JSON Schema of its
arguments, in one of three spellings: ``{"name", "parameters"}``, OpenAI's
``{"type": "function", "function": {"name", "parameters"}}`` and MCP's
``{"name", "inputSchema"}``. ``tools_schema`` turns the list into one schema whose instances
are exactly the calls ``{"name": <a tool's name>, "arguments": <its arguments>}``. Each
tool's parameters move under ``$defs`` (``tool_0``, ``tool_1``...) with their local
``$ref``s rewritten to point there, so a tool's own ``$defs`` and recursion keep working.

>>> s = tools_schema([{"name": "add", "parameters": {"type": "object",
...     "properties": {"a": {"type": "integer"}}, "required": ["a"]}}])
>>> s["anyOf"][0]["properties"]["name"], s["anyOf"][0]["properties"]["arguments"]
({'const': 'add'}, {'$ref': '#/$defs/tool_0'})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fsmviz.schema.document import SchemaError

__all__ = ["is_tool_list", "tools_schema"]


def _name_and_parameters(tool: object) -> tuple[str, object] | None:
    if not isinstance(tool, Mapping):
        return None
    inner = tool.get("function") if isinstance(tool.get("function"), Mapping) else tool
    name = inner.get("name")
    params = inner.get("parameters", inner.get("inputSchema", inner.get("input_schema")))
    if not isinstance(name, str):
        return None
    return name, params if params is not None else {"type": "object"}


def is_tool_list(value: object) -> bool:
    """Whether ``value`` is meant as a list of tools: a non-empty list of objects, some
    with a ``name`` or a ``function`` (``tools_schema`` then names any that is not one)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(t, Mapping) for t in value)
        and any("name" in t or "function" in t for t in value)
    )


def _rebase(node: Any, base: str) -> Any:
    """``node`` with every local ``$ref`` (``#...``) moved under ``base``."""
    if isinstance(node, Mapping):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#"):
                out[key] = base + value[1:]
            else:
                out[key] = _rebase(value, base)
        return out
    if isinstance(node, list):
        return [_rebase(v, base) for v in node]
    return node


def tools_schema(tools: Sequence[Any]) -> dict[str, Any]:
    """One call of one of ``tools`` as a JSON Schema (see the module doc). Raises
    ``SchemaError`` naming the index of a tool that has no name."""
    defs: dict[str, Any] = {}
    calls = []
    for i, tool in enumerate(tools):
        found = _name_and_parameters(tool)
        if found is None:
            raise SchemaError(
                'each tool needs a "name" and "parameters" (or OpenAI\'s "function", or '
                'MCP\'s "inputSchema")',
                f"/{i}",
            )
        name, params = found
        defs[f"tool_{i}"] = _rebase(params, f"#/$defs/tool_{i}")
        calls.append(
            {
                "type": "object",
                "properties": {"name": {"const": name}, "arguments": {"$ref": f"#/$defs/tool_{i}"}},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    return {"$defs": defs, "anyOf": calls}
