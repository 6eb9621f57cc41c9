"""Differential testing of a compiled schema against JSON Schema: is every valid instance the
constraint refuses explained by a rule it names (``.stricter``)?

A constraint writes JSON one way; JSON Schema's instances come spelled many ways (any key
order, any whitespace, ``1.0`` for an integer). To compare fairly, an instance is first
written in the constraint's own form (``canonical``: keys in the order of the schema's
``properties``, compact separators, the characters JSON needs escaped and no others), and
only what is still refused needs a reason. ``explain`` gives one, or says there is none:

1. the canonical form is accepted: the refusal was only the key order or the whitespace
   (both named rules);
2. written with its integral numbers as integers (``1.0`` as ``1``, equal in JSON Schema),
   it is accepted: the integer or the ``enum``/``const`` spelling rule;
3. some object of it, its keys in another order, is accepted: the key-order rule (an
   ``allOf`` or a ``$ref`` beside ``properties`` merges keys in the engine's own order);
4. a value of it breaks a named rule where that rule applies (the schema and the instance
   walked together): a key beyond ``properties``, a non-object where ``properties`` stand
   without a ``type``, a string outside the format, a free-form value nested too deep, a
   character no string may hold.

An instance none of these explains is a bug to fix (``fsmviz.schema.mend`` holds two found
this way). ``tests/test_schema_differential.py`` and ``bench/differential.py`` run it over
the JSON-Schema-Test-Suite and the public schemas the benchmarks measure.

>>> from fsmviz.schema.convert import compile_schema
>>> c = compile_schema({"type": "object", "properties": {"a": {"type": "integer"},
...     "b": {"type": "integer"}}}, "none")
>>> explain(c, {"b": 1, "a": 2.0})
('/properties/a', 'an integer written plainly: `1`, not `1.0`, `1e0` or `-0`')
>>> explain(c, {"b": 1, "a": 2}, '{"b": 1, "a": 2}')
('/', 'keys in the order of `properties`')
>>> explain(c, {"a": 1, "c": 2})[1]
'no keys beyond `properties` (the additional properties the schema allows are not written)'
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from fsmviz.schema import stricter as rules
from fsmviz.schema.convert import compile_schema
from fsmviz.schema.document import pointer, resolve
from fsmviz.schema.guarded import bounded_patterns, validator

__all__ = ["canonical", "explain", "schema_pairs"]


class Compiled(Protocol):
    schema: dict[str, Any]
    path: str
    whitespace: str | None
    stricter: tuple[tuple[str, str], ...]

    def accepts(self, text: str) -> bool: ...


def _ordered(value: Any, node: object, root: Mapping[str, Any], depth: int = 0) -> Any:
    """``value`` with each object's keys in the order its schema lists them: ``properties``,
    then those of an ``allOf``'s parts and of a ``$ref``'s target, then the rest."""
    if depth > 64:
        return value
    names = _listed(node, root, value) if isinstance(node, Mapping) else {}
    if isinstance(value, dict):
        keys = [k for k in names if k in value] + [k for k in value if k not in names]
        return {k: _ordered(value[k], names.get(k, {}), root, depth + 1) for k in keys}
    if isinstance(value, list) and isinstance(node, Mapping):
        node = _resolved(node, root)
        prefix = node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else []
        items = node.get("items") if isinstance(node.get("items"), Mapping) else {}
        return [_ordered(v, prefix[i] if i < len(prefix) else items, root, depth + 1)
                for i, v in enumerate(value)]  # fmt: skip
    return value


def _resolved(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    for _ in range(8):
        ref = node.get("$ref")
        target = resolve(root, ref) if isinstance(ref, str) else None
        if target is None or not isinstance(target[1], Mapping):
            break
        node = {**target[1], **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _listed(
    node: Mapping[str, Any], root: Mapping[str, Any], value: Any = None, depth: int = 0
) -> dict[str, Any]:
    """The property names ``node`` lists for an object ``value``, in order, with their
    subschemas: its own, its ``allOf`` parts', then those of the ``anyOf``/``oneOf`` branch
    ``value`` is valid for (of those, the one that lists most of its keys)."""
    node = _resolved(node, root)
    names: dict[str, Any] = {}
    for part in [node, *(p for p in node.get("allOf") or () if isinstance(p, Mapping))]:
        part = _resolved(part, root)
        props = part.get("properties")
        if isinstance(props, Mapping):
            for k, v in props.items():
                names.setdefault(k, v)
    keys = set(value) if isinstance(value, dict) else set()
    branches = [b for key in ("anyOf", "oneOf") for b in node.get(key) or ()
                if isinstance(b, Mapping)]  # fmt: skip
    if branches and depth < 8:
        fits = [_fits(b, root, value) if isinstance(value, dict) else False for b in branches]
        listed = [_listed(b, root, value, depth + 1) for b in branches]
        best = max(range(len(listed)), key=lambda i: (fits[i], len(keys & set(listed[i]))))
        for k, v in listed[best].items():
            names.setdefault(k, v)
    return names


def _fits(branch: Mapping[str, Any], root: Mapping[str, Any], value: Any) -> bool:
    """Whether ``value`` is valid for one branch of an ``anyOf`` (the root's definitions
    and draft kept): the branch whose key order it is written in."""
    part = dict(branch)
    for key in ("$defs", "definitions", "$schema"):
        if key in root and key not in part:
            part[key] = root[key]
    try:
        with bounded_patterns():
            return bool(validator(part).is_valid(value))
    except Exception:  # noqa: BLE001 - a reference it cannot follow, a slow pattern: no
        return False


def canonical(value: Any, schema: Mapping[str, Any] | None = None) -> str:
    """``value`` as the constraint writes it: each object's keys in its schema's order
    (``properties``), compact, only the characters JSON must escape escaped.

    >>> canonical({"b": [1.5, "é"], "a": None}, {"properties": {"a": {}, "b": {}}})
    '{"a":null,"b":[1.5,"é"]}'
    """
    if schema is not None:
        value = _ordered(value, schema, schema)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _integral(value: Any) -> Any:
    """``value`` with every float that is a whole number written as an integer."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def schema_pairs(
    value: Any, root: Mapping[str, Any]
) -> Iterator[tuple[Any, str, Mapping[str, Any]]]:
    """Every (part of ``value``, JSON pointer of a subschema, that subschema) where the
    subschema applies to that part: ``properties`` and ``additionalProperties`` by key,
    ``prefixItems`` and ``items`` by index, each branch of ``anyOf``/``oneOf``/``allOf``,
    and a local ``$ref``'s target (named by its own pointer).

    >>> [(v, w) for v, w, _ in schema_pairs({"a": [1]}, {"properties": {"a": {"items": {}}}})]
    [({'a': [1]}, ''), ([1], '/properties/a'), (1, '/properties/a/items')]
    """
    todo: list[tuple[Any, tuple[str | int, ...], object, int]] = [(value, (), root, 0)]
    seen: set[tuple[int, tuple[str | int, ...]]] = set()
    while todo:
        part, where, node, depth = todo.pop(0)
        if not isinstance(node, Mapping) or depth > 64 or (id(part), where) in seen:
            continue  # each part of the value with each subschema once: a $ref may loop
        seen.add((id(part), where))
        yield part, pointer(where), node
        ref = node.get("$ref")
        target = resolve(root, ref) if isinstance(ref, str) else None
        if target is not None:
            todo.append((part, tuple(target[0]), target[1], depth + 1))
        for key in ("anyOf", "oneOf", "allOf"):
            for i, branch in enumerate(node.get(key) or ()):
                todo.append((part, (*where, key, i), branch, depth + 1))
        if isinstance(part, dict):
            props = node.get("properties") if isinstance(node.get("properties"), Mapping) else {}
            extra = node.get("additionalProperties")
            for k, v in part.items():
                if k in props:
                    todo.append((v, (*where, "properties", k), props[k], depth + 1))
                elif isinstance(extra, Mapping):
                    todo.append((v, (*where, "additionalProperties"), extra, depth + 1))
        elif isinstance(part, list):
            prefix = node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else []
            for i, v in enumerate(part):
                if i < len(prefix):
                    todo.append((v, (*where, "prefixItems", i), prefix[i], depth + 1))
                elif isinstance(node.get("items"), Mapping):
                    todo.append((v, (*where, "items"), node["items"], depth + 1))


def _depth(value: Any) -> int:
    """Levels of arrays and objects in ``value`` (``[[1]]``: 2)."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _unwritable_character(value: Any, path: str) -> bool:
    """Whether a string (or key) of ``value`` holds a character the path cannot write."""
    if path == "regex":
        bad = {chr(c) for c in range(0x20)} - set("\b\f\n\r\t") | {
            chr(c) for c in range(0x7F, 0xA0)
        }
    else:
        bad = {"\x7f"}
    return any(any(c in bad for c in s) for s in _strings(value))


def _equal(a: Any, b: Any) -> bool:
    """JSON Schema's equality: numbers by value, ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _breaks(compiled: Compiled, rule: str, part: Any, node: Mapping[str, Any]) -> bool:
    """Whether ``part`` (a value the subschema ``node`` applies to) breaks ``rule`` there."""
    if rule == rules.LISTED_KEYS:
        props = node.get("properties") if isinstance(node.get("properties"), Mapping) else {}
        return isinstance(part, dict) and any(k not in props for k in part)
    if rule == rules.OBJECT_ONLY:
        return not isinstance(part, dict)
    if rule == rules.ONE_SPELLING:
        members = [*(node.get("enum") or ()), *([node["const"]] if "const" in node else [])]
        return any(
            _equal(part, m) for m in members if not isinstance(m, (str, bool)) and m is not None
        )
    if rule == rules.DIGITS:
        return isinstance(part, (int, float)) and not isinstance(part, bool)
    if rule == rules.DEPTH:
        return _depth(part) > rules.FREE_DEPTH
    if rule == rules.MINUS_ZERO:
        return isinstance(part, float) and part == 0 and str(part).startswith("-")
    if rule == rules.FORMAT:
        return isinstance(part, str) and not _in_format(compiled.path, node["format"], part)
    return False


def _in_format(path: str, form: str, text: str) -> bool:
    """Whether the path's constraint for a string of this format takes ``text``."""
    try:
        alone = compile_schema({"type": "string", "format": form}, "none", path=path)
    except ValueError:
        return True
    return alone.accepts(_compact(text))


def _orders(value: Any, budget: int = 120) -> Iterator[Any]:
    """``value`` with one object's keys in another order, for each object of 2 to 5 keys
    (at most ``budget`` in all)."""
    spots: list[tuple[Any, ...]] = []
    todo: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while todo:
        where, part = todo.pop()
        if isinstance(part, dict):
            if 2 <= len(part) <= 5:
                spots.append(where)
            todo += [((*where, k), v) for k, v in part.items()]
        elif isinstance(part, list):
            todo += [((*where, i), v) for i, v in enumerate(part)]
    made = 0
    for where in spots:
        for order in itertools.permutations(_at(value, where)):
            if made >= budget:
                return
            made += 1
            yield _put(value, where, order)


def _at(value: Any, where: tuple[Any, ...]) -> Any:
    for step in where:
        value = value[step]
    return value


def _put(value: Any, where: tuple[Any, ...], order: tuple[str, ...]) -> Any:
    if not where:
        return {k: value[k] for k in order}
    if isinstance(value, dict):
        return {k: (_put(v, where[1:], order) if k == where[0] else v) for k, v in value.items()}
    return [_put(v, where[1:], order) if i == where[0] else v for i, v in enumerate(value)]


def explain(compiled: Compiled, value: Any, text: str | None = None) -> tuple[str, str] | None:
    """Why the constraint refuses ``value`` (valid JSON for its schema, written ``text``, or
    in canonical form when ``text`` is None): the (JSON pointer, rule) of ``.stricter``
    that forbids it (pointer ``/`` for the root), ``("", "")`` when it is not refused at
    all, and None when no named rule explains the refusal: a bug."""
    named = {rule: where or "/" for where, rule in reversed(compiled.stricter)}
    schema = compiled.schema
    written = text if text is not None else canonical(value, schema)
    if compiled.accepts(written):
        return ("", "")
    if compiled.accepts(canonical(value, schema)):
        keys_moved = text is not None and _compact(json.loads(text)) != canonical(value, schema)
        if keys_moved and rules.KEY_ORDER in named:
            return named[rules.KEY_ORDER], rules.KEY_ORDER
        for rule in rules.WHITESPACE_RULES.values():
            if rule in named:
                return named[rule], rule
        return None
    whole = _integral(value)
    respelled = any(type(a) is not type(b) for a, b in _leaves(whole, value))
    if respelled and compiled.accepts(canonical(whole, schema)):
        for rule in (rules.INTEGER, rules.ONE_SPELLING):
            if rule in named:
                return named[rule], rule
    if rules.KEY_ORDER in named:
        for other in _orders(_ordered(value, schema, schema)):
            if compiled.accepts(_compact(other)) or compiled.accepts(_compact(_integral(other))):
                return named[rules.KEY_ORDER], rules.KEY_ORDER
    for where, rule in compiled.stricter:
        strings = rule in (rules.STRINGS_REGEX, rules.STRINGS_GRAMMAR)
        if strings and _unwritable_character(value, compiled.path):
            return where or "/", rule
    by_place: dict[str, list[str]] = {}
    for where, rule in compiled.stricter:
        by_place.setdefault(where, []).append(rule)
    for part, where, node in schema_pairs(value, schema):
        for rule in by_place.get(where, ()):
            if _breaks(compiled, rule, part, node):
                return where or "/", rule
    return None


def _leaves(a: Any, b: Any) -> Iterator[tuple[Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            yield from _leaves(a[k], b.get(k))
    elif isinstance(a, list) and isinstance(b, list):
        for x, y in zip(a, b, strict=False):
            yield from _leaves(x, y)
    else:
        yield a, b
