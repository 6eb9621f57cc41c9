"""The naive judges make lazy quantifiers greedy before partial matching (issue 41).

The ``regex`` module's partial matching is wrong with lazy quantifiers:
``regex.fullmatch("ab+?bc", "abbcx", partial=True)`` matches, though no text beginning with
``abbcx`` matches ``ab+?bc``. Greedy and lazy quantifiers take the same texts under
``fullmatch``, so every naive judge that asks for a partial match (the token oracle of the
tests, ``naive_allows`` of the engine comparison, Learn's walk and naive set, the grammar's
regex terminals) asks it of ``greedy_quantifiers(pattern)``.
"""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import compile_oracle

from fsmviz import compile_regex
from fsmviz.automaton.syntax import greedy_quantifiers
from fsmviz.learn.naive import naive_allowed
from fsmviz.learn.walk import walk_string
from fsmviz.peers.regex import naive_allows
from fsmviz.tokens.vocab import Vocabulary


def test_the_regex_module_still_errs_on_lazy_partial_matches() -> None:
    """The bug this works around (if a fixed ``regex`` makes this fail, the rewrite is
    merely unnecessary, not wrong)."""
    assert regex.fullmatch("ab+?bc", "abbcx", partial=True) is not None
    assert regex.fullmatch("ab+bc", "abbcx", partial=True) is None


def test_the_issues_example_is_judged_right_everywhere() -> None:
    assert naive_allows("ab+?bc", b"abbc", b"x") is False
    assert naive_allows("ab+?bc", b"ab", b"bc") is True
    walk = walk_string(compile_regex("ab+?bc"), "abbcx")
    assert walk.verdict == walk.python == "dead" and walk.agrees and walk.reason is None
    assert compile_oracle("ab+?bc").fullmatch("abbcx", partial=True) is None
    vocab = Vocabulary.from_strings(["a", "b", "c", "x", "bc"], eos_token="</s>")
    assert naive_allowed("ab+?bc", vocab, "abbc") == (vocab.eos_token_id,)


def test_what_is_not_a_lazy_quantifier_stays() -> None:
    for pattern in (r"[+?]x", r"\+?", r"(?:a)", r"(?i)a", r"(?P<n>a)", r"a{x}?", r"\??", "ab"):
        assert greedy_quantifiers(pattern) == pattern
    assert greedy_quantifiers(r"[a+?]+?\d*?(?:b|c){1,2}?") == r"[a+?]+\d*(?:b|c){1,2}"
    assert greedy_quantifiers(r"(?>a+?)b|c+?") == r"(?>a+?)b|c+?"  # atomic: left alone
    assert greedy_quantifiers(r"a++?") == r"a++?"  # possessive: left alone


ATOMS = st.sampled_from(["a", "b", "c", "[ab]", "\\?", "[?+]", "."])
QUANTIFIERS = st.sampled_from(["", "*", "+", "?", "{1,2}", "{2}", "{,2}", "{0,}"])


@st.composite
def patterns(draw: st.DrawFn, depth: int = 2) -> str:
    """Small regexes over a, b, c with quantifiers, half of them lazy."""
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        if depth and draw(st.integers(0, 4)) == 0:
            atom = f"(?:{draw(patterns(depth - 1))}|{draw(patterns(depth - 1))})"
        else:
            atom = draw(ATOMS)
        quantifier = draw(QUANTIFIERS)
        lazy = "?" if quantifier and draw(st.booleans()) else ""
        parts.append(atom + quantifier + lazy)
    return "".join(parts)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(pattern=patterns(), text=st.text(alphabet="abc?+", max_size=7))
def test_greedy_takes_the_same_texts_and_its_partial_matches_agree_with_the_dfa(
    pattern: str, text: str
) -> None:
    greedy = greedy_quantifiers(pattern)
    lazy_match = regex.fullmatch(pattern, text) is not None
    assert (regex.fullmatch(greedy, text) is not None) == lazy_match
    # The DFA (fsmviz's own automaton) is the independent judge of "can still match".
    walk = walk_string(compile_regex(pattern), text)
    assert walk.verdict == walk.python, (pattern, text, walk.verdict, walk.python)
