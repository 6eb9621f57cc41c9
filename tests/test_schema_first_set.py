"""A schema's first allowed set waits for no minimal DFA: ``compile_schema`` checks that the
DFA can be built (``dfa.check_buildable``) and ``compile_regex`` minimises the kept subsets
when first asked, into the same DFA as a whole build, choosing the same paths."""

import json
from pathlib import Path
from unittest import mock

import pytest

from fsmviz import compile_schema
from fsmviz.automaton import dfa as dfa_module
from fsmviz.automaton.syntax import RegexError
from fsmviz.cache import clear_caches

ORDER = json.loads((Path(__file__).parent / "cases" / "schema_22_fields.json").read_text())


def test_compile_schema_does_not_minimise_and_the_dfa_is_the_whole_build_s():
    clear_caches()
    with mock.patch.object(dfa_module, "_minimise", side_effect=AssertionError("minimised")):
        compiled = compile_schema(ORDER)
    assert compiled.path == "regex"
    later = dfa_module.compile_regex(compiled.regex)  # from the kept subsets
    whole = dfa_module._compile(compiled.regex)  # built again from the pattern
    assert (later.num_states, later.accepting, later.moves, later.classes) == (
        whole.num_states, whole.accepting, whole.moves, whole.classes,
    )  # fmt: skip


def test_a_dfa_over_its_states_is_refused_by_the_check_as_by_compile_regex():
    pattern = "(a|b)*a(a|b){20}"
    clear_caches()
    with pytest.raises(RegexError) as checked:
        dfa_module.check_buildable(pattern)
    with pytest.raises(RegexError) as compiled:
        dfa_module.compile_regex(pattern)
    assert checked.value.message == compiled.value.message
    schema = {"type": "object", "properties": {"id": {"type": "string", "pattern": pattern}}}
    assert compile_schema(schema).path == "grammar"
    assert "automaton cannot hold it" in compile_schema(schema).reason
    with pytest.raises(Exception, match="too large"):
        compile_schema(schema, path="regex")
