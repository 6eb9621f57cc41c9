"""Where a constraint is *stricter* than its schema: JSON the schema allows that it refuses.

``keywords.unenforced`` names what a constraint lets through that the schema forbids; this
module names the other side. A constraint writes JSON one way, where JSON Schema takes many:
outlines-core and llguidance both write an object's keys in the order of ``properties``
(``{"b":1,"a":2}`` is valid for ``properties: {a, b}`` but cannot be written), a chosen
whitespace, ``1`` and never ``1.0`` for an integer, and so on. A model that wants one of the
other spellings is refused without a word, its valid mass collapses, and the engineer
blames the model. ``stricter`` walks the schema and names every such rule by the JSON
pointer of the subschema it applies to, for the path that compiled it:

* ``"regex"`` (outlines-core 0.2.14's regex, as fsmviz mends it): keys in the order of
  ``properties`` and *only* those keys (it writes no additional properties unless asked);
  a schema with ``properties`` and no ``type`` written as an object; integers without a
  fraction; an exponent with its sign; the digit counts of outlines-core's own keywords
  (``maxDigits``...); ``enum``/``const`` values spelled as the schema spells them; formats
  enforced; free-form values (``{}``, an object with no ``properties``) nested at most
  ``FREE_DEPTH`` deep; strings without ``\\u`` escapes;
* ``"grammar"`` (llguidance 1.9.1): keys in the order of ``properties``; integers without a
  fraction; ``enum``/``const`` spelled one way; formats enforced; strings without a raw
  DEL or a needless escape.

Both name their whitespace rule. Each rule was found by ``fsmviz.schema.differential``:
valid instances of the JSON-Schema-Test-Suite and of public schemas that the constraint
refuses, each explained by one of these rules.

>>> s = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {}}}
>>> for where, rule in stricter(s, "regex", "none"):
...     print(where or "/", "|", rule)
/ | no whitespace between JSON tokens
/ | strings without `\\u` escapes: no control character but \\b \\f \\n \\r \\t, no character U+007F to U+009F
/ | keys in the order of `properties`
/ | no keys beyond `properties` (the additional properties the schema allows are not written)
/properties/a | an integer written plainly: `1`, not `1.0`, `1e0` or `-0`
/properties/b | a number's exponent with its sign: `1e+5`, not `1e5`
/properties/b | free-form values nest at most 3 levels of arrays and objects
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsmviz.schema.document import pointer, resolve
from fsmviz.schema.keywords import GRAMMAR_FORMATS, subschemas
from fsmviz.schema.ranges import bounded_integer, signed_number

__all__ = [
    "DEPTH",
    "DIGITS",
    "EXPONENT",
    "FORMAT",
    "FREE_DEPTH",
    "INTEGER",
    "KEY_ORDER",
    "LISTED_KEYS",
    "MINUS_ZERO",
    "OBJECT_ONLY",
    "ONE_SPELLING",
    "STRINGS_GRAMMAR",
    "STRINGS_REGEX",
    "WHITESPACE_RULES",
    "stricter",
]

FREE_DEPTH = 3
"""How deep outlines-core 0.2.14 writes a free-form value (arrays and objects, counted from
the value itself): ``[[[1]]]`` is written, ``[[[[1]]]]`` is not."""

KEY_ORDER = "keys in the order of `properties`"
LISTED_KEYS = (
    "no keys beyond `properties` (the additional properties the schema allows are not written)"
)
OBJECT_ONLY = "an object only (with no `type`, the schema allows any other type too)"
INTEGER = "an integer written plainly: `1`, not `1.0`, `1e0` or `-0`"
EXPONENT = "a number's exponent with its sign: `1e+5`, not `1e5`"
MINUS_ZERO = "zero written `0`, not `-0`"
ONE_SPELLING = (
    "an enum or const value spelled one way: a number as the schema writes it (`1`, not "
    "`1.0`), an object's keys in the schema's order"
)
DIGITS = (
    "the digit counts of outlines-core's own keywords (`maxDigits`, `minDigitsFraction`...), "
    "which JSON Schema ignores"
)
DIGIT_KEYWORDS = frozenset(
    f"{end}Digits{part}"
    for end in ("min", "max")
    for part in ("", "Integer", "Fraction", "Exponent")
)
"""outlines-core's keywords for the digits of a number, unknown to JSON Schema."""
FORMAT = "the `format` enforced (JSON Schema makes it an annotation: any string is valid)"
DEPTH = f"free-form values nest at most {FREE_DEPTH} levels of arrays and objects"
STRINGS_REGEX = (
    "strings without `\\u` escapes: no control character but \\b \\f \\n \\r \\t, "
    "no character U+007F to U+009F"
)
STRINGS_GRAMMAR = (
    "strings without a raw U+007F, and no `\\u` or `\\/` escape where a plain character will do"
)
WHITESPACE_RULES: dict[str | None, str] = {
    "none": "no whitespace between JSON tokens",
    "space": "at most one space between JSON tokens (no newline or tab), none before or "
    "after the value",
    "flexible": "whitespace between JSON tokens of spaces, tabs and newlines only (no "
    "carriage return), none before or after the value",
}
"""The whitespace each of fsmviz's settings (``convert.WHITESPACE``) writes; JSON allows
any run of spaces, tabs, newlines and carriage returns around every token."""
WHITESPACE_RULES[None] = WHITESPACE_RULES["default"] = WHITESPACE_RULES["space"]

_ANNOTATIONS = frozenset(
    ("title", "description", "default", "examples", "$comment", "$schema", "$id", "deprecated",
     "readOnly", "writeOnly", "$anchor", "$defs", "definitions")
)  # fmt: skip


def _types(node: Mapping[str, Any]) -> set[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return {kind}
    return {k for k in kind if isinstance(k, str)} if isinstance(kind, list) else set()


def _free_form(node: Mapping[str, Any]) -> bool:
    """Whether outlines-core writes ``node`` as a free-form value: any value (no keyword that
    constrains it), or an object or array with nothing said about its contents."""
    if not any(k not in _ANNOTATIONS for k in node):
        return True
    kinds = _types(node)
    shaped = ("properties", "additionalProperties", "patternProperties", "enum", "const")
    if "object" in kinds and not any(k in node for k in shaped):
        return True
    return "array" in kinds and not any(
        k in node for k in ("items", "prefixItems", "enum", "const")
    )


def _merged_keys(node: Mapping[str, Any], root: Mapping[str, Any]) -> int:
    """How many keys ``node`` lists with those of its ``allOf`` parts and ``$ref`` target,
    which llguidance merges into one object, its keys in an order of its own."""
    parts = [node, *(p for p in node.get("allOf") or () if isinstance(p, Mapping))]
    ref = node.get("$ref")
    target = resolve(root, ref) if isinstance(ref, str) else None
    if target is not None and isinstance(target[1], Mapping):
        parts.append(target[1])
    names = {k for part in parts if isinstance(part.get("properties"), Mapping)
             for k in part["properties"]}  # fmt: skip
    return len(names) if len(parts) > 1 else 0


def _spelled(values: list[Any]) -> bool:
    """Whether some value of an ``enum``/``const`` has other spellings JSON Schema calls
    equal: a number (``1`` and ``1.0``), or an array or object (keys, numbers inside)."""
    return any(isinstance(v, (int, float, list, dict)) and not isinstance(v, bool) for v in values)


def stricter(
    schema: Mapping[str, Any], path: str, whitespace: str | None = None
) -> tuple[tuple[str, str], ...]:
    """The (JSON pointer of the subschema, rule) pairs where the ``path``'s constraint
    (``"regex"`` or ``"grammar"``) refuses JSON the schema allows, whitespace first (at
    ``""``), then by pointer. ``whitespace`` is fsmviz's setting (``convert.WHITESPACE``)."""
    found: set[tuple[tuple[str | int, ...], str]] = set()
    strings = False
    for where, node in subschemas(schema):
        kinds = _types(node)
        props = node.get("properties")
        if isinstance(props, Mapping) and len(props) > 1:
            found.add((where, KEY_ORDER))
        if path == "grammar" and _merged_keys(node, schema) > 1:
            found.add((where, KEY_ORDER))  # an allOf's or a $ref's keys merged with these
        if path == "regex" and isinstance(props, Mapping):
            if node.get("additionalProperties", True) is not False or "patternProperties" in node:
                found.add((where, LISTED_KEYS))
            if "type" not in node and not any(k in node for k in ("enum", "const", "$ref")):
                found.add((where, OBJECT_ONLY))
        if "integer" in kinds:
            found.add((where, INTEGER))
        if path == "regex" and DIGIT_KEYWORDS & set(node):
            found.add((where, DIGITS))
        if path == "regex" and "number" in kinds:
            found.add((where, MINUS_ZERO if signed_number(node) == "min0" else EXPONENT))
        values = node.get("enum") if isinstance(node.get("enum"), list) else []
        if "const" in node:
            values = [*values, node["const"]]
        if _spelled(values):
            found.add((where, ONE_SPELLING))
        form = node.get("format") if "enum" not in node and "const" not in node else None
        if isinstance(form, str) and (path == "regex" or form in GRAMMAR_FORMATS):
            found.add((where, FORMAT))
        free = path == "regex" and _free_form(node)
        if free:
            found.add((where, DEPTH))
            if "object" not in kinds and "array" not in kinds and bounded_integer(node) is None:
                found.add((where, EXPONENT))  # any value: a number among them
        strings = strings or free or "string" in kinds or (
            "object" in kinds and not isinstance(props, Mapping))  # fmt: skip
    rules = [("", WHITESPACE_RULES.get(whitespace, WHITESPACE_RULES[None]))]
    if strings:
        rules.append(("", STRINGS_REGEX if path == "regex" else STRINGS_GRAMMAR))
    order = sorted(found, key=lambda f: ([str(p) for p in f[0]], _RANK.get(f[1], 99)))
    return (*rules, *((pointer(where), rule) for where, rule in order))


_RANK = {rule: i for i, rule in enumerate(
    (KEY_ORDER, LISTED_KEYS, OBJECT_ONLY, INTEGER, DIGITS, EXPONENT, MINUS_ZERO, ONE_SPELLING,
     FORMAT, DEPTH))}  # fmt: skip
