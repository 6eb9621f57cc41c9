"""``jsonschema``, guarded: a visitor's schema never reaches the network and never freezes.

Every JSON Schema check fsmviz makes on a schema it was handed (the metaschema check, the
output checked after a run, the instances the engine comparison labels) goes through
``validator`` here, for two reasons a public Space cannot do without:

* **No network.** Given a ``$ref`` it cannot find in the document, ``jsonschema`` falls back
  to fetching the address (``"$ref": "http://127.0.0.1:8080/admin"``): any visitor could
  make the Space send requests to addresses only it can reach. Here references resolve in
  the document itself and in the bundled metaschemas (``jsonschema-specifications``) and
  nowhere else: ``_refuse`` is the registry's only way to retrieve anything, and it refuses.
  ``remote_refs`` finds such references before anything runs, so callers can name them
  (``refuse_remote``: a ``SchemaError`` with the reference and its JSON pointer).
* **Bounded patterns.** ``jsonschema`` runs ``pattern`` and ``patternProperties`` with
  Python's backtracking ``re``, where ``^(a+)+$`` against thirty a's and a ``!`` takes
  minutes, holding the interpreter (and so every other request) the while. Inside
  ``validator``'s checks each of those searches goes to ``search``: RE2 (``google-re2``,
  linear time) for every pattern it reads, else the ``regex`` module under a time budget
  (it lets other threads run meanwhile); past the budget, ``PatternTooSlow``.

RE2 reads ``\\d``, ``\\w`` and ``\\s`` over ASCII, as ECMA-262 (the dialect JSON Schema names)
does and as fsmviz's own automata do; Python's ``re`` would read them over Unicode.

>>> v = validator({"type": "string", "pattern": "^a{40}!$", "not": {"pattern": "^(a+)+$"}})
>>> with bounded_patterns():
...     v.is_valid("a" * 40 + "!")
True
>>> remote_refs({"properties": {"a": {"$dynamicRef": "http://10.0.0.1/x.json"}}})
(RemoteRef(pointer='/properties/a', keyword='$dynamicRef', ref='http://10.0.0.1/x.json'),)
"""

from __future__ import annotations

import contextvars
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import regex

from fsmviz.cache import bounded
from fsmviz.errors import FsmvizError
from fsmviz.schema.document import SchemaError, pointer
from fsmviz.schema.keywords import subschemas

__all__ = [
    "PATTERN_SECONDS",
    "PatternTooSlow",
    "RemoteRef",
    "bounded_patterns",
    "plainly_valid",
    "refuse_remote",
    "remote_refs",
    "search",
    "validator",
]

PATTERN_SECONDS = 0.4
"""Seconds all the backtracking searches of one check may take together (RE2's linear
searches are not counted: they cannot run away). ``regex``'s own timer overshoots (2-3x
measured on a busy 2-core CPU), so a check gives up within about a second."""

REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
"""The keywords that point at another schema."""


class PatternTooSlow(FsmvizError):
    """A schema's ``pattern`` that cannot be checked in time (or at all): ``.pattern``, the
    regex, and ``.message``."""

    def __init__(self, pattern: str, seconds: float, message: str | None = None):
        self.pattern = pattern
        self.message = message or (
            f"the pattern {pattern[:80]!r} took over {seconds:g} s to check: a repeat inside "
            "a repeat, such as (a+)+, makes a backtracking matcher try every way to split "
            "the text. Write it with a single repeat (a+), or without lookarounds and "
            "backreferences, which a linear-time matcher can run"
        )
        super().__init__(self.message)


# --- no network ----------------------------------------------------------------------------


def _refuse(uri: str) -> Any:
    """The offline registry's retrieval: nothing outside the document is ever fetched."""
    from referencing.exceptions import NoSuchResource  # with jsonschema: on first use

    raise NoSuchResource(ref=uri)


@lru_cache(maxsize=1)
def _registry() -> Any:
    """A ``referencing.Registry`` that retrieves nothing (``jsonschema`` adds the bundled
    metaschemas to any registry it is given)."""
    from referencing import Registry  # with jsonschema: on first use

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


@dataclass(frozen=True)
class RemoteRef:
    """A reference to a schema outside the document: where (a JSON pointer), which keyword,
    and the reference as written."""

    pointer: str
    keyword: str
    ref: str


def remote_refs(root: Mapping[str, Any]) -> tuple[RemoteRef, ...]:
    """Every ``$ref``, ``$dynamicRef`` or ``$recursiveRef`` that leads outside ``root``: one
    that is not a fragment (``#/$defs/a``, ``#name``), unless it names a subschema's own
    ``$id`` (a bundled document). A fragment under a subschema with an absolute ``$id``
    still resolves inside that subschema, so it is local too.

    >>> remote_refs({"$defs": {"a": {"$id": "a.json"}}, "properties": {
    ...     "x": {"$ref": "a.json"}, "y": {"$ref": "b.json#/c"}, "z": {"$ref": "#/$defs/a"}}})
    (RemoteRef(pointer='/properties/y', keyword='$ref', ref='b.json#/c'),)
    """
    nodes = list(subschemas(root))
    ids = {n["$id"].split("#")[0] for _, n in nodes if isinstance(n.get("$id"), str)}
    found = []
    for where, node in nodes:
        for keyword in REF_KEYWORDS:
            ref = node.get(keyword)
            if isinstance(ref, str) and not ref.startswith("#") and ref.split("#")[0] not in ids:
                found.append(RemoteRef(pointer(where), keyword, ref))
    return tuple(sorted(found, key=lambda r: (r.pointer, r.keyword)))


def refuse_remote(root: Mapping[str, Any]) -> None:
    """Raise ``SchemaError`` naming the first reference that leads outside ``root``."""
    for remote in remote_refs(root):
        raise SchemaError(remote_message(remote.keyword, remote.ref), remote.pointer)


def remote_message(keyword: str, ref: str) -> str:
    return (
        f"{keyword} {ref[:120]!r} points outside this schema, and fsmviz never fetches "
        "schemas from elsewhere: copy that definition into $defs and write "
        '"$ref": "#/$defs/NAME"'
    )


# --- bounded patterns ----------------------------------------------------------------------

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)


@contextmanager
def bounded_patterns(seconds: float = PATTERN_SECONDS) -> Iterator[None]:
    """Inside, ``jsonschema``'s pattern searches are ``search``'s, sharing ``seconds``."""
    _install()
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


RE2_MEMORY = 1 << 20
"""Bytes RE2 may use for one pattern (its default is 8 MiB): past it RE2 still answers in
linear time, more slowly; a pattern whose program does not fit is not RE2's."""


@bounded(maxsize=64)
def _re2(pattern: str) -> Any:
    """The pattern compiled by RE2, or None where RE2 cannot read it (lookarounds,
    backreferences, repeats over 1,000, a program over ``RE2_MEMORY``) or is not
    installed. At most 64 kept: each holds up to ``RE2_MEMORY``."""
    try:
        import re2  # google-re2: a compiled engine, on first use
    except ImportError:  # pragma: no cover - google-re2 is a requirement
        return None
    options = re2.Options()
    options.log_errors = False
    options.max_mem = RE2_MEMORY
    try:
        return re2.compile(pattern, options)
    except (re2.error, TypeError, ValueError):
        return None


def search(pattern: str, text: str, seconds: float = PATTERN_SECONDS) -> bool:
    """Whether ``pattern`` matches somewhere in ``text``, in bounded time: RE2 where it reads
    the pattern, else ``regex.search`` with what is left of the check's budget (``seconds``
    outside a check). ``PatternTooSlow`` past it.

    >>> search("^(a+)+$", "a" * 5000 + "!"), search("(?<=x)a", "xa")
    (False, True)
    """
    compiled = _re2(pattern)
    if compiled is not None:
        return compiled.search(text) is not None
    deadline = _DEADLINE.get()
    left = seconds if deadline is None else deadline - time.monotonic()
    budget = seconds if deadline is None else PATTERN_SECONDS
    if left <= 0:
        raise PatternTooSlow(pattern, budget)
    try:
        return regex.search(pattern, text, timeout=left) is not None
    except TimeoutError:
        raise PatternTooSlow(pattern, budget) from None
    except regex.error as error:
        raise PatternTooSlow(
            pattern, budget, f"the pattern {pattern[:80]!r} cannot be checked: {error}"
        ) from None


class _GuardedRe:
    """Stands in for the ``re`` module inside ``jsonschema``'s keyword code: its ``search``
    is ``search`` while a ``bounded_patterns`` check runs, Python's own otherwise; every
    other name is ``re``'s."""

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)

    @staticmethod
    def search(pattern: Any, string: Any, flags: int = 0) -> Any:
        if _DEADLINE.get() is None or flags or not isinstance(pattern, str):
            return re.search(pattern, string, flags)
        return True if search(pattern, string) else None


@lru_cache(maxsize=1)
def _install() -> None:
    """Route ``jsonschema``'s pattern searches (``pattern``, ``patternProperties``,
    ``additionalProperties``, ``unevaluatedProperties``: the modules that call
    ``re.search``) through ``_GuardedRe``. Outside ``bounded_patterns`` nothing changes."""
    from jsonschema import _keywords, _legacy_keywords, _utils  # heavy: on first use

    for module in (_keywords, _legacy_keywords, _utils):
        if getattr(module, "re", None) is re:
            module.re = _GuardedRe()  # type: ignore[attr-defined]


# --- the validator -------------------------------------------------------------------------


def validator(schema: Mapping[str, Any] | bool, *, formats: bool = False) -> Any:
    """A ``jsonschema`` validator for ``schema`` (its draft by ``$schema``) that resolves
    references offline (``_registry``); run its checks inside ``bounded_patterns``. With
    ``formats``, ``format`` is checked where ``jsonschema`` can. A reference that leads
    nowhere raises ``referencing.exceptions.Unresolvable`` while it validates."""
    import jsonschema  # heavy (~0.2 s): loaded on first use

    _install()
    cls = jsonschema.validators.validator_for(schema)
    checker = cls.FORMAT_CHECKER if formats else None
    return cls(schema, registry=_registry(), format_checker=checker)


def metaschema_errors(schema: Mapping[str, Any]) -> Any:
    """The worst way ``schema`` breaks its metaschema (``jsonschema``'s ``best_match``), or
    None: ``check_schema``, offline and bounded. A schema ``plainly_valid`` reads has none
    (the tests hold the two to agree), so the walk is skipped for it."""
    if plainly_valid(schema):
        return None
    import jsonschema  # heavy (~0.2 s): loaded on first use

    cls = jsonschema.validators.validator_for(schema)
    meta = cls(cls.META_SCHEMA, registry=_registry(), format_checker=cls.FORMAT_CHECKER)
    with bounded_patterns():
        return jsonschema.exceptions.best_match(meta.iter_errors(schema))


# --- the metaschema check's fast path -------------------------------------------------------


def plainly_valid(schema: Any) -> bool:
    """Whether ``schema`` is built only of keywords whose values every draft's metaschema
    (4, 6, 7, 2019-09, 2020-12) takes as they are here: then ``metaschema_errors`` has
    nothing to find, and ``jsonschema``'s walk of the 2020-12 metaschema (~20 ms for a
    22-field schema, most of a schema's first mask) is skipped. True only where sure: any
    other keyword or value (``$id``, ``exclusiveMinimum``, a boolean subschema, an empty
    ``required``, a ``pattern`` Python's ``re`` cannot compile...) answers False, and the
    full check runs. A conservative subset of the metaschemas, not a validator.

    >>> plainly_valid({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}})
    True
    >>> plainly_valid({"properties": {"a": {"maxLength": -1}}})  # the metaschema refuses it
    False
    >>> plainly_valid({"required": []})  # draft 4 refuses it: jsonschema decides
    False
    """
    if not isinstance(schema, dict):
        return False
    if "$schema" in schema and schema["$schema"] not in _DRAFTS:
        return False
    rest = {k: v for k, v in schema.items() if k != "$schema"}
    return _plain(rest, _PLAIN_DEPTH)


_DRAFTS = frozenset(
    f"{uri}{end}"
    for uri in (
        "http://json-schema.org/draft-04/schema",
        "http://json-schema.org/draft-06/schema",
        "http://json-schema.org/draft-07/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "https://json-schema.org/draft/2020-12/schema",
    )
    for end in ("", "#")
)
"""The ``$schema`` values ``plainly_valid`` takes: the drafts whose metaschemas agree on
every keyword it reads (draft 3's ``required`` is a boolean: not among them)."""

_PLAIN_DEPTH = 64
"""Subschemas nested deeper than this go to the full check (``limits`` bounds depth first)."""

_TYPES = frozenset(("string", "number", "integer", "boolean", "object", "array", "null"))
_REF = re.compile(r"#(/[A-Za-z0-9_.~%$-]*)*")  # a local JSON pointer: a URI reference


def _count(v: Any) -> bool:
    return type(v) is int and v >= 0


def _number(v: Any) -> bool:
    return type(v) in (int, float)


def _unique_strings(v: Any) -> bool:
    return (isinstance(v, list) and bool(v) and all(type(s) is str for s in v)
            and len(set(v)) == len(v))  # fmt: skip


def _enum(v: Any) -> bool:
    if not isinstance(v, list) or not v:
        return False
    scalar = (str, int, float, bool, type(None))
    if not all(type(x) in scalar for x in v):
        return False
    return len({(type(x) is bool, type(x) is str, x) for x in v}) == len(v)  # 1 == 1.0: False


def _regex(v: Any) -> bool:
    if type(v) is not str:
        return False
    try:
        re.compile(v)  # the metaschemas' "format": "regex", as jsonschema checks it
    except (re.error, RecursionError, OverflowError, ValueError):
        return False
    return True


_VALUES = {
    "type": lambda v: (
        (v in _TYPES) if type(v) is str else (_unique_strings(v) and set(v) <= _TYPES)
    ),
    "title": lambda v: type(v) is str,
    "description": lambda v: type(v) is str,
    "$comment": lambda v: type(v) is str,
    "format": lambda v: type(v) is str,
    "default": lambda v: True,
    "const": lambda v: True,
    "examples": lambda v: isinstance(v, list),
    "enum": _enum,
    "required": _unique_strings,
    "uniqueItems": lambda v: type(v) is bool,
    "deprecated": lambda v: type(v) is bool,
    "readOnly": lambda v: type(v) is bool,
    "writeOnly": lambda v: type(v) is bool,
    "minimum": _number,
    "maximum": _number,
    "multipleOf": lambda v: _number(v) and v > 0,
    "pattern": _regex,
    "$ref": lambda v: type(v) is str and _REF.fullmatch(v) is not None,
    **dict.fromkeys(
        ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"),
        _count,
    ),
}
"""Keyword -> whether its value is one every draft's metaschema takes (subschemas aside)."""

_ONE = frozenset(("items", "additionalProperties", "not"))  # one subschema
_MANY = frozenset(("anyOf", "oneOf", "allOf"))  # a non-empty list of subschemas
_NAMED = frozenset(("properties", "$defs", "definitions"))  # name -> subschema


def _plain(node: Any, depth: int) -> bool:
    """``plainly_valid`` for one subschema (an object; a boolean one is draft 6's on)."""
    if type(node) is not dict or depth <= 0:
        return False
    for key, value in node.items():
        check = _VALUES.get(key)
        if check is not None:
            ok = check(value)
        elif key in _ONE:
            ok = (key == "additionalProperties" and type(value) is bool) or _plain(value, depth - 1)
        elif key in _MANY:
            ok = isinstance(value, list) and bool(value)
            ok = ok and all(_plain(s, depth - 1) for s in value)
        elif key in _NAMED:
            ok = type(value) is dict and all(_plain(s, depth - 1) for s in value.values())
        else:
            ok = key.startswith("x-")  # an extension: no metaschema reads it
        if not ok:
            return False
    return True
