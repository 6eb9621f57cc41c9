"""JSON Schema in: a schema becomes a regex, and parts of that regex keep their schema names.

Most people meet constrained generation through a JSON Schema ("structured outputs", a
pydantic model). fsmviz guides generation with a regex, so a schema is first turned into one
by a well-kept converter, outlines-core's ``build_regex_from_schema``. For example
``{"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]}``
with no whitespace becomes ``\\{"age":(-)?(0|[1-9][0-9]*)\\}``.

Three things are added here:

* **Clear errors.** ``SchemaError`` says what is wrong and *where*, as a JSON pointer into
  the schema (``/properties/age/type``): invalid JSON, a schema that breaks the JSON Schema
  metaschema (checked with ``jsonschema``), or a construct the converter cannot express.
* **Whitespace is a choice.** Between JSON tokens the converter puts a whitespace pattern;
  a loose one lets a model write spaces and newlines until ``max_tokens`` (outlines #839,
  xgrammar #412). ``WHITESPACE`` names three:

  ============  ==============  ===========================================================
  name          regex           meaning
  ============  ==============  ===========================================================
  ``none``      (empty)         compact JSON, ``{"a":1}``: the fewest tokens, never a loop
  ``space``     ``[ ]?``        at most one space between tokens (outlines-core's default)
  ``flexible``  ``[\\n\\t ]*``  any run of spaces, tabs and newlines: what loops
  ============  ==============  ===========================================================

* **Schema locations.** ``locate(schema, regex)`` maps spans of the regex back to the
  JSON pointer of the subschema that produced them, so the doctor's findings (which carry a
  ``span`` into the regex) can say "``/properties/name``" instead of a column number.

* **Two paths.** ``compile_schema`` takes the regex path where outlines-core reads the
  schema right and the automaton fits, and otherwise the grammar path
  (``fsmviz.schema.by_grammar``, llguidance); both name what they do not enforce
  (``fsmviz.schema.keywords``), and both are reached only through the bounds of
  ``fsmviz.schema.limits``.

The engine imports no gradio; ``outlines_core``, ``llguidance`` and ``jsonschema`` load on
first use.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from fsmviz.automaton.dfa import Dfa, check_buildable, compile_regex, count_positions
from fsmviz.automaton.syntax import RegexError
from fsmviz.cache import bounded
from fsmviz.schema.by_grammar import SchemaGrammar, schema_grammar
from fsmviz.schema.document import SchemaError, children, pointer, resolve, walk
from fsmviz.schema.keywords import ASSERTIONS, subschemas, unenforced
from fsmviz.schema.limits import MAX_REF_DEPTH, REGEX_BUDGET, REGEX_POSITIONS, regex_cost
from fsmviz.schema.load import load_schema, local_refs, ref_overrides
from fsmviz.schema.mend import escaped_keys, group_any_values, plain_keys
from fsmviz.schema.output import JsonCheck, JsonField, check_json, json_fields
from fsmviz.schema.patterns import search_patterns
from fsmviz.schema.ranges import BOUNDS, fill_ranges, mark_ranges
from fsmviz.schema.run import SchemaRuns
from fsmviz.schema.stricter import stricter

__all__ = [  # the document helpers, the loading and the output checks are re-exported:
    # their modules (document, load, output) are the floor below; these names stay here too
    "WHITESPACE",
    "JsonCheck",
    "JsonField",
    "SchemaError",
    "SchemaLocations",
    "SchemaRegex",
    "check_json",
    "children",
    "compile_schema",
    "json_fields",
    "load_schema",
    "local_refs",
    "locate",
    "pointer",
    "ref_overrides",
    "regex_from_schema",
    "resolve",
    "walk",
]

WHITESPACE: dict[str, str] = {"none": "", "space": "[ ]?", "flexible": r"[\n\t ]*"}
"""Named whitespace patterns, the regex each puts between JSON tokens (see the module doc)."""

# What each path does not enforce: ``fsmviz.schema.keywords.unenforced``.


def _whitespace(whitespace: str | None) -> str | None:
    if whitespace is None or whitespace == "default":
        return None
    if whitespace not in WHITESPACE:
        raise SchemaError(
            f"unknown whitespace {whitespace!r}: write one of {', '.join(WHITESPACE)}"
        )
    return WHITESPACE[whitespace]


@bounded(maxsize=64)
def _build(text: str, whitespace: str | None) -> str:
    """outlines-core's regex for a schema's JSON text (ValueError/TypeError when refused),
    with bounded integers written as their ranges (``fsmviz.schema.ranges``) and each
    ``pattern`` as the search it is (``fsmviz.schema.patterns``), and two outlines-core bugs
    mended (``fsmviz.schema.mend``: an empty schema's alternation grouped, property names
    JSON-escaped)."""
    from outlines_core.json_schema import build_regex_from_schema  # compiled; on first use

    names: dict[str, str] = {}
    if not _rewrites_nothing(text):
        plain, names = plain_keys(mark_ranges(search_patterns(json.loads(text))))
        text = json.dumps(plain)
    regex = fill_ranges(build_regex_from_schema(text, whitespace))
    return escaped_keys(group_any_values(regex, whitespace), names)


_REWRITTEN = ('"pattern"', *(f'"{key}"' for key in BOUNDS))
"""The keys that ``search_patterns`` (``pattern``) and ``mark_ranges`` (an integer's or a
number's bounds) act on, as ``json.dumps`` writes them."""


def _rewrites_nothing(text: str) -> bool:
    """Whether ``_build``'s rewrites leave the schema of ``text`` (``json.dumps``'s, with
    its separators) as it is, told from the text (~0.3 ms of Python walks and a JSON round
    trip saved): no backslash, so every key is spelt as it is (no escape) and no property
    name needs escaping (``plain_keys``: a quote, a backslash or a control character, each
    written with one), and none of the keys ``_REWRITTEN``. ``json.dumps(json.loads(text))``
    is then ``text``.

    >>> _rewrites_nothing('{"type": "string", "maxLength": 4}')
    True
    >>> _rewrites_nothing('{"type": "integer", "minimum": 1}')
    False
    >>> _rewrites_nothing('{"properties": {"a\\\\"b": {}}}')  # the name a"b, escaped
    False
    """
    return "\\" not in text and not any(key in text for key in _REWRITTEN)


def _build_part(part: object, root: Mapping[str, Any], whitespace: str | None) -> str | None:
    """The regex of one subschema, with the root's definitions so its ``$ref``s resolve."""
    if not isinstance(part, dict):
        return None
    part = dict(part)
    for key in ("$defs", "definitions"):
        if key in root and key not in part:
            part[key] = root[key]
    try:
        return _build(json.dumps(part, sort_keys=False), whitespace)
    except (ValueError, TypeError):
        return None


def regex_from_schema(schema: str | Mapping[str, Any] | type, whitespace: str | None = None) -> str:
    """The regex a JSON Schema describes (schema as JSON text or a mapping).

    ``whitespace`` is None (outlines-core's default, ``[ ]?``) or a name from ``WHITESPACE``.
    Raises ``SchemaError`` naming the JSON pointer of the part that is wrong or unsupported.

    >>> regex_from_schema('{"type": "object", "properties": {"ok": {"type": "boolean"}},'
    ...                   ' "required": ["ok"]}', whitespace="none")
    '\\\\{"ok":(true|false)\\\\}'
    >>> try:
    ...     regex_from_schema('{"type": "strin"}')
    ... except SchemaError as error:
    ...     print(error.path)
    /type
    """
    root = load_schema(schema)
    ws = _whitespace(whitespace)
    _check_cost(root)
    try:
        return _build(json.dumps(root), ws)
    except (ValueError, TypeError) as error:
        raise _refusal(root, ws, error) from None


def _check_cost(root: dict[str, Any]) -> None:
    """Refuse, before building it, a regex estimated over ``REGEX_BUDGET`` characters."""
    cost = regex_cost(root)
    if cost.recursive is None and cost.length > REGEX_BUDGET:
        raise SchemaError(
            f"this schema's regex would be about {cost.length:,} characters (the budget is "
            f"{REGEX_BUDGET:,}): an object with no required property is written once per "
            'property. Mark properties "required", or use compile_schema, which takes the '
            "grammar path",
            "",
        )


def _refusal(root: dict[str, Any], ws: str | None, error: Exception) -> SchemaError:
    """The converter's refusal, named by the deepest subschema that fails on its own."""
    path: tuple[str | int, ...] = ()
    node: object = root
    while True:
        for rel, child in children(node):
            if isinstance(child, dict) and _build_part(child, root, ws) is None:
                path, node = path + rel, child
                break
        else:
            break
    first = str(error).strip().splitlines()[0].strip()
    return SchemaError(
        f"outlines-core cannot express this part of the schema: {first}. Supported: type, "
        "properties/required, items/prefixItems, enum/const, anyOf/oneOf/allOf, local $ref, "
        "minLength/maxLength, pattern, format, minItems/maxItems",
        pointer(path),
    )


class SchemaLocations:
    """Spans of a schema's regex, each with the JSON pointer of the subschema that made it.

    ``spans`` are ``(start, end, pointer)`` with ``regex[start:end]`` the subschema's own
    regex, outer parts before the parts inside them; of equal spans (a ``$ref`` and its
    definition) the later, the definition, is the one ``pointer_at`` names.

    ``compile_schema`` hands over a ``find`` instead of the spans: finding them builds each
    subschema's regex again (~4 ms of a 22-field schema's ~30 ms from its text to its first
    allowed set, CPU), and only a finding's location or a refusal reads them, so they are
    found when first read (once; equal locations are those of equal regex and spans).

    >>> lazy = SchemaLocations("a", find=lambda: ((0, 1, ""),))
    >>> lazy == SchemaLocations("a", ((0, 1, ""),)), lazy.pointer_at((0, 1))
    (True, '')
    """

    __slots__ = ("regex", "_spans", "_find")

    def __init__(
        self,
        regex: str,
        spans: tuple[tuple[int, int, str], ...] | None = None,
        *,
        find: Callable[[], tuple[tuple[int, int, str], ...]] | None = None,
    ):
        if (spans is None) == (find is None):
            raise TypeError("SchemaLocations takes spans or find, one of them")
        self.regex, self._spans, self._find = regex, spans, find

    @property
    def spans(self) -> tuple[tuple[int, int, str], ...]:
        if self._spans is None:
            self._spans = self._find()  # type: ignore[misc]  # pure: a race finds it twice
            self._find = None
        return self._spans

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SchemaLocations):
            return NotImplemented
        return self.regex == other.regex and self.spans == other.spans

    def __hash__(self) -> int:
        return hash((self.regex, self.spans))

    def __repr__(self) -> str:
        return f"SchemaLocations(regex={self.regex!r}, spans={self.spans!r})"

    def pointer_at(self, span: tuple[int, int] | None) -> str | None:
        """The innermost subschema whose regex holds ``span``; ``""`` is the whole schema."""
        if span is None:
            return None
        best: tuple[int, str] | None = None
        for start, end, where in self.spans:
            if start <= span[0] and span[1] <= end and (best is None or end - start <= best[0]):
                best = (end - start, where)
        return best[1] if best else ""

    def span_of(self, where: str) -> tuple[int, int] | None:
        """The first span made by the subschema at ``where``."""
        return next(((s, e) for s, e, p in self.spans if p == where), None)


def _key_regex(name: str, ws: str | None) -> str:
    """How the converter writes a property's key (it escapes regex characters in it)."""
    one = {"type": "object", "properties": {name: {"const": 0}}, "required": [name]}
    return _build(json.dumps(one), "")[3:-5]  # \{"KEY":0\}


def locate(
    schema: str | Mapping[str, Any], regex: str, whitespace: str | None = None
) -> SchemaLocations:
    """Map spans of ``regex`` (made from ``schema``) back to JSON pointers of the schema.

    Each subschema's regex is built on its own and found inside its parent's span (a
    property after its key). A local ``$ref`` is followed and named by its definition.

    >>> s = {"type": "object", "properties": {"tag": {"type": "string", "maxLength": 3}}}
    >>> r = regex_from_schema(s, "none")
    >>> where = locate(s, r, "none")
    >>> where.pointer_at((r.index("{0,3}"), r.index("{0,3}") + 5))
    '/properties/tag'
    """
    return _locate(load_schema(schema), regex, _whitespace(whitespace))


def _locate(root: dict[str, Any], regex: str, ws: str | None) -> SchemaLocations:
    return SchemaLocations(regex, _spans(root, regex, ws))


def _lazy_locate(root: dict[str, Any], regex: str, ws: str | None) -> SchemaLocations:
    """``_locate``, its spans found when first read (``SchemaLocations``)."""
    return SchemaLocations(regex, find=lambda: _spans(root, regex, ws))


def _spans(root: dict[str, Any], regex: str, ws: str | None) -> tuple[tuple[int, int, str], ...]:
    sep = WHITESPACE["space"] if ws is None else ws
    spans: list[tuple[int, int, str]] = [(0, len(regex), "")]
    todo: list[tuple[tuple[str | int, ...], object, int, int, int]] = [((), root, 0, len(regex), 0)]
    while todo:
        path, node, start, end, depth = todo.pop()
        if depth > 8 or not isinstance(node, dict):
            continue
        if isinstance(node.get("$ref"), str):
            target = resolve(root, node["$ref"])
            if target is not None and target[0] != path:
                spans.append((start, end, pointer(target[0])))
                todo.append((target[0], target[1], start, end, depth + 1))
            continue
        for rel, child in children(node):
            sub = _build_part(child, root, ws)
            if not sub:
                continue
            prefix = f'"{_key_regex(rel[1], ws)}"{sep}:{sep}' if rel[0] == "properties" else ""
            needle = prefix + sub
            at = regex.find(needle, start, end)
            while at != -1:
                s, e = at + len(prefix), at + len(needle)
                spans.append((s, e, pointer(path + rel)))
                todo.append((path + rel, child, s, e, depth + 1))
                at = regex.find(needle, e, end)
    return tuple(sorted(dict.fromkeys(spans), key=lambda t: (t[0], -t[1])))


@dataclass(frozen=True)
class SchemaRegex(SchemaRuns):
    """A schema compiled for generation on the regex path: the dict, outlines-core's regex,
    its locations, the whitespace, and its DFA where one was given (``compile_schema``
    checks that the DFA can be built and leaves it to ``compile_regex(regex)``, which
    builds it once, when first asked); ``source`` the pydantic model class it came from,
    if any (``run.SchemaRuns``: ``.generate`` a run, ``.parse`` its output).

    ``unenforced`` (the keywords the regex does not enforce, with ``unfetched``: the
    remote references left out) and ``stricter`` are read from the schema when first asked
    (two passes over it, ~0.25 ms of a 22-field schema's ~6 ms from text to first allowed
    set, CPU, which no run needs), then kept; equal fields give equal answers.

    >>> compiled = compile_schema({"type": "number", "minimum": 1})
    >>> "unenforced" in vars(compiled), compiled.unenforced, "unenforced" in vars(compiled)
    (False, (('', 'minimum'),), True)
    """

    schema: dict[str, Any]
    regex: str
    whitespace: str | None
    locations: SchemaLocations
    unfetched: tuple[tuple[str, str], ...] = ()
    dfa: Dfa | None = field(default=None, repr=False, compare=False)
    source: type | None = field(default=None, repr=False, compare=False)

    @cached_property
    def unenforced(self) -> tuple[tuple[str, str], ...]:
        """The (JSON pointer, keyword) pairs the regex does not enforce
        (``keywords.unenforced``), and the remote references left out."""
        return _with_unfetched(unenforced(self.schema, "regex"), self.unfetched)

    @cached_property
    def stricter(self) -> tuple[tuple[str, str], ...]:
        """The (JSON pointer, rule) pairs where the regex refuses JSON the schema allows
        (``fsmviz.schema.stricter``): with ``unenforced``, every difference from the schema."""
        return stricter(self.schema, "regex", self.whitespace)

    path = "regex"
    reason = ""

    @property
    def text(self) -> str:
        return json.dumps(self.schema, indent=2, ensure_ascii=False)

    def accepts(self, text: str) -> bool:
        """Whether the regex matches ``text`` whole (fsmviz's DFA)."""
        return (self.dfa or compile_regex(self.regex)).accepts(text)


REGEX_MISREADS = {
    "allOf": "outlines-core's regex keeps one branch of an allOf, not their intersection",
    "prefixItems": "outlines-core's regex takes exactly the prefixItems, no shorter array and "
    "no further items",
    "items": "outlines-core's regex ignores items: false",
    "$ref": "outlines-core's regex ignores the keywords beside a $ref",
    "additionalProperties": "outlines-core's regex ignores additionalProperties beside "
    "properties: it writes the listed properties only",
}
"""Constructs outlines-core 0.2.14 writes as a *different* constraint, without a word (found
by the JSON-Schema-Test-Suite, ``bench/conformance.py``, and llama.cpp's schema tests,
``bench/llama_cpp_corpus.py``): a schema holding one takes the
grammar path, where llguidance reads it as the schema means."""


def regex_misread(root: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first (JSON pointer, why) of a construct outlines-core's regex misreads, or None.

    >>> regex_misread({"properties": {"a": {"allOf": [{"type": "string"}, {"maxLength": 3}]}}})
    ('/properties/a', "outlines-core's regex keeps one branch of an allOf, not their intersection")
    """
    for path, node in subschemas(root):
        for key in ("allOf", "prefixItems"):
            if key in node:
                return pointer(path), REGEX_MISREADS[key]
        if node.get("items") is False:
            return pointer(path), REGEX_MISREADS["items"]
        if "$ref" in node and any(k in ASSERTIONS for k in node if k != "$ref"):
            return pointer(path), REGEX_MISREADS["$ref"]
        if "properties" in node and node.get("additionalProperties", False) is not False:
            return pointer(path), REGEX_MISREADS["additionalProperties"]
    return None


def compile_schema(
    schema: str | Mapping[str, Any] | type | bool,
    whitespace: str | None = None,
    *,
    path: str | None = None,
) -> SchemaRegex | SchemaGrammar:
    """A JSON Schema (text, mapping or pydantic model class) compiled for generation.

    The **regex path** (``SchemaRegex``) where the schema is regular and its automaton fits:
    outlines-core's regex, compiled within fsmviz's limits, drawn as a DFA. Otherwise the
    **grammar path** (``SchemaGrammar``, llguidance's compiler, ``.reason`` says why): a
    recursive ``$ref``, a regex estimated over ``limits.REGEX_BUDGET`` characters (checked
    before outlines-core builds it), a part outlines-core cannot express, or an automaton
    over fsmviz's limits. Both answer ``.accepts(text)``, ``.unenforced``, the
    (JSON pointer, keyword) pairs the constraint does not enforce, and ``.stricter``, the
    (JSON pointer, rule) pairs where it refuses JSON the schema allows
    (``fsmviz.schema.stricter``: keys in the order of ``properties``, its whitespace...).
    ``SchemaError`` (with the JSON pointer) when neither path can take it, or the schema
    is over a size limit.
    Schemas that outlines-core's regex would misread (``REGEX_MISREADS``: ``allOf``,
    ``prefixItems``, ``items: false``, keywords beside a ``$ref``) take the grammar path too.
    ``path="grammar"`` asks for the grammar path whatever the schema (``"regex"``: the
    regex path or a ``SchemaError``).

    On the regex path the output holds the schema's declared properties only, in the order
    of ``properties`` (outlines-core's rule); keywords it leaves free are named.

    >>> compile_schema({"type": "number", "minimum": 1}).unenforced
    (('', 'minimum'),)
    >>> compile_schema({"type": "integer", "minimum": 1}).accepts("0")  # a range: enforced
    False
    >>> for where, rule in compile_schema({"properties": {"b": {"type": "integer"}}}).stricter:
    ...     print(where or "/", "|", rule.split(" (")[0])
    / | at most one space between JSON tokens
    / | no keys beyond `properties`
    / | an object only
    /properties/b | an integer written plainly: `1`, not `1.0`, `1e0` or `-0`
    >>> tree = {"type": "object", "properties": {"label": {"type": "string"},
    ...     "kids": {"type": "array", "items": {"$ref": "#"}}}, "required": ["label"]}
    >>> g = compile_schema(tree, "none")
    >>> g.path, g.accepts('{"label":"a","kids":[{"label":"b","kids":[{"label":"c"}]}]}')
    ('grammar', True)

    Given a pydantic model class, the compiled schema keeps it (``source``): its runs read
    the output back as an instance (``.generate(model, prompt).parsed``, ``run.SchemaTrace``).
    """
    compiled = _compile_schema(schema, whitespace, path)
    if isinstance(schema, type):
        compiled = replace(compiled, source=schema)
    return compiled


def _compile_schema(
    schema: str | Mapping[str, Any] | type | bool, whitespace: str | None, path: str | None
) -> SchemaRegex | SchemaGrammar:
    if path not in (None, "regex", "grammar"):
        raise SchemaError(f'unknown path {path!r}: write "regex", "grammar" or None')
    if schema is True:
        schema = {}
    elif schema is False or schema == "false":
        raise SchemaError("the schema false allows no value at all: nothing can be generated")
    loaded = load_schema("{}" if schema == "true" else schema)
    refless = _refless(schema) and "$defs" not in loaded  # a tool list's come with $refs
    if refless:
        root, unfetched = loaded, ()
    else:
        root, unfetched = local_refs(ref_overrides(loaded))
    compiled = _compile_root(root, whitespace, path, refs=not refless)
    if not unfetched:
        return compiled
    if isinstance(compiled, SchemaRegex):
        return replace(compiled, unfetched=unfetched)  # named in its ``unenforced``
    return replace(compiled, unenforced=_with_unfetched(compiled.unenforced, unfetched))


def _with_unfetched(
    named: tuple[tuple[str, str], ...], unfetched: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    """The keywords not enforced, ``named``, with the remote references left out
    (``unfetched``), in the order of their JSON pointers' parts, then keywords."""
    if not unfetched:
        return named
    return tuple(sorted({*named, *unfetched}, key=lambda f: (f[0].split("/"), f[1])))


def _refless(schema: object) -> bool:
    """Whether ``schema`` is JSON text that names no reference: no ``ref`` in any case (each
    of ``$ref``, ``$dynamicRef``, ``$recursiveRef`` holds one) and no ``\\u`` escape that
    could spell one. ``local_refs`` and ``ref_overrides`` would change nothing: not run.

    >>> _refless('{"type": "string"}'), _refless('{"$ref": "#"}'), _refless('{"$\\u0072ef": 1}')
    (True, False, False)
    """
    return isinstance(schema, str) and "\\u" not in schema and "ref" not in schema.lower()


def _compile_root(
    root: dict[str, Any], whitespace: str | None, path: str | None, refs: bool = True
) -> SchemaRegex | SchemaGrammar:
    """Choose the path for ``root`` and compile it: the grammar path when asked, when
    outlines-core would misread the schema, when its regex would cost too much or cannot
    be built, or (path chosen automatically) when it has too many positions; otherwise the
    regex path. With ``path="regex"`` each of those is a ``SchemaError`` instead. ``refs``:
    whether ``root`` may hold a ``$ref`` (False: its text names none, ``_refless``)."""
    ws = _whitespace(whitespace)
    if path == "grammar":
        return schema_grammar(root, whitespace, "the grammar path was asked for")
    misread = regex_misread(root) if path is None else None
    if misread is not None:
        return schema_grammar(root, whitespace, f"at {misread[0] or '/'}, {misread[1]}")
    why, where = _regex_too_costly(root, refs)
    if why and path == "regex":
        raise SchemaError(f"this schema cannot take the regex path: {why}", where)
    if why:
        return schema_grammar(root, whitespace, why)
    regex = _outlines_regex(root, ws, whitespace, path)
    if not isinstance(regex, str):
        return regex
    why = _too_many_positions(regex) if path is None else ""
    if why:
        return schema_grammar(root, whitespace, why)
    return _regex_path(root, regex, ws, whitespace, path)


def _regex_too_costly(root: dict[str, Any], refs: bool = True) -> tuple[str, str]:
    """Why outlines-core's regex for ``root`` would be wrong or too long (a recursive or
    deeply nested ``$ref``, a regex over the budget), and where; ``("", "")`` if fine."""
    cost = regex_cost(root, refs)
    if cost.recursive is not None:
        why = (f"the $ref at {cost.recursive} leads back into itself: a regex would cut it "
               "at a fixed depth")  # fmt: skip
    elif cost.ref_depth > MAX_REF_DEPTH:
        why = (f"its $refs nest {cost.ref_depth} deep, and outlines-core's regex cuts them "
               f"after {MAX_REF_DEPTH}")  # fmt: skip
    elif cost.length > REGEX_BUDGET:
        why = (f"outlines-core's regex would be about {cost.length:,} characters (its budget "
               f"is {REGEX_BUDGET:,})")  # fmt: skip
    else:
        why = ""
    return why, cost.recursive or ""


def _outlines_regex(
    root: dict[str, Any], ws: str | None, whitespace: str | None, path: str | None
) -> str | SchemaGrammar:
    """outlines-core's regex for ``root``; where it cannot build one, the grammar path
    (or, on the regex path, outlines-core's refusal, located in the schema)."""
    try:
        return _build(json.dumps(root), ws)
    except (ValueError, TypeError) as error:
        refusal = _refusal(root, ws, error)
        if path == "regex":
            raise refusal from None
        try:
            return schema_grammar(
                root, whitespace, f"outlines-core cannot express {refusal.path or '/'}"
            )
        except SchemaError as other:
            raise SchemaError(f"{refusal.message}; {other.message}", refusal.path) from None


def _too_many_positions(regex: str) -> str:
    """Why the regex is too big for the regex path (more than ``REGEX_POSITIONS``
    character positions), or ``""``; a regex that does not parse passes here and is
    refused by ``compile_regex``."""
    try:
        size = count_positions(regex)
    except RegexError:
        size = 0  # compile_regex says what is wrong
    if size > REGEX_POSITIONS:
        return (
            f"its regex has {size:,} character positions; the regex path takes up to "
            f"{REGEX_POSITIONS:,}"
        )
    return ""


def _regex_path(
    root: dict[str, Any], regex: str, ws: str | None, whitespace: str | None, path: str | None
) -> SchemaRegex | SchemaGrammar:
    """The regex path, with the schema location of each part of the regex (found when
    first read, as its keywords not enforced and its stricter rules: ``SchemaRegex``),
    where fsmviz's automaton can hold the regex; otherwise the grammar
    path (on the regex path, the error located in the schema). The DFA is checked
    (``check_buildable``: its subsets fit) and minimised when first asked for
    (``compile_regex``, the run's index): the first allowed set needs none."""
    try:
        check_buildable(regex)
    except RegexError as error:
        if path == "regex":
            raise _regex_refusal(_locate(root, regex, ws), error) from None
        try:
            return schema_grammar(
                root, whitespace, f"fsmviz's automaton cannot hold it: {error.message}"
            )
        except SchemaError:
            raise _regex_refusal(_locate(root, regex, ws), error) from None
    return SchemaRegex(root, regex, whitespace, _lazy_locate(root, regex, ws))


def _regex_refusal(where: SchemaLocations, error: RegexError) -> SchemaError:
    if error.position is not None and "too l" not in error.message:
        at = where.pointer_at((error.position, error.position))
        return SchemaError(f"fsmviz cannot use this part's regex: {error}", at)
    culprit = ""
    for start, end, path in sorted(where.spans, key=lambda t: t[0] - t[1]):
        if not path or end - start < 50:
            continue
        try:
            compile_regex(where.regex[start:end])
        except RegexError:
            culprit = path  # the largest failing part first; keep going to a deeper one
            continue
    return SchemaError(
        f"this part of the schema is too large for fsmviz ({error.message}). Bound it "
        "(maxLength, maxItems, fewer nested free-form objects) or split the schema",
        culprit,
    )
