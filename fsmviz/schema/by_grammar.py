"""The grammar path of a JSON Schema: llguidance's JSON Schema compiler, for schemas that are
not regular (a tree whose children are trees) or whose regex would not fit.

outlines-core turns a schema into one regex, and fsmviz draws its automaton; that fails for a
recursive schema (outlines-core unrolls it to depth 3 without a word, and the regex then
takes ``{"label":"d",}``), for one whose regex grows past what an automaton can hold (the
square of its optional properties), and for keywords outlines-core refuses (``not``,
``if``, formats it does not know). llguidance compiles the same schema into a context-free
grammar (``grammar_from("json_schema", text)``) in time linear in the schema, enforcing more
keywords (number bounds, ``multipleOf``, ``maxProperties``, more formats). fsmviz runs it
``lenient``: a keyword llguidance cannot enforce is left free and *named*
(``SchemaGrammar.unenforced``, ``SchemaGrammar.warnings``), never silently dropped.

``SchemaGrammar.accepts(text)`` asks llguidance's own matcher, fed the text's UTF-8 bytes
one byte per token (a 257-token vocabulary: the 256 bytes and an end token). That is the
constraint's verdict, not ``jsonschema``'s: a keyword the grammar leaves free shows up as a
text it accepts that the schema calls invalid, which is what the engines' table is for.

Generation with it is grammar mode's work (``fsmviz.grammar``): the ``grammar`` string is
what an ``llguidance.LLMatcher`` over the model's tokenizer takes.

>>> g = schema_grammar({"type": "object", "properties": {"n": {"type": "integer",
...     "minimum": 1}}, "required": ["n"]}, "none")
>>> g.accepts('{"n":3}'), g.accepts('{"n":0}'), g.accepts('{"n": 3}')
(True, False, False)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fsmviz.schema.circular import tangled_at, untangle_circular_refs
from fsmviz.schema.document import SchemaError, children, pointer
from fsmviz.schema.keywords import ASSERTIONS, subschemas
from fsmviz.schema.keywords import unenforced as _unenforced
from fsmviz.schema.run import SchemaRuns
from fsmviz.schema.stricter import stricter
from fsmviz.tokens.encoding import byte_tokenizer

__all__ = ["GRAMMAR_LIMITS", "SchemaGrammar", "byte_tokenizer", "schema_grammar"]

GRAMMAR_LIMITS = {"max_items_in_row": 20_100}
"""llguidance's parser limits as fsmviz sets them. ``max_items_in_row`` is 2,000 by default,
which an object of 500 optional properties already passes (four items a property): the
grammar validates, then every text fails at ``{``. 20,100 fits ``MAX_PROPERTIES`` (5,000)."""

_WHITESPACE_OPTIONS: dict[str | None, dict[str, object]] = {
    "none": {"whitespace_flexible": False},
    None: {"whitespace_pattern": "[ ]?"},
    "default": {"whitespace_pattern": "[ ]?"},
    "space": {"whitespace_pattern": "[ ]?"},
    "flexible": {"whitespace_pattern": r"[\n\t ]*"},
}
"""fsmviz's whitespace names (``convert.WHITESPACE``) as llguidance's JSON options."""


def _limits() -> Any:
    import llguidance  # llguidance: a compiled engine, loaded on first use

    return llguidance.LLParserLimits(**GRAMMAR_LIMITS)


@dataclass(frozen=True)
class SchemaGrammar(SchemaRuns):
    """A schema compiled by llguidance: the grammar path.

    ``schema`` the schema (a dict), ``grammar`` llguidance's grammar (a JSON string an
    ``LLMatcher`` takes, with fsmviz's whitespace and ``lenient`` in its options),
    ``whitespace`` fsmviz's whitespace name, ``reason`` why the regex path was not taken,
    ``unenforced`` the (JSON pointer, keyword) pairs it does not enforce (``stricter``: the
    rules by which it refuses JSON the schema allows), ``warnings``
    llguidance's own words about them, ``source`` the pydantic model class it came from
    (``run.SchemaRuns``: ``.generate`` a run, ``.parse`` its output).
    """

    schema: dict[str, Any]
    grammar: str
    whitespace: str | None
    reason: str
    unenforced: tuple[tuple[str, str], ...]
    warnings: tuple[str, ...] = ()
    source: type | None = field(default=None, repr=False, compare=False)
    stricter: tuple[tuple[str, str], ...] = ()
    """The (JSON pointer, rule) pairs where the grammar refuses JSON the schema allows
    (``fsmviz.schema.stricter``)."""

    path = "grammar"

    @property
    def text(self) -> str:
        return json.dumps(self.schema, indent=2, ensure_ascii=False)

    def matcher(self, tokenizer: Any = None) -> Any:
        """A fresh ``llguidance.LLMatcher`` for this grammar (over bytes by default)."""
        import llguidance  # llguidance: a compiled engine, loaded on first use

        tok = byte_tokenizer() if tokenizer is None else tokenizer
        return llguidance.LLMatcher(tok, self.grammar, log_level=0, limits=_limits())

    def limits(self) -> Any:
        """llguidance's parser limits for this grammar (``GRAMMAR_LIMITS``)."""
        return _limits()

    def generation_run(self, model: Any, options: Any) -> Any:
        """The step loop of ``fsmviz.stream`` under this grammar: llguidance's exact mask
        over the model's tokens (``fsmviz.grammar.run.GrammarRun``), no safe end (fsmviz's
        own chart reads grammars, not compiled schemas). ``stream(model, schema_grammar,
        prompt)`` calls it."""
        from fsmviz.grammar.run import GrammarRun  # the run loads torch: on first use

        return GrammarRun(model, self, options)

    def accepts(self, text: str) -> bool:
        """Whether the grammar takes ``text`` whole (its UTF-8 bytes, then the end)."""
        matcher = self.matcher()
        return matcher.consume_tokens(list(text.encode("utf-8"))) and matcher.is_accepting()


def grammar_text(schema: Mapping[str, Any], whitespace: str | None) -> str:
    """llguidance's grammar for ``schema`` with fsmviz's whitespace, lenient."""
    import llguidance  # llguidance: a compiled engine, loaded on first use

    options = {"lenient": True, **_WHITESPACE_OPTIONS.get(whitespace, {})}
    return llguidance.LLMatcher.grammar_from_json_schema(json.dumps(schema), overrides=options)


def check_grammar(grammar: str) -> tuple[str | None, tuple[str, ...]]:
    """llguidance's error for a grammar (None if it compiles) and its warnings."""
    import llguidance  # llguidance: a compiled engine, loaded on first use

    is_error, messages = llguidance.LLMatcher.validate_grammar_with_warnings(
        grammar, byte_tokenizer(), limits=_limits()
    )
    if is_error:
        return (messages[0] if messages else "llguidance refused it"), ()
    return None, tuple(messages)


def schema_grammar(
    schema: Mapping[str, Any], whitespace: str | None = None, reason: str = ""
) -> SchemaGrammar:
    """The schema on the grammar path; raises ``SchemaError`` (with the JSON pointer of the
    deepest part llguidance refuses on its own) when llguidance cannot compile it."""
    schema, relaxed = relax_property_counts(schema, whitespace)
    grammar = grammar_text(schema, whitespace)
    error, warnings = check_grammar(grammar)
    tried: set[int] = set()
    while error is not None:  # what llguidance cannot do, left free and named: try again
        step = next((i for i, (w, _) in enumerate(RELAXATIONS) if w in error and i not in tried),
                    None)  # fmt: skip
        if step is None:
            break
        tried.add(step)
        changed, more = RELAXATIONS[step][1](schema, whitespace)
        if changed != schema:
            schema, relaxed = changed, relaxed + more
            grammar = grammar_text(schema, whitespace)
            error, warnings = check_grammar(grammar)
    if error is not None:
        first = error.strip().splitlines()[0][:300]
        where = _deepest_refused(schema, whitespace)
        if ANNOTATIONS_ONLY in first and "#" in first:
            target = "#" + first.rsplit("#", 1)[1].strip()
            where = tangled_at(schema, target) or where
            first += (
                f". The $ref to {target} leads back into itself, and llguidance cannot "
                "combine it with keywords at the same place (beside it, or in an allOf or "
                "anyOf with it): write that $ref alone, or move those keywords into the "
                f"definition {target} names"
            )
        raise SchemaError(f"llguidance cannot compile this schema: {first}", where)
    named = sorted({*_unenforced(schema, "grammar"), *relaxed}, key=lambda f: f[0].split("/"))
    rules = stricter(schema, "grammar", whitespace)
    return SchemaGrammar(dict(schema), grammar, whitespace, reason, tuple(named), warnings,
                         stricter=rules)  # fmt: skip


ANNOTATIONS_ONLY = "circular references with sibling keys"
_ROOT_KEEPS = frozenset(("$defs", "definitions", "$schema", "$id"))
"""llguidance's words for a recursive ``$ref`` with keywords beside it."""


def relax_ref_siblings(
    schema: Mapping[str, Any], whitespace: str | None
) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """``schema`` with only ``$ref`` left where keywords stand beside one: annotations
    (``description``, ``title``, ``default``...) go silently, assertions are named.

    >>> relax_ref_siblings({"properties": {"a": {"$ref": "#", "title": "A", "maxLength": 3}}}, None)
    ({'properties': {'a': {'$ref': '#'}}}, (('/properties/a', 'maxLength'),))
    """  # noqa: E501
    copy = json.loads(json.dumps(schema))
    relaxed = []
    for where, node in list(subschemas(copy)):
        if "$ref" not in node:
            continue
        kept = _ROOT_KEEPS if where == () else ()  # the root keeps its definitions
        beside = [k for k in node if k != "$ref" and k not in kept]
        relaxed += [(pointer(where), k) for k in beside if k in ASSERTIONS]
        for key in beside:
            del node[key]  # type: ignore[attr-defined]  # the copy's dicts
    return copy, tuple(relaxed)


def relax_property_counts(
    schema: Mapping[str, Any], whitespace: str | None
) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """``schema`` without the ``minProperties`` / ``maxProperties`` llguidance miscounts,
    each named.

    llguidance 1.9.1 counts an object's properties right only where every property of
    ``properties`` is required (its issue #168): beside an optional one it counts the other
    keys alone, so ``{"minProperties": 1, "properties": {"a": {}}}`` refuses ``{"a":1}``
    (valid JSON no model could write) and ``"maxProperties": 1`` takes ``{"a":1,"b":2}``.
    There the count is left free and named, unless the schema's other keywords already
    say it (as many ``required`` names as ``minProperties``; no more possible keys than
    ``maxProperties``): then it goes without a word.

    >>> relax_property_counts({"minProperties": 1, "properties": {"a": {}}}, None)
    ({'properties': {'a': {}}}, (('', 'minProperties'),))
    >>> relax_property_counts({"minProperties": 1, "required": ["a"], "properties": {"a": {},
    ...     "b": {}}}, None)
    ({'required': ['a'], 'properties': {'a': {}, 'b': {}}}, ())
    """
    copy = json.loads(json.dumps(schema))
    relaxed = []
    for where, node in _objects(copy):  # every object: a $ref may name any of them
        names = node.get("properties")
        required = node.get("required")
        required = set(required) if isinstance(required, list) else set()
        if not isinstance(names, dict) or set(names) <= required:
            continue  # llguidance counts these right
        closed = node.get("additionalProperties") is False and "patternProperties" not in node
        for key in ("minProperties", "maxProperties"):
            count = node.get(key)
            if not isinstance(count, int) or isinstance(count, bool):
                continue
            implied = len(required) >= count if key == "minProperties" else (
                closed and len(names) <= count)  # fmt: skip
            del node[key]  # type: ignore[attr-defined]  # the copy's dicts
            if not implied:
                relaxed.append((pointer(where), key))
    return copy, tuple(relaxed)


BOUND_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
HUGE = 2**53
"""A bound at or past this (the int64 and float64 limits pydantic and Java write) says no
more than "a number" to a model's short output; llguidance cannot write its range."""


def relax_huge_bounds(
    schema: Mapping[str, Any], whitespace: str | None
) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """``schema`` without number bounds of magnitude ``HUGE`` or more, each named.

    >>> relax_huge_bounds({"type": "integer", "minimum": -2**63, "maximum": 10}, None)
    ({'type': 'integer', 'maximum': 10}, (('', 'minimum'),))
    """
    copy = json.loads(json.dumps(schema))
    relaxed = []
    for where, node in _objects(copy):  # every object: a $ref may name any of them
        for key in BOUND_KEYS:
            value = node.get(key)
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if number and abs(value) >= HUGE:  # type: ignore[arg-type]
                del node[key]  # type: ignore[attr-defined]
                relaxed.append((pointer(where), key))
    return copy, tuple(relaxed)


_VALUES = frozenset(("enum", "const", "default", "examples", "example"))
_NAME_MAPS = frozenset(("properties", "patternProperties", "$defs", "definitions"))


def _objects(root: object) -> list[tuple[tuple[str | int, ...], dict[str, Any]]]:
    """Every JSON object in ``root`` with its path, values (``enum``, ``default``...) left out."""
    found, todo = [], [((), root)]
    while todo:
        where, value = todo.pop()
        if isinstance(value, dict):
            found.append((where, value))
            names = bool(where) and where[-1] in _NAME_MAPS  # its keys are names, not keywords
            todo += [((*where, k), v) for k, v in value.items() if names or k not in _VALUES]
        elif isinstance(value, list):
            todo += [((*where, i), v) for i, v in enumerate(value)]
    return found


def relax_patterns(
    schema: Mapping[str, Any], whitespace: str | None
) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]]:
    """``schema`` without the regexes llguidance cannot read (a lookahead such as
    ``^(?!@@)[a-z]+$``, written for JavaScript's engine): a ``pattern`` is dropped, a
    ``patternProperties`` entry's subschema takes every name the other entries do not
    (``additionalProperties``); each is returned as a (JSON pointer, keyword) pair, not
    enforced and named.

    >>> relax_patterns({"type": "string", "pattern": "^(?!a)b$"}, None)
    ({'type': 'string'}, (('', 'pattern'),))
    """

    def readable(regex: object) -> bool:
        part = {"type": "string", "pattern": regex}
        return check_grammar(grammar_text(part, whitespace))[0] is None

    copy = json.loads(json.dumps(schema))
    relaxed = []
    for where, node in _objects(copy):  # every object: a $ref may name any of them
        if isinstance(node.get("pattern"), str) and not readable(node["pattern"]):
            del node["pattern"]  # type: ignore[attr-defined]  # the copy's dicts
            relaxed.append((pointer(where), "pattern"))
        named = node.get("patternProperties")
        if isinstance(named, dict) and not all(readable(k) for k in named):
            # the unreadable ones' subschemas take every name the others do not
            lost = [sub for key, sub in named.items() if not readable(key)]
            node["patternProperties"] = {k: v for k, v in named.items() if readable(k)}  # type: ignore[index]
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                lost.append(extra)
            node["additionalProperties"] = lost[0] if len(lost) == 1 else {"anyOf": lost}  # type: ignore[index]
            relaxed.append((pointer(where), "patternProperties"))
    return copy, tuple(relaxed)


RELAXATIONS = (
    ("regex", relax_patterns),
    (ANNOTATIONS_ONLY, untangle_circular_refs),
    (ANNOTATIONS_ONLY, relax_ref_siblings),
    ("range", relax_huge_bounds),
)
"""llguidance's refusal (words in its message) and what fsmviz leaves free for it, in turn
(a circular ``$ref`` beside keywords: first rewritten, ``fsmviz.schema.circular``, and what
is left, with its keywords dropped)."""


def _deepest_refused(schema: Mapping[str, Any], whitespace: str | None) -> str:
    """The JSON pointer of the deepest subschema llguidance refuses on its own ("" if none)."""
    path: tuple[str | int, ...] = ()
    node: object = schema
    for _ in range(64):
        for rel, child in children(node):
            if not isinstance(child, dict):
                continue
            part = dict(child)
            for key in ("$defs", "definitions"):
                if key in schema and key not in part:
                    part[key] = schema[key]
            if check_grammar(grammar_text(part, whitespace))[0] is not None:
                path, node = path + rel, child
                break
        else:
            break
    for key in ("allOf", "oneOf", "anyOf"):
        if isinstance(node, dict) and key in node:  # the parts are fine, their mix is not
            return pointer((*path, key))
    return pointer(path)
