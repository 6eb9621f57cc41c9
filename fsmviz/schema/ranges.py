"""Integer bounds as a regex: ``minimum``/``maximum`` (and the exclusive ones) enforced on the
regex path, and a ``number`` that must not be negative (``minimum: 0``) or must be positive
(``exclusiveMinimum: 0``).

outlines-core writes every integer as ``(-)?(0|[1-9][0-9]*)`` whatever its bounds, so a count
with ``"minimum": 1`` takes ``0`` and a port takes ``70000``. A range of integers is a
regular language, though: ``integer_range(1, 12)`` is ``([1-9]|1[0-2])``. fsmviz puts such
a regex in place of outlines-core's: before the build, each bounded integer subschema becomes
a ``const`` marker string that names its bounds (``__fsmviz_int_1_12__``), and after it the
marker's literal in the regex is replaced by the range's regex (``mark_ranges`` and
``fill_ranges``). The markers depend on the bounds alone, so the regex of a part built on its
own (``convert.locate``) reads the same as inside the whole.

>>> import re
>>> pattern = integer_range(-5, 120)
>>> [n for n in range(-20, 200) if re.fullmatch(pattern, str(n))] == list(range(-5, 121))
True
>>> integer_range(1, None)
'[1-9][0-9]*'

Bounds no value can meet (``"minimum": 5, "maximum": 1``) are refused before anything is
built (``check_bounds``): a constraint that allows nothing would only stall the model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from fsmviz.schema.document import SCALARS, SchemaError, pointer, walk

__all__ = [
    "BOUNDS",
    "NUMBER_SIGNS",
    "bounded_integer",
    "check_bounds",
    "fill_ranges",
    "integer_range",
    "mark_ranges",
    "signed_number",
]

BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_MARKER = re.compile(r'"__fsmviz_int_(m?[0-9]+|n)_(m?[0-9]+|n)__"')
_EXPONENT = "([eE][+-]?[0-9]+)?"
NUMBER_SIGNS = {
    "min0": f"(0|[1-9][0-9]*)(\\.[0-9]+)?{_EXPONENT}",
    "gt0": f"(0\\.[0-9]*[1-9][0-9]*|[1-9][0-9]*(\\.[0-9]+)?){_EXPONENT}",
}
"""Numbers whose only bound is ``"minimum": 0`` (no minus sign) or ``"exclusiveMinimum": 0``
(no minus sign and some digit not zero): a price, an amount, a length."""
MAX_DIGITS = 30
"""Bounds with more digits than this are left to outlines-core (and named)."""


def bounded_integer(node: object) -> tuple[int | None, int | None] | None:
    """The integer range ``[low, high]`` a subschema allows (None: unbounded), when it is an
    integer whose bounds fsmviz writes as a regex; None otherwise."""
    if not isinstance(node, Mapping) or node.get("type") != "integer":
        return None
    if any(k in node for k in ("enum", "const", "minDigits", "maxDigits", "$ref")):
        return None
    values = {k: node[k] for k in BOUNDS if k in node}
    if not values or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        for v in values.values()
    ):
        return None
    lows = [math.ceil(values["minimum"])] if "minimum" in values else []
    if "exclusiveMinimum" in values:
        lows.append(math.floor(values["exclusiveMinimum"]) + 1)
    highs = [math.floor(values["maximum"])] if "maximum" in values else []
    if "exclusiveMaximum" in values:
        highs.append(math.ceil(values["exclusiveMaximum"]) - 1)
    low, high = (max(lows) if lows else None), (min(highs) if highs else None)
    if any(v is not None and len(str(abs(v))) > MAX_DIGITS for v in (low, high)):
        return None
    return low, high


def signed_number(node: object) -> str | None:
    """``"min0"`` or ``"gt0"`` for a ``number`` whose only bound is ``minimum: 0`` or
    ``exclusiveMinimum: 0`` (``NUMBER_SIGNS``), else None.

    >>> import re
    >>> [x for x in ("0", "2.50", "-1", "0.0", "1e-3") if re.fullmatch(NUMBER_SIGNS["gt0"], x)]
    ['2.50', '1e-3']
    """
    if not isinstance(node, Mapping) or node.get("type") != "number":
        return None
    if any(k in node for k in ("enum", "const", "$ref")):
        return None
    present = [k for k in BOUNDS if k in node]
    if present == ["minimum"] and node["minimum"] == 0 and not isinstance(node["minimum"], bool):
        return "min0"
    if present == ["exclusiveMinimum"] and node["exclusiveMinimum"] == 0:
        return "gt0" if not isinstance(node["exclusiveMinimum"], bool) else None
    return None


def _same_length(x: str, y: str) -> str:
    """Decimal strings of one length from ``x`` to ``y`` (``x <= y``)."""
    if x == y:
        return x
    if len(x) == 1:
        return f"[{x}-{y}]"
    rest = len(x) - 1
    if x[1:] == "0" * rest and y[1:] == "9" * rest:
        return f"[{x[0]}-{y[0]}][0-9]{{{rest}}}"
    if x[0] == y[0]:
        return x[0] + _same_length(x[1:], y[1:])
    parts = [x[0] + _same_length(x[1:], "9" * rest)]
    if int(y[0]) - int(x[0]) > 1:
        parts.append(f"[{int(x[0]) + 1}-{int(y[0]) - 1}][0-9]{{{rest}}}")
    parts.append(y[0] + _same_length("0" * rest, y[1:]))
    return "(" + "|".join(parts) + ")"


def _natural(low: int, high: int | None) -> str:
    """Numbers ``low..high`` (``0 <= low``; ``high`` None: no end), without leading zeros."""
    parts = []
    if low == 0:
        parts.append("0")
        low = 1
        if high == 0:
            return "0"
    size = len(str(low))
    while high is None or size <= len(str(high)):
        first = max(low, 10 ** (size - 1))
        if high is None and first == 10 ** (size - 1):
            parts.append(f"[1-9][0-9]{{{size - 1},}}" if size > 1 else "[1-9][0-9]*")
            break
        last = 10**size - 1 if high is None else min(high, 10**size - 1)
        parts.append(_same_length(str(first), str(last)))
        size += 1
    parts = [p.replace("[0-9]{0,}", "[0-9]*") for p in parts]
    return parts[0] if len(parts) == 1 else "(" + "|".join(parts) + ")"


def integer_range(low: int | None, high: int | None) -> str:
    """A regex for the JSON integers from ``low`` to ``high`` (None: unbounded), or a regex
    that matches nothing (``[^\\s\\S]``) when the range is empty."""
    if low is not None and high is not None and low > high:
        return "[^\\s\\S]"
    parts = []
    if low is None or low < 0:  # the negative part, mirrored
        top = None if low is None else -low
        bottom = 1 if high is None or high >= 0 else -high
        parts.append("-" + _natural(bottom, top))
    if high is None or high >= 0:
        parts.append(_natural(max(low or 0, 0), high))
    return parts[0] if len(parts) == 1 else "(" + "|".join(parts) + ")"


def _marker(value: int | None) -> str:
    return "n" if value is None else (f"m{-value}" if value < 0 else str(value))


def mark_ranges(node: Any) -> Any:
    """A copy of a schema with each bounded integer subschema replaced by its marker."""
    if type(node) in SCALARS:  # most values: a key's type, a bound, a description
        return node
    bounds = bounded_integer(node)
    if bounds is not None:
        return {"const": f"__fsmviz_int_{_marker(bounds[0])}_{_marker(bounds[1])}__"}
    sign = signed_number(node)
    if sign is not None:
        return {"const": f"__fsmviz_num_{sign}__"}
    if isinstance(node, Mapping):
        return {k: (v if k in ("enum", "const") else mark_ranges(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [mark_ranges(v) for v in node]
    return node


def fill_ranges(regex: str) -> str:
    """outlines-core's regex with each marker's literal replaced by its range's regex."""

    def value(text: str) -> int | None:
        return None if text == "n" else (-int(text[1:]) if text[0] == "m" else int(text))

    regex = _MARKER.sub(lambda m: integer_range(value(m[1]), value(m[2])), regex)
    for sign, pattern in NUMBER_SIGNS.items():
        regex = regex.replace(f'"__fsmviz_num_{sign}__"', f"({pattern})")
    return regex


_PAIRS = (
    ("string", "minLength", "maxLength", "characters"),
    ("array", "minItems", "maxItems", "items"),
    ("object", "minProperties", "maxProperties", "properties"),
)
"""Length bounds: (the type they constrain, the lower keyword, the upper one, what is counted)."""
_BOUNDS = frozenset((*BOUNDS, "required", *(k for _, low, high, _ in _PAIRS for k in (low, high))))
"""The keywords ``check_bounds`` compares, two at a time: a subschema with fewer is fine."""


def check_bounds(root: Mapping[str, Any]) -> None:
    """Refuse a subschema whose bounds no value can meet, naming where and what to write:
    ``minimum`` above ``maximum`` (or an exclusive bound that leaves nothing, or no whole
    number between an integer's bounds), ``minLength`` above ``maxLength``, ``minItems``
    above ``maxItems``, ``minProperties`` above ``maxProperties``. Only where the subschema
    is of that type alone: ``{"type": ["integer", "null"], ...}`` still allows null.

    >>> check_bounds({"properties": {"age": {"type": "integer", "minimum": 5, "maximum": 1}}})
    Traceback (most recent call last):
    ...
    fsmviz.schema.document.SchemaError: minimum 5 is above maximum 1, so no number can be \
written here: write the smaller bound as the minimum ("minimum": 1, "maximum": 5) \
(at /properties/age in the schema)
    """
    for path, node in walk(root):
        if len(_BOUNDS.intersection(node)) < 2:
            continue  # each refusal below compares two of these keywords
        types = node.get("type")
        types = {types} if isinstance(types, str) else set(types or ())
        why = None
        if types and types <= {"integer", "number"}:
            why = _empty_range(node, types == {"integer"})
        for kind, low, high, counted in _PAIRS:
            if why is None and types == {kind}:
                why = _empty_length(node, low, high, counted)
        if why is None and types == {"object"}:
            why = _too_many_required(node)
        if why is not None:
            raise SchemaError(why, pointer(path))


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _empty_range(node: Mapping[str, Any], integer: bool) -> str | None:
    """Why no number meets ``node``'s bounds, or None. A draft-4 ``exclusiveMinimum: true``
    makes ``minimum`` itself exclusive."""
    low, high = node.get("minimum"), node.get("maximum")
    low_open = node.get("exclusiveMinimum") is True
    high_open = node.get("exclusiveMaximum") is True
    low_key, high_key = "minimum", "maximum"
    if _number(node.get("exclusiveMinimum")) and (
        not _number(low) or node["exclusiveMinimum"] >= low
    ):
        low, low_open, low_key = node["exclusiveMinimum"], True, "exclusiveMinimum"
    if _number(node.get("exclusiveMaximum")) and (
        not _number(high) or node["exclusiveMaximum"] <= high
    ):
        high, high_open, high_key = node["exclusiveMaximum"], True, "exclusiveMaximum"
    if not (_number(low) and _number(high)):
        return None
    if low > high:
        return (
            f"{low_key} {low} is above {high_key} {high}, so no number can be written here: "
            f'write the smaller bound as the minimum ("minimum": {high}, "maximum": {low})'
        )
    if low == high and (low_open or high_open):
        return (
            f"{low_key} {low} and {high_key} {high} leave no number between them: write "
            f'"const": {low} for that one number, or widen the range'
        )
    lowest = math.floor(low) + 1 if low_open else math.ceil(low)
    highest = math.ceil(high) - 1 if high_open else math.floor(high)
    if integer and lowest > highest:
        return (
            f"no whole number lies between {low_key} {low} and {high_key} {high}, and the "
            'type is "integer": widen the range, or write "type": "number"'
        )
    return None


def _empty_length(node: Mapping[str, Any], low: str, high: str, counted: str) -> str | None:
    """Why no value meets a length pair such as ``minLength``/``maxLength``, or None."""
    least, most = node.get(low), node.get(high)
    if _number(least) and _number(most) and least > most:
        return (
            f"{low} {least} is above {high} {most}: nothing can have at least {least} and at "
            f'most {most} {counted}; write the smaller as {low} ("{low}": {most}, '
            f'"{high}": {least})'
        )
    return None


def _too_many_required(node: Mapping[str, Any]) -> str | None:
    """Why an object cannot hold its ``required`` keys within ``maxProperties``, or None."""
    required, most = node.get("required"), node.get("maxProperties")
    if isinstance(required, list) and _number(most) and len(set(map(str, required))) > most:
        return (
            f"{len(set(map(str, required)))} properties are required but maxProperties is "
            f"{most}: raise maxProperties to at least {len(set(map(str, required)))}, or "
            "require fewer"
        )
    return None
