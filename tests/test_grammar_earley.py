"""The naive oracle for grammars: fsmviz's Earley recognizer, held to plain definitions."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from fsmviz.grammar import compile_grammar
from fsmviz.grammar.earley import utf8_range
from fsmviz.grammar.oracle import naive_allowed, split_utf8
from fsmviz.tokens.vocab import Vocabulary

CASES = Path(__file__).parent / "cases" / "grammars"


def grammar(name: str):
    return compile_grammar((CASES / name).read_text())


def balanced(text: str) -> tuple[bool, bool]:
    """(whole, prefix) for two kinds of brackets, by a stack."""
    stack = []
    for char in text:
        if char in "([":
            stack.append(char)
        elif not stack or stack.pop() + char not in ("()", "[]"):
            return False, False
    return not stack, True


def test_brackets_against_a_stack_on_every_short_text() -> None:
    g = grammar("brackets.gbnf")
    for n in range(7):
        for chars in itertools.product("()[]", repeat=n):
            text = "".join(chars)
            whole, prefix = balanced(text)
            assert g.accepts(text) == whole, text
            assert g.is_prefix(text) == prefix, text


def random_json(rng: random.Random, depth: int = 0) -> object:
    kind = rng.choice(["num", "str", "lit", "list", "obj"] if depth < 3 else ["num", "str"])
    if kind == "num":
        return rng.choice([0, -3, 12.5, 7e3, 123456])
    if kind == "str":
        return rng.choice(["", "a b", 'q"uote', "é😀", "back\\slash\n"])
    if kind == "lit":
        return rng.choice([True, False, None])
    if kind == "list":
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {f"k{i}": random_json(rng, depth + 1) for i in range(rng.randint(0, 3))}


def test_json_grammar_against_json_loads() -> None:
    g = grammar("json.gbnf")
    rng = random.Random(0)
    for _ in range(30):
        doc = {"top": random_json(rng)}
        for indent in (None, 2):
            text = json.dumps(doc, indent=indent, ensure_ascii=False)
            assert g.accepts(text), text
            cut = rng.randrange(len(text))
            assert g.is_prefix(text[:cut])
            completion = g.shortest_completion(text[:cut])
            assert completion is not None
            assert g.accepts(text[:cut] + completion)
            json.loads(text[:cut] + completion)  # a sentence of this grammar is JSON
    for bad in ['{"a" 1}', '{"a": 01x}', "[1]", '{"a": tru}', '{"a": "\x01"}']:
        assert not g.accepts(bad), bad


def test_shortest_completion_is_shortest() -> None:
    g = grammar("json.gbnf")
    assert g.shortest_completion('{"a": [1, {"b": "x') == '"}]}'
    assert g.shortest_completion("{") == "}"
    assert g.shortest_completion('{"a": [1, {"b": "x"}]}') == ""
    assert g.shortest_completion("x") is None


def test_lark_terminals_ignore_and_regexes() -> None:
    g = grammar("arithmetic.lark")
    assert g.accepts("1 + 2*(3 - 4.5)")
    assert g.accepts(" 1+2 ")  # %ignore text may come anywhere between terminals
    assert not g.accepts("1 2") and not g.accepts("1.") and not g.accepts("1 .5")
    assert g.is_prefix("(1 + 2") and g.shortest_completion("(1 + 2") == ")"
    dates = compile_grammar('start: D "-" D\nD: /[0-9]{2}/')
    assert dates.accepts("12-34") and not dates.accepts("1-34")
    assert dates.shortest_completion("1") == "0-00"


def test_left_recursion_and_empty_rules() -> None:
    g = compile_grammar('root ::= e\ne ::= e "+" t | t\nt ::= [0-9] | "(" e ")" | o "x"\no ::= ""')
    assert g.accepts("1+(2+x)+3") and not g.accepts("1++2")
    completion = g.shortest_completion("(1+")
    assert len(completion) == 2 and g.accepts("(1+" + completion)


def test_text_cut_inside_a_character() -> None:
    assert split_utf8("aé".encode()[:2]) == ("a", b"\xc3")
    assert split_utf8(b"\x80") is None
    assert utf8_range(b"\xe6\x97") == (0x65C0, 0x65FF)
    assert utf8_range(b"\xed\xa0") is None  # surrogates are no characters
    g = compile_grammar('root ::= "日本" | "x"')
    vocab = Vocabulary(
        "split", (b"x", b"\xe6\x97", b"\xa5", "本".encode(), b"\xe6", b""), 5, {5: "<eos>"}
    )
    allowed = naive_allowed(g, vocab).tolist()
    assert allowed == [0, 1, 4]
    assert naive_allowed(g, vocab, b"\xe6\x97").tolist() == [2]
    assert naive_allowed(g, vocab, "日".encode()).tolist() == [3, 4]  # 本 starts with e6
    assert naive_allowed(g, vocab, "日本".encode()).tolist() == [5]


@pytest.mark.parametrize("name", ["json.gbnf", "chess.gbnf", "list.gbnf", "arithmetic.gbnf"])
def test_shortest_completion_of_the_empty_text_is_a_sentence(name: str) -> None:
    g = grammar(name)
    completion = g.shortest_completion("")
    assert completion is not None and g.accepts(completion)


def test_an_ambiguous_grammar_is_refused_past_the_work_bound(monkeypatch) -> None:
    from fsmviz.grammar import GrammarError, earley

    g = compile_grammar('root ::= root root | "a" | ""')
    assert g.accepts("a" * 20)
    monkeypatch.setattr(earley, "MAX_CHART_WORK", 20_000)
    earley._CACHE.clear()
    with pytest.raises(GrammarError, match="too ambiguous"):
        g.accepts("a" * 60)
