"""The vocabulary's DAWG reads exactly its tokens: every token's bytes lead from the root to
a final node, and the DAWG reads nothing else (counting its paths gives the number of
distinct token byte strings)."""

from __future__ import annotations

from functools import cache

from fsmviz.dawg import dawg_of
from fsmviz.trie import trie_of


def test_the_dawg_reads_exactly_the_tokens(bundled_vocab):
    dawg = dawg_of(bundled_vocab)
    assert dawg.num_nodes < len(trie_of(bundled_vocab).byte) / 2  # merging pays
    edges = {
        d: {
            int(dawg.edge_byte[e]): int(dawg.edge_target[e])
            for e in range(dawg.first_edge[d], dawg.first_edge[d] + dawg.num_edges[d])
        }
        for d in range(dawg.num_nodes)
    }
    eos = bundled_vocab.eos_token_id
    tokens = {data for i, data in enumerate(bundled_vocab.all_token_bytes) if data and i != eos}
    for data in tokens:
        node = dawg.root
        for byte in data:
            node = edges[node][byte]
        assert dawg.final[node], data

    @cache
    def strings(node: int) -> int:  # strings read from ``node`` to a final node
        return int(dawg.final[node]) + sum(strings(child) for child in edges[node].values())

    assert strings(dawg.root) == len(tokens)
