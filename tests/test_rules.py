"""The grammar as automata that call each other: the network, its drawing, the parser's place.

Trees are written by hand here (``fsmviz.grammar.tree``), so these tests hold the drawing
and the place to their own definitions whatever the grammar parser does; the place is also
held to a brute-force definition (a text is a prefix when some sentence up to a length
begins with it) on small grammars.
"""

from __future__ import annotations

import itertools
import re

import pytest

from fsmviz.drawing.rules import highlight_rules, lighting, lit_classes, rules_dot, rules_svg
from fsmviz.grammar import tree as t
from fsmviz.grammar.network import NetworkError, build_network
from fsmviz.grammar.place import MAX_STACKS, Chart, place_of

L, R = t.Literal, t.RuleRef


def grammar(*rules: tuple[str, t.Node], start: str | None = None) -> t.Grammar:
    built = tuple(t.Rule(name, body, k + 1, 1) for k, (name, body) in enumerate(rules))
    return t.Grammar(built, start or rules[0][0])


def digits(low: int = 1, high: int | None = None) -> t.Node:
    return t.Repeat(t.CharSet(((48, 57),)), low, high)


JSON = grammar(
    ("value", t.Alt((R("object"), R("array"), R("string"), R("number"), L("true"), L("null")))),
    (
        "object",
        t.Seq(
            (
                L("{"),
                t.Repeat(t.Seq((R("pair"), t.Repeat(t.Seq((L(","), R("pair"))), 0, None))), 0, 1),
                L("}"),
            )
        ),
    ),  # noqa: E501
    ("pair", t.Seq((R("string"), L(":"), R("ws"), R("value")))),
    (
        "array",
        t.Seq(
            (
                L("["),
                t.Repeat(t.Seq((R("value"), t.Repeat(t.Seq((L(","), R("value"))), 0, None))), 0, 1),
                L("]"),
            )
        ),
    ),  # noqa: E501
    ("string", t.Seq((L('"'), t.Repeat(t.CharSet(((34, 34), (92, 92)), True), 0, None), L('"')))),
    ("number", t.Seq((t.Repeat(L("-"), 0, 1), digits()))),
    ("ws", t.Repeat(t.CharSet(((32, 32),)), 0, None)),
)
BRACKETS = grammar(("s", t.Repeat(t.Seq((L("("), R("s"), L(")"))), 0, None)))
SUM = grammar(  # left-recursive and ambiguous: 1+1+1 parses two ways
    ("e", t.Alt((t.Seq((R("e"), L("+"), R("e"))), digits(1, 1)))),
)


# --- the network ---------------------------------------------------------------------------


def arcs(net, rule: str) -> list[tuple[int, str, str, int]]:
    return [(a.source, a.symbol.kind, a.symbol.label, a.target) for a in net.machine(rule).arcs]


def test_a_rule_becomes_a_minimal_automaton_over_terminals_and_calls() -> None:
    net = build_network(JSON)
    assert arcs(net, "object") == [
        (0, "literal", '"{"', 1),
        (1, "call", "pair", 2),
        (1, "literal", '"}"', 3),
        (2, "literal", '"}"', 3),
        (2, "literal", '","', 4),
        (4, "call", "pair", 2),
    ]
    assert net.machine("object").accepting == frozenset({3})
    # seven alternatives into one end: two positions
    value = net.machine("value")
    assert value.num_states == 2 and len(value.arcs) == 6


def test_a_repeat_that_calls_no_rule_is_one_terminal_with_its_regex() -> None:
    net = build_network(JSON)
    assert arcs(net, "string")[1] == (1, "regex", '[^"\\\\]*', 2)
    number = net.machine("number")
    assert [a.symbol.regex for a in number.arcs] == ["-?", "[0-9]+"]


def test_a_lark_terminal_rule_is_a_token_edge_not_a_box() -> None:
    rules = (
        t.Rule("start", t.Seq((R("NAME"), L("="), R("NAME")))),
        t.Rule("NAME", t.Repeat(t.CharSet(((97, 122),)), 1, None), terminal=True),
    )
    net = build_network(t.Grammar(rules, "start"))
    assert [m.rule for m in net.machines] == ["start"]
    first = net.machine("start").arcs[0].symbol
    assert (first.kind, first.label, first.regex) == ("token", "NAME", "[a-z]+")


def test_a_counted_repeat_of_calls_is_unrolled_and_a_huge_one_refused() -> None:
    net = build_network(grammar(("s", t.Repeat(R("x"), 2, 3)), ("x", L("x"))))
    s = net.machine("s")
    assert s.num_states == 4 and s.accepting == frozenset({2, 3})
    with pytest.raises(NetworkError, match="counts to 50"):
        build_network(grammar(("s", t.Repeat(R("x"), 0, 50)), ("x", L("x"))))


# --- the drawing ---------------------------------------------------------------------------


def test_the_dot_has_a_box_per_rule_and_classes_on_positions_and_arcs() -> None:
    net = build_network(JSON)
    dot = rules_dot(net, title="json")
    assert dot.count("subgraph cluster_r") == len(net.machines) == 7
    assert 'class="rule r1"; label="object"' in dot
    assert 'label="value  (start)"' in dot
    assert 'r1s3 [label="3", class="pos r1s3 accepting", shape=doublecircle' in dot
    call = re.search(r"r1s1 -> r1s2 \[([^\]]*)\]", dot).group(1)
    assert 'class="arc r1a1 call"' in call and "style=dashed" in call
    assert 'class="arc r1a0 term"' in dot


def test_user_text_is_escaped_in_the_dot_and_the_svg() -> None:
    evil = '<img src=x onerror=alert(1)>"\\&amp;\x04\u202e'
    net = build_network(grammar(("s", t.Seq((L(evil), R("s2")))), ("s2", L("&lt;"))))
    dot = rules_dot(net, title='<script>"')
    assert "\x04" not in dot and "\u202e" not in dot and "&amp;amp;" in dot
    svg = rules_svg(net, title="<script>")
    assert "<img" not in svg and "<script" not in svg
    assert "&lt;img src=x onerror=alert(1)&gt;" in svg
    assert "\\x04" in svg and "\\u202e" in svg
    assert svg.startswith('<svg class="fsm rules"')


def test_the_place_is_lit_by_classes_and_relit_without_layout() -> None:
    net = build_network(JSON)
    svg = rules_svg(net)
    place = place_of(net, '{"a":[1,')
    lit = highlight_rules(svg, lighting(place, net))
    # in value, in object after "{", in pair after ws, in value, in array after ","
    array = net.machine("array")
    assert lit_classes(lit, "top") == [f"r{array.index}s4"]
    assert f"r{net.machine('pair').index}s3" in lit_classes(lit, "current")
    assert f"r{net.machine('object').index}" in lit_classes(lit, "current")  # its box
    pending = {f"r{m.index}a{a.index}" for m in net.machines for a in m.arcs if a.symbol.is_call}
    assert set(lit_classes(lit, "taken")) <= pending and lit_classes(lit, "taken")
    assert lit_classes(lit, "next")  # the calls the top may take next
    # relit for another text: the earlier classes go
    again = highlight_rules(lit, lighting(place_of(net, ""), net))
    assert lit_classes(again, "top") == [f"r{net.root.index}s0"]
    assert not lit_classes(again, "taken")
    assert re.sub(r' (current|top|taken|next)(?=[ "])', "", again) == svg


# --- the place -----------------------------------------------------------------------------


def test_the_stack_says_where_the_parser_is_in_plain_words() -> None:
    net = build_network(JSON)
    lines = place_of(net, '{"a":1,').lines()
    assert lines == ["in `value`, in `object` after `,` expecting `pair`"]
    lines = place_of(net, '{"a":').lines()
    assert "in `value`, in `object` after `{`, in `pair` after `:` expecting `ws`" in lines
    reading = place_of(net, '{"a":12').lines()[0]
    assert reading.endswith('in `number` reading `[0-9]+` ("12" so far)')


def test_nested_text_gives_a_deep_stack_and_a_dead_text_none() -> None:
    net = build_network(BRACKETS)
    place = place_of(net, "((((")
    # four calls deep: waiting for another `(` or, the innermost `s` empty, for `)`
    assert [len(s.frames) for s in place.stacks] == [4, 4]
    assert place.is_prefix and not place.accepts
    assert place_of(net, "(())").accepts
    dead = place_of(net, "())")
    assert not dead.is_prefix and dead.stacks == ()


def test_ambiguous_text_has_several_live_stacks_up_to_a_bound() -> None:
    net = build_network(SUM)
    two = place_of(net, "1+1+")
    assert len(two.stacks) >= 2 and all(s.top.rule == "e" for s in two.stacks)
    many = place_of(net, "1+" * 12, max_stacks=3)
    assert len(many.stacks) == 3 and many.more
    assert len(place_of(net, "1+" * 12).stacks) <= MAX_STACKS


def test_the_chart_extends_one_piece_at_a_time_as_a_stream_does() -> None:
    net = build_network(JSON)
    whole = Chart.start(net).after('{"a":[true,null]}')
    pieces = Chart.start(net)
    for piece in ['{"', 'a":', "[tr", "ue,", "null]", "}"]:
        pieces = pieces.after(piece)
    assert pieces.sets == whole.sets and pieces.accepts


def sentences(g: t.Grammar, alphabet: str, length: int) -> set[str]:
    net = build_network(g)
    found = set()
    for n in range(length + 1):
        for chars in itertools.product(alphabet, repeat=n):
            text = "".join(chars)
            if place_of(net, text).accepts:
                found.add(text)
    return found


@pytest.mark.parametrize(
    "g,alphabet,accepted",
    [
        (BRACKETS, "()", ["", "()", "(())", "()()", "(()())"]),
        (SUM, "1+", ["1", "1+1", "1+1+1"]),
    ],
)
def test_accepts_and_is_prefix_agree_with_brute_force(g, alphabet, accepted) -> None:
    net = build_network(g)
    every = sentences(g, alphabet, 6)
    assert set(accepted) <= every
    assert not any(s.count("(") != s.count(")") for s in every)
    for n in range(5):
        for chars in itertools.product(alphabet, repeat=n):
            text = "".join(chars)
            prefix = any(s.startswith(text) for s in every) or _extends(net, text)
            assert place_of(net, text).is_prefix == prefix, text


def _extends(net, text: str) -> bool:
    """Some sentence longer than the brute-force bound begins with ``text``: a closing of
    every open bracket or one more digit finishes it."""
    return place_of(net, text + ")" * text.count("(")).accepts or place_of(net, text + "1").accepts


def test_lark_ignore_text_may_come_between_terminals_and_is_not_drawn() -> None:
    g = t.Grammar(
        (t.Rule("start", t.Seq((L("a"), R("start2")))), t.Rule("start2", L("b"))),
        "start",
        "lark",
        ignore=(t.Repeat(t.CharSet(((32, 32),)), 1, None),),
    )
    net = build_network(g)
    assert net.ignore is not None and "%ignore" in net.ignore.label
    assert "ignore" not in rules_dot(net)
    assert place_of(net, "a  b").accepts and place_of(net, " a b").accepts
    assert not place_of(net, "a  c").is_prefix
    assert "in `start` after `a` expecting `start2`" in place_of(net, "a ").lines()


def test_a_lark_regex_with_the_i_flag_ignores_case() -> None:
    g = grammar(("s", t.RegexTerm("ab+", "i")))
    assert place_of(build_network(g), "AbB").accepts


def test_a_position_the_minimal_automaton_shares_with_the_start_still_says_after() -> None:
    # term ::= f ("*" f)*: after "*" the automaton is back at its start position
    loop = t.Repeat(t.Seq((L("*"), R("f"))), 0, None)
    net = build_network(grammar(("term", t.Seq((R("f"), loop))), ("f", digits(1, 1))))
    assert net.machine("term").num_states == 2
    assert place_of(net, "2*").lines() == ["in `term` after `*` expecting `f`"]
    assert place_of(net, "").lines() == ["in `term` expecting `f`"]


def test_ignored_text_may_also_come_first_and_last() -> None:
    g = t.Grammar((t.Rule("start", t.Seq((L("a"), L("b")))),), "start", "lark",
                  ignore=(L(" "),))  # fmt: skip
    net = build_network(g)
    assert place_of(net, " a b ").accepts and place_of(net, "ab").accepts
