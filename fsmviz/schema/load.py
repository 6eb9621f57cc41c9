"""A schema in: read, bounded, checked against its metaschema, its references made local.

``load_schema`` is the one door every schema comes through (``compile_schema``,
``regex_from_schema``, the doctor, the peers): JSON text, a mapping, or a pydantic model
class becomes a plain JSON value (a deep copy), its size and shape checked
(``fsmviz.schema.limits``) before anything reads it, a list of tools made one schema
(``fsmviz.schema.tools``), then validated against its own metaschema
(``fsmviz.schema.guarded``: offline, patterns bounded). ``local_refs`` and
``ref_overrides`` then prepare the root for the converters: a ``$ref`` fsmviz cannot follow
is named and dropped, and the keywords a draft-7 ``$ref`` overrides are removed.

Below ``convert`` (which compiles what this reads); above ``document``, ``limits``,
``tools``, ``guarded`` and ``keywords``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fsmviz.schema.document import SchemaError, pointer, resolve
from fsmviz.schema.guarded import PatternTooSlow, metaschema_errors, remote_refs
from fsmviz.schema.keywords import ASSERTIONS, subschemas
from fsmviz.schema.limits import check_shape, check_text, text_within_shape
from fsmviz.schema.ranges import check_bounds
from fsmviz.schema.tools import is_tool_list, tools_schema

__all__ = ["load_schema", "local_refs", "ref_overrides"]


def load_schema(schema: str | Mapping[str, Any] | type) -> dict[str, Any]:
    """The schema as a dict, checked for size and shape (``fsmviz.schema.limits``) before
    anything else reads it, then against its metaschema, then for bounds no value can meet
    (``ranges.check_bounds``). Raises ``SchemaError``.

    ``schema`` is JSON text, a mapping, or a pydantic model class (its
    ``model_json_schema()``); a list of tools (OpenAI or MCP) is one call of one of them
    (``fsmviz.schema.tools``).

    >>> from pydantic import BaseModel
    >>> class Point(BaseModel):
    ...     x: int
    >>> load_schema(Point)["required"]
    ['x']
    """
    value = _json_value(schema)
    if is_tool_list(value):
        value = tools_schema(value)
        check_shape(value)
    if not isinstance(value, dict):
        raise SchemaError(
            f'a schema must be a JSON object such as {{"type": "string"}}, '
            f"not {type(value).__name__} {json.dumps(value)[:40]}",
            "",
        )
    _check_metaschema(value)
    check_bounds(value)
    return value


def _json_value(schema: str | bytes | Mapping[str, Any] | list | type) -> Any:
    """The schema as a plain JSON value (a deep copy), its size and shape checked before
    it is read: from a pydantic model class, UTF-8 bytes, JSON text, or a mapping or list
    of JSON values."""
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        schema = schema.model_json_schema()
    if isinstance(schema, (bytes, bytearray)):
        try:
            schema = schema.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SchemaError(f"the schema is not UTF-8 text: {error.reason}") from None
    if isinstance(schema, str):
        check_text(schema)
        try:
            value = json.loads(schema, parse_constant=_NotJson)
            _refuse_not_json(schema, value)  # NaN, Infinity: Python reads them, JSON has none
        except json.JSONDecodeError as error:
            raise SchemaError(
                f"the schema is not valid JSON: {error.msg} at line {error.lineno}, "
                f"column {error.colno}"
            ) from None
        except RecursionError:
            raise SchemaError("the schema is nested too deeply to read", "") from None
        if not text_within_shape(schema):
            check_shape(value)
        return value
    if isinstance(schema, (Mapping, list)):
        check_shape(schema)
        try:
            text = json.dumps(schema)
        except (TypeError, ValueError) as error:
            raise SchemaError(f"the schema holds a value that is not JSON: {error}") from None
        check_text(text)
        value = json.loads(text, parse_constant=_NotJson)  # a deep, JSON-only copy
        _refuse_not_json(text, value)  # float("nan") in a mapping: no JSON number either
        return value
    raise SchemaError(
        f"a schema is JSON text, a mapping or a pydantic model class, not {type(schema).__name__}"
    )


class _NotJson(str):
    """``NaN``, ``Infinity`` or ``-Infinity`` where a schema's text has a number: Python's
    ``json`` reads them, JSON (and every engine after fsmviz) does not."""


def _refuse_not_json(text: str, value: Any) -> None:
    """A ``SchemaError`` naming the first ``NaN``/``Infinity`` in ``value`` (read from
    ``text`` with ``parse_constant=_NotJson``): its JSON pointer, line and column.

    >>> text = '{"minimum": NaN}'
    >>> _refuse_not_json(text, json.loads(text, parse_constant=_NotJson))
    Traceback (most recent call last):
    ...
    fsmviz.schema.document.SchemaError: the schema is not valid JSON: NaN at line 1, \
column 13 is no JSON number; write a number there, or leave the keyword out (at /minimum in \
the schema)
    """
    if "NaN" not in text and "Infinity" not in text:
        return  # ``json`` reads a constant only where its name is written: none to find
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, here = stack.pop()
        if isinstance(here, _NotJson):
            line, column = _constant_at(text, here)
            raise SchemaError(
                f"the schema is not valid JSON: {here} at line {line}, column {column} is no "
                "JSON number; write a number there, or leave the keyword out",
                pointer(path),
            )
        if isinstance(here, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(here.items())))
        elif isinstance(here, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(here))))


def _constant_at(text: str, name: str) -> tuple[int, int]:
    """Line and column (1-based) of the first ``name`` in ``text`` outside strings."""
    inside = escaped = False
    for i, char in enumerate(text):
        if inside:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                inside = False
        elif char == '"':
            inside = True
        elif text.startswith(name, i):
            return text.count("\n", 0, i) + 1, i - text.rfind("\n", 0, i)
    return 1, 1


def _check_metaschema(value: dict[str, Any]) -> None:
    """Refuse a schema its own metaschema (by ``$schema``, else the latest draft) rejects,
    naming where: offline, patterns bounded (``fsmviz.schema.guarded``)."""
    try:
        error = metaschema_errors(value)
    except PatternTooSlow as slow:
        raise SchemaError(f"the schema cannot be checked: {slow.message}", "") from None
    if error is not None:
        raise SchemaError(
            f"the schema breaks the JSON Schema rules: {error.message[:300]}",
            pointer(tuple(error.absolute_path)),
        )


def local_refs(root: dict[str, Any]) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """``root`` with each ``$ref`` that does not lead inside it removed (a remote one,
    ``base.json#/definitions/path``, which fsmviz never fetches, or a local one that names
    nothing), and each remote ``$dynamicRef`` or ``$recursiveRef`` too
    (``guarded.remote_refs``), and the (JSON pointer, keyword) pairs of those: not
    enforced, named. The subschema keeps its other keywords; with none left, it allows any
    value. ``root`` is ``load_schema``'s own copy and is changed in place.

    >>> local_refs({"properties": {"a": {"$ref": "other.json#/x"}, "b": {"$ref": "#/$defs/n"}},
    ...             "$defs": {"n": {"type": "integer"}}})
    ({'properties': {'a': {}, 'b': {'$ref': '#/$defs/n'}}, '$defs': {'n': {'type': 'integer'}}}, (('/properties/a', '$ref'),))
    >>> local_refs({"properties": {"a": {"$dynamicRef": "x.json#m", "type": "string"}}})
    ({'properties': {'a': {'type': 'string'}}}, (('/properties/a', '$dynamicRef'),))
    """  # noqa: E501
    remote = {(r.pointer, r.keyword) for r in remote_refs(root) if r.keyword != "$ref"}
    dropped = []
    for where, node in list(subschemas(root)):
        ref = node.get("$ref")
        if isinstance(ref, str) and resolve(root, ref) is None:
            del node["$ref"]  # type: ignore[attr-defined]  # load_schema's dicts
            dropped.append((pointer(where), "$ref"))
        for keyword in ("$dynamicRef", "$recursiveRef"):
            if keyword in node and (pointer(where), keyword) in remote:  # pointer: if any
                del node[keyword]  # type: ignore[attr-defined]
                dropped.append((pointer(where), keyword))
    return root, tuple(dropped)


def ref_overrides(root: dict[str, Any]) -> dict[str, Any]:
    """``root`` without the assertions beside a ``$ref`` where its draft ignores them.

    Up to draft 7 a ``$ref`` *replaces* its subschema: "all other properties in a $ref
    object MUST be ignored" (``{"$ref": "#/definitions/n", "type": "integer"}`` takes what
    ``n`` takes, a string too). From draft 2019-09 on they apply beside it. SchemaStore's
    schemas are mostly draft 7 and often write a ``type`` beside a ``$ref`` as a hint; an
    engine that enforces it rejects valid JSON. The draft is ``$schema``'s, as ``jsonschema``
    reads it (no ``$schema``: the latest). ``root`` is ``load_schema``'s copy, changed in
    place; annotations and definitions stay.

    >>> ref_overrides({"$schema": "http://json-schema.org/draft-07/schema#",
    ...     "properties": {"n": {"$ref": "#/definitions/n", "type": "integer"}},
    ...     "definitions": {"n": {"type": ["integer", "string"]}}})["properties"]
    {'n': {'$ref': '#/definitions/n'}}
    >>> ref_overrides({"properties": {"n": {"$ref": "#/$defs/n", "type": "integer"}}})["properties"]
    {'n': {'$ref': '#/$defs/n', 'type': 'integer'}}
    """
    import jsonschema  # heavy, and needed only here: loaded on first use

    legacy = (jsonschema.Draft3Validator, jsonschema.Draft4Validator, jsonschema.Draft6Validator,
              jsonschema.Draft7Validator)  # fmt: skip
    if jsonschema.validators.validator_for(root) not in legacy:
        return root
    for _, node in list(subschemas(root)):
        if "$ref" in node:
            for key in [k for k in node if k != "$ref" and k in ASSERTIONS]:
                del node[key]  # type: ignore[attr-defined]  # load_schema's dicts
    return root
