"""Bounded work for a JSON Schema: its size and shape checked before any conversion, and the
cost of outlines-core's regex estimated before it is built.

A schema is text anyone may paste, so every step after reading it must cost a bounded amount
of time and memory. Two things can blow up:

* **reading and checking it**: ``json.loads`` on text nested 5,000 deep raises
  ``RecursionError``; ``jsonschema``'s metaschema check costs ~0.4 ms a subschema (15 s for
  40,000 properties); llguidance's compiler needs seconds for 10,000 properties in one
  object. ``check_text`` and ``check_shape`` refuse what is over ``MAX_SCHEMA_BYTES``,
  ``MAX_DEPTH``, ``MAX_PROPERTIES`` (in one object) or ``MAX_SUBSCHEMAS`` before any of it
  runs, naming the JSON pointer and what to change.
* **outlines-core's regex**: an object with no ``required`` key becomes one alternative per
  property, each spelling all the properties before it, so the regex grows with the square of
  the optional properties (1,000 → 35 M characters, 2,000 → 140 M characters and 1 GB;
  40,000 kill the process from native code, which no ``try`` catches). ``regex_cost``
  estimates the regex's length from the schema's shape, without building it, and
  ``compile_schema`` builds it only when the estimate is within ``REGEX_BUDGET``; a larger
  schema takes the grammar path (llguidance), whose cost is linear in the schema.

>>> wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(2000)}}
>>> regex_cost(wide).length > 100_000_000
True
>>> regex_cost({"type": "object", "properties": {"a": {"$ref": "#"}}}).recursive
'/properties/a'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii as _quoted  # json.dumps of a str, in C
from typing import Any

from fsmviz.cache import bounded
from fsmviz.schema.document import SCALARS, SchemaError, pointer, resolve
from fsmviz.schema.keywords import subschemas

__all__ = [
    "MAX_DEPTH",
    "MAX_PROPERTIES",
    "MAX_REF_DEPTH",
    "MAX_SCHEMA_BYTES",
    "MAX_SUBSCHEMAS",
    "REGEX_BUDGET",
    "REGEX_POSITIONS",
    "RegexCost",
    "check_shape",
    "check_text",
    "regex_cost",
    "text_within_shape",
]

MAX_SCHEMA_BYTES = 2_000_000
"""UTF-8 bytes of a schema's JSON text. llguidance has compiled 4 MB schemas; the bound keeps
reading and checking one under a few seconds on a shared CPU."""
MAX_DEPTH = 128
"""JSON nesting of the schema document (``{"properties": {"a": {...}}}`` is two levels per
object). Python's ``json`` and every recursive walk stay far from the recursion limit."""
MAX_PROPERTIES = 5_000
"""Properties listed in one object. llguidance needs ~1.5 s and 90 MB for 5,000 optional ones
(its parser row holds four items per property); 10,000 take 10 s."""
MAX_SUBSCHEMAS = 20_000
"""Subschemas (JSON objects) in the whole document; ``jsonschema``'s metaschema check costs
about 0.25 ms each."""
MAX_REF_DEPTH = 3
"""``$ref``s inside ``$ref``s that outlines-core follows; it cuts the fourth silently."""
REGEX_POSITIONS = 10_000
"""Character positions of the regex (``dfa.count_positions``) above which a schema takes the
grammar path without building its DFA (``path="regex"`` still builds it, up to the DFA's
own budget): past it the DFA costs over 0.25 s on an idle CPU (a string with ``maxLength``
5,000 alone has 10,001), more than llguidance needs for any schema of the sample, and it is
far past what can be drawn readably."""
REGEX_BUDGET = 200_000
"""Estimated characters of outlines-core's regex above which it is not built at all: the
regex path refuses patterns over 50,000 characters anyway, and the estimate is rough."""

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def check_text(text: str) -> None:
    """Refuse schema text over ``MAX_SCHEMA_BYTES`` or nested over ``MAX_DEPTH``, before
    ``json.loads`` (which recurses once per level). Raises ``SchemaError``.

    >>> check_text("[" * 5000)
    Traceback (most recent call last):
    fsmviz.schema.document.SchemaError: the schema is nested too deeply: 5,000 levels deep; ...
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SCHEMA_BYTES:
        raise SchemaError(
            f"the schema is {size:,} bytes, more than the {MAX_SCHEMA_BYTES:,} fsmviz reads: "
            "move repeated parts into $defs and refer to them with $ref, or split the schema",
            "",
        )
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return  # no deeper than its opening brackets, those in strings counted too
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub("", text)):
        depth += 1 if match.group() in "[{" else -1
        deepest = max(deepest, depth)
    if deepest > MAX_DEPTH:
        raise SchemaError(
            f"the schema is nested too deeply: {deepest:,} levels deep; the limit is {MAX_DEPTH}: "
            "move deep parts into $defs and refer to them with $ref",
            "",
        )


def check_shape(root: object) -> None:
    """Refuse a schema document deeper than ``MAX_DEPTH``, with an object of more than
    ``MAX_PROPERTIES`` properties, or more than ``MAX_SUBSCHEMAS`` objects in all. Iterative,
    so a mapping nested 100,000 deep is refused, not a ``RecursionError``.

    >>> check_shape({"properties": {f"p{i}": {} for i in range(6000)}})
    Traceback (most recent call last):
    fsmviz.schema.document.SchemaError: this object lists 6,000 properties; ... (at /properties ...
    """
    if not _within_shape(root):
        _refuse_shape(root)


def text_within_shape(text: str) -> bool:
    """Whether the JSON ``text``, once ``check_text`` took it (no deeper than
    ``MAX_DEPTH``), surely passes ``check_shape``: no more ``{`` than ``MAX_SUBSCHEMAS``
    (one per object) and no more ``:`` than ``MAX_PROPERTIES`` (one per key), those in
    strings counted too. A small schema's text is read for them at C speed, not walked.

    >>> text_within_shape('{"properties": {"a": {}}}'), text_within_shape("{" * 20_001)
    (True, False)
    """
    return text.count("{") <= MAX_SUBSCHEMAS and text.count(":") <= MAX_PROPERTIES


def _within_shape(root: object) -> bool:
    """``check_shape``'s three bounds, told without the paths: each container's depth is
    counted and no scalar is visited (a schema's values are most of it)."""
    objects = 0
    todo: list[tuple[int, object]] = [(0, root)]
    while todo:
        depth, node = todo.pop()
        kind = type(node)
        if kind is dict or (kind is not list and isinstance(node, Mapping)):
            objects += 1
            props = node.get("properties")
            if objects > MAX_SUBSCHEMAS or (
                isinstance(props, Mapping) and len(props) > MAX_PROPERTIES
            ):
                return False
            values: Iterable[object] = node.values()
        elif kind is list or isinstance(node, list):
            values = node
        else:
            continue
        if depth >= MAX_DEPTH and values:  # a value one deeper than allowed
            return False
        depth += 1
        todo.extend([(depth, v) for v in values if type(v) not in SCALARS])
    return True


def _refuse_shape(root: object) -> None:
    """``check_shape``'s refusal, with the JSON pointer of the first excess it meets."""
    objects = 0
    todo: list[tuple[tuple[str | int, ...], object]] = [((), root)]
    while todo:
        path, node = todo.pop()
        if len(path) > MAX_DEPTH:
            raise SchemaError(
                f"the schema is nested too deeply (nested more than {MAX_DEPTH} levels): "
                "move deep parts into $defs and refer to them with $ref",
                pointer(path[:MAX_DEPTH]),
            )
        if isinstance(node, Mapping):
            objects += 1
            if objects > MAX_SUBSCHEMAS:
                raise SchemaError(
                    f"the schema holds more than {MAX_SUBSCHEMAS:,} JSON objects: move "
                    "repeated parts into $defs and refer to them with $ref, or split it",
                    pointer(path),
                )
            props = node.get("properties")
            if isinstance(props, Mapping) and len(props) > MAX_PROPERTIES:
                raise SchemaError(
                    f"this object lists {len(props):,} properties; the limit is "
                    f"{MAX_PROPERTIES:,}: group them into nested objects, or describe them "
                    'with "additionalProperties" and a "propertyNames" pattern',
                    pointer((*path, "properties")),
                )
            todo.extend(((*path, k), v) for k, v in node.items())
        elif isinstance(node, list):
            todo.extend(((*path, i), v) for i, v in enumerate(node))


@dataclass(frozen=True)
class RegexCost:
    """``regex_cost``'s answer: ``length``, the estimated characters of outlines-core's regex
    (with no whitespace between tokens), and ``recursive``, the JSON pointer of a ``$ref``
    that leads back into itself (``None`` if there is none): outlines-core unrolls such a
    schema to a fixed depth without saying so, so it takes the grammar path."""

    length: int
    recursive: str | None = None
    ref_depth: int = 0


_CONTAINERS = frozenset(("properties", "items", "prefixItems", "anyOf", "oneOf", "allOf", "$ref"))
_CAP = 10**12  # an estimate past any budget; keeps the arithmetic small


@bounded(maxsize=256)
def _leaf_length(text: str) -> int:
    """outlines-core's regex length for a subschema with no subschemas (cheap to build)."""
    from outlines_core.json_schema import build_regex_from_schema  # compiled; on first use

    try:
        return len(build_regex_from_schema(text, ""))
    except (ValueError, TypeError):
        return 0  # refused: the whole build will be refused too


def regex_cost(root: Mapping[str, Any], refs: bool = True) -> RegexCost:
    """Estimate outlines-core's regex for ``root`` from its shape, building only the regexes
    of leaves (subschemas with no subschemas, cached by their text). ``refs=False`` where
    ``root`` surely holds no ``$ref`` (its text names none): no depth of them is looked for.

    The estimate follows outlines-core's construction: properties in sequence when some are
    required; with none required, one alternative per property spelling every property up
    to it (``n (n + 1) / 2`` property regexes); items twice (the first and the rest);
    ``anyOf``/``oneOf``/``allOf`` as the sum of their parts; a ``$ref`` as its target.
    """
    recursive: list[str] = []
    memo: dict[int, int] = {}

    def cost(node: object, path: tuple[str | int, ...], refs: tuple[str, ...]) -> int:
        if type(node) is not dict and not isinstance(node, Mapping):  # a loaded schema's dict
            return 12_955 if node is True else 10  # outlines' regex for any JSON value
        if id(node) in memo:
            return memo[id(node)]
        total = 0
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in refs:
                if not recursive:
                    recursive.append(pointer(path))
                return _CAP
            target = resolve(root, ref)
            total += cost(target[1], target[0], (*refs, ref)) if target else 10
        extra = node.get("additionalProperties")
        if _CONTAINERS.isdisjoint(node) and not isinstance(extra, Mapping):
            leaf = node
            if "$defs" in node or "definitions" in node:
                leaf = {k: v for k, v in node.items() if k not in ("$defs", "definitions")}
            return _leaf_length(json.dumps(leaf))
        props = node.get("properties")
        if isinstance(props, Mapping) and props:
            sizes = [
                len(_quoted(name)) + 6 + cost(sub, (*path, "properties", name), refs)
                for name, sub in props.items()
            ]
            required = node.get("required")
            in_sequence = isinstance(required, list) and any(r in props for r in required)
            total = _with_properties(total, sizes, in_sequence)
        elif isinstance(extra, Mapping):
            total += 2 * cost(extra, (*path, "additionalProperties"), refs) + 100
        elif node.get("type") == "object" or extra is not None:
            total += 6_428  # outlines' free-form object
        items = node.get("items")
        if isinstance(items, (Mapping, bool)):
            total += 2 * cost(items, (*path, "items"), refs) + 30
        for key in ("prefixItems", "anyOf", "oneOf", "allOf"):
            parts = node.get(key)
            if isinstance(parts, list):
                total += sum(cost(p, (*path, key, i), refs) + 3 for i, p in enumerate(parts))
        total = min(total + 10, _CAP)
        memo[id(node)] = total
        return total

    length = cost(root, (), ())
    if recursive:
        return RegexCost(length, recursive[0])
    return RegexCost(length, None, _ref_depth(root) if refs else 0)


def _with_properties(total: int, sizes: list[int], in_sequence: bool) -> int:
    """``total`` plus the length of an object's properties, each ``sizes[i]`` long: in
    sequence when some are required; else one alternative per property spelling every
    property up to it (counted until the total passes the cap).

    >>> _with_properties(0, [5, 7], True), _with_properties(0, [5, 7], False)
    (12, 17)
    """
    if in_sequence:
        return total + sum(sizes)
    running = 0
    for size in sizes:
        running += size
        total += running
        if total > _CAP:
            break
    return total


def _ref_depth(root: Mapping[str, Any]) -> int:
    """The most ``$ref``s followed one inside another on any path (the schema is not
    recursive). outlines-core writes a fourth one as ``{...,}``: broken JSON, no error."""
    memo: dict[int, int] = {}

    def depth(node: Mapping[str, Any]) -> int:
        if id(node) in memo:
            return memo[id(node)]
        memo[id(node)] = 0  # a guard; the schema has no cycle
        deepest = 0
        for _, part in subschemas(node):
            ref = part.get("$ref")
            if isinstance(ref, str):
                target = resolve(root, ref)
                if target is not None and isinstance(target[1], Mapping):
                    deepest = max(deepest, 1 + depth(target[1]))
        memo[id(node)] = deepest
        return deepest

    body = {k: v for k, v in root.items() if k not in ("$defs", "definitions")}
    return depth(body)
