"""``schema.mend``: the two outlines-core bugs mended in its regex, and the shortcuts that
keep the mending cheap (``group_any_values`` builds the regex of ``{}`` only for a regex
long enough to hold it; ``_needs_escape`` asks json's C encoder)."""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsmviz.schema.convert import WHITESPACE, regex_from_schema
from fsmviz.schema.mend import ANY_VALUE_SHORTEST, _needs_escape, any_value

PATTERNS = [None, *WHITESPACE.values()]


@pytest.mark.parametrize("whitespace", PATTERNS)
def test_no_regex_of_the_empty_schema_is_shorter_than_the_shortcut_assumes(whitespace):
    assert len(any_value(whitespace)) >= ANY_VALUE_SHORTEST


@pytest.mark.parametrize("name", [None, *WHITESPACE])
def test_an_empty_schema_under_a_key_is_grouped(name):
    schema = {"type": "object", "properties": {"a": {}, "b": {"type": "integer"}},
              "required": ["a", "b"]}  # fmt: skip
    regex = regex_from_schema(schema, name)
    assert f"({any_value(None if name is None else WHITESPACE[name])})" in regex
    assert re.fullmatch(regex, '{"a":[1],"b":2}')
    assert not re.fullmatch(regex, '{"a":1,"b":"x"}')


@settings(max_examples=300, derandomize=True, database=None)
@given(st.text())
def test_a_name_needs_escaping_where_json_escapes_it(name):
    assert _needs_escape(name) == (json.dumps(name, ensure_ascii=False)[1:-1] != name)
