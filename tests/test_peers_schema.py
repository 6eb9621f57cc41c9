"""Which engine gets your schema right (fsmviz.peers.schema): instances, isolation, verdicts."""

from __future__ import annotations

import io
import json
import mmap
import os
import time

from fsmviz.cli import engines_command
from fsmviz.peers.schema import engine_verdicts, instances, isolated, verdicts_text

PRODUCT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "price": {"type": "number", "minimum": 0, "maximum": 1000},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "required": ["name", "price"],
    "additionalProperties": False,
}


def test_instances_are_labelled_by_jsonschema_and_cover_each_mutation():
    made = instances(PRODUCT)
    valid = [i for i in made if i.valid]
    assert valid and all(json.loads(i.text)["price"] >= 0 for i in valid)
    hows = {i.how for i in made if not i.valid}
    for how in ("required name dropped", "extra key", "price: maximum crossed",
                "name: maxLength crossed", "tags: maxItems crossed"):  # fmt: skip
        assert any(h.endswith(how) or h == how for h in hows), how
    assert all(list(json.loads(i.text))[:1] in (["name"], ["price"], []) for i in made)


def _abort() -> None:
    os.abort()


def _sleep() -> None:
    time.sleep(30)


def test_isolated_survives_a_native_abort_a_runaway_and_an_exception():
    assert isolated(_abort)[0] == "killed"
    start = time.monotonic()
    assert isolated(_sleep, seconds=0.5) == ("killed", "over the 0.5 s limit")
    assert time.monotonic() - start < 10
    status, message = isolated(int, "x")
    assert status == "error" and "ValueError" in message


def test_a_child_gets_its_memory_beyond_what_a_large_parent_already_maps():
    """A test worker that loaded torch and a model maps gigabytes before it forks; a fixed
    4 GiB cap failed the child's first import (CI, session 33). 5 GiB reserved, untouched."""
    reserved = mmap.mmap(-1, 5 << 30)
    try:
        status, answer = isolated(bytes, 64 << 20)
    finally:
        reserved.close()
    assert status == "ok" and len(answer) == 64 << 20


def test_the_verdicts_show_who_lets_a_negative_price_through():
    table = engine_verdicts(PRODUCT, engines=("fsmviz", "outlines-core", "llguidance"))
    by = {v.engine: v for v in table.verdicts}
    assert any("maximum crossed" in h for h in by["fsmviz"].invalid_accepted), by["fsmviz"]
    assert "maximum at /properties/price" in by["fsmviz"].ignored  # and fsmviz says so
    assert by["llguidance"].compiled and not by["llguidance"].invalid_accepted
    text = verdicts_text(table)
    assert "| fsmviz | yes (regex path) |" in text


def test_schema_engines_on_the_command_line(tmp_path):
    path = tmp_path / "product.json"
    path.write_text(json.dumps(PRODUCT))
    out, err = io.StringIO(), io.StringIO()
    assert engines_command(str(path), out=out, err=err) == 0
    assert "| engine | compiled |" in out.getvalue()
    (tmp_path / "bad.json").write_text('{"type": "strin"}')
    assert engines_command(str(tmp_path / "bad.json"), out=out, err=err) == 2
    assert "/type" in err.getvalue()
