"""The vocabulary as a byte trie stored in flat numpy arrays.

Many tokens share prefixes (" the", " them", " theory"…). Walking the DFA through a trie
of the vocabulary reads each shared prefix once for all the tokens below it, and a branch
the DFA rejects is cut with everything beneath it. The trie depends only on the
vocabulary, so it is built once (~0.1 s for 49k tokens) and reused for every pattern.

Nodes are numbered breadth-first, so the children of a node are consecutive numbers
``first_child[n] .. first_child[n] + num_children[n] - 1``, and ``byte[c]`` is the byte
on the edge into child ``c``. That layout lets the index expand a whole level of
(node, DFA state) pairs with a handful of numpy gathers instead of a Python loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from fsmviz.cache import BoundedCache
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["TrieLists", "VocabTrie", "trie_of"]


@dataclass(frozen=True, eq=False)
class VocabTrie:
    """Byte trie of a vocabulary's tokens (special tokens and EOS are not in it)."""

    first_child: np.ndarray  # int32 [num_nodes]
    num_children: np.ndarray  # int32 [num_nodes]
    byte: np.ndarray  # int32 [num_nodes]: the byte on the edge into the node (root: -1)
    token_start: np.ndarray  # int32 [num_nodes + 1]: tokens ending at node n are
    token_ids: np.ndarray  # token_ids[token_start[n] : token_start[n + 1]]
    has_token: np.ndarray  # bool [num_nodes]
    single_byte_tokens: np.ndarray  # bool [256]: bytes that are a token on their own
    # Subtrees, for walks that take a whole subtree at once (``fsmviz.tokens.fast.rowwalk``):
    depth: np.ndarray  # int32 [num_nodes]: bytes on the path from the root
    height: np.ndarray  # int32 [num_nodes]: bytes below the node on its longest token
    subtree_bytes: (
        np.ndarray
    )  # <u8 [num_nodes, 4]: the set of bytes below (b: word b // 64, bit b % 64)
    lengths_below: np.ndarray  # <u8 [num_nodes, 2]: bit l set when a token ends l bytes
    # below the node (1 <= l < 128; a node higher than 127 bytes lacks the longer ones)
    span_start: np.ndarray  # int32 [num_nodes]: the tokens at or below node n are
    span_size: np.ndarray  # sorted_ids[span_start[n] : span_start[n] + span_size[n]]
    sorted_ids: np.ndarray  # int32 [num_tokens]: token ids in the order of their bytes
    sorted_lengths: np.ndarray  # int32 [num_tokens]: their lengths in bytes
    sorted_bytes: tuple[bytes, ...]  # their bytes

    @cached_property
    def lists(self) -> TrieLists:
        """The arrays a walk in plain Python reads (``rowwalk.small_row``), as lists: a list
        item costs ~30 ns where a numpy scalar costs ~100 (built once per trie, ~10 ms)."""
        return TrieLists(
            self.first_child.tolist(),
            self.num_children.tolist(),
            self.byte.tolist(),
            self.token_start.tolist(),
            self.token_ids.tolist(),
        )

    @cached_property
    def untokened_bytes(self) -> int:
        """The bytes that are no token on their own (``~single_byte_tokens``) as one int,
        bit ``b`` for byte ``b``: whether a small DFA reads any of them is one ``&`` over
        the bytes it reads (``tokens.index``), where the boolean arrays took numpy calls."""
        return sum(1 << b for b in np.flatnonzero(~self.single_byte_tokens).tolist())

    @cached_property
    def untokened_neighbours(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The bytes that are no token on their own, and for each the nearest byte below
        it and above it that is one (the nearest on the other side where there is none;
        all three empty where no byte is a token): the columns ``tokens.index``'s liveness
        test compares first (``_doubled``), found once per trie.

        >>> from fsmviz import Vocabulary
        >>> trie = trie_of(Vocabulary.from_strings(["a", "c", "ab"]))
        >>> [chr(b) for b in trie.untokened_neighbours[0][97:99].tolist()]  # 0-96: no token
        ['b', 'd']
        >>> [(chr(lo), chr(hi)) for lo, hi in zip(*trie.untokened_neighbours[1:])][97:99]
        [('a', 'c'), ('c', 'c')]
        """
        present = np.flatnonzero(self.single_byte_tokens)
        lone = np.flatnonzero(~self.single_byte_tokens)
        if not len(present):
            return lone[:0], lone[:0], lone[:0]
        at = np.searchsorted(present, lone)
        return lone, present[np.maximum(at - 1, 0)], present[np.minimum(at, len(present) - 1)]

    @staticmethod
    def build(vocab: Vocabulary) -> VocabTrie:
        """The trie of ``vocab``: its tokens sorted by their bytes, laid out level by level
        (``_lay_out``), the tokens that end at each node (``_tokens_at_nodes``), then each
        subtree summed up (``_subtrees``)."""
        eos = vocab.eos_token_id
        entries = sorted(
            (data, i) for i, data in enumerate(vocab.all_token_bytes) if data and i != eos
        )
        layout = _lay_out(entries)
        token_start, token_ids, has_token = _tokens_at_nodes(layout.token_nodes, len(layout.byte))
        first_child = np.array(layout.first_child, dtype=np.int32)
        num_children = np.array(layout.num_children, dtype=np.int32)
        byte = np.array(layout.byte, dtype=np.int32)
        depth = np.array(layout.depth, dtype=np.int32)
        height, below, lengths = _subtrees(first_child, num_children, byte, depth, has_token)
        return VocabTrie(
            first_child=first_child,
            num_children=num_children,
            byte=byte,
            token_start=token_start,
            token_ids=token_ids,
            has_token=has_token,
            single_byte_tokens=_single_byte_tokens(vocab),
            depth=depth,
            height=height,
            subtree_bytes=below,
            lengths_below=lengths,
            span_start=np.array(layout.span_start, dtype=np.int32),
            span_size=np.array(layout.span_size, dtype=np.int32),
            sorted_ids=np.array([i for _, i in entries], dtype=np.int32),
            sorted_lengths=np.array([len(data) for data, _ in entries], dtype=np.int32),
            sorted_bytes=tuple(data for data, _ in entries),
        )


class _Layout(NamedTuple):
    """The trie's nodes in breadth-first order, as lists (index: node number)."""

    first_child: list[int]
    num_children: list[int]
    byte: list[int]  # the byte into the node (root: -1)
    span_start: list[int]  # the node's run of sorted entries: its first…
    span_size: list[int]  # …and how many
    depth: list[int]
    token_nodes: list[tuple[int, int]]  # (node, token id) for each token, in entry order


class TrieLists(NamedTuple):
    """``VocabTrie``'s child and token arrays as Python lists (``VocabTrie.lists``)."""

    first_child: list[int]
    num_children: list[int]
    byte: list[int]  # a node's children come in increasing byte order
    token_start: list[int]
    token_ids: list[int]


def _lay_out(entries: list[tuple[bytes, int]]) -> _Layout:
    """Number the trie's nodes breadth-first from the sorted (bytes, token id) entries.

    Sorted tokens make every trie node a contiguous run of entries, so a level is a list
    of (node, first entry, end entry): a node's tokens that end at it come first in its
    run, then one child per run of entries that share their next byte.

    >>> layout = _lay_out([(b"a", 7), (b"ab", 8), (b"b", 9)])
    >>> layout.byte, layout.first_child, layout.num_children, layout.token_nodes
    ([-1, 97, 98, 98], [1, 3, 4, 4], [2, 1, 0, 0], [(1, 7), (2, 9), (3, 8)])
    """
    first_child, num_children, byte = [0], [0], [-1]
    span_start, span_size, depths = [0], [len(entries)], [0]
    token_nodes: list[tuple[int, int]] = []
    level = [(0, 0, len(entries))]  # (node, first entry, end entry) at depth d
    depth = 0
    while level:
        next_level = []
        for node, lo, hi in level:
            first_child[node] = len(byte)
            i = lo
            while i < hi and len(entries[i][0]) == depth:
                token_nodes.append((node, entries[i][1]))
                i += 1
            while i < hi:
                b = entries[i][0][depth]
                j = i
                while j < hi and entries[j][0][depth] == b:
                    j += 1
                child = len(byte)
                byte.append(b)
                first_child.append(0)
                num_children.append(0)
                num_children[node] += 1
                span_start.append(i)
                span_size.append(j - i)
                depths.append(depth + 1)
                next_level.append((child, i, j))
                i = j
        level = next_level
        depth += 1
    return _Layout(first_child, num_children, byte, span_start, span_size, depths, token_nodes)


def _tokens_at_nodes(
    token_nodes: list[tuple[int, int]], num_nodes: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(token_start, token_ids, has_token): the tokens ending at node ``n`` are
    ``token_ids[token_start[n] : token_start[n + 1]]``, grouped by node (stable)."""
    nodes = np.array([n for n, _ in token_nodes], dtype=np.int64)
    order = np.argsort(nodes, kind="stable")
    counts = np.bincount(nodes, minlength=num_nodes)
    token_start = np.zeros(num_nodes + 1, dtype=np.int32)
    np.cumsum(counts, out=token_start[1:])
    token_ids = np.array([t for _, t in token_nodes], dtype=np.int32)[order]
    return token_start, token_ids, counts > 0


def _single_byte_tokens(vocab: Vocabulary) -> np.ndarray:
    """bool [256]: the bytes that are a whole token on their own (any token, EOS too)."""
    single = np.zeros(256, dtype=bool)
    for data in vocab.all_token_bytes:
        if len(data) == 1:
            single[data[0]] = True
    return single


def _subtrees(
    first_child: np.ndarray,
    num_children: np.ndarray,
    byte: np.ndarray,
    depth: np.ndarray,
    has_token: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each node's height, the 256-bit set of bytes below it and the 128-bit set of the
    lengths of the tokens below it, one level at a time from the deepest (breadth-first
    numbering: a level is a run of node numbers, and so are the children of its nodes).
    A child's lengths, with 0 added where a token ends at the child, are one more seen
    from its parent: two words shifted left by one bit."""
    height = np.zeros(len(byte), dtype=np.int32)
    below = np.zeros((len(byte), 4), dtype="<u8")
    lengths = np.zeros((len(byte), 2), dtype="<u8")
    one = np.uint64(1)
    edge = np.zeros((len(byte), 4), dtype="<u8")  # the byte into each node, as a set
    edge[np.arange(1, len(byte)), byte[1:] >> 6] = np.left_shift(
        np.uint64(1), (byte[1:] & 63).astype(np.uint64)
    )
    bounds = np.searchsorted(depth, np.arange(int(depth[-1]) + 2))
    for level in range(int(depth[-1]) - 1, -1, -1):
        parents = np.arange(bounds[level], bounds[level + 1])
        parents = parents[num_children[parents] > 0]
        if not len(parents):
            continue
        lo, hi = first_child[parents[0]], bounds[level + 2]
        cuts = first_child[parents] - lo
        height[parents] = np.maximum.reduceat(height[lo:hi], cuts) + 1
        below[parents] = np.bitwise_or.reduceat(below[lo:hi] | edge[lo:hi], cuts)
        at_or_below = lengths[lo:hi].copy()
        at_or_below[:, 0] |= has_token[lo:hi].astype("<u8")
        up = np.empty_like(at_or_below)
        up[:, 0] = at_or_below[:, 0] << one
        up[:, 1] = (at_or_below[:, 1] << one) | (at_or_below[:, 0] >> np.uint64(63))
        lengths[parents] = np.bitwise_or.reduceat(up, cuts)
    return height, below, lengths


_TRIES: BoundedCache[VocabTrie] = BoundedCache(maxsize=4)


def trie_of(vocab: Vocabulary) -> VocabTrie:
    """The trie of ``vocab``, built once per vocabulary fingerprint."""
    return _TRIES.get_or_build(vocab.fingerprint, lambda: VocabTrie.build(vocab))
