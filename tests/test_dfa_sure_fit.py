"""``dfa._surely_fits``: the check a schema's path waits on counts the subset
construction's edges from the positions alone (an upper bound), so ``check_buildable``
can leave the subsets for later. The bound must never be below the edges the
construction makes (else a schema over the limits would take the regex path), and it
must be close enough that the bench schemas are told without their subsets. The same
holds of the count on a sketch (``dfa._sketch``: a counted repeat's copies walked as at
most three, each weighed by the copies it stands for), which tells a schema without its
whole walk."""

from dataclasses import replace
from pathlib import Path

import pytest
from caches import clear_pattern_caches
from hypothesis import given, settings
from hypothesis import strategies as st
from test_dfa import random_pattern

from fsmviz import compile_schema
from fsmviz.automaton import dfa as dfa_module
from fsmviz.automaton.dfa import (
    _accepting,
    _alphabet,
    _class_parts,
    _Clock,
    _sketch,
    _surely_fits,
    _targets,
    _Walked,
)
from fsmviz.automaton.syntax import Concatenation, Pattern, Repeated, parse

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
    "(a|b)*a(a|b){7}",  # the copies' sets of several: each copy's own (2^8 states)
    "[a-z]{0,5}[a-c]{0,5}x",  # sets of copies of two repeats: 36 pairs
    "[a-c]{1,8}[a-z](0|1|2|3|4|5)",  # each copy in a set of several of its own, with [a-z]
    '"([a-z]|%[0-9a-f]{2}){0,40}"',  # a repeat inside a repeat's copies
    '(("(a|b)"),){3,9}"(a|b)"',  # an enum in every copy: sets of several in each
    "(ab|ac){2,6}d",
    "(x[ab]{3,5}y){4}",
]


def _edges(walked: _Walked) -> int:
    return walked.subsets(_Clock.after(5.0, "building")).edges


def _never_below(pattern: str) -> None:
    """Told "fits within L" only where the construction makes at most L edges, by the
    whole walk's count or its sketch's."""
    walked = _Walked.of(pattern)
    sketch = _sketch(pattern)
    edges = _edges(walked)
    for limit in {0, edges // 2, edges - 1, edges, 2 * edges + 8}:
        if limit >= 0 and _surely_fits(walked, limit):
            assert edges <= limit, (pattern, limit, edges)
        if limit >= 0 and _surely_fits(sketch, limit, sketch.positions.weights):
            assert edges <= limit, (pattern, limit, edges, "sketch")


@pytest.mark.parametrize(
    "pattern", ['"([a-z]|%[0-9a-f]{2}){0,40}"', "(x[ab]{3,5}y){4}", "[0-9]{4}-[0-9]{2,8}"]
)
def test_a_sketch_stands_for_every_position_and_tells_the_exact_count(pattern):
    """Where no set of several holds a copy, the sketch's weighed count is the whole
    walk's: told at the construction's own edges (these patterns' bound is exact), not
    one below."""
    sketch, edges = _sketch(pattern), _edges(_Walked.of(pattern))
    assert sketch.positions.scaled  # walked as fewer copies than it has
    weights = sketch.positions.weights
    assert sum(weights) == len(_Walked.of(pattern).positions.sets)
    assert _surely_fits(sketch, edges, weights)
    assert not _surely_fits(sketch, edges - 1, weights)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_bound_is_never_below_the_construction_s_edges(pattern):
    _never_below(pattern)


ATOMS = ("a", "b", "[ab]", "[^a]", ".", '"', "[a-c]")
SUFFIXES = ("*", "+", "?", "{2}", "{0,3}", "{2,}", "{5}", "{1,5}", "{3,6}", "{0,7}")


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.data())
def test_the_bound_is_never_below_on_random_patterns(data):
    _never_below(random_pattern(data.draw, atoms=ATOMS, suffixes=SUFFIXES))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.integers(1, 63), min_size=1, max_size=8), st.integers(1, 255))
def test_the_targets_are_those_of_the_split_classes(classes_of, reachable):
    """``_targets`` groups the reachable positions by their classes and takes the groups
    whole where their classes are apart: the same targets as splitting the classes
    (``_class_parts``) and gathering each part's positions, one per part."""
    reachable &= (1 << len(classes_of)) - 1
    if not reachable:
        return
    accepts = [classes_of[p] for p in range(len(classes_of)) if reachable >> p & 1]
    accepted = 0
    for classes in accepts:
        accepted |= classes
    parts = _class_parts(accepted, accepts)
    split = sorted(_accepting(reachable, part & -part, classes_of) for part in parts)
    assert sorted(_targets(reachable, accepted, classes_of)) == split


def _unshared(node):
    """A copy of a parsed tree in which no group, concatenation or repeat is held twice."""
    kind = type(node)
    if kind is Pattern:
        options = tuple(_unshared(option) for option in node.options)
        return Pattern(options, node.added_flags, node.removed_flags)
    if kind is Concatenation:
        return Concatenation(tuple(_unshared(part) for part in node.parts))
    if kind is Repeated:
        return Repeated(_unshared(node.base), node.min, node.max)
    return node  # a class: walked afresh wherever it stands


SHARED = [
    "(ab|c)x(ab|c)",
    "(?i)(ab|c)(ab|c)",
    "((ab|c)?){6}(ab|c)",  # a sketch walks the repeat whole again: a group met before
    '"(x|y){0,9}"(x|y)"(x|y){0,9}"',
    "((-)?(0|[1-9][0-9]*))(\\.[0-9]+)?,((-)?(0|[1-9][0-9]*))",
]


@pytest.mark.parametrize(
    "pattern", SHARED + [p.read_text() for p in SCHEMAS[:2]], ids=lambda p: p[:24]
)
@pytest.mark.parametrize("kind", [dfa_module._Positions, dfa_module._Sketch])
def test_a_group_held_twice_walks_as_two_copies(pattern, kind):
    """``parse`` holds a group's tree once for each text (``_Positions._group`` walks it
    once, then shifts it): the walk is that of a tree in which no node is shared."""
    if pattern.startswith("{"):
        pattern = compile_schema(pattern).regex
    core, tree = parse(pattern)
    walks = []
    for node in (tree, _unshared(tree)):
        positions = kind(core, _Clock.after(5.0, "building"))
        result = positions.walk(node, 0)
        walks.append((result, positions.sets, positions.follow, positions.scaled))
    assert walks[0] == walks[1]


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.stem)
def test_schemas_are_told_without_their_subsets_and_the_bound_holds(path):
    clear_pattern_caches()
    compiled = compile_schema(path.read_text())
    assert compiled.path == "regex"
    _never_below(compiled.regex)
    walked = _Walked.of(compiled.regex)
    if _edges(walked) <= dfa_module.DEFER_EDGES // 2:  # well inside: surely told so
        assert _surely_fits(walked)
        told = dfa_module._TOLD.peek(compiled.regex)  # by its sketch, without a whole walk
        assert told or dfa_module._WALKED.peek(compiled.regex) is not None


def test_a_dfa_from_waiting_subsets_is_the_whole_build_s():
    clear_pattern_caches()
    regex = '\\{"status":("pending"|"paid"|"shipped"),"total":(0|[1-9][0-9]*)\\}'
    dfa_module.check_buildable(regex)
    assert dfa_module._WALKED.peek(regex) is not None  # no counted repeat: walked whole
    later = dfa_module.compile_regex(regex)
    whole = dfa_module._compile(regex)
    assert (later.num_states, later.accepting, later.moves, later.classes) == (
        whole.num_states, whole.accepting, whole.moves, whole.classes,
    )  # fmt: skip


CLASSY = [  # sets that overlap, negated ones, a set no other lists, case folding, dots
    "[ab]c[^b]",
    "(?i)[a-z\u00e9]{2,9}x",
    "[^a][^b]{5,9}[ab]",
    ".{0,6}\\.[^.]{5}",
    "([a-c]|[b-d]|[^c]){5,7}c",
    "[\\s\\S]{5}[^\\s\\S]?z",
    "(x|[^y]){6}(y|[^x])",
]


def _threshold(walked, weights) -> int | None:
    """The least limit ``_surely_fits`` tells (it holds for every limit past it), or None."""
    low, high = 0, 50_000
    if not _surely_fits(walked, high, weights):
        return None
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if _surely_fits(walked, middle, weights) else (middle + 1, high)
    return low


def _told_alike(pattern: str) -> None:
    """A sketch's count on its sharing classes (``dfa._sharing_classes``) is its count on
    the alphabet's classes: the same least limit told, or none."""
    sketch = _sketch(pattern)
    if sketch is None:
        return
    by_alphabet = replace(sketch, position_classes=_alphabet(sketch.positions)[2])
    weights = sketch.positions.weights
    assert _threshold(sketch, weights) == _threshold(by_alphabet, weights), pattern


@pytest.mark.parametrize("pattern", PATTERNS + SHARED + CLASSY)
def test_the_sketch_s_sharing_classes_count_as_the_alphabet_s(pattern):
    _told_alike(pattern)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.data())
def test_the_sketch_s_sharing_classes_count_alike_on_random_patterns(data):
    atoms = (*ATOMS, "[^b]", "[b-d]", "[^ac]", "(?i:A)")
    _told_alike(random_pattern(data.draw, atoms=atoms, suffixes=SUFFIXES))


@pytest.mark.parametrize("path", SCHEMAS[:3], ids=lambda p: p.stem)
def test_a_schema_s_sketch_counts_alike_on_its_sharing_classes(path):
    _told_alike(compile_schema(path.read_text()).regex)
