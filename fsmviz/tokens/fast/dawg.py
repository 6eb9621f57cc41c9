"""The vocabulary as a minimal automaton, and successor sets walked over it.

The byte trie (``fsmviz.tokens.trie``) shares the *beginnings* of tokens: " the", " them" and
" theory" read " the" once. Their *endings* are not shared: the trie holds one subtree
"ing" under every token stem that continues with it, and one leaf per token (most of its
100,000 nodes). Merging every pair of trie nodes whose subtrees are equal (they hold the
same set of continuations) gives the vocabulary's *minimal acyclic automaton*, or DAWG:
for SmolLM2's 49,152 tokens, 21,745 nodes instead of 100,298. All leaves become one node.

The DAWG reads exactly the vocabulary's tokens, but a node no longer says *which* token
led to it (many paths meet there), so it cannot make a row (the token ids). It answers
what the whole index asks: from each state, which states can some token lead to? The walk
moves pairs (DAWG node, DFA state) as the trie walk does, and pays for each pair once,
where the trie walk pays once per path into it: for an e-mail pattern 19,000 pairs instead
of 200,000.

**Which start reached a pair.** The walk starts from many states at once, and a pair may
be reached from several of them. Each pair carries a bit mask of the starts (at most 64
per walk, one bit each) that reach it; where two paths meet, their masks are merged, and a
pair is walked again only with the bits it has not carried before. A pair on a node where
a token ends adds its state to the successor set of every start in its mask.

**Where a state loops.** In a loop over a wide class (the ``[a-zA-Z0-9_.+-]+`` of an
e-mail's local part, a JSON string's ``[^"]+``) a pair whose bytes below all loop back to
its state ends every token below in that state, whatever they spell: the pair counts as a
token's end and is walked no further. Each DAWG node keeps the set of bytes below it, so
the test is one AND per pair. Most of the vocabulary is letters, so most pairs stop at
once (pink_floyd_json's 18 string states: ~14 → ~3 ms). Where the bytes below either loop
or kill the path (a word of a slug: letters go on, a space ends it), every token below that
lives ends in the pair's state, so the pair is walked no further once its starts reached
that state (the slug's walk: one round, not three and a tail).

A worked example with the toy vocabulary ``a b ab ba aa`` and ``[ab]{0,3}`` (states 0, 1,
2, 3 count the letters read). The tokens ``ab``, ``ba`` and ``aa`` all end in one node,
the leaf; ``a`` and ``b`` stay apart (``a`` continues with ``a`` or ``b``, ``b`` only
with ``a``).

>>> from fsmviz import Vocabulary, build_index
>>> vocab = Vocabulary.from_strings(["a", "b", "ab", "ba", "aa"], eos_token="</s>")
>>> index = build_index("[ab]{0,3}", vocab)
>>> dawg = dawg_of(vocab)
>>> len(index.trie.byte), dawg.num_nodes   # trie: root, a, b, aa, ab, ba; DAWG: root, a, b, leaf
(6, 4)
>>> origin, target = dawg_successor_pairs(dawg, index.byte_dfa.table, [0, 1, 2, 3])
>>> sorted(zip(origin.tolist(), target.tolist()))
[(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from threading import Lock

import numpy as np

from fsmviz.arrays import runs
from fsmviz.cache import BoundedCache
from fsmviz.tokens.trie import VocabTrie, trie_of
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["MAX_STARTS", "VocabDawg", "byte_reach", "dawg_of", "dawg_successor_pairs"]

MAX_STARTS = 64
"""Starts walked together, one bit each of a ``uint64`` mask. (Larger DFAs, such as a JSON
schema's thousands of states, are walked pair by pair or by node sets: ``fsmviz.tokens.index``.)"""
TAIL = 256
"""Tokens left below the walk's pairs, past its widest depth, when it goes on one by one
in Python (``_walk_tail``): a measure of the work left, where the number of pairs is not
(an e-mail's walk ends with 16 pairs, but 850 pairs below them, 1.5 ms in Python)."""
KEPT_SCRATCH = 64 << 20
"""Bytes of work arrays a DAWG keeps between walks (``_Scratch``)."""


class _Scratch:
    """The walk's two arrays over every (node, state) pair, kept between walks.

    ``carried`` must start zeroed, and a fresh array of 10 or 20 MB costs more than the
    walk: calloc clears the memory (~2 ms), or the system clears it page by page on first
    touch, which on a loaded machine took anywhere from 17 to 345 ms. So a walk takes the
    kept arrays, clears the entries of ``carried`` it set (a few thousand), and gives them
    back. Walks running at once each take their own; one pair of arrays is kept, of at
    most ``KEPT_SCRATCH`` bytes. ``slot`` needs no clearing: each round reads only the
    entries it has just written."""

    def __init__(self) -> None:
        self._lock = Lock()
        self._kept: tuple[np.ndarray, np.ndarray] | None = None  # (carried's bytes, slot)

    def take(self, size: int, mask_type: type) -> tuple[np.ndarray, np.ndarray]:
        """``carried`` (zeroed, of ``mask_type``) and ``slot`` (int32), ``size`` each."""
        nbytes = size * np.dtype(mask_type).itemsize
        with self._lock:
            kept, self._kept = self._kept, None
        if kept is None or len(kept[0]) < nbytes or len(kept[1]) < size:
            kept = (np.zeros(nbytes, dtype=np.uint8), np.empty(size, dtype=np.int32))
        return kept[0][:nbytes].view(mask_type), kept[1][:size]

    def give(self, carried: np.ndarray, slot: np.ndarray, touched: np.ndarray) -> None:
        """Hand the arrays back, once ``carried[touched]`` were the only entries set."""
        carried[touched] = 0
        whole, whole_slot = carried.base, slot.base  # ``take`` hands out views of them
        if whole.nbytes + whole_slot.nbytes <= KEPT_SCRATCH:
            with self._lock:
                if self._kept is None or len(self._kept[1]) < len(whole_slot):
                    self._kept = (whole, whole_slot)


@dataclass(frozen=True, eq=False)
class VocabDawg:
    """A minimal acyclic automaton over bytes that reads exactly the vocabulary's tokens.
    Edges of node ``d`` are ``first_edge[d] .. first_edge[d] + num_edges[d] - 1``; edge
    ``e`` reads ``edge_byte[e]`` into ``edge_target[e]``; ``final[d]``: a token ends here."""

    first_edge: np.ndarray  # int64 [num_nodes]
    num_edges: np.ndarray  # int64 [num_nodes]
    edge_byte: np.ndarray  # int64 [num_edges]
    edge_target: np.ndarray  # int64 [num_edges]
    final: np.ndarray  # bool [num_nodes]
    below: np.ndarray  # <u8 [num_nodes, 4]: the bytes below, as ``VocabTrie.subtree_bytes``
    tokens_below: np.ndarray  # int64 [num_nodes]: tokens at or below, ``VocabTrie.span_size``
    root: int
    nodes: tuple[tuple[bool, tuple[tuple[int, int], ...]], ...] = field(repr=False)
    """The same automaton as plain Python values, for walking a few pairs one by one:
    ``nodes[d]`` is (final, ((byte, child), ...))."""
    below_bits: tuple[int, ...] = field(repr=False)
    """``below`` as Python ints (bit b: byte b is below), for the same walk."""
    byte_weight: np.ndarray = field(repr=False)
    """float64 [256]: how often each byte occurs in the tokens (a token holding it twice
    counts twice); the walk tells the rare bytes apart (``_Idle``)."""
    scratch: _Scratch = field(default_factory=_Scratch, repr=False)

    @property
    def num_nodes(self) -> int:
        return len(self.final)

    @staticmethod
    def of(trie: VocabTrie) -> VocabDawg:
        """Merge the trie's equal subtrees, from the leaves up: a node is known by whether
        a token ends there and by its edges (byte, merged child). Breadth-first numbering
        puts children after their parent, so walking the nodes backwards meets every child
        before its parent. (~0.3 s for 49k tokens, once per vocabulary.)"""
        first_child = trie.first_child.tolist()
        num_children = trie.num_children.tolist()
        byte, has_token = trie.byte.tolist(), trie.has_token.tolist()
        merged = [0] * len(byte)  # trie node -> DAWG node
        known: dict[tuple[bool, tuple[tuple[int, int], ...]], int] = {}
        for node in range(len(byte) - 1, -1, -1):
            start = first_child[node]
            edges = tuple(
                (byte[child], merged[child]) for child in range(start, start + num_children[node])
            )
            merged[node] = known.setdefault((has_token[node], edges), len(known))
        signatures = list(known)  # in DAWG node order
        # Trie nodes merged into one DAWG node hold equal subtrees, so equal bytes below.
        below = np.empty((len(signatures), 4), dtype=trie.subtree_bytes.dtype)
        below[merged] = trie.subtree_bytes
        tokens_below = np.empty(len(signatures), dtype=np.int64)
        tokens_below[merged] = trie.span_size
        counts = np.array([len(edges) for _, edges in signatures], dtype=np.int64)
        pairs = [pair for _, edges in signatures for pair in edges]
        flat = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        return VocabDawg(
            first_edge=np.cumsum(counts) - counts,
            num_edges=counts,
            edge_byte=flat[:, 0].copy(),
            edge_target=flat[:, 1].copy(),
            final=np.array([final for final, _ in signatures], dtype=bool),
            below=below,
            tokens_below=tokens_below,
            root=merged[0],
            nodes=tuple(signatures),
            below_bits=_as_ints(below),
            byte_weight=np.bincount(trie.byte[1:], weights=trie.span_size[1:], minlength=256),
        )


_DAWGS: BoundedCache[VocabDawg] = BoundedCache(maxsize=4)


def dawg_of(vocab: Vocabulary) -> VocabDawg:
    """The DAWG of ``vocab``, built once per vocabulary fingerprint."""
    return _DAWGS.get_or_build(vocab.fingerprint, lambda: VocabDawg.of(trie_of(vocab)))


def dawg_successor_pairs(
    dawg: VocabDawg,
    table: np.ndarray,
    starts: list[int],
    check: Callable[[], None] | None = None,
    bound: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Every (position in ``starts``, state) such that some token leads from that start to
    that state; sorted, without repeats. At most ``MAX_STARTS`` starts (one bit each of a
    mask); ``table`` is the byte DFA's; ``check`` is called once per walked depth (it may
    raise to stop a walk that runs out of time); ``bound``, where the caller has it, is
    ``byte_reach(table, starts)`` (else the walk computes it where it tests it).

    The walk goes one depth a round in numpy (``_PairWalk.round``) while the frontier
    grows, and while many tokens lie below it; the few long tokens left are walked one
    by one in Python (``_walk_tail``)."""
    if len(starts) > MAX_STARTS:
        raise ValueError(f"at most {MAX_STARTS} starts per walk, not {len(starts)}")
    walk = _PairWalk(dawg, table, starts, bound)
    nodes = np.full(len(starts), dawg.root, dtype=np.int64)
    states = np.asarray(starts, dtype=np.int64)
    masks = np.left_shift(walk.mask_type(1), np.arange(len(starts), dtype=walk.mask_type))
    peak = 0  # the frontier grows, then shrinks as tokens end: the tail is past the peak
    while len(nodes) >= peak or dawg.tokens_below[nodes].sum() > TAIL:
        peak = max(peak, len(nodes))
        if check is not None:
            check()
        nodes, states, masks = walk.round(nodes, states, masks)
    return walk.finish(nodes, states, masks)


class _PairWalk:
    """One walk of ``dawg_successor_pairs``: its fixed arrays, the bits carried per pair,
    and ``reached[t]``, the starts with a token into state ``t`` (the bits that reached it
    on a final node)."""

    def __init__(
        self, dawg: VocabDawg, table: np.ndarray, starts: list[int], bound: np.ndarray | None
    ) -> None:
        self.dawg = dawg
        num_states, self.width = table.shape
        self.num_states = num_states
        self.flat = table.reshape(-1)
        self.num_starts = len(starts)
        # Two arrays over every (node, state) pair: 22,000 nodes × 129 states is 2.8 million
        # pairs, so they are as narrow as the starts allow (memory the walk touches is zeroed
        # by the system page by page: 45 MB of it would take longer than the walk itself).
        self.mask_type = mask_type = _mask_type(len(starts))
        # carried: the bits walked per pair; slot: scratch that merges a round's repeats
        self.carried, self.slot = dawg.scratch.take(dawg.num_nodes * num_states, mask_type)
        self.touched: list[np.ndarray] = []  # the entries of carried set, cleared at the end
        looping_bytes = table == np.arange(num_states)[:, None]
        self.loops = looping_bytes.sum(axis=1) >= 2  # (a loop on one byte takes few tokens)
        # By state, as sets like ``below``'s: the bytes that do not loop, those of them
        # that lead to another state, and those that kill the path.
        self.leaving = _byte_sets(~looping_bytes, dawg.below.dtype)
        self.moving = _byte_sets(~looping_bytes & (table >= 0), dawg.below.dtype)
        self.dying = _byte_sets(table < 0, dawg.below.dtype)
        self.spending = True  # whether the last round found pairs that stay, not done
        self.reached = np.zeros(num_states, dtype=mask_type)
        self.needed: np.ndarray | None = None  # ``_needed`` of the bound, where tested
        self.rounds = 0
        self.idle: _Idle | None = None  # made in round ``IDLE_ROUND`` of a long walk
        self.idle_bits = np.zeros(0, dtype=mask_type)  # ``_Idle.safe`` of ``reached``
        self.grew = True  # whether ``reached`` grew since ``idle_bits`` were read off it
        if len(starts) * num_states <= MAX_BOUND_CELLS:
            bound = byte_reach(table, starts) if bound is None else bound
            self.needed = _needed(bound, mask_type)

    def round(
        self, nodes: np.ndarray, states: np.ndarray, masks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The pairs one byte further, each with the bits it carries for the first time;
        those that end a token recorded, those with nothing left to find dropped."""
        keys, masks = self._fresh(*self._step(nodes, states, masks))
        nodes, states = np.divmod(keys, self.num_states)
        nodes, states, masks = self._settle(nodes, states, masks)
        self.rounds += 1
        if (
            self.rounds == IDLE_ROUND
            and self.num_states <= IDLE_STATES
            and self.dawg.tokens_below[nodes].sum() >= IDLE_TOKENS
        ):
            table = self.flat.reshape(self.num_states, -1)
            self.idle = _Idle.of(table, self.reached, self.dawg.byte_weight)
        if self.idle is None or not len(nodes):
            return nodes, states, masks
        return self._busy(self.idle, nodes, states, masks)

    def _busy(
        self, idle: _Idle, nodes: np.ndarray, states: np.ndarray, masks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The pairs with something left to find (``idle``), each with the bits of the
        starts it may still lead somewhere new."""
        if self.grew:
            self.idle_bits, self.grew = idle.safe(self.reached), False
        keys = idle.keys(self.dawg.below.take(nodes, axis=0), states)
        masks = masks & ~self.idle_bits.take(keys)
        kept = masks.nonzero()[0]
        return nodes[kept], states[kept], masks[kept]

    def _step(
        self, nodes: np.ndarray, states: np.ndarray, masks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every edge out of the pairs that the DFA reads: (pair keys, their masks)."""
        dawg = self.dawg
        counts = dawg.num_edges[nodes]
        edges = runs(dawg.first_edge[nodes], counts)
        targets = self.flat[np.repeat(states * self.width, counts) + dawg.edge_byte[edges]]
        alive = (targets >= 0).nonzero()[0]
        keys = dawg.edge_target[edges[alive]] * self.num_states + targets[alive]
        return keys, np.repeat(masks, counts)[alive]

    def _fresh(self, keys: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One entry per pair (paths meeting in it merged), with only the bits it has not
        carried before; those bits are now carried.

        Entries are picked by position (``nonzero``), not by a boolean mask: where
        the mask is mixed (half the edges of ``.*(error|warning): ...``'s widest round
        meet another), numpy's boolean indexing took ~100 µs for 19,000 entries, and
        the positions and a take ~25."""
        slot, carried = self.slot, self.carried
        # Paths meeting in one pair this round: one entry, the union of their masks.
        order = np.arange(len(keys), dtype=np.int32)
        slot[keys] = order
        first = slot[keys]
        repeat = (first != order).nonzero()[0]
        if len(repeat):
            np.bitwise_or.at(masks, first[repeat], masks[repeat])
            kept = (first == order).nonzero()[0]
            keys, masks = keys[kept], masks[kept]
        # Only the bits a pair has not carried before walk on.
        masks &= ~carried[keys]
        fresh = masks.nonzero()[0]
        keys, masks = keys[fresh], masks[fresh]
        carried[keys] |= masks
        self.touched.append(keys)
        return keys, masks

    def _settle(
        self, nodes: np.ndarray, states: np.ndarray, masks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Record the token ends among the pairs; keep those still to walk on (picked by
        position, as in ``_fresh``)."""
        dawg, reached, needed, mask_type = self.dawg, self.reached, self.needed, self.mask_type
        # A pair whose bytes below all loop back to its state or kill the path (a letter
        # or a space in a word of ``[a-z0-9]+(-[a-z0-9]+)*``) ends there every token below
        # that lives: it ``stays``. Where no byte below kills either, every token below
        # lives: it counts as a token's end (``done``). A pair that stays has nothing left
        # to find where its starts reached its state already (as those done just did).
        # Once a round with looping pairs finds none that stay but are not done (``.*``'s
        # states: their bytes below lead on), the walk tests only for those done (``_done``).
        final = dawg.final[nodes]
        maybe = self.loops[states].nonzero()[0]
        if self.spending:
            below, looping = dawg.below.take(nodes[maybe], axis=0), states[maybe]
            stays = _empty_rows(below & self.moving.take(looping, axis=0)).nonzero()[0]
            below, looping, stays = below.take(stays, axis=0), looping[stays], maybe[stays]
            done = stays[_empty_rows(below & self.dying.take(looping, axis=0))]
            self.spending = len(stays) > len(done) or not len(maybe)
        else:
            done = maybe[self._done(nodes[maybe], states[maybe])]
            stays = None
        final[done] = True
        ends = final.nonzero()[0]
        end_states, end_masks = states[ends], masks[ends]
        # whether some start reached a new state: read by the bound's test and ``_Idle``'s
        grew = (needed is not None or self.idle is not None) and bool(
            (end_masks & ~reached[end_states]).any()
        )
        self.grew |= grew
        np.bitwise_or.at(reached, end_states, end_masks)
        walked_on = np.ones(len(nodes), dtype=bool)
        walked_on[done if stays is None else stays[(masks[stays] & ~reached[looping]) == 0]] = False
        if grew and needed is not None:  # starts that reached every state they could: done
            complete = _complete(reached, needed, (1 << self.num_starts) - 1)
            if complete:
                masks &= ~mask_type(complete)
                walked_on &= masks != 0
        if not walked_on.all():
            kept = walked_on.nonzero()[0]
            nodes, states, masks = nodes[kept], states[kept], masks[kept]
        return nodes, states, masks

    def _done(self, nodes: np.ndarray, states: np.ndarray) -> np.ndarray:
        """Which pairs have every byte below looping back to their state."""
        below = self.dawg.below.take(nodes, axis=0)
        return _empty_rows(below & self.leaving.take(states, axis=0))

    def finish(
        self, nodes: np.ndarray, states: np.ndarray, masks: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Walk the tail, give the arrays back, and read the pairs off ``reached``."""
        reached, mask_type = self.reached, self.mask_type
        todo = list(zip(nodes.tolist(), states.tolist(), masks.tolist(), strict=True))
        _walk_tail(self.dawg, self.flat, self.width, self.leaving, self.carried, reached, todo)
        self.dawg.scratch.give(self.carried, self.slot, np.concatenate(self.touched))
        shifts = np.arange(self.num_starts, dtype=mask_type)[:, None]
        bits = (reached[None, :] >> shifts) & mask_type(1)
        return np.nonzero(bits)


IDLE_ROUND = 3
IDLE_TOKENS = 16384
"""A walk whose pairs after round ``IDLE_ROUND`` still hold this many tokens below tests,
that round and every later one, for pairs with nothing left to find (``_Idle``).
Building the test costs ~0.1-0.4 ms; most walks are past their widest rounds by then,
with a few thousand tokens below (``.*\\.json``: 1,300, then two rounds of ~0.1 ms),
where a long one (a MAC address searched in a JSON string: 44,000) has 9 rounds left,
~3 ms of them. A test may find nothing idle for rounds, then everything, once the
starts' longer tokens came in (``[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}`` searched: all
4,892 pairs of round 5, 12 rounds cut to 5), so it is never given up; where it cannot
tell (``ANY*(?:.*world\\.json)ANY*``: no token ends in ``worl``, which the bytes below
do not show) the walk pays the build and ~20% a round."""
IDLE_STATES = 48
"""States up to which a walk may test for idle pairs: ``_Idle``'s closures (8 matrices of
states × states, squared ~log2(states) times) take ~0.2 ms at 36 states, ~0.5 at 56."""
IDLE_GROUPS = 3
"""Byte groups ``_Idle`` tells apart: 2 ** IDLE_GROUPS closures."""


@dataclass(frozen=True)
class _Idle:
    """Which pairs have nothing left to find, a test a long walk makes from round
    ``IDLE_ROUND`` on (``IDLE_TOKENS``).

    A pair (node, state q) leads a start only where the strings below its node lead q:
    every one of them is a string over the bytes below. If every string over those bytes
    leads q only into states the start has reached (q itself among them), no token below
    can add a successor, and the start's bit walks no further (it is carried: the pair is
    idle for it from now on, as ``reached`` only grows). In a MAC address searched in a
    JSON string, after three rounds the starts have reached the states that letters,
    digits and the escapes lead to; a pair goes on only where a colon lies below (most
    words do not hold one), and the walk ends there, where it went on for 12 rounds,
    word by word through the hex letters.

    The bytes below a pair are told apart only by ``groups``: the rarest byte classes
    of the table (columns alike; every byte past ASCII in one class), a bit each of a
    pair's ``keys``; every other byte counts as below every pair. A string over more
    bytes leads to more states, so the test may keep a pair it could drop, never the
    reverse (two classes merged, by a hash's collision, are the same: coarser).
    ``reach[q << len(groups) | present]``: the states some string over the rest and
    the ``present`` groups leads q to, q among them (a closure per ``present``)."""

    groups: np.ndarray  # like ``VocabDawg.below`` [len(groups), 4]: the bytes told apart
    reach: np.ndarray  # bool [num_states << len(groups), num_states]

    @staticmethod
    def of(table: np.ndarray, reached: np.ndarray, byte_weight: np.ndarray) -> _Idle:
        """The test for ``table``, its groups picked among the classes with a byte that
        leads some start out of the states it reached (``reached``, by state: the starts'
        bits), by ``byte_weight``."""
        num_states = len(table)
        key = (table.T + 1) @ _MIX[:num_states]  # equal columns, equal keys
        key[128:] = -1  # past ASCII: one class
        keys, classes = np.unique(key, return_inverse=True)
        moves = table >= 0
        leads_out = (reached[:, None] & ~reached[np.where(moves, table, 0)] != 0) & moves
        out = np.bincount(classes, weights=leads_out.any(axis=0), minlength=len(keys)) > 0
        weight = np.bincount(classes, weights=byte_weight, minlength=len(keys))
        past = int(classes[-1])
        rare = [c for c in np.argsort(weight, kind="stable").tolist() if out[c] and c != past]
        picked = rare[: IDLE_GROUPS - int(out[past])] + ([past] if out[past] else [])
        group = np.full(len(keys), len(picked))  # the rest: group len(picked)
        group[picked] = np.arange(len(picked))
        byte_group = group[classes]
        rows, columns = np.nonzero(table >= 0)
        cells = num_states * num_states
        edges = np.zeros((len(picked) + 1) * cells, dtype=np.float32)
        edges[byte_group[columns] * cells + rows * num_states + table[rows, columns]] = 1
        edges = edges.reshape(len(picked) + 1, cells)
        present = (np.arange(1 << len(picked))[:, None] >> np.arange(len(picked))) & 1
        stack = present.astype(np.float32) @ edges[:-1] + edges[-1]
        stack = stack.reshape(-1, num_states, num_states) + np.eye(num_states, dtype=np.float32)
        reach = _closure((stack > 0).astype(np.float32))
        sets = _byte_sets(byte_group[None, :] == np.arange(len(picked))[:, None], np.dtype("<u8"))
        return _Idle(groups=sets, reach=reach.transpose(1, 0, 2).reshape(-1, num_states))

    def keys(self, below: np.ndarray, states: np.ndarray) -> np.ndarray:
        """Each pair's row of ``reach``: its state, and which groups lie below it
        (``below``: its node's bytes, as ``VocabDawg.below``)."""
        keys = states << len(self.groups)
        for bit, group in enumerate(self.groups):
            keys |= (~_empty_rows(below & group)).astype(np.int64) << bit
        return keys

    def safe(self, reached: np.ndarray) -> np.ndarray:
        """By row of ``reach``: the starts that reached every state it holds."""
        every = reached.dtype.type(np.iinfo(reached.dtype).max)
        return np.bitwise_and.reduce(np.where(self.reach, reached, every), axis=1)


_MIX = np.random.default_rng(48).integers(1, 1 << 62, size=IDLE_STATES)
"""Multipliers that turn a table's byte column into one key (``_Idle.of``)."""


def _closure(adjacency: np.ndarray) -> np.ndarray:
    """Reflexive transitive closures of a stack of 0/1 matrices (float32, diagonal
    set), squared until they stop growing.

    >>> _closure(np.array([[[1, 1, 0], [0, 1, 1], [0, 0, 1]]], np.float32)).astype(int)[0].tolist()
    [[1, 1, 1], [0, 1, 1], [0, 0, 1]]
    """
    while True:
        squared = (adjacency @ adjacency > 0).astype(np.float32)
        if np.array_equal(squared, adjacency):
            return squared > 0
        adjacency = squared


MAX_BOUND_CELLS = 1024
"""Starts × states up to which a walk tests, each round, whether a start has reached every
state bytes can lead it to (``byte_reach``): then no token can add one, and its bit is
walked no further. ``.*a``'s start reaches all of its few states within three bytes, and
the rest of its walk (most of the vocabulary) was for nothing. Past this size the test
costs more than it saves (pink_floyd_json, 64 starts: +10% with 4096). A round tests only
when some start reached a state it had not reached before."""


def byte_reach(table: np.ndarray, starts: list[int]) -> np.ndarray:
    """``bound[i, t]``: some nonempty byte string leads from ``starts[i]`` to ``t`` (every
    token's target is one of them).

    >>> table = np.array([[1, -1], [1, 2], [-1, -1]])  # 0 -a-> 1 -a-> 1 -b-> 2
    >>> byte_reach(table, [0, 2]).astype(int).tolist()
    [[0, 1, 1], [0, 0, 0]]
    """
    num_states = len(table)
    rows, cols = np.nonzero(table >= 0)
    pairs = np.unique(rows * num_states + table[rows, cols])  # (state, next state) once
    edges: list[list[int]] = [[] for _ in range(num_states)]
    for source, target in zip(*np.divmod(pairs, num_states), strict=True):
        edges[source].append(int(target))
    bound = np.zeros((len(starts), num_states), dtype=bool)
    for i, start in enumerate(starts):  # breadth first, from the states one byte away
        seen = set(edges[start])
        todo = list(seen)
        while todo:
            for target in edges[todo.pop()]:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        bound[i, list(seen)] = True
    return bound


def _byte_sets(rows: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Each row of booleans (one per byte) as a byte set like ``VocabDawg.below``'s."""
    return np.packbits(rows, axis=1, bitorder="little").view(dtype)


def _as_ints(sets: np.ndarray) -> tuple[int, ...]:
    """Byte sets as ``VocabDawg.below``'s (four little-endian words a row), each as one
    Python int whose bit b is byte b.

    >>> _as_ints(np.array([[5, 0, 0, 1]], np.uint64)) == (5 + (1 << 192),)
    True
    """
    data, width = sets.astype("<u8").tobytes(), 8 * sets.shape[1]
    return tuple(
        int.from_bytes(data[at : at + width], "little") for at in range(0, len(data), width)
    )


def _empty_rows(sets: np.ndarray) -> np.ndarray:
    """Which rows of ``sets`` (byte sets as ``VocabDawg.below``'s: four words a row) are
    empty. The rows' four nonzero flags are read as one 32-bit word: ``any(axis=1)``, a
    reduction along an axis of four, took 3-4 times as long (~19 µs for 900 rows); so
    does ``below[nodes]`` against ``below.take(nodes, axis=0)`` (~15 against ~3 µs).
    ``levelwalk._Loops.taken`` asks the same of its nodes' bytes that leave their state's
    loop (there, against an OR of the four words: 2.9 against 4.6 µs for 1,000 rows).

    >>> _empty_rows(np.array([[0, 0, 0, 0], [0, 0, 8, 0], [1, 0, 0, 0]], np.uint64)).tolist()
    [True, False, False]
    """
    return (sets != 0).view(np.uint32)[:, 0] == 0


def _needed(bound: np.ndarray, mask_type: type) -> np.ndarray:
    """``needed[t]``: the bits of the starts whose ``bound`` row holds state ``t``.

    >>> _needed(np.array([[True, True], [True, False]]), np.uint8).tolist()
    [3, 1]
    """
    bits = np.left_shift(mask_type(1), np.arange(len(bound), dtype=mask_type))
    return (bound * bits[:, None]).sum(axis=0, dtype=mask_type)


def _complete(reached: np.ndarray, needed: np.ndarray, every: int) -> int:
    """The bits (of ``every``) of the starts whose tokens have reached every state their
    bound holds: a start lacks one where ``needed`` holds its bit and ``reached`` does not.

    >>> needed = np.array([3, 1], dtype=np.uint8)  # start 0 may reach both, start 1 state 0
    >>> _complete(np.array([1, 3], dtype=np.uint8), needed, 3)  # start 0 has both
    1
    """
    return every & ~int(np.bitwise_or.reduce(needed & ~reached))


def _mask_type(starts: int) -> type[np.unsignedinteger]:
    """The narrowest unsigned integer type with a bit for each of ``starts`` starts.

    >>> _mask_type(7).__name__, _mask_type(18).__name__, _mask_type(64).__name__
    ('uint8', 'uint32', 'uint64')
    """
    return next(
        t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if np.iinfo(t).bits >= starts
    )


def _walk_tail(
    dawg: VocabDawg,
    flat: np.ndarray,
    width: int,
    leaving: np.ndarray,
    carried: np.ndarray,
    reached: np.ndarray,
    todo: list[tuple[int, int, int]],
) -> None:
    """The walk's last pairs (``todo``: node, state, mask), one by one in Python: past
    the first few depths only long tokens (runs of spaces or dashes) remain, a handful
    of pairs per depth, where a numpy round would cost more than the pairs themselves.
    Same rules as the rounds, and a pair whose bytes below all loop back to its state
    counts as a token's end there and is walked no further, also where its state loops
    on one byte only (``leaving``, by state: the bytes that do not loop, as byte sets like
    ``VocabDawg.below``'s): a run of dots after ``.*\\.`` ends at its first dot, where it
    was walked dot by dot. ``carried`` is read, ``reached`` is updated in place. A state's
    set is made an int (``_as_ints``) when the tail first meets it: the tail meets a few
    states, where all of a URL's 257 took ~0.1 ms a walk, and ``_apart`` walks 4."""
    num_states, below, automaton = len(reached), dawg.below_bits, dawg.nodes
    seen: dict[int, int] = {}  # pairs' carried bits, over those of the rounds
    found: dict[int, int] = {}  # state -> starts reaching it here
    exits: dict[int, int] = {}  # state -> its ``leaving`` set as an int, once met
    while todo:
        node, state, mask = todo.pop()
        row = state * width
        for byte, child in automaton[node][1]:
            target = flat.item(row + byte)
            if target < 0:
                continue
            key = child * num_states + target
            before = seen.get(key)
            if before is None:
                before = carried.item(key)
            fresh = mask & ~before
            if fresh:
                seen[key] = before | fresh
                out = exits.get(target)
                if out is None:
                    out = exits[target] = _as_ints(leaving[target : target + 1])[0]
                looping = not below[child] & out
                if looping or automaton[child][0]:
                    found[target] = found.get(target, 0) | fresh
                if not looping:
                    todo.append((child, target, fresh))
    for state, mask in found.items():
        reached[state] |= reached.dtype.type(mask)
