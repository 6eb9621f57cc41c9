"""The grammar doctor: each finding on a small grammar that has the problem, and none on
one that does not. Trees are built by hand; the vocabulary of the spelling test is a toy
one (``Vocabulary.from_strings``), said so where it is used."""

from __future__ import annotations

from fsmviz.diagnose.finding import KINDS
from fsmviz.diagnose.grammar import GRAMMAR_KINDS, diagnose_grammar, shortest_texts
from fsmviz.grammar import tree as t
from fsmviz.grammar.network import build_network
from fsmviz.tokens.vocab import Vocabulary

L, R = t.Literal, t.RuleRef


def grammar(*rules: tuple[str, t.Node], ignore: tuple[t.Node, ...] = ()) -> t.Grammar:
    built = tuple(t.Rule(name, body, k + 1, 1) for k, (name, body) in enumerate(rules))
    return t.Grammar(built, rules[0][0], ignore=ignore)


def kinds(found) -> list[str]:
    return [f.kind for f in found]


def test_every_grammar_kind_is_listed_with_the_others() -> None:
    assert set(GRAMMAR_KINDS) <= set(KINDS)


def test_a_rule_that_only_calls_itself_cannot_finish() -> None:
    g = grammar(("root", t.Alt((L("x"), R("loop")))), ("loop", t.Seq((L("a"), R("loop")))))
    found = diagnose_grammar(g)
    stuck = [f for f in found if f.kind == "unfinishable_rule"]
    assert [f.fragment for f in stuck] == ["loop"] and stuck[0].severity == "error"
    assert "line 2" in stuck[0].message and "`loop`" in stuck[0].message
    assert found[0].kind == "unfinishable_rule"  # errors first


def test_a_rule_nothing_calls_is_unreachable() -> None:
    g = grammar(("root", R("value")), ("value", L("1")), ("valeu", L("2")))
    found = diagnose_grammar(g)
    assert [(f.kind, f.fragment) for f in found] == [("unreachable_rule", "valeu")]


def test_recursion_and_loops_are_unbounded_notes() -> None:
    g = grammar(
        ("list", t.Seq((L("["), t.Repeat(R("item"), 0, None), L("]")))),
        ("item", t.Alt((R("list"), L("x")))),
    )
    notes = [f for f in diagnose_grammar(g) if f.kind == "unbounded_rule"]
    assert all(f.severity == "info" for f in notes)
    assert any("call each other" in f.message and "list → item → list" in f.message for f in notes)
    assert any(f.fragment == "list" and "repeats" in f.message for f in notes)
    bounded = grammar(("root", t.Seq((L("a"), t.Repeat(R("b"), 0, 3)))), ("b", L("b")))
    assert "unbounded_rule" not in kinds(diagnose_grammar(bounded))


def test_whitespace_that_can_loop_is_found_and_a_bounded_one_is_not() -> None:
    spaces = t.CharSet(((9, 10), (32, 32)))
    loose = grammar(("root", t.Seq((L("{"), R("ws"), L("}")))), ("ws", t.Repeat(spaces, 0, None)))
    found = [f for f in diagnose_grammar(loose) if f.kind == "looping_whitespace"]
    assert found and found[0].fragment == "ws" and "{0,20}" in found[0].message
    tight = grammar(("root", t.Seq((L("{"), R("ws"), L("}")))), ("ws", t.Repeat(spaces, 0, 20)))
    assert "looping_whitespace" not in kinds(diagnose_grammar(tight))
    recursive = grammar(
        ("root", t.Seq((R("ws"), L("x")))), ("ws", t.Alt((L(""), t.Seq((L(" "), R("ws"))))))
    )  # noqa: E501
    assert "looping_whitespace" in kinds(diagnose_grammar(recursive))


def test_two_terminals_that_may_come_next_and_match_the_same_text() -> None:
    g = grammar(("root", t.Alt((L("true"), t.RegexTerm("[a-z]+")))))
    found = [f for f in diagnose_grammar(g) if f.kind == "overlapping_terminals"]
    assert len(found) == 1 and "'true'" in found[0].message
    apart = grammar(("root", t.Alt((L("true"), t.RegexTerm("[0-9]+")))))
    assert "overlapping_terminals" not in kinds(diagnose_grammar(apart))


def test_a_terminal_no_token_can_spell() -> None:
    # a toy vocabulary (ASCII letters only): \x04 is in no token
    vocab = Vocabulary.from_strings(list("abcxyz{}") + ["ab", "xyz"])
    g = grammar(("root", t.Seq((L("a"), R("end")))), ("end", L("\x04z")))
    found = [f for f in diagnose_grammar(g, vocab) if f.kind == "unspellable_terminal"]
    assert len(found) == 1 and found[0].fragment == "end" and "'\\x04'" in found[0].message
    fine = grammar(("root", t.Seq((L("a"), L("xyz")))))
    assert "unspellable_terminal" not in kinds(diagnose_grammar(fine, vocab))


def test_the_shortest_sentence_against_the_budget() -> None:
    g = grammar(("root", t.Seq((L("{"), L("a" * 30), L("}")))))
    assert shortest_texts(build_network(g)).rules["root"] == "{" + "a" * 30 + "}"
    vocab = Vocabulary.from_strings(list("a{}"))  # a toy vocabulary: one character a token
    found = [f for f in diagnose_grammar(g, vocab, max_tokens=10) if f.kind == "grammar_budget"]
    assert found and "32 tokens" in found[0].message and found[0].settings[0][0] == "max_tokens"
    assert not [f for f in diagnose_grammar(g, vocab, max_tokens=40) if f.kind == "grammar_budget"]


def test_a_healthy_grammar_has_only_notes() -> None:
    g = grammar(("root", t.Seq((L("move "), R("square")))),
                ("square", t.Seq((t.CharSet(((97, 104),)), t.CharSet(((49, 56),))))))  # fmt: skip
    assert diagnose_grammar(g) == []


def test_a_runs_collapses_are_named_by_rule_the_worst_one_by_one() -> None:
    from fsmviz.diagnose.grammar import grammar_collapses
    from fsmviz.generation.trace import Candidate, Step, Trace

    g = grammar(("root", t.Seq((L("["), R("item"), L("]")))), ("item", t.Repeat(L("ab"), 0, 9)))
    text = "[ababababab]"
    steps = tuple(
        Step(k, c, 0, 0, 1, 0.9 if k < 2 else 0.001 * k, (Candidate("no", 0.5, False),),
             token_bytes=c.encode(), index=k)
        for k, c in enumerate(text)
    )  # fmt: skip
    found = grammar_collapses(g, Trace(text, steps, "accepted", True), threshold=0.05)
    assert [f.steps for f in found[:3]] == [(2,), (3,), (4,)]  # the worst three, in order
    assert "in `root` after `[`, in `item`" in found[0].message and "'no'" in found[0].message
    assert found[3].steps == tuple(range(5, len(text))) and "`item`" in found[3].message
