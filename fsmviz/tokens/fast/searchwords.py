"""A search's packed mask: a set of states its ASCII bytes close, the rest walked below.

What it answers: the tokens allowed from a state whose ASCII bytes close a set of states
(``safebytes._safe_bytes``: a search's loop and the state after its needle's first byte,
merged into live blocks), without its row: the tokens of those bytes as words
(``PackedVocab.inside``, ``packwalk``), the others walked below the nodes where they leave
them (``walkbelow.walk_below``), a state's UTF-8 taken as the set reads it.
"""

from __future__ import annotations

import numpy as np

from fsmviz.tokens.fast.chains import FRONTIER
from fsmviz.tokens.fast.closedsets import _KINDS, CLOSED
from fsmviz.tokens.fast.packwalk import _ALL, _ASCII_BYTES, _HIGH, PackedVocab, _with_ids
from fsmviz.tokens.fast.safebytes import _safe_bytes
from fsmviz.tokens.fast.walkbelow import walk_below, walk_entries
from fsmviz.tokens.trie import VocabTrie

__all__ = ["search_words"]


def search_words(
    vocab: PackedVocab, trie: VocabTrie, table: np.ndarray, state: int, reads: int
) -> np.ndarray | None:
    """The packed words (uint32) of the tokens allowed from ``state`` (``reads``: the bytes
    it reads, 256 bits) where its ASCII bytes close a set of states (``_safe_bytes``:
    each reads each byte of ``B`` back into the set ``S``); else None.
    The tokens of ``B`` are allowed (``inside(B)``); every other token leaves ``B`` at a
    node whose path above lies in ``B`` (``leaving``): the state there is walked from
    ``state`` along that path (``_path_states``; where ``S`` is ``state`` alone, the path,
    read back into ``S``, ends there), and the trie below it (``walk_below``).

    A search, merged into its live blocks: ``ANY*(?:t.e)ANY*``'s loop and the state after
    ``t`` (its ``.`` reads a quote and a backslash too) read a string's ASCII but the
    backslash back among the two. The loop's chain leaves by every ``t`` (more than
    ``FRONTIER`` nodes: its row was walked, ~1.3 ms); here the nodes left are the 270 of
    a quote, a backslash, a control or UTF-8 after ASCII of ``B``. ``S`` may be the state
    alone: ``ANY*(?:.)ANY*``'s start, merged, reads a string's ASCII back into itself, its
    quote and controls into the loop after the ``.`` (the chain walked ~1,000 tokens
    below those: ~0.5 ms; here ~0.3); not where it reads no UTF-8 (``(?:\\w*:)?\\w+``'s
    loop: its tokens leave ``B`` at 76 nodes above 32,889 tokens, ~0.1 ms to find, where
    the chain's frontier cost ~0.05 less).

    >>> from fsmviz import Vocabulary, build_index
    >>> from fsmviz.tokens.fast.closedsets import _row_reads
    >>> from fsmviz.tokens.fast.packwalk import packed_vocab
    >>> index = build_index("[a-z]*x[a-z]*", Vocabulary.from_strings(["ax", "b", "x1"]))
    >>> table, vocab = index.byte_dfa.table, packed_vocab(index.trie, len(index.vocab))
    >>> search_words(vocab, index.trie, table, 0, _row_reads(table, 0)).tolist()  # "ax", "b"
    [3]
    """
    if not _leads_wide(table, state, reads):
        return None  # a loop alone (its chain's words), or a key
    found = _safe_bytes(table, [state], reads & _ASCII_BYTES)
    if found is None:
        return None
    members, safe = found
    ordered = np.flatnonzero(members)
    kind = _utf8_kind(table, ordered)
    if not kind and len(ordered) == 1:
        return None  # an ASCII loop alone: its chain's frontier costs less than ``leaving``
    if kind == _STRICT:  # UTF-8 taken as ASCII is, those it refuses walked from ``state``
        words = vocab.inside(safe | _HIGH) & ~vocab.utf8_bad[kind - 1]
        leaving = vocab.leaving(safe | _HIGH, vocab.present & ~safe & _ASCII_BYTES, None, kind)
        entries = vocab.refused[kind - 1]  # (most die at their first byte: a stray one)
        entries = entries[table[state, vocab.padded[vocab.padded_start[entries]]] >= 0]
        own = np.zeros(len(entries), dtype=np.intp)
        taken = walk_entries(vocab, table, entries, own + state, own) if len(entries) else own
        words = _with_ids(words, vocab.sorted_ids[taken])
    else:  # no member reads past ASCII (those tokens die there), or not as UTF-8
        words = vocab.inside(safe)
        leaving = vocab.leaving(safe, vocab.present & ~safe & (_ALL if kind else _ASCII_BYTES))
    if leaving is None or len(leaving[0]) > FRONTIER:
        return None
    nodes, depths, bytes_in = leaving
    if len(ordered) == 1:  # each path above lies in what ``S`` reads back: its one state
        after = table[state, bytes_in]
    else:
        after = table[_path_states(vocab, table, state, nodes, depths), bytes_in]
    live = after >= 0
    if not live.any():
        return words
    ids = walk_below(vocab, trie, table, nodes[live], after[live], safe)
    return None if ids is None else _with_ids(words, ids)


_STRICT = 2
"""The strict kind of UTF-8 (no C1 control), as ``Chain.utf8`` numbers it."""


def _utf8_kind(table: np.ndarray, members: np.ndarray) -> int:
    """0 where no state of ``members`` reads a byte from 0x80; ``_STRICT`` where each reads
    at least every character of that kind back among them (``_reads_into``, not exact:
    one reading more, as ``.`` reads C1 controls, has the tokens of those walked);
    else -1."""
    if not (table[members, 0x80:] >= 0).any():
        return 0
    return _STRICT if _reads_strict(table, members.tolist()) else -1


def _reads_strict(table: np.ndarray, members: list[int]) -> bool:
    """``_reads_into(table, members, _UTF8[_STRICT - 1], exact=False)`` in plain Python, as
    ``_reads_as`` walks one state: pairs (DFA state, inner automaton state) from each
    member's lead bytes, a level a continuation byte, each byte of an inner state's range
    read, a character's end among ``members`` (at most ``CLOSED`` pairs). A string's loop
    makes ~16 pairs: ~30 µs, where a numpy round a level cost ~60.

    A twin kept for that speed: ``_reads_into`` stays the definition (``closed_words``
    needs its ``exact`` check; this one asks only "at least"), and
    ``test_search_words.test_reads_strict_is_the_numpy_check`` holds the two equal (each
    state alone, with its ASCII targets, and the DFA's halves, on UTF-8 patterns), and
    ``test_reads_strict_needs_every_lead_byte`` where a member lacks a lead byte."""
    kind, among, pairs = _KINDS[_STRICT - 1], set(members), set()
    for member in members:
        high = table[member, 0x80:].tolist()
        pairs |= {(high[byte - 0x80], inner) for byte, inner in kind.lead}
    seen = set(pairs)
    while pairs:
        if len(seen) > CLOSED:
            return False
        after = set()
        for at, inner in pairs:
            if at < 0:
                return False
            lo, hi = kind.span[inner]
            targets, goes = set(table[at, lo:hi].tolist()), kind.goes[inner]
            if goes:
                after |= {(target, goes) for target in targets}
            elif not targets <= among:
                return False
        pairs = after - seen
        seen |= pairs
    return True


def _leads_wide(table: np.ndarray, state: int, reads: int) -> bool:
    """Whether an ASCII byte leads ``state`` (``reads``: its bytes) to another state reading
    at least half as many ASCII bytes: else its set is itself alone, at best (a string's
    loop reads its backslash into the escape's eight bytes), found at once."""
    half = (reads & _ASCII_BYTES).bit_count() // 2
    row = table[state, :0x80]
    others = set(row[row >= 0].tolist()) - {state}
    return any(np.count_nonzero(table[other, :0x80] >= 0) >= half for other in others)


def _path_states(
    vocab: PackedVocab, table: np.ndarray, state: int, nodes: np.ndarray, depths: np.ndarray
) -> np.ndarray:
    """The state after each node's path above (its first ``depth - 1`` bytes, read from a
    token below it) from ``state``, the deepest walked longest (a round a byte)."""
    steps = depths.astype(np.intp) - 1
    order = np.argsort(-steps, kind="stable")
    steps, at = steps[order], vocab.padded_start[vocab.span_start[nodes[order]]]
    states = np.full(len(nodes), state, dtype=np.intp)
    walking = np.searchsorted(-steps, -np.arange(int(steps[0]) if len(steps) else 0), "left")
    for byte, count in enumerate(walking.tolist()):  # count: those with bytes past ``byte``
        states[:count] = table[states[:count], vocab.padded[at[:count] + byte]]
    found = np.empty_like(states)
    found[order] = states
    return found
