"""Character classes, octal escapes, anchors and warnings, judged against Python's ``re``.

fsmviz gives ``\\d \\w \\s`` their ASCII meaning, so the reference is ``re`` with
``re.ASCII``, asked to ``fullmatch`` one character (or a short text) at a time.
"""

from __future__ import annotations

import itertools
import re
import warnings

import interegular
import pytest
from interegular import patterns as interegular_patterns

from fsmviz import RegexError, compile_regex
from fsmviz.automaton.syntax import CharGroup, class_union

SHORTHANDS = ["\\d", "\\D", "\\w", "\\W", "\\s", "\\S"]
EXTRAS = ["", "a-f", "0-4", "_", "\\x00-\\x1f"]
# Every ASCII character and some that tell ASCII and Unicode classes apart: a non-breaking
# space, an Arabic-Indic digit, an accented letter, a line separator, CJK, an emoji.
CHARACTERS = [chr(c) for c in range(128)] + ["\u00a0", "\u0663", "é", "\u2028", "日", "😀"]


def _class_patterns() -> list[str]:
    out = []
    for size in range(1, len(SHORTHANDS) + 1):
        for combo in itertools.combinations(SHORTHANDS, size):
            for extra in EXTRAS:
                body = "".join(combo) + extra
                out += [f"[{body}]", f"[^{body}]"]
    return out


CLASS_PATTERNS = _class_patterns()


def _disagreements(pattern: str, texts: list[str]) -> list[str]:
    dfa = compile_regex(pattern)
    python = re.compile(pattern, re.ASCII)
    return [t for t in texts if dfa.accepts(t) != (python.fullmatch(t) is not None)]


def test_every_combination_of_shorthands_ranges_and_negation_matches_python() -> None:
    assert len(CLASS_PATTERNS) == 630
    wrong = {p: d for p in CLASS_PATTERNS if (d := _disagreements(p, CHARACTERS))}
    assert not wrong, {p: d[:5] for p, d in list(wrong.items())[:5]}


@pytest.mark.parametrize(
    ("pattern", "accepted", "refused"),
    [
        ("[\\W\\D]", "a_ é", "0"),  # was: refused "a" (interegular's union of negations)
        ("[^\\S\\D]", "", "0 a"),  # was: accepted "0"; Python: matches nothing
        ("[\\W\\d]", "0 é", "a_"),
        ("[^\\W\\d]", "a_", "0 é"),
    ],
)
def test_negated_shorthands_in_one_class(pattern: str, accepted: str, refused: str) -> None:
    dfa = compile_regex(pattern)
    assert all(dfa.accepts(c) for c in accepted), pattern
    assert not any(dfa.accepts(c) for c in refused), pattern


def test_class_union_keeps_what_every_negated_item_refuses() -> None:
    not_ab, not_bc = CharGroup(frozenset("ab"), True), CharGroup(frozenset("bc"), True)
    union = class_union([not_ab, not_bc], negate=False)
    assert union == CharGroup(frozenset("b"), True)
    assert class_union([not_ab, CharGroup(frozenset("b"), False)], negate=True) == CharGroup(
        frozenset("a"), False
    )


@pytest.mark.parametrize(
    ("pattern", "texts"),
    [
        ("[\\0a]", ["\x00", "a", "0", "\x00a"]),
        ("[\\0-\\x1f]+", ["\x00\x1f", "\x10", " "]),
        ("[\\12\\101]", ["\n", "A", "1"]),
        ("[\\135x]", ["]", "x", "\\"]),  # \135 is "]": a character, not the class's end
        ("[\\055a]", ["-", "a", "b"]),  # \055 is "-": no range
        ("\\0\\101", ["\x00A", "\x00"]),
        ("[^\\0]", ["\x00", "a"]),
    ],
)
def test_octal_escapes_mean_what_python_says(pattern: str, texts: list[str]) -> None:
    assert not _disagreements(pattern, texts), pattern


ANCHORED = [
    "(?i)^abc$",
    "^abc$",
    "(a|$)",
    "a|^b",
    "^a|b$",
    "(?:x|^y)z?",
    "(?P<n>^a|b)c",
    "\\Aa\\Z",
    "(a|\\Z)",
    "((a|$))",
    "(?s)^.$",
    "(?m)^a$",
    "x(y|$)",
]
TEXTS = ["", "a", "b", "ab", "abc", "ABC", "Abc", "x", "y", "yz", "xy", "xz", "bc", "ac", "\n"]


@pytest.mark.parametrize("pattern", ANCHORED)
def test_regular_anchors_mean_what_fullmatch_gives(pattern: str) -> None:
    assert not _disagreements(pattern, TEXTS), pattern


@pytest.mark.parametrize(
    ("pattern", "position"),
    [("a^b", 1), ("(^a)*", 1), ("b(x|^a)", 4), ("(a$)+", 2), ("a$b", 1), ("^^", 1), ("$^", 0)],
)
def test_anchors_that_are_not_regular_are_refused_with_their_position(
    pattern: str, position: int
) -> None:
    with pytest.raises(RegexError) as caught:
        compile_regex(pattern)
    assert caught.value.position == position, caught.value
    assert caught.value.hint


def test_warnings_from_re_stay_off_stderr() -> None:
    re.purge()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dfa = compile_regex("[-a-zA-Z+--]+")
    assert not caught, [str(w.message) for w in caught]
    assert dfa.accepts("a-b+")


def test_interegular_0_3_3_behaviour_fsmviz_relies_on() -> None:
    """fsmviz reaches into interegular's private syntax tree (see
    ``fsmviz.automaton.syntax``). These are the facts it relies on; when one fails, read the
    new release before adjusting."""
    groups = interegular_patterns._CHAR_GROUPS
    assert groups["d"] == CharGroup(frozenset("0123456789"), False)
    assert groups["s"] == CharGroup(frozenset(" \t\n\r\f\v"), False)
    assert groups["W"].negated and len(groups["W"].chars) == 63  # ASCII \w, negated
    assert callable(interegular_patterns._ParsePattern.chargroup_inner)
    # The bug fsmviz works around: the union of negated items' characters. When this
    # assertion fails, interegular has fixed it and ``class_union`` may go.
    tree = interegular.parse_pattern("[\\W\\D]")
    group = tree.options[0].parts[0]
    assert group.negated and "a" in group.chars and "0" in group.chars
