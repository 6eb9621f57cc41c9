"""Which keywords of a JSON Schema a constraint enforces, and which it leaves to luck.

A constraint built from a schema keeps only part of what the schema says: outlines-core's
regex has no ``minimum`` (a ``price`` with ``"minimum": 0`` takes ``-10.99``), llguidance has
no ``uniqueItems``. Output that breaks such a keyword is written without a word, and fails
validation afterwards. ``unenforced`` walks the schema and names every such keyword by its
JSON pointer, for the path that compiled it:

* ``"regex"`` (outlines-core 0.2.14's ``build_regex_from_schema``): it enforces
  ``REGEX_ENFORCED``, and fsmviz adds the bounds of integers (``fsmviz.schema.ranges``);
  ``oneOf`` is written as ``anyOf`` (a value matching two branches is
  not refused), and the number bounds, ``uniqueItems``, ``maxProperties``, ``contains``,
  ``patternProperties``... are not written at all;
* ``"grammar"`` (llguidance 1.9.1's JSON Schema compiler, run ``lenient``: its
  ``docs/json_schema.md`` lists what it supports; what it does not, it reports as
  "Unimplemented keys" or "Unknown format", and fsmviz names those here).

Keywords that only annotate (``title``, ``description``, ``default``, ``examples``...) and
unknown keys constrain nothing in draft 2020-12 and are never named.

>>> s = {"type": "object", "properties": {"price": {"type": "number", "maximum": 99}}}
>>> unenforced(s, "regex")
(('/properties/price', 'maximum'),)
>>> unenforced(s, "grammar")
()
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fsmviz.schema.document import pointer
from fsmviz.schema.ranges import BOUNDS, bounded_integer, signed_number

__all__ = ["ASSERTIONS", "GRAMMAR_ENFORCED", "REGEX_ENFORCED", "unenforced"]

ASSERTIONS = frozenset(
    {
        # any type
        "type", "enum", "const", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
        "$ref", "$dynamicRef",
        # numbers
        "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        # strings
        "minLength", "maxLength", "pattern", "format",
        # arrays
        "items", "prefixItems", "additionalItems", "contains", "minContains", "maxContains",
        "minItems", "maxItems", "uniqueItems", "unevaluatedItems",
        # objects
        "properties", "patternProperties", "additionalProperties", "required",
        "propertyNames", "minProperties", "maxProperties", "dependentRequired",
        "dependentSchemas", "dependencies", "unevaluatedProperties",
    }
)  # fmt: skip
"""The keywords of draft 2020-12 (and draft 7's ``dependencies``, ``additionalItems``) that
constrain a value: the ones a constraint may fail to enforce."""

REGEX_ENFORCED = frozenset(
    {
        "type", "enum", "const", "allOf", "anyOf", "$ref", "minLength", "maxLength",
        "pattern", "format", "items", "prefixItems", "minItems", "maxItems", "properties",
        "additionalProperties", "required", "minProperties",
    }
)  # fmt: skip
"""What outlines-core's regex enforces (formats: the ones it knows; others it refuses)."""

GRAMMAR_ENFORCED = frozenset(
    {
        "type", "enum", "const", "allOf", "anyOf", "$ref", "minLength", "maxLength",
        "pattern", "format", "items", "prefixItems", "additionalItems", "minItems",
        "maxItems", "properties", "additionalProperties", "required", "minProperties",
        "maxProperties", "patternProperties", "multipleOf", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum",
    }
)  # fmt: skip
"""What llguidance's JSON Schema compiler enforces (formats: ``GRAMMAR_FORMATS``)."""

GRAMMAR_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid", "uri"}
)
"""The formats llguidance 1.9.1 knows; others it leaves free (lenient mode) and names."""

_SUBSCHEMA = (
    "items", "additionalProperties", "additionalItems", "contains", "not", "if", "then",
    "else", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
)  # fmt: skip
_SUBSCHEMA_LISTS = ("prefixItems", "anyOf", "oneOf", "allOf")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")


def subschemas(
    node: Mapping[str, Any], path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], Mapping[str, Any]]]:
    """Every subschema under ``node`` (all keywords that hold one), with its path; iterative
    and each object once. A node's own keys are looked at (a few), not every keyword that
    may hold a subschema (twenty), in the keywords' order (``_RANK``): a schema's
    compilation walks its subschemas six times.

    >>> [where for where, _ in subschemas({"items": {"anyOf": [{}, True]}, "not": {}})]
    [(), ('not',), ('items',), ('items', 'anyOf', 0)]
    """
    todo: list[tuple[tuple[str | int, ...], object]] = [(path, node)]
    while todo:
        where, value = todo.pop()
        if type(value) is not dict and not isinstance(value, Mapping):  # a loaded dict first
            continue
        yield where, value
        keys = [key for key in value if key in _RANK]
        if len(keys) > 1:
            keys.sort(key=_RANK.__getitem__)
        for key in keys:
            parts = value[key]
            if key in _SUBSCHEMA_MAPS:
                if type(parts) is dict or isinstance(parts, Mapping):
                    todo += [((*where, key, k), p) for k, p in parts.items()]
            elif key in _SUBSCHEMA_LISTS:
                if isinstance(parts, list):
                    todo += [((*where, key, i), p) for i, p in enumerate(parts)]
            elif isinstance(parts, Mapping):
                todo.append(((*where, key), parts))


_RANK = {key: i for i, key in enumerate(_SUBSCHEMA + _SUBSCHEMA_LISTS + _SUBSCHEMA_MAPS)}
"""Each keyword that holds subschemas, by the order ``subschemas`` takes them in."""


def unenforced(schema: Mapping[str, Any], path: str) -> tuple[tuple[str, str], ...]:
    """The (JSON pointer of the subschema, keyword) pairs the ``path``'s constraint does not
    enforce, sorted by pointer. ``path`` is ``"regex"`` or ``"grammar"``.

    Inside a keyword that is itself not enforced (the subschemas of a ``not``) nothing more
    is named: the outer keyword says it. ``oneOf`` is named on both paths: both write it as
    ``anyOf``, so a value that matches two of its branches is not refused.
    """
    enforced = REGEX_ENFORCED if path == "regex" else GRAMMAR_ENFORCED
    found: list[tuple[tuple[str | int, ...], str]] = []
    skipped: list[tuple[str | int, ...]] = []
    for where, node in subschemas(schema):
        if any(where[: len(s)] == s for s in skipped):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            found.append((where, "$ref"))  # a remote $ref: neither engine fetches it
        ranged = path == "regex" and (
            bounded_integer(node) is not None or signed_number(node) is not None
        )
        for key in node:
            if ranged and key in BOUNDS:
                continue  # written as a range of integers (fsmviz.schema.ranges)
            if key not in ASSERTIONS or key in enforced:
                if key == "format" and path == "grammar" and node.get(key) not in GRAMMAR_FORMATS:
                    found.append((where, key))
                continue
            found.append((where, key))
            if key not in ("oneOf", "items", "additionalProperties"):
                skipped.append((*where, key))
    found.sort(key=lambda f: [str(p) for p in f[0]])
    return tuple((pointer(where), key) for where, key in found)
