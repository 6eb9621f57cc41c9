"""The tokens below a frontier that the byte DFA reads to their end.

What it answers: given pairs (trie node, state), the nodes where the tokens leave a
chain's or a set's bytes (``packwalk``'s frontier) and the states there, which tokens at
and below those nodes stay alive (``walk_below``). The trie is walked pair by pair while
many tokens lie below the pairs, then the tokens left byte by byte, all at once
(``walk_entries``: one numpy round a byte, the last few in plain Python); tokens that
surely stay alive are taken unwalked (``safebytes``).
"""

from __future__ import annotations

import numpy as np

from fsmviz.arrays import runs
from fsmviz.tokens.fast.packwalk import FEW_BELOW, PackedVocab
from fsmviz.tokens.fast.safebytes import _safe_start, _unharmed
from fsmviz.tokens.trie import VocabTrie

__all__ = ["walk_below", "walk_entries"]


TOKEN_WALK = 1_024
"""Below the frontier the trie is walked pair by pair until at most this many tokens lie
below the pairs, then token by token."""
BELOW = 2_048
"""Pairs (trie node, state) a walk below the frontier may make before it gives up (a space
before a word of either case, below which lie 32,000 tokens and thousands of live pairs:
the row walks, which take their subtrees whole, answer faster)."""
ENTRY_WALK = 8_192
"""Where the pairs below a frontier pass ``BELOW`` with at most this many tokens below them
left, those tokens are walked at once (``walk_entries``) rather than given up."""


SHALLOW_PAIRS = 128
SHALLOW = 8
"""``walk_below`` walks the tokens below at least ``SHALLOW_PAIRS`` pairs at once where
they hold at most ``SHALLOW`` tokens a pair: below a search's every ``f`` (645 pairs,
3,076 tokens, ``ANY*(?:f.o)ANY*``), a level of pairs cost ~0.1 ms and thinned them little
(any byte leads on, back into the search's loop at worst); below the ~220 quotes, newlines
and UTF-8 lead bytes of ``ANY*(?:\\S/\\S|\\$\\S+)ANY*``'s start (~1,150 tokens, ~90%
allowed) a level cost ~40 µs of ~0.2 ms. (With ``TOKEN_WALK`` tokens or fewer the walk is
at once anyway: fewer than 128 pairs never pass both.)"""


def walk_below(
    vocab: PackedVocab,
    trie: VocabTrie,
    table: np.ndarray,
    nodes: np.ndarray,
    states: np.ndarray,
    safe: int = 0,
) -> np.ndarray | None:
    """The ids of the tokens at and below the pairs (trie node, state) that the byte DFA
    reads to their end: pair by pair (node, state) while many tokens lie below the pairs
    (``TOKEN_WALK``), then the tokens below them byte by byte (``walk_entries``), but for
    those ``_unharmed`` takes at once (``safe``: the ASCII bytes it starts from); past
    ``BELOW`` pairs made, the tokens left at once where at most ``ENTRY_WALK``, else None.
    At most ``FEW_BELOW`` tokens below the pairs are walked in plain Python (``_walk_few``)."""
    if int(vocab.span_size[nodes].sum()) <= FEW_BELOW:
        return _walk_few(vocab, trie, table, nodes, states)
    pairs, flat, width = (nodes, states), table.reshape(-1), table.shape[1]
    found, made = [], 0
    while len(nodes):
        below = int(vocab.span_size[nodes].sum())
        if below <= TOKEN_WALK or len(nodes) >= SHALLOW_PAIRS and below <= SHALLOW * len(nodes):
            break  # few tokens left, or a few below each of many pairs: walked at once
        made += len(nodes)
        if made > BELOW:
            if below > ENTRY_WALK:
                return None
            break  # the pairs no longer thin out: the tokens below them walked at once
        own = trie.token_start[nodes + 1] - trie.token_start[nodes]
        found.append(runs(vocab.span_start[nodes], own))  # a node's own tokens come first
        counts = trie.num_children[nodes]
        children = runs(trie.first_child[nodes], counts)
        reached = flat[np.repeat(states * width, counts) + trie.byte[children]]
        alive = reached >= 0
        nodes, states = children[alive], reached[alive]
    if len(nodes):
        sizes = vocab.span_size[nodes]
        entries = runs(vocab.span_start[nodes], sizes)
        skip = np.repeat(vocab.depth_of[nodes], sizes)
        states = np.repeat(states, sizes)
        if safe and len(entries) >= SAFE_TOKENS:
            sure = _unharmed(vocab, table, entries, states, _safe_start(trie, table, pairs, safe))
            found.append(entries[sure])
            entries, states, skip = entries[~sure], states[~sure], skip[~sure]
        found.append(walk_entries(vocab, table, entries, states, skip))
    return vocab.sorted_ids[np.concatenate(found)] if found else np.zeros(0, dtype=np.int32)


SAFE_TOKENS = 2_048
"""``walk_below`` looks for tokens it may take unwalked (``_unharmed``) where at least this
many are left to walk: the look costs ~0.05-0.1 ms, the walk of 3,000 tokens ~0.3 (of
1,000, ~0.15-0.2, where those of ``[^ ]`` hold the quote their frontier leaves by)."""


def _walk_few(
    vocab: PackedVocab, trie: VocabTrie, table: np.ndarray, nodes: np.ndarray, states: np.ndarray
) -> np.ndarray:
    """``walk_below`` for a few tokens: each one's bytes below its pair's node read in
    plain Python (a numpy round costs more than a few tokens' bytes: the ten digits after
    a counted run of letters)."""
    found, spans, sorted_bytes, step = [], vocab.span_start, trie.sorted_bytes, table.item
    sizes, depths = vocab.span_size[nodes].tolist(), vocab.depth_of[nodes].tolist()
    for start, size, skip, state in zip(
        spans[nodes].tolist(), sizes, depths, states.tolist(), strict=True
    ):
        for entry in range(start, start + size):
            at = state
            for byte in sorted_bytes[entry][skip:]:
                at = step(at, byte)
                if at < 0:
                    break
            else:
                found.append(entry)
    return vocab.sorted_ids[found] if found else np.zeros(0, dtype=np.int32)


def walk_entries(
    vocab: PackedVocab,
    table: np.ndarray,
    entries: np.ndarray,
    states: np.ndarray,
    skip: np.ndarray,
) -> np.ndarray:
    """Those of ``entries`` (positions in the trie's byte order) whose tokens' bytes past
    the first ``skip`` the byte DFA (``table``) reads to the end from ``states``, walked
    together, one round a byte, longest first, so that a round walks a prefix of them
    (those with bytes left). A state that died (-1) indexes some row from the end and
    reads garbage: ORed with its sign it stays -1 (no copy of the table with a dead row:
    a new index's first copy of 660 KB cost ~0.1-0.2 ms of fresh pages). The ended and
    the dead are dropped after ``FIRST_DROP`` rounds where most died, then every 8; the
    last few long ones walked on in Python (``FEW_WALKING``). Tokens are jumped
    (``_jump``) before the first round where they average ``LONG`` bytes and most read
    their first byte back into their state (``_staying``), else where more than ``JUMP``
    rounds are left after a drop.

    >>> from fsmviz import Vocabulary, build_index
    >>> from fsmviz.tokens.fast.packwalk import packed_vocab
    >>> index = build_index("[0-9]+", Vocabulary.from_strings(["1", "12", "a1"]))
    >>> vocab, table = packed_vocab(index.trie, 3), index.byte_dfa.table
    >>> start, none = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
    >>> sorted(walk_entries(vocab, table, np.arange(3), start, none).tolist())  # "1", "12"
    [0, 1]
    """
    left = vocab.lengths[entries] - skip
    at = vocab.padded_start[entries] + skip
    states = states.astype(np.int64, copy=False)
    jumps = True
    if int(left.sum()) >= LONG * len(left) and _staying(table, vocab.padded, states, at, left):
        at, left, jumps = _jump(table, vocab.padded, states, at, left)  # at once: long loops
    order = np.argsort(left.astype(np.int16), kind="stable")[::-1]  # longest first (radix)
    left, states, at = left[order], states[order], at[order]
    found, done, longest = [], 0, int(left[0]) if len(left) else 0
    while done < longest:
        rounds = min(longest, done + 8)
        # walking[k]: how many have a byte left at round ``done + k`` (``left`` descends)
        ends = np.searchsorted(left[::-1], np.arange(done, rounds + 1), side="right")
        walking = (len(left) - ends).tolist()
        for k in range(rounds - done):
            n = walking[k]
            if not done and k == FIRST_DROP and 2 * np.count_nonzero(states[:n] >= 0) < n:
                rounds, walking[-1] = k, n  # most died at once: dropped now
                break
            if n <= FEW_WALKING:  # the last few long ones: on in Python
                found.append(order[n:][states[n:] >= 0])
                offset = done + k
                alive = _walk_on(
                    table, vocab.padded, states[:n], at[:n] + offset, left[:n] - offset
                )
                found.append(order[:n][alive])
                return entries[np.concatenate(found)]
            head = states[:n]  # >> 63 below: -1 if dead, else 0
            np.bitwise_or(table[head, vocab.padded[at[:n] + (done + k)]], head >> 63, out=head)
        done, n = rounds, walking[-1]
        if done < longest:  # drop the ended and the dead
            found.append(order[n:][states[n:] >= 0])
            live = states[:n] >= 0
            order, states, at, left = (part[:n][live] for part in (order, states, at, left))
            if jumps and longest - done > JUMP and len(left) > FEW_WALKING:
                at, left, jumps = _jump(table, vocab.padded, states, at + done, left - done)
                turn = np.argsort(left.astype(np.int16), kind="stable")[::-1]
                order, states, at, left = (part[turn] for part in (order, states, at, left))
                done, longest = 0, int(left[0])
    found.append(order[states >= 0])
    return entries[np.concatenate(found)]


JUMP = 16
"""``walk_entries`` jumps (``_jump``) where more than this many rounds are left."""
LONG = 4
"""``walk_entries`` jumps before its first round where the tokens average at least this
many bytes to walk and most stay in their state (``_staying``): below a search's newline
node (runs of spaces, 2,400 bytes in 359 tokens, 2 in 3 staying) the first 8 rounds
walked them all, where one jump passes most of their bytes; tokens this short (below a
quote: ``",``, ``":``) end within those rounds anyway, and where few stay (``[^/](.+)``:
1 in 8) the jump passes next to nothing and most die within 3 rounds (twice the cost)."""


def _staying(
    table: np.ndarray, padded: np.ndarray, states: np.ndarray, at: np.ndarray, left: np.ndarray
) -> bool:
    """Whether at least half of the tokens with bytes ``left`` read their next byte (at
    ``at`` in ``padded``) back into their state (``states``): a jump would pass them.
    (Those with none read the pad 256 as 255, which no UTF-8 state reads.)"""
    stays = table[states, np.minimum(padded[at], 255)] == states
    return 2 * int(np.count_nonzero(stays)) >= int(np.count_nonzero(left))


def _jump(
    table: np.ndarray, padded: np.ndarray, states: np.ndarray, at: np.ndarray, left: np.ndarray
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Each token moved past the bytes from ``at`` that its state reads back into itself
    (its state stays as it is): ``(at, left, again)``, ``again`` where the jump passed at
    least half the bytes left (else another is not worth its pass over them). A run of
    spaces below ``\\s*``'s newline, a line below ``.*``: ~80 rounds of a few tokens each
    (~5 us a round) where one pass over their bytes is ~30 us.

    >>> table = np.array([[0, 1], [-1, 1]])  # 0 loops on byte 0, 1 on byte 1
    >>> padded = np.array([0, 0, 1, 1, 0, 0, 0], dtype=np.uint8)
    >>> at, left, again = _jump(table, padded, np.array([0, 0]), np.array([0, 4]), np.array([4, 3]))
    >>> at.tolist(), left.tolist(), again  # the first stops at its first 1, the second ends
    ([2, 7], [2, 0], True)
    """
    owner = np.repeat(np.arange(len(left)), left)
    stays = states[owner]
    out = np.flatnonzero(table[stays, padded[runs(at, left)]] != stays)
    first = out[np.concatenate(([True], owner[out[1:]] != owner[out[:-1]]))] if len(out) else out
    steps = left.copy()
    steps[owner[first]] = first - (np.cumsum(left) - left)[owner[first]]
    return at + steps, left - steps, 2 * int(steps.sum()) >= int(left.sum())


FIRST_DROP = 3
"""``walk_entries`` drops the ended and the dead after this many rounds where most died (a
space before ``FROM``: 382 tokens, 84 -> 56 us), then every 8 rounds."""
FEW_WALKING = 32
"""``walk_entries`` walks on in Python once at most this many tokens have bytes left (a
numpy round costs ~5 µs however few it walks, a byte in Python ~0.1 µs: the one 23-byte
token below a CSV field's frontier took 15 rounds alone; below a search's newlines and
UTF-8 lead bytes, ~30 tokens of 10-79 bytes (box drawing, runs of spaces) took 79)."""


def _walk_on(
    table: np.ndarray, padded: np.ndarray, states: np.ndarray, at: np.ndarray, left: np.ndarray
) -> list[bool]:
    """Whether each of a few tokens stays alive reading its ``left`` bytes from ``at`` in
    ``padded`` (``PackedVocab.padded``) from ``states``, in plain Python over the byte DFA's
    ``table``."""
    alive = []
    for state, start, size in zip(states.tolist(), at.tolist(), left.tolist(), strict=True):
        for byte in padded[start : start + size].tolist():
            if state < 0:
                break
            state = table.item(state, byte)
        alive.append(state >= 0)
    return alive
