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
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "BOUNDS",
    "NUMBER_SIGNS",
    "bounded_integer",
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
