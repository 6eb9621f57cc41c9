"""The trie's summaries of each node's subtree (its height, the bytes below it, the lengths
of the tokens below it) agree with the tokens under the node, on the real 49k vocabulary."""

from __future__ import annotations

import random

import numpy as np

from fsmviz.tokens.trie import trie_of


def test_subtree_summaries_agree_with_the_tokens_below(bundled_vocab):
    trie = trie_of(bundled_vocab)
    shallow = np.flatnonzero(trie.depth <= 2).tolist()
    nodes = shallow + random.Random(0).sample(range(len(trie.byte)), 4000)
    for node in nodes:
        start, size, depth = trie.span_start[node], trie.span_size[node], int(trie.depth[node])
        below = [trie.sorted_bytes[i][depth:] for i in range(start, start + size)]
        assert trie.height[node] == max(map(len, below))
        lengths = sum(1 << n for n in {len(data) for data in below} if 1 <= n < 128)
        words = trie.lengths_below[node].tolist()
        assert words[0] | words[1] << 64 == lengths, node
        seen = sum(1 << b for b in {b for data in below for b in data})
        words = trie.subtree_bytes[node].tolist()
        assert sum(w << (64 * k) for k, w in enumerate(words)) == seen, node
