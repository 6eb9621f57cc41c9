"""``document.nodes`` (the subschemas ``walk`` yields, without paths) and the shortcut
``ranges.check_bounds`` takes with it: the same nodes as ``walk``, the same refusal (message
and pointer) as the walk with paths alone, on hand-made and bench schemas."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from fsmviz.schema.document import SchemaError, nodes, pointer, walk
from fsmviz.schema.load import load_schema
from fsmviz.schema.ranges import _BOUNDS, _PAIRS, check_bounds

BENCH = Path(__file__).resolve().parents[1] / "bench"
_EMPTY = {"type": "string", "minLength": 5, "maxLength": 1}  # no string meets it
_PLACES = {  # a subschema under each kind of child ``children`` names, and the root's defs
    "properties": lambda s: {"properties": {"a": s}},
    "items": lambda s: {"items": s},
    "additionalProperties": lambda s: {"additionalProperties": s},
    "prefixItems": lambda s: {"prefixItems": [{}, s]},
    "anyOf": lambda s: {"anyOf": [{"type": "null"}, s]},
    "oneOf": lambda s: {"oneOf": [s]},
    "allOf": lambda s: {"allOf": [{}, s]},
    "$defs": lambda s: {"$defs": {"d": s}},
    "definitions": lambda s: {"definitions": {"d": s}},
}


def _bench_schemas() -> list[dict]:
    files = sorted((BENCH / "schemas_public").rglob("*.json")) + sorted(
        (BENCH / "schemas").rglob("*.json")
    )
    loaded = [json.loads(f.read_text()) for f in [*files, BENCH / "schema22.json"]]
    return [schema for schema in loaded if isinstance(schema, dict)]


def _plain_check_bounds(root: dict) -> None:
    """``check_bounds`` as written before its shortcut: every subschema walked with its path."""
    from fsmviz.schema import ranges

    for path, node in walk(root):
        if len(_BOUNDS.intersection(node)) < 2:
            continue
        types = node.get("type")
        types = {types} if isinstance(types, str) else set(types or ())
        why = None
        if types and types <= {"integer", "number"}:
            why = ranges._empty_range(node, types == {"integer"})
        for kind, low, high, counted in _PAIRS:
            if why is None and types == {kind}:
                why = ranges._empty_length(node, low, high, counted)
        if why is None and types == {"object"}:
            why = ranges._too_many_required(node)
        if why is not None:
            raise SchemaError(why, pointer(path))


def _outcome(check, root: dict) -> tuple[str, str | None] | None:
    try:
        check(root)
    except SchemaError as error:
        return error.message, error.path
    return None


@pytest.mark.parametrize("place", sorted(_PLACES))
def test_nodes_are_walks_nodes(place: str) -> None:
    """Each kind of child, nested twice: ``nodes`` finds every node ``walk`` does, once each."""
    root = _PLACES[place](_PLACES[place]({"type": "integer"}))
    assert Counter(map(id, nodes(root))) == Counter(id(n) for _, n in walk(root))


def test_nodes_on_bench_schemas() -> None:
    schemas = _bench_schemas()
    assert len(schemas) > 100
    for schema in schemas:
        assert Counter(map(id, nodes(schema))) == Counter(id(n) for _, n in walk(schema))


@pytest.mark.parametrize("place", sorted(_PLACES))
def test_a_refusal_anywhere_is_found(place: str) -> None:
    """An empty length pair under each kind of child, alone and beside another deeper one:
    the same refusal, with the same pointer, as the walk with paths gives."""
    for root in (
        _PLACES[place](_EMPTY),
        _PLACES[place]({"properties": {"x": _EMPTY}, "anyOf": [_EMPTY]}),
        {
            "properties": {"b": {"type": "integer", "minimum": 3, "maximum": 1}},
            **_PLACES[place](_EMPTY),
        },  # fmt: skip
    ):
        expected = _outcome(_plain_check_bounds, root)
        assert expected is not None
        assert _outcome(check_bounds, root) == expected


def test_bench_schemas_and_bounds_that_pass() -> None:
    """Schemas with two bounds that some value meets (walked with paths, nothing refused),
    and every bench schema, loaded: no refusal, as the walk with paths says."""
    fine = {"properties": {"n": {"type": "integer", "minimum": 1, "maximum": 9},
                           "s": {"type": "string", "minLength": 1, "maxLength": 2}}}  # fmt: skip
    assert _outcome(check_bounds, fine) is None is _outcome(_plain_check_bounds, fine)
    for schema in _bench_schemas():
        try:
            loaded = load_schema(json.dumps(schema))
        except SchemaError:
            continue
        assert _outcome(check_bounds, loaded) == _outcome(_plain_check_bounds, loaded)
