"""``syntax._Reader``, the fast path of ``parse``, against the full path.

``parse`` reads the common syntax with ``_Reader`` and leaves everything else to
``_parse_full`` (``re``, ``_normalize``, interegular). The fast path is only correct if,
for every pattern it reads to the end, the full path would have accepted the pattern too
and returned the very same anchors-stripped pattern and the very same tree (interegular's
node classes compare by value). These tests check that claim on every pattern we have:
the seed regexes, the regexes of outlines-core's test schemas and of the 22-field schema,
every string written in the test files (patterns good and bad), and fuzzed patterns
around the reader's syntax; and that the reader does take the common patterns.
"""

from __future__ import annotations

import ast
import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsmviz.automaton.dfa import _expanded_size
from fsmviz.automaton.syntax import (
    MAX_NESTING,
    RegexError,
    _check_shape,
    _class_close,
    _parse_full,
    _Reader,
    _Unusual,
    parse,
    read_classes,
    strip_anchors,
)
from fsmviz.schema.convert import SchemaError, regex_from_schema
from fsmviz.tokens.fast.regex_terms import Unsure, _survey

TESTS = Path(__file__).resolve().parent
CASES = TESTS / "cases"

# re.compile warns about "[[" (a possible nested set in future Pythons); not our business.
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


def read_fast(pattern: str) -> tuple[str, object] | None:
    """What the fast path returns, or None when it leaves the pattern to the full path.
    The fast path runs no ``_check_shape``: what it takes must pass that scan (else the
    ``RegexError`` fails the test). The positions the reader counted are those a walk of
    its tree counts (``dfa._expanded_size``: ``parse`` keeps the count for the DFA's
    limits)."""
    reader = _Reader(pattern)
    try:
        fast = strip_anchors(pattern), reader.read()
    except _Unusual:
        return None
    _check_shape(pattern)
    assert reader.size == _expanded_size(fast[1]), pattern
    return fast


def assert_same_as_full_path(pattern: str) -> bool:
    """Whether the reader took ``pattern``; if it did, the full path agrees exactly."""
    fast = read_fast(pattern)
    if fast is None:
        return False
    assert _parse_full(pattern) == fast, pattern
    return True


def seed_regexes() -> list[str]:
    return list(json.loads((CASES / "seed_regexes.json").read_text())["regexes"].values())


def schema_regexes() -> list[str]:
    schemas = json.loads((CASES / "outlines_core_schemas.json").read_text())["schemas"]
    schemas.append(json.loads((CASES / "schema_22_fields.json").read_text()))
    out = []
    for schema in schemas:
        for whitespace in (None, "none"):
            with contextlib.suppress(SchemaError):  # a few use what the converter refuses
                out.append(regex_from_schema(schema, whitespace))
    return out


def strings_in_tests() -> list[str]:
    """Every string constant in the test files: patterns that compile, that are refused,
    texts; the reader must agree with the full path on each it takes."""
    found: set[str] = set()
    for path in sorted(TESTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.add(node.value)
    return sorted(s for s in found if len(s) <= 2_000)


def test_the_common_patterns_take_the_fast_path() -> None:
    for pattern in [*seed_regexes(), *schema_regexes()]:
        assert assert_same_as_full_path(pattern), pattern


def test_schema_regexes_are_many() -> None:
    assert len(schema_regexes()) >= 100


def test_every_string_in_the_tests_reads_the_same() -> None:
    taken = sum(assert_same_as_full_path(s) for s in strings_in_tests())
    assert taken >= 500  # plenty of them are plain patterns


@pytest.mark.parametrize(
    "pattern",
    [
        "(?P<a>x)(?P<a>y)",  # re: a group name used twice
        "((?P<a>x))bc((?P<a>x))bc",  # the same, in a group read twice
        "[\\d-z]",  # re: a range from a set
        "[z-a]",
        "a{3,2}",
        "a**",
        "*a",
        "a|*",
        "(a",
        "a)",
        "[a",
        "\\",
        "\\q",
        "\\é",  # re: the letter itself; interegular cannot read it
        "\\x4",
        "a{4294967295}",
        "a*+",
        "[]a]",
        "a{",
        "^a$",
        "(?i)a",
        "\\1",
        "\\0",
    ],
)
def test_what_the_reader_leaves_to_the_full_path(pattern: str) -> None:
    assert read_fast(pattern) is None


def test_the_reader_s_classes_are_the_tree_s_in_walk_order() -> None:
    """``read_classes``: the classes ``_Reader`` noted as it read are those a walk of the
    tree meets (``regex_terms._survey``), in its order; None for the full path's trees."""
    taken = 0
    patterns = [*seed_regexes(), *schema_regexes(), *strings_in_tests(), "a.b\\.\\d[.]"]
    for pattern in patterns:
        try:
            core, tree, keys = read_classes(pattern)
        except RegexError:
            continue
        if keys is None:
            continue
        walked: dict = {}
        with contextlib.suppress(Unsure):
            _survey(tree, walked)
        assert keys == tuple(walked), pattern
        taken += 1
    assert taken > 300


WIDE = "[\x00-\uffff]"  # 65,536 characters: 7 of them pass _check_shape, 8 do not


@pytest.mark.parametrize(
    "pattern",
    [
        "(" * MAX_NESTING + "a" + ")" * MAX_NESTING,
        "(" * (MAX_NESTING + 1) + "a" + ")" * (MAX_NESTING + 1),
        "(?:" * (MAX_NESTING + 1) + "a" + ")" * (MAX_NESTING + 1),
        "(a)" * (MAX_NESTING + 10),
        "(" * MAX_NESTING + "a" + ")" * MAX_NESTING + "(b)",
        WIDE * 7,
        WIDE * 8,
        WIDE * 7 + "[ab]",
        (WIDE + "?") * 7,
        (WIDE + "?") * 8,  # a quantified class read again adds its width again
        "(" + WIDE * 4 + ")" + "[\x00-\uffffa]" * 4,
        ("(" + WIDE * 4 + ")") * 2,  # a group read again adds its width again
        "(((((a)))))b" + "(" * 45 + "(((((a)))))b" + ")" * 45,  # a group read again, deeper
        "(((((a)))))b" + "(" * 46 + "(((((a)))))b" + ")" * 46,
    ],
)
def test_the_reader_keeps_the_shape_scan_s_counts(pattern: str) -> None:
    """``parse`` runs ``_check_shape`` only where ``_Reader`` leaves the pattern: the reader
    counts depth and width as the scan does and takes a pattern only where it passes."""
    try:
        _check_shape(pattern)
        passes = True
    except RegexError:
        passes = False
    try:
        _Reader(pattern).read()
        took = True
    except _Unusual:
        took = False
    assert took == passes, (pattern[:40], passes)


# Pieces of the reader's syntax, a few pieces beyond it, and characters that are special
# in one place and plain in another.
PIECES = [
    *"ab0-,]}^$|*+?.{()[\\ é日",
    *["\\d", "\\W", "\\s", "\\n", "\\t", "\\b", "\\.", "\\-", "\\]", "\\\\", "\\x41", "\\x4"],
    *["\\q", "\\é", "\\1", "\\0", "\\u00e9", "\\A", "\\Z", "\\_", "\\ "],
    *["[", "[^", "]", "a-z", "\\d-z", "z-a", "!--", "a-\\]", "\\x00-\\x1f", "-]", "[]"],
    *["(", "(?:", "(?P<n>", "(?P<m>", "(?P<1>", "(?i)", "(?=", "(?#", ")"],
    *["*", "+", "?", "*?", "{2}", "{1,3}", "{,2}", "{2,}", "{,}", "{}", "{3,2}", "{99999}"],
]
near_syntax = st.lists(st.sampled_from(PIECES), max_size=20).map("".join)

ITEMS = ["a", "b", "é", ".", "\\d", "\\W", "\\.", "[a-c]", '[^\\n"]', "[\\w-]", "[-a]", "[!--]"]
REPEATS = ["", "", "*", "+", "?", "??", "{2}", "{0,3}", "{,1}", "{1,}", "{0}"]
readable = st.recursive(
    st.tuples(st.sampled_from(ITEMS), st.sampled_from(REPEATS)).map("".join),
    lambda node: st.one_of(
        st.lists(node, min_size=2, max_size=3).map("".join),
        st.lists(node, min_size=1, max_size=3).map("|".join),
        st.tuples(
            st.sampled_from(["({})", "(?:{})", "(({}))"]), node, st.sampled_from(REPEATS)
        ).map(lambda t: t[0].format(t[1]) + t[2]),
    ),
    max_leaves=12,
)


@settings(max_examples=600, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(pattern=st.one_of(near_syntax, readable))
def test_fuzzed_patterns_read_the_same(pattern: str) -> None:
    assert_same_as_full_path(pattern)


@settings(max_examples=200, derandomize=True, database=None)
@given(pattern=readable)
def test_readable_patterns_take_the_fast_path(pattern: str) -> None:
    assert assert_same_as_full_path(pattern)


@pytest.mark.parametrize("pattern", ["a{" + "9" * 5000 + "}", "a{1," + "9" * 5000 + "}"])
def test_a_repeat_count_longer_than_int_reads_is_refused(pattern: str) -> None:
    # int() refuses more than 4,300 digits: re let that ValueError out, and so did parse
    with pytest.raises(RegexError, match="repetition number is too large") as caught:
        parse(pattern)
    assert caught.value.position == 1


def _plain_class_close(pattern: str, start: int) -> int | None:
    """``_class_close`` as the character-by-character scan it was."""
    i = start + 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
        elif pattern[i] == "]":
            return i
        else:
            i += 1
    return None


@settings(max_examples=400, deadline=None, derandomize=True)
@given(text=st.text(alphabet="[]^\\a-\né", max_size=12))
def test_a_class_ends_where_the_plain_scan_ends_it(text: str) -> None:
    """The class's end found in one regex match (``_CLASS_BODY``) is the scan's, from every
    start: a ``]`` or ``^]`` first, escapes, a backslash at the end, no ``]`` at all."""
    for start in range(len(text) + 1):
        assert _class_close(text, start) == _plain_class_close(text, start)
