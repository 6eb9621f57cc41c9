"""Grammars that stand for huge text are refused or answered in milliseconds and megabytes
(issue 50): what a grammar can force is counted before anything is expanded
(``fsmviz.grammar.limits``), and completions are lengths and links, spelled only as far as
asked. Time and memory are asserted loosely (a busy 2-core machine), far below what the
bombs cost before: 6 GB and minutes."""

from __future__ import annotations

import io
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from fsmviz.cli import grammar_command
from fsmviz.diagnose.grammar import diagnose_grammar
from fsmviz.grammar import GrammarError, compile_grammar
from fsmviz.grammar.earley import MAX_COMPLETION_CHARS, recognizer
from fsmviz.grammar.limits import MAX_NESTING, MAX_SHORTEST_CHARS
from fsmviz.grammar.productions import Chars

SECONDS = 2.0
MEGABYTES = 100


def doubling(levels: int) -> str:
    """``root ::= rN``, ``r0 ::= "a"``, ``rK ::= rK-1 rK-1``: 2**N characters in 20 lines."""
    rules = [f"root ::= r{levels}", 'r0 ::= "a"']
    rules += [f"r{k} ::= r{k - 1} r{k - 1}" for k in range(1, levels + 1)]
    return "\n".join(rules)


BOMBS = {
    "a billion a (34 bytes)": ('root ::= (("a"{1000}){1000}){1000}', "'root'"),
    "doubling, 24 levels": (doubling(24), "'r17'"),
    "doubling, 40 levels": (doubling(40), "'r17'"),
    "a Lark cube": ('start: (("a"~1000)~1000)~1000', None),
    "nested groups": ("root ::= " + "(" * 3000 + '"a"' + ")" * 3000, "nest more than"),
    "nested Lark groups": ("start: " + "[" * 3000 + '"a"' + "]" * 3000, "nest more than"),
    "stacked repeats": ('root ::= "a"' + "{2}" * 300, "nests groups and repeats 300 deep"),
    "stacked %ignore repeats": ('start: "a"\n%ignore " "' + "~2" * 300, "an %ignore nests"),
    "a long forced row": ("root ::= " + " ".join(['"a"{1000}'] * 300), "300,000 characters"),
    "written-out repeats": ("root ::= " + " ".join(['"a"{0,1000}'] * 200), "400,200 symbols"),
    "many distinct repeats": (
        "root ::= " + " ".join(f'"a"{{0,{1000 - i}}}' for i in range(120)),
        "write out 112,860 characters",
    ),
}


@contextmanager
def bounded(seconds: float = SECONDS, megabytes: int = MEGABYTES) -> Iterator[None]:
    """Assert the block ran within ``seconds`` and peaked under ``megabytes`` of Python
    allocations (tracemalloc: what the bombs blew up was Python strings and lists)."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        yield
    finally:
        took = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert took < seconds, f"took {took:.2f} s"
    assert peak < megabytes * 2**20, f"peaked at {peak / 2**20:.0f} MB"


def refusal(call: Callable[[], object]) -> GrammarError:
    with bounded(), pytest.raises(GrammarError) as caught:
        call()
    return caught.value


@pytest.mark.parametrize("name", list(BOMBS))
def test_every_bomb_is_refused_in_the_library_naming_the_rule_and_the_bound(name: str) -> None:
    text, named = BOMBS[name]
    error = refusal(lambda: compile_grammar(text))
    if named:
        assert named in error.message
    assert (error.line is not None or "%ignore" in error.message) and error.hint
    # the library's other doors go through the same check
    refusal(lambda: compile_grammar(text).accepts("a"))


def test_the_refusal_names_where_the_bound_is_crossed_and_the_bound() -> None:
    error = refusal(lambda: compile_grammar(doubling(24)))
    assert error.message == (
        "the rule 'r17' cannot finish in fewer than 131,072 characters; fsmviz takes rules "
        f"that can finish within {MAX_SHORTEST_CHARS:,}"
    )
    assert (error.line, error.column) == (19, 1)  # r17's own line
    deep = refusal(lambda: compile_grammar("root ::= " + "(" * (MAX_NESTING + 1) + '"a"'))
    assert deep.column == 10 + MAX_NESTING  # the first ( past the bound


def test_a_grammar_just_inside_the_bounds_is_answered_by_length_then_text() -> None:
    with bounded():
        grammar = compile_grammar(doubling(16))  # one sentence of 65,536 characters
        chart = recognizer(grammar)
        assert chart.completion_length([chart.first]) == 2**16
        assert grammar.shortest_completion("aaa", limit=10) == "a" * 10
        assert grammar.shortest_completion("") == "a" * 2**16
        assert grammar.is_prefix("a" * 1000) and not grammar.accepts("a" * 1000)


def test_completions_deep_in_a_text_stay_lengths_and_links() -> None:
    # Every "(" owes a ")" and a 32,768-character rule: after 300 of them, 9.8 million
    # characters are owed. Rows of strings would copy them into every column (gigabytes).
    grammar = compile_grammar(
        'root ::= "(" root ")" big | "x"\n' + doubling(15).replace("root ::= r15", "big ::= r15")
    )
    text = "(" * 300
    with bounded(seconds=5):
        chart = recognizer(grammar)
        columns = chart.chart(text)
        owed = chart.completion_length(columns)
        cut = chart.completion(columns)
        head = chart.completion(columns, limit=40)
    assert owed == 1 + 300 * (1 + 2**15)
    assert len(cut) == MAX_COMPLETION_CHARS and head == "x)" + "a" * 38
    assert cut.startswith(head)


def test_the_command_line_refuses_a_bomb_and_prints_a_long_sentence_in_part(tmp_path) -> None:
    bomb = tmp_path / "bomb.gbnf"
    bomb.write_text(BOMBS["a billion a (34 bytes)"][0])
    out, err = io.StringIO(), io.StringIO()
    with bounded():
        status = grammar_command(str(bomb), out=out, err=err)
    assert status == 2 and not out.getvalue()
    assert (
        f"{bomb}:1:1: the rule 'root' cannot finish in fewer than 1,000,000,000" in err.getvalue()
    )
    long = tmp_path / "long.gbnf"
    long.write_text(doubling(16))
    out = io.StringIO()
    with bounded():
        assert grammar_command(str(long), out=out, err=io.StringIO()) == 0
    line = out.getvalue().splitlines()[-1]
    assert line.endswith("… (65,536 characters in all)") and len(line) < 2_100


def test_the_doctor_counts_a_long_shortest_sentence_instead_of_spelling_it() -> None:
    grammar = compile_grammar(doubling(16))
    with bounded():
        found = diagnose_grammar(grammar, max_tokens=64)
    budget = [f for f in found if f.kind == "grammar_budget"]
    assert budget and budget[0].severity == "error"


def test_surrogates_are_refused_as_no_text() -> None:
    for text in ("root ::= [\\uD800-\\uDFFF]", 'root ::= "\\uD800"', 'start: "\\udc00"'):
        error = refusal(lambda text=text: compile_grammar(text))
        assert "surrogate" in error.message and "U+D" in error.message
    # a class that holds other characters too is fine, and its sample is one of those
    grammar = compile_grammar("root ::= [\\uD800-\\uE000]")
    assert grammar.shortest_completion("") == "\ue000"
    assert Chars(((0xD800, 0xE005),)).sample() == "\ue000"


def test_the_page_link_check_answers_a_bomb_at_once() -> None:
    from fsmviz.html.grammar import grammar_findings, grammar_view

    for text, _ in BOMBS.values():
        with bounded():
            view = grammar_view(text)
            assert view.grammar is None and "error-box" in view.error
            assert grammar_findings(view, None, 64) == ()


def test_the_safe_end_counts_a_completion_no_budget_could_hold(tiny) -> None:
    from fsmviz.grammar.run import GrammarCursor

    cursor = GrammarCursor(compile_grammar(doubling(16)), tiny)  # 65,536 characters owed
    spelled: list[int] = []
    encode = cursor.encode
    cursor.encode = lambda text: spelled.append(len(text)) or encode(text)
    cursor.most = 64
    with bounded():
        need = cursor.need()
    assert need is not None and need > 64 and cursor.plan is None
    assert spelled == []  # counted, never spelled nor tokenized
    cursor.most = None  # no budget known: spelled and tokenized as before
    assert cursor.need() == len(cursor.plan or []) and spelled == [2**16]
