"""``limits.check_shape``: the bounds are told by a walk without paths (``_within_shape``)
and the refusal located by the walk with them (``_refuse_shape``); both must agree on
every document, above all at each bound and one past it."""

import json

import pytest

from fsmviz.schema.document import SchemaError
from fsmviz.schema.limits import (
    MAX_DEPTH,
    MAX_PROPERTIES,
    MAX_SUBSCHEMAS,
    _refuse_shape,
    _within_shape,
    check_shape,
    check_text,
    text_within_shape,
)
from fsmviz.schema.load import _json_value


def _nested(depth: int, leaf: object) -> object:
    """``leaf`` at ``depth`` containers down, lists and dicts in turn."""
    node = leaf
    for i in range(depth):
        node = [node] if i % 2 else {"a": node}
    return node


CASES = [
    *(
        _nested(d, leaf)
        for d in (MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1)
        for leaf in (1, "x", None, [], {}, [1], {"b": True})
    ),
    {"properties": {f"p{i}": {} for i in range(MAX_PROPERTIES)}},
    {"properties": {f"p{i}": {} for i in range(MAX_PROPERTIES + 1)}},
    [{} for _ in range(MAX_SUBSCHEMAS)],
    [{} for _ in range(MAX_SUBSCHEMAS + 1)],
    {"anyOf": [{"x": [1, 2.5, {"y": None}]}] * 3},
]


@pytest.mark.parametrize("document", CASES, ids=range(len(CASES)))
def test_the_quick_walk_agrees_with_the_located_refusal(document):
    try:
        _refuse_shape(document)
        refused = False
    except SchemaError:
        refused = True
    assert _within_shape(document) == (not refused)
    if refused:
        with pytest.raises(SchemaError):
            check_shape(document)
    else:
        check_shape(document)


@pytest.mark.parametrize("document", CASES, ids=range(len(CASES)))
def test_schema_text_is_refused_as_its_document_is(document):
    """``load_schema`` walks a text's document for ``check_shape`` only where
    ``text_within_shape`` cannot tell it passes (``check_text`` took it): the walk's
    verdict either way."""
    text = json.dumps(document)
    try:
        check_text(text)
    except SchemaError:
        return  # refused before it is read
    if text_within_shape(text):
        assert _within_shape(document)
    if _within_shape(document):
        _json_value(text)
    else:
        with pytest.raises(SchemaError):
            _json_value(text)


@pytest.mark.parametrize("opened", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
@pytest.mark.parametrize("inner", ["", '"[{"', '{"a": 1}'])
def test_text_as_deep_as_the_limit_is_read_one_deeper_is_refused(opened, inner):
    """``check_text`` skips its scan where the text holds at most ``MAX_DEPTH`` opening
    brackets (strings too): the scan's verdict either way."""
    text = "[" * opened + inner + "]" * opened
    deepest = opened + (inner == '{"a": 1}')
    if deepest > MAX_DEPTH:
        with pytest.raises(SchemaError, match="nested too deeply"):
            check_text(text)
    else:
        check_text(text)
