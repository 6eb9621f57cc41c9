"""A schema's first allowed set waits for no minimal DFA: ``compile_schema`` checks that the
DFA can be built (``dfa.check_buildable``) and ``compile_regex`` minimises the kept subsets
when first asked, into the same DFA as a whole build, choosing the same paths."""

import json
from pathlib import Path
from unittest import mock

import pytest
from caches import clear_pattern_caches

from fsmviz import compile_schema
from fsmviz.automaton import dfa as dfa_module
from fsmviz.automaton.syntax import RegexError

ORDER = json.loads((Path(__file__).parent / "cases" / "schema_22_fields.json").read_text())


def test_compile_schema_does_not_minimise_and_the_dfa_is_the_whole_build_s():
    clear_pattern_caches()
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
    clear_pattern_caches()
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


def test_compile_schema_leaves_the_locations_until_read_and_they_are_locate_s():
    """Finding the spans builds every subschema's regex again: ``compile_schema`` hands over
    a ``find`` and the spans are found when first read, the same as ``locate``'s."""
    from fsmviz.schema import convert

    clear_pattern_caches()
    with mock.patch.object(convert, "_spans", side_effect=AssertionError("located")):
        compiled = compile_schema(ORDER)
    eager = convert.locate(ORDER, compiled.regex)
    assert compiled.locations == eager and len(eager.spans) > 22
    start, end, where = eager.spans[-1]  # an innermost part
    assert where and compiled.locations.pointer_at((start, end)) == where


@pytest.mark.slow
def test_a_schema_run_parses_its_regex_once(tiny):
    """Schema text to a finished run, caches cleared: its size, its DFA check, its first set
    by derivatives and its index read one parse (``syntax.parse`` keeps it, bounded)."""
    from collections import Counter

    from fsmviz import stream
    from fsmviz.automaton import syntax

    clear_pattern_caches()
    parsed: Counter[str] = Counter()
    real = syntax._Reader  # the first step of every parse that is not kept

    def counted(pattern: str) -> object:
        parsed[pattern] += 1
        return real(pattern)

    with mock.patch.object(syntax, "_Reader", side_effect=counted):
        compiled = compile_schema(ORDER)
        steps = list(stream(tiny, compiled.regex, "JSON:", max_tokens=4))
    assert steps and compiled.path == "regex"
    assert parsed[compiled.regex] == 1, parsed.most_common(3)


BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize(
    "name",
    ["schema22.json", "schemas/api-payload/order.json", "schemas/api-payload/invoice.json",
     "schemas/function-calling/create_issue.json"],
)  # fmt: skip
def test_a_schema_s_first_set_is_the_whole_index_s_bit_for_bit(name, bundled_vocab):
    """Schema text -> first allowed set (the DFA's subsets wait, the set is found by
    derivatives), equal to the first row of the index built whole from the DFA. A field
    of its own makes the regex new to every cache, the vocabulary's trie kept."""
    import numpy as np

    from fsmviz import build_index, first_allowed_tokens

    schema = json.loads((BENCH / name).read_text())
    schema["properties"]["first_set_test"] = {"type": "boolean"}
    schema["required"] = [*schema.get("required", []), "first_set_test"]
    compiled = compile_schema(schema)
    assert compiled.path == "regex" and dfa_module._COMPILED.peek(compiled.regex) is None
    first = first_allowed_tokens(compiled.regex, bundled_vocab)
    for kept in (dfa_module._COMPILED, dfa_module._BUILT, dfa_module._WALKED):
        kept.clear()  # the index's DFA built whole, from the pattern
    index = build_index(compiled.regex, bundled_vocab)
    whole = index.allowed_tokens(index.initial_state)
    assert first.dtype == whole.dtype and np.array_equal(first, whole) and len(first)
