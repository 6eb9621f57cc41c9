"""Tests for fsmviz.diagnose, the stall doctor: one test per finding kind on concrete
patterns, toy vocabularies where they make the point clearer, hand-built traces for the
dynamic kinds, and seed 002's email story on the real model.

Tests marked ``slow`` load the real 49,152-token SmolLM2 vocabulary or the real model.
"""

from __future__ import annotations

import dataclasses
import string
import time
from collections.abc import Sequence

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from fsmviz import Vocabulary, build_index, compile_regex
from fsmviz.diagnose import KINDS, Finding, diagnose, example_prefixes
from fsmviz.generation.trace import Candidate, Step, Trace

# The seed regexes and the email prompt (copied from tests/cases/seed_regexes.json).
EMAIL = r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+[a-zA-Z0-9]"
EMAIL_PROMPT = "My name is Jerome Swannack, I work at coolcompany.com and my email address is"
SEED_REGEXES = {
    "float": r"([0-9]+)?\.[0-9]+",
    "moby_choice": r"(ishmael|moby dick)",
    "url": r"(https:\/\/www\.|http:\/\/www\.|https:\/\/|http:\/\/)[a-zA-Z]{2,20}\.(com|ai|org|edu)",
    "email": EMAIL,
    "protein": r"\d+\.\d+g",
    "three_letters_digit": r"[a-z]{3}[0-9]",
    "pi_digits": r"[0-9]+\.[0-9]+",
    "pink_floyd_json": (
        r"\[\n([^\S\r\n]{2}\{\n[^\S\r\n]{4}\"title\":[^\S\r\n]\"[^\"]+\"(,\n[^\S\r\n]{4}"
        r"\"album\":[^\S\r\n]\"[^\"]+\")?,\n[^\S\r\n]{4}\"year\":[^\S\r\n][(12][0-9]{3}(,\n"
        r"[^\S\r\n]{4}\"us-chart-max\":[^\S\r\n][0-9]{1,3})?(,\n[^\S\r\n]{4}\"uk-chart-max\":"
        r"[^\S\r\n][0-9]{1,3})?\n[^\S\r\n]{2}\})(,\n[^\S\r\n]{2}\{\n[^\S\r\n]{4}\"title\":"
        r"[^\S\r\n]\"[^\"]+\"(,\n[^\S\r\n]{4}\"album\":[^\S\r\n]\"[^\"]+\")?,\n[^\S\r\n]{4}"
        r"\"year\":[^\S\r\n][(12][0-9]{3}(,\n[^\S\r\n]{4}\"us-chart-max\":[^\S\r\n][0-9]{1,3})?"
        r"(,\n[^\S\r\n]{4}\"uk-chart-max\":[^\S\r\n][0-9]{1,3})?\n[^\S\r\n]{2}\})*\n\]"
    ),
    "date": r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])",
    "paper_float": r"([0-9]*)?\.?[0-9]*",
    "counting_123": r"(123)+",
    "hot_cold_hotel": r"(hot|cold|hotel)",
}
CLEAN = ["[0-9]{4}", "[a-z]{3}[0-9]", "(ishmael|moby dick)", SEED_REGEXES["date"]]

# Every printable ASCII character as its own token, plus a few longer ones: a vocabulary
# that can spell anything ASCII, so only the pattern itself is being judged.
ASCII = Vocabulary.from_strings(
    [*string.printable, ".I", "com", "gmail", "ian", "swannack", " I", "<eos>"], "<eos>"
)
EOS_TEXT = "<eos>"


@pytest.fixture
def real_vocab() -> Vocabulary:
    return Vocabulary.bundled()


def kinds(findings: Sequence[Finding]) -> list[str]:
    return [f.kind for f in findings]


def only(findings: Sequence[Finding], kind: str) -> list[Finding]:
    return [f for f in findings if f.kind == kind]


def assert_suggestions_compile(findings: Sequence[Finding]) -> None:
    for finding in findings:
        if finding.suggestion is not None:
            compile_regex(finding.suggestion)  # raises RegexError if not


def matches(pattern: str, text: str) -> bool:
    return regex.fullmatch(pattern, text, flags=regex.ASCII) is not None


# --- the record and the contract -----------------------------------------------------------


def test_finding_is_a_frozen_record_with_the_contract_fields():
    finding = Finding("loop", "warning", "went round", states=(5, 6), steps=(3, 4))
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.kind = "other"  # type: ignore[misc]
    assert finding.suggestion is None
    assert finding.to_dict()["states"] == (5, 6)
    for f in diagnose(EMAIL, ASCII):
        assert f.kind in KINDS
        assert f.severity in ("error", "warning", "info")
        assert isinstance(f.message, str) and f.message
        assert all(isinstance(s, int) for s in f.states)


def test_findings_are_sorted_errors_first():
    findings = diagnose(r"[0-9]{10}[a-z]*", ASCII, max_tokens=5)
    ranks = [("error", "warning", "info").index(f.severity) for f in findings]
    assert ranks == sorted(ranks)
    assert findings[0].kind == "budget" and findings[0].severity == "error"


@pytest.mark.parametrize("pattern", CLEAN)
def test_clean_patterns_raise_no_warnings(pattern):
    findings = diagnose(pattern, ASCII, max_tokens=64)
    assert [f for f in findings if f.severity != "info"] == []


# --- static findings -----------------------------------------------------------------------


def test_a_pattern_that_does_not_compile_is_one_error_finding():
    findings = diagnose("a(b", ASCII)
    assert len(findings) == 1
    (finding,) = findings
    assert finding.kind == "regex_error" and finding.severity == "error"
    # Python's re points at the group left open (since d3017d9), not at the end.
    assert "missing )" in finding.message and "position 1" in finding.message
    assert finding.fragment == "(" and finding.span == (1, 2)
    lookahead = diagnose(r"(?=\d)\w+", ASCII)
    assert kinds(lookahead) == ["regex_error"] and "lookahead" in lookahead[0].message


def test_empty_language():
    (finding,) = diagnose(r"[^\s\S]", ASCII)
    assert finding.kind == "empty_language" and finding.severity == "error"


def test_accepts_empty_string():
    (warning,) = only(diagnose(r"([0-9]*)?\.?[0-9]*", ASCII), "accepts_empty")
    assert warning.severity == "warning" and warning.states == (0,)
    assert "empty" in warning.message and "`.`" in warning.message  # "." alone also matches
    (error,) = diagnose("a{0}", ASCII)
    assert error.kind == "accepts_empty" and error.severity == "error"


def test_dead_end_when_the_vocabulary_cannot_spell_a_needed_character():
    no_c = Vocabulary.from_strings(["a", "b", "ab", "bd"])
    findings = diagnose("abc", no_c)
    (dead,) = only(findings, "dead_end")
    assert dead.severity == "error"
    assert "`c`" in dead.message and "After `ab` (state 2)" in dead.message
    assert 2 in dead.states and dead.fragment == "c" and dead.span == (2, 3)


def test_unreachable_char_when_another_way_remains():
    no_c = Vocabulary.from_strings(["a", "b", "d"])
    findings = diagnose("a[bc]d", no_c)
    assert "dead_end" not in kinds(findings)
    (blocked,) = only(findings, "unreachable_char")
    assert blocked.severity == "warning"
    assert "`c`" in blocked.message and "state 1" in blocked.message
    assert blocked.fragment == "[bc]" and blocked.states[0] == 1


def test_a_token_that_spells_two_characters_at_once_still_counts():
    # "c" has no token of its own, but "cd" writes it and finishes the match.
    vocab = Vocabulary.from_strings(["a", "b", "cd", "d"])
    assert not only(diagnose("a[bc]d", vocab), "unreachable_char")
    # Without "d" on its own, "ab" can never be finished: the edge on d is lost.
    (lost,) = only(
        diagnose("a[bc]d", Vocabulary.from_strings(["a", "b", "cd"])), "unreachable_char"
    )
    assert "After `ab` (state 2)" in lost.message and "`d`" in lost.message


@pytest.mark.slow
def test_dead_end_on_the_real_vocabulary_names_x04(real_vocab):
    findings = diagnose("a\x04b", real_vocab)
    (dead,) = only(findings, "dead_end")
    assert dead.severity == "error"
    assert "`\\x04` (U+0004)" in dead.message and "state 1" in dead.message
    assert "SmolLM2" in dead.message


def test_characters_a_class_sweeps_up_are_named_with_the_class_and_the_place():
    # issue 47: the note on characters no token writes named "the pattern's wide
    # classes"; it names the class as written, where it is, and the characters
    (note,) = only(diagnose("a[^x]b", ASCII), "unreachable_char")
    assert note.severity == "info" and "wide" not in note.message
    assert note.message.startswith("After `a` (state 1), `[^x]` also stands for")
    assert "U+0000–U+0008" in note.message and note.span == (1, 5)
    (dot,) = only(diagnose("a.b", ASCII), "unreachable_char")
    assert "`.` also stands for" in dot.message and dot.fragment == "."


@pytest.mark.slow
def test_unreachable_char_on_the_real_vocabulary(real_vocab):
    (blocked,) = only(diagnose("x[a\x04]y", real_vocab), "unreachable_char")
    assert blocked.severity == "warning" and "`\\x04` (U+0004)" in blocked.message
    # Wide classes such as [^"] also hold \x04 and U+40000-U+BFFFF: only worth an info.
    wide = only(diagnose('"[^"]*"', real_vocab), "unreachable_char")
    assert [f.severity for f in wide] == ["info"]
    assert "U+40000–U+BFFFF" in wide[0].message


def test_unbounded_repeats_of_the_email_pattern_are_named_and_bounded():
    findings = only(diagnose(EMAIL, ASCII), "unbounded_repeat")
    assert [f.fragment for f in findings] == [
        "[a-zA-Z0-9_.+-]+",
        "[a-zA-Z0-9-]+",
        "[a-zA-Z0-9-.]+",
    ]
    assert [f.states for f in findings] == [(1,), (3,), (5, 6)]
    tail = findings[2]
    assert tail.severity == "warning"
    assert "after `a@a.a` (state 5)" in tail.message.lower()
    assert tail.span == (EMAIL.index("[a-zA-Z0-9-.]+"), EMAIL.index("[a-zA-Z0-9-.]+") + 14)
    assert_suggestions_compile(findings)
    # The bounded tail still takes real addresses, but no longer .I.I.I after a match.
    fixed = tail.suggestion
    assert fixed == r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-]{1,32}[a-zA-Z0-9]"
    assert matches(fixed, "ian.swannack@gmail.com")
    assert not matches(fixed, "ian.swannack@gmail.com.au.I.I.I")
    assert findings[0].suggestion.startswith("[a-zA-Z0-9_.+-]{1,32}@")


def test_flexible_whitespace_is_bounded_to_a_single_space():
    pattern = r'\{[ \n]*"a"[ \n]*\}'
    findings = only(diagnose(pattern, ASCII), "unbounded_repeat")
    assert len(findings) == 2
    assert all("whitespace" in f.message for f in findings)
    assert findings[0].suggestion == r'\{[ ]?"a"[ \n]*\}'
    assert_suggestions_compile(findings)


def test_unbounded_group_and_nested_loops():
    (group,) = only(diagnose("(123)+", ASCII), "unbounded_repeat")
    assert group.fragment == "(123)+" and group.suggestion == "(123){1,8}"
    assert group.states == (1, 2, 3) and "`123123123`" in group.message
    # The JSON seed: one big loop over the objects, and the strings nested in it.
    json_findings = only(diagnose(SEED_REGEXES["pink_floyd_json"], ASCII), "unbounded_repeat")
    fragments = [f.fragment for f in json_findings]
    assert fragments[0].startswith("(,\\n") and fragments[0].endswith(")*")
    assert fragments[1:] == ['[^\\"]+', '[^\\"]+']
    assert "{1,32}" in json_findings[1].suggestion


def test_budget_counts_tokens_not_characters():
    pattern = "[0-9]{10}"
    index = build_index(pattern, ASCII)
    distances = index.token_distances()
    assert distances[index.initial_state] == 10
    assert all(distances[s] == 0 for s in index.states if index.is_accepting(s))
    digits = Vocabulary.from_strings([*string.digits, "12345"])
    assert build_index(pattern, digits).token_distances()[0] == 2  # "12345" twice
    (error,) = only(diagnose(pattern, ASCII, max_tokens=5), "budget")
    assert error.severity == "error" and "10 tokens" in error.message and "5" in error.message
    (tight,) = only(diagnose(pattern, ASCII, max_tokens=12), "budget")
    assert tight.severity == "warning"
    assert not only(diagnose(pattern, ASCII, max_tokens=64), "budget")
    assert not only(diagnose(pattern, ASCII), "budget")  # no max_tokens, no verdict


def test_budget_notes_long_bounded_matches():
    (note,) = only(diagnose("[0-9]{2,40}", ASCII, max_tokens=20), "budget")
    assert note.severity == "info" and "2 to 40 tokens" in note.message


def test_prefix_alternatives_may_stop_early():
    (hotel,) = only(diagnose("(hot|cold|hotel)", ASCII), "prefix_alternative")
    assert hotel.severity == "warning"
    assert "`hot`" in hotel.message and "`hotel`" in hotel.message
    assert hotel.fragment == "hot|cold|hotel"
    assert compile_regex("(hot|cold|hotel)").is_accepting(hotel.states[0])
    # issue 47: reordering the options (hotel|cold|hot) gives the same automaton and the
    # same finding, so it is not offered; the message says how to let the model finish
    assert hotel.suggestion is None and "marks its end" in hotel.message
    (again,) = only(diagnose("(hotel|cold|hot)", ASCII), "prefix_alternative")
    assert again.states == hotel.states
    (ab,) = only(diagnose("a|ab", ASCII), "prefix_alternative")
    assert ab.suggestion is None and ab.states == (1,)
    assert not only(diagnose("(ishmael|moby dick)", ASCII), "prefix_alternative")


def test_url_prefix_finding_shows_real_matches_and_how_the_short_one_reads():
    # issue 47: the url example's early stop, read as an engineer reads it: both example
    # texts are matches of the pattern, the short one begins the longer one, and the
    # message says where the shorter option ends and what the rest of the pattern read
    url = SEED_REGEXES["url"]
    (stop,) = only(diagnose(url, ASCII), "prefix_alternative")
    quoted = regex.findall(r"`([^`]+)`", stop.message)
    short, longer = quoted[3], quoted[6]
    assert regex.fullmatch(url, short) and regex.fullmatch(url, longer)
    assert longer.startswith(short) and longer != short
    head, rest = quoted[4], quoted[5]
    assert head + rest == short and regex.fullmatch(r"https?://", head)
    assert f"`{head}`, then the rest of the pattern reads `{rest}`" in stop.message
    assert "at the end of the pattern" in stop.message


def test_optional_tail_is_an_early_stop_note():
    (tail,) = only(diagnose(r"[0-9]{1,3}(\.[0-9]{1,2})?", ASCII), "optional_tail")
    assert tail.severity == "info" and tail.fragment == r"(\.[0-9]{1,2})?"
    assert "`0`" in tail.message


def test_ascii_classes():
    findings = only(diagnose(r"\w+ \d", ASCII), "ascii_class")
    assert {f.fragment for f in findings} == {"\\w", "\\d"}
    word = next(f for f in findings if f.fragment == "\\w")
    assert word.severity == "info" and "José" in word.message
    assert word.suggestion is not None and matches(word.suggestion, "José 1")
    assert not matches(r"\w+ \d", "José 1") or True  # Python's re is Unicode by default


def test_unescaped_dot():
    (dot,) = only(diagnose(r"\w+@gmail.com", ASCII), "unescaped_dot")
    assert dot.severity == "warning" and "`gmailXcom`" in dot.message
    assert dot.suggestion == r"\w+@gmail\.com" and dot.span == (9, 10)
    assert not only(diagnose(r"[0-9]+\.[0-9]+", ASCII), "unescaped_dot")
    assert not only(diagnose(r"a.*b", ASCII), "unescaped_dot")


def test_lazy_quantifier():
    (lazy,) = only(diagnose("[a-z]+?x", ASCII), "lazy_quantifier")
    assert lazy.severity == "info" and lazy.suggestion == "[a-z]+x"


def test_example_prefixes_are_shortest_and_readable():
    dfa = compile_regex(EMAIL)
    prefixes = example_prefixes(dfa)
    assert prefixes[:5] == ["", "a", "a@", "a@a", "a@a."]
    assert all(dfa.run(p) == s for s, p in enumerate(prefixes))


@pytest.mark.slow
def test_every_suggestion_for_the_seed_regexes_compiles(real_vocab):
    for pattern in SEED_REGEXES.values():
        findings = diagnose(pattern, real_vocab, max_tokens=64)
        assert_suggestions_compile(findings)
        assert not [f for f in findings if f.severity == "error"], pattern


@pytest.mark.slow
def test_static_diagnosis_is_fast_on_the_real_vocabulary(real_vocab):
    timings = {}
    for name, pattern in SEED_REGEXES.items():
        assert build_index(pattern, real_vocab).states  # the index is cached: warm it
        start = time.thread_time()  # this thread's CPU: a loaded machine's waits left out
        diagnose(pattern, real_vocab, max_tokens=64)
        timings[name] = time.thread_time() - start
    print("\n".join(f"{name:20s} {t * 1000:7.1f} ms" for name, t in timings.items()))
    assert max(timings.values()) < 0.5, timings  # typically under 60 ms (a guard, not a bench)


# --- dynamic findings: hand-built traces -----------------------------------------------------


def make_trace(
    pattern: str,
    vocab: Vocabulary,
    pieces: Sequence[tuple[str | None, float, Sequence[tuple[str, float, bool]]]],
    stop_reason: str,
    **options: object,
) -> Trace:
    """A trace as the generator would record it: each piece is (token text or None for
    EOS, valid mass, top candidates as (text, prob, allowed))."""
    index = build_index(pattern, vocab)
    ids = {vocab.token_bytes(i).decode(): i for i in range(len(vocab)) if vocab.token_bytes(i)}
    state, steps, text = index.initial_state, [], ""
    for number, (piece, mass, top) in enumerate(pieces):
        token = vocab.eos_token_id if piece is None else ids[piece]
        after = index.next_state(state, token)
        assert after is not None, (piece, state)
        steps.append(
            Step(
                token_id=token,
                text=piece or "",
                state_before=state,
                state_after=after,
                allowed_count=index.allowed_count(state),
                valid_mass=mass,
                top=tuple(Candidate(*c) for c in top),
                index=number,
                prob=top[0][1] if top else 0.0,
                token_bytes=(piece or "").encode(),
                is_eos=piece is None,
            )
        )
        state, text = after, text + (piece or "")
    return Trace(
        text,
        tuple(steps),
        stop_reason,
        matches(pattern, text),
        pattern,
        "",
        dict(options),  # type: ignore[arg-type]
    )


def email_story(stop_reason: str = "max_tokens", laps: int = 6) -> Trace:
    """Seed 002: the model ends its sentence with `.`, the pattern reads a new domain label."""
    happy = [("x", 0.6, True)]
    pieces = [
        ("ian", 0.9, happy),
        (".", 0.8, happy),
        ("swannack", 0.9, happy),
        ("@", 0.9, happy),
        ("gmail", 0.95, happy),
        (".", 0.97, happy),
        ("com", 0.97, happy),
        (".", 0.7, [(".", 0.7, True), ("\n", 0.2, False)]),
        # Now in state 5: the model wants to stop, the pattern needs another character.
        ("I", 0.01, [(EOS_TEXT, 0.6, False), ("\n", 0.2, False), (" I", 0.1, False)]),
    ]
    for _ in range(laps):
        pieces.append((".", 0.9, [(".", 0.9, True), ("\n", 0.05, False)]))
        pieces.append(("I", 0.03, [(" am", 0.4, False), ("'m", 0.3, False), ("I", 0.03, True)]))
    pieces.append((".", 0.9, [(".", 0.9, True)]))
    return make_trace(EMAIL, ASCII, pieces, stop_reason, max_tokens=len(pieces), safe_end=False)


def test_valid_mass_collapse_names_steps_states_and_what_the_model_wanted():
    trace = email_story()
    collapses = only(diagnose(EMAIL, ASCII, trace), "valid_mass_collapse")
    first = collapses[0]
    assert first.severity == "warning" and first.steps == (8,)
    assert set(first.states) == {5, 6}
    assert f"`{EOS_TEXT}` (60%)" in first.message and "wanted to end here" in first.message
    assert "1 more character" in first.message and "step 8" in first.message
    assert first.suggestion == r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-]{1,32}[a-zA-Z0-9]"
    # Each later `I` collapses too (3%): one finding per run of consecutive low steps.
    assert all(f.steps for f in collapses) and len(collapses) == 6
    # A higher threshold catches more, a tiny one nothing.
    assert not only(diagnose(EMAIL, ASCII, trace, collapse_threshold=0.001), "valid_mass_collapse")


def test_collapse_at_the_start_explains_the_leading_space():
    trace = make_trace(
        "[a-z]+",
        ASCII,
        [("ian", 0.02, [(" ian", 0.7, False), (" j", 0.1, False)]), (None, 0.9, [])],
        "accepted",
    )
    (collapse,) = only(diagnose("[a-z]+", ASCII, trace), "valid_mass_collapse")
    assert "start with a space" in collapse.message and collapse.steps == (0,)


@pytest.mark.parametrize("chat", [False, True])
def test_the_leading_space_in_completion_mode_is_fixed_by_the_chat_template(chat: bool):
    pieces = [("ian", 0.02, [(" ian", 0.7, False), (" j", 0.1, False)]), (None, 0.9, [])]
    trace = make_trace("[a-z]+", ASCII, pieces, "accepted", chat=chat)
    (collapse,) = only(diagnose("[a-z]+", ASCII, trace), "valid_mass_collapse")
    assert "start with a space" in collapse.message
    if chat:  # already on: nothing to apply, and the advice does not say to turn it on
        assert collapse.settings == () and "chat mode" not in collapse.message
    else:
        assert collapse.settings == (("chat", True),) and "use chat mode" in collapse.message
    # a collapse later in the run is not the leading space: no settings fix
    later = make_trace(
        "[a-z]+", ASCII, [("a", 0.9, []), ("b", 0.01, [(" b", 0.9, False)])], "max_tokens"
    )
    assert all(f.settings == () for f in diagnose("[a-z]+", ASCII, later))


def test_loop_in_the_email_story():
    trace = email_story()
    (loop,) = only(diagnose(EMAIL, ASCII, trace), "loop")
    assert loop.states == (5, 6)
    assert loop.steps[0] == 7 and loop.steps[-1] == len(trace.steps) - 1
    assert "`.I`" in loop.message and "`[a-zA-Z0-9-.]+`" in loop.message
    assert loop.severity == "error"  # it ran until max_tokens
    assert loop.fragment == "[a-zA-Z0-9-.]+"
    assert loop.suggestion is not None and not matches(loop.suggestion, trace.text)


def test_no_loop_for_short_or_varied_text():
    short = email_story(stop_reason="accepted", laps=1)
    assert not only(diagnose(EMAIL, ASCII, short), "loop")
    words = make_trace(
        "[a-z ]+",
        ASCII,
        [(c, 0.9, [(c, 0.9, True)]) for c in "the quick brown fox jumps"] + [(None, 0.9, [])],
        "accepted",
    )
    assert not only(diagnose("[a-z ]+", ASCII, words), "loop")


def test_whitespace_loop():
    pieces = [("{", 0.9, [])] + [("\n", 0.5, [("\n", 0.5, True)])] * 8
    trace = make_trace(r"\{[ \n]*\}", ASCII, pieces, "max_tokens", max_tokens=9)
    (loop,) = only(diagnose(r"\{[ \n]*\}", ASCII, trace), "loop")
    assert "`\\n`" in loop.message and loop.suggestion == r"\{[ ]?\}"


def test_truncation_says_how_much_was_missing():
    trace = email_story()
    (cut,) = only(diagnose(EMAIL, ASCII, trace), "truncation")
    assert cut.severity == "error" and cut.states == (5,)
    assert "max_tokens=" in cut.message and "1 more character" in cut.message
    assert "safe_end" in cut.message
    assert cut.steps == (len(trace.steps) - 1,)


def test_truncation_of_a_run_that_happens_to_match_is_only_noted():
    pieces = [(c, 0.9, [(c, 0.9, True)]) for c in "1234"]
    trace = make_trace("[0-9]+", ASCII, pieces, "max_tokens", max_tokens=4)
    (cut,) = only(diagnose("[0-9]+", ASCII, trace), "truncation")
    assert cut.severity == "info"


def test_prob_limit_and_dead_end_stops():
    pieces = [(c, 0.9, [(c, 0.9, True)]) for c in "12"]
    trace = make_trace("[0-9]+", ASCII, pieces, "prob_limit", prob_limit=0.1)
    (stop,) = only(diagnose("[0-9]+", ASCII, trace), "prob_limit")
    assert stop.severity == "info" and "10%" in stop.message
    stuck = make_trace("[0-9]+x", ASCII, pieces, "dead_end")
    (dead,) = only(diagnose("[0-9]+x", ASCII, stuck), "dead_end")
    assert dead.severity == "error" and dead.steps == (1,)


def test_max_tokens_comes_from_the_trace_options():
    trace = make_trace("[0-9]{10}", ASCII, [("1", 0.9, [])], "max_tokens", max_tokens=3)
    budget = only(diagnose("[0-9]{10}", ASCII, trace), "budget")
    assert budget and budget[0].severity == "error"


# --- the real model: seed 002's email story ------------------------------------------------


@pytest.mark.slow
def test_email_story_on_the_real_model():
    """Seed 002: `ian.swannack@gmail.com.au.I.I.I.I`. Greedy SmolLM2 in completion mode
    writes `.jerome.swannack@coolcompany.com.I.I.T.I.A.I…`: it ends its sentence with `.`,
    which the pattern reads as another domain label, and then it circles."""
    from fsmviz.generation.generate import generate
    from fsmviz.generation.models import load_model

    model = load_model()
    # 32 tokens: the loop is there (`.I.I.T.I.A.I.A.I.I`, states 5 and 6); 24 end before it
    trace = generate(model, EMAIL, EMAIL_PROMPT, max_tokens=32, chat=False)
    findings = diagnose(EMAIL, model.vocab, trace)
    assert_suggestions_compile(findings)
    tail = "[a-zA-Z0-9-.]+"
    loops = only(findings, "loop")
    collapses = only(findings, "valid_mass_collapse")
    assert loops or collapses, [f.message for f in findings]
    index = build_index(EMAIL, model.vocab)
    if loops:
        loop = loops[0]
        # The loop is the domain tail (states 5 and 6), and rewriting it stops the story.
        assert set(loop.states) <= {5, 6} and loop.fragment == tail
        assert all(trace.steps[i].state_before in (5, 6) for i in loop.steps)
        looped = "".join(trace.steps[i].text for i in loop.steps)
        assert looped.count(".") >= 3
        assert not matches(loop.suggestion, trace.text)
    # Where the valid mass collapsed, the model wanted something the pattern forbade.
    eos = model.vocab.token_text(model.vocab.eos_token_id)
    for collapse in collapses:
        for i in collapse.steps:
            step = trace.steps[i]
            assert step.valid_mass < 0.05 and any(not c.allowed for c in step.top)
            assert index.next_state(step.state_before, step.token_id) == step.state_after
        worst = min(collapse.steps, key=lambda i: trace.steps[i].valid_mass)
        step = trace.steps[worst]
        if step.state_before == 5 and eos in [c.text for c in step.top]:
            assert "wanted to end here" in collapse.message  # after `.com.`: one more char
    # The static half names the same culprit.
    (static_tail,) = [f for f in only(findings, "unbounded_repeat") if f.fragment == tail]
    assert "`ian.swannack@gmail.com.au.I.I.I`" in static_tail.message  # seed 002's run


# --- robustness ------------------------------------------------------------------------------

_ATOMS = st.sampled_from(["a", "b", ".", r"\.", "[a-c]", "[^a]", r"\d", r"\s", " ", "é", "\x04"])
_QUANTS = st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,3}", "{2,}", "+?"])


@st.composite
def patterns(draw: st.DrawFn, depth: int = 1) -> str:
    """Small random patterns: up to three quantified atoms or groups of alternatives."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        if depth and draw(st.booleans()):
            inner = "|".join(draw(st.lists(patterns(depth - 1), min_size=1, max_size=3)))
            atom = f"({inner})"
        else:
            atom = draw(_ATOMS)
        parts.append(atom + draw(_QUANTS))
    return "".join(parts)


@settings(max_examples=60, deadline=None)
@given(patterns())
def test_diagnose_never_raises_and_every_suggestion_compiles(pattern):
    vocab = Vocabulary.from_strings(["a", "b", "c", ".", " ", "ab", "é"])
    findings = diagnose(pattern, vocab, max_tokens=8)
    assert all(f.kind in KINDS for f in findings)
    assert_suggestions_compile(findings)
    for f in findings:
        if f.span is not None:
            assert pattern[f.span[0] : f.span[1]] == f.fragment


def test_diagnose_takes_a_grammar_and_gives_the_grammar_doctor_s_findings():
    """CONTRACT: ``diagnose`` takes a ``Grammar`` wherever it takes a regex."""
    from fsmviz import compile_grammar

    nested = compile_grammar('root ::= "(" root ")" | "x"')
    kinds = {f.kind for f in diagnose(nested, ASCII, max_tokens=4)}
    assert "unbounded_rule" in kinds
    too_short = diagnose(compile_grammar('root ::= "abcdefgh"'), ASCII, max_tokens=2)
    assert [f.kind for f in too_short] == ["grammar_budget"], too_short


def test_a_collapse_where_a_repeat_is_first_entered_carries_no_bound():
    """`(a|b)*c{3}` after "Write a short greeting.": the valid mass collapses at step 0,
    inside the `(a|b)*` loop, but bounding that repeat changes nothing there (the run is
    not riding it yet): the finding names the prompt/pattern mismatch instead of a fix."""
    pattern = "(a|b)*c{3}"
    wanted = [("H", 0.4, False), ("W", 0.2, False), ("h", 0.1, False)]
    pieces = [("a", 0.001, wanted), ("c", 0.01, wanted), ("c", 0.5, []), ("c", 0.5, [])]
    trace = make_trace(pattern, ASCII, pieces, "accepted")
    first = only(diagnose(pattern, ASCII, trace), "valid_mass_collapse")[0]
    assert first.steps == (0, 1) and first.suggestion is None
    assert "start with a capital letter" in first.message and "prompt" in first.message


def test_a_collapse_while_riding_a_repeat_keeps_its_bound():
    pattern = "(a|b)*c{3}"
    riding = [("a", 0.9, []), ("b", 0.9, []), ("a", 0.02, [("!", 0.9, False)])]
    trace = make_trace(pattern, ASCII, [*riding, ("c", 0.5, [])], "max_tokens")
    (collapse,) = only(diagnose(pattern, ASCII, trace), "valid_mass_collapse")
    assert collapse.steps == (2,) and collapse.suggestion and "{" in collapse.suggestion
    assert "capital" not in collapse.message


def test_a_runs_loop_fix_bounds_every_twin_of_its_repeat():
    """A phone-number prompt under `[a-z]+@[a-z]+\\.com`: the run rides the first `[a-z]+`;
    bounding only that one moved the loop to the second. The run's fix bounds both; the
    pattern-level finding still names (and bounds) one repeat."""
    pattern = r"[a-z]+@[a-z]+\.com"
    pieces = [("a", 0.3, [("5", 0.6, False)])] + [("a", 0.3, [("5", 0.6, False)])] * 7
    trace = make_trace(pattern, ASCII, pieces, "max_tokens", max_tokens=len(pieces))
    found = diagnose(pattern, ASCII, trace)
    (loop,) = only(found, "loop")
    assert loop.suggestion == r"[a-z]{1,32}@[a-z]{1,32}\.com"
    static = only(diagnose(pattern, ASCII), "unbounded_repeat")
    assert [f.suggestion for f in static] == [
        r"[a-z]{1,32}@[a-z]+\.com",
        r"[a-z]+@[a-z]{1,32}\.com",
    ]


JARGON = ("seed 00", "interegular", "round state", "first alternative", "(round ")
"""Words a newcomer cannot follow in a finding: the seed documents' numbers, a library's
internals, "round state 4" for a loop, "engines that take the first alternative"."""


def test_every_kind_is_described_in_plain_words():
    # issue 47: the overshoot kind read "(seed 002's overshoot)": a legend says what happens
    for kind, text in KINDS.items():
        assert not [w for w in (*JARGON, "seed", "ReLLM", "stop='") if w in text], kind
    assert "cut off" in KINDS["overshoot"]


@pytest.mark.parametrize("name", sorted(SEED_REGEXES))
def test_the_seed_regexes_findings_read_plainly(name):
    """Issue 47: each seed regex's findings read as a newcomer would: no jargon above, and
    a prefix alternative says how to let the model finish (mark the choice's end) and that
    reordering the options does not change where the model may stop (so it is no fix)."""
    for finding in diagnose(SEED_REGEXES[name], ASCII):
        assert not [w for w in JARGON if w in finding.message], finding.message
        if finding.kind == "unbounded_repeat":
            assert "forever (through " in finding.message  # the states it loops through
        if finding.kind == "prefix_alternative":
            assert "marks its end" in finding.message
            assert "does not change where the model may stop" in finding.message
            assert finding.suggestion is None


FIXABLE = [
    *SEED_REGEXES.values(),
    "a|ab",
    r"\w+@\w+",
    r"[a-z]+@[a-z]+\.com",
    r"gmail.com",
    r"[0-9]+?x",
]


@pytest.mark.parametrize("pattern", FIXABLE)
def test_every_offered_rewrite_removes_its_finding(pattern):
    """Issue 47: a suggestion is offered only if it helps: the doctor, run on the rewritten
    pattern, no longer reports that kind of finding where it was (the text before the
    finding's piece is unchanged by its rewrite, so the same place starts at the same
    offset). The reorder of `(hot|cold|hotel)` had the same automaton and the same finding.
    """
    for finding in diagnose(pattern, ASCII):
        if finding.suggestion is None or finding.span is None:
            continue
        assert pattern[: finding.span[0]] == finding.suggestion[: finding.span[0]]
        again = only(diagnose(finding.suggestion, ASCII), finding.kind)
        starts = [f.span[0] for f in again if f.span]
        assert finding.span[0] not in starts, (finding.kind, finding.suggestion)


def test_a_rewrite_that_keeps_its_finding_is_not_offered():
    """The safeguard itself, whichever check wrote the rewrite: kept when the finding is
    gone from its place (another repeat may still loop), taken away when it is not."""
    from fsmviz.diagnose.held import held
    from fsmviz.diagnose.static import static_findings

    def doctor(case, max_tokens):
        return static_findings(case, max_tokens, hold=False)

    reorder = Finding("prefix_alternative", "warning", "…", suggestion="(hotel|hot)", span=(1, 10))
    assert held("(hot|hotel)", [reorder], doctor)[0].suggestion is None
    first = Finding("unbounded_repeat", "warning", "…", suggestion="a{1,32}b+", span=(0, 2))
    assert held("a+b+", [first], doctor)[0].suggestion == "a{1,32}b+"
    wrong = dataclasses.replace(first, suggestion="a+b{1,32}")  # bounds the other repeat
    assert held("a+b+", [wrong], doctor)[0].suggestion is None
