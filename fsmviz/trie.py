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

import numpy as np

from .cache import BoundedCache
from .vocab import Vocabulary

__all__ = ["VocabTrie", "trie_of"]


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

    def merged(self, byte_class: np.ndarray, wanted: np.ndarray) -> VocabTrie:
        """The trie with each byte replaced by its class (``byte_class[b]``), tokens whose
        class strings are equal merged into one node, and only paths through classes
        where ``wanted`` is True kept. Its ``byte`` array then holds class ids.

        When a pattern treats all letters alike, " hello" and " world" become one path:
        the 49k tokens of a vocabulary fold into a few hundred nodes for ``[a-z]+@...``.

        >>> from fsmviz import Vocabulary
        >>> vocab = Vocabulary.from_strings(["ab", "ba", "a", "c", "ca"], eos_token="</s>")
        >>> trie = VocabTrie.build(vocab)
        >>> letters = np.zeros(256, dtype=np.int64)
        >>> letters[ord("c")] = 1          # class 0: a, b (and the rest); class 1: c
        >>> merged = trie.merged(letters, np.array([True, True]))
        >>> len(trie.byte), len(merged.byte)   # root a b c ab ba ca -> root A C AA CA
        (7, 5)
        >>> [vocab.token_text(int(t)) for t in merged.token_ids]  # by node, then id
        ['a', 'c', 'ab', 'ba', 'ca']
        """
        num_classes = len(wanted)
        parent_of, classes = [], [np.full(1, -1)]  # per level: each new node's parent, class
        pairs_node, pairs_byte_node = [], []  # (merged node, original node) of token nodes
        nodes = np.arange(self.first_child[0], self.first_child[0] + self.num_children[0])
        parents = np.zeros(len(nodes), dtype=np.int64)  # merged node of each node's parent
        size = 1
        while nodes.size:
            cls = byte_class[self.byte[nodes]]
            keep = wanted[cls]
            nodes, parents, cls = nodes[keep], parents[keep], cls[keep]
            key = parents * num_classes + cls
            unique, inverse = np.unique(key, return_inverse=True)
            merged = inverse.ravel() + size
            classes.append(unique % num_classes)
            hit = self.has_token[nodes]
            pairs_node.append(merged[hit])
            pairs_byte_node.append(nodes[hit])
            parent_of.append(unique // num_classes)
            size += len(unique)
            counts = self.num_children[nodes]
            total = int(counts.sum())
            ends = np.cumsum(counts)
            children = np.repeat(self.first_child[nodes] - (ends - counts), counts)
            nodes = children + np.arange(total)
            parents = np.repeat(merged, counts)
        parent = np.concatenate(parent_of) if parent_of else np.zeros(0, np.int64)
        child_count = np.bincount(parent, minlength=size)
        starts = np.searchsorted(parent, np.arange(size)) + 1  # parents ascending: consecutive
        node = np.concatenate(pairs_node) if pairs_node else np.zeros(0, np.int64)
        byte_node = np.concatenate(pairs_byte_node) if pairs_byte_node else np.zeros(0, np.int64)
        per = self.token_start[byte_node + 1] - self.token_start[byte_node]
        owner = np.repeat(node, per)
        first = np.repeat(self.token_start[byte_node] - np.cumsum(per) + per, per)
        tokens = self.token_ids[first + np.arange(int(per.sum()))]
        order = np.lexsort((tokens, owner))
        counts = np.bincount(owner, minlength=size)
        token_start = np.zeros(size + 1, dtype=np.int32)
        np.cumsum(counts, out=token_start[1:])
        return VocabTrie(
            first_child=np.where(child_count > 0, starts, 0).astype(np.int32),
            num_children=child_count.astype(np.int32),
            byte=np.concatenate(classes).astype(np.int32),
            token_start=token_start,
            token_ids=tokens[order].astype(np.int32),
            has_token=counts > 0,
            single_byte_tokens=self.single_byte_tokens,
        )

    @staticmethod
    def build(vocab: Vocabulary) -> VocabTrie:
        eos = vocab.eos_token_id
        entries = sorted(
            (data, i) for i, data in enumerate(vocab.all_token_bytes) if data and i != eos
        )
        # Sorted tokens make every trie node a contiguous run of entries; walk depth by depth.
        first_child, num_children, byte = [0], [0], [-1]
        token_nodes: list[tuple[int, int]] = []  # (node, token id)
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
                    next_level.append((child, i, j))
                    i = j
            level = next_level
            depth += 1
        nodes = np.array([n for n, _ in token_nodes], dtype=np.int64)
        order = np.argsort(nodes, kind="stable")
        counts = np.bincount(nodes, minlength=len(byte))
        token_start = np.zeros(len(byte) + 1, dtype=np.int32)
        np.cumsum(counts, out=token_start[1:])
        single = np.zeros(256, dtype=bool)
        for data in vocab.all_token_bytes:
            if len(data) == 1:
                single[data[0]] = True
        return VocabTrie(
            first_child=np.array(first_child, dtype=np.int32),
            num_children=np.array(num_children, dtype=np.int32),
            byte=np.array(byte, dtype=np.int32),
            token_start=token_start,
            token_ids=np.array([t for _, t in token_nodes], dtype=np.int32)[order],
            has_token=counts > 0,
            single_byte_tokens=single,
        )


_TRIES: BoundedCache[VocabTrie] = BoundedCache(maxsize=4)


def trie_of(vocab: Vocabulary) -> VocabTrie:
    """The trie of ``vocab``, built once per vocabulary fingerprint."""
    return _TRIES.get_or_build(vocab.fingerprint, lambda: VocabTrie.build(vocab))
