"""One idea, one place: a grammar part becomes a regex in one function, and llguidance meets
a vocabulary through one adaptor.

Before, three functions wrote a grammar part as a regex (``compile.regex_text``,
``network.node_regex``, ``to_lark._regex``), so one terminal was compiled twice, as
``[a-z]+`` by the Earley productions and as ``(?:(?:[a-z])+)`` by the network; now
``fsmviz.grammar.as_regex.node_regex`` writes it once, and ``compile_regex`` (cached by
text) builds it once.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from caches import clear_pattern_caches

import fsmviz.grammar.place as place
import fsmviz.grammar.productions as productions
from fsmviz import compile_grammar
from fsmviz.grammar.network import build_network

PACKAGE = Path(__file__).resolve().parents[1] / "fsmviz"

THINK = """start: "<think>" THOUGHT "</think>" object
THOUGHT: /[^<]{1,160}/
object: "{" pair ("," " "? pair)* "}"
pair: STRING ":" " "? value
value: STRING | NUMBER | object
STRING: /"[a-z]{0,30}"/
NUMBER: /-?[0-9]{1,6}/
"""
ARITHMETIC = """root   ::= expr
expr   ::= term ( ( "+" | "-" ) term )*
term   ::= factor ( ( "*" | "/" ) factor )*
factor ::= number | "(" expr ")"
number ::= [0-9]{1,6}
"""


@pytest.fixture
def compiled(monkeypatch) -> list[str]:
    """Every regex text the Earley productions and the network's reader compile."""
    texts: list[str] = []
    for module in (productions, place):
        real = module.compile_regex

        def spy(pattern: str, real=real):
            texts.append(pattern)
            return real(pattern)

        monkeypatch.setattr(module, "compile_regex", spy)
    clear_pattern_caches()
    yield texts
    clear_pattern_caches()


CASES = [(THINK, '<think>ok</think>{"a":-12}'), (ARITHMETIC, "(1+22)*333")]


@pytest.mark.parametrize("text,sentence", CASES, ids=["lark", "gbnf"])
def test_each_terminal_is_written_once_and_compiled_once(compiled, text, sentence) -> None:
    grammar = compile_grammar(text)
    assert grammar.accepts(sentence)  # the Earley productions compile the /regex/ terminals
    assert place.place_of(build_network(grammar), sentence).accepts  # the network's readers
    digits = [t for t in compiled if "0-9" in t]
    assert digits and len(set(digits)) == 1, digits  # one text for the number: one DFA
    assert not [t for t in compiled if t.startswith("(?:(?:")], compiled


def test_the_number_arc_reads_as_the_grammar_writes_it() -> None:
    net = build_network(compile_grammar(ARITHMETIC))
    (arc,) = [a for a in net.machine("number").arcs]
    assert arc.symbol.regex == arc.symbol.label == "[0-9]{1,6}"


def test_one_llguidance_tokenizer_adaptor() -> None:
    """``LLTokenizer`` and ``TokenizerWrapper`` are built in ``fsmviz/tokens/encoding.py``
    only: every part that runs llguidance over a vocabulary goes through it."""
    built = re.compile(r"\b(LLTokenizer|TokenizerWrapper)\(|llguidance\.hf\b")
    found = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if built.search(line)
    ]
    assert found and all(f.startswith("tokens/encoding.py:") for f in found), found
