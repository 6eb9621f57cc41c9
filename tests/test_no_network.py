"""A visitor's schema never reaches the network and never freezes the server (issue 49).

A local HTTP server counts every request it is sent; schemas that name it (``$ref``,
``$dynamicRef``, an ``$id``-relative reference, ``$schema``) go through every way fsmviz
reads a schema: it must count none. Catastrophic patterns (``^(a+)+$``) are checked in
bounded time, and so is the Learn view's cross-check against Python's backtracking regex.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from contextlib import suppress

import pytest
from referencing.exceptions import Unresolvable

from bench.probe import Counter
from fsmviz.cli import engines_command
from fsmviz.peers.schema import engine_verdicts, instances
from fsmviz.schema.convert import SchemaError, check_json, compile_schema, load_schema
from fsmviz.schema.guarded import (
    PatternTooSlow,
    bounded_patterns,
    remote_refs,
    search,
    validator,
)


@pytest.fixture(scope="module")
def counting() -> Iterator[Counter]:
    """A loopback server that counts the requests a schema makes (bench.probe's)."""
    server = Counter()
    yield server
    server.close()


def remote(url: str) -> dict[str, tuple[dict, str, str]]:
    """name -> (schema, the JSON pointer of its reference, the keyword)."""
    return {
        "ref": ({"type": "object", "properties": {"a": {"$ref": f"{url}/r.json"}},
                 "required": ["a"]}, "/properties/a", "$ref"),
        "dynamic": ({"type": "object", "properties": {"a": {"$dynamicRef": f"{url}/d.json"}},
                     "required": ["a"]}, "/properties/a", "$dynamicRef"),
        "dynamic top": ({"$dynamicRef": f"{url}/t.json"}, "", "$dynamicRef"),
        "id-relative": ({"$id": f"{url}/base/root.json", "type": "object",
                         "properties": {"a": {"$ref": "other.json"}}}, "/properties/a", "$ref"),
    }  # fmt: skip


def test_a_remote_reference_is_found_with_its_pointer(counting: Counter) -> None:
    for schema, where, keyword in remote(counting.url).values():
        found = remote_refs(schema)
        assert [(r.pointer, r.keyword) for r in found] == [(where, keyword)]
    local = {"$defs": {"n": {"$id": "n.json", "type": "integer"}},
             "properties": {"a": {"$ref": "n.json"}, "b": {"$ref": "#/$defs/n"},
                            "c": {"$dynamicRef": "#meta"}}}  # fmt: skip
    assert remote_refs(local) == ()


def test_no_way_of_reading_a_schema_sends_a_request(counting: Counter) -> None:
    meta = {"$schema": f"{counting.url}/meta.json", "type": "integer"}
    cases = [*remote(counting.url).values(), (meta, "", "$schema")]
    for schema, where, keyword in cases:
        root = load_schema(schema)
        compiled = compile_schema(schema, "none")
        if keyword != "$schema":
            assert (where, keyword) in compiled.unenforced  # taken, the reference named
        for text in ('{"a":1}', "1", '"x"'):
            check_json(text, compiled.schema)
            check_json(text, root)  # the schema as given, references and all
        with suppress(Unresolvable), bounded_patterns():
            validator(root).is_valid({"a": 1})  # a lookup offline: refused, not fetched
    assert counting.paths == []


def test_a_raw_validator_refuses_to_fetch(counting: Counter) -> None:
    schema = {"properties": {"a": {"$ref": f"{counting.url}/x.json"}}}
    with pytest.raises(Unresolvable), bounded_patterns():
        validator(schema).is_valid({"a": 1})
    check = check_json('{"a":1}', schema)
    assert not check.valid and check.schema_path == "/properties/a"
    assert f"{counting.url}/x.json" in check.error and "never fetches" in check.error
    assert counting.paths == []


def test_the_engine_comparison_refuses_a_remote_reference_naming_it(counting: Counter) -> None:
    for schema, where, keyword in remote(counting.url).values():
        with pytest.raises(SchemaError) as caught:
            engine_verdicts(schema, engines=("fsmviz",))
        assert caught.value.path == where and keyword in caught.value.message
        assert counting.url in caught.value.message or "other.json" in caught.value.message
    assert counting.paths == []


def test_the_command_line_engines_refuse_it_with_status_2(counting: Counter, tmp_path) -> None:
    path = tmp_path / "remote.json"
    path.write_text(json.dumps(remote(counting.url)["dynamic"][0]))
    err = io.StringIO()
    assert engines_command(str(path), out=io.StringIO(), err=err) == 2
    assert "/properties/a" in err.getvalue() and "$dynamicRef" in err.getvalue()
    assert counting.paths == []


FREEZE = {"type": "string", "pattern": "^a{40}!$", "not": {"pattern": "^(a+)+$"}}


def test_a_catastrophic_pattern_is_checked_in_linear_time() -> None:
    """Python's re takes ~30 s at a{28} and doubles with each a; RE2 answers at once."""
    start = time.perf_counter()
    assert check_json(json.dumps("a" * 40 + "!"), FREEZE).valid
    assert not check_json(json.dumps("a" * 40), FREEZE).valid
    keys = {"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "integer"}},
            "additionalProperties": False}  # fmt: skip
    assert not check_json(json.dumps({"a" * 40 + "c": 1}), keys).valid
    assert check_json(json.dumps({"a" * 40: 1}), keys).valid
    made = {i.how: i.valid for i in instances(FREEZE)}  # labelled by the guarded validator
    assert made["pattern broken"] is False
    assert time.perf_counter() - start < 2.0


def test_a_pattern_re2_cannot_read_runs_under_a_time_bound() -> None:
    """A lookahead is not RE2's: the backtracking fallback stops at the budget and says so."""
    slow = "^(?=a)(a|aa)+$"
    start = time.perf_counter()
    with pytest.raises(PatternTooSlow) as caught:
        search(slow, "a" * 60 + "c", seconds=0.2)
    assert "(a+)+" in caught.value.message
    check = check_json(json.dumps("a" * 60 + "c"), {"type": "string", "pattern": slow})
    assert not check.valid and check.error.startswith("not checked")
    assert time.perf_counter() - start < 8.0  # regex's own timer overshoots on a busy CPU
    assert search("(?<=x)a", "xa") and not search("(?<=x)a", "ya")


def test_outside_a_bounded_check_jsonschema_keeps_python_s_re() -> None:
    """The guard is scoped: RE2 reads \\d as ASCII (as ECMA-262), Python's re as Unicode."""
    import jsonschema

    schema = {"type": "string", "pattern": "^\\d$"}
    with bounded_patterns():
        assert not validator(schema).is_valid("٣")
    assert jsonschema.Draft202012Validator(schema).is_valid("٣")


def test_the_learn_view_s_cross_check_is_bounded() -> None:
    from fsmviz.automaton.dfa import compile_regex
    from fsmviz.learn.walk import check_tests, walk_string

    dfa = compile_regex("(a|aa)+")
    start = time.perf_counter()
    walk = walk_string(dfa, "a" * 50 + "c")
    assert walk.verdict == "dead" and walk.dead_at == 50
    results = check_tests(dfa, "\n".join(["a" * 50 + "c"] * 5))
    assert [r.dfa for r in results] == [False] * 5
    assert time.perf_counter() - start < 60.0  # ~2 s of budgets; hours without the bound
