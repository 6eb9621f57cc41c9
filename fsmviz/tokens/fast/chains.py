"""A wide state's packed mask from its *chain*: the method of ``packwalk``'s worked example.

What it answers: the tokens allowed from a state that reads many bytes onwards, step
after step (``chain_of``: a string's loop, a run of letters), without its row. The tokens
all of whose bytes lie in what the chain reads are taken as words (``PackedVocab.inside``);
the others leave those bytes at the chain's *frontier* (``PackedVocab.leaving``), whose
nodes are walked on below (``walkbelow.walk_below``). Frontier nodes a byte or two deep
above many tokens (a space before a word) are taken as chains of their own below a
``Prefix``; those that lead into a loop are taken whole below it (``_below_loops``).
``rowwalk.Chains`` keeps the chains and words of a walker's states.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fsmviz.arrays import distinct, runs
from fsmviz.tokens.fast.packwalk import _ALL, _HIGH, PackedVocab, Prefix, _bits, _with_ids
from fsmviz.tokens.fast.walkbelow import TOKEN_WALK, walk_below
from fsmviz.tokens.trie import VocabTrie

__all__ = ["Chain", "chain_of", "chain_words"]


MIN_BYTES = 16
"""A chain reading fewer bytes onwards than this takes too few tokens at once to be worth
it (the row walks answer those states)."""


FRONTIER = 4_096
"""Frontier nodes a chain may have (``.*a``'s state 0 meets 4,000 nodes of ``a``, each
walked on: the row walks answer faster there)."""


@dataclass(frozen=True)
class Chain:
    """A state's chain: ``path[i]`` the state after ``i`` bytes of ``allowed`` (an int of
    256 bits), ``loops`` whether the last state reads them back into itself (else a token
    longer than ``len(path) - 1`` bytes of ``allowed`` dies), ``leaves`` the bytes outside
    ``allowed`` some state of the path reads. ``utf8`` (1 + a kind of ``_UTF8``; 0: none):
    ``allowed`` holds every byte from 0x80 as well, for a loop that reads any character of
    that kind back into itself (``utf8_loop``): a token of those bytes is allowed when
    that kind takes it (``utf8_bad``), and leaves the loop at a byte outside them only
    between two characters."""

    path: tuple[int, ...]
    allowed: int
    loops: bool
    leaves: int
    utf8: int = 0


def chain_of(
    state: int, main: Callable[[int], tuple[int, int]], live: Callable[[int], int], height: int
) -> Chain | None:
    """The chain of ``state`` (``main(s)``: the bytes of ``s``'s main class and their
    target; ``live(s)``: the bytes ``s`` reads), or None where it reads too few bytes
    onwards (``MIN_BYTES``) or its end still reads some of them.

    ``[a-z]{1,3}=`` read as states 0-3 (3 letters read; each state reads the letters but
    the last, and ``=`` after the first letter): the chain of 1 reads a letter twice more,
    then only ``=``, outside the letters:

    >>> letters = sum(1 << b for b in b"abcdefghijklmnopqrstuvwxyz")
    >>> main = {0: (letters, 1), 1: (letters, 2), 2: (letters, 3), 3: (1 << 61, 4)}
    >>> live = {s: bits | (1 << 61 if s else 0) for s, (bits, _) in main.items()}
    >>> chain = chain_of(1, main.__getitem__, live.__getitem__, height=8)
    >>> chain.path, chain.allowed == letters, chain.loops, chain.leaves == 1 << 61
    ((1, 2, 3), True, False, True)
    """
    path, allowed = [state], _ALL
    loops = False
    while len(path) <= height:
        bits, target = main(path[-1])
        if not allowed & bits:
            break
        allowed &= bits
        if target == path[-1]:
            loops = True
            break
        path.append(target)
    if allowed.bit_count() < MIN_BYTES:
        return None
    if not loops and len(path) <= height and live(path[-1]) & allowed:
        return None  # past its end a token of ``allowed`` may live on: not taken whole
    leaves = 0
    for at in dict.fromkeys(path):
        leaves |= live(at)
    return Chain(tuple(path), allowed, loops, leaves & ~allowed)


def chain_words(
    vocab: PackedVocab,
    trie: VocabTrie,
    chain: Chain,
    table: np.ndarray,
    inside: Callable[[int, int], np.ndarray],
    chain_at: Callable[[int], Chain | None],
    utf8: Callable[[int], int] | None = None,
) -> np.ndarray | None:
    """The packed words (uint32) of the tokens allowed from the chain's first state; None
    where its frontier is too large (``FRONTIER``, ``BELOW``, ``GROUPS``).
    ``inside(allowed, skip)`` is ``vocab.inside``, kept; ``chain_at(s)`` the chain of ``s``,
    kept; ``table`` the byte DFA's. A chain reading no byte onwards (``allowed`` 0: a state
    reading a capital, then letters) starts at its state's first bytes instead.

    Frontier nodes one or two bytes deep with many tokens below (a space before a word; a
    space and a capital) are grouped by the state they reach (``_groups``): where that
    state has a chain, the group is taken as the chain's own are, one or two levels down
    (``Prefix``: the tokens beginning with those bytes whose other bytes lie in the chain's
    bytes, ``inside(..., skip)``, and the chain's frontier below them); where it has none,
    a group one byte deep is split by the next byte. Below the other frontier nodes whose
    byte some state reads (below the others every token dies), the trie is walked
    (``walk_below``). ``utf8(s)``: the kind of UTF-8 the loop ``s`` reads back into itself
    (``utf8_loop``, kept): such a chain takes the tokens of its bytes and UTF-8 at once
    (``Chain.utf8``), where their walk below a frontier of every lead byte was most of a
    string loop's mask.
    """
    words, own, pending = None, [], []
    todo = [(None, chain.path[0], chain if chain.allowed else None, None)]
    for _ in range(GROUPS):
        if not todo:
            break
        prefix, state, after, tops = todo.pop()
        if after is None:  # a state's next bytes, one level down
            nodes, states = _children(trie, vocab.root_child, table, prefix, state)
            if prefix is not None:
                own.append(tops[0])
        else:
            if prefix is None or prefix.ascii:  # UTF-8 from the root, as from it
                after = _with_utf8(after, utf8)
            found = _frontier(vocab, after, table, prefix)
            if found is None:  # split a narrow state's by its next bytes, else walk them
                if (prefix is None or prefix.depth == 1) and _narrow(table, state):
                    todo.append((prefix, state, None, tops))
                elif tops is None:
                    return None
                else:
                    pending.append(tops)
                continue
            nodes, states = found
            skip = 0 if prefix is None else prefix.depth
            got = _within(vocab, after, inside(after.allowed, skip), skip)
            got = got if prefix is None else got & prefix.words(vocab)
            words = got if words is None else words | got
        more, rest = _groups(vocab, trie, table, nodes, states, chain_at)
        if after is not None and int(vocab.span_size[rest[0]].sum()) > LOOP_TOKENS:
            got, rest = _below_loops(vocab, trie, table, rest, after, prefix, chain_at, utf8)
            words = words if got is None else words | got
        todo += more
        pending.append(rest)
    else:
        if todo:
            return None
    pending = [pairs for pairs in pending if len(pairs[0])]
    if len(pending) <= 1:
        nodes, states = pending[0] if pending else (vocab.places[:0], vocab.places[:0])
    else:
        nodes, states = (np.concatenate(arrays) for arrays in zip(*pending, strict=True))
    found = (
        walk_below(vocab, trie, table, nodes, states, chain.allowed)
        if len(nodes)
        else vocab.sorted_ids[:0]
    )
    if found is None:
        return None
    if own:
        own_nodes = np.concatenate(own)
        counts = trie.token_start[own_nodes + 1] - trie.token_start[own_nodes]
        found = np.concatenate([found, trie.token_ids[runs(trie.token_start[own_nodes], counts)]])
    if words is None:
        words = np.zeros_like(vocab.shorter[-1])
    return _with_ids(words, found)


def _below_loops(
    vocab: PackedVocab,
    trie: VocabTrie,
    table: np.ndarray,
    pairs: tuple[np.ndarray, np.ndarray],
    chain: Chain,
    prefix: Prefix | None,
    chain_at: Callable[[int], Chain | None],
    utf8: Callable[[int], int] | None,
) -> tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray]]:
    """Of ``chain``'s frontier pairs (node, state), those whose state ``t`` loops on
    itself over bytes ``L`` holding every byte of their paths (``chain.allowed``, the
    ``prefix``'s bytes, the node's own) taken at once: the tokens below such a node whose
    bytes all lie in ``L`` are allowed (``t`` reads them back into itself), as packed words
    (``inside(L)`` within the nodes' tokens); the others leave ``L`` below the node, at a
    node of ``t``'s own frontier, walked on from there. Returns those words (None: none
    taken) and the pairs left to walk: the rest and ``t``'s frontier below the nodes.

    ``ANY*(?:f.*)ANY*`` from its start: the frontier is every ``f`` (~700 nodes), each
    leading to the state after it, which reads any byte but a newline back into itself:
    below an ``f`` every token is allowed up to its first newline, where the walk goes on;
    ``f`` and ``ANY``'s bytes lie in that loop's bytes. UTF-8: the loop's kind must take
    the path's characters (``chain``'s kind as strict or the same, or no byte from 0x80
    on the path) and the node's byte must end a character (ASCII). Only states reading
    some node's byte back into themselves are asked for a chain (a loop's bytes lead
    back into it): not the escape after a backslash (~30 µs for no chain)."""
    nodes, states = pairs
    path = chain.allowed | (0 if prefix is None else prefix.first | prefix.second)
    found, rest = None, np.ones(len(nodes), dtype=bool)
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    byte = trie.byte[nodes]
    back = table[states, byte] == states  # a loop's bytes lead back into it: else no chain
    for state in distinct(states[back]).tolist()[:LOOPS]:
        loop = chain_at(state)
        if loop is None or loop.path != (state,) or not loop.loops:
            continue
        loop = _with_utf8(loop, utf8) if prefix is None or prefix.ascii else loop
        mine = states == state
        mine &= _bits(loop.allowed & (_ALL if not loop.utf8 else ~_HIGH))[byte]
        if path & ~loop.allowed or not mine.any() or not _takes(chain, path, loop):
            continue
        below = vocab.leaving(loop.allowed, loop.leaves, None, loop.utf8)
        if below is None:
            continue
        tops = nodes[mine]
        words = _tokens_of(vocab, tops) & _within(vocab, loop, vocab.inside(loop.allowed), 0)
        found = words if found is None else found | words
        rest &= ~mine
        kept.append(_frontier_below(vocab, table, tops, below, state))
    if found is None:
        return None, pairs
    kept.append((nodes[rest], states[rest]))
    return found, tuple(np.concatenate(arrays) for arrays in zip(*kept, strict=True))


LOOPS = 8
"""States a frontier's pairs lead to that ``_below_loops`` looks at, at most."""
LOOP_TOKENS = 2_048
"""Frontier pairs with fewer tokens below are walked (``walk_below``) without looking for
loops below them (``_below_loops``: a few chains, words and a frontier, ~0.1-0.2 ms, where
the walk below a schema's ~200 pairs, ~950 tokens, costs less). Over the held-out corpus
the searches' frontiers into ``.*`` (``ANY*(?:f.*)ANY*``: every ``f``) hold 3,000-17,000."""


def _takes(chain: Chain, path: int, loop: Chain) -> bool:
    """Whether ``loop``'s kind of UTF-8 (if any) takes every path above a frontier node
    of ``chain`` (``path``: their bytes): ends between two characters it reads."""
    if not loop.utf8 or not path & _HIGH:
        return True
    return chain.utf8 >= loop.utf8  # the same kind, or the strict one (no C1) in the other


def _tokens_of(vocab: PackedVocab, tops: np.ndarray) -> np.ndarray:
    """The tokens at and below the nodes ``tops``, packed."""
    ids = vocab.sorted_ids[runs(vocab.span_start[tops], vocab.span_size[tops])]
    return _with_ids(np.zeros_like(vocab.shorter[-1]), ids)


def _frontier_below(
    vocab: PackedVocab,
    table: np.ndarray,
    tops: np.ndarray,
    frontier: tuple[np.ndarray, np.ndarray, np.ndarray],
    state: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The nodes of a loop's ``frontier`` (its nodes, depths, bytes) below one of ``tops``
    (subtrees apart), with the state their byte leads to from the loop's ``state`` where
    it reads it. A node whose first token lies among a top's is below it or above it on
    its path, whose bytes the loop reads: no frontier node."""
    nodes, _, bytes_in = frontier
    order = np.argsort(vocab.span_start[tops])
    starts, tops = vocab.span_start[tops][order], tops[order]
    at = vocab.span_start[nodes]
    top = np.searchsorted(starts, at, side="right") - 1
    inside = top >= 0
    top = np.maximum(top, 0)
    inside &= at < starts[top] + vocab.span_size[tops[top]]
    targets = table[state, bytes_in[inside]].astype(np.int64)
    alive = targets >= 0
    return nodes[inside][alive], targets[alive]


FEW_NODES = 16
"""A frontier of at most this many nodes is read in plain Python (``_frontier``, ``_groups``:
a numpy round costs more than a few nodes' steps)."""
GROUPS = 24
"""Groups (``_groups``) a chain's words may take, at most."""
SPLIT = 64
"""A state reading fewer bytes than this whose chain's frontier is too large is split by
its next bytes (``[A-Z]`` before ``[a-z]{1,10}``: every node of a lowercase letter below a
capital), where it reads more it is not worth it (``.*a``)."""


def _narrow(table: np.ndarray, state: int, below: int = SPLIT) -> bool:
    """Whether ``state`` reads fewer than ``below`` bytes."""
    return int(np.count_nonzero(table[state] >= 0)) < below


def _children(
    trie: VocabTrie, root_child: np.ndarray, table: np.ndarray, prefix: Prefix | None, state: int
) -> tuple[np.ndarray, np.ndarray]:
    """The children of the root (``prefix`` None) or of the nodes one byte deep of
    ``prefix`` whose byte ``state`` reads, and the states they reach (``root_child``:
    ``PackedVocab.root_child``)."""
    if prefix is None:  # the root's children: by byte
        row = table[state]
        read = np.flatnonzero(row >= 0)
        nodes = root_child[read]
        present = nodes >= 0
        return nodes[present], row[read[present]].astype(np.int64)
    if prefix.first & (prefix.first - 1) == 0:  # one node (a space): its children, a range
        top = root_child.item(prefix.first.bit_length() - 1)
        start = trie.first_child.item(top)
        nodes = np.arange(start, start + trie.num_children.item(top), dtype=np.int64)
    else:
        tops = root_child[_bits(prefix.first)[:256]]
        tops = tops[tops >= 0]
        nodes = runs(trie.first_child[tops].astype(np.int64), trie.num_children[tops])
    states = table[state, trie.byte[nodes]]
    alive = states >= 0
    return nodes[alive], states[alive].astype(np.int64)


def _groups(
    vocab: PackedVocab,
    trie: VocabTrie,
    table: np.ndarray,
    nodes: np.ndarray,
    states: np.ndarray,
    chain_at: Callable[[int], Chain | None],
) -> tuple[list, tuple[np.ndarray, np.ndarray]]:
    """Of the pairs (node, state): those one or two bytes deep grouped by their state (and,
    two bytes deep, their first byte), a group with more than ``TOKEN_WALK`` tokens below
    as work for ``chain_words`` (a ``Prefix``, the state, its chain, the nodes and states)
    where that state has a chain, or the group is one byte deep and its state reads at
    least ``MIN_BYTES`` (a space before a capital or a letter: split by the next byte;
    before the ``F`` of ``FROM``, walked below); and the rest."""
    if not len(nodes):
        return [], (nodes, states)
    shallow = np.flatnonzero(vocab.depth_of[nodes] <= 2)
    at = nodes[shallow]
    sizes = vocab.span_size[at]
    if int(sizes.sum()) <= TOKEN_WALK:  # no group could be large
        return [], (nodes, states)
    groups, rest = [], np.ones(len(nodes), dtype=bool)
    for key, places in _big_groups(vocab, trie, at, sizes, states[shallow], len(table)):
        top_lead, state = divmod(key, len(table))  # (lead, state): > TOKEN_WALK tokens below
        after = chain_at(state)
        if after is None and (top_lead < 256 or _narrow(table, state, MIN_BYTES)):
            continue  # no chain, and not worth splitting: walked below
        tops = at[places]
        bits = sum(1 << b for b in trie.byte[tops].tolist())
        prefix = Prefix(bits) if top_lead == 256 else Prefix(1 << top_lead, bits)
        groups.append((prefix, state, after, (tops, np.full(len(tops), state, dtype=np.int64))))
        rest[shallow[places]] = False
    return groups, (nodes[rest], states[rest])


def _big_groups(
    vocab: PackedVocab,
    trie: VocabTrie,
    at: np.ndarray,
    sizes: np.ndarray,
    states: np.ndarray,
    width: int,
) -> list[tuple[int, np.ndarray]]:
    """``_groups``' keys ``lead * width + state`` (``lead`` the first byte of a node two
    bytes deep, 256 for one byte deep) with more than ``TOKEN_WALK`` tokens below the nodes
    ``at`` (``sizes`` tokens below each, ``states`` their states), in order, each with its
    places in ``at``: a few nodes (``FEW_NODES``: a space below a word) in plain Python,
    more by one stable argsort and ``np.add.reduceat``."""
    if len(at) <= FEW_NODES:
        found: dict[int, tuple[int, list[int]]] = {}
        depths, starts = vocab.depth_of[at].tolist(), vocab.span_start[at].tolist()
        for place, (depth, start, size, state) in enumerate(
            zip(depths, starts, sizes.tolist(), states.tolist(), strict=True)
        ):
            key = (trie.sorted_bytes[start][0] if depth == 2 else 256) * width + state
            total, places = found.get(key, (0, []))
            found[key] = total + size, [*places, place]
        return [
            (key, np.array(places, dtype=np.int64))
            for key, (total, places) in sorted(found.items())
            if total > TOKEN_WALK
        ]
    first = vocab.padded[vocab.padded_start[vocab.span_start[at]]]  # any token's below
    keys = np.where(vocab.depth_of[at] == 2, first, 256) * width + states
    order = np.argsort(keys, kind="stable")  # places in ``at``, by (lead, state)
    keys = keys[order]
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    big = np.flatnonzero(np.add.reduceat(sizes[order], starts) > TOKEN_WALK).tolist()
    ends = [*starts[1:].tolist(), len(order)]
    return [(int(keys[starts[g]]), order[starts[g] : ends[g]]) for g in big]


def _with_utf8(chain: Chain, utf8: Callable[[int], int] | None) -> Chain:
    """``chain`` with every byte from 0x80 allowed (``Chain.utf8``), where it is a loop of
    one state reading any UTF-8 character back into itself; else ``chain``."""
    if utf8 is None or chain.utf8 or not chain.loops or len(chain.path) != 1:
        return chain
    kind = 0 if chain.allowed & _HIGH else utf8(chain.path[0])
    if not kind:
        return chain
    return Chain(chain.path, chain.allowed | _HIGH, True, chain.leaves & ~_HIGH, kind)


def _within(vocab: PackedVocab, chain: Chain, inside: np.ndarray, skip: int) -> np.ndarray:
    """``inside`` less the tokens longer than ``skip`` bytes and the chain, where it ends
    (those die past its end), and, for a ``utf8`` chain, the tokens that are not UTF-8."""
    if chain.utf8:
        return inside & ~vocab.utf8_bad[chain.utf8 - 1]
    if chain.loops:
        return inside
    return inside & vocab.shorter[min(len(chain.path) + skip, len(vocab.shorter)) - 1]


def _frontier(
    vocab: PackedVocab, chain: Chain, table: np.ndarray, prefix: Prefix | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The chain's frontier nodes (with ``prefix``: below it, the chain's state after it)
    whose state reads their byte, and the states they lead to; None past ``FRONTIER``
    nodes."""
    found = vocab.leaving(chain.allowed, chain.leaves, prefix, chain.utf8)
    if found is None or len(found[0]) > FRONTIER:
        return None
    nodes, depths, bytes_in = found
    above = 1 if prefix is None else 1 + prefix.depth
    last = len(chain.path) - 1
    if len(nodes) <= FEW_NODES:  # none or a few (a word's next space): in plain Python
        kept, states = [], []
        for node, depth, byte in zip(
            nodes.tolist(), depths.tolist(), bytes_in.tolist(), strict=True
        ):
            steps = depth - above
            if chain.loops or steps <= last:
                state = table.item(chain.path[min(steps, last)], byte)
                if state >= 0:
                    kept.append(node)
                    states.append(state)
        return np.array(kept, dtype=np.int64), np.array(states, dtype=np.int64)
    steps = depths - above  # the chain's bytes above
    if not chain.loops:  # a path of the chain's bytes longer than it died at its end
        near = steps <= last
        nodes, steps, bytes_in = nodes[near], steps[near], bytes_in[near]
    before = np.asarray(chain.path)[np.minimum(steps, last)]
    states = table[before, bytes_in]
    alive = states >= 0
    return nodes[alive], states[alive]
