"""``syntax._Reader`` reads a pattern by ``_TOKEN``, one regex match per token; these tests
hold the pieces that reading rests on to their plain definitions.

``tests/test_parse_fast.py`` compares the reader's trees with the full path's on the seed,
schema and test-file patterns and on fuzz. Here: the same comparison on the benchmarks'
patterns and the public schemas' regexes; the tokens cover the pattern, every character in
order (none skipped); a class read from its token has the set the full path's parser
gives it and the width ``_check_shape`` counts; a group met again is the tree read first
(and is not where its ``(`` could nest too deep); a repeat's count of ten digits or more is
checked against ``re``'s largest.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_parse_fast import (  # tests/ is on sys.path under pytest
    assert_same_as_full_path,
    strings_in_tests,
)

from fsmviz.automaton.syntax import (
    _TOKEN,
    MAX_NESTING,
    RegexError,
    _check_shape,
    _class_width,
    _Parser,
    _read_class,
    _Reader,
    _Unusual,
    parse,
    strip_anchors,
)
from fsmviz.schema.convert import SchemaError, regex_from_schema

ROOT = Path(__file__).resolve().parent.parent

# re.compile warns about "[[" (a possible nested set in future Pythons); not our business.
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


def bench_patterns() -> list[str]:
    """The patterns of the mask and index benchmarks and the shared seed cases."""
    from bench.index_bench import EVERYDAY
    from bench.mask_patterns import mask_patterns

    found = [p for p, _ in mask_patterns().values()] + [p for p, _ in EVERYDAY.values()]
    shared = ROOT.parent / "shared" / "cases" / "seed_regexes.json"
    if shared.exists():
        found += json.loads(shared.read_text())["regexes"].values()
    return found


def public_schema_regexes() -> list[str]:
    """The regexes of ``bench/schemas_public``'s schemas, where they convert (the recursive
    ones, whose regexes run to billions of characters, left out)."""
    out = []
    folders = ("small", "medium", "large", "ci", "external-ref")
    for path in sorted(
        p for f in folders for p in (ROOT / "bench" / "schemas_public" / f).rglob("*.json")
    ):
        with contextlib.suppress(SchemaError, RegexError, ValueError, RecursionError):
            out.append(regex_from_schema(json.loads(path.read_text())))
    return out


def test_the_benchmarks_patterns_read_as_the_full_path_reads_them() -> None:
    patterns = bench_patterns()
    taken = sum(assert_same_as_full_path(p) for p in patterns)
    assert taken >= len(patterns) - 3  # ``.*``-free common syntax nearly throughout


def test_the_public_schemas_regexes_read_as_the_full_path_reads_them() -> None:
    regexes = [r for r in public_schema_regexes() if len(r) <= 12_000]
    assert len(regexes) >= 15
    taken = sum(assert_same_as_full_path(r) for r in regexes)
    assert taken >= 12


def test_what_the_reader_takes_has_no_anchor_to_strip() -> None:
    """``parse`` returns a pattern the reader takes as it is: ``strip_anchors`` would
    change nothing (the reader leaves ``^``, ``$``, ``\\A``, ``\\Z`` to the full path)."""
    taken = 0
    for pattern in [*strings_in_tests(), *bench_patterns(), "a$", "^a", "\\Aa\\Z", "a\\$"]:
        try:
            _Reader(pattern).read()
        except _Unusual:
            continue
        assert strip_anchors(pattern) == pattern, pattern
        assert parse(pattern)[0] == pattern
        taken += 1
    assert taken >= 500


TEXT = st.text(alphabet="ab-^$|*+?.{},0123()[]\\:P<>xd\n١", max_size=16)


@settings(max_examples=500, derandomize=True, database=None)
@given(text=TEXT)
def test_the_tokens_cover_the_pattern_in_order(text: str) -> None:
    """Every character is in exactly one token, in order: a character no token matched
    would be skipped by ``finditer`` and the pattern read as if it were not there."""
    tokens = list(_TOKEN.finditer(text))
    assert "".join(t.group() for t in tokens) == text
    assert all(a.end() == b.start() for a, b in zip(tokens, tokens[1:], strict=False))


CLASS_TEXT = st.text(alphabet="ab-z^]\\dDwWn.x0F[é", min_size=1, max_size=8)


@settings(max_examples=600, derandomize=True, database=None)
@given(body=CLASS_TEXT)
def test_a_class_reads_as_the_full_path_and_the_shape_scan_read_it(body: str) -> None:
    """Where ``_read_class`` takes a class, its set is the one interegular's parser (with
    ``class_union``) reads, and its width the one ``_class_width`` counts."""
    text = "[" + body + "]"
    token = _TOKEN.match(text)
    if token is None or token[3] != text:  # not one class: the reader leaves it
        return
    try:
        group, width = _read_class(text, 10**9)
    except _Unusual:
        return
    assert _Parser(text).parse().simplify().options[0].parts[0] == group, text
    assert width == _class_width(text, 0, len(text) - 1), text


def test_a_class_past_the_width_left_is_not_read() -> None:
    with pytest.raises(_Unusual):
        _read_class("[a-z0-9]", 35)
    assert _read_class("[a-z0-9]", 36)[1] == 36


def test_a_group_met_again_is_the_tree_read_first() -> None:
    tree = _Reader("(a|b)x(a|b)y(a|b)").read()
    groups = [part for part in tree.options[0].parts if part.__class__.__name__ == "Pattern"]
    assert len(groups) == 3 and groups[0] is groups[1] is groups[2]
    nested = _Reader("((c)|d)e((c)|d)f").read().options[0].parts
    assert nested[0] is nested[2]


WIDE = "[\x00-\uffff]"  # 65,536 characters


@pytest.mark.parametrize(
    ("pattern", "passes"),
    [
        (("(" + WIDE * 2 + ")") * 3 + WIDE, True),  # 458,752 characters in all
        (("(" + WIDE * 2 + ")") * 3 + WIDE * 2, False),  # 524,288: past the limit
        (("(" + WIDE + ")") * 7 + "(" + WIDE + ")?", False),  # the last one repeated
    ],
)
def test_a_group_met_again_adds_its_classes_width(pattern: str, passes: bool) -> None:
    """The reader takes a pattern iff ``_check_shape`` passes it: a group met again (not
    read) counts its classes' width at every meeting, as the scan counts each class."""
    try:
        _check_shape(pattern)
        scanned = True
    except RegexError:
        scanned = False
    try:
        _Reader(pattern).read()
        took = True
    except _Unusual:
        took = False
    assert scanned == passes and took == passes


def test_a_group_met_again_too_deep_is_read_afresh_and_refused() -> None:
    """A group met again adds its depth as read: one that would nest past ``MAX_NESTING``
    is read afresh (where the reader then refuses it, as ``_check_shape`` does)."""
    inner = "(" * 5 + "a" + ")" * 5
    fits = inner + "(" * (MAX_NESTING - 5) + inner + ")" * (MAX_NESTING - 5)
    deep = inner + "(" * (MAX_NESTING - 4) + inner + ")" * (MAX_NESTING - 4)
    assert _Reader(fits).read() is not None
    with pytest.raises(_Unusual):
        _Reader(deep).read()


@pytest.mark.parametrize(
    ("pattern", "taken"),
    [
        ("a{999999999}", True),  # nine digits: below re's largest, never checked
        ("a{4294967294}", True),  # ten digits, checked: below it
        ("a{4294967295}", False),  # re's MAXREPEAT itself: refused
        ("a{1,4294967295}?", False),
        ("a{04294967295}", False),
        ("a{١}", False),  # not a repeat for re: the full path reads it
    ],
)
def test_long_repeat_counts_are_checked(pattern: str, taken: bool) -> None:
    try:
        _Reader(pattern).read()
        took = True
    except _Unusual:
        took = False
    assert took == taken, pattern


def test_a_repeat_count_of_re_s_largest_is_refused_by_parse() -> None:
    with pytest.raises(RegexError, match="too large|repetition"):
        parse("a{4294967295}")


EMPTY_RUNS = st.lists(
    st.sampled_from(["()", "(?:)", "()*", "(?:)?", "(){2}", "a", "(a)", "|", "(", ")", "[x]+"]),
    max_size=12,
).map("".join)


@settings(max_examples=400, derandomize=True, database=None)
@given(text=EMPTY_RUNS)
def test_runs_of_empty_groups_read_as_the_full_path_reads_them(text: str) -> None:
    """A run of ``()`` and ``(?:)`` is one token (``EMPTY_GROUP`` each); a quantifier
    after its last group repeats that group alone, as when each was read as a group."""
    assert_same_as_full_path(text)


def test_a_run_of_empty_groups_is_one_token_of_equal_groups() -> None:
    pattern = "a" + "()" * 31 + "(?:)()?"
    tokens = [t.lastindex for t in _TOKEN.finditer(pattern)]
    assert tokens == [6, 10, 12, 7]  # "a", 32 empty groups, then "(" and ")?" apart
    assert assert_same_as_full_path(pattern)
    assert assert_same_as_full_path("x" + "()" * 40)


def test_an_empty_group_too_deep_is_refused_as_the_shape_check_refuses_it() -> None:
    fits = "(" * (MAX_NESTING - 1) + "()" * 3 + ")" * (MAX_NESTING - 1)
    deep = "(" * MAX_NESTING + "()" + ")" * MAX_NESTING
    assert _Reader(fits).read() == _Parser(fits).parse().simplify()
    _check_shape(fits)
    with pytest.raises(_Unusual):
        _Reader(deep).read()
    with pytest.raises(RegexError):
        _check_shape(deep)
