"""A ``$ref`` that leads back into itself, where llguidance would have to intersect it.

llguidance 1.9.1 compiles a recursive ``$ref`` (a tree whose children are trees) only where
nothing else must hold *at the same place*: it refuses "circular references with sibling
keys". Public schemas put one there in three ways, each rewritten here before llguidance
reads the schema:

* **the same property twice**: ``{"properties": {"s": {"$ref": "#/definitions/S"}},
  "oneOf": [{"properties": {"s": {"$ref": "#/definitions/S"}}}, ...]}`` (gRPC gateway's
  OpenAPI schema). Beside the parent's own ``s``, the branch's copy says nothing more, so
  it is dropped: *exact*;
* **a recursive definition extended**: ``{"allOf": [{"$ref": "#/definitions/T"}, {...}]}``
  (dart-test's runner configuration is its test configuration and more). The ``$ref`` is
  replaced by its definition's body, one level, which llguidance merges with the rest
  (keywords that stood beside the ``$ref`` become one more part); the recursion inside
  stays a ``$ref``: *exact*;
* **keywords beside alternatives**: ``{"minProperties": 1, "anyOf": [{"type": "string"},
  {"$ref": "#/definitions/R"}]}`` (resjson). The keywords move into each alternative, in
  an ``allOf`` with it (``A and (B or C)`` is ``(A and B) or (A and C)``), where they hold
  on every alternative but the ``$ref``; there they are left free and *named*, with the
  pointer of where they stood.

What is still a ``$ref`` beside other keywords afterwards is for ``relax_ref_siblings``.

>>> tree = {"$defs": {"T": {"type": "object", "properties": {"kids": {"type": "array",
...     "items": {"$ref": "#/$defs/T"}}}}},
...     "allOf": [{"$ref": "#/$defs/T"}, {"required": ["kids"]}]}
>>> schema, named = untangle_circular_refs(tree)
>>> schema["allOf"][0]["properties"]["kids"]["items"], named
({'$ref': '#/$defs/T'}, ())
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from fsmviz.schema.document import pointer, resolve
from fsmviz.schema.keywords import ASSERTIONS

__all__ = ["circular_targets", "tangled_at", "untangle_circular_refs"]

_VALUES = frozenset(("enum", "const", "default", "examples", "example"))
_DEFINITIONS = frozenset(("$defs", "definitions"))
_NAME_MAPS = frozenset(("properties", "patternProperties", *_DEFINITIONS))
_ALTERNATIVES = ("anyOf", "oneOf")
_RELATIVE_TO_PROPERTIES = frozenset(("additionalProperties", "unevaluatedProperties"))
_KEEP = frozenset(("$defs", "definitions", "$schema", "$id", "id"))
"""What stays where a definition's body is copied (its own definitions are reached by
pointer from the root, and an ``$id`` copied would name a second resource)."""


def _nodes(
    root: object, definitions: bool = True
) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:  # noqa: E501
    """Every JSON object under ``root`` with its path, values (``enum``...) left out, and
    without the definitions (what ``$ref`` names, not what the schema says) if asked."""
    todo: list[tuple[tuple[str | int, ...], object, bool]] = [((), root, False)]
    while todo:
        where, value, names = todo.pop()
        if isinstance(value, dict):
            if not names:
                yield where, value
            for key, sub in value.items():
                if names or (key not in _VALUES and (definitions or key not in _DEFINITIONS)):
                    keyword = not names and key in (
                        "properties",
                        "patternProperties",
                        *_DEFINITIONS,
                    )
                    todo.append(((*where, key), sub, keyword))
        elif isinstance(value, list):
            todo += [((*where, i), v, False) for i, v in enumerate(value)]


def circular_targets(schema: Mapping[str, Any]) -> frozenset[str]:
    """The local ``$ref`` values of ``schema`` whose target leads back to itself.

    >>> sorted(circular_targets({"$defs": {"a": {"items": {"$ref": "#/$defs/b"}},
    ...     "b": {"items": {"$ref": "#/$defs/a"}}, "c": {"$ref": "#/$defs/a"}},
    ...     "properties": {"x": {"$ref": "#/$defs/c"}}}))
    ['#/$defs/a', '#/$defs/b']
    """
    refs: dict[str, set[str]] = {}  # a $ref -> the $refs its target holds
    todo = sorted({n["$ref"] for _, n in _nodes(schema) if isinstance(n.get("$ref"), str)})
    while todo:
        ref = todo.pop()
        if ref in refs:
            continue
        target = resolve(schema, ref)
        body = target[1] if target is not None else None
        inner = {n["$ref"] for _, n in _nodes(body, definitions=False)
                 if isinstance(n.get("$ref"), str)}  # fmt: skip
        refs[ref] = inner
        todo += [r for r in inner if r not in refs]
    circular = set()
    for start in refs:
        seen, frontier = set(), list(refs[start])
        while frontier:
            ref = frontier.pop()
            if ref == start:
                circular.add(start)
                break
            if ref not in seen:
                seen.add(ref)
                frontier += refs.get(ref, ())
    return frozenset(circular)


def _holds(value: object, circular: frozenset[str]) -> bool:
    """Whether a circular ``$ref`` stands anywhere in ``value``."""
    return any(n.get("$ref") in circular for _, n in _nodes(value))


def untangle_circular_refs(
    schema: Mapping[str, Any], whitespace: str | None = None
) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """``schema`` rewritten so that no circular ``$ref`` must be intersected with other
    keywords where it can be helped (see the module doc), and the (JSON pointer, keyword)
    pairs thereby left free. ``whitespace`` is unused (``RELAXATIONS``' signature)."""
    copy = json.loads(json.dumps(schema))
    circular = circular_targets(copy)
    named: list[tuple[str, str]] = []
    if not circular:
        return copy, ()
    for where, node in list(_nodes(copy)):
        own = node.get("properties")
        for key in (*_ALTERNATIVES, "allOf"):
            for branch in node.get(key) or ():
                theirs = branch.get("properties") if isinstance(branch, dict) else None
                if not (isinstance(own, dict) and isinstance(theirs, dict)):
                    continue
                if set(branch) & _RELATIVE_TO_PROPERTIES:
                    continue  # a name dropped from its properties would become "additional"
                for name in [n for n, sub in theirs.items() if own.get(n) == sub]:
                    if _holds(theirs[name], circular):
                        del theirs[name]  # the parent's own says it already
        parts = node.get("allOf")
        if isinstance(parts, list) and (len(parts) > 1 or set(node) & (ASSERTIONS - {"allOf"})):
            for i, part in enumerate(list(parts)):
                ref = part.get("$ref") if isinstance(part, dict) else None
                target = resolve(copy, ref) if ref in circular else None
                body = target[1] if target is not None else None
                if isinstance(body, dict) and "$ref" not in body:
                    inline = {k: v for k, v in body.items() if k not in _KEEP}
                    parts[i] = json.loads(json.dumps(inline))
                    rest = {k: v for k, v in part.items() if k in ASSERTIONS and k != "$ref"}
                    if rest:  # what stood beside the $ref holds too: one more part
                        parts.append(rest)
        for key in _ALTERNATIVES:
            branches = node.get(key)
            beside = {k: v for k, v in node.items() if k in ASSERTIONS and k != key}
            if not (isinstance(branches, list) and beside):
                continue
            if not any(isinstance(b, dict) and b.get("$ref") in circular for b in branches):
                continue
            for i, branch in enumerate(branches):
                if isinstance(branch, dict) and branch.get("$ref") in circular:
                    continue  # the keywords beside are left free here: named below
                moved = json.loads(json.dumps(beside))
                # both apply, each read in its own object ("additionalProperties" is
                # relative to its own "properties"): side by side in an allOf
                branches[i] = moved if branch in ({}, True) else {"allOf": [branch, moved]}
            for name in beside:
                del node[name]
                named.append((pointer(where), name))
            break  # the others moved with the keywords
    return copy, tuple(named)


def tangled_at(schema: Mapping[str, Any], ref: str) -> str | None:
    """The JSON pointer of the first place where the ``$ref`` ``ref`` must be intersected
    with other keywords (beside it, in an ``allOf`` with other parts, in alternatives with
    keywords beside them), or None.

    >>> tangled_at({"properties": {"a": {"allOf": [{"$ref": "#"}, {"required": ["b"]}]}}}, "#")
    '/properties/a/allOf/0'
    """
    for where, node in sorted(_nodes(schema), key=lambda f: [str(p) for p in f[0]]):
        if node.get("$ref") == ref and set(node) & (ASSERTIONS - {"$ref"}):
            return pointer(where)
        for key in ("allOf", *_ALTERNATIVES):
            parts = node.get(key)
            if not isinstance(parts, list):
                continue
            beside = set(node) & (ASSERTIONS - {key})
            if key == "allOf" and len(parts) > 1 or beside:
                for i, part in enumerate(parts):
                    if isinstance(part, dict) and part.get("$ref") == ref:
                        return pointer((*where, key, i))
    return None
