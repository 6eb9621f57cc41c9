"""A schema drawn by its structure: one small automaton per subschema.

The character DFA of a schema is exact and unreadable: the person example's 186 states
tangle, a recursive tree has none at all (it is not regular). A person reads a schema as
its objects, arrays and alternatives, each a small machine over keys and values. This
module writes that reading as a grammar in llguidance's Lark dialect (``fsmviz.grammar``
draws and parses it as it does any grammar):

* an object is two rules: its frame ``"{" ( field ( "," field )* )? "}"`` and its fields,
  each a key with its colon (one edge) and its value;
* an array is one rule, ``"[" ( item ( "," item )* )? "]"`` (an item that is no rule of
  its own gets one, drawn as one box);
* ``anyOf`` / ``oneOf`` are alternatives, a ``$ref`` a call of the rule of its target (a
  recursive schema is a rule that calls itself), ``allOf`` its objects' properties merged;
* strings, numbers, integers and booleans are *terminals* (``STRING``, ``NUMBER``,
  ``INTEGER``, ``BOOLEAN``): one labelled edge each, never a chain of characters; a short
  ``enum`` or a ``const`` is its literals.

The grammar is a *superset* of the schema: it knows no bounds, no required keys, no key
order, no formats. It is made for the drawing and for lighting the object and field being
written during a run (``fsmviz.grammar.place``); the constraint itself is the regex's or
llguidance's. Rules are named for what they are: the root ``start``, a property's subschema
by the property's name, a definition by its name.

>>> print(structure_lark({"type": "object", "properties": {
...     "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}}))
start: "{" ( start_field ( "," start_field )* )? "}"
tags: "[" ( tags_item ( "," tags_item )* )? "]"
tags_item: STRING
start_field: "\\"name\\":" STRING | "\\"tags\\":" tags
STRING: /"([^"\\\\]|\\\\.)*"/
%ignore /[ \\t\\n\\r]+/
"""  # noqa: E501

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from fsmviz.schema.document import SchemaError, pointer, resolve
from fsmviz.schema.load import load_schema

__all__ = ["MAX_RULES", "structure_lark"]

MAX_RULES = 120
"""Subschemas drawn at most: past that, a drawing of boxes is no longer read."""
MAX_LITERALS = 8
"""An ``enum`` of more values is drawn as its type's terminal."""

TERMINALS = {
    "STRING": r'/"([^"\\]|\\.)*"/',
    "INTEGER": r"/-?(0|[1-9][0-9]*)/",
    "NUMBER": r"/-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/",
    "BOOLEAN": r"/true|false/",
}
_TYPE = {"string": "STRING", "integer": "INTEGER", "number": "NUMBER", "boolean": "BOOLEAN",
         "null": '"null"'}  # fmt: skip
ANY = "value"
"""The rule of any JSON value (a subschema that says nothing of its type)."""
_ANY_RULES = (
    f'{ANY}: json_object | json_array | STRING | NUMBER | BOOLEAN | "null"',
    f'json_object: "{{" ( STRING ":" {ANY} ( "," STRING ":" {ANY} )* )? "}}"',
    f'json_array: "[" ( {ANY} ( "," {ANY} )* )? "]"',
)


def structure_lark(schema: str | Mapping[str, Any] | type) -> str:
    """The schema's structure as Lark text (see the module doc). Raises ``SchemaError``
    for a schema with more than ``MAX_RULES`` subschemas to draw."""
    root = load_schema(schema)
    return _Writer(root).text()


def _literal(value: object) -> str:
    """A JSON value as a Lark string literal of its compact JSON text."""
    return json.dumps(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


class _Writer:
    def __init__(self, root: dict[str, Any]):
        self.root = root
        self.rules: dict[str, str] = {}
        self.by_path: dict[tuple[str | int, ...], str] = {}
        self.terminals: set[str] = set()
        self.any = False

    def text(self) -> str:
        self.by_path[()] = "start"
        self.rules["start"] = ""
        self.rules["start"] = self.body(self.root, ())
        lines = [f"{name}: {body}" for name, body in self.rules.items()]
        if self.any:
            lines += _ANY_RULES
            self.terminals |= {"STRING", "NUMBER", "BOOLEAN"}
        lines += [f"{name}: {TERMINALS[name]}" for name in TERMINALS if name in self.terminals]
        lines.append(r"%ignore /[ \t\n\r]+/")
        return "\n".join(lines)

    def rule(self, node: object, path: tuple[str | int, ...], hint: str) -> str:
        """The name of the rule for the subschema at ``path`` (made on first use)."""
        if path in self.by_path:
            return self.by_path[path]
        name = self.fresh(hint, path)  # reserved: a recursive schema calls it meanwhile
        self.rules[name] = self.body(node, path)
        return name

    def fresh(self, hint: str, path: tuple[str | int, ...]) -> str:
        """A new rule name for ``path`` made from ``hint`` (a Lark rule name, unique)."""
        if len(self.rules) >= MAX_RULES:
            raise SchemaError(
                f"the schema has more than {MAX_RULES} objects, arrays and alternatives to "
                "draw: its structure drawing would not be read; see its character DFA or "
                "draw a part of it",
                pointer(tuple(p for p in path if p not in ("fields", "item"))),
            )
        name = base = re.sub(r"[^a-z0-9_]", "_", hint.lower()).strip("_") or "part"
        if not name[0].isalpha() or name in ("start", ANY, "json_object", "json_array"):
            name = base = f"s_{name}"
        k = 2
        while name in self.rules:
            name, k = f"{base}_{k}", k + 1
        self.by_path[path] = name
        self.rules[name] = ""
        return name

    def expr(self, node: object, path: tuple[str | int, ...], hint: str) -> str:
        """A value of ``node``: a terminal, literals, or a call of its rule."""
        if node is True or node == {}:
            self.any = True
            return ANY
        if not isinstance(node, dict):
            return '"null"'  # ``false``: nothing fits; drawn as the least it could be
        if "$ref" in node:
            found = resolve(self.root, str(node["$ref"]))
            if found is not None:
                target_path, target = found
                if target_path == ():
                    return "start"
                return self.rule(target, tuple(target_path), str(target_path[-1]))
        literals = node.get("enum") if "const" not in node else [node["const"]]
        if isinstance(literals, list) and 0 < len(literals) <= MAX_LITERALS:
            return _group([_literal(v) for v in literals])
        if self.structured(node):
            return self.rule(node, path, hint)
        kinds = node.get("type")
        if kinds is None and isinstance(literals, list) and literals:
            kinds = sorted({_json_type(v) for v in literals})
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
        if not kinds or any(k in ("object", "array") for k in kinds):
            self.any = True
            return ANY
        names = [_TYPE[k] for k in kinds if k in _TYPE]
        self.terminals |= {n for n in names if n in TERMINALS}
        return _group(names) if names else '"null"'

    @staticmethod
    def structured(node: dict[str, Any]) -> bool:
        return any(k in node for k in ("properties", "items", "prefixItems", "anyOf", "oneOf",
                                       "allOf", "additionalProperties"))  # fmt: skip

    def body(self, node: object, path: tuple[str | int, ...]) -> str:
        """The right side of the rule of ``node``."""
        if not isinstance(node, dict) or not self.structured(node):
            return self.expr(node, path + ("value",), "value")
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list) and node[key]:
                return " | ".join(
                    self.expr(part, path + (key, i), f"{_hint(path)}_{i + 1}")
                    for i, part in enumerate(node[key])
                )
        if isinstance(node.get("allOf"), list):
            node = self.merged(node)
        if "properties" in node or node.get("type") == "object" or "additionalProperties" in node:
            return self.object(node, path)
        if "items" in node or "prefixItems" in node or node.get("type") == "array":
            return self.array(node, path)
        return self.expr({k: v for k, v in node.items() if k != "allOf"}, path, _hint(path))

    def merged(self, node: dict[str, Any]) -> dict[str, Any]:
        """``node`` with the properties of its ``allOf`` parts (``$ref`` followed once)."""
        out = {k: v for k, v in node.items() if k != "allOf"}
        props = dict(out.get("properties") or {})
        for part in node["allOf"]:
            if isinstance(part, dict) and "$ref" in part:
                found = resolve(self.root, str(part["$ref"]))
                part = found[1] if found is not None else part
            if isinstance(part, dict):
                props.update(part.get("properties") or {})
                for key in ("type", "items", "additionalProperties"):
                    if key in part and key not in out:
                        out[key] = part[key]
        if props:
            out["properties"] = props
        return out

    def object(self, node: dict[str, Any], path: tuple[str | int, ...]) -> str:
        """``"{" ( field ( "," field )* )? "}"``, the fields a rule of their own: a key
        with its colon, then its value (a rule's repeat that calls no rule would be drawn
        folded into one regex edge: ``fsmviz.grammar.network``)."""
        members = [
            f'{_literal(str(name))[:-1]}:" {self.expr(value, path + ("properties", name), name)}'
            for name, value in (node.get("properties") or {}).items()
        ]
        extra = node.get("additionalProperties")
        if (not members and extra is not False) or isinstance(extra, dict) or extra is True:
            value = self.expr(extra if isinstance(extra, dict) else True,
                              path + ("additionalProperties",), f"{_hint(path)}_value")  # fmt: skip
            self.terminals.add("STRING")
            members.append(f'STRING ":" {value}')
        if not members:
            return '"{" "}"'
        field = self.named(path + ("fields",), f"{self.by_path[path]}_field", " | ".join(members))
        return f'"{{" ( {field} ( "," {field} )* )? "}}"'

    def array(self, node: dict[str, Any], path: tuple[str | int, ...]) -> str:
        parts = [
            self.expr(p, path + ("prefixItems", i), f"{_hint(path)}_{i + 1}")
            for i, p in enumerate(node.get("prefixItems") or ())
        ]
        items = node.get("items")
        if items is not False and (items is not None or not parts):
            parts.append(self.expr(items if items is not None else True, path + ("items",),
                                   f"{_hint(path)}_item"))  # fmt: skip
        parts = list(dict.fromkeys(parts))
        item = parts[0] if len(parts) == 1 and parts[0] in self.rules else None
        if item is None:  # a terminal or literals: a rule of its own, drawn as one box
            item = self.named(path + ("item",), f"{self.by_path[path]}_item", " | ".join(parts))
        return f'"[" ( {item} ( "," {item} )* )? "]"'

    def named(self, path: tuple[str | int, ...], hint: str, body: str) -> str:
        """A rule of ``body`` at ``path`` (a part of a subschema's rule)."""
        if path not in self.by_path:
            name = self.fresh(hint, path)
            self.rules[name] = body
        return self.by_path[path]


def _hint(path: tuple[str | int, ...]) -> str:
    names = [str(p) for p in path if isinstance(p, str) and p not in _STRUCTURAL]
    return names[-1] if names else "root"


_STRUCTURAL = frozenset(
    ("properties", "items", "prefixItems", "anyOf", "oneOf", "allOf", "$defs", "definitions",
     "additionalProperties", "value")
)  # fmt: skip


def _group(alternatives: list[str]) -> str:
    return alternatives[0] if len(alternatives) == 1 else f"( {' | '.join(alternatives)} )"


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "string")
