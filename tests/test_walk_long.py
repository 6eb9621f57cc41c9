"""``walkbelow.walk_entries`` jumps long tokens at once: where the tokens to walk average at
least ``LONG`` bytes (runs of spaces and newlines below a search's newline node), each is
first moved past the bytes its state reads back into itself (``_jump``), before any round,
where most of them stay in their state at their next byte (``_staying``).
The masks made so are the plain rows, and the route is taken (a jump over tokens of no
byte left happens only there). Searches in a JSON string, none tuned on."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import build_index
from fsmviz.tokens.fast import walkbelow
from fsmviz.tokens.fast.knownloops import ANY
from tests.test_index_rows import plain_mask

# Tests of the walk below's jumps, under the loop masks (``knownloops``), which answer these
# patterns' states first: the masks are turned off.
pytestmark = pytest.mark.usefixtures("no_loop_masks")

SEARCHES = (rf"{ANY}*(?:[^x]){ANY}*", rf"{ANY}*(?:[^a-z]){ANY}*", rf"{ANY}*(?:[^_]){ANY}*")


@pytest.mark.slow
@pytest.mark.parametrize("pattern", SEARCHES)
def test_long_tokens_jumped_first_give_the_plain_rows(monkeypatch, bundled_vocab, pattern):
    jumped, jump = [], walkbelow._jump

    def counted(table, padded, states, at, left):
        jumped.append(int(left.min()) == 0 and len(left) > walkbelow.FEW_WALKING)
        return jump(table, padded, states, at, left)

    monkeypatch.setattr(walkbelow, "_jump", counted)
    index = build_index(pattern + "()" * 4, bundled_vocab)  # fresh: no row made yet
    for state in index.states[:12]:
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), (pattern, state)
    assert any(jumped), pattern  # the long tokens were jumped before any round


def test_a_jump_first_walks_on_from_where_each_token_leaves_its_loop():
    """A toy DFA: state 0 loops on ``a``, reads ``b`` into 1, which reads ``c`` back to 0;
    tokens of many ``a``\\ s jump whole, ``aab`` stops at its ``b`` and ends there alive,
    ``aaabd`` dies at ``d``, ``baaaaaaaa`` at its first ``a`` (no jump from its start)."""
    from fsmviz import Vocabulary
    from fsmviz.tokens.fast.packwalk import packed_vocab

    strings = ["aaaaaaaa", "aaaaaaaaaaaa", "aab", "aaabd", "aaabcaaaa", "a", "baaaaaaaa"]
    vocab = Vocabulary.from_strings(strings)
    index = build_index("(a|bc)*b?", vocab)
    packed, table = packed_vocab(index.trie, len(strings)), index.byte_dfa.table
    entries = np.arange(len(strings))
    none = np.zeros(len(strings), dtype=np.int64)
    walked = walkbelow.walk_entries(packed, table, entries, none, none)
    ids = sorted(packed.sorted_ids[walked].tolist())
    assert [strings[i] for i in ids] == ["aaaaaaaa", "aaaaaaaaaaaa", "aab", "aaabcaaaa", "a"]
