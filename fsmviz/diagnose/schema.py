"""The doctor speaks schema: findings about a JSON Schema, named by JSON pointer.

A schema's regex fails in the ways any regex does, but the user wrote a schema, not a
regex, so every finding here names the schema location (``/properties/name``) and, where a
schema change avoids the problem, carries the whole rewritten schema (JSON text) to apply in
one click. Two sources:

* **the schema itself** (``schema_findings``): a string with no ``maxLength`` the model may
  ride forever (outlines #1131), an array with no ``maxItems``, a free-form object
  (``additionalProperties``), digits without end, flexible whitespace (outlines #839,
  xgrammar #412), keywords the regex does not enforce, and the rules by which it is
  stricter than the schema (``compile_schema(...).stricter``: keys in the schema's order,
  its whitespace...: valid JSON the model may want and cannot write);
* **the regex doctor** (``diagnose`` on the schema's regex): each of its findings that
  carries a ``span`` is named by the subschema whose regex holds that span
  (``fsmviz.schema.convert.locate``). Those that repeat a schema finding are dropped.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from fsmviz.diagnose.finding import RANK, Finding, Severity
from fsmviz.generation.trace import Trace
from fsmviz.schema.by_grammar import SchemaGrammar
from fsmviz.schema.convert import (
    WHITESPACE,
    SchemaLocations,
    SchemaRegex,
    compile_schema,
    pointer,
    walk,
)
from fsmviz.schema.keywords import unenforced as unenforced_keywords
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "SCHEMA_KINDS",
    "SchemaFinding",
    "diagnose_schema",
    "name_findings",
    "schema_findings",
    "stricter_findings",
]

SCHEMA_KINDS: dict[str, str] = {
    "unbounded_string": "a string with no maxLength: the model may write it forever",
    "unbounded_array": "an array with no maxItems: the model may add items forever",
    "free_form_object": "an object with any keys (additionalProperties): unbounded and vague",
    "unbounded_digits": "a number whose digits have no bound",
    "flexible_whitespace": "whitespace runs between JSON tokens: the commonest JSON loop",
    "ignored_keyword": "a keyword the constraint does not enforce: the output may not validate",
    "stricter_rule": "a rule stricter than the schema: valid JSON written otherwise is refused",
    "grammar_path": "the schema takes the grammar path (llguidance), not the regex path",
}
"""Every schema finding kind (the regex doctor's kinds are in ``finding.KINDS``)."""

STRING_BOUND = 50
ARRAY_BOUND = 5
DIGITS_BOUND = 9


@dataclass(frozen=True)
class SchemaFinding:
    """One diagnosis of a schema.

    ``pointer`` is the JSON pointer of the subschema concerned (``""``: the whole schema).
    ``schema`` is the whole schema rewritten to avoid the problem (JSON text), and
    ``whitespace`` a better whitespace choice, when either exists. ``span`` is where in the
    schema's regex; ``finding`` the regex doctor's own finding this one names, if any.
    """

    kind: str
    severity: Severity
    message: str
    pointer: str
    schema: str | None = None
    whitespace: str | None = None
    span: tuple[int, int] | None = None
    finding: Finding | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _where(path: str) -> str:
    return f"`{path}`" if path else "the schema's root"


def _rewrite(root: Mapping[str, Any], path: tuple[str | int, ...], **keys: object) -> str:
    """The whole schema as JSON text, with ``keys`` set on the subschema at ``path``."""
    new = copy.deepcopy(dict(root))
    node: Any = new
    for part in path:
        node = node[part]
    node.update(keys)
    return json.dumps(new, indent=2, ensure_ascii=False)


def _types(node: Mapping[str, Any]) -> set[str]:
    kind = node.get("type")
    return {kind} if isinstance(kind, str) else set(kind or ())


def _unbounded_size(
    schema: Mapping[str, Any], path: tuple[str | int, ...], node: Mapping[str, Any]
) -> list[SchemaFinding]:
    """What may grow without end at one node (at ``path`` in ``schema``): a string, an
    array, a free-form object or a number of digits, each with the bound to add."""
    found: list[SchemaFinding] = []
    where = pointer(path)
    kinds = _types(node)
    free = not any(k in node for k in ("enum", "const", "$ref", "pattern", "format"))
    if "string" in kinds and free and "maxLength" not in node:
        found.append(
            _bound_missing(
                schema, path, "unbounded_string", "warning",
                f"{_where(where)} is a string with no maxLength: the model may ride it "
                f'forever, until max_tokens cuts the JSON off. Add "maxLength": '
                f"{STRING_BOUND}.",
                maxLength=STRING_BOUND,
            )
        )  # fmt: skip
    if "array" in kinds and "maxItems" not in node and "prefixItems" not in node:
        found.append(
            _bound_missing(
                schema, path, "unbounded_array", "warning",
                f"{_where(where)} is an array with no maxItems: the model may add items "
                f'forever. Add "maxItems": {ARRAY_BOUND}.',
                maxItems=ARRAY_BOUND,
            )
        )  # fmt: skip
    if "object" in kinds and "properties" not in node and "maxProperties" not in node:
        found.append(
            _bound_missing(
                schema, path, "free_form_object", "warning",
                f"{_where(where)} is an object with no properties "
                "(additionalProperties): any keys, any values nested two deep, without "
                f'end. List its properties, or at least add "maxProperties": {ARRAY_BOUND}.',
                maxProperties=ARRAY_BOUND,
            )
        )  # fmt: skip
    found.extend(_unbounded_digits(schema, path, node, free))
    return found


def _bound_missing(
    schema: Mapping[str, Any],
    path: tuple[str | int, ...],
    kind: str,
    severity: Severity,
    message: str,
    **bound: int,
) -> SchemaFinding:
    """A finding at ``path`` whose fix is the schema with ``bound`` added to that node."""
    return SchemaFinding(kind, severity, message, pointer(path), _rewrite(schema, path, **bound))


def _bounded_range(node: Mapping[str, Any]) -> bool:
    """Whether an integer node is bounded on both sides (``minimum: 0, maximum: 120``): its
    regex then spells only the numbers in range, so its digits are bounded too."""
    if any(isinstance(node.get(k), bool) for k in ("exclusiveMinimum", "exclusiveMaximum")):
        return False  # draft 4's boolean form: outlines-core then writes no range at all

    def number(key: str) -> bool:
        return isinstance(node.get(key), int | float)

    return (number("minimum") or number("exclusiveMinimum")) and (
        number("maximum") or number("exclusiveMaximum")
    )


def _unbounded_digits(
    schema: Mapping[str, Any],
    path: tuple[str | int, ...],
    node: Mapping[str, Any],
    free: bool,
) -> list[SchemaFinding]:
    """An integer or a number at one node whose digits have no bound (``free``: no enum,
    const, $ref, pattern or format fixes them), with outlines-core's bound where one is safe."""
    found: list[SchemaFinding] = []
    where = pointer(path)
    kinds = _types(node)
    if "integer" in kinds and free and "maxDigits" not in node and not _bounded_range(node):
        found.append(
            _bound_missing(
                schema, path, "unbounded_digits", "info",
                f"{_where(where)} is an integer with no bound on its digits "
                f"(`[1-9][0-9]*`): a model may write digits forever. Add outlines-core's "
                f'"maxDigits": {DIGITS_BOUND}.',
                maxDigits=DIGITS_BOUND,
            )
        )  # fmt: skip
    if "number" in kinds and free:
        found.append(
            SchemaFinding(
                "unbounded_digits",
                "info",
                f"{_where(where)} is a number whose integer, fraction and exponent digits "
                "have no bound. outlines-core 0.2.14 offers no safe one: maxDigitsInteger "
                "refuses one-digit numbers and maxDigitsFraction allows `5.`, which is not "
                "JSON. The safe end still closes the number within max_tokens; use "
                f'"type": "integer" with "maxDigits" where a whole number will do.',
                where,
            )
        )
    return found


def schema_findings(
    schema: Mapping[str, Any],
    whitespace: str | None = None,
    unenforced: tuple[tuple[str, str], ...] | None = None,
    engine: str = "the regex",
    stricter: tuple[tuple[str, str], ...] = (),
) -> list[SchemaFinding]:
    """What the schema alone says about how a generation may go wrong (no model needed).

    ``unenforced`` are the (JSON pointer, keyword) pairs the constraint leaves free (by
    default the regex path's, ``fsmviz.schema.keywords.unenforced``); each is a finding
    naming ``engine``. ``stricter`` are the (JSON pointer, rule) pairs where it refuses
    JSON the schema allows (a compiled schema's ``.stricter``): one finding per rule
    (``stricter_findings``).

    >>> found = schema_findings({"type": "object", "properties": {"name": {"type": "string"}}})
    >>> [(f.kind, f.pointer) for f in found]
    [('unbounded_string', '/properties/name')]
    >>> '"maxLength": 50' in found[0].schema
    True
    """
    found: list[SchemaFinding] = []
    for path, node in walk(schema):
        found.extend(_unbounded_size(schema, path, node))
    if unenforced is None:
        unenforced = unenforced_keywords(schema, "regex")
    for where, keyword in unenforced:
        found.append(
            SchemaFinding(
                "ignored_keyword",
                "warning",
                f"{_where(where)} uses `{keyword}`, which {engine} does not enforce: "
                "the output can break it and then fails validation.",
                pointer_join(where, keyword),
            )
        )
    found.extend(stricter_findings(schema, stricter, engine))
    if whitespace == "flexible":
        found.append(
            SchemaFinding(
                "flexible_whitespace",
                "warning",
                f"flexible whitespace (`{WHITESPACE['flexible']}` between every JSON token) "
                "lets a model write spaces and newlines until max_tokens: the commonest JSON "
                "loop (outlines #839, xgrammar #412). Choose `none` or `space` (at most one "
                "space).",
                "",
                whitespace="none",
            )
        )
    return found


def stricter_findings(
    schema: Mapping[str, Any], stricter: tuple[tuple[str, str], ...], engine: str = "the regex"
) -> list[SchemaFinding]:
    """One ``stricter_rule`` finding per rule of ``stricter`` (the first places it applies
    named), the key order first: the valid JSON a model may want to write and cannot.

    >>> s = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {}}}
    >>> print(stricter_findings(s, (("", "keys in the order of `properties`"),))[0].message)
    the schema's root: this constraint writes keys in the schema's order (`"id"`, then `"name"`): a model that wants `"name"` first is refused, though the schema allows any order. Ask for that order in the prompt, or write the keys in the order the model prefers.
    """  # noqa: E501
    from fsmviz.schema.convert import resolve
    from fsmviz.schema.stricter import KEY_ORDER

    places: dict[str, list[str]] = {}
    for where, rule in stricter:
        places.setdefault(rule, []).append(where)
    found = []
    for rule in sorted(places, key=lambda r: r != KEY_ORDER):
        wheres = places[rule]
        shown = ", ".join(_where(w) for w in wheres[:3])
        more = f" and {len(wheres) - 3} more places" if len(wheres) > 3 else ""
        if rule == KEY_ORDER:
            target = resolve(schema, "#" + wheres[0])
            props = target[1].get("properties") if target and isinstance(target[1], dict) else None
            names = list(props or ())[:3]
            order = ", then ".join(f'`"{n}"`' for n in names)
            wanted = f'`"{names[-1]}"`' if names else "another key"
            message = (
                f"{shown}{more}: this constraint writes keys in the schema's order"
                f"{f' ({order})' if names else ''}: a model that wants {wanted} first is "
                "refused, though the schema allows any order. Ask for that order in the "
                "prompt, or write the keys in the order the model prefers."
            )
        else:
            message = (
                f"{shown}{more}: {engine} is stricter than the schema here: {rule}. Valid "
                "JSON written otherwise is refused, and the model is pushed to something else."
            )
        found.append(SchemaFinding("stricter_rule", "info", message, wheres[0]))
    return found


def pointer_join(where: str, key: str) -> str:
    """``where`` (a JSON pointer) with one more key.

    >>> pointer_join("/properties/n", "minimum")
    '/properties/n/minimum'
    """
    return where + pointer((key,))


def name_findings(
    findings: list[Finding], locations: SchemaLocations, whitespace: str | None = None
) -> list[SchemaFinding]:
    """The regex doctor's findings, each named by the schema location of its ``span``.

    ``unbounded_repeat`` findings on the whitespace pattern itself are left out when the
    whitespace is flexible (one ``flexible_whitespace`` finding says it once).
    """
    named: list[SchemaFinding] = []
    for finding in findings:
        if (
            whitespace == "flexible"
            and finding.kind == "unbounded_repeat"
            and finding.fragment == WHITESPACE["flexible"]
        ):
            continue
        where = locations.pointer_at(finding.span)
        prefix = f"{_where(where)}: " if where is not None else ""
        named.append(
            SchemaFinding(
                finding.kind,
                finding.severity,
                prefix + finding.message,
                where if where is not None else "",
                span=finding.span,
                finding=finding,
            )
        )
    return named


def diagnose_schema(
    schema: str | Mapping[str, Any] | SchemaRegex | SchemaGrammar,
    vocab: Vocabulary,
    trace: Trace | None = None,
    *,
    whitespace: str | None = None,
    max_tokens: int | None = None,
) -> list[SchemaFinding]:
    """Why generation from ``schema`` may stall: schema findings, then the regex doctor's
    findings named by schema location, errors first. Raises ``SchemaError`` for a schema
    that cannot be used. ``schema`` may be one ``compile_schema`` already compiled."""
    from fsmviz.diagnose import diagnose

    compiled = schema if isinstance(schema, (SchemaRegex, SchemaGrammar)) else None
    if compiled is None:
        compiled = compile_schema(schema, whitespace)
    if compiled.path == "grammar":
        own = schema_findings(
            compiled.schema,
            whitespace,
            compiled.unenforced,
            "llguidance's grammar",
            compiled.stricter,
        )
        note = SchemaFinding(
            "grammar_path",
            "info",
            f"This schema takes the grammar path (llguidance): {compiled.reason}. The "
            "regex doctor and the DFA drawing apply to the regex path only.",
            "",
        )
        return sorted([*own, note], key=lambda f: RANK[f.severity])
    own = schema_findings(
        compiled.schema, whitespace, compiled.unenforced, stricter=compiled.stricter
    )
    covered = {f.pointer for f in own if f.kind not in ("ignored_keyword", "stricter_rule")}
    doctor = name_findings(
        diagnose(compiled.regex, vocab, trace, max_tokens=max_tokens),
        compiled.locations,
        whitespace,
    )
    doctor = [f for f in doctor if not (f.kind == "unbounded_repeat" and f.pointer in covered)]
    return sorted(own + doctor, key=lambda f: RANK[f.severity])
