"""One state's row, walked with whole subtrees taken at once.

A state's row (its allowed tokens and where each leads) is a walk over pairs (trie node,
DFA state) from the state at the trie's root, one trie level per numpy round
(``fsmviz.tokens.index``). A wide state, a loop over a big class like the ``[a-z0-9]+`` of a
slug, lets almost every token through, so the plain walk visits most of the trie's
100,000 nodes, 65 levels deep where a token is a long run of ``-``.

Most of those pairs need not be walked. Give every state its *main class*, the bytes
leading to the target most bytes lead to, and follow it: the *chain* of a state is the
states its main classes lead through, byte after byte (a slug's loop state leads to
itself; ``[A-Za-z]{1,12}`` leads one letter further each byte until none is left). If
every byte below a trie node lies in the main class of every state of the chain, for as
many bytes as the node's subtree is deep, every token under the node is allowed and ends
where the chain stands after the token's remaining bytes: the whole subtree (a
contiguous run of the tokens sorted by their bytes, ``VocabTrie.span_start``) is taken
at once without walking it. A chain that ends (after twelve letters ``[A-Za-z]{1,12}``
wants a space) still takes a subtree taller than itself if its end state reads none of
the bytes below: the tokens no longer than the chain are allowed, the longer ones die.
The trie keeps each node's bytes below as a 256-bit set and its height, so the test is a
few numpy operations per level.

Where a level has few pairs left with few tokens below them (the long runs of ``-``),
the rest is walked in plain Python, token by token, rather than one numpy round per
remaining byte.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from functools import cached_property

import numpy as np

from fsmviz.arrays import distinct, runs
from fsmviz.automaton.bytedfa import ByteDfa
from fsmviz.automaton.dfa import Dfa, set_bits
from fsmviz.tokens.fast.chains import Chain, chain_of, chain_words
from fsmviz.tokens.fast.classwalk import (
    MERGED_CLASSES,
    ClassTable,
    ClassTrie,
    byte_classes,
    class_row,
    class_trie,
)
from fsmviz.tokens.fast.closedsets import closed_words, utf8_loop
from fsmviz.tokens.fast.packwalk import PackedVocab, packed_vocab
from fsmviz.tokens.fast.quotient import live_blocks
from fsmviz.tokens.fast.searchwords import search_words
from fsmviz.tokens.trie import TrieLists, VocabTrie

__all__ = [
    "Chains",
    "Merged",
    "RowWalker",
    "majority_classes",
    "small_row",
    "walk_row",
    "walk_tokens",
]

WIDE = 64
"""Levels of fewer pairs are walked without looking for whole subtrees: the test would
cost more than it saves."""
TAIL = 32
"""Pairs with at most this many tokens below them all together are walked in Python."""
MAX_CHAINS = 4_096
"""Chains kept per byte DFA (each ~3 KB: ~12 MB); past it, states met are walked pair by
pair."""
DENSE_SORT = 2_000
"""Rows longer than this are sorted by scattering into an array the size of the
vocabulary (linear) rather than by ``argsort``."""

_ALL_BYTES = (1 << 256) - 1
_ASCII = (1 << 128) - 1
_SET = np.dtype("V32")
"""A set of bytes as one numpy item (4 little-endian uint64 words, as in
``VocabTrie.subtree_bytes``), for gathering sets in one call."""


class Chains:
    """What row walks keep about one byte DFA: the chains of the states they met, and
    the rows of the table as lists for the walks in Python.

    ``reach[s]`` is the height of the highest subtree the chain of a state met can take
    (-1: not met yet). For a state whose chain is kept, ``forbidden[local[s] * width + h]``
    is the set of bytes (256 bits, 4 words) that may *not* appear in a subtree ``h`` bytes
    high for it to be taken whole from ``s``, and ``targets[local[s] * width + h]`` is the
    state ``h`` bytes along the chain (-1 past the end of a chain that ends: such tokens
    die). ``width`` is one more than the trie's height.

    In ``[0-9]+\\.`` the main class of state 0 and of state 1 (after a digit) is the
    digits, leading to state 1, a loop; state 2 (after the dot) has no byte, so its
    chain stops at once:

    >>> from fsmviz import Vocabulary, build_index
    >>> index = build_index(r"[0-9]+\\.", Vocabulary.from_strings(["1", "12", "."]))
    >>> chains = Chains(index.byte_dfa.table, height=2)
    >>> chains.add(np.array([0, 2]))
    >>> chains.reach.tolist()
    [2, 2, 0]
    >>> [int(chains.targets[int(chains.local[0]) * 3 + h]) for h in range(3)]
    [0, 1, 1]
    >>> digits = sum(1 << b for b in b"0123456789")
    >>> [chains.allows(0, h) == digits for h in (1, 2)]
    [True, True]
    """

    def __init__(self, table: np.ndarray, height: int) -> None:
        self.table = table
        self.width = height + 1
        self.reach = np.full(len(table), -1, dtype=np.int32)  # -1: not met yet
        self.local = np.full(len(table), -1, dtype=np.int32)  # -1: no chain kept
        self.forbidden = np.zeros(0, dtype=_SET)
        self.targets = np.zeros(0, dtype=np.int32)
        self.live = np.zeros(len(table), dtype=_SET)  # of a state met: the bytes it reads
        self._main: dict[int, tuple[int, int]] = {}
        self._rows: dict[int, list[int]] = {}

    def add(self, states: np.ndarray) -> None:
        """Find how far the chains of ``states`` (distinct, not met yet) and of the states
        along them (the walk meets those next) reach; keep the chains reaching 2 bytes or
        more (a shorter one would take little), up to ``MAX_CHAINS``."""
        chains = {state: self._chain(state) for state in states.tolist()}
        for path, _ in list(chains.values()):
            for state in path[1:]:
                if state not in chains and self.reach[state] < 0:
                    chains[state] = self._chain(state)
        kept, forbidden, targets = [], [], []
        for state, (path, allowed) in chains.items():
            reach = self.width - 1 if allowed[-1] else len(allowed) - 2
            if len(self.targets) // self.width + len(kept) >= MAX_CHAINS:
                reach = min(reach, 1)  # too many kept: this one is not
            self.reach[state] = reach
            if reach < 2:
                continue
            kept.append(state)
            sets = [_ALL_BYTES ^ bits for bits in allowed]
            if allowed[-1]:  # a loop, or as high as the trie: the chain stays where it is
                past, beyond = sets[-1], path[-1]
            else:  # past its end, only tokens no longer than the chain, if the rest dies
                reads = int.from_bytes(self.live[path[-1]].tobytes(), "little")
                past, beyond = sets[-2] | reads, -1
                sets[-1] = past
            forbidden += [bits.to_bytes(32, "little") for bits in sets]
            forbidden.append(past.to_bytes(32, "little") * (self.width - len(sets)))
            targets += path + [beyond] * (self.width - len(path))
        if kept:
            first = len(self.targets) // self.width
            self.local[kept] = np.arange(first, first + len(kept), dtype=np.int32)
            more = np.frombuffer(b"".join(forbidden), dtype=_SET)
            self.forbidden = np.concatenate([self.forbidden, more])
            self.targets = np.concatenate([self.targets, np.array(targets, dtype=np.int32)])

    def allows(self, state: int, height: int) -> int:
        """The bytes a subtree ``height`` bytes high may hold to be taken whole from
        ``state`` (a met state), as an int of 256 bits."""
        at = int(self.local[state]) * self.width + height
        words = self.forbidden[at : at + 1].view("<u8").tolist()
        return _ALL_BYTES ^ sum(word << (64 * k) for k, word in enumerate(words))

    def walk(self, data: bytes, state: int) -> int:
        """The state after ``data`` from ``state``, or -1 (in Python: for a few tokens)."""
        for byte in data:
            row = self._rows.get(state)
            if row is None:
                row = self._rows[state] = self.table[state].tolist()
            state = row[byte]
            if state < 0:
                break
        return state

    def _chain(self, state: int) -> tuple[list[int], list[int]]:
        """The chain of ``state`` until it loops, allows no byte more, or is as long as
        the trie is high: its states, and the bytes allowed under each height."""
        path, sets = [state], [_ALL_BYTES]
        while len(path) < self.width:
            mask, target = self.main_class(path[-1])
            sets.append(sets[-1] & mask)
            if target == path[-1] or not sets[-1]:  # a loop, or nothing more allowed
                break
            path.append(target)
        return path, sets

    def main_class(self, state: int) -> tuple[int, int]:
        """The bytes leading from ``state`` to the target most bytes lead to (the lowest
        such target on a tie), as an int of 256 bits, and that target; no bytes and -1
        when every byte falls off."""
        found = self._main.get(state)
        if found is None:
            row = self.table[state]
            edges = row >= 0
            self.live[state] = np.packbits(edges, bitorder="little").view(_SET)[0]
            counts = np.bincount(row[edges])
            if len(counts) == 0:
                found = 0, -1
            else:
                target = int(counts.argmax())
                bits = np.packbits(row == target, bitorder="little")
                found = int.from_bytes(bits.tobytes(), "little"), target
            self._main[state] = found
        return found


class RowWalker:
    """How one byte DFA's rows are walked. A state that reads a few bytes (a JSON schema's
    key, a digit, a hex digit: ``SMALL_EDGES``) is first walked in plain Python
    (``small_row``: a handful of pairs, tens of µs), unless that walk grows long. A state
    that reads many bytes (``WIDE_STATE``: a string's loop, a name's letters) is walked
    over the class trie (``fsmviz.tokens.fast.classwalk``, built at the first such state):
    one pass over every class node, no filtering, ~0.5 ms where the byte walk took 6-13 ms.
    A narrow state whose Python walk grew long walks the byte trie with chains
    (``walk_row``), unless the class trie is built and small (``SMALL_CLASSES``)."""

    def __init__(
        self, byte_dfa: ByteDfa, trie: VocabTrie, num_ids: int, dfa: Dfa | None = None
    ) -> None:
        self.byte_dfa, self.trie, self.num_ids, self.dfa = byte_dfa, trie, num_ids, dfa
        self._ascii: dict[int, int] = {}  # ``char_main_class``'s bytes of sets of classes
        self._classes: tuple[ClassTrie, ClassTable] | None = None
        self._edges: dict[int, Steps] = {}
        self._chains: dict[int, Chain | None] = {}  # of ``packed``
        self._inside: dict[tuple[int, int], np.ndarray] = {}  # by a chain's bytes
        self._reads: dict[int, int] = {}
        self._mains: dict[int, tuple[int, int]] = {}
        self._unpacked: set[int] = set()  # states whose chain's walk gave up
        self._utf8: dict[int, int] = {}  # of ``closedsets.utf8_loop``
        self._read_blocks: dict[int, np.ndarray] = {}  # of ``reads_of``: by ``READ_BLOCK``
        self._closed: dict[int, np.ndarray | None] = {}  # ``closedsets.closed_words``'s words
        self._pairs: dict[int, tuple[int, int] | None] = {}  # ``merge_pair``'s (``pair_at``)
        self.merged: Merged | None | bool = None  # ``merge``'s (None: not tried; False: none)

    def packed(self, state: int) -> np.ndarray | None:
        """The allowed tokens of ``state`` packed (int32 words, ``index.packed``'s layout),
        from its chain (``chains``: the tokens within the bytes it reads onwards from packed
        words, the few others walked), without its row; None where the chain does not take
        enough at once (the row walks answer those). Where a chain shows a search
        (``merge_pair``), the DFA is first merged into its live blocks (``Merged``)."""
        if state in self._unpacked:
            return None
        if self._closed.get(state) is not None:  # a set of states alike, met before
            return self._closed[state]
        if self.merged:  # the live blocks' walker, once a search made it
            return self.merged.packed(state)
        if not self.wide(state) and not self._opens_wide(state):  # a key, a digit: small
            found = _small_walk(self.trie.lists, self._steps, state)
            if found is not None:
                return _packed_ids([token for token, _ in found], self.num_ids)
        chain = self._chain(state)
        table = self.byte_dfa.table
        if chain is not None and looks_closed(chain, self.reads_of, table):  # not its frontier
            found = self._closed_words(state)
            if found is not None:
                return found
        if chain is not None and self.merged is None and _merged_at(self, state, chain):
            return self.merged.packed(state)  # a search, a small DFA's loop
        if chain is None and self.tried_small(state):
            # its first byte, then the chains of the states after it (a space, a name)
            chain = Chain((state,), 0, False, self.reads_of(state))
        found = None if chain is None else self._chain_words(chain)
        reads = self.reads_of(state)
        if found is None and (not chain or chain.allowed) and first_bytes(reads, table, chain):
            # its chain's frontier too large: inside a UTF-8 character (``.*``'s next
            # bytes), few tokens begin with its bytes; after an escape's backslash (its
            # bytes but ``bfnrt/"`` lead back into a string's loop), the loop's
            found = self._chain_words(Chain((state,), 0, False, self.reads_of(state)))
        if found is None and self.wide(state):  # a set of states alike (``.*``-led)?
            found = self._closed_words(state)
        if found is None:
            self._unpacked.add(state)
            return None
        words = found.view(np.int32)
        words.flags.writeable = False
        return words

    def _chain_words(self, chain: Chain) -> np.ndarray | None:
        """``chains.chain_words`` of ``chain`` over this walker's DFA and kept parts."""
        return chain_words(
            self.packed_vocab, self.trie, chain, self.byte_dfa.table, self._within, self._chain,
            self._utf8_loop,
        )  # fmt: skip

    def _opens_wide(self, state: int) -> bool:
        """Whether ``state`` reads a byte into a wide state, more tokens below than
        ``small_row`` would walk (a string's ``"``: 21,000), or bytes through narrow states
        into one (``_wide_below``: ``bar`` before a string's loop): its failed try (~0.15
        ms) cost more than the chain's words."""
        vocab, lists = self.packed_vocab, self.trie.lists
        for byte, target in self._steps(state).items():
            if vocab.root_span[byte] <= SMALL_WORK:
                continue
            node = vocab.root_child.item(byte)
            if self.wide(target) or _wide_below(lists, vocab.span_size, self, node, target):
                return True
        return False

    @cached_property
    def packed_vocab(self) -> PackedVocab:
        """The trie's ``PackedVocab`` (``packed_vocab``), looked up once."""
        return packed_vocab(self.trie, self.num_ids)

    def _within(self, allowed: int, skip: int) -> np.ndarray:
        """``PackedVocab.inside``, kept by its arguments."""
        found = self._inside.get((allowed, skip))
        if found is None:
            found = self._inside[allowed, skip] = self.packed_vocab.inside(allowed, skip)
        return found

    def _closed_words(self, state: int) -> np.ndarray | None:
        """``closedsets.closed_words``'s words of ``state``, kept for every state of its set."""
        if state not in self._closed:
            found = closed_words(self.packed_vocab, self.byte_dfa.table, state, self.reads_of)
            self._closed[state] = None
            if found is not None:
                words = found[1].view(np.int32)
                words.flags.writeable = False
                self._closed.update(dict.fromkeys(found[0], words))
        return self._closed[state]

    def _utf8_loop(self, state: int) -> int:
        """``closedsets.utf8_loop`` of ``state``, kept."""
        found = self._utf8.get(state)
        if found is None:
            found = self._utf8[state] = utf8_loop(self.byte_dfa.table, state, self.reads_of)
        return found

    def _chain(self, state: int) -> Chain | None:
        """The chain of ``state`` (``chains.chain_of``), kept."""
        chain = self._chains.get(state, False)
        if chain is False:
            chain = self._chains[state] = chain_of(
                state, self._main_class, self.reads_of, int(self.trie.height[0])
            )
        return chain

    def _main_class(self, state: int) -> tuple[int, int]:
        """``Chains.main_class`` of ``state`` (``main_class``: off the character DFA where
        its classes are ASCII, else from its row; a counted repeat's chain asks it of 20
        states; the byte classes cost 0.2-0.8 ms the first time), kept."""
        found = self._mains.get(state)
        if found is None:
            dfa = self.dfa if state < self.byte_dfa.num_char_states else None
            height = int(self.trie.height[0])
            found = main_class(
                self.byte_dfa.table, self._mains, self.reads_of, state, height, dfa, self._ascii
            )
        return found

    def wide(self, state: int) -> bool:
        """Whether ``state`` reads at least ``WIDE_STATE`` bytes (``reads_of``, by state:
        a count over the whole table cost ~0.1-0.2 ms at a new index's first mask)."""
        return self.reads_of(state).bit_count() >= WIDE_STATE

    def tried_small(self, state: int) -> bool:
        """Whether ``state`` reads fewer than ``SMALL_EDGES`` bytes (``small_row`` first)."""
        return self.reads_of(state).bit_count() < SMALL_EDGES

    @cached_property
    def chains(self) -> Chains:
        """The chains of ``walk_row``, made at its first row."""
        return Chains(self.byte_dfa.table, int(self.trie.height[0]))

    def reads_of(self, state: int) -> int:
        """The bytes ``state`` reads, as an int of 256 bits (packed by ``READ_BLOCK``)."""
        found = self._reads.get(state)
        if found is None:
            block, at = divmod(state, READ_BLOCK)
            if block not in self._read_blocks:
                self._read_blocks[block] = _block_reads(self.byte_dfa.table, block)
            found = int.from_bytes(self._read_blocks[block][at].tobytes(), "little")
            self._reads[state] = found
        return found

    def walk(self, state: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The row of ``state``: its allowed token ids (sorted, int32), their targets, and
        the ids packed where the walk had them as booleans (``class_row``), else None."""
        if self.tried_small(state):
            found = small_row(self.trie.lists, self._steps, state)
            if found is not None:
                return (*found, None)
        small = self._classes is not None and self._classes[0].size <= SMALL_CLASSES
        if self.wide(state) or small:
            return class_row(*self.classes(), state)
        return (
            *walk_row(self.trie, self.byte_dfa.table, self.chains, state, self.num_ids),
            None,
        )

    def _steps(self, state: int) -> Steps:
        """The row of ``state`` (``steps_of``), kept (``small_row``'s ``steps``)."""
        found = self._edges.get(state)
        if found is None:
            found = steps_of(self.byte_dfa.table[state], self.reads_of(state))
            self._edges[state] = found
        return found

    def classes(self) -> tuple[ClassTrie, ClassTable]:
        """The class trie and table: merged by the pattern's byte classes, or, past
        ``MERGED_CLASSES`` of them, the vocabulary's byte-level one (``byte_classes``)."""
        if self._classes is None:
            columns = self.byte_dfa.columns
            if len(columns.smallest) > MERGED_CLASSES:
                self._classes = (
                    byte_classes(self.trie, self.num_ids),
                    ClassTable.of(self.byte_dfa.table, None),
                )
            else:
                self._classes = (  # ``ClassTrie.of`` but for its count of the classes
                    class_trie(self.trie, columns.byte_class, self.num_ids)[0],
                    ClassTable.of(self.byte_dfa.table, columns),
                )
        return self._classes


class Merged:
    """A byte DFA's live blocks (``quotient.live_blocks``: states no token tells apart) and
    a walker over their quotient, whose packed words are each block's, kept by block."""

    def __init__(self, blocks: np.ndarray, walker: RowWalker) -> None:
        self.blocks, self.walker = blocks, walker
        self._words: dict[int, np.ndarray | None] = {}

    def made(self, block: int) -> bool:
        """Whether ``block``'s words were asked for (``packed``) before."""
        return block in self._words

    def packed(self, state: int) -> np.ndarray | None:
        """``RowWalker.packed`` of ``state``: its block's."""
        block = int(self.blocks[state])
        if block not in self._words:
            self._words[block] = self.walker.packed(block)
        return self._words[block]


def merge(walker: RowWalker, pair: tuple[int, int]) -> Merged | bool:
    """``walker``'s DFA merged into its live blocks, with a walker of their own (which
    merges no further); False where the states of ``pair`` fall apart."""
    found = live_blocks(walker.byte_dfa.table, pair)
    if found is None:
        return False
    blocks, table = found
    quotient = ByteDfa(table, np.zeros(len(table), dtype=bool), 0)
    inner = RowWalker(quotient, walker.trie, walker.num_ids)
    inner.merged = False
    return Merged(blocks, inner)


def merge_at(walker: RowWalker, state: int) -> bool:
    """Whether ``walker`` merges its DFA into live blocks at ``state``, as its ``packed``
    would (a wide state whose chain is not closed-looking and shows a search:
    ``merge_pair``), merged now, so that a caller may answer the state from its block
    (``fsmviz.tokens.index``'s bitmask) before ``packed`` walks it."""
    if walker.merged is not None or not walker.wide(state) or state in walker._unpacked:
        return False
    chain = walker._chain(state)
    if chain is None or walker._closed.get(state) is not None:
        return False
    if looks_closed(chain, walker.reads_of, walker.byte_dfa.table):
        return False
    return _merged_at(walker, state, chain)


def _merged_at(walker: RowWalker, state: int, chain: Chain) -> bool:
    """Whether ``walker`` (not merged yet) merges its DFA into live blocks where ``state``'s
    ``chain`` shows a pair to merge (``pair_at``): merged now (``merge``) where it does;
    ``merge_at`` and ``RowWalker.packed`` both ask. A search's pair, its chain's loop and
    a state an exit of the loop leads to (``searches``), is refused at once where its
    exits part them (``parted_by_exits``)."""
    pair = pair_at(walker, state, chain)
    if pair is None:
        return False
    table = walker.byte_dfa.table
    searched = pair[0] == chain.path[-1] != pair[1]
    if searched and parted_by_exits(chain, pair, walker.reads_of, table):
        walker.merged = False  # as ``merge`` would find, without reading the table
    else:
        walker.merged = merge(walker, pair)
    return bool(walker.merged)


def parted_by_exits(
    chain: Chain, pair: tuple[int, int], reads: Callable[[int], int], table: np.ndarray
) -> bool:
    """Whether the two states of ``pair`` surely fall apart in the live blocks
    (``quotient.live_blocks`` refuses them): states alike read the same bytes
    (``reads(s)``) and lead by each byte to states alike, so a pair of states that the
    same bytes lead them to and that reads different bytes parts them. Followed from
    ``pair`` up to ``EXIT_LEVELS`` bytes deep by the first and last byte of each run of the
    ASCII bytes ``chain`` leaves by (a search's needle, the controls and space a string's
    loop leaves by: a few bytes); False: not known. ``ANY*(?:[^/]+/.+)ANY*``: after
    ``[^/]`` and at the start, ``/`` leads to a state reading a newline (``.`` may
    follow) and one not; ``ANY*(?:\\S/\\S)ANY*`` parts after ``/`` and ``\\x00``
    (``\\S`` reads it, a string does not)."""
    leaves = chain.leaves & _ASCII
    ends = list(set_bits(leaves & ~((leaves << 1) & (leaves >> 1))))  # of each run
    pairs, seen = [pair], {pair}
    for depth in range(EXIT_LEVELS + 1):
        if any(reads(ahead) != reads(behind) for ahead, behind in pairs):
            return True
        if depth == EXIT_LEVELS or not pairs:
            break
        following = []
        for ahead, behind in pairs:
            for byte in ends:
                step = table.item(ahead, byte), table.item(behind, byte)
                if step[0] != step[1] and step not in seen:
                    seen.add(step)
                    following.append(step)
        pairs = following
    return False


EXIT_LEVELS = 3
"""Bytes ``parted_by_exits`` follows a pair, at most: ``ANY*(?:([^: ]+):([^: ]+)...)ANY*``
parts after ``:``, ``\\x00`` and ``:`` again."""


ALONE_TOKENS = 512
"""``alone_words`` takes a search whose chain leaves its loop by bytes more tokens than
this hold (3,700 hold a ``b``): below it the chain's frontier costs less than the ~0.4 ms
of ``search_words`` (at state 0 of ``ANY*(?:X.*)ANY*``, CPU, alternating: ``j`` 350 tokens
0.72 -> 0.76 ms, ``q`` 472 0.73 -> 0.63, ``x`` 1,017 0.78 -> 0.69, a digit's 1 0.47 -> 0.63)."""


def alone_words(walker: RowWalker, state: int) -> np.ndarray | None:
    """The packed words (uint32) of ``state`` where ``walker``'s merge was tried there and
    refused because the pair it showed is one state alone (``merge_pair``'s ``(t, t)``:
    ``ANY*(?:b.*)ANY*``'s loop after ``b`` reads every ASCII byte of the search's loop and
    more, and no other state shares its block), and more than ``ALONE_TOKENS`` tokens hold
    a byte its chain leaves by; else None. Every block then being one state, the search's
    set of states closed under its ASCII bytes is found over the DFA itself
    (``searchwords.search_words``), as over the quotient where a merge succeeds: ~100
    nodes leave those bytes (a quote, a backslash, a control), where the chain's frontier
    is every ``b``, 945 nodes above 3,700 tokens (~0.4 ms where the chain took ~0.8)."""
    pair = walker._pairs.get(state)
    if walker.merged is not False or pair is None or pair[0] != pair[1]:
        return None
    vocab, chain = walker.packed_vocab, walker._chain(state)
    held = vocab.shorter[-1] & ~vocab.inside(_ALL_BYTES ^ (chain.leaves & _ASCII))
    if int(np.bitwise_count(held).sum()) <= ALONE_TOKENS:
        return None  # a small frontier (``\d.*``'s digits)
    table = walker.byte_dfa.table
    return search_words(vocab, walker.trie, table, state, walker.reads_of(state))


def pair_at(walker: RowWalker, state: int, chain: Chain) -> tuple[int, int] | None:
    """``merge_pair`` of ``state``'s chain, kept by state: ``merge_at`` asks it first, and
    where no merge follows, ``RowWalker.packed`` asks again (~0.03 ms each at a wide state)."""
    if state not in walker._pairs:
        walker._pairs[state] = merge_pair(chain, walker.reads_of, walker.byte_dfa.table)
    return walker._pairs[state]


def looks_closed(chain: Chain, reads: Callable[[int], int], table: np.ndarray) -> bool:
    """Whether ``chain`` loops on its one state and each ASCII byte leaving it leads to a
    state reading the same ASCII bytes (``.*a``'s state 0: ``a`` leads to a state reading
    what it reads): likely a closed set (``closedsets.closed_words``), whose frontier (every
    ``a`` of the vocabulary) is not worth finding first. ``reads(s)``: the bytes ``s``
    reads."""
    if not chain.loops or len(chain.path) != 1 or not chain.leaves & _ASCII:
        return False
    if (chain.allowed & _ASCII).bit_count() < DOT_ASCII:  # a name's letters: not ``.*``
        return False
    ascii_read = reads(chain.path[0]) & _ASCII
    return all(read == ascii_read for _, read in _ascii_exits(chain, reads, table))


def _ascii_exits(
    chain: Chain, reads: Callable[[int], int], table: np.ndarray
) -> Iterator[tuple[int, int]]:
    """For each ASCII byte that ``chain`` leaves its last state by (its loop, where it
    loops) and that leads on, in byte order: its target and the ASCII bytes the target
    reads (``reads(s)``: the bytes ``s`` reads). The step ``looks_closed``, ``searches``
    and ``merge_pair`` share: each compares those with the ASCII bytes the loop reads."""
    loop = chain.path[-1]
    for byte in set_bits(chain.leaves & _ASCII):
        target = table.item(loop, byte)
        if target >= 0:
            yield target, reads(target) & _ASCII


def merge_pair(
    chain: Chain, reads: Callable[[int], int], table: np.ndarray
) -> tuple[int, int] | None:
    """The states whose sharing a block makes merging a DFA into its live blocks worth it
    where the state of ``chain`` is met (``merge``): a search's loop and its needle's
    start (``searches``); in a DFA of at most ``SMALL_DFA`` states, the chain's first state
    and its loop where both read the same ASCII bytes (``ANY*(?:[a-z0-9][a-z0-9.]+)ANY*``:
    letters lead from the start into the loop after the needle), or, where an ASCII byte
    the chain's loop leaves by leads to a state reading every ASCII byte the loop reads
    and more, that state with another (``(t, t)``: the loops after that byte may merge,
    ``ANY*(?:f.*o)ANY*``'s after ``f`` and after ``o``, reading quotes too; where it is
    alone, ``ANY*(?:b.*)ANY*``'s after ``b``, the blocks are given up as soon as it is, here
    by its bytes read, where waiting for any two states to part took four rounds); else
    None."""
    needle = searches(chain, reads, table)
    if needle >= 0:
        return chain.path[-1], needle
    if len(table) > SMALL_DFA or not chain.loops:
        return None
    loop = chain.path[-1]
    ascii_read = reads(loop) & _ASCII
    if loop != chain.path[0] and reads(chain.path[0]) & _ASCII == ascii_read:
        return chain.path[0], loop  # a search whose needle's bytes are most bytes
    for target, more in _ascii_exits(chain, reads, table):
        if more != ascii_read and more & ascii_read == ascii_read:  # strictly more
            return target, target
    return None


SMALL_DFA = 64
"""A DFA of at most this many states is merged into its live blocks at its first looping
chain (``merge_pair``): a few rounds over a small table (~0.1 ms)."""


def searches(chain: Chain, reads: Callable[[int], int], table: np.ndarray) -> int:
    """A state that some ASCII byte of ``chain``'s leaves leads to from the state ``s`` it
    loops on, reading the same ASCII bytes as ``s`` (-1: none): a search's progress through
    its needle (``ANY*(?:foo)ANY*``: ``f`` from the start), whose chain's frontier is every
    token holding that byte, where its live blocks (``quotient``) may hold one loop."""
    if not chain.loops or not chain.leaves & _ASCII:
        return -1
    loop = chain.path[-1]
    ascii_read = reads(loop) & _ASCII
    for target, read in _ascii_exits(chain, reads, table):
        if target != loop and read == ascii_read:
            return target
    return -1


def _row_main_class(row: np.ndarray, reads: int) -> tuple[int, int]:
    """``Chains.main_class`` from a state's row alone: the bytes (an int of 256 bits) that
    lead to the target most bytes lead to, the lowest target on a tie as there, and that
    target; ``(0, -1)`` for a state that reads nothing. ``reads``: the bytes it reads
    (256 bits); a few (``FEW_EDGES``: a counted run's end, reading the separator after it)
    are counted in plain Python, where the numpy count cost ~6 rounds.

    >>> row = np.full(256, -1); row[[32, 44]] = 5; row[10] = 4
    >>> _row_main_class(row, 1 << 10 | 1 << 32 | 1 << 44) == (1 << 32 | 1 << 44, 5)
    True
    >>> row[10] = -1; row[44] = 3
    >>> _row_main_class(row, 1 << 32 | 1 << 44) == (1 << 44, 3)  # a tie: the lowest
    True
    """
    if reads.bit_count() <= FEW_EDGES:
        by_target: dict[int, int] = {}
        for byte in set_bits(reads):
            target = row.item(byte)
            by_target[target] = by_target.get(target, 0) | 1 << byte
        if not by_target:
            return 0, -1
        target = min(by_target, key=lambda t: (-by_target[t].bit_count(), t))
        return by_target[target], target
    live = row[row >= 0]
    if not len(live):
        return 0, -1
    target = int(np.bincount(live).argmax())
    return int.from_bytes(np.packbits(row == target, bitorder="little").tobytes(), "little"), target


def _packed_ids(tokens: list[int], num_ids: int) -> np.ndarray:
    """Token ids as read-only int32 words (``index.packed``'s layout); a few (a schema
    key's row) ORed in word by word, in Python, then set one word at a time (a numpy
    assignment from lists cost ~5 µs). Not through a ``bytearray`` and ``np.frombuffer``:
    its memoryview and buffer, kept with every such mask, were two more objects for the
    garbage collector (2.4 -> 2.2 µs for one token, 12.7 -> 11.0 for 32)."""
    if len(tokens) <= 32:
        found: dict[int, int] = {}
        for token in tokens:
            found[token >> 5] = found.get(token >> 5, 0) | 1 << (token & 31)
        words = np.zeros(-(-num_ids // 32), dtype=np.uint32)
        for word, bits in found.items():
            words[word] = bits
        words = words.view(np.int32)
        words.flags.writeable = False
        return words
    bits = np.zeros(-(-num_ids // 32) * 32, dtype=bool)
    bits[tokens] = True
    words = np.packbits(bits, bitorder="little").view("<i4").astype(np.int32, copy=False)
    words.flags.writeable = False
    return words


def main_class(
    table: np.ndarray,
    mains: dict[int, tuple[int, int]],
    reads: Callable[[int], int],
    state: int,
    height: int,
    dfa: Dfa | None = None,
    ascii_of: dict[int, int] | None = None,
) -> tuple[int, int]:
    """``Chains.main_class`` of ``state`` (``table``'s row ``state``), put in ``mains``.
    Where ``dfa`` is the character DFA whose byte DFA ``table`` is (``state`` one of its
    states) and ``state`` reads no byte past ASCII, read off its moves
    (``char_main_class``: no numpy round; a JSON string's ~30 classes cost ~40 µs to find
    the one past ASCII). Else first guessed with the states after it (``guess_mains``
    along the middle byte it reads: where one target takes most of its bytes, likely one
    of them); where no target does (a capital or a letter: 26 bytes each), from its row
    (``_row_main_class``), then the states after it guessed (~10 µs a state asked one by
    one, 0.2 ms for a CSV field's 20). ``reads(s)``: the bytes ``s`` reads (256 bits)."""
    ascii = dfa is not None and not reads(state) >> 128  # else a class reads past ASCII
    found = char_main_class(dfa, table, state, ascii_of) if ascii else None
    if found is None and reads(state):
        guess_mains(table, mains, reads, state, _middle_byte(reads(state)), height)
        found = mains.get(state)
    if found is None:
        found = _row_main_class(table[state], reads(state))
        bits, target = found
        if target >= 0:
            guess_mains(table, mains, reads, target, (bits & -bits).bit_length() - 1, height)
    mains[state] = found
    return found


def char_main_class(
    dfa: Dfa, table: np.ndarray, state: int, ascii_of: dict[int, int] | None = None
) -> tuple[int, int] | None:
    """``Chains.main_class`` of ``state`` read off the character DFA ``dfa`` (``table``:
    its byte DFA's): each target's classes (``Dfa.moves``) counted by their characters,
    the lowest target on a tie, as ``_row_main_class`` counts the row's bytes. A state
    whose classes are all ASCII reads each class's characters as bytes into the same
    targets (``to_bytes``); ~2 µs, where a guess round for a counted repeat's chain cost
    ~60 µs at a new index's first mask. None where a class it reads holds a character
    past ASCII (its lead bytes lead inside a character: counted in the byte table alone)
    or where the byte table does not lead there (an edge into a dead end, left out).
    ``ascii_of``: by a set of classes, their ASCII bytes (-1: one past ASCII), kept.

    >>> from fsmviz.automaton.bytedfa import to_bytes
    >>> from fsmviz.automaton.dfa import compile_regex
    >>> dfa = compile_regex("[A-Z][a-z]{1,3}")
    >>> table = to_bytes(dfa).table
    >>> bits, target = char_main_class(dfa, table, 1)  # after a capital: the 26 letters
    >>> bits == sum(1 << b for b in b"abcdefghijklmnopqrstuvwxyz"), target == table.item(1, 97)
    (True, True)
    >>> char_main_class(compile_regex("[^a]"), to_bytes(compile_regex("[^a]")).table, 0)
    """
    ascii_of = {} if ascii_of is None else ascii_of
    best, most, main = 0, 0, -1
    for target, classes in dfa.moves[state].items():
        bits = ascii_of.get(classes)
        if bits is None:
            bits = ascii_of[classes] = _class_bits(dfa, classes)
        if bits < 0:
            return None
        count = bits.bit_count()
        if count > most or count == most and target < main:
            best, most, main = bits, count, target
    if main >= 0 and table.item(state, (best & -best).bit_length() - 1) != main:
        return None
    return best, main


def _class_bits(dfa: Dfa, classes: int) -> int:
    """The characters of ``dfa``'s ``classes`` (a set of class numbers, as ``Dfa.moves``
    keeps them) as bytes (256 bits); -1 where one lies past ASCII."""
    bits = 0
    for k in set_bits(classes):
        for lo, hi in dfa.classes[k].ranges(dfa.mentioned):
            if hi > 0x7F:
                return -1
            bits |= (1 << (hi + 1)) - (1 << lo)
    return bits


GUESSED = 3
"""``guess_mains`` makes the main classes of at least this many states at once
(one round costs about as much as two states asked one by one)."""


def guess_mains(
    table: np.ndarray,
    mains: dict[int, tuple[int, int]],
    reads: Callable[[int], int],
    state: int,
    byte: int,
    height: int,
) -> None:
    """Into ``mains``, the main classes (``majority_classes``: where ``byte``'s target
    takes most bytes) of ``state`` and the states ``byte`` leads through from it, at most
    ``height`` more, in one round where there are ``GUESSED`` or more not yet known:
    likely a chain's (``[^,\\n]{1,20}``: 20 states; ``reads(s)``: the bytes ``s`` reads,
    packed by ``READ_BLOCK``)."""
    path: dict[int, None] = {}
    while state >= 0 and state not in mains and state not in path:
        path[state] = None
        if len(path) > height:
            break
        state = table.item(state, byte)
    if len(path) < GUESSED:
        return  # a few asked alone cost as much
    states = list(path)
    found = majority_classes(table[states], byte, [reads(at) for at in states])
    for at, main in zip(states, found, strict=True):
        if main is not None:
            mains[at] = main


def majority_classes(rows: np.ndarray, byte: int, reads: list[int]) -> list[tuple[int, int] | None]:
    """``Chains.main_class`` of each row of ``rows`` (a state's targets, -1 for none; it
    reads the bytes of ``reads``, a set of bits a row) where the target of ``byte`` takes
    more than half of the bytes read, and is so the one most bytes lead to (the bytes
    leading there as an int of 256 bits, and that target); None for a row where it does
    not (``[^,\\n]``'s rows: 126 of 179, the rest lead bytes of UTF-8 into other states).
    One numpy round for all the rows, the counts as the bits' counts, where counting each
    row's targets (``np.bincount``) cost ~10 µs a row.

    >>> rows = np.array([[1, 1, 2, -1], [1, 1, 2, 2], [-1, -1, 3, 3]])
    >>> majority_classes(rows, 0, [0b0111, 0b1111, 0b1100])  # 1: 2 of 4 is no majority
    [(3, 1), None, None]
    """
    targets = rows[:, byte]
    size = -(-rows.shape[1] // 8)
    same = np.packbits(rows == targets[:, None], axis=1, bitorder="little").tobytes()
    found: list[tuple[int, int] | None] = []
    for k, (target, read) in enumerate(zip(targets.tolist(), reads, strict=True)):
        bits = int.from_bytes(same[size * k : size * (k + 1)], "little")
        taken = target >= 0 and 2 * bits.bit_count() > read.bit_count()
        found.append((bits, target) if taken else None)
    return found


def _middle_byte(bits: int) -> int:
    """The middle one of the bytes of ``bits`` (256 bits, some set): as many below it as
    half of them, found by halving the range.

    >>> _middle_byte(0b1011_0010)  # bytes 1, 4, 5, 7: two below 5
    5
    """
    want, lo, hi = bits.bit_count() // 2, 0, 256
    while hi - lo > 1:  # bits below lo: at most ``want``; below hi: more
        mid = (lo + hi) // 2
        if (bits & ((1 << mid) - 1)).bit_count() > want:
            hi = mid
        else:
            lo = mid
    return lo


DOT_ASCII = 96
"""A loop reading fewer ASCII bytes onwards than this is not taken for a ``.*``
(``looks_closed``)."""
SMALL_EDGES = 64
"""States reading fewer bytes than this try ``small_row`` first: wide ones too (the 16 hex
digits of a MAC address allow 52 tokens, where a pass over the class trie would first
build it, ~10 ms); a string's loop (200 bytes and more) goes to the class trie at once."""
WIDE_STATE = 16
"""A state reading at least this many bytes is walked over the class trie however large."""
SMALL_CLASSES = 8_192
"""Once built, a class trie of at most this many nodes (1,183 for a key-value list, 521
for a CSV row) walks every state: a narrow state's row costs a few small rounds there,
where the byte trie's chains walk a quoted string's tokens deep pair by pair (1-2 ms)."""


FEW_EDGES = 16
"""A state reading at most this many bytes lists its row for ``small_row`` from its targets
read one by one (~0.1 µs each) rather than from its whole row as a list (~3 µs)."""
READ_BLOCK = 64
"""``RowWalker.reads_of`` packs the bytes read of this many states at once (~8 µs), where a
row packed alone cost ~4 µs, most of it numpy's calls."""


SMALL_WORK = 256
"""A narrow state's row is first walked in plain Python (``small_row``), giving up past this
many steps (a pair visited or a child looked up): a schema key's or a digit's row visits a
handful of pairs (median 5 along the benchmark's paths), where a numpy round a level costs
~10 µs whatever its size."""


Steps = dict[int, int] | array
"""A state's row: a narrow one's edges, byte -> target, in byte order; a wide one's 256
targets (``RowWalker._steps``, ``small_row``)."""


def _block_reads(table: np.ndarray, block: int) -> np.ndarray:
    """The bytes read by the states of ``block`` (``READ_BLOCK`` of them), as packed bits:
    32 bytes a state, bit ``b`` for byte ``b``."""
    rows = table[block * READ_BLOCK : (block + 1) * READ_BLOCK]
    return np.packbits(rows >= 0, axis=1, bitorder="little")


def steps_of(row: np.ndarray, reads: int) -> Steps:
    """``RowWalker._steps`` of a state: its ``row`` of the table and the bytes it reads
    (256 bits). A narrow state's as a dict of ints, which the garbage collector never
    tracks; a wide one's (``SMALL_EDGES``) as an array of C ints, whose traversal visits
    its type alone (a dict of its bytes cost ~5-15 µs to make). A schema's small walks
    keep hundreds an index (~490 for the 22-field one), where a list of 256 ints, one of
    (byte, target) tuples and a tuple kept per state were visited by every collection (a
    young one that fell inside a mask cost ~0.3 ms for them)."""
    count = reads.bit_count()
    if count >= SMALL_EDGES:
        return array("i", row.astype(np.intc, copy=False).tobytes())
    if count <= FEW_EDGES:
        return {b: row.item(b) for b in set_bits(reads)}
    targets = row.tolist()
    return {b: targets[b] for b in set_bits(reads)}


def _wide_below(
    lists: TrieLists, sizes: np.ndarray, walker: RowWalker, node: int, state: int
) -> bool:
    """Whether ``state`` (narrow, at trie node ``node``) reads bytes below ``node`` into a
    wide state (``walker.wide``), through narrow ones, with more than half ``SMALL_WORK``
    tokens below each node on the way (``sizes``, by node: a token below costs the small
    walk ~2 steps, its node visited and its children looked up)."""
    lo = lists.first_child[node]
    hi = lo + lists.num_children[node]
    for byte, target in walker._steps(state).items():
        child = bisect_left(lists.byte, byte, lo, hi)
        if child == hi or lists.byte[child] != byte or 2 * sizes.item(child) <= SMALL_WORK:
            continue
        if walker.wide(target) or _wide_below(lists, sizes, walker, child, target):
            return True
    return False


def first_bytes(reads: int, table: np.ndarray, chain: Chain | None) -> bool:
    """Whether a state reading ``reads`` (256 bits), its chain's words not found, is tried
    from its first bytes (``RowWalker.packed``): where it reads no ASCII byte, or its
    chain of two states ends in a loop that reads back into itself an ASCII byte the state
    reads elsewhere (after a string's backslash, ``bfnrt/"`` lead on, any other byte into
    the loop: the chain's bytes, those both read alike, left out every token holding a
    ``b``; its frontier was too large, and the row walk answered: 0.5-1.1 ms)."""
    if not reads & _ASCII:
        return True
    if chain is None or len(chain.path) != 2 or not chain.loops:
        return False
    loop = chain.path[1]
    own = np.packbits(table[loop, :128] == loop, bitorder="little")
    return bool(reads & ~chain.allowed & int.from_bytes(own.tobytes(), "little"))


def small_row(
    trie: TrieLists,
    steps: Callable[[int], Steps],
    state: int,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The row of ``state`` (sorted token ids, int32, and their targets) by a depth-first
    walk over (trie node, state) pairs in Python, or None past ``SMALL_WORK`` steps.
    ``steps(s)`` gives the row of state ``s``: where it reads fewer than ``SMALL_EDGES``
    bytes, its edges (a dict, byte -> target, in byte order), else its 256 targets (-1
    where a byte falls off); at each node the walk reads whichever is shorter, the node's
    children (their bytes looked up in the row) or the edges (each byte found among the
    children by bisection).

    >>> from fsmviz import Vocabulary, build_index
    >>> index = build_index("[0-9]+", Vocabulary.from_strings(["1", "12", "a1"]))
    >>> table = index.byte_dfa.table
    >>> steps = lambda s: {b: t for b, t in enumerate(table[s].tolist()) if t >= 0}
    >>> [a.tolist() for a in small_row(index.trie.lists, steps, 0)]  # "1", "12"
    [[0, 1], [1, 1]]
    """
    found = _small_walk(trie, steps, state)
    if found is None:
        return None
    found.sort()
    tokens = np.array([token for token, _ in found], dtype=np.int32)
    return tokens, np.array([target for _, target in found], dtype=np.int32)


def _small_walk(
    trie: TrieLists, steps: Callable[[int], Steps], state: int
) -> list[tuple[int, int]] | None:
    """``small_row``'s walk: the (token, target) pairs of ``state`` in the walk's order, or
    None past ``SMALL_WORK`` steps (``RowWalker.packed`` wants the tokens alone)."""
    first_child, num_children, byte = trie.first_child, trie.num_children, trie.byte
    token_start, token_ids = trie.token_start, trie.token_ids
    found: list[tuple[int, int]] = []
    stack, work = [(0, state)], 0
    while stack:
        node, at = stack.pop()
        if token_start[node] != token_start[node + 1]:
            found += [(token, at) for token in token_ids[token_start[node] : token_start[node + 1]]]
        count = num_children[node]
        if not count:
            continue
        row, lo = steps(at), first_child[node]
        reads = len(row)  # 256 for a wide state
        work += 1 + min(count, reads)
        if work > SMALL_WORK:
            return None
        if reads == 256:  # a wide state's targets (-1 where a byte falls off)
            stack += [(c, t) for c in range(lo, lo + count) if (t := row[byte[c]]) >= 0]
            continue
        if count <= reads:
            stack += [(c, t) for c in range(lo, lo + count) if (t := row.get(byte[c], -1)) >= 0]
            continue
        hi = lo + count
        for b, target in row.items():
            c = bisect_left(byte, b, lo, hi)
            if c < hi and byte[c] == b:
                stack.append((c, target))
    return found


def walk_row(
    trie: VocabTrie, table: np.ndarray, chains: Chains, state: int, num_ids: int
) -> tuple[np.ndarray, np.ndarray]:
    """The row of ``state``: its allowed token ids (sorted, int32) and the state each
    leads to. Walks (trie node, state) pairs level by level like ``index._walk`` from one
    start, but takes a pair's whole subtree at once when the chain of its state allows it,
    and walks the last few tokens in Python (see the module's docstring). ``num_ids``
    bounds the token ids."""
    flat = table.reshape(-1)
    width = table.shape[1]
    nodes = np.zeros(1, dtype=np.int32)
    states = np.array([state], dtype=np.int32)
    walked_nodes, walked_states = [], []  # every pair walked (its node's tokens are allowed)
    whole_nodes, whole_bases = [], []
    entries: list[int] = []  # the tokens walked in Python (positions in sorted_ids)
    targets: list[int] = []
    checked = False  # whether a level was tested for whole subtrees
    while nodes.size:
        grows = None
        if len(nodes) >= WIDE:
            reach = chains.reach[states]
            if (reach < 0).any():
                chains.add(distinct(states[reach < 0]))
                reach = chains.reach[states]
            below = trie.subtree_bytes.view(_SET).reshape(-1)
            if reach.min() >= 2:  # else a whole subtree would take little (or no chain kept)
                checked = True
                base = chains.local[states] * chains.width
                clash = below.take(nodes).view("<u8")  # the bytes below the chain forbids
                clash &= chains.forbidden.take(base + trie.height[nodes]).view("<u8")
                kept = _nonempty(clash)
                if not kept.all():
                    whole = ~kept
                    whole_nodes.append(nodes[whole])
                    whole_bases.append(base[whole])
                    nodes, states = nodes[kept], states[kept]
            # A pair none of whose bytes below its state reads has no child to walk.
            grows = below.take(nodes).view("<u8")
            grows &= chains.live.take(states).view("<u8")
            grows = _nonempty(grows)
        elif checked and len(nodes) <= TAIL and int(trie.span_size[nodes].sum()) <= TAIL:
            entries, targets = walk_tokens(trie, chains.walk, nodes, states)
            break
        walked_nodes.append(nodes)
        walked_states.append(states)
        if grows is not None:
            nodes, states = nodes[grows], states[grows]
        counts = trie.num_children[nodes]
        if not counts.any():
            break
        children = runs(trie.first_child[nodes], counts)
        reached = np.repeat(states * width, counts)
        reached += trie.byte[children]
        reached = flat[reached]
        alive = reached >= 0
        nodes, states = children[alive], reached[alive]
    node, at = np.concatenate(walked_nodes), np.concatenate(walked_states)
    hit = trie.has_token[node]
    parts = [_own_tokens(trie, node[hit], at[hit])]
    if whole_nodes:
        parts.append(_whole_tokens(trie, chains, whole_nodes, whole_bases))
    if entries:
        parts.append((trie.sorted_ids[entries], np.array(targets, dtype=np.int32)))
    return _sorted(parts, num_ids)


def _whole_tokens(
    trie: VocabTrie, chains: Chains, tops: list[np.ndarray], bases: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The tokens under the subtrees taken whole (their top nodes, and where their
    states' chains start in ``chains.targets``), and where each ends: as many steps
    along the chain as the token has bytes below the top (-1 for a token longer than a
    chain that ends: not allowed)."""
    top = np.concatenate(tops)
    counts = trie.span_size[top]
    under = runs(trie.span_start[top], counts)
    steps = trie.sorted_lengths[under]
    steps += np.repeat(np.concatenate(bases) - trie.depth[top], counts)
    return trie.sorted_ids[under], chains.targets[steps]


def _nonempty(words: np.ndarray) -> np.ndarray:
    """Which sets of bytes, given as their words (4 a set, one after the other), hold any."""
    return ((words[0::4] | words[1::4]) | (words[2::4] | words[3::4])).astype(bool)


def walk_tokens(
    trie: VocabTrie, walk: Callable[[bytes, int], int], nodes: np.ndarray, states: np.ndarray
) -> tuple[list[int], list[int]]:
    """Walk each token at and below the pairs (``nodes``, ``states``) byte by byte in
    Python, ``walk(bytes, state)`` giving the state after them or -1: the allowed ones as
    positions in ``trie.sorted_ids``, and their targets. (Also the first mask's last few
    tokens: ``derivatives._NearStart.first_row``.)"""
    entries, targets = [], []
    starts, sizes = trie.span_start[nodes].tolist(), trie.span_size[nodes].tolist()
    depths = trie.depth[nodes].tolist()
    for start, size, depth, state in zip(starts, sizes, depths, states.tolist(), strict=True):
        for entry in range(start, start + size):
            target = walk(trie.sorted_bytes[entry][depth:], state)
            if target >= 0:
                entries.append(entry)
                targets.append(target)
    return entries, targets


def _own_tokens(
    trie: VocabTrie, node: np.ndarray, state: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The tokens ending at each of ``node`` and the ``state`` each reached. A node can
    carry several tokens (same bytes, different ids): expand through the CSR."""
    per_node = trie.token_start[node + 1] - trie.token_start[node]
    if (per_node != 1).any():
        return trie.token_ids[runs(trie.token_start[node], per_node)], np.repeat(state, per_node)
    return trie.token_ids[trie.token_start[node]], state


def _sorted(
    parts: list[tuple[np.ndarray, np.ndarray]], num_ids: int
) -> tuple[np.ndarray, np.ndarray]:
    """The tokens of ``parts`` (each a token array and a target array; distinct tokens)
    sorted, with their targets alongside; tokens whose target is -1 left out."""
    if sum(len(tokens) for tokens, _ in parts) > DENSE_SORT:
        dense = np.full(num_ids, -1, dtype=np.int32)
        for tokens, targets in parts:
            dense[tokens] = targets
        found = np.flatnonzero(dense >= 0)
        return found.astype(np.int32), dense[found]
    tokens, targets = parts[0]
    if len(parts) > 1:
        tokens, targets = (np.concatenate(arrays) for arrays in zip(*parts, strict=True))
        allowed = targets >= 0
        tokens, targets = tokens[allowed], targets[allowed]
    order = np.argsort(tokens)
    return tokens[order], targets[order]
