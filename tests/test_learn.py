"""The Learn view's engine (fsmviz.learn) and its HTML views.

The seeds' worked examples give the seeds' allowed sets at every step; the walk, the table
and the test strings agree with ``regex.fullmatch`` (ASCII classes, like the engine) on
random patterns; each construction stage is checked against what it claims.
"""

from __future__ import annotations

import regex
from hypothesis import given
from hypothesis import strategies as st
from test_index_properties import ASCII_ALPHABET, PROPERTY_SETTINGS, regex_trees

from fsmviz import Vocabulary, compile_regex
from fsmviz.automaton.dfa import compile_stages, set_bits
from fsmviz.html import learn as views
from fsmviz.learn import (
    TOY_EXAMPLES,
    ZipModel,
    byte_walk,
    check_tests,
    construction_frames,
    naive_vs_index,
    toy_view,
    transition_table,
    walk_string,
)
from fsmviz.learn.construction import positions_of
from fsmviz.learn.typed import toy_state

patterns = regex_trees(ASCII_ALPHABET)
texts = st.text(alphabet=[*ASCII_ALPHABET, "z"], max_size=6)


def allowed_strings(pattern: str, tokens: list[str], eos: str, history: list[str]) -> list[str]:
    vocab = Vocabulary.from_strings(tokens, eos)
    ids = [tokens.index(t) if t != eos else vocab.eos_token_id for t in history]
    return toy_view(pattern, vocab, ids).allowed_texts()


# --------------------------------------------------------------------- the seeds' examples


def test_seed_000_allowed_sets_at_every_step(seed_cases) -> None:
    case = seed_cases["toy_vocabularies"]["seed_000"]
    history: list[str] = []
    for token, allowed in case["walk"]:
        if token:
            history.append(token)
        assert allowed_strings(case["regex"], case["tokens"], "<eos>", history) == allowed


def test_seed_004_state_0_allowed(seed_cases) -> None:
    case = seed_cases["toy_vocabularies"]["seed_004"]
    allowed = allowed_strings(case["regex"], case["tokens"], "<eos>", [])
    # The empty text already matches ([0-9]*)?\.?[0-9]*, so the end token is allowed too.
    assert allowed == [*case["state_0_allowed"], "<eos>"]


def test_seed_004_after_point_two_and_after_one() -> None:
    e = TOY_EXAMPLES["seed 004: A . 42 .2 1"]
    # "If we start at .2 ... only 42 and 1"; "if we start at 1 ... 1 and 42, and ." (+ .2)
    assert allowed_strings(e.pattern, list(e.tokens), e.eos, [".2"]) == ["42", "1", "<eos>"]
    assert allowed_strings(e.pattern, list(e.tokens), e.eos, ["1"]) == [
        ".", "42", ".2", "1", "<eos>",
    ]  # fmt: skip


def test_seed_003_hot_cold_hotel_after_hot_only_e_or_the_end() -> None:
    e = TOY_EXAMPLES["seed 003: hot / cold / hotel"]
    tokens = list(e.tokens)
    assert allowed_strings(e.pattern, tokens, e.eos, []) == ["c", "h"]
    assert allowed_strings(e.pattern, tokens, e.eos, ["h", "o", "t"]) == ["e", "*"]
    assert allowed_strings(e.pattern, tokens, e.eos, ["h", "o", "t", "*"]) == []


def test_seed_000_table_has_its_states_and_blank_dead_entries() -> None:
    t = transition_table(compile_regex(r"([0-9]+)?\.[0-9]+"))
    assert t.classes == (".", "0-9")
    assert [(r.start, r.accepting, r.cells) for r in t.rows] == [
        (True, False, (1, 0)),
        (False, False, (None, 2)),
        (False, True, (None, 2)),
    ]
    html = views.table_html(r"([0-9]+)?\.[0-9]+")
    assert html.count("class='blank'") == 2


def test_seed_000_animation_23_37() -> None:
    w = walk_string(compile_regex(r"([0-9]+)?\.[0-9]+"), "23.37")
    assert w.path == (0, 0, 0, 1, 2, 2)
    assert (w.verdict, w.python) == ("match", "match")


# --------------------------------------------------------------------- construction


def test_stages_end_in_compile_regex_dfa_and_merges_are_sound() -> None:
    for pattern in (r"([0-9]+)?\.[0-9]+", "(hot|cold|hotel)", "a*b|ac", "x|y", "[^a]b{2,3}"):
        st_ = compile_stages(pattern)
        dfa = compile_regex(pattern)
        assert (st_.dfa.num_states, st_.dfa.accepting) == (dfa.num_states, dfa.accepting)
        assert [dict(r) for r in st_.dfa.transitions] == [dict(r) for r in dfa.transitions]
        minimal = st_.dfa.transitions
        for i, moves in enumerate(st_.pruned_moves):  # target -> bitset of classes
            m = st_.merged_into[i]
            assert (i in st_.pruned_accepting) == (m in st_.dfa.accepting)
            row = {k: st_.merged_into[t] for t, ks in moves.items() for k in set_bits(ks)}
            assert row == dict(minimal[m])
        # A subset state accepts exactly when it holds a last position (or is the start
        # of a pattern that matches the empty string).
        for s, subset in enumerate(st_.subsets):
            accepts = bool(subset & st_.last) or (s == 0 and st_.nullable)
            assert (s in st_.subset_accepting) == accepts


@PROPERTY_SETTINGS
@given(patterns)
def test_stages_agree_with_compile_regex_on_random_patterns(pattern: str) -> None:
    st_ = compile_stages(pattern)
    assert [dict(r) for r in st_.dfa.transitions] == [
        dict(r) for r in compile_regex(pattern).transitions
    ]
    assert len(set(st_.subsets)) == len(st_.subsets)  # each state a distinct set


def test_frames_step_through_every_stage_and_explain_merges() -> None:
    frames = construction_frames(r"([0-9]+)?\.[0-9]+")
    assert [f.stage for f in frames] == [
        "positions", *["subsets"] * 4, "pruning", "minimisation", "minimal",
    ]  # fmt: skip
    assert frames[0].legend == ((1, "0-9"), (2, "."), (3, "0-9"))
    assert frames[3].legend[-1] == (2, "{1}")  # state 2 = position 1, a digit read
    merge = frames[6]
    assert merge.marked == {0, 2}
    assert "States 0 and 2 merge into state 0: both not accepting" in merge.notes[1]
    assert positions_of(0b101) == [1, 3]


def test_construction_html_clamps_and_escapes() -> None:
    html, i = views.construction_html("<b>|x", 99)
    assert i == len(construction_frames("<b>|x")) - 1
    assert "<b>|x" not in html and "&lt;b&gt;" in html


# --------------------------------------------------------------------- walk, table, tests


@PROPERTY_SETTINGS
@given(patterns, texts)
def test_walk_agrees_with_dfa_run_and_regex(pattern: str, text: str) -> None:
    dfa = compile_regex(pattern)
    w = walk_string(dfa, text)
    end = dfa.run(text)
    assert (w.verdict == "dead") == (end is None)
    assert (w.verdict == "match") == dfa.accepts(text)
    if end is not None:
        assert w.path[-1] == end
    ascii_full = regex.fullmatch(pattern, text, flags=regex.ASCII) is not None
    ascii_partial = regex.fullmatch(pattern, text, flags=regex.ASCII, partial=True) is not None
    assert (w.verdict == "match") == ascii_full
    assert (w.verdict != "dead") == ascii_partial
    if w.verdict == "dead":
        state = w.steps[-1].before
        assert dfa.step(state, text[w.dead_at]) is None
        assert len(w.expected) == len(dfa.transitions[state])


@PROPERTY_SETTINGS
@given(patterns, st.lists(texts, max_size=4))
def test_table_and_test_strings_agree_with_regex(pattern: str, strings: list[str]) -> None:
    dfa = compile_regex(pattern)
    table = transition_table(dfa)
    for row in table.rows:
        for k, cell in enumerate(row.cells):
            assert cell == dfa.transitions[row.state].get(k)
    block = "\n".join(f"+ {s}" for s in strings)
    for result, s in zip(check_tests(dfa, block), [s for s in strings], strict=True):
        assert result.text == s
        assert result.dfa == (regex.fullmatch(pattern, s, flags=regex.ASCII) is not None)
        assert result.passed == result.dfa


def test_unicode_digit_disagreement_is_explained() -> None:
    dfa = compile_regex(r"\d+")
    w = walk_string(dfa, "٣")
    assert (w.verdict, w.python) == ("dead", "match")
    assert "ASCII" in (w.reason or "")
    (r,) = check_tests(dfa, "+ ٣")
    assert (r.passed, r.dfa, r.python) == (False, False, True)
    assert "ASCII" in (r.reason or "") and "[0-9]" in (r.reason or "")


def test_failing_expectation_names_the_dead_character() -> None:
    (r,) = check_tests(compile_regex("[0-9]+"), "+ 12a")
    assert not r.passed and "character 3 ('a')" in (r.reason or "") and "0-9" in r.reason


def test_walk_html_escapes_user_text_and_says_where_it_died() -> None:
    html = views.walk_html("[0-9]+", "1<script>")
    assert "<script>" not in html and "&lt;" in html
    assert "dead at character 2" in html


# --------------------------------------------------------------------- toy, zip, bytes, naive


def test_zip_model_logits_follow_compression_and_mask_the_probabilities() -> None:
    e = TOY_EXAMPLES["seed 000: a . .2 1"]
    vocab = e.vocabulary()
    model = ZipModel("1.1 1.1 1.1 1.1 1.1")
    view = toy_view(e.pattern, vocab, [3], model=model)
    assert view.logits == tuple(model.logits("1", [vocab.token_text(i) for i in range(5)]))
    assert view.probs[0] == 0.0 and view.probs[4] == 0.0  # "a" and the end: masked
    assert abs(sum(view.probs) - 1) < 1e-9
    assert view.sample(0) in view.allowed


def test_typed_logits_and_bad_input_give_clear_messages() -> None:
    p = r"[0-9]+\.[0-9]+"
    view, problem = toy_state(p, '["a", "1", "."]', "x", [], "typed", "0 5 0 0", "")
    assert view is not None and problem == ""
    assert view.probs == (0.0, 1.0, 0.0, 0.0)
    short = toy_state(p, '["a", "1", "."]', "x", [], "typed", "0 5", "")[1]
    assert short.startswith("2 logits for 4 tokens")
    assert "JSON" in toy_state(p, "[a", "x", [], "uniform", "", "")[1]
    html = views.toy_html(None, "<img src=x>", p)
    assert "<img" not in html and "&lt;img" in html


def test_a_split_character_walks_through_byte_states() -> None:
    dfa = compile_regex("[一-龥]+")
    bdfa, steps = byte_walk(dfa, [b"\xe6\x97", b"\xa5"])
    assert [s.token for s in steps] == [0, 0, 1]
    assert steps[-1].after is not None and bdfa.accepting[steps[-1].after]
    html = views.bytes_html("[一-龥]+", "e6 97 | a5")
    assert "inside a character" in html and "日" in html
    assert "hex" in views.bytes_html("[一-龥]+", "zz")


def test_naive_and_index_give_the_same_sets_on_a_toy_vocabulary() -> None:
    e = TOY_EXAMPLES["seed 000: a . .2 1"]
    vocab = e.vocabulary()
    _, steps = naive_vs_index(e.pattern, vocab, "1.21")
    assert [s.prefix for s in steps] == ["", "1", "1.2", "1.21"]
    assert all(s.naive == s.indexed for s in steps)
    assert [vocab.token_text(s.token) for s in steps[:-1]] == ["1", ".2", "1"]
