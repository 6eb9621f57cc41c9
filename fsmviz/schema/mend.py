"""Two mends of outlines-core 0.2.14's regex, where it writes a schema wrong.

Found by asking fsmviz's constraint for the JSON-Schema-Test-Suite's valid instances
(``fsmviz.schema.differential``); both are outlines-core bugs (the README's known limits):

* **An empty schema's alternation is left ungrouped.** ``{}`` (any value) becomes
  ``((true|false))|(null)|(…number…)|…|(\\{…\\})``, one top-level alternation with no
  parentheses around it. Alone that is right; after a key it is not:
  ``{"properties": {"a": {}}, "required": ["a"]}`` becomes ``\\{"a":((true|false))|(null)|…\\}``,
  which reads as ``\\{"a":(true|false)`` *or* ``null`` *or* …, so no value of ``a`` at all can
  be written (``{"a":1}``, ``{"a":"x"}``, ``{"a":null}`` are all refused).
  ``group_any_values`` puts the parentheses back around every copy.

* **A property name is pasted raw.** The key ``a"b`` is written ``"a"b"`` and ``c<newline>d``
  with a raw newline, where JSON writes ``"a\\"b"`` and ``"c\\nd"``: no model can write such a
  key. ``plain_keys`` swaps each name that JSON must escape for a plain placeholder before
  outlines-core reads the schema, and ``escaped_keys`` writes the name, JSON-escaped, in
  its place in the regex afterwards.

>>> regex = group_any_values('\\\\{"a":' + any_value("") + '\\\\}', "")
>>> import re; bool(re.fullmatch(regex, '{"a":null}'))
True
>>> schema, names = plain_keys({"properties": {'a"b': {}}, "required": ['a"b']})
>>> schema["required"], names
(['__fsmviz_key_0__'], {'__fsmviz_key_0__': 'a"b'})
>>> escaped_keys('\\\\{"__fsmviz_key_0__":1\\\\}', names)
'\\\\{"a\\\\\\\\"b":1\\\\}'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from json.encoder import encode_basestring
from typing import Any

from fsmviz.cache import bounded

__all__ = ["any_value", "escaped_keys", "group_any_values", "plain_keys"]

_PLACEHOLDER = "__fsmviz_key_{}__"
_SPECIAL = frozenset("\\.^$|?*+()[]{}")


@bounded(maxsize=8)
def any_value(whitespace: str | None) -> str:
    """outlines-core's regex for the empty schema ``{}`` with this whitespace pattern."""
    from outlines_core.json_schema import build_regex_from_schema  # compiled; on first use

    return build_regex_from_schema("{}", whitespace)


ANY_VALUE_SHORTEST = 12_955
"""The length of ``any_value("")``, outlines-core 0.2's regex for ``{}`` with no whitespace:
no shorter with any (``tests/test_schema_mend.py`` holds it for each of ``WHITESPACE``)."""


def group_any_values(regex: str, whitespace: str | None) -> str:
    """``regex`` with every copy of the empty schema's ungrouped alternation in parentheses.

    Grouping never changes what a copy that was already a whole alternative means, so the
    whole regex of ``{}`` (``(…)``) still takes every value it took. A regex shorter than
    any copy (``ANY_VALUE_SHORTEST``: a 22-field schema's is 1,400 characters) holds
    none, and the regex of ``{}`` is not built for it (~0.1 ms)."""
    if len(regex) < ANY_VALUE_SHORTEST:
        return regex
    plain = any_value(whitespace)
    if plain not in regex:
        return regex
    return regex.replace(plain, f"({plain})")


def _needs_escape(name: str) -> bool:
    return encode_basestring(name)[1:-1] != name  # json.dumps(name, ensure_ascii=False)


def plain_keys(schema: Any) -> tuple[Any, dict[str, str]]:
    """``schema`` (a JSON value, changed in place) with every property name JSON must
    escape (a quote, a backslash, a control character) replaced by a plain placeholder in
    ``properties`` and in ``required`` beside it; and the placeholders' names."""
    names: dict[str, str] = {}
    chosen: dict[str, str] = {}
    todo: list[object] = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo += node
            continue
        if not isinstance(node, dict):
            continue
        props = node.get("properties")
        if isinstance(props, dict) and any(_needs_escape(k) for k in props):
            renamed = {}
            for key, value in props.items():
                if _needs_escape(key):
                    if key not in chosen:
                        chosen[key] = _PLACEHOLDER.format(len(chosen))
                        names[chosen[key]] = key
                    key = chosen[key]
                renamed[key] = value
            node["properties"] = renamed
            required = node.get("required")
            if isinstance(required, list):
                node["required"] = [chosen.get(k, k) if isinstance(k, str) else k for k in required]
        todo += list(node.values())
    return schema, names


def escaped_keys(regex: str, names: Mapping[str, str]) -> str:
    """``regex`` with each placeholder of ``plain_keys`` written as its name, JSON-escaped
    (``a"b`` as ``a\\"b``), every regex character in it escaped."""
    for placeholder, name in names.items():
        text = json.dumps(name, ensure_ascii=False)[1:-1]
        regex = regex.replace(placeholder, "".join("\\" + c if c in _SPECIAL else c for c in text))
    return regex
