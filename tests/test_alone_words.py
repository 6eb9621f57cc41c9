"""A search whose merge into live blocks is refused because the state after its needle's
byte is alone (``rowwalk.merge_pair``'s ``(t, t)``: ``ANY*(?:b.*)ANY*``'s start) answers
its first mask over the DFA itself (``rowwalk.alone_words``: ``search_words``, each state
its own block), where more than ``ALONE_TOKENS`` tokens hold its needle's byte. Each
answer is the plain row."""

from __future__ import annotations

import pytest

from fsmviz import build_index
from fsmviz.tokens import index as index_module
from fsmviz.tokens.fast import rowwalk
from fsmviz.tokens.fast.knownloops import ANY
from tests.test_index_rows import assert_plain_masks
from tests.test_levelwalk import answers_of

# Tests of a refused merge's words, under the loop masks (``knownloops``), which answer these
# patterns' states first: the masks are turned off.
pytestmark = pytest.mark.usefixtures("no_loop_masks")

ALONE = (rf"{ANY}*(?:g.*){ANY}*", rf"{ANY}*(?:e.*){ANY}*", r'(?:[^"\\]|\\.)*t[^\n]*')
FEW = (rf"{ANY}*(?:\d.*){ANY}*", rf"{ANY}*(?:j.*){ANY}*")  # 1 and 350 tokens hold the byte


@pytest.mark.slow
@pytest.mark.parametrize("pattern", ALONE)
def test_a_refused_search_start_is_answered_over_the_dfa(bundled_vocab, pattern, monkeypatch):
    answered = answers_of(monkeypatch, index_module, "alone_words")
    index = build_index(pattern + "()" * 3, bundled_vocab)
    assert_plain_masks(index, 12)
    assert index._walker.merged is False, "the merge was not refused"
    assert answered[:1] == [True], answered  # the start, by the search's words


@pytest.mark.slow
@pytest.mark.parametrize("pattern", FEW)
def test_a_needle_few_tokens_hold_keeps_the_chain(bundled_vocab, pattern, monkeypatch):
    """Where few tokens hold the needle's byte the chain's frontier is small: not taken."""
    answered = answers_of(monkeypatch, index_module, "alone_words")
    index = build_index(pattern + "()" * 3, bundled_vocab)
    assert_plain_masks(index, 4)
    assert index._walker.merged is False and not any(answered), answered


def test_alone_words_waits_for_a_refused_merge(bundled_vocab):
    """Before the merge is tried (or where it succeeded) nothing is answered."""
    index = build_index(ALONE[0] + "()" * 4, bundled_vocab)
    assert rowwalk.alone_words(index._walker, 0) is None  # not tried yet
