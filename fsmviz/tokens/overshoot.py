"""Overshoot tokens (seed 002's "smarter token selection"): tokens the mask forbids, but
whose beginning completes a match.

After ``27.0`` under a float pattern the model wants ``0,``: a digit that belongs to the
number and a comma that says it is done. The index refuses the token (``27.00,`` can
never match), so a masking engine makes the model write some other digit or stop. Seed
002 accepts it and cuts the output back to the longest match, ``27.00``:

    prefix P ─┬─ t[:k] ─▶ accepting state      (P + t[:k] is a full match, 1 <= k < len(t))
              └─ t[k:] ─▶ falls off the DFA,   (t itself is not allowed)
                          or strands it

Exactly: after the text P (ending in ``state``), token ``t`` is an *overshoot token* when
it is not in ``index.allowed_tokens(state)`` and some proper, non-empty prefix ``t[:k]``
makes ``P + t[:k]`` a full match. Taking it ends the generation with the output cut after
the longest such ``k``. Tokens are bytes, so ``t[:k]`` may end anywhere in the token; it
counts only where ``P + t[:k]`` ends on a character boundary, which an accepting state of
the byte DFA always does (``fsmviz.automaton.bytedfa``).

**How.** The token's bytes are walked from ``state`` through the byte DFA, all tokens at
once over the vocabulary's trie (``fsmviz.tokens.trie``), level by level. Every live
(trie node, state) pair carries the deepest accepting depth on its path so far; a token
ending at a node, or below a child that falls off the DFA, is an overshoot token with
that depth as its cut, unless the index allows it. The naive definition is held against
it in ``tests/test_overshoot.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fsmviz.arrays import runs

__all__ = ["Overshoot", "overshoot"]


@dataclass(frozen=True)
class Overshoot:
    """The overshoot tokens of one state: sorted ids, how many of each token's bytes are
    kept (``kept[i]`` for ``tokens[i]``; the rest is cut), and the accepting state the
    kept bytes lead to."""

    tokens: np.ndarray
    kept: np.ndarray
    targets: np.ndarray

    def __len__(self) -> int:
        return len(self.tokens)

    def find(self, token_id: int) -> tuple[int, int] | None:
        """(bytes kept, state after them) for ``token_id``, or None when it is not an
        overshoot token here."""
        i = int(np.searchsorted(self.tokens, token_id))
        if i < len(self.tokens) and self.tokens[i] == token_id:
            return int(self.kept[i]), int(self.targets[i])
        return None


def overshoot(index, state: int) -> Overshoot:
    """The overshoot tokens after a text that ended in ``state`` of ``index`` (a
    ``TokenIndex``).

    >>> from fsmviz import Vocabulary, build_index
    >>> vocab = Vocabulary.from_strings(["1", "0", ".", "0,", "1.0", ",1"])
    >>> index = build_index("[0-9]+\\\\.[0-9]+", vocab)
    >>> state = index.next_state(index.next_state(index.initial_state, 0), 2)  # "1."
    >>> found = overshoot(index, state)
    >>> [(vocab.token_text(int(t)), int(k)) for t, k in zip(found.tokens, found.kept)]
    [('0,', 1), ('1.0', 1)]

    (``1.`` + ``1`` is ``1.1``, a match; the ``.0`` after it could never be.)
    """
    trie, dfa = index.trie, index.byte_dfa
    table, accepting = dfa.table, dfa.accepting
    cuts = np.zeros(len(index.vocab), dtype=np.int32)
    ends = np.full(len(index.vocab), -1, dtype=np.int32)  # accepting state at the cut
    # Frontier: live (node, state) pairs, with the deepest accepting depth before the node
    # (``last``, 0 for none) and the state there (``last_state``).
    nodes = np.zeros(1, dtype=np.int32)
    states = np.full(1, state, dtype=np.int32)
    last = np.zeros(1, dtype=np.int32)
    last_state = np.full(1, -1, dtype=np.int32)
    while len(nodes):
        # The children of the frontier, each with its parent's record.
        counts = trie.num_children[nodes]
        children = runs(trie.first_child[nodes], counts)
        parent = np.repeat(np.arange(len(nodes)), counts)
        moved = table[states[parent], trie.byte[children]]
        # What the path held before the child: the parent's record, or the parent itself
        # when it accepts (and is not the root: the cut keeps at least one byte).
        here = accepting[states] & (trie.depth[nodes] > 0)
        depth_before = np.where(here, trie.depth[nodes], last)[parent]
        state_before = np.where(here, states, last_state)[parent]
        # Children that fall off: every token at or below them overshoots, if a match came.
        dead = (moved < 0) & (depth_before > 0)
        if dead.any():
            d = children[dead]
            ids = trie.sorted_ids[runs(trie.span_start[d], trie.span_size[d])]
            cuts[ids] = np.repeat(depth_before[dead], trie.span_size[d])
            ends[ids] = np.repeat(state_before[dead], trie.span_size[d])
        live = moved >= 0
        children, moved = children[live], moved[live]
        depth_before, state_before = depth_before[live], state_before[live]
        # Tokens ending at a live child: a candidate when a match came before their end
        # (the index decides below whether the whole token is allowed after all).
        ending = trie.has_token[children] & (depth_before > 0)
        if ending.any():
            c = children[ending]
            sizes = trie.token_start[c + 1] - trie.token_start[c]
            ids = trie.token_ids[runs(trie.token_start[c], sizes)]
            cuts[ids] = np.repeat(depth_before[ending], sizes)
            ends[ids] = np.repeat(state_before[ending], sizes)
        nodes, states, last, last_state = children, moved, depth_before, state_before
    candidates = np.flatnonzero(cuts > 0)
    allowed = index.row(state).tokens
    keep = ~np.isin(candidates, allowed, assume_unique=True)
    tokens = candidates[keep].astype(np.int32)
    return Overshoot(tokens, cuts[tokens], ends[tokens])
