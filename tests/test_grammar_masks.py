"""llguidance's masks held to fsmviz's naive oracle over the whole bundled vocabulary.

A token is allowed after text P iff P + token is a prefix of a sentence (EOS iff P is a
sentence): ``naive_allowed``, decided by fsmviz's own Earley recognizer. Each comparison
says which tokens only one side allows, with the prefix, when they differ.

Two differences are known and pinned:

* llguidance *forces*: where the text ahead is fixed it allows only that text's first token
  as its tokenizer spells it (after ``{"a": t`` only ``rue``; the definition also allows
  ``r`` and ``ru``). fsmviz fast-forwards those steps, so sampling never meets them.
* llguidance lets Lark's ``%ignore`` text come between terminals but not before the first
  one (Lark itself allows it there).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from fsmviz.grammar import compile_grammar
from fsmviz.grammar.matcher import GrammarMatcher, lltokenizer
from fsmviz.grammar.oracle import naive_allowed

pytestmark = pytest.mark.slow

CASES = Path(__file__).parent / "cases" / "grammars"


def grammar(name: str):
    return compile_grammar((CASES / name).read_text())


def differences(g, vocab, matcher: GrammarMatcher, prefix: bytes) -> str:
    """'' when both sides allow the same tokens, else what each side alone allows."""
    naive = set(naive_allowed(g, vocab, prefix).tolist())
    exact = set(matcher.allowed_tokens().tolist())
    if naive == exact:
        return ""
    ahead = matcher.forced_bytes()
    if ahead and exact and exact < naive:
        spelled = [vocab.token_bytes(t) for t in exact]
        if all(ahead.startswith(b) or b.startswith(ahead) for b in spelled):
            return ""  # llguidance forcing: the fixed text's own first token only

    def show(ids: set[int]) -> list[str]:
        return [vocab.token_text(i) for i in sorted(ids)[:12]]

    return (
        f"after {prefix!r}: only the oracle allows {show(naive - exact)} "
        f"({len(naive - exact)}), only llguidance allows {show(exact - naive)} "
        f"({len(exact - naive)})"
    )


def matcher_after(g, vocab, text: str) -> GrammarMatcher:
    matcher = GrammarMatcher(g, vocab)
    for token in matcher.tokenizer.tokenize_str(text):
        assert matcher.consume(token), (text, matcher.error())
    return matcher


SMALL = {
    "brackets.gbnf": ["", "(", "([", "([]", "([])", "(((((("],
    "json.gbnf": ["", "{", '{"a', '{"a": [1, tr', '{"a": "\\u00', '{"k": -1.5e', '{"a": {}}'],
    "arithmetic.gbnf": ["", "x", "(a+1", "a=", "a = b\n"],
    "list.gbnf": ["", "- ", "- milk\n", "- é"],
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_masks_agree_at_chosen_prefixes(name: str, bundled_vocab) -> None:
    g = grammar(name)
    problems = []
    for prefix in SMALL[name]:
        problems.append(differences(g, bundled_vocab, matcher_after(g, bundled_vocab, prefix),
                                    prefix.encode()))  # fmt: skip
    assert not any(problems), "\n".join(p for p in problems if p)


@pytest.mark.parametrize("name", ["json.gbnf", "chess.gbnf", "arithmetic.gbnf", "list.gbnf"])
def test_masks_agree_along_random_walks(name: str, bundled_vocab) -> None:
    """Walks that take a random allowed token each step (short tokens favoured, so the
    walk crosses many grammar positions), compared at every step; a step the first walk
    compared already (the same tokens: the start, often its first token) is not compared
    again (the oracle: ~0.5 CPU-s a step)."""
    g = grammar(name)
    rng = random.Random(7)
    problems, compared = [], set()
    for _ in range(2):
        matcher = GrammarMatcher(g, bundled_vocab)
        text, path = b"", ()
        for _ in range(6):
            if path not in compared:
                compared.add(path)
                problems.append(differences(g, bundled_vocab, matcher, text))
            allowed = [
                t for t in matcher.allowed_tokens().tolist() if t != bundled_vocab.eos_token_id
            ]
            if not allowed:
                break
            short = [t for t in allowed if len(bundled_vocab.token_bytes(t)) <= 2] or allowed
            token = rng.choice(short if rng.random() < 0.7 else allowed)
            assert matcher.consume(token)
            text, path = text + bundled_vocab.token_bytes(token), (*path, token)
    assert not any(problems), "\n".join(p for p in problems if p)


def test_gbnf_is_read_by_characters_not_greedy_lexemes(bundled_vocab) -> None:
    """Why fsmviz writes GBNF's Lark itself: llguidance's own GBNF import makes ``x`` a
    terminal and lexes it greedily, so after ``ab`` it will not end ``x`` at ``a`` and
    refuses ``abc`` (``a`` + ``bc``), a sentence; fsmviz's lowering keeps it."""
    import llguidance

    g = compile_grammar('root ::= x "bc"\nx ::= "a" | "ab"')
    assert g.accepts("abc") and g.accepts("abbc")
    theirs = llguidance.LLMatcher(
        lltokenizer(bundled_vocab), llguidance.grammar_from("gbnf", g.text), log_level=0
    )
    ids = theirs_ids = [bundled_vocab.all_token_bytes.index(c) for c in (b"a", b"b", b"c")]
    assert theirs.validate_tokens(theirs_ids) < 3  # llguidance's import: refused
    ours = GrammarMatcher(g, bundled_vocab)
    assert all(ours.consume(t) for t in ids) and ours.is_accepting()
    assert not differences(g, bundled_vocab, GrammarMatcher(g, bundled_vocab), b"")


def test_lark_masks_agree_but_for_leading_ignore(bundled_vocab) -> None:
    g = grammar("arithmetic.lark")
    for prefix in ["1 +", "(2*3", "-(1", "1 + 2 "]:
        assert not differences(g, bundled_vocab, matcher_after(g, bundled_vocab, prefix),
                               prefix.encode())  # fmt: skip
    naive = set(naive_allowed(g, bundled_vocab, b"").tolist())
    exact = set(GrammarMatcher(g, bundled_vocab).allowed_tokens().tolist())
    assert exact < naive
    only_naive = {bundled_vocab.token_text(t) for t in naive - exact}
    assert all(text.startswith(" ") for text in only_naive), only_naive


def test_forced_tokens_are_allowed_and_fixed(bundled_vocab) -> None:
    g = grammar("json.gbnf")
    matcher = matcher_after(g, bundled_vocab, '{"a": t')
    forced = matcher.forced()
    assert b"".join(bundled_vocab.token_bytes(t) for t in forced) == b"rue"
    assert matcher.forced_bytes() == b"rue"
    assert matcher.allowed_tokens().tolist() == [forced[0]]  # llguidance forces: not r, ru
    naive = naive_allowed(g, bundled_vocab, b'{"a": t').tolist()
    assert forced[0] in naive and len(naive) == 3  # the definition: r, ru, rue
