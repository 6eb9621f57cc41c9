"""The parser's place held to the engine's own recognizer: fsmviz's Earley chart over the
drawn automata (``fsmviz.grammar.place``) says a text is a prefix, or a sentence, exactly
when the grammar's character-level recognizer (``Grammar.is_prefix`` / ``accepts``) does,
on every prefix of sample sentences and on each with one more character of many kinds."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from fsmviz.app.examples import grammar_examples
from fsmviz.grammar import compile_grammar
from fsmviz.grammar.network import build_network
from fsmviz.grammar.place import Chart

CASES = Path(__file__).parent / "cases" / "grammars"
SENTENCES = {
    "json.gbnf": ['{"a": [1, -2.5e3, {"b": "x\\"y"}], "c": true}', "{}"],
    "arithmetic.gbnf": ["1+2*(3-4)/5=6\n"],
    "arithmetic.lark": ["1 + 2 * (3 - 4)", "12/3"],
    "brackets.gbnf": ["(()(()))", ""],
    "chess.gbnf": ["1. e4 e5\n2. Nf3 Nc6\n3. Bb5 a6\n"],
    "list.gbnf": ["- apple\n- pear\n"],
    "nested JSON": ['{"title": "Dune", "year": 1965, "authors": [{"name": "Frank H"}]}'],
    "arithmetic": ["(3+8-1)*3"],
    "a list": ["- red apple\n- pear\n- fig\n"],
    "function call (Llama 3)": ["[get_user_info(user_id=7890, special='black')]"],
    "think, then answer": ['<think>Paris, of course.</think>\n{"city": "Paris", "n": 2}'],
    "chess moves": ["1. e4 e5 2. Nf3 Nc6 3. Bb5 a6"],
}
EXTRA = "(){}[]\"',:;=+-*/.0123456789aeNxO# \n\t<>é"


def grammars():
    for path in sorted(CASES.glob("*.*")):
        if path.suffix in (".gbnf", ".lark"):
            yield path.name, compile_grammar(path.read_text())
    for name, example in grammar_examples().items():
        yield name, compile_grammar(example.grammar, example.format)


@pytest.mark.parametrize("name,grammar", list(grammars()), ids=lambda x: str(x)[:24])
def test_the_chart_agrees_with_the_recognizer(name: str, grammar) -> None:
    net = build_network(grammar)
    rng = random.Random(name)
    checked = 0
    for sentence in SENTENCES.get(name, []):
        assert grammar.accepts(sentence), f"the sample is not a sentence: {sentence!r}"
        chart = Chart.start(net)
        for k in range(len(sentence) + 1):
            texts = [sentence[:k]] + [sentence[:k] + c for c in rng.sample(EXTRA, 6)]
            for text in texts:
                mine = chart.after(text[k:]) if len(text) > k else chart
                assert mine.is_prefix == grammar.is_prefix(text), (name, text)
                assert mine.accepts == grammar.accepts(text), (name, text)
                checked += 1
            if k < len(sentence):
                chart = chart.after(sentence[k])
    assert checked > 0 or name not in SENTENCES


def test_a_catastrophic_terminal_is_read_within_a_budget():
    """A terminal the DFA construction refuses (a lookahead) is read by backtracking:
    `(?=a)(a|a)+b` against 26 a's runs for minutes unbounded; bounded, it is not read."""
    import time

    from fsmviz.grammar.place import RegexReader

    started = time.monotonic()
    assert not RegexReader("(?=a)(a|a)+b").accepts("a" * 26)
    assert time.monotonic() - started < 5
