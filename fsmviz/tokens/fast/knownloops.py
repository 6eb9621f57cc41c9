"""Masks known ahead: the loops patterns are made of, their masks made once per vocabulary.

A token is allowed in a state exactly when its bytes are a string the state can still read
(all states of a byte DFA are live). So a state that can read every string some other
state reads allows every token that one does, and perhaps more. Most wide states of real
patterns read at least what one of two loops reads:

- ``ANY*``, where ``ANY`` is a JSON string's character (``ANY`` below:
  a schema's ``pattern`` not anchored at either side is written ``ANY*…ANY*``). The
  start of ``ANY*(?:1.0)ANY*`` reads any string of ``ANY``, whatever it has read the
  needle may still follow, and more: a ``1``, then a quote (the needle's ``.``);
- ``.*``: the start of ``.*\\.yaml`` reads any string but a newline.

A loop's start allows nearly every token (``ANY*``'s: 48,732 of SmolLM2's 49,152; the other
420 hold a quote, a control or a bad escape). So the tokens of a state that reads at least
what the loop's start reads are the start's, made once per vocabulary (``known_loops``, from
``tokens.index.warm``), and those of the 420 that the state's own walk keeps
(``_walk_left``: most die at their first byte or two).

Whether a state reads at least what a loop state reads is found by *pairing* them
(``_pairs``): for each byte class the loop state reads, the state must read it too, and the
two states it leads to are paired in turn, until no pair is new. Every pair met answers its
state too: one whose states read the same bytes, all the way down, has the loop state's
mask (``_exact``: a search's states after a backslash or inside a character); one whose
states read the same bytes, the loop state's and those of the few tokens it leaves out
that begin with them (``KnownLoop.own``: 132 for ``ANY*``'s start, 12 after its
backslash). An ORCID search's 56 states are paired in one pass (~0.2 ms), kept for the
index (``LoopPairs``), where merging them into blocks and walking the block cost ~1 ms
(``rowwalk.merge_at``, ``searchwords``).

>>> from fsmviz import Vocabulary, build_index
>>> from fsmviz.tokens.trie import trie_of
>>> vocab = Vocabulary.from_strings(["ab", "a\\n", "b", "\\n"])
>>> index = build_index("(?:.*ab)|\\n", vocab)  # reads what ``.*`` reads, and a newline
>>> loops = known_loops(trie_of(vocab), len(vocab))
>>> pairs = LoopPairs(loops, index.byte_dfa, index._walker.reads_of)
>>> pairs.words(0).tolist()  # tokens 0, 2 (as ``.*``'s start) and 3 (its own): not "a\\n"
[13]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import add

import numpy as np

from fsmviz.automaton.bytedfa import ByteDfa, to_bytes
from fsmviz.automaton.dfa import compile_regex
from fsmviz.cache import OwnedCache
from fsmviz.tokens.fast.rowwalk import RowWalker
from fsmviz.tokens.trie import VocabTrie

__all__ = ["ANY", "LOOPS", "KnownLoop", "LoopPairs", "known_loops"]

ANY = r'(?:[^"\\\x00-\x1F\x7F-\x9F]|\\["\\/bfnrt])'
"""One character of a JSON string's text, as outlines-core writes a free string's (the schema
layer writes its strings with it: ``fsmviz.schema.patterns``)."""
LOOPS = (f"{ANY}*", ".*")
"""The loops whose starts' masks every vocabulary keeps (above)."""
LEFT_MOST = 4_096
"""A loop state is kept as a start to pair with only where at most this many tokens are
not allowed in it (its ``Left``): those are walked for each state paired with it."""
SHALLOW = 8
"""Bytes of left-out tokens ``_walk_left`` reads with numpy, every token at once (a round
a byte: ~4 µs); the few longer tokens still read past them are walked on in Python."""
PAIRS_MOST = 256
"""Pairs one pairing may meet (a search's: ~50-100); past it, it gives up: a pairing of
2,000 pairs costs ~4 ms, more than its states' other walks (a URL's 257 states)."""
PAIR_BUDGET = 1_024
"""Pairs an index's failed pairings may meet in all, after which no state is paired (a
large DFA whose start reads as a loop's but whose states do not: ``[^:]+://…``)."""
PAIRED_STATES = 80
"""A pattern's byte DFA is paired with a loop only up to this many states (a search's:
~30-70). A pairing meets about as many pairs as there are states, ~5 µs each, after the
byte classes are found (~0.15 ms for a search's, ~0.3 for a schema's 112 states); a larger
DFA's wide states cost less walked otherwise (a URL's 257 states: ~4 ms to pair where the
other walks took ~1)."""


@dataclass(frozen=True, eq=False)
class Left:
    """The tokens not allowed in a loop state, longest first: ``ids`` (int64), how many are
    longer than each number of bytes (``longer``) and their bytes level by level
    (``data[level, i]``: byte ``level`` of token ``i``, 0 past its end); and their trie,
    for the few still read after some levels (``\\n`` and 60 spaces: a chain of tokens one
    a byte): the node on each token's path at each level (``nodes[level, i]``, the root
    0), each node's ``children`` as (byte, node) and the tokens that end there (``ends``)."""

    ids: np.ndarray
    longer: np.ndarray  # [level]: how many are longer than ``level`` bytes (a prefix)
    data: np.ndarray
    nodes: np.ndarray
    children: tuple[tuple[tuple[int, int], ...], ...]
    ends: tuple[tuple[int, ...], ...]

    @staticmethod
    def of(words: np.ndarray, token_bytes: tuple[bytes, ...], first: int = -1) -> Left:
        """The tokens ``words`` leaves out, those beginning with a byte of ``first`` (an
        int of 256 bits; all by default)."""
        bits = np.unpackbits(words.view(np.uint8), bitorder="little")[: len(token_bytes)]
        ids = np.flatnonzero(bits == 0)
        ids = ids[np.array([_begins(token_bytes[i], first) for i in ids.tolist()], dtype=bool)]
        lengths = np.array([len(token_bytes[i]) for i in ids.tolist()], dtype=np.intp)
        order = np.argsort(-lengths, kind="stable")
        ids, lengths = ids[order], lengths[order]
        data = np.zeros((int(lengths.max(initial=0)), len(ids)), dtype=np.intp)
        nodes = np.zeros_like(data)
        children: list[dict[int, int]] = [{}]
        ends: list[list[int]] = [[]]
        for column, token in enumerate(ids.tolist()):
            node = 0
            for level, byte in enumerate(token_bytes[token]):
                data[level, column], nodes[level, column] = byte, node
                if byte not in children[node]:
                    children[node][byte] = len(children)
                    children.append({})
                    ends.append([])
                node = children[node][byte]
            ends[node].append(column)
        longer = (lengths[None, :] > np.arange(len(data) + 1)[:, None]).sum(axis=1)
        return Left(
            ids, longer, data, nodes,
            tuple(tuple(c.items()) for c in children), tuple(map(tuple, ends)),
        )  # fmt: skip


@dataclass(frozen=True, eq=False)
class KnownLoop:
    """One loop of ``LOOPS`` over one vocabulary: its byte DFA's ``table``, the bytes it
    tells apart (``byte_class``, ``smallest``: ``ByteDfa.columns``), each state's bytes
    (``reads``: an int of 256 bits) and allowed tokens packed (``words``: uint32, read-only,
    EOS's bit never set), the tokens each leaves out that begin with a byte it reads
    (``own``: 132 for ``ANY*``'s start, 12 after its backslash), and all those its wide
    states leave out (``left``: where at most ``LEFT_MOST``, its starts)."""

    table: np.ndarray
    byte_class: np.ndarray
    smallest: np.ndarray
    reads: tuple[int, ...]
    words: tuple[np.ndarray, ...]
    own: tuple[Left, ...]
    left: dict[int, Left]

    @staticmethod
    def of(pattern: str, trie: VocabTrie, num_ids: int) -> KnownLoop:
        """``pattern``'s loop over the vocabulary of ``trie``: each state's row walked as
        every index walks its rows (``RowWalker.walk``)."""
        byte_dfa = to_bytes(compile_regex(pattern))
        walker = RowWalker(byte_dfa, trie, num_ids)
        token_bytes = _token_bytes(trie, num_ids)
        reads = tuple(walker.reads_of(state) for state in range(byte_dfa.num_states))
        words, own, left = [], [], {}
        for state in range(byte_dfa.num_states):
            bits = np.zeros(-(-num_ids // 32) * 32, dtype=bool)
            bits[walker.walk(state)[0]] = True
            words.append(np.packbits(bits, bitorder="little").view("<u4"))
            words[-1].flags.writeable = False
            own.append(Left.of(words[-1], token_bytes, reads[state]))
            if num_ids - np.count_nonzero(bits) <= LEFT_MOST:
                left[state] = Left.of(words[-1], token_bytes)
        columns = byte_dfa.columns
        return KnownLoop(
            byte_dfa.table, columns.byte_class, columns.smallest, reads, tuple(words),
            tuple(own), left,
        )  # fmt: skip


def _begins(data: bytes, first: int) -> bool:
    """Whether ``data`` begins with a byte of ``first`` (bit ``b`` for byte ``b``); EOS
    and special tokens (no bytes) never do."""
    return bool(data) and bool(first >> data[0] & 1)


def _token_bytes(trie: VocabTrie, num_ids: int) -> tuple[bytes, ...]:
    """Each token id's bytes, as the trie holds them (b"" for those it leaves out: EOS and
    special tokens, never allowed)."""
    found = [b""] * num_ids
    for token, data in zip(trie.sorted_ids.tolist(), trie.sorted_bytes, strict=True):
        found[token] = data
    return tuple(found)


def known_loops(trie: VocabTrie, num_ids: int) -> tuple[KnownLoop, ...]:
    """The loops of ``LOOPS`` over the vocabulary of ``trie`` (made once per trie, in
    ``tokens.index.warm``: ~0.3 s for 49k tokens)."""
    return _LOOPS.get_or_build(
        trie, num_ids, lambda: tuple(KnownLoop.of(p, trie, num_ids) for p in LOOPS)
    )


_LOOPS: OwnedCache[tuple[KnownLoop, ...]] = OwnedCache(maxsize=2)


class LoopPairs:
    """One byte DFA's states paired with loop states (``words``), kept as they are found:
    a pairing from one state pairs every state it meets."""

    def __init__(
        self, loops: tuple[KnownLoop, ...], byte_dfa: ByteDfa, reads: Callable[[int], int]
    ) -> None:
        self.loops, self.byte_dfa, self.reads = loops, byte_dfa, reads
        self._ours: dict[int, list[list[int]]] = {}  # the table for ``_pairs``, by width
        self._steps: np.ndarray | None = None  # the table for ``_walk_left``
        self._paired: dict[int, tuple[np.ndarray, Left | None]] = {}  # (words, left to walk)
        self._budget = PAIR_BUDGET  # pairs met by pairings that failed, left
        self._failed: dict[KnownLoop, set[int]] = {}  # the pairs known not to pair, by loop
        # (a pair is one int whose loop state only its loop reads: two loops of one width
        # write their pairs alike)

    def words(self, state: int) -> np.ndarray | None:
        """The packed words (uint32) of the tokens allowed in ``state`` where it reads what
        a loop state reads (theirs), or at least what a loop's start reads (the start's,
        with those of its left-out tokens that ``state``'s walk keeps); else None."""
        found = self._paired.get(state) or self._pair(state)
        if found is None:
            return None
        words, left = found
        if left is None:
            return words
        if self._steps is None:
            self._steps = _steps_of(self.byte_dfa.table)
        kept = _walk_left(left, self._steps, self.byte_dfa.table, state)
        if not len(kept):
            return words
        words = words.copy()
        np.bitwise_or.at(words, kept >> 5, (np.uint32(1) << (kept & 31).astype(np.uint32)))
        return words

    def _pair(self, state: int) -> tuple[np.ndarray, Left | None] | None:
        """Pair ``state`` with a loop state it reads at least as much as, a loop's starts
        first, keeping every pair met on the way that answers a state; None where none
        answers ``state``."""
        if len(self.byte_dfa.table) > PAIRED_STATES:
            return None
        got = self.reads(state)
        for loop in self.loops:
            candidates = [  # those that would answer it: a start it reads more than, or alike
                q for q, read in enumerate(loop.reads)
                if read == got or q in loop.left and not read & ~got
            ]  # fmt: skip
            if not candidates or self._budget <= 0:  # a key's, a digit's state: at once
                continue
            columns = self.byte_dfa.columns
            theirs = loop.byte_class[columns.smallest]  # the loop's class of each of ours
            if not np.array_equal(theirs[columns.byte_class], loop.byte_class):
                continue  # the loop tells apart bytes we do not: it cannot be paired
            candidates.sort(key=lambda q: q not in loop.left)
            width = len(loop.reads) + 1  # a pair (ours, theirs) as one int: ``_pairs``
            if width not in self._ours:
                ours = self.byte_dfa.table[:, columns.smallest]
                self._ours[width] = ((ours + 1) * width).tolist()
            rows = (loop.table[:, loop.smallest[theirs]] + 1).tolist()
            for start in candidates:
                most = min(PAIRS_MOST, self._budget)
                first = (state + 1) * width + start + 1
                failed = self._failed.setdefault(loop, set())
                found, met, wider = _pairs(self._ours[width], rows, first, most, failed)
                self._budget -= 0 if found else met
                if found is not None:
                    self._keep(loop, found, wider, width)
                    if state in self._paired:
                        return self._paired[state]
        return None

    def _keep(
        self, loop: KnownLoop, found: dict[int, set[int]], wider: set[int], width: int
    ) -> None:
        """Keep what the pairs ``found`` answer: a state paired exactly (``_exact``) has its
        loop state's words; one that reads the same bytes as its loop state (not one of
        ``wider``), those and the loop state's own left-out tokens its walk keeps; one
        paired with a start, the start's and all its left-out tokens its walk keeps."""
        pairs = {pair: (pair // width - 1, pair % width - 1) for pair in found}
        alike = found.keys() - wider
        for pair in _exact(found, alike):
            ours, loop_state = pairs[pair]
            self._paired[ours] = (loop.words[loop_state], None)
        for pair in alike:
            ours, loop_state = pairs[pair]
            self._paired.setdefault(ours, (loop.words[loop_state], loop.own[loop_state]))
        for ours, loop_state in pairs.values():
            if loop_state in loop.left:
                self._paired.setdefault(ours, (loop.words[loop_state], loop.left[loop_state]))


def _pairs(
    ours: list[list[int]], theirs: list[list[int]], first: int, most: int, failed: set[int]
) -> tuple[dict[int, set[int]] | None, int, set[int]]:
    """The pairs (our state, loop state) met from ``first`` along the same byte classes,
    each with the pairs it leads to, how many were met, and those whose state reads a
    class its loop state does not (``wider``: the others read the same bytes); None where
    a class leads a loop state on and ours nowhere (each of ours reads at least what its
    loop state reads) or to a pair of ``failed``, or past ``most`` pairs. A pair that fails
    fails every pair that leads to it: they join ``failed`` (the states of a counted
    string, ``[^"]{0,20}``, each lead to the last, which reads no more than a quote: the
    first pairing fails them all, the next are refused at once). A pair is one int,
    ``(ours + 1) * width + theirs + 1`` (0 for none): the rows of ``ours`` are its targets
    so written (a column a byte class), those of ``theirs`` the loop's plus 1, so that a
    class's pair is their sum and a row's pairs one ``map`` (~1.5 µs where a set of tuples
    cost ~4)."""
    width = len(theirs) + 1
    found: dict[int, set[int]] = {}
    todo, seen, wider = [first], {first}, set()
    if first in failed:
        return None, 0, wider
    while todo:
        pair = todo.pop()
        at, loop_at = divmod(pair, width)
        ahead = set(map(add, ours[at - 1], theirs[loop_at - 1]))  # a few distinct
        for after in list(ahead):
            if not after % width:  # a class the loop state does not read
                ahead.discard(after)
                if after:  # and ours does
                    wider.add(pair)
            elif after < width or after in failed:  # ours reads it not, or it fails
                failed |= _leading_to(found, {pair})
                return None, len(seen), wider
            elif len(seen) > most:
                return None, len(seen), wider
        found[pair] = ahead
        new = ahead - seen
        seen |= new
        todo += new
    return found, len(seen), wider


def _leading_to(found: dict[int, set[int]], pairs: set[int]) -> set[int]:
    """``pairs`` and the pairs of ``found`` that lead to one of them, however far."""
    behind: dict[int, list[int]] = {}
    for before, ahead in found.items():
        for after in ahead:
            behind.setdefault(after, []).append(before)
    reached, todo = set(pairs), list(pairs)
    while todo:
        for before in behind.get(todo.pop(), ()):
            if before not in reached:
                reached.add(before)
                todo.append(before)
    return reached


def _exact(found: dict[int, set[int]], alike: set[int]) -> list[int]:
    """The pairs of ``found`` whose two states read the same strings: those of ``alike``
    (each reads the same bytes) that lead to no pair outside it, however far (a pair
    not alike spoils every pair that leads to it)."""
    spoilt = _leading_to(found, found.keys() - alike)
    return [pair for pair in found if pair not in spoilt]


def _walk_left(left: Left, steps: np.ndarray, table: np.ndarray, state: int) -> np.ndarray:
    """The ids of ``left``'s tokens whose bytes ``table`` reads from ``state``: their first
    ``SHALLOW`` bytes a level a byte, every token at once (``steps``: ``_steps_of(table)``;
    the longest first, so a level's tokens are a prefix), then those longer and still
    read walked on in Python over their trie (a handful: ``\\n`` and 60 spaces)."""
    sink = len(steps) - 256
    at = np.full(len(left.ids), state * 256, dtype=np.intp)  # each token's state, x 256
    for level, longer in enumerate(left.longer[: min(SHALLOW, len(left.data))]):
        ahead = at[:longer] + left.data[level, :longer]
        steps.take(ahead, out=at[:longer])
    short = int(left.longer[SHALLOW]) if len(left.longer) > SHALLOW else 0
    kept = np.flatnonzero(at[short:] != sink) + short
    deep = np.flatnonzero(at[:short] != sink)
    if len(deep):
        nodes, states = left.nodes[SHALLOW, deep].tolist(), (at[deep] // 256).tolist()
        starts = dict(zip(nodes, states, strict=True))
        kept = np.concatenate([kept, np.array(_walk_trie(left, table, starts), dtype=np.intp)])
    return left.ids[kept]


def _steps_of(table: np.ndarray) -> np.ndarray:
    """``table`` flat for ``_walk_left``: each entry its target x 256, where a row starts,
    and -1 (none) a sink row past the last, whose every entry leads back to it."""
    sink = len(table) * 256
    steps = np.empty(sink + 256, dtype=np.intp)
    np.multiply(table.ravel(), 256, out=steps[:sink])
    steps[:sink][steps[:sink] < 0] = sink
    steps[sink:] = sink
    return steps


def _walk_trie(left: Left, table: np.ndarray, starts: dict[int, int]) -> list[int]:
    """The tokens below the nodes of ``starts`` (node: its state) of ``left``'s trie whose
    bytes ``table`` reads, walked in Python (``_walk_left``'s last few)."""
    kept: list[int] = []
    todo = [(node, state, False) for node, state in starts.items()]
    while todo:
        node, state, below = todo.pop()
        if below:
            kept += left.ends[node]
        for byte, child in left.children[node]:
            ahead = table.item(state, byte)
            if ahead >= 0:
                todo.append((child, ahead, True))
    return kept
