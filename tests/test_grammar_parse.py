"""Grammars in: GBNF and Lark read into the same tree; bad grammars refused with a place."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsmviz.grammar import GrammarError, compile_grammar
from fsmviz.grammar.compile import RULE_SHAPES, left_recursive, unreachable
from fsmviz.grammar.tree import Alt, CharSet, Literal, Repeat, RuleRef, Seq

CASES = Path(__file__).parent / "cases" / "grammars"


@pytest.mark.parametrize("path", sorted(CASES.glob("*.*[fk]")), ids=lambda p: p.name)
def test_every_case_grammar_compiles(path: Path) -> None:
    grammar = compile_grammar(path.read_text())
    assert grammar.format == path.suffix[1:]
    assert grammar.start in grammar.names


def test_gbnf_and_lark_read_the_same_pieces() -> None:
    gbnf = compile_grammar('root ::= "a" ( b | [^x] )* b?\nb ::= "b"{2,3}')
    lark = compile_grammar('start: "a" ( b | /[^x]/ )* b?\nb: "b"{2,3}')
    assert gbnf.rule("b").body == lark.rule("b").body == Repeat(Literal("b"), 2, 3)
    assert gbnf.rule("root").body == Seq(
        (
            Literal("a"),
            Repeat(Alt((RuleRef("b"), CharSet(((120, 120),), True))), 0, None),
            Repeat(RuleRef("b"), 0, 1),
        )
    )


def test_gbnf_escapes_and_multi_line_rules() -> None:
    grammar = compile_grammar('root ::=\n  "\\x41\\u00e9\\U0001F600" (\n  "a" |\n  "b" )\n')
    first = grammar.rule("root").body.items[0]
    assert first == Literal("Aé😀")
    assert grammar.accepts("Aé😀b") and not grammar.accepts("Aé😀c")


def test_the_full_code_point_range_reads_as_one_class() -> None:
    grammar = compile_grammar("root ::= [\\x00-\\U0010FFFF]")
    assert grammar.rule("root").body == CharSet(((0, 0x10FFFF),), False)


def test_lark_extras_read_and_dropped() -> None:
    grammar = compile_grammar(
        "?start: expr -> top\n"
        "expr.2: NUMBER\n"
        '    | expr "+" NUMBER\n'
        "%import common.NUMBER\n"
        "%ignore /[ \\t]+/\n"
        '%llguidance {"no_forcing": false}\n'
    )
    assert grammar.format == "lark" and grammar.rule("NUMBER").terminal
    assert left_recursive(grammar) == ["expr"]
    assert grammar.accepts("1 + 2.5 +3")


BAD = [
    ('root ::= "a" valu\nvalue ::= "b"', 1, 14, "never defined", "'value'"),
    ('root ::= a\na ::= "x" a', 2, 1, "no text can finish the rule 'a'", "ends"),
    ("root ::= [a-", 1, 10, "never closed", "]"),
    ('root ::= "a"\nroot ::= "b"', 2, 1, "defined twice", "|"),
    ('root ::= "a" <[12]>', 1, 14, "token references", "literal"),
    ('a ::= "x"', 1, 1, "no 'root' rule", "root ::= a"),
    ('root ::= "a"{5,2}', 1, 13, "wrong way round", "{2,5}"),
    ('root ::= "a"{5000}', 1, 13, "too large", "*"),
    ('start: x\nX: "a"', 1, 8, "never defined", "'X'"),
    ("start: <|im_end|>", 1, 8, "special tokens", "literal"),
    ('start: A\nA: a\na: "x"', 2, 4, "a terminal may use only terminals", "UPPERCASE"),
    ('start: A\nA: "x" A', 2, 1, "refers to itself", "rule"),
    ('start: %json {"type": "object"}', 1, 8, "", ""),
    ("start: /a(?=b)/", 1, 1, "cannot be used", ""),
    ('start[lazy]: "x"', 1, 1, "rule attributes", "lazy"),
]


@pytest.mark.parametrize("text,line,column,words,hint", BAD, ids=[b[0][:24] for b in BAD])
def test_bad_grammars_say_where_and_what_to_write(text, line, column, words, hint) -> None:
    with pytest.raises(GrammarError) as caught:
        compile_grammar(text)
    error = caught.value
    assert isinstance(error, ValueError)
    assert (error.line, error.column) == (line, column), str(error)
    assert words in error.message
    assert hint in (error.hint or "")


def test_limits_are_checked_before_reading() -> None:
    with pytest.raises(GrammarError, match="too long"):
        compile_grammar('root ::= "a"\n' + "#" * 60_000)
    many = "root ::= r0\n" + "".join(f'r{i} ::= "x" | r{i + 1}\n' for i in range(1_100))
    with pytest.raises(GrammarError, match="rules"):
        compile_grammar(many)


def test_unreachable_rules_are_listed_not_refused() -> None:
    assert unreachable(compile_grammar('root ::= "a"\nb ::= "b"')) == ["b"]


@pytest.mark.parametrize(
    ("text", "chosen", "looks"),
    [('start: "a" | "b"', "gbnf", "lark"), ('root ::= "a" | "b"', "lark", "gbnf")],
)
def test_a_grammar_read_in_the_wrong_format_says_which_format_it_looks_like(text, chosen, looks):
    """An example set Format to gbnf, then a pasted Lark grammar was refused with "expected
    ::= after the rule name 'start'" and nothing pointing at the Format choice."""
    with pytest.raises(GrammarError) as caught:
        compile_grammar(text, chosen)
    hint = caught.value.hint
    assert f'Set the format to "{looks}", or to "auto"' in hint
    assert "None" not in hint  # Python's word, not the Format choice a visitor sees
    assert RULE_SHAPES[looks] in hint and RULE_SHAPES[chosen] in hint  # how to tell
    assert compile_grammar(text).format == looks  # and told apart, it is read
    assert compile_grammar(text, "auto").format == looks  # the hint's "auto" is a format


def test_a_grammar_error_shows_its_line_with_a_caret():
    from fsmviz.html.grammar import grammar_error_html

    text = 'root ::= item\nitem ::= "a" )'
    with pytest.raises(GrammarError) as caught:
        compile_grammar(text)
    error = caught.value
    assert error.line == 2
    line, caret = error.excerpt(text).split("\n")
    assert line == 'item ::= "a" )' and caret.index("^") == error.column - 1
    assert "<pre>" in grammar_error_html(error, text) and "&quot;a&quot; )" in grammar_error_html(
        error, text
    )
