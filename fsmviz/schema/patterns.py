"""A JSON Schema ``pattern`` is a search; outlines-core writes it as a whole match.

JSON Schema's ``pattern`` holds a string when the regex matches *somewhere* in it (ECMA 262
``search``): ``"pattern": "1.0"`` takes ``"2024-01-01"`` (its ``1-0``), and only
``"^1.0$"`` asks for the whole string. outlines-core 0.2.14 pastes the pattern between the
string's quotes, so its regex takes ``"1.0"`` and nothing around it: valid JSON a model
cannot write. ``search_patterns`` rewrites each ``pattern`` of a schema, before
outlines-core reads it, into the whole-match regex it means: every alternative not
anchored at its start may begin with any string characters, and likewise at its end.

>>> whole_match("1.0")
'^(?:(?:[^"\\\\\\\\\\\\x00-\\\\x1F\\\\x7F-\\\\x9F]|\\\\\\\\["\\\\\\\\/bfnrt])*(?:1.0)(?:[^"\\\\\\\\\\\\x00-\\\\x1F\\\\x7F-\\\\x9F]|\\\\\\\\["\\\\\\\\/bfnrt])*)$'
>>> whole_match("^[a-z]+$")
'^(?:(?:[a-z]+))$'
>>> whole_match("a|^b(c)$") == f"^(?:{ANY}*(?:a){ANY}*|(?:b(c)))$"
True
>>> whole_match("^a(^b)") is None  # an anchor inside: left for the grammar path
True
"""

from __future__ import annotations

from typing import Any

from fsmviz.automaton.syntax import plain_characters
from fsmviz.tokens.fast.knownloops import ANY

__all__ = ["ANY", "search_patterns", "whole_match"]


def _alternatives(pattern: str) -> list[str] | None:
    """``pattern`` split at its top-level ``|``; None where the pattern does not scan."""
    plain = plain_characters(pattern)
    if plain is None:
        return None
    parts, start, depth = [], 0, 0
    for i, c in plain:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
    if depth != 0:
        return None
    parts.append(pattern[start:])
    return parts


def _ends_with_anchor(branch: str) -> bool:
    """Whether ``branch`` ends with an unescaped ``$``."""
    if not branch.endswith("$"):
        return False
    slashes = len(branch[:-1]) - len(branch[:-1].rstrip("\\"))
    return slashes % 2 == 0


def _has_anchor(branch: str) -> bool:
    """Whether ``branch`` holds an unescaped ``^`` or ``$`` outside a character class."""
    return any(c in "^$" for _, c in plain_characters(branch) or ())


def whole_match(pattern: str) -> str | None:
    """The regex that matches a whole string exactly when ``pattern`` is found in it,
    written ``^(?:...)$`` (outlines-core strips those two anchors); None where ``pattern``
    has an anchor it cannot place (then it is left as it is)."""
    branches = _alternatives(pattern)
    if branches is None:
        return None
    written = []
    for branch in branches:
        start = branch.startswith("^")
        end = _ends_with_anchor(branch[1:] if start else branch)
        core = branch[1 if start else 0 : len(branch) - 1 if end else len(branch)]
        if _has_anchor(core):
            return None
        middle = f"(?:{core})" if core else ""
        written.append(("" if start else f"{ANY}*") + middle + ("" if end else f"{ANY}*"))
    return "^(?:" + "|".join(written) + ")$"


def search_patterns(schema: Any) -> Any:
    """``schema`` (a JSON value, changed in place) with every string subschema's
    ``pattern`` written as a whole match (``whole_match``); the values of ``enum``,
    ``const``, ``default`` and ``examples`` are left alone.

    >>> search_patterns({"properties": {"v": {"type": "string", "pattern": "^1\\\\.0$"}}})
    {'properties': {'v': {'type': 'string', 'pattern': '^(?:(?:1\\\\.0))$'}}}
    """
    todo = [(schema, False)]
    while todo:
        value, names = todo.pop()
        if isinstance(value, dict):
            pattern = value.get("pattern")
            if not names and isinstance(pattern, str):
                value["pattern"] = whole_match(pattern) or pattern
            for key, sub in value.items():
                if names or key not in ("enum", "const", "default", "examples"):
                    todo.append((sub, not names and key in _NAME_MAPS))
        elif isinstance(value, list):
            todo += [(v, False) for v in value]
    return schema


_NAME_MAPS = frozenset(("properties", "patternProperties", "$defs", "definitions"))
"""Keywords whose keys are names (a property called ``pattern``), not keywords."""
