"""The output read back: its fields as it streams, and the finished text checked.

* ``json_fields`` the keys and scalar values of (possibly unfinished) JSON, each with its
  JSON pointer in the *output*: the page tints the field being written, the audit names
  where a run stalled. Cheap, no parser, never raises.
* ``check_json`` finished output parsed and validated against the schema with
  ``jsonschema`` (offline, its patterns in bounded time): ``JsonCheck`` says where in the
  output and which rule of the schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fsmviz.schema.document import pointer
from fsmviz.schema.guarded import PatternTooSlow, bounded_patterns, remote_refs, validator

__all__ = ["JsonCheck", "JsonField", "check_json", "json_fields"]


@dataclass(frozen=True)
class JsonField:
    """A key or a scalar value in (possibly unfinished) JSON text: ``text[start:end]``, and
    the JSON pointer of the value in the *output* (``/customer/name``, ``/tags/0``)."""

    start: int
    end: int
    path: str
    is_key: bool


def json_fields(text: str) -> tuple[JsonField, ...]:
    """The keys and scalar values of JSON as it streams, in order, unfinished ones included.

    The last one is the field being written. Never raises: text that is not JSON yields
    what could be read.

    >>> [(f.path, f.is_key) for f in json_fields('{"a": {"b": [1, "x')]
    [('/a', True), ('/a/b', True), ('/a/b/0', False), ('/a/b/1', False)]
    """
    fields: list[JsonField] = []
    stack: list[list[Any]] = []  # [kind, key or index]: "o" objects, "a" arrays
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\n\r:":
            i += 1
            continue
        if c == ",":
            if stack:
                stack[-1][1] = stack[-1][1] + 1 if stack[-1][0] == "a" else None
            i += 1
            continue
        if c in "{[":
            stack.append(["o", None] if c == "{" else ["a", 0])
            i += 1
            continue
        if c in "}]":
            if stack:
                stack.pop()
            i += 1
            continue
        start = i
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i = min(i + 1, n)
        else:
            while i < n and text[i] not in " \t\n\r,:}]":
                i += 1
        is_key = bool(stack) and stack[-1][0] == "o" and stack[-1][1] is None
        if is_key:
            try:
                stack[-1][1] = str(json.loads(text[start:i]))
            except ValueError:
                stack[-1][1] = text[start + 1 : i].rstrip('"')
        parts = tuple(frame[1] for frame in stack if frame[1] is not None)
        fields.append(JsonField(start, i, pointer(parts), is_key))
    return tuple(fields)


@dataclass(frozen=True)
class JsonCheck:
    """Whether finished output parses as JSON and validates against the schema.

    ``error`` says what is wrong; ``path`` is where in the output (a JSON pointer), and
    ``schema_path`` which rule of the schema it breaks.
    """

    parses: bool
    valid: bool
    error: str | None = None
    path: str | None = None
    schema_path: str | None = None


def check_json(text: str, schema: Mapping[str, Any]) -> JsonCheck:
    """Parse ``text`` and validate it against ``schema`` with ``jsonschema``: offline, its
    patterns in bounded time (``fsmviz.schema.guarded``). A reference that leads outside
    the schema, or a pattern too slow to check, is said in ``error`` (``valid`` False).

    >>> check_json('{"age": "x"}', {"properties": {"age": {"type": "integer"}}}).path
    '/age'
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        return JsonCheck(False, False, f"not JSON: {error.msg} at character {error.pos}")
    import jsonschema  # heavy (~0.2 s): loaded on first use
    from referencing.exceptions import Unresolvable  # with jsonschema

    for remote in remote_refs(schema):
        return JsonCheck(True, False, f"not checked: {remote.keyword} {remote.ref[:120]!r} "
                         "points outside the schema, and fsmviz never fetches schemas",
                         None, remote.pointer)  # fmt: skip
    try:
        with bounded_patterns():
            worst = jsonschema.exceptions.best_match(validator(schema).iter_errors(value))
    except PatternTooSlow as slow:
        return JsonCheck(True, False, f"not checked: {slow.message}")
    except Unresolvable as error:
        return JsonCheck(True, False, f"not checked: the reference {error!s:.120} leads nowhere")
    if worst is None:
        return JsonCheck(True, True)
    return JsonCheck(
        True,
        False,
        worst.message,
        pointer(tuple(worst.absolute_path)),
        pointer(tuple(worst.absolute_schema_path)),
    )
