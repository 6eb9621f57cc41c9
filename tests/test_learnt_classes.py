"""Byte classes learnt per pattern's sets (``fsmviz.tokens.fast.learnt_classes``): a
pattern whose walk handed crowded levels over learns its rows' classes, and the next
pattern of the same sets walks the class trie from the root, with the byte walk's tokens;
classes that do not hold are refused once and not tried again."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz.cache import BoundedCache, OwnedCache
from fsmviz.tokens.fast import classwalk, learnt_classes, levelwalk
from fsmviz.tokens.fast.derivatives import _NearStart, _Regexes
from fsmviz.tokens.fast.learnt_classes import learn, walk_learnt
from fsmviz.tokens.fast.levelwalk import walk_bytes
from fsmviz.tokens.trie import trie_of

CSV = r"([^,\n]{1,20},){3}[^,\n]{1,20}"
ROOT = np.zeros(1, dtype=np.int32)


@pytest.fixture
def unlearnt(monkeypatch):
    """Nothing learnt yet (other tests' patterns may have taught the shared cache), no
    class trie built; returns the class tries built from here on (``classwalk._merged``)."""
    monkeypatch.setattr(learnt_classes, "_LEARNT", BoundedCache(maxsize=64))
    monkeypatch.setattr(classwalk, "_CLASS_TRIES", OwnedCache(maxsize=8))
    built = []
    merged = classwalk._merged
    monkeypatch.setattr(classwalk, "_merged", lambda *args: built.append(1) or merged(*args))
    return built


def _near(pattern: str, trie) -> _NearStart:
    return _NearStart(*_Regexes.of(pattern, trie.single_byte_tokens))


def _byte_walk(pattern: str, trie) -> np.ndarray:
    return walk_bytes(trie, ROOT, ROOT, _near(pattern, trie).rows)


@pytest.mark.parametrize(
    "after",
    [CSV, r"([^,\n]{1,20},){5}[^,\n]{1,20}", r"([^,\n]{1,3},)?[^,\n]{1,9}"],
)
def test_a_pattern_of_learnt_sets_walks_the_class_trie(after, bundled_vocab, unlearnt):
    trie = trie_of(bundled_vocab)
    near = _near(CSV, trie)
    assert walk_learnt(trie, near.regexes.sets, near.rows) is None  # nothing learnt
    first = near.first_row(trie)  # the byte walk, handed over: learns
    assert len(unlearnt) == 1  # the class trie, built as the classes are learnt
    classes = learnt_classes._LEARNT.peek((id(trie), near.regexes.sets))[1]
    built, _ = classwalk.class_trie(trie, classes, levelwalk.levels_of(trie).num_ids)
    assert "node_tokens" in vars(built)  # sorted already
    np.testing.assert_array_equal(first, _byte_walk(CSV, trie))
    later = _near(after, trie)  # the same sets, another pattern
    found = walk_learnt(trie, later.regexes.sets, later.rows)
    assert found is not None and len(unlearnt) == 1
    np.testing.assert_array_equal(found, _byte_walk(after, trie))
    np.testing.assert_array_equal(_near(after, trie).first_row(trie), found)


def test_classes_that_do_not_hold_are_not_tried_again(bundled_vocab, unlearnt, monkeypatch):
    trie = trie_of(bundled_vocab)
    near = _near(CSV, trie)
    learn(trie, near.regexes.sets, near.rows(ROOT)[:1])  # the start row's: "," is "\n"
    walks = []
    walk = levelwalk.walk_classes
    monkeypatch.setattr(levelwalk, "walk_classes", lambda *args: walks.append(1) or walk(*args))
    assert walk_learnt(trie, near.regexes.sets, near.rows) is None
    assert walk_learnt(trie, near.regexes.sets, _near(CSV, trie).rows) is None
    assert len(walks) == 1
    np.testing.assert_array_equal(_near(CSV, trie).first_row(trie), _byte_walk(CSV, trie))
