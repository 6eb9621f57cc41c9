"""The bottom floor of ``fsmviz.schema``: a schema as a JSON document, and its one error.

Every other module of the folder reads schemas with these few helpers, and this module
imports none of them back:

* ``SchemaError`` what is wrong, and where: a JSON pointer into the schema;
* ``pointer`` a path of keys and indices as a JSON pointer (RFC 6901), ``/properties/a~1b``;
* ``resolve`` the subschema a local ``$ref`` (``#/$defs/Address``) names;
* ``children`` and ``walk`` the subschemas inside a node, and every one under the root;
* ``SCALARS`` the types of JSON's values that hold no subschema.

>>> root = {"properties": {"a": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "integer"}}}
>>> resolve(root, "#/$defs/n")
(('$defs', 'n'), {'type': 'integer'})
>>> [pointer(path) for path, _ in walk(root)]
['', '/$defs/n', '/properties/a']
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fsmviz.errors import FsmvizError

__all__ = ["SCALARS", "SchemaError", "children", "pointer", "resolve", "walk"]

SCALARS = frozenset((str, int, float, bool, type(None)))
"""JSON's values that hold no subschema, as their exact types (``type(v) in SCALARS``: a
subclass is looked at): a schema's walks skip them without an ``isinstance`` each."""


class SchemaError(FsmvizError, ValueError):
    """A schema fsmviz cannot use: ``.message`` (what is wrong) and ``.path`` (a JSON pointer
    into the schema, ``""`` for the whole schema, or None when the text is not even JSON)."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        where = f" (at {self.path or '/'} in the schema)" if self.path is not None else ""
        return f"{self.message}{where}"


def pointer(parts: tuple[str | int, ...]) -> str:
    """A JSON pointer (RFC 6901) for a path of keys and indices.

    >>> pointer(("properties", "a/b", 0))
    '/properties/a~1b/0'
    """
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def resolve(root: Mapping[str, Any], ref: str) -> tuple[tuple[str, ...], object] | None:
    """The path and subschema a local ``$ref`` (``#/$defs/Address``) names, or None."""
    if not ref.startswith("#"):
        return None
    parts = tuple(p.replace("~1", "/").replace("~0", "~") for p in ref[1:].split("/") if p != "")
    node: object = root
    for p in parts:
        if isinstance(node, dict) and p in node:
            node = node[p]
        elif isinstance(node, list) and p.isdigit() and int(p) < len(node):
            node = node[int(p)]
        else:
            return None
    return parts, node


def children(node: object) -> Iterator[tuple[tuple[str | int, ...], object]]:
    """The subschemas directly inside ``node``, each with its relative path."""
    if not isinstance(node, dict):
        return
    for name, value in (node.get("properties") or {}).items():
        yield ("properties", name), value
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield (key,), node[key]
    for key in ("prefixItems", "anyOf", "oneOf", "allOf"):
        for i, value in enumerate(node.get(key) or ()):
            yield (key, i), value


def walk(root: Mapping[str, Any]) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:
    """Every subschema reachable from the root (definitions included), each once, with its path."""
    seen: set[tuple[str | int, ...]] = set()
    todo: list[tuple[tuple[str | int, ...], object]] = [((), root)]
    for key in ("$defs", "definitions"):
        for name, value in (root.get(key) or {}).items():
            todo.append(((key, name), value))
    while todo:
        path, node = todo.pop(0)
        if path in seen or not isinstance(node, dict):
            continue
        seen.add(path)
        yield path, node
        todo += [(path + rel, child) for rel, child in children(node)]
