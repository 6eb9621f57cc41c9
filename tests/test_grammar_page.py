"""The grammar tab's pure parts: every example compiles, is drawn and has a place; what the
page writes is escaped; the step slider's place is the chart's. No browser, no model."""

from __future__ import annotations

import pytest

from fsmviz.app.examples import grammar_examples
from fsmviz.drawing.rules import lit_classes
from fsmviz.html.grammar import (
    grammar_findings,
    grammar_view,
    place_after,
    place_html,
    rules_html,
    terminal_html,
)

SAMPLES = {
    "nested JSON": '{"title": "Dune", "year": 1965, "authors": [{"name": "Fr',
    "arithmetic": "(3+8-1)*",
    "a list": "- apple\n- pear\n- ",
    "function call (Llama 3)": "[get_user_info(user_id=7890, special='bl",
    "think, then answer": '<think>Paris is the capital.</think>\n{"city": "Par',
    "chess moves": "1. e4 e5 2. Nf3 Nc6 3. B",
}


def test_there_are_the_six_examples_the_issue_asks_for() -> None:
    assert list(grammar_examples()) == list(SAMPLES)
    assert {e.format for e in grammar_examples().values()} == {"gbnf", "lark"}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_every_example_compiles_is_drawn_and_lit_along_a_sample_text(name: str) -> None:
    example = grammar_examples()[name]
    view = grammar_view(example.grammar, example.format)
    assert view.error == "" and view.network is not None
    assert view.grammar.is_prefix(SAMPLES[name])
    place = place_after(view, SAMPLES[name])
    assert place.is_prefix and place.stacks
    lit = rules_html(view, place)
    assert lit.startswith("<style>") and lit_classes(lit, "current") and lit_classes(lit, "top")
    assert "<li>" in place_html(place)
    assert not [f for f in grammar_findings(view, None) if f.severity == "error"]


def test_the_terminal_being_read_is_drawn_with_its_state_lit() -> None:
    example = grammar_examples()["think, then answer"]
    view = grammar_view(example.grammar, example.format)
    html = terminal_html(place_after(view, "<think>Par"))
    assert "Reading the terminal" in html and "THOUGHT" in html
    assert 'class="node state s' in html and " current" in html


def test_a_bad_grammar_is_an_error_with_its_line_and_never_a_traceback() -> None:
    view = grammar_view('root ::= "a" valu\n', "gbnf")
    assert view.network is None and "valu" in view.error and "line 1" in view.error
    assert "drawn here once" in rules_html(view)


def test_user_text_and_output_are_escaped() -> None:
    evil = "<img src=x onerror=alert(1)>"
    view = grammar_view(f'root ::= "{evil}" [a-z]*\n', "gbnf")
    assert view.error == ""
    assert "<img" not in rules_html(view)
    place = place_after(view, evil + "ab")
    for html in (place_html(place), rules_html(view, place)):
        assert "<img" not in html and "&lt;img" in html
    dead = place_after(view, "<script>")
    assert "<script" not in place_html(dead) and "nowhere" in place_html(dead)


def test_learn_the_dfa_grows_with_the_depth_and_the_grammar_does_not() -> None:
    from fsmviz.html.grammar import learn_html
    from fsmviz.learn.grammar import brackets_dfa, brackets_regex, brackets_rows

    rows = brackets_rows(6)
    assert [r.states for r in rows] == [2, 3, 4, 5, 6, 7]
    dfa = brackets_dfa(3)
    assert dfa.accepts("((()))()") and not dfa.accepts("(((())))") and not dfa.accepts("(()")
    assert len(brackets_regex(6)) > len(brackets_regex(3))
    html = learn_html(4)
    assert html.count("<tr") == 9 and "4 positions on the stack" in html  # header + 8 depths
    assert 'class="node state s4 current"' in html  # the DFA after (((( is in state 4
    assert lit_classes(html, "top") and len(lit_classes(html, "current")) >= 2


def test_parserllm_per_terminal_mask_loses_a_token_that_crosses_two_terminals() -> None:
    from fsmviz.grammar import compile_grammar
    from fsmviz.learn.grammar import compare_masks
    from fsmviz.tokens.vocab import Vocabulary

    # a toy vocabulary: `":` ends the key's string and begins the colon
    vocab = Vocabulary.from_strings(["{", '"', "a", "ab", ":", '":', "}", '"}', "1"])
    g = compile_grammar('root ::= "{" "\\"" [a-z]+ "\\"" ":" [0-9] "}"\n')
    found = compare_masks(g, vocab, '{"a')
    named = {vocab.token_text(t) for t in found.exact}
    assert named == {"a", "ab", '"', '":'}
    assert {vocab.token_text(t) for t in found.lost} == {'":'}
    assert found.per_terminal <= found.exact


def test_the_masks_view_names_the_lost_tokens_escaped() -> None:
    from fsmviz.html.grammar import masks_html
    from fsmviz.tokens.vocab import Vocabulary

    vocab = Vocabulary.from_strings(['"', "<b>", '<b>":', ":", "1"])  # a toy vocabulary
    view = grammar_view('root ::= "\\"" [<>a-z]+ "\\"" ":" [0-9]\n', "gbnf")
    html = masks_html(view, vocab, '"<b>')
    assert "&lt;b&gt;&quot;:" in html and '<b>"' not in html and "loses <b>1</b>" in html


def test_the_grammar_boxs_handler_draws_and_diagnoses_with_the_vocabulary() -> None:
    from fsmviz.app.grammar_page import on_grammar
    from fsmviz.tokens.vocab import Vocabulary

    class Models:  # what the handler asks of the page's BackgroundModel
        def vocabulary(self) -> Vocabulary:
            return Vocabulary.from_strings(list("ab"))  # a toy vocabulary: no `c`

    rules, doctor, error = on_grammar(Models(), 'root ::= "a" [ \\n]* "c"\n', "auto", 16)
    assert error == "" and "<svg" in rules
    assert 'data-kind="unspellable_terminal"' in doctor
    assert 'data-kind="looping_whitespace"' in doctor
