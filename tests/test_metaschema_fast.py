"""The metaschema check's fast path (``guarded.plainly_valid``) never passes a schema that
``jsonschema``'s full check refuses: held to it on real schemas and on broken ones."""

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from fsmviz.schema import guarded
from fsmviz.schema.load import load_schema

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "cases"
DRAFTS = (
    None,
    "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
)


def full_check(schema: dict) -> object:
    """``metaschema_errors`` without its fast path: jsonschema's walk of the metaschema."""
    cls = jsonschema.validators.validator_for(schema)
    meta = cls(cls.META_SCHEMA, registry=guarded._registry(), format_checker=cls.FORMAT_CHECKER)
    with guarded.bounded_patterns():
        return jsonschema.exceptions.best_match(meta.iter_errors(schema))


def real_schemas() -> list[dict]:
    found = [json.loads((CASES / "schema_22_fields.json").read_text())]
    found += json.loads((CASES / "outlines_core_schemas.json").read_text())["schemas"]
    groups = json.loads((CASES / "json_schema_test_suite_sample.json").read_text())["groups"]
    found += [g["schema"] for g in groups]
    for path in sorted((ROOT / "bench" / "schemas_public").glob("*/*.json"))[::3]:
        found.append(json.loads(path.read_text()))
    return [s for s in found if isinstance(s, dict)]


def test_every_real_schema_the_fast_path_passes_the_full_check_passes():
    passed = 0
    for schema in real_schemas():
        if guarded.plainly_valid(schema):
            passed += 1
            assert full_check(schema) is None, json.dumps(schema)[:200]
    assert passed >= 20  # the fast path is taken, not only declined


BROKEN = [
    ("type", "strin"), ("type", []), ("type", ["string", "string"]), ("maxLength", -1),
    ("maxLength", 1.5), ("maxLength", True), ("required", ["a", "a"]), ("required", [1]),
    ("enum", [1, True]), ("pattern", "("), ("multipleOf", 0), ("minimum", "1"), ("title", 1),
    ("anyOf", []), ("uniqueItems", 1), ("examples", 1), ("format", 1),
    ("additionalProperties", 1), ("required", []), ("enum", []), ("items", [{}]),
    ("$ref", "http://x y"), ("properties", {"b": True}), ("exclusiveMinimum", True),
]  # fmt: skip
"""A value under one property, some broken under every draft, some under one draft only
(an empty ``required`` in draft 4, an items list in 2020-12, a boolean subschema)."""


@pytest.mark.parametrize("draft", DRAFTS)
def test_a_value_some_draft_refuses_goes_to_the_full_check(draft):
    for key, value in BROKEN:
        schema = {"type": "object", "properties": {"a": {"type": "string", key: value}}}
        if draft:
            schema["$schema"] = draft
        if guarded.plainly_valid(schema):
            assert full_check(schema) is None, (key, value)
        elif full_check(schema) is not None:  # refused: the message is jsonschema's, as before
            assert guarded.metaschema_errors(schema).message == full_check(schema).message


def test_a_plain_schema_skips_jsonschema_and_still_loads():
    schema = json.loads((CASES / "schema_22_fields.json").read_text())
    assert guarded.plainly_valid(schema)
    assert guarded.plainly_valid(copy.deepcopy(schema) | {"$schema": DRAFTS[3]})
    assert not guarded.plainly_valid(
        schema | {"$schema": "http://json-schema.org/draft-03/schema#"}
    )
    assert load_schema(json.dumps(schema)) == schema
