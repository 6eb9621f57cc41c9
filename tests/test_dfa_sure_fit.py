"""``dfa._surely_fits``: the check a schema's path waits on counts the subset
construction's edges from the positions alone (an upper bound), so ``check_buildable``
can leave the subsets for later. The bound must never be below the edges the
construction makes (else a schema over the limits would take the regex path), and it
must be close enough that the bench schemas are told without their subsets."""

import json
from pathlib import Path

import pytest
from caches import clear_pattern_caches
from hypothesis import given, settings
from hypothesis import strategies as st
from test_dfa import random_pattern

from fsmviz import compile_schema
from fsmviz.automaton import dfa as dfa_module
from fsmviz.automaton.dfa import _Clock, _surely_fits, _Walked

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = [  # regex-path bench schemas: enums, optional fields, arrays, nested objects
    ROOT / "bench" / "schema22.json",
    ROOT / "bench" / "schemas" / "api-payload" / "order.json",
    ROOT / "bench" / "schemas" / "api-payload" / "invoice.json",
    ROOT / "bench" / "schemas" / "api-payload" / "user_profile.json",
    ROOT / "bench" / "schemas" / "function-calling" / "create_issue.json",
]
PATTERNS = [
    "(a|b)*a(a|b){6}",  # ambiguous: 2^7 states
    "(ab|a)b?c",  # two parses that merge
    "[a-c]*[b-d]*[c-e]*",
    "(x|xy|xyz){3}",
    "(?i)(ab|aB){2}c",
    "(a?){30}",  # quadratic follow links
    '"(pending|paid|shipped)"',
    "[^x]*:[^x]*",
    "(.{0,5}x){2}",
    "a[^\\s\\S]b|c",  # a position that accepts nothing
    "",
]


def _edges(walked: _Walked) -> int:
    return walked.subsets(_Clock.after(5.0, "building")).edges


def _never_below(pattern: str) -> None:
    """Told "fits within L" only where the construction makes at most L edges."""
    walked = _Walked.of(pattern)
    edges = _edges(walked)
    for limit in {0, edges // 2, edges - 1, edges, 2 * edges + 8}:
        if limit >= 0 and _surely_fits(walked, limit):
            assert edges <= limit, (pattern, limit, edges)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_bound_is_never_below_the_construction_s_edges(pattern):
    _never_below(pattern)


ATOMS = ("a", "b", "[ab]", "[^a]", ".", '"', "[a-c]")
SUFFIXES = ("*", "+", "?", "{2}", "{0,3}", "{2,}")


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.data())
def test_the_bound_is_never_below_on_random_patterns(data):
    _never_below(random_pattern(data.draw, atoms=ATOMS, suffixes=SUFFIXES))


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.stem)
def test_schemas_are_told_without_their_subsets_and_the_bound_holds(path):
    clear_pattern_caches()
    compiled = compile_schema(path.read_text())
    assert compiled.path == "regex"
    _never_below(compiled.regex)
    walked = _Walked.of(compiled.regex)
    if _edges(walked) <= dfa_module.DEFER_EDGES // 2:  # well inside: surely told so
        assert _surely_fits(walked)
        assert dfa_module._WALKED.peek(compiled.regex) is not None


def test_a_dfa_from_waiting_subsets_is_the_whole_build_s():
    clear_pattern_caches()
    compiled = compile_schema(json.loads(SCHEMAS[0].read_text()))
    assert dfa_module._WALKED.peek(compiled.regex) is not None  # the subsets waited
    later = dfa_module.compile_regex(compiled.regex)
    whole = dfa_module._compile(compiled.regex)
    assert (later.num_states, later.accepting, later.moves, later.classes) == (
        whole.num_states, whole.accepting, whole.moves, whole.classes,
    )  # fmt: skip
