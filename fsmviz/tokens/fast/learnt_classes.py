"""Byte classes learnt per pattern's character sets: the class walk for the next pattern.

``derivatives._NearStart.first_row`` walks the byte trie from the start, and where a level
crowds into many states it hands the levels below to ``levelwalk.walk_levels``. Under
``([^,\\n]{1,20},){3}[^,\\n]{1,20}`` (a CSV row) that walk is most of the first mask:
~820 nodes in ~10 states, each count of a field a state, every byte of ~100k nodes
read. Yet its rows tell only 16 kinds of byte apart (the comma, the newline, the other
ASCII bytes, UTF-8's bytes by range), and the *class trie* of those kinds
(``classwalk``) has ~530 nodes: ``levelwalk.walk_classes`` walks those instead.

Which bytes a pattern's rows tell apart depends on its character sets (a byte leads
like another wherever every set holds both or neither of their characters), so the
classes that the rows of one pattern's walk held (``levelwalk.byte_partition``) are
learnt under its sets (``learn``), and the next pattern with the same sets (the same
pattern again, a fresh string of it, a CSV row of 5 fields) walks the class trie from
the root at once (``walk_learnt``). As ``levelwalk.walk_levels`` does for the levels
it is handed, a pattern pays the byte walk once per kind; and the class trie is built
as its classes are learnt, so that the kind's one slow first set is its first (CPU,
SmolLM2's 49k tokens: ~5 ms the byte walk, ~7 the class trie, ~4 its tokens by node),
not its first two (of ``bench mask``'s five fresh strings two were then slow, and one
more slowed by the load made the median: 6.2 ms wall beside 2.5 CPU). The class walk
checks every row it reads against the classes, and answers None where one tells two
bytes of a class apart: those classes are then not tried again for these sets.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fsmviz.automaton.syntax import ClassKey
from fsmviz.cache import BoundedCache
from fsmviz.tokens.fast import levelwalk
from fsmviz.tokens.fast.classwalk import MERGED_CLASSES, class_trie
from fsmviz.tokens.trie import VocabTrie

__all__ = ["learn", "walk_learnt"]

Sets = tuple[ClassKey, ...]
"""A pattern's distinct classes, as ``(characters, negated)`` keys
(``regex_terms.TreeTerms.survey``)."""

_LEARNT: BoundedCache[tuple[VocabTrie, np.ndarray | None]] = BoundedCache(maxsize=64)
"""Per (trie, sets): the trie (its ``id`` may name a newer one) and the classes learnt
(None: more than a class trie merges, ``MERGED_CLASSES``); under ``(False, key)``: a class
walk of them did not hold."""


def learn(trie: VocabTrie, sets: Sets, made: np.ndarray) -> None:
    """Learn, for patterns of the character sets ``sets``, the classes of the rows
    ``made`` (a byte walk's), unless classes were learnt for them already; their class
    trie is built now, its tokens by node sorted (``classwalk.class_trie``, kept for
    ``walk_learnt``)."""

    def build() -> tuple[VocabTrie, np.ndarray | None]:
        classes = levelwalk.byte_partition(made)
        if int(classes.max()) >= MERGED_CLASSES:
            return trie, None
        built, _ = class_trie(trie, classes, levelwalk.levels_of(trie).num_ids)
        _ = built.node_tokens  # sorted when a short row first reads them (~4 ms): now
        return trie, classes

    _LEARNT.get_or_build((id(trie), sets), build)


def walk_learnt(
    trie: VocabTrie, sets: Sets, table: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray | None:
    """The tokens walkable from the root and state 0 (``levelwalk.walk_classes``) in the
    classes learnt for ``sets`` (``learn``); None where none were learnt or they do not
    hold (then not tried again), and the caller walks the bytes."""
    key = (id(trie), sets)
    kept = _LEARNT.peek(key)
    if kept is None or kept[0] is not trie or kept[1] is None or _LEARNT.peek((False, key)):
        return None
    root = np.zeros(1, dtype=np.int32)
    found = levelwalk.walk_classes(trie, root, root, table, kept[1])  # as patched in tests
    if found is None:
        _LEARNT.get_or_build((False, key), lambda: (trie, None))
    return found
