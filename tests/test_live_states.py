"""``ByteDfa.live_states`` (distinct columns, deduplicated rows, a reversed search) against
the definition: a state is live when a path of usable bytes leads from it to acceptance."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import compile_regex
from fsmviz.automaton.bytedfa import to_bytes

PATTERNS = [
    r"[0-9]+\.[0-9]+",
    r"(é|a|[^a-😀]|.)x",
    r'"([^"\\\x00-\x1F]|\\["\\/bfnrt]){0,8}"',
    r"[\x00-\x7f]{3}|日本",
    r"(a\x04|b)c",
]


def live_by_definition(table: np.ndarray, accepting: np.ndarray, usable: np.ndarray) -> list:
    live = accepting.copy()
    changed = True
    while changed:  # a state is live when a usable byte leads to a live state
        targets = np.where(usable & (table >= 0), table, 0)
        now = live | (live[targets] & usable & (table >= 0)).any(axis=1)
        changed = bool((now != live).any())
        live = now
    return live.tolist()


@pytest.mark.parametrize("pattern", PATTERNS)
def test_live_states_follow_the_definition(pattern: str) -> None:
    byte_dfa = to_bytes(compile_regex(pattern))
    rng = np.random.default_rng(7)
    for usable in [np.ones(256, bool), *(rng.random(256) < share for share in (0.9, 0.6, 0.3))]:
        usable[ord("x")] = usable[ord("c")] = True  # keep a way to finish now and then
        expected = live_by_definition(byte_dfa.table, byte_dfa.accepting, usable)
        assert byte_dfa.live_states(usable).tolist() == expected
    assert byte_dfa.live_states().all()  # to_bytes keeps only edges into live states


@pytest.mark.parametrize(
    ("pattern", "token_live"),
    [
        # lead bytes f1, f2 (no token of their own) go where f3 goes: no search needed
        ("a[\U00040000-\U0004000f\U00080000-\U0008000f\U000c0000-\U000c000f]", True),
        ("a[\U00040000-\U0004000f]|b", False),  # after "a" only f1 leads on
        ("a\x04|b", False),  # SmolLM2 has no token "\x04"
        ("[a-z]+", True),
    ],
)
def test_token_liveness_skips_the_search_only_when_no_state_can_differ(
    pattern, token_live, bundled_vocab
):
    from fsmviz.tokens.index import _byte_liveness_is_token_liveness
    from fsmviz.tokens.trie import trie_of

    byte_dfa = to_bytes(compile_regex(pattern))
    trie = trie_of(bundled_vocab)
    restricted = byte_dfa.live_states(usable_bytes=trie.single_byte_tokens)
    live = byte_dfa.accepting | (byte_dfa.table >= 0).any(axis=1)
    assert bool((restricted == live).all()) is token_live  # the full search's verdict
    assert _byte_liveness_is_token_liveness(byte_dfa, trie) is token_live
