"""The character DFA and its byte view, held against `regex` and against interegular."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import interegular
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from fsmviz import RegexError, compile_regex
from fsmviz.automaton import dfa as dfa_module
from fsmviz.automaton.bytedfa import to_bytes
from fsmviz.automaton.dfa import (
    _Clock,
    _Construction,
    _hopcroft,
    _merged_bottom_up,
    _minimise,
    _prune_dead,
    _renumbered,
    count_positions,
    set_bits,
)
from fsmviz.schema.convert import regex_from_schema

ALPHABET = ["a", "b", "0", "7", ".", "@", '"', " ", "\n", "é", "日", "本", "😀", "\x04", "Z"]


def fullmatch(pattern: str, text: str) -> bool:
    return regex.fullmatch(pattern, text, flags=regex.ASCII) is not None


def test_seed_dfas_are_minimal_like_interegulars(seed_cases):
    """Same language, same number of states as interegular's own reduced FSM."""
    for name, pattern in seed_cases["regexes"].items():
        ours = compile_regex(pattern)
        theirs = interegular.parse_pattern(pattern).to_fsm().reduce()
        assert ours.num_states == len(theirs.states), name
        assert len(ours.accepting) == len(theirs.finals), name


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.data())
def test_dfa_and_byte_dfa_agree_with_regex(seed_cases, data):
    patterns = [*seed_cases["regexes"].values(), "(日本|東京)[0-9]{2}", "(😀|🎉)+", "[^\"]+",
                ".{2,3}", "(?i)ab|c", "[一-龥]+x?", "a|ab", "\\x04?b"]  # fmt: skip
    pattern = data.draw(st.sampled_from(patterns))
    dfa = compile_regex(pattern)
    byte_dfa = to_bytes(dfa)
    for _ in range(40):
        text = data.draw(st.text(alphabet=st.sampled_from([*ALPHABET, "1", "-"]), max_size=8))
        expected = fullmatch(pattern, text)
        assert dfa.accepts(text) == expected, (pattern, text)
        state = byte_dfa.run(text.encode())
        assert (state is not None and bool(byte_dfa.accepting[state])) == expected, (pattern, text)


def test_invalid_utf8_never_gets_through():
    byte_dfa = to_bytes(compile_regex("(?s).+"))
    for bad in [b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
                b"\xf5\x80\x80\x80", b"\xff", b"\x80", b"\xe6\x97"]:  # fmt: skip
        state = byte_dfa.run(bad)
        assert state is None or not byte_dfa.accepting[state], bad
    for good in ["\x00", "\x7f", "\u0080", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff",
                 "\U00010000", "\U0010ffff"]:  # fmt: skip
        state = byte_dfa.run(good.encode())
        assert state is not None and byte_dfa.accepting[state], repr(good)


def test_labels_are_readable():
    labels = {e.label for e in compile_regex(r"[0-9]+\.[0-9]+").edges()}
    assert labels == {"0-9", "."}
    assert {e.label for e in compile_regex('"[^"]+"').edges()} == {'"', 'not "'}
    assert {e.label for e in compile_regex("a.b").edges()} == {"a", "not \\n", "b"}
    assert {e.label for e in compile_regex("[ \\t]x").edges()} == {"\\t ␣", "x"}
    assert "\\x04" in {e.label for e in compile_regex("\\x04").edges()}


def test_anchors_at_the_ends_are_dropped():
    for pattern in ["^[0-9]+$", "\\A[0-9]+\\Z", "^[0-9]+", "[0-9]+$"]:
        dfa = compile_regex(pattern)
        assert dfa.pattern == "[0-9]+" and dfa.accepts("42") and not dfa.accepts("")
    assert compile_regex("a\\$").accepts("a$")  # an escaped dollar is a character


def test_unicode_escapes_and_literal_bracket():
    assert compile_regex("\\u65e5\\u672c").accepts("日本")
    assert compile_regex("[]a]+").accepts("]a]")
    assert compile_regex("[^]a]").accepts("b") and not compile_regex("[^]a]").accepts("]")


@pytest.mark.parametrize(
    ("pattern", "position", "words"),
    [
        ("(?=a)b", 0, "lookahead"),
        ("ab(?<!a)", 2, "lookbehind"),
        ("(a)\\1", 3, "backreference"),
        ("\\bword", 0, "word boundary"),
        ("a^b", 1, "anchors"),
        ("ab$c", 2, "anchors"),
        ("[abc", 0, "unterminated character set"),
        ("(ab", 0, "missing )"),
        ("a**", 2, "multiple repeat"),
        ("x{2}+", 4, "possessive"),
        ("\\p{L}+", 0, "Unicode properties"),
        ("(?x)a b", 0, "flag"),
        ("[z-a]", 1, "bad character range"),
    ],
)
def test_refusals_say_what_where_and_what_instead(pattern, position, words):
    with pytest.raises(RegexError) as caught:
        compile_regex(pattern)
    error = caught.value
    assert words in error.message
    assert error.position == position
    assert error.hint
    assert "^" in error.pointer(pattern).splitlines()[-1]


@pytest.mark.parametrize(
    "pattern", ["(a|b)*a(a|b){20}", "a{100000}", "((a{10}){10}){1000}", "(.{0,50}x){2}[ab]{30}"]
)
def test_explosive_patterns_are_refused_as_too_large(pattern):
    with pytest.raises(RegexError, match="too large"):
        compile_regex(pattern)


def test_distances_to_acceptance():
    dfa = compile_regex("abc|d")
    assert dfa.distances()[dfa.initial] == 1
    assert dfa.distances()[dfa.run("ab")] == 1
    assert all(dfa.distances()[s] == 0 for s in dfa.accepting)


ATOMS = ("a", "b", "c", "[ab]", "[^a]", ".")
SUFFIXES = ("*", "+", "?", "{2}", "{1,3}", "{2,}")


def random_pattern(draw, depth: int = 0, atoms=ATOMS, suffixes=SUFFIXES) -> str:
    """A small regex of ``atoms`` nested up to three deep, each repeated group taking one
    of ``suffixes``; by default over a, b, c: the shapes minimisation meets (alternatives
    that end alike, counted repeats, loops, optional tails)."""

    def more() -> str:
        return random_pattern(draw, depth + 1, atoms, suffixes)

    if depth >= 3:
        return draw(st.sampled_from(atoms))
    kind = draw(st.sampled_from(["atom", "concat", "alt", "repeat"]))
    if kind == "atom":
        return draw(st.sampled_from(atoms))
    if kind == "concat":
        return "".join(more() for _ in range(draw(st.integers(2, 3))))
    if kind == "alt":
        return f"({more()}|{more()})"
    suffix = draw(st.sampled_from(suffixes))
    return f"({more()}){suffix}"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.data())
def test_random_dfas_are_minimal_like_interegulars(data):
    """Minimisation starts from blocks split by acceptance and by the classes states move
    on, with no dead state written out: held to interegular's own reduction, state for
    state, on random patterns."""
    pattern = random_pattern(data.draw)
    ours = compile_regex(pattern)
    theirs = interegular.parse_pattern(pattern).to_fsm().reduce()
    live = {s for s in theirs.states if theirs.islive(s)}
    assert ours.num_states == len(live), pattern
    for _ in range(20):
        text = data.draw(st.text(alphabet="abcd", max_size=7))
        assert ours.accepts(text) == fullmatch(pattern, text), (pattern, text)


def _both_minimisations(pattern: str) -> tuple[object, object] | None:
    """The minimal DFA's rows as the bottom-up merge and as Hopcroft's refinement give
    them, or None when the DFA has a cycle longer than a loop (only Hopcroft applies)."""
    built = _Construction.of(pattern)
    accepting, moves = _prune_dead(built.accepting, built.transitions)
    merged = _merged_bottom_up(accepting, moves, built.clock)
    if merged is None:
        return None
    refined = _hopcroft(accepting, moves, built.clock)
    return _renumbered(accepting, moves, merged), _renumbered(accepting, moves, refined)


WIDE_ATOMS = (*ATOMS, *"defghijklmnopq", "[a-f]", "[^c-h]", "[d-q]")
"""More classes than ``dfa.FEW_CLASSES``: ``_subsets`` then splits classes by position."""
NARROW_ATOMS = (*"abcdefghijklmnopqr", "[ab]", "[d-f]", "[a-s]")
"""More classes than ``dfa.FEW_CLASSES``, no position accepting more than that many:
``_subsets`` then asks the classes a state's positions next accept."""


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.data())
def test_a_dfa_with_no_states_to_merge_keeps_its_numbers_and_moves_in_class_order(data):
    """Where no two states merge, ``_minimise`` keeps the construction's numbering and only
    sorts each state's moves: exactly what renumbering every state by its own block gives,
    state for state and move for move (the order of a state's moves included)."""
    atoms = data.draw(st.sampled_from([ATOMS, WIDE_ATOMS]))
    built = _Construction.of(random_pattern(data.draw, atoms=atoms))
    accepting, moves = _prune_dead(built.accepting, built.transitions)
    ours = _minimise(accepting, moves, built.clock)
    theirs = _renumbered(accepting, moves, list(range(len(moves))))
    if len(ours[1]) == len(moves):
        assert ours[0] == theirs[0]
        assert [list(m.items()) for m in ours[1]] == [list(m.items()) for m in theirs[1]]


CHAINS = (r"[nN][oO][nN][eE]", r"\$schema", "ab?c", "(ab)?", "[ab]c|d[ab]", "a|ab|abc")


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.one_of(st.sampled_from(CHAINS), st.builds(lambda d: d, st.data())))
def test_a_chain_is_kept_as_minimising_it_would_give(drawn):
    """``_minimise`` returns a chain (``dfa._is_chain``) as it is: the same states and
    moves, order included, as the plain merge with the shortcut off; and a DFA that is
    not a chain (loops, branches, merging ends) goes the plain way."""
    pattern = drawn if isinstance(drawn, str) else random_pattern(drawn.draw)
    built = _Construction.of(pattern)
    accepting, moves = _prune_dead(built.accepting, built.transitions)
    ours = _minimise(accepting, moves, built.clock)
    with patch.object(dfa_module, "_is_chain", return_value=False):
        plain = _minimise(accepting, moves, built.clock)
    assert ours[0] == plain[0], pattern
    assert [list(m.items()) for m in ours[1]] == [list(m.items()) for m in plain[1]], pattern
    if pattern in CHAINS[:2]:
        assert dfa_module._is_chain(moves), "a keyword's DFA is a chain"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.data())
def test_the_bottom_up_merge_and_hopcrofts_refinement_give_the_same_dfa(data):
    """Where the only cycles are loops on one state, states are merged in one pass from the
    ends back (``dfa._merged_bottom_up``): the same DFA, state for state, as Hopcroft's."""
    both = _both_minimisations(random_pattern(data.draw))
    if both is not None:
        assert both[0] == both[1]


@pytest.mark.parametrize(
    "pattern",
    [
        r'"[^"]*"',  # the opening state and the string's loop: one state
        r"(a|ab)c*",
        r"x?y?z?(ab|cb)d+",
        r'\{"a": "[^"]{0,3}", "b": (true|false|null), "c": -?[0-9]+(\.[0-9]+)?\}',
        "the benchmark's 22-field schema",  # 1,170 states before minimisation, 927 after
    ],
)
def test_the_bottom_up_merge_on_patterns_without_cycles(pattern):
    if pattern.startswith("the benchmark"):
        schema = Path(__file__).parent.parent / "bench" / "schema22.json"
        pattern = regex_from_schema(schema.read_text())
    both = _both_minimisations(pattern)
    assert both is not None, "no cycle but loops: the bottom-up merge applies"
    assert both[0] == both[1]


def _plain_concatenation(self, parts, flags):
    """``_Positions._concatenation`` as every part's walk concatenated in turn."""
    result = (True, 0, 0)
    for part in parts:
        result = self._concat(result, self.walk(part, flags))
    return result


def _plain_link(self, lasts, firsts):
    """``_Positions._link`` as a loop over every bit of ``lasts``."""
    for p in set_bits(lasts):
        self.follow[p] |= firsts


def _positions(pattern: str) -> tuple:
    walked = dfa_module._Walked.of(pattern)
    found = walked.positions
    return found.sets, found.follow, walked.nullable, walked.first, walked.last


WALKED = [
    "(?i)straße|[a-zé]{2,4}",
    "a?b?c?",
    "(a|b?)(c?|d)e",
    "x(y?z?)*w",
    '"([^"\\\\]|\\\\["\\\\/bfnrt]){0,5}"',
]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.data())
def test_a_concatenation_walked_in_place_makes_the_plain_walks_positions(data):
    """Characters of a concatenation are made and linked in place, and a link from one
    position skips the loop over bits: the same positions, follow sets, first and last
    positions as the plain walk (each part walked, then concatenated), on random
    patterns, nullable parts and (?i)."""
    pattern = data.draw(st.sampled_from(WALKED)) if data.draw(st.booleans()) else None
    pattern = pattern or random_pattern(data.draw, atoms=(*ATOMS, "(?i:Ab)", "x?", "()"))
    ours = _positions(pattern)
    with (
        patch.object(dfa_module._Positions, "_concatenation", _plain_concatenation),
        patch.object(dfa_module._Positions, "_link", _plain_link),
    ):
        plain = _positions(pattern)
    assert ours == plain


def test_a_schemas_positions_are_the_plain_walks():
    cases = Path(__file__).parent / "cases"
    pattern = regex_from_schema((cases / "schema_22_fields.json").read_text())
    ours = _positions(pattern)
    with (
        patch.object(dfa_module._Positions, "_concatenation", _plain_concatenation),
        patch.object(dfa_module._Positions, "_link", _plain_link),
    ):
        assert _positions(pattern) == ours


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.data())
def test_the_bound_read_from_the_text_is_never_below_the_positions(data):
    """``check_size`` skips the tree walk where the text's bound (length times the counts)
    is within the limit: it is never below the positions counted from the tree, on random
    patterns with counted repeats, nested ones and literal braces."""
    suffixes = ("*", "+", "?", "{2}", "{1,3}", "{2,}", "{,4}", "{0}", "{12}")
    atoms = (*ATOMS, "\\{", "[{]", "x{", "\\d")
    pattern = random_pattern(data.draw, atoms=atoms, suffixes=suffixes)
    bound = dfa_module._size_bound(pattern)
    assert bound > dfa_module.MAX_POSITIONS or count_positions(pattern) <= bound


@pytest.mark.parametrize(
    ("pattern", "plain"),
    [
        ("a()b", "ab"),
        ("()(?:)a(b)()c", "abc"),
        ("x(y?)()z(?:)", "xy?z"),
        ("(?i:q)()r|()s(|t)", "[qQ]r|s(|t)"),
        ("(0|[1-9]\\d*)()()\\.(\\d+)()", "(0|[1-9]\\d*)\\.\\d+"),
    ],
)
def test_an_empty_group_changes_no_dfa(pattern, plain):
    """``_concatenation`` skips a group of one empty option (``()``, ``(?:)``); a group of
    one option that is not empty (``(b)``, ``(y?)``, ``(?i:q)``) is walked: the DFA is the
    one of the pattern written without them."""
    ours, theirs = compile_regex(pattern), compile_regex(plain)
    assert (ours.num_states, ours.accepting, ours.moves) == (
        theirs.num_states,
        theirs.accepting,
        theirs.moves,
    )
    assert [(c.chars, c.others) for c in ours.classes] == [
        (c.chars, c.others) for c in theirs.classes
    ]


def _plain_subsets(walked: dfa_module._Walked) -> tuple[set[int], list[dict[int, int]]]:
    """THE PLAIN DEFINITION of ``_subsets``: from every state, each class asked in turn
    (new states numbered as met), its positions next gathered from scratch."""
    ids, order, accepting, transitions = {0: 0}, [0], set(), []
    if walked.nullable:
        accepting.add(0)
    for subset in order:
        reachable = walked.first if subset == 0 else 0
        for p in set_bits(subset):
            reachable |= walked.positions.follow[p]
        moves: dict[int, int] = {}
        for k, mask in enumerate(walked.class_masks):
            if target := reachable & mask:
                if target not in ids:
                    ids[target] = len(order)
                    order.append(target)
                    if target & walked.last:
                        accepting.add(ids[target])
                moves[ids[target]] = moves.get(ids[target], 0) | 1 << k
        transitions.append(moves)
    return accepting, transitions


SEARCHES = (
    r'(?:[^"\\]|\\["\\/bfnrt])*(?:[^/]+/.+)(?:[^"\\]|\\["\\/bfnrt])*',
    r"[^:]+://[^:/]+(:[0-9]+)?(/[^?#/]+)*(\?([^=#&]+=[^=#&]+)(&([^=#&]+=[^=#&]+))*)?(#.+)?",
    r".*\.[jJ][sS][oO][nN]",
    r"(?:[^a]|ab)*abab(?:[^a]|ab)*",
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.data())
def test_the_subsets_are_the_plain_construction_s(data):
    """``_subsets`` (one position next, few classes asked in turn, many split by position,
    and the moves of states with the same positions next found once) builds the plain
    construction's states, numbers and moves."""
    if data.draw(st.booleans()):
        pattern = data.draw(st.sampled_from(SEARCHES))
    else:
        atoms = data.draw(st.sampled_from([ATOMS, WIDE_ATOMS, NARROW_ATOMS]))
        pattern = random_pattern(data.draw, atoms=atoms)
    walked = dfa_module._Walked.of(pattern)
    built = walked.subsets(_Clock.after(10.0, "building"))
    accepting, plain = _plain_subsets(walked)
    assert built.accepting == accepting, pattern
    assert [list(m.items()) for m in built.transitions] == [list(m.items()) for m in plain]


CRON = (
    r"(@(hourly|daily|weekly|monthly|yearly|once))|((((\d+,)+\d+|(\d+|\*)(/|-)\d+|\d+|\*) ?){5,6})"
)
"""A corpus pattern (a cron schedule) of 23 classes, each position accepting one: its
states ask the few classes their positions next accept (``dfa.ASK_PER_POSITION``)."""


@pytest.mark.parametrize(
    "pattern",
    [
        CRON,
        "[a-s]x|(a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p|q|r)+[xy]{2,3}",
        "(d|e|f|g|h|i|j|k|l|m|n|o|p|q|r|s|t)x|a([d-f]|z)+",  # d, e, f: one target after a
        *SEARCHES,
    ],
)
@pytest.mark.parametrize("few, ask", [(16, 2), (16, 0), (16, 10**9), (0, 2), (10**9, 2)])
def test_every_way_of_asking_classes_gives_the_plain_subsets_in_class_order(pattern, few, ask):
    """Each way ``_subsets`` finds a state's moves (every class asked, the classes its
    positions next accept asked, the classes split by position), forced all one way, gives
    the plain construction's states, numbers and moves, each state's moves in the order
    of their smallest class (as the plain one meets them): ``_renumbered`` reads them so."""
    walked = dfa_module._Walked.of(pattern)
    with (
        patch.object(dfa_module, "FEW_CLASSES", few),
        patch.object(dfa_module, "ASK_PER_POSITION", ask),
    ):
        built = walked.subsets(_Clock.after(10.0, "building"))
    accepting, plain = _plain_subsets(walked)
    assert built.accepting == accepting
    assert [list(m.items()) for m in built.transitions] == [list(m.items()) for m in plain]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.data())
def test_subsets_made_one_by_their_future_minimise_to_the_plain_dfa(data):
    """``compile_regex`` builds states with the same positions next and acceptance as one
    (``_subsets``'s ``by_future``): fewer states, the same minimal DFA, state for state and
    move for move, as from the plain subsets."""
    choice = data.draw(st.sampled_from(["drawn", "searches", "cron"]))
    if choice == "drawn":
        atoms = data.draw(st.sampled_from([ATOMS, WIDE_ATOMS, NARROW_ATOMS]))
        pattern = random_pattern(data.draw, atoms=atoms)
    else:
        pattern = CRON if choice == "cron" else data.draw(st.sampled_from(SEARCHES))
    walked = dfa_module._Walked.of(pattern)
    plain = walked.subsets(_Clock.after(10.0, "building"))
    merged = walked.subsets(_Clock.after(10.0, "building"), by_future=True)
    assert len(merged.transitions) <= len(plain.transitions)
    ours, theirs = dfa_module._minimised(merged), dfa_module._minimised(plain)
    assert (ours.num_states, ours.accepting) == (theirs.num_states, theirs.accepting), pattern
    assert [list(m.items()) for m in ours.moves] == [list(m.items()) for m in theirs.moves]


def test_the_cron_pattern_s_slash_and_dash_lead_to_one_state():
    walked = dfa_module._Walked.of(CRON)
    plain = walked.subsets(_Clock.after(10.0, "building"))
    merged = walked.subsets(_Clock.after(10.0, "building"), by_future=True)
    assert (len(plain.transitions), len(merged.transitions)) == (279, 188)
    assert compile_regex(CRON).run("1/") == compile_regex(CRON).run("1-")
