"""The first allowed set by derivatives (``fsmviz.tokens.fast.derivatives``), held to the index's.

``first_allowed_tokens(p, v)`` must equal ``build_index(p, v).allowed_tokens(0)`` for every
pattern: on the real vocabulary (the bench's patterns, the seeds, patterns whose tokens
end inside characters or walk deep), on a toy vocabulary of split characters (fuzzed), and
where it hands the answer to the index (``(?i)``, a class of no single-byte token, a class
that accepts nothing).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np
import pytest
from caches import forget_indexes
from hypothesis import given
from oracle import load_seed_cases
from test_fuzz import fuzz_settings, hostile_trees
from test_fuzz import toy as toy  # noqa: F401 (the fixture)

from fsmviz import RegexError, Vocabulary, build_index
from fsmviz.tokens.fast.derivatives import _NearStart, first_allowed_tokens
from fsmviz.tokens.index import built_index

HERE = Path(__file__).resolve().parent
EVERYDAY = [
    r"\(\d{3}\) \d{3}-\d{4}",
    r"((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)",
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    r"([A-Za-z]{1,12} ){2,10}[A-Za-z]{1,12}\.",  # chains of counted letters
    r"[a-z0-9]+(-[a-z0-9]+)*",  # a loop over a wide class
    r'\{"name": "[A-Za-z ]{1,30}", "age": \d{1,3}\}',
    r"\$\d{1,3}(,\d{3})*\.\d{2}",
]
CHARACTERS = [  # tokens that end inside a character, and classes of many bytes
    "日本|😀+",
    "[^\\x00]{2}",
    "é+a",
    "[\\u0100-\\uffff]+",
    "[\\U0001f600-\\U0001f64f]x",
    "[^a-z]*z",
    ".{3}",
    "(?s).{3}",
    "(?s).*",  # every character: one state per length left, not one per prefix
    "[^\\n]+",
    ".{0,40}",
    "[\\u00e0-\\u00ef]{2}",
]
DOT_LED = [  # every string of some bytes stays alive, whichever state it reaches (closure)
    ".*a",
    ".*(error|warning): [A-Za-z ]+",
    ".*[0-9]{3}",
    "(?s).*ab",
    "[^\\n]*é",
    ".*é+",
    "(a|b)*a(a|b)",
    "[a-z ]*(ab|ba)[a-z]{0,3}",
    '[a-z_]+="[^"]*"(, [a-z_]+="[^"]*")*',
    "([^,\\n]{1,20},){3}[^,\\n]{1,20}",
    # groups of bytes alike shared between states (``_NearStart._layout``), keywords
    # after a loop over every byte
    ".*(error|warning|fatal)[0-9]{2}",
    "([^;\\n]{1,9};){2}[^;\\n]{0,5}",
    ".*(é|日本)(ab|cd)",
    "[^\\u00e9]*é.",
    "(.|é){2,5}x",
    "[^ ]{1,8} .*x[a-z]{0,3}",
    "([^,]{0,3},|.){1,4}",
    # an option ``X*R`` keeps a state alive under X's ASCII
    "[a-c]*(ab|b)c|x[0-9]",
    "(x|[^\\n]*(error|warning)): [A-Z]+",
    "[a-z ]*[A-Z]{2}|[0-9]*!",
]
EDGES = ["", "a*", "(a|)b", "a{0}b", "(ab|a)*c", "(a*)*b", "((ab){2,3}c)*d", "a?b?c?d?"]
HANDED_OVER = [  # only the whole index answers these exactly
    "(?i)abc",  # case folding
    "a\\x04",  # no single-byte token for \x04: "a" may lead nowhere in tokens
    "\\x04a?",
    "[\\ud800-\\udfff]a|b",  # a class of surrogates only accepts nothing
]


def schema_regexes() -> list[str]:
    """The 22-field schema's regex, and those of outlines-core's own test schemas."""
    from fsmviz.schema.convert import SchemaError, regex_from_schema

    schemas = [(HERE / "cases" / "schema_22_fields.json").read_text()]
    corpus = json.loads((HERE / "cases" / "outlines_core_schemas.json").read_text())
    schemas += [json.dumps(schema) for schema in corpus["schemas"][:12]]
    found = []
    for schema in schemas:
        with contextlib.suppress(SchemaError):
            found.append(regex_from_schema(schema))
    return found


def same_as_index(pattern: str, vocab: Vocabulary) -> np.ndarray:
    ours = first_allowed_tokens(pattern, vocab)
    index = build_index(pattern, vocab)
    np.testing.assert_array_equal(ours, index.allowed_tokens(index.initial_state), pattern)
    return ours


@pytest.mark.parametrize(
    "pattern",
    [*load_seed_cases()["regexes"].values(), *EVERYDAY, *CHARACTERS, *DOT_LED, *EDGES],
)
def test_first_allowed_set_is_the_index_s_without_building_it(pattern, bundled_vocab):
    forget_indexes()
    ours = first_allowed_tokens(pattern, bundled_vocab)
    assert built_index(pattern, bundled_vocab) is None  # no DFA was built for it
    same_as_index(pattern, bundled_vocab)
    assert ours.dtype == np.int32 and np.all(np.diff(ours) > 0)


def test_the_schema_s_first_set_reads_a_few_of_its_parts(bundled_vocab):
    for pattern in schema_regexes():
        forget_indexes()
        ours = first_allowed_tokens(pattern, bundled_vocab)
        assert built_index(pattern, bundled_vocab) is None
        assert len(ours) < 2_000  # the first few bytes of a JSON value
        same_as_index(pattern, bundled_vocab)


@pytest.mark.parametrize("pattern", HANDED_OVER)
def test_the_index_answers_what_derivatives_cannot_answer_exactly(pattern, bundled_vocab):
    forget_indexes()
    first_allowed_tokens(pattern, bundled_vocab)
    assert built_index(pattern, bundled_vocab) is not None
    same_as_index(pattern, bundled_vocab)


def test_characters_alike_share_one_state_inside_them(bundled_vocab):
    """Under ``(?s).*`` every character derives alike: the states inside characters are
    one per bytes left and range of the next byte, not one per prefix the vocabulary holds
    (thousands: it took 80 ms where it takes a few)."""
    from fsmviz.tokens.fast.derivatives import _NearStart, _Regexes
    from fsmviz.tokens.trie import trie_of

    trie = trie_of(bundled_vocab)
    regexes, start = _Regexes.of("(?s).*", trie.single_byte_tokens)
    near = _NearStart(regexes, start)
    assert len(near.first_row(trie)) > 49_000  # all but special tokens and broken UTF-8
    assert len(near.states) < 16


@pytest.mark.parametrize("pattern", ["(?s).*", ".+", "[^a]{1,2}", "[\\u0800-\\uffff]+"])
def test_bytes_that_spell_no_character_end_the_walk(pattern):
    """Overlong forms (e0 80 80: U+0000 in three bytes), surrogates (ed a0 80), code points
    past U+10FFFF (f4 90 80 80): no character, so no token holding them is allowed."""
    pieces = [b"\xe0", b"\xe0\x80", b"\xe0\x80\x80", b"\xe0\xa0", b"\xe0\xa0\x80", b"\x80",
              b"\xed\xa0\x80", b"\xed\x9f\xbf", b"\xf0\x80\x80\x80", b"\xf0\x90\x80\x80",
              b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xc2\xa0", b"a", b"b"]  # fmt: skip
    pieces += [bytes([b]) for b in range(0x81, 0xF5)]  # every byte a token: no hand-over
    toy = Vocabulary("toy-utf8", (*pieces, b""), len(pieces), {len(pieces): "<eos>"})
    forget_indexes()
    first_allowed_tokens(pattern, toy)
    assert built_index(pattern, toy) is None
    allowed = {toy.token_bytes(int(t)) for t in same_as_index(pattern, toy)}
    assert not allowed & {b"\xe0\x80", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\x80", b"\xc1"}
    assert not allowed & {b"\xf0\x80\x80\x80", b"\xf4\x90\x80\x80"}


def test_a_token_ending_inside_a_character_no_token_finishes_is_left_to_the_index():
    """Without the continuation bytes a0..bf as tokens, "\\xe0" leads nowhere in tokens."""
    pieces = [b"\xe0", b"\xe0\xa0\x80", b"\x80", b"a"]
    toy = Vocabulary("toy-cut", (*pieces, b""), len(pieces), {len(pieces): "<eos>"})
    for pattern in [".+", "(?s).", "[^b]*"]:
        forget_indexes()
        allowed = {toy.token_bytes(int(t)) for t in first_allowed_tokens(pattern, toy)}
        assert built_index(pattern, toy) is not None, pattern
        assert b"\xe0" not in allowed and b"\xe0\xa0\x80" in allowed, pattern
        same_as_index(pattern, toy)


def test_past_its_budget_of_states_the_index_answers(bundled_vocab, monkeypatch):
    import fsmviz.tokens.fast.derivatives

    monkeypatch.setattr(fsmviz.tokens.fast.derivatives, "MAX_DERIVED", 6)
    for pattern, handed in [(r"[a-z]{1,3}", False), (r"([A-Za-z]{1,12} ){2,10}", True)]:
        forget_indexes()
        first_allowed_tokens(pattern, bundled_vocab)
        assert (built_index(pattern, bundled_vocab) is not None) == handed, pattern
        same_as_index(pattern, bundled_vocab)


def test_a_token_leading_where_no_token_finishes_is_not_allowed(bundled_vocab):
    """SmolLM2 has no token holding the byte 04: after "a", ``a\\x04`` cannot finish."""
    assert len(same_as_index("a\\x04", bundled_vocab)) == 0


def test_refusals_are_the_index_s(bundled_vocab):
    for pattern in ["(a", "a(?=b)", "\\1", "a{100000}"]:
        with pytest.raises(RegexError):
            build_index(pattern, bundled_vocab)
        with pytest.raises(RegexError):
            first_allowed_tokens(pattern, bundled_vocab)


@fuzz_settings(150)
@given(pattern=hostile_trees)
def test_fuzzed_patterns_on_split_characters(pattern, toy):  # noqa: F811
    """The toy vocabulary holds "日" and "😀" cut into pieces: walks end inside characters."""
    try:
        index = build_index(pattern, toy)
    except RegexError as error:
        try:
            first_allowed_tokens(pattern, toy)
        except RegexError:
            return
        assert "too large" in str(error)  # a DFA too big to build; its start is not
        return
    np.testing.assert_array_equal(first_allowed_tokens(pattern, toy), index.allowed_tokens(0))


@pytest.mark.parametrize("pattern", ["[^\\n]{1,3}", ".*(é|日本)", "[a-z]+|[^\\u00e9]x", "(?s).{2}"])
def test_a_row_is_its_groups_targets_byte_by_byte(pattern):
    """A layout row is one gather of its groups' targets (``_Layout.group_of``): each
    byte of a group leads where its group does, a byte in none nowhere; made for every
    state met, against the groups' own bits."""
    from fsmviz.tokens.fast.counted_rows import ENDS as _ENDS
    from fsmviz.tokens.fast.counted_rows import STAY as _STAY
    from fsmviz.tokens.fast.derivatives import NONE, _Regexes

    regexes, start = _Regexes.of(pattern, np.ones(256, dtype=bool))
    near = _NearStart(regexes, start)
    s = 0
    while s < len(near.states) and s < 100:
        near.make_row(s)
        regex, partial = near.states[s]
        if not isinstance(partial, tuple):
            layout = near._layout(regexes.heads(regex), partial)
            expected = np.full(256, -1)
            for bits, kind, signature, code, extra in layout.groups:
                after = regex if kind == _STAY else regexes.derived(regex, signature, code)
                if kind != _ENDS or after != NONE:
                    target = near.state(regex, extra) if kind == _STAY else near.state(after, extra)
                    expected[[b for b in range(256) if bits >> b & 1]] = target
            np.testing.assert_array_equal(near.table[s], expected, f"{pattern} state {s}")
        s += 1


COUNTED = [
    "[^\\n]{1,20}",
    "[^\\n]{2,6}x",
    "[^\\n]{2,6}()",  # the rest reads nothing: a > 0 and a = 0 share one plan
    '\\{"name": "[^"]{0,12}", "age": [0-9]{1,3}\\}',
    "[a-c]{0,4}[a-c]{2}",  # the rest begins with the count's class: a copy leads to both
    "a{0,3}(aa{0,2})*",  # the rest's derivative is the next copy's regex
    "[\\u00e0-\\u00ef]{1,5}",
    "(?s).{0,9}",
    "[^\\n]{0,3}é{1,4}",
    "[\\U0001f600-\\U0001f64f]{1,4}",
    "(x[^,]{0,3},){2}",
]


@pytest.mark.parametrize("pattern", COUNTED)
def test_a_counted_copy_s_rows_are_its_derivatives(pattern, bundled_vocab):
    """The rows a counted repeat's copies share (``_CountedPlan``, ``_Block``: written
    without deriving) are the derivatives' byte by byte; and the first set is the
    index's."""
    from fsmviz.tokens.fast.counted_rows import ENDS as _ENDS
    from fsmviz.tokens.fast.counted_rows import STAY as _STAY
    from fsmviz.tokens.fast.derivatives import NONE, _Regexes

    regexes, start = _Regexes.of(pattern, np.ones(256, dtype=bool))
    near = _NearStart(regexes, start)
    s = 0
    while s < len(near.states) and s < 300:
        if not near.made[s]:
            near.make_row(s)
        s += 1
    for s in range(min(len(near.states), 300)):
        regex, partial = near.states[s]
        expected = np.full(256, -1)
        if isinstance(partial, tuple):
            left, lo, hi = partial
            expected[lo : hi + 1] = near._ids[regex, b"" if left == 1 else (left - 1, 128, 191)]
        else:
            for bits, kind, _, code, extra in near._layout(regexes.heads(regex), partial).groups:
                after = regex if kind == _STAY else regexes.derive(regex, code)
                if kind != _ENDS or after != NONE:
                    expected[[b for b in range(256) if bits >> b & 1]] = near._ids[after, extra]
        np.testing.assert_array_equal(near.table[s], expected, f"{pattern} state {s}")
    assert near._plans  # the copies were planned, not derived
    same_as_index(pattern, bundled_vocab)


@pytest.mark.parametrize(
    "pattern",
    ["a\\x04", "[a\\x04]b", "[^a-z]", "[^\\x00-\\x7f]", "[^\\n]|é", "[\\x04-\\x06]b", "[ab]{2}c"],
)
def test_a_class_is_spelt_from_its_key_as_from_its_set(pattern):
    """``_Regexes.spellable`` reads a small class's ASCII characters from its key
    (``_ascii_spelt``), no set made: the same verdict as its set's, whichever bytes are
    tokens on their own (random, with or without every continuation byte)."""
    from fsmviz.tokens.fast.derivatives import _Regexes, _spelling

    rng = np.random.default_rng(11)
    for trial in range(40):
        flags = rng.random(256) < 0.95
        flags[0x80:0xC0] = trial % 2 == 0 or flags[0x80:0xC0]
        regexes = _Regexes()
        _, keys = regexes.survey(pattern)
        usable, continued, leads = _spelling(flags.tobytes())
        sets = [regexes.class_set(*key) for key in keys]
        expected = all(
            s
            and regexes.ascii[s] & usable
            and (continued or regexes.bounds[s][-1] <= 128)
            or continued
            and any(regexes.meets(s, lo, hi) for lo, hi in leads)
            for s in sets
        )
        assert _Regexes().spellable(keys, flags) == expected, (pattern, trial)


def test_a_lone_optional_is_derived_a_counted_copy_planned():
    """``X?T`` is derived where no copy of more made its plan (a schema's ``[ ]?``: no
    plan at all), and follows the plan of the copies before it where one did (the last
    copy of ``[a-z]{0,3}``: ``_Rows._counted``)."""
    from fsmviz.tokens.fast.counted_rows import counted
    from fsmviz.tokens.fast.derivatives import _Regexes

    def made(pattern: str) -> _NearStart:
        near = _NearStart(*_Regexes.of(pattern, np.ones(256, dtype=bool)))
        s = 0
        while s < len(near.states) and s < 100:
            near.make_row(s)
            s += 1
        return near

    assert not made('\\{[ ]?"id"[ ]?:[ ]?"[a-z]"')._plans
    near = made("[a-z]{0,3}y")
    last = [key for key in near.states if (counted(near.regexes, key[0]) or (0, 0, 0))[2] == 1]
    assert last and all(near._counted(*key) is not None for key in last)


@pytest.mark.parametrize(
    "pattern", [".*(error|warning): [A-Za-z ]+", "([^,\\n]{1,20},){3}x", "[a-cé]?[x-z]*é"]
)
def test_a_regex_reads_an_ascii_code_by_its_heads_bits_as_by_their_ranges(pattern):
    """``_Regexes._may_read`` answers an ASCII code from the heads' ASCII bits together
    (kept per regex): as the heads' ranges answer, for every regex met and every code."""
    from fsmviz.tokens.fast.derivatives import _Regexes

    regexes, start = _Regexes.of(pattern, np.ones(256, dtype=bool))
    near = _NearStart(regexes, start)
    for s in range(min(len(near.states), 40)):
        near.make_row(s)
    for regex in range(2, len(regexes.nodes)):
        for code in (*range(128), 0xE9, 0x65E5):
            plain = any(regexes.contains(h, code) for h in regexes.heads(regex))
            assert regexes._may_read(regex, code) == plain, (regex, code)


JSON_ANY = r'(?:[^"\\\x00-\x1F\x7F-\x9F]|\\["\\/bfnrt])*'
LOOP_LED = [  # (pattern, whether its first set is walked as a leading loop B*'s)
    (r".*\.[jJ][sS][oO][nN]", True),
    (r"(?s).*\n", True),
    (f"{JSON_ANY}(?:foo){JSON_ANY}", True),
    (r"b|[a-c]*c", True),  # an option that does not begin with the loop, inside it
    (r"a?[a-c]*", True),
    (r"[a-c]{2,}b", True),
    (r".+()()x", True),
    (r"[a-z]*[0-9]", False),  # a digit is no text of [a-z]*: "a1" begins a match
    (r".*(\n|x)", False),
    (f"{JSON_ANY}(?:.+\\.json)", False),  # the dot holds a quote
    (r"[a-c]+x", False),
    (r"x|[a-c]*b", False),
    (r"(ab)*ac", False),
]


@pytest.mark.parametrize(("pattern", "led"), LOOP_LED)
def test_a_pattern_led_by_a_loop_allows_what_the_loop_allows(pattern, led, bundled_vocab):
    """``regex_terms.loop_led``: where a match may begin with ``B{m,}`` and every match
    is a text of ``B*``, the first set is ``B*``'s; the index's either way (and not
    where some match is no text of ``B*``: ``[a-z]*[0-9]``)."""
    from fsmviz.tokens.fast.derivatives import _Regexes
    from fsmviz.tokens.fast.regex_terms import loop_led

    regexes, start = _Regexes.of(pattern, np.ones(256, dtype=bool))
    assert (loop_led(regexes, start) != start) == led
    forget_indexes()
    same_as_index(pattern, bundled_vocab)


@pytest.mark.parametrize("pattern", [*DOT_LED, r".*\.[jJ][sS][oO][nN]", r"[^ \t\n\v\f\r]+"])
def test_a_loop_led_pattern_walked_as_written_is_the_index_s_too(
    pattern, bundled_vocab, monkeypatch
):
    """The derivative walk of a pattern that ``loop_led`` would answer as its loop (kept
    exact for the patterns it does not: ``[a-z]*[0-9]``)."""
    import fsmviz.tokens.fast.derivatives

    monkeypatch.setattr(fsmviz.tokens.fast.derivatives, "loop_led", lambda _, regex: regex)
    forget_indexes()
    same_as_index(pattern, bundled_vocab)


@pytest.mark.parametrize(
    "pattern",
    [
        r"[A-Za-z_][A-Za-z0-9_]*",
        r"\S.*",
        r"|[a-z][a-z0-9-]*",
        r"[1-9][0-9]*",
        r"[^/]+",
        r"[^\n]+é?",
    ],
)
def test_a_set_then_a_loop_is_read_off_as_the_index_walks_it(pattern, bundled_vocab):
    """``_spelt_loop``'s ``SB*`` (and ``B*``): the index's first set, read per token."""
    forget_indexes()
    same_as_index(pattern, bundled_vocab)


SMALL = [
    r"[nN][oO][nN][eE]",
    r"\$schema",
    r"\d{4}-\d{2}",
    r"(ab|cd|é)+x",
    r"\{\"a\": [0-9]+\}",
    "日本?",
]


@pytest.mark.parametrize("pattern", [*SMALL, r"[a-l]{1,8}"])
def test_a_narrow_start_s_tokens_walked_in_python_are_the_level_walk_s(pattern, bundled_vocab):
    """``_NearStart._small_row`` (a start reading few bytes: ``rowwalk.small_row``) gives
    the byte walk's tokens, or None where it gives up (``[a-l]{1,8}``: thousands of
    tokens), and the first set is the index's."""
    from fsmviz.tokens.fast.derivatives import _Regexes
    from fsmviz.tokens.fast.levelwalk import walk_bytes
    from fsmviz.tokens.trie import trie_of

    trie = trie_of(bundled_vocab)
    regexes, start = _Regexes.of(pattern, trie.single_byte_tokens)
    ours = _NearStart(regexes, start)._small_row(trie)
    assert (ours is None) == (pattern not in SMALL)
    if ours is not None:
        np.testing.assert_array_equal(ours, walk_bytes(trie, _NearStart(regexes, start).rows))
    forget_indexes()
    same_as_index(pattern, bundled_vocab)
