"""The token index: for each DFA state, which tokens may come next and where they lead.

This is what turns a regex into a mask over a model's vocabulary. The seeds' naive method
tries every token at every step (``regex.fullmatch(pattern, prefix + token, partial=True)``,
50,000 partial matches per generated token). Outlines' insight is that the answer depends
only on the DFA state the prefix ended in, not on the prefix itself, so it can be computed
once per state:

    allowed(state) = { token : walking the token's bytes from `state` never falls off the DFA }

and the state after the token is where that walk ends. A token may also end in the middle
of a multi-byte character; the walk then ends in one of the byte DFA's intermediate states,
which simply becomes another state of the index.

**How it is computed fast.** All tokens are walked at once through the vocabulary's byte
trie (``fsmviz.tokens.trie``): a breadth-first walk over pairs (trie node, DFA state), one trie
level per round, every round a few numpy gathers over all live pairs. A branch the DFA
rejects dies with its whole subtree. A state's *row* (its allowed tokens, sorted, and the
state each leads to) is made when first asked for: one walk from one state. A state that
reads many bytes (a string's loop, a name's letters) walks the *class trie*, the
vocabulary spelled by the pattern's byte classes (" lovelace" and " abcdefgh" alike: 1,252
nodes for a key-value pattern where the byte trie has 100,000), one pass a level
(``fsmviz.tokens.fast.classwalk``); another walks the byte trie, taking whole subtrees its
chain lets through (``fsmviz.tokens.fast.rowwalk``).

The whole index (every reachable state, what the safe end and the doctor need) asks
less: only each state's *successor set*, never its token list. When few (token prefix,
state) pairs survive (digits: SmolLM2 spells numbers digit by digit) they are walked one
by one as for a row; a small DFA within ASCII (a keyword, a date) is walked so from the
runs its byte table was written from, with no numpy call between its table and its
successor sets (a keyword's index is mostly fixed costs, paid cold). Otherwise the walk
moves *sets* of trie nodes, split only where a state tells bytes apart, and states that
tell the same bytes apart (the 50 states of a JSON string) share that work
(``fsmviz.tokens.fast.successors``); or, where states differ, it walks the vocabulary's
minimal automaton, whose merged endings make each pair a single step
(``fsmviz.tokens.fast.dawg``).

**Never a dead end.** A token is allowed only if acceptance stays reachable afterwards *with
this vocabulary's tokens*. The byte DFA already drops states that cannot reach acceptance
at all. When some byte the pattern needs has no single-byte token (SmolLM2 has none for
``\\x04``), a state could be live in bytes yet unreachable in tokens; only then is the whole
index computed up front and such states removed.

**A safe end without the whole index.** With ``n`` tokens left, a safe end allows only
tokens after which a match can still be finished in ``n - 1``. Spelling the rest one
single-byte token at a time bounds the fewest tokens from above, which one backward
search over the byte DFA gives (``spelled_distances``); only a state whose bound is over
the tokens left asks for the exact distances (``finishes_within``).
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property, partial
from itertools import repeat
from threading import RLock

import numpy as np

from fsmviz.arrays import runs
from fsmviz.automaton.bytedfa import ByteDfa, to_bytes
from fsmviz.automaton.dfa import Dfa, compile_regex
from fsmviz.automaton.graph import UNREACHABLE, backward_distances
from fsmviz.cache import BoundedCache, OwnedCache
from fsmviz.errors import ExplainedError, InputError
from fsmviz.tokens.fast import dawg
from fsmviz.tokens.fast.classwalk import byte_classes
from fsmviz.tokens.fast.closedsets import ascii_closed_words, entered_closed_words, looped_words
from fsmviz.tokens.fast.firstbytes import few_first_words
from fsmviz.tokens.fast.knownloops import LoopPairs, known_loops
from fsmviz.tokens.fast.levelwalk import levels_of
from fsmviz.tokens.fast.packwalk import packed_vocab
from fsmviz.tokens.fast.readwalk import readable_pairs
from fsmviz.tokens.fast.rowwalk import RowWalker, alone_words, merge_at
from fsmviz.tokens.fast.searchwords import search_words
from fsmviz.tokens.fast.successors import (
    WIDE,
    BytePartitions,
    closure_pairs,
    distinct_pairs,
    edge_counts,
    warm_classes,
)
from fsmviz.tokens.trie import TrieLists, VocabTrie, trie_of
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["IndexTooLarge", "TokenIndex", "build_index", "packed", "warm"]

CLOSURE_SECONDS = 5.0
"""CPU time of the walking thread (``time.thread_time``: a busy machine slows the wall
clock, not this) allowed for walking the whole index (all reachable states), which safe ends and
the doctor's token checks need. Thousands of states that each allow tens of thousands of
tokens and tell bytes apart each in its own way could otherwise take minutes (a counted
repeat like ``[a-z ]{2000,}``, 2,001 states alike, takes under a second)."""
PAIR_BUDGET = 100_000
SHARING = 8
"""Three ways to walk the whole index. Where few (token prefix, state) pairs survive
(digits: SmolLM2 spells numbers digit by digit) they are walked one by one, as rows are.
Past ``PAIR_BUDGET`` pairs the walk starts over: by node sets
(``fsmviz.tokens.fast.successors``) when
at least ``SHARING`` wide states share each byte partition on average
(``BytePartitions.sharing``; the 927 string states of a 22-field schema), otherwise over
the vocabulary's DAWG (``fsmviz.tokens.fast.dawg``) when there are at most ``dawg.MAX_STARTS``
states, else the wide states over the DAWG (``dawg.MAX_STARTS`` a walk) and the others pair
by pair. A pattern with a state that loops on a wide class
(an e-mail pattern's ``[a-z0-9…]+``: long tokens walk deep, and its 7 states all differ)
goes to the DAWG at once, without asking whether its partitions are shared
(``BytePartitions.of``: ~0.7 ms for the 56 states of an ORCID search); where they are, the
DAWG is no slower (``(\\w+,){8}\\w+``: 1.5 ms where the node sets took 4.2)."""
KEPT_ENTRIES = 4_000_000
"""Row entries (token, target) kept, ~32 MB; past it a row is made again each time it is
asked for (successor sets are always kept)."""
BITMASKS_KEPT = 1_024
"""Packed masks kept per index (``TokenIndex.bitmask``): 6 kB each for 49k tokens, so at
most ~6 MB; past it the oldest made is dropped (made again from its kept row if asked)."""


class IndexTooLarge(ExplainedError):
    """Walking every state of this pattern's index would take too long."""


@dataclass(frozen=True)
class Row:
    """One state's row: its outgoing tokens (sorted ids, EOS excluded) and the state each
    leads to; ``words``, the tokens packed (``packed``), where the walk had them so. (In
    this module "row" always means this.)"""

    tokens: np.ndarray
    targets: np.ndarray
    words: np.ndarray | None = field(default=None, repr=False, compare=False)

    def target_of(self, token_id: int) -> int | None:
        i = int(np.searchsorted(self.tokens, token_id))
        if i < len(self.tokens) and self.tokens[i] == token_id:
            return int(self.targets[i])
        return None

    def into(self, live: np.ndarray) -> Row:
        """Only the tokens leading to states where ``live`` is True."""
        keep = live[self.targets]
        return Row(self.tokens[keep], self.targets[keep])


@dataclass(eq=False)
class TokenIndex:
    """Token-level view of a pattern over one vocabulary: for each state, which tokens may
    come next and where each one leads. This is what masks the model's logits at each step.

    A token is allowed in a state when the DFA can read all of its bytes from there; the
    state it leaves the DFA in is the next state. For ``(ab)+1?`` over five toy tokens::

        tokens   0:"a"  1:"b"  2:"ab"  3:"1"  4:<eos>

        state 0 ──"a"──▶ 1 ──"b"──▶ 2*  ──"1"──▶ 3*
          └────"ab"────────────────▶ 2*  (and from 2: "a" ▶ 1, "ab" ▶ 2)

    >>> from fsmviz import Vocabulary, build_index
    >>> vocab = Vocabulary.from_strings(["a", "b", "ab", "1"], eos_token="<eos>")
    >>> index = build_index("(ab)+1?", vocab)
    >>> index.allowed_tokens(index.initial_state).tolist()      # "a" or "ab"; never "b"
    [0, 2]
    >>> index.next_state(0, 2), index.next_state(0, 1)          # "ab" matches; "b" cannot start
    (2, None)
    >>> index.allowed_tokens(2).tolist()     # after "ab": more, a "1", or end (EOS, id 4)
    [0, 2, 3, 4]
    >>> index.is_accepting(2), index.is_accepting(1)
    (True, False)

    States are byte-DFA states: ``0 .. dfa.num_states-1`` are the drawn DFA's states, larger
    ones sit inside a multi-byte character (a token may end halfway through "日"). Rows are
    walked when a state is first asked for, so the first token never waits for the whole
    index. Thread-safe: rows and successor sets are filled in under a lock."""

    dfa: Dfa
    byte_dfa: ByteDfa
    vocab: Vocabulary
    trie: VocabTrie = field(repr=False)
    _rows: dict[int, Row] = field(default_factory=dict, repr=False)
    _kept_entries: int = field(default=0, repr=False)  # tokens in ``_rows``' rows
    _lock: RLock = field(default_factory=RLock, repr=False)
    _states: tuple[int, ...] | None = field(default=None, repr=False)
    _distances: np.ndarray | None = field(default=None, repr=False)
    _spelled: np.ndarray | None = field(default=None, repr=False)
    _successors: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    _live: np.ndarray | None = field(default=None, repr=False)  # set when pruned
    _too_large: IndexTooLarge | None = field(default=None, repr=False)
    _byte_partitions: BytePartitions | None = field(default=None, repr=False)
    _bitmasks: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    _loop_pairs: LoopPairs | None = field(default=None, repr=False)  # ``_loop_words``'

    initial_state: int = 0

    def __post_init__(self) -> None:
        if not _byte_liveness_is_token_liveness(self.byte_dfa, self.trie):
            _prune_token_dead_states(self)

    # --- the contract -------------------------------------------------------------------

    def allowed_tokens(self, state: int) -> np.ndarray:
        """Token ids allowed in ``state`` (sorted); EOS is among them exactly when the
        state accepts."""
        tokens = self.row(self._known(state)).tokens
        return with_eos(tokens, self.vocab.eos_token_id) if self.is_accepting(state) else tokens

    def next_state(self, state: int, token_id: int) -> int | None:
        """The state after ``token_id``, or None if it is not allowed. EOS keeps an
        accepting state where it is."""
        if _known_token(self, token_id) == self.vocab.eos_token_id:
            return state if self.is_accepting(state) else None
        row = self._rows.get(self._known(state))
        if row is None and self._live is None:  # the token's bytes, not the whole row
            return _token_target(self, state, token_id)
        return self.row(state).target_of(token_id)

    def is_accepting(self, state: int) -> bool:
        return bool(self.byte_dfa.accepting[self._known(state)])

    def bitmask(self, state: int) -> np.ndarray:
        """``allowed_tokens(state)`` packed as llguidance and xgrammar pack it: int32 words,
        ``ceil(len(vocab) / 32)`` of them, bit ``i % 32`` of word ``i // 32`` set when token
        ``i`` is allowed. Made once per state and kept (``BITMASKS_KEPT`` per index), so a
        step's mask costs a lookup; read-only (copy it to change it).

        >>> from fsmviz import Vocabulary, build_index
        >>> vocab = Vocabulary.from_strings(["a", ".", ".2", "1"], eos_token="</s>")
        >>> index = build_index(r"[0-9]+\\.[0-9]+", vocab)
        >>> [int(t) for t in index.allowed_tokens(1)], index.bitmask(1)  # tokens 1, 2, 3
        ([1, 2, 3], array([14], dtype=int32))
        """
        words = self._bitmasks.get(state)
        if words is None:
            with self._lock:  # a plain dict: a BoundedCache's miss costs ~10 µs of locks
                words = self._bitmasks.get(state)
                if words is None:
                    words = self._bitmasks[state] = _packed(self, self._known(state))
                    if len(self._bitmasks) > BITMASKS_KEPT:
                        del self._bitmasks[next(iter(self._bitmasks))]  # the oldest made
        return words

    @property
    def states(self) -> tuple[int, ...]:
        """Every state a generation can reach from the initial state (walks them all)."""
        if self._states is None:
            self._states = _close(self)
        return self._states

    def _known(self, state: int) -> int:
        """``state`` itself, once checked to be one of this index's states: numpy would
        wrap -1 to the last state and answer for it, silently."""
        if not 0 <= state < self.byte_dfa.num_states:
            raise InputError(
                f"state {state} is not a state of this index: states run from 0 to "
                f"{self.byte_dfa.num_states - 1} (index.states lists the reachable ones)"
            )
        return state

    # --- beyond the contract ------------------------------------------------------------

    def row(self, state: int) -> Row:
        """The row of ``state`` (its tokens and where each leads), computed on first use
        (``rowwalk.RowWalker``: a state reading many bytes over the class trie, one pass
        over tokens spelled by byte class; others over the byte trie with chains)."""
        row = self._rows.get(state)
        if row is None:
            with self._lock:
                row = self._rows.get(state)
                if row is None:
                    row = Row(*self._walker.walk(state))
                    if self._live is not None:  # pruned: tokens into token-dead states are gone
                        row = row.into(self._live)
                    if self._kept_entries < KEPT_ENTRIES:
                        self._rows[state] = row
                        self._kept_entries += len(row.tokens)
        return row

    @cached_property
    def _walker(self) -> RowWalker:
        """What makes this index's rows and packed masks (``rowwalk.RowWalker``)."""
        return RowWalker(self.byte_dfa, self.trie, len(self.vocab), self.dfa)

    def successors(self, state: int) -> np.ndarray:
        """The distinct states the tokens of ``state`` lead to (sorted)."""
        found = self._successors.get(state)
        if found is None:
            self._walk_successors([state])
            found = self._successors[state]
        return found

    def allowed_count(self, state: int) -> int:
        return len(self.row(state).tokens) + int(self.is_accepting(state))

    def token_distances(self) -> np.ndarray:
        """Fewest tokens from each state to an accepting state (0 when accepting;
        ``UNREACHABLE`` when there is none). What a safe end needs: with ``n`` tokens left,
        only tokens leading to a state at distance ``<= n - 1`` can still finish in time."""
        if self._distances is None:
            states = self.states
            goals = [s for s in states if self.is_accepting(s)]
            self._distances = backward_distances(
                self.byte_dfa.num_states, self.successors, goals, nodes=states
            )
        return self._distances

    def finishes_within(self, states: int | np.ndarray, left: int) -> np.ndarray:
        """Whether a match can still be completed from each of ``states`` in at most
        ``left`` tokens: ``token_distances()[states] <= left``, without walking the whole
        index when it need not. Spelling the rest of a match one single-byte token at a
        time (``spelled_distances``) bounds the fewest tokens from above; where that bound
        is within ``left`` the answer is yes, and only a state beyond it asks for the exact
        distances (the whole index, once). A safe end with 64 tokens to go and an e-mail
        pattern (a match is at most a dozen bytes away) never walks the whole index; it
        does when a run comes close to its last token without a match. May raise
        ``IndexTooLarge`` (only then)."""
        if self._distances is not None:
            return self._distances[states] <= left
        fits = self.spelled_distances()[states] <= left
        if np.all(fits):
            return fits
        return self.token_distances()[states] <= left

    def spelled_distances(self) -> np.ndarray:
        """Fewest single-byte tokens from each state to a match (``UNREACHABLE`` where
        they cannot spell one): an upper bound on ``token_distances``, found in one
        backward search over the byte DFA (no vocabulary walk)."""
        if self._spelled is None:
            self._spelled = self.byte_dfa.distances(self.trie.single_byte_tokens)
        return self._spelled

    def prepare_safe_end(self) -> None:
        """Make ``finishes_within`` ready for a generation that ends safely (cheap: the
        exact distances wait until a state needs them). Raises ``IndexTooLarge`` when the
        index is already known to be too large for a safe end."""
        if self._too_large is not None:
            raise self._too_large
        self.spelled_distances()

    def is_char_state(self, state: int) -> bool:
        """Whether ``state`` is a state of the drawn DFA (not inside a character)."""
        return state < self.byte_dfa.num_char_states

    # --- construction -------------------------------------------------------------------

    def _walk_successors(self, states: list[int], deadline: float | None = None) -> None:
        """Find the successor sets of ``states`` not yet known, in one walk: a small DFA's
        in Python (``_small_successors``), else pair by pair, over node sets, or over the
        DAWG (``PAIR_BUDGET``, ``SHARING``). Past ``deadline`` raises ``IndexTooLarge``
        (and keeps the verdict)."""
        with self._lock:
            todo = [s for s in dict.fromkeys(states) if s not in self._successors]
            small = _small_successors(self, todo) if todo else None
            if small is not None:
                _keep_lists(self, todo, small)
            elif todo:
                check = None if deadline is None else partial(_check_time, self, deadline)
                _keep_pairs(self, todo, *_successor_pairs(self, todo, check))

    def _partitions(self) -> BytePartitions:
        if self._byte_partitions is None:
            self._byte_partitions = BytePartitions.of(self.byte_dfa.table, self.byte_dfa.columns)
        return self._byte_partitions


def _known_token(index: TokenIndex, token_id: int) -> int:
    """``token_id`` itself, once checked to be a token of the index's vocabulary: an id
    past the end would otherwise answer None ("not allowed") for a token that does not
    exist, and -1 would wrap to the last token."""
    if not 0 <= token_id < len(index.vocab):
        raise InputError(
            f"token_id {token_id} is not a token of this vocabulary: ids run from 0 to "
            f"{len(index.vocab) - 1}"
        )
    return token_id


def _check_time(index: TokenIndex, deadline: float) -> None:
    if time.thread_time() > deadline:
        index._too_large = IndexTooLarge(
            "the token index of this pattern is too large to walk in full: it took "
            f"more than {CLOSURE_SECONDS:g} s of CPU time",
            hint="bound long repeats lower, e.g. {1,200} rather than {2000,}",
        )
        raise index._too_large


def _prune_token_dead_states(index: TokenIndex) -> None:
    """Remove tokens leading to states that no sequence of tokens can finish."""
    reachable = _close(index)
    goals = [s for s in reachable if index.is_accepting(s)]
    far = backward_distances(
        index.byte_dfa.num_states, index._successors.__getitem__, goals, nodes=reachable
    )
    live = far != UNREACHABLE
    index._live = live
    index._rows = {state: row.into(live) for state, row in index._rows.items()}
    index._successors = {s: found[live[found]] for s, found in index._successors.items()}
    index._states = None
    index._states = _close(index)


def _close(index: TokenIndex) -> tuple[int, ...]:
    """The states reachable from the initial state, searched over successor sets.
    Every byte-DFA state's successor set is found in one walk first (a state inside a
    character that no token reaches costs next to nothing). Raises ``IndexTooLarge``
    after ``CLOSURE_SECONDS`` (and at once ever after)."""
    if index._too_large is not None:
        raise index._too_large
    deadline = time.thread_time() + CLOSURE_SECONDS
    index._walk_successors(list(range(index.byte_dfa.num_states)), deadline)
    successors, seen, todo = index._successors, {index.initial_state}, [index.initial_state]
    while todo:
        for target in successors[todo.pop()].tolist():
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return tuple(sorted(seen))


SETTLED_STATES = 64
"""Byte DFAs of at most this many states whose walk would go over the DAWG (a state
loops on many bytes: ~0.5 ms and up) first try the bounds (``_settled``)."""


def _settled(
    edges: np.ndarray, lower: np.ndarray, todo: list[int]
) -> tuple[np.ndarray, np.ndarray] | None:
    """``_successor_pairs`` without a walk, or None where some start needs one; ``edges``
    and ``lower``: the table's adjacency (``_adjacency``) over every byte and over the
    one-byte tokens' bytes.

    A start's successors lie between two bounds: the states its one-byte tokens lead
    to (each of those is a token), and the states any nonempty byte string leads to
    (every token is one). Where the two are equal, that is the set. In ``[a-z]+`` both
    states read letters into state 1 and nothing else, and every letter is a token: {1}
    for both, where the walk took ~0.5 ms to find it among 23,000 lowercase tokens.

    The upper bound of a start s is the transitive closure ``edges+[s]``, and it equals
    ``lower[s]`` exactly when ``edges[s] ⊆ lower[s]`` and ``lower[s]·edges ⊆ lower[s]``
    (by induction on a path's length; conversely ``lower[s]·edges = edges+[s]·edges ⊆
    edges+[s]``): one product, where squaring to the closure took ~6 (``https?://(...)``'s
    53 states: ~0.45 ms of a walk that then went over the DAWG all the same).

    >>> table = np.full((3, 256), -1); table[0, 97] = table[1, 97] = 1; table[2, 97] = 2
    >>> one_byte = np.zeros(256, bool); one_byte[97] = True
    >>> edges, lower = _adjacency(table), _adjacency(table[:, one_byte])
    >>> [a.tolist() for a in _settled(edges, lower, [0, 1, 2])]
    [[0, 1, 2], [1, 1, 2]]
    >>> table[1, 98] = 2  # "b" is no token: is "ab" one? only a walk can tell
    >>> _settled(_adjacency(table), lower, [0, 1, 2]) is None
    True
    """
    lower = lower[todo]
    if (edges[todo] > lower).any() or ((lower @ edges > 0) > (lower > 0)).any():
        return None
    origins, states = np.nonzero(lower)
    return origins.astype(np.int64), states.astype(np.int64)


def _adjacency(table: np.ndarray) -> np.ndarray:
    """``a[s, t]`` is 1 where some byte (column) of ``table`` leads from s to t, else 0
    (float32, to multiply): one scatter, each edge into its row's slot ``t`` and each
    missing one (-1) into a spare slot past the row's last.

    >>> _adjacency(np.array([[1, -1], [1, 0]])).tolist()
    [[0.0, 1.0], [1.0, 1.0]]
    """
    size = len(table)
    slots = np.zeros(size * (size + 1), dtype=np.float32)
    slots[(table + np.arange(0, len(slots), size + 1)[:, None]).reshape(-1)] = 1
    return slots.reshape(size, size + 1)[:, :size]


def _byte_bound(edges: np.ndarray, todo: list[int]) -> np.ndarray:
    """``dawg.byte_reach`` (the states some nonempty byte string leads each start to) by
    squaring the table's adjacency ``edges`` (``_adjacency``): at most ``SETTLED_STATES``
    states, so ~6 products of 64 × 64, where a breadth-first search per start took 2-6
    times as long (``.*(error|warning): [A-Za-z ]+``, 0.14 ms against 0.8).

    >>> edges = _adjacency(np.array([[1, -1], [1, 2], [-1, -1]]))  # 0 -a-> 1 -a-> 1 -b-> 2
    >>> _byte_bound(edges, [0, 2]).astype(int).tolist()
    [[0, 1, 1], [0, 0, 0]]
    """
    reach, count = edges, np.count_nonzero(edges)
    while True:  # reach: paths of 1..k bytes; then of 1..2k (it only grows: count it)
        reach = ((reach @ reach + reach) > 0).astype(np.float32)
        count, before = np.count_nonzero(reach), count
        if count == before:
            return reach[todo] > 0


def _successor_pairs(
    index: TokenIndex, todo: list[int], check: Callable[[], None] | None
) -> tuple[np.ndarray, np.ndarray]:
    """Every (position in ``todo``, state a token leads to), sorted: the walk chosen as
    ``PAIR_BUDGET`` and ``SHARING`` say. Where many starts read the same few bytes, over
    the readable part of the trie first (``readwalk``). Beyond ``dawg.MAX_STARTS``
    states that do not share, the wide ones (where tokens walk deep: a JSON string's) go
    over the DAWG and the rest pair by pair (``_apart``)."""
    table = index.byte_dfa.table
    edges = edge_counts(table)
    wide = edges >= WIDE
    narrow = len(todo) <= NARROW_STARTS and index.byte_dfa.byte_runs is None
    if narrow and not wide.any():  # a date's past ASCII: in Python (small ones: runs)
        found = _narrow_pairs(index.trie.lists, _LazySteps(table), todo, NARROW_WORK)
        if found is not None:
            return _as_pairs(found)

    @cache
    def shared() -> bool:  # computed where it decides the route, once
        return _shared(index, edges)

    few = len(todo) <= dawg.MAX_STARTS
    looping = _most_self_bytes(table) if few else 0  # once, for the tests below
    deep = looping >= WIDE  # over the DAWG, shared or not (``SHARING``)
    deepest = DEEP_ROUNDS if looping >= 2 else None
    walks = not deep and (deepest is None or not _runs_past(index.trie, table, todo))
    read = readable_pairs(index.trie, table, todo, check, deepest) if walks else None
    if read is not None:  # IPv6's, before the partitions are asked for (``shared``)
        return read
    if not few and not shared():
        wide_at = [k for k, state in enumerate(todo) if wide[state]]
        if wide_at and dawg.MAX_STARTS:  # (0: no walk over the DAWG, all pair by pair)
            return _apart(index, todo, wide_at, check)
    bound = None
    if deep and len(table) <= SETTLED_STATES:  # unless no walk is needed (``_settled``)
        adjacency, one_byte = _adjacency(table), index.trie.single_byte_tokens
        settled = _settled(adjacency, _adjacency(table[:, one_byte]), todo)
        if settled is not None:
            return settled
        if len(todo) * len(table) <= dawg.MAX_BOUND_CELLS:  # the bound the walk tests
            bound = _byte_bound(adjacency, todo)
    if walks:
        budget = PAIR_BUDGET if few or shared() else None
        walked = _walk(index.trie, table, todo, budget, check, deepest)
        if walked is not None:
            (origin, _, reached), _ = walked
            return distinct_pairs(origin, reached, len(table))
    if not deep and shared():
        return closure_pairs(index.trie, table, todo, index._partitions(), check)
    return dawg.dawg_successor_pairs(dawg.dawg_of(index.vocab), table, todo, check, bound)


def _shared(index: TokenIndex, edges: np.ndarray) -> bool:
    """Whether at least ``SHARING`` wide states share each byte partition on average
    (``BytePartitions.sharing``); ``edges``: each state's bytes with an edge
    (``edge_counts``). Equal partitions have equal edge counts, so the distinct counts
    among wide states bound the sharing from above: where that bound is under
    ``SHARING`` (``.*a``'s 9 wide states read 4 different numbers of bytes) no
    partition is computed (~0.15 ms for a few dozen states)."""
    wide = edges[edges >= WIDE]
    if len(wide) < SHARING or len(wide) < SHARING * len(np.unique(wide)):
        return False
    return index._partitions().sharing >= SHARING


NARROW_WORK = 300
"""Steps (a node's children or a state's edges looked at) the walk in Python
(``_narrow_pairs``) may take before it gives up for the walk in numpy: the narrow seed and
everyday patterns of ``bench/index_bench.py`` take at most 200 (a phone number, a price);
a step costs ~0.5-1 µs, where a round of the numpy walk costs ~40 µs whatever its width,
and a walk that gives up (``[a-m]+``: 20,000 steps) has spent ~0.3-0.5 ms of its ~1.3 ms."""
NARROW_STARTS = 20
"""Walks from at most this many starts may go in Python (``_narrow_pairs``): from more,
the numpy walk's rounds serve them all at once and cost less (24 starts of an IPv4
address: the same; 85 of ``(\\d{3}-){20}\\d{4}``: 1.2 ms, where the walk in Python took 2.0)."""
SMALL_WORK = 500
"""``NARROW_WORK`` of a small DFA within ASCII (``_small_successors``: its steps read off
its runs, however many its starts, at most ``bytedfa.SMALL_ASCII_STATES``). In bench
conditions (a peer's compile between builds: cold caches) its walk in Python costs less
than the numpy walk at 450-700 steps (44 starts of a keyword alternation, 451 steps: 0.74
of it; durations' 21, 459: 0.85; ``[a-f]{4}``, 713: 0.78), and a walk that gives up has
spent its steps for nothing: at 800, ``[0-9\\- ]{10,17}X?`` (1,545 steps) took 1.25-1.40
times as long; at 500, 1.00."""


_Steps = Sequence[tuple[list[tuple[int, int]], dict[int, int]]]
"""Each state's (byte, target) edges, in byte order, as a list and as a dict
(``_LazySteps``, ``_run_steps``)."""


def _small_successors(index: TokenIndex, todo: list[int]) -> list[list[int]] | None:
    """Each start's successors, sorted, where the byte DFA is small and within ASCII (its
    ``byte_runs``) and has no wide state: the walk in Python over steps read off the runs
    (``_run_steps``, ``_narrow_pairs`` within ``SMALL_WORK``), with no numpy call from the
    table to the lists (a keyword's whole index); else None."""
    byte_runs = index.byte_dfa.byte_runs
    steps = None if byte_runs is None else _run_steps(byte_runs)
    return None if steps is None else _narrow_pairs(index.trie.lists, steps, todo, SMALL_WORK)


def _keep_pairs(index: TokenIndex, todo: list[int], found: np.ndarray, targets: np.ndarray) -> None:
    """Keep the successor sets of ``todo`` from its pairs (``_successor_pairs``: position
    in ``todo``, target; sorted), less token-dead states where the index is pruned."""
    if index._live is not None:
        keep = index._live[targets]
        found, targets = found[keep], targets[keep]
    bounds = np.searchsorted(found, np.arange(len(todo) + 1)).tolist()
    for k, state in enumerate(todo):  # slices: np.split is slow for thousands
        index._successors[state] = targets[bounds[k] : bounds[k + 1]]


def _keep_lists(index: TokenIndex, todo: list[int], found: list[list[int]]) -> None:
    """Keep ``found[k]`` as the successor set of ``todo[k]`` (less token-dead states where
    the index is pruned): slices of one array, where one array a state cost a numpy call
    each."""
    if index._live is not None:
        live = index._live.tolist()
        found = [[state for state in states if live[state]] for states in found]
    flat = np.array([state for states in found for state in states], dtype=np.int64)
    at = 0
    for state, states in zip(todo, found, strict=True):
        index._successors[state] = flat[at : at + len(states)]
        at += len(states)


def _as_pairs(found: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Each start's successors (``_narrow_pairs``) as ``_successor_pairs`` gives them.

    >>> [a.tolist() for a in _as_pairs([[1, 2], [], [0]])]
    [[0, 0, 2], [1, 2, 0]]
    """
    origins = [k for k, states in enumerate(found) for _ in states]
    reached = [state for states in found for state in states]
    return np.array(origins, dtype=np.int64), np.array(reached, dtype=np.int64)


def _narrow_pairs(
    trie: TrieLists, steps: _Steps, todo: list[int], most: int
) -> list[list[int]] | None:
    """Each start's successors, sorted, by a depth-first walk over (trie node, state)
    pairs in Python (as ``rowwalk.small_row``, keeping only the distinct states reached):
    a pattern whose states each read a few bytes (``yes|no``, a date) has a few dozen live
    pairs, and numpy's fixed cost per call made that walk ~10 times slower than the
    pairs. None past ``most`` steps.

    >>> from fsmviz import Vocabulary, build_index
    >>> index = build_index("(ab)+1?", Vocabulary.from_strings(["a", "b", "ab", "1"]))
    >>> _narrow_pairs(index.trie.lists, _LazySteps(index.byte_dfa.table), [0, 2], 300)
    [[1, 2], [1, 2, 3]]
    """
    first_child, num_children, byte, token_start = trie[:4]
    per_start: list[list[int]] = []
    work = 0
    for start in todo:
        found: set[int] = set()
        stack = [(0, start)]
        while stack:
            node, at = stack.pop()
            if token_start[node] != token_start[node + 1]:
                found.add(at)
            count = num_children[node]
            if not count:
                continue
            edges = steps[at]
            work += 1 + min(count, len(edges[0]))
            if work > most:
                return None
            lo = first_child[node]
            if count <= len(edges[0]):
                row = edges[1]
                stack += [(c, row[byte[c]]) for c in range(lo, lo + count) if byte[c] in row]
                continue
            hi = lo + count
            for b, target in edges[0]:
                c = bisect_left(byte, b, lo, hi)
                if c < hi and byte[c] == b:
                    stack.append((c, target))
        per_start.append(sorted(found))
    return per_start


class _LazySteps(dict[int, tuple[list[tuple[int, int]], dict[int, int]]]):
    """``steps[state]``: the (byte, target) edges of ``state``, as a list and as a dict,
    made from ``table`` when first asked for (a walk from a few starts meets a few of many
    states); a kept state's is a plain dict lookup."""

    def __init__(self, table: np.ndarray) -> None:
        super().__init__()
        flat = table.reshape(-1)
        self.width = table.shape[1]
        cells = np.flatnonzero(flat >= 0)  # state * width + byte, increasing
        self.targets, self.cells = flat[cells].tolist(), cells.tolist()

    def __missing__(self, state: int) -> tuple[list[tuple[int, int]], dict[int, int]]:
        cells, base = self.cells, state * self.width
        lo = bisect_left(cells, base)
        hi = bisect_left(cells, base + self.width, lo)
        pairs = [(cell - base, self.targets[i]) for i, cell in enumerate(cells[lo:hi], lo)]
        found = self[state] = (pairs, dict(pairs))
        return found


def _run_steps(byte_runs: tuple[tuple[tuple[int, int, int], ...], ...]) -> _Steps | None:
    """Every state's steps (as ``_LazySteps``) read off its runs (``ByteDfa.byte_runs``),
    or None where some state reads ``WIDE`` bytes or more (not a walk in Python).

    >>> _run_steps((((97, 98, 1), (48, 48, 0)), ()))
    [([(48, 0), (97, 1), (98, 1)], {48: 0, 97: 1, 98: 1}), ([], {})]
    >>> _run_steps((((0, WIDE - 1, 0),),)) is None
    True
    """
    steps = []
    for state_runs in byte_runs:
        pairs: list[tuple[int, int]] = []
        for lo, hi, to in state_runs:
            if lo == hi:  # a keyword's: one byte a run
                pairs.append((lo, to))
            elif len(pairs) + hi - lo >= WIDE - 1:  # wide: not expanded
                return None
            else:
                pairs += zip(range(lo, hi + 1), repeat(to))
        if len(pairs) >= WIDE:
            return None
        pairs.sort()
        steps.append((pairs, dict(pairs)))
    return steps


def _apart(
    index: TokenIndex, todo: list[int], deep: list[int], check: Callable[[], None] | None
) -> tuple[np.ndarray, np.ndarray]:
    """``_successor_pairs`` with the starts at positions ``deep`` over the DAWG, up to
    ``dawg.MAX_STARTS`` a walk, and the others pair by pair (pink_floyd_json: 18 string
    states of 129). A URL's 254 wide states (``[^:/]+``, ``[^=#&]+``: each tells a few
    bytes apart its own way) take 4 DAWG walks of ~2.5 ms, where the pair walk
    took ~0.5 s: each start's pairs span the whole vocabulary there."""
    table, vocab_dawg = index.byte_dfa.table, dawg.dawg_of(index.vocab)
    shallow = sorted(set(range(len(todo))) - set(deep))
    origins, states = [], []
    for lo in range(0, len(deep), dawg.MAX_STARTS):
        some = deep[lo : lo + dawg.MAX_STARTS]
        origin, reached = dawg.dawg_successor_pairs(
            vocab_dawg, table, [todo[k] for k in some], check
        )
        origins.append(np.asarray(some)[origin])
        states.append(reached)
    if shallow:
        (walked, _, ends), _ = _walk(index.trie, table, [todo[k] for k in shallow], None, check)
        origins.append(np.asarray(shallow)[walked])
        states.append(ends)
    return distinct_pairs(np.concatenate(origins), np.concatenate(states), len(table))


def _packed(index: TokenIndex, state: int) -> np.ndarray:
    """``bitmask``'s words: a kept row's, else those made without a row (``_unrowed``),
    else its row's, packed where its walk did not pack them; EOS's bit added where
    ``state`` accepts."""
    row = index._rows.get(state)
    words = None
    if row is None and index._live is None:
        words = _unrowed(index, state)
    if words is None:
        row = index.row(state)
        words = packed(row.tokens, len(index.vocab)) if row.words is None else row.words
    return _eos_added(index, state, words)


def _unrowed(index: TokenIndex, state: int) -> np.ndarray | None:
    """``state``'s words without its row: its block's, once the walker merged the DFA into
    its live blocks (``_merged_words``); else, where few tokens begin with its bytes, their
    walk's (``firstbytes.few_first_words``); else, where it loops on some ASCII bytes and
    every character past ASCII (``[^=]+``), the tokens spelt with those
    (``closedsets.looped_words``, kept for the loop as well); else, where the states it
    reaches all read its ASCII bytes, the tokens of those
    (``closedsets.ascii_closed_words``, kept for every such state); else, where its bytes
    lead into such states, the tokens of its first bytes and theirs
    (``closedsets.entered_closed_words``); else, where the walker would merge its DFA here
    (``rowwalk.merge_at``), its block's (``_merged_words``); else, where that merge was
    refused as its search's state after the needle's byte is alone
    (``rowwalk.alone_words``: ``ANY*(?:b.*)ANY*``'s start), the search's words over the
    DFA itself (``search_words``: the tokens of its ASCII bytes and the walk below the
    ~100 nodes leaving them, ~0.4 ms where the chain's frontier of every ``b`` cost ~0.8);
    else its chain's (``RowWalker.packed``); None where none applies."""
    walker, table = index._walker, index.byte_dfa.table
    words = _loop_words(index, state)
    if words is not None:
        return words
    if walker.merged:
        return _merged_words(index, state)
    words = few_first_words(walker.packed_vocab, index.trie, table, state, walker.reads_of(state))
    if words is None and (
        found := looped_words(walker.packed_vocab, table, state, walker.reads_of)
    ):
        loop, words = found
        words = _kept_for(index, [loop], words)
    if words is None and (
        found := ascii_closed_words(walker.packed_vocab, table, state, walker.reads_of)
    ):
        members, words = found
        words = _kept_for(index, members, words)
    if words is None:
        words = entered_closed_words(walker.packed_vocab, table, state, walker.reads_of)
    if words is None and merge_at(walker, state):
        return _merged_words(index, state)
    if words is None:  # the merge refused at ``state``: each state its own block?
        words = alone_words(walker, state)
    return walker.packed(state) if words is None else words.view(np.int32)


def _loop_words(index: TokenIndex, state: int) -> np.ndarray | None:
    """``state``'s words where it reads at least what the start of a loop every
    vocabulary keeps the mask of reads (``knownloops.LoopPairs``: ``ANY*(?:1.0)ANY*``'s
    start reads what ``ANY*``'s does), else None."""
    if index._loop_pairs is None:
        loops = known_loops(index.trie, len(index.vocab))
        index._loop_pairs = LoopPairs(loops, index.byte_dfa, index._walker.reads_of)
    words = index._loop_pairs.words(state)
    if words is None:
        return None
    words = words.view(np.int32)
    words.flags.writeable = False
    return words


def _merged_words(index: TokenIndex, state: int) -> np.ndarray | None:
    """``state``'s words once the walker merged the DFA into its live blocks (``Merged``):
    where few tokens begin with its block's bytes, their walk over the quotient
    (``few_first_words``: a block's tokens are any member's), or where the block's ASCII
    bytes close a set of blocks, those bytes' tokens and the walk below the nodes that
    leave them (``search_words``: a search's loop and the state after its needle's first
    byte), kept for every state of the block; else the block's words (``Merged.packed``,
    kept by block)."""
    merged = index._walker.merged
    block, inner = int(merged.blocks[state]), merged.walker
    if merged.made(block):  # the block's words made before: the others tried
        return merged.packed(state)
    table = inner.byte_dfa.table
    reads = inner.reads_of(block)
    words = few_first_words(inner.packed_vocab, inner.trie, table, block, reads)
    if words is None:
        words = search_words(inner.packed_vocab, inner.trie, table, block, reads)
    if words is None:
        return merged.packed(state)
    return _kept_for(index, np.flatnonzero(merged.blocks == block).tolist(), words)


def _kept_for(index: TokenIndex, members: list[int], words: np.ndarray) -> np.ndarray:
    """``words`` (uint32, from a shortcut that answers a set of states at once) as
    read-only int32 words, kept as the bitmask of each of ``members`` too (EOS's bit
    added where it accepts) while fewer than ``BITMASKS_KEPT`` are kept: those states'
    first masks are lookups."""
    words = words.view(np.int32)
    words.flags.writeable = False
    for other in members[: max(0, BITMASKS_KEPT - len(index._bitmasks))]:
        index._bitmasks.setdefault(other, _eos_added(index, other, words))
    return words


def _eos_added(index: TokenIndex, state: int, words: np.ndarray) -> np.ndarray:
    """``words`` with EOS's bit set where ``state`` accepts (a copy, read-only)."""
    if not index.byte_dfa.accepting[state]:
        return words
    eos = index.vocab.eos_token_id
    words = words.copy()
    words.view(np.uint32)[eos // 32] |= np.uint32(1 << (eos % 32))
    words.flags.writeable = False
    return words


def _token_target(index: TokenIndex, state: int, token_id: int) -> int | None:
    """The state after ``token_id``'s bytes from ``state`` (None where one falls off, or
    for a token with no bytes): ``next_state`` where the row is not made, as a caller
    that masks through ``bitmask`` never makes it.

    >>> from fsmviz import Vocabulary, build_index
    >>> index = build_index("[0-9]+", Vocabulary.from_strings(["1", "12", "a1"]))
    >>> _token_target(index, 0, 1), _token_target(index, 0, 2)
    (1, None)
    """
    if not 0 <= token_id < len(index.vocab):
        return None
    data = index.vocab.token_bytes(token_id)
    if not data:
        return None
    table = index.byte_dfa.table
    for byte in data:
        state = int(table[state, byte])
        if state < 0:
            return None
    return state


def packed(tokens: np.ndarray, size: int) -> np.ndarray:
    """Token ids as a read-only bitmask of ``ceil(size / 32)`` int32 words (bit ``i % 32``
    of word ``i // 32`` for token ``i``: the peers' layout).

    >>> packed(np.array([0, 33]), 40).tolist()
    [1, 2]
    >>> packed(np.array([31, 32]), 64).tolist(), packed(np.arange(40), 64).tolist()
    ([-2147483648, 1], [-1, 255])
    """
    if len(tokens) <= FEW_TOKENS:  # a schema key's row: OR a few bits in, word by word
        found: dict[int, int] = {}
        for token in tokens.tolist():
            found[token >> 5] = found.get(token >> 5, 0) | 1 << (token & 31)
        words = np.zeros(-(-size // 32), dtype="<u4")
        words[list(found)] = list(found.values())
        words = words.view(np.int32)
    else:
        bits = np.zeros(-(-size // 32) * 32, dtype=bool)
        bits[tokens] = True
        words = np.packbits(bits, bitorder="little").view("<i4").astype(np.int32, copy=False)
    words.flags.writeable = False
    return words


FEW_TOKENS = 32
"""Rows of at most this many tokens are packed in Python (``packed``), not through 49k
booleans."""


def with_eos(tokens: np.ndarray, eos_token_id: int) -> np.ndarray:
    """Sorted ``tokens`` with EOS in its place: an accepting state's allowed set."""
    return np.insert(tokens, int(np.searchsorted(tokens, eos_token_id)), eos_token_id)


DEEP_ROUNDS = 16
"""Rounds a pair walk from at most ``dawg.MAX_STARTS`` starts may take where a state loops
on two bytes or more (``_most_self_bytes``) before it goes over the DAWG instead: in
``\\s*\\d+\\s*`` the whitespace tokens (runs of up to 80 spaces, newlines and
tabs: ~470 tokens) keep three pairs alive for 81 rounds (~1.8 ms), where the DAWG ends each
run at once (~0.2 ms)."""


def _runs_past(trie: VocabTrie, table: np.ndarray, todo: list[int]) -> bool:
    """Whether a pair walk from ``todo`` surely lives past ``DEEP_ROUNDS`` rounds (and
    so gives up): some start reads back into itself every byte of a token longer than
    that (``_long_runs``). ``\\s*\\d+\\s*``'s whitespace loop reads SmolLM2's runs of
    up to 80 spaces: its walk took 16 rounds (~0.45 ms) to give up for the DAWG's. Only
    starts that read back the smallest byte of some run are looked at closely (a digit's
    loop reads none: ~9 us for 21 states, where comparing every loop took ~27).

    >>> from fsmviz import Vocabulary
    >>> trie = trie_of(Vocabulary.from_strings([" " * 20, "a"]))
    >>> table = np.full((2, 256), -1); table[0, [32, 9]] = 0; table[1, [97, 98]] = 1
    >>> _runs_past(trie, table, [0]), _runs_past(trie, table, [1])
    (True, False)
    """
    runs = _long_runs(trie)
    starts = np.asarray(todo)
    rows = table[starts]
    near = (rows[:, runs.firsts] == starts[:, None]).any(axis=1).nonzero()[0]
    if not len(near):
        return False
    looping = np.packbits(rows[near] == starts[near, None], axis=1, bitorder="little")
    return any(not run & ~_as_int(row) for row in looping for run in runs.sets)


def _as_int(row: np.ndarray) -> int:
    """A byte set packed little-endian (``np.packbits(..., bitorder="little")``) as one
    Python int, bit b for byte b."""
    return int.from_bytes(row.tobytes(), "little")


@dataclass(frozen=True)
class _Runs:
    """The byte sets of a vocabulary's long tokens (``_long_runs``)."""

    sets: tuple[int, ...]  # bit b: byte b is in the set
    firsts: np.ndarray  # intp: the sets' smallest bytes, each once


_LONG_RUNS: OwnedCache[_Runs] = OwnedCache(maxsize=4)


def _long_runs(trie: VocabTrie) -> _Runs:
    """The byte sets of the trie's tokens longer than ``DEEP_ROUNDS`` bytes, only the
    least of them (a set holding another is left out: a state reading every byte of it
    reads the other's): for SmolLM2, runs of one byte (spaces, dashes, newlines) and a
    few mixed ones, 11 in all. Kept per trie.

    >>> from fsmviz import Vocabulary
    >>> runs = _long_runs(trie_of(Vocabulary.from_strings(["-" * 20, "=-" * 10, "ab" * 10])))
    >>> [bin(run).count("1") for run in runs.sets], runs.firsts.tolist()
    ([1, 2], [45, 97])
    """

    def build() -> _Runs:
        found = {
            sum(1 << byte for byte in set(data))
            for data, size in zip(trie.sorted_bytes, trie.sorted_lengths.tolist(), strict=True)
            if size > DEEP_ROUNDS
        }
        least: list[int] = []
        for run in sorted(found, key=lambda bits: bits.bit_count()):
            if all(kept & ~run for kept in least):
                least.append(run)
        firsts = sorted({(run & -run).bit_length() - 1 for run in least})
        return _Runs(tuple(least), np.array(firsts, dtype=np.intp))

    return _LONG_RUNS.get_or_build(trie, "long runs", build)


def _most_self_bytes(table: np.ndarray) -> int:
    """The most bytes any state reads back into itself (a loop on ``successors.WIDE``
    bytes or more sends a walk over the DAWG; one on two or more bounds a pair walk)."""
    return int((table == np.arange(len(table))[:, None]).sum(axis=1).max(initial=0))


def _doubled(
    table: np.ndarray, usable: np.ndarray, neighbours: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> bool:
    """Whether wherever a byte that is no token has an edge, some usable byte has one to
    the same target (then leaving those bytes out changes no state's liveness).
    ``neighbours``: those bytes, and each one's nearest usable byte below and above
    (``VocabTrie.untokened_neighbours``, found once per vocabulary).

    A byte's usable neighbours are tried first, for all bytes at once: the bytes a state
    treats alike are mostly runs (SmolLM2 lacks "\\xf1" and "\\xf2", and "\\xf3" leads where
    they do; under ``.`` its missing "\\x04" goes where "\\x03" goes), and a byte no state
    reads has no edge at all; only the bytes left are compared with every usable byte,
    one by one.

    >>> usable = np.array([True, False, True, True])  # byte 1 is no token: between 0 and 2
    >>> neighbours = (np.array([1]), np.array([0]), np.array([2]))
    >>> table = np.array([[1, 1, 2, -1], [-1, 2, 2, 0]])
    >>> _doubled(table, usable, neighbours)  # as byte 0 in row 0, as byte 2 in row 1
    True
    >>> table[1, 1] = 0  # as byte 3 in row 1: found by the comparison with every byte
    >>> _doubled(table, usable, neighbours)
    True
    >>> table[1, 3] = 2  # no usable byte of row 1 leads to 0
    >>> _doubled(table, usable, neighbours)
    False
    """
    if not usable.any():  # no byte is a token: no edge may be read
        return not (table >= 0).any()
    lone, below, above = neighbours
    columns = table[:, lone]
    alike = (columns < 0) | (columns == table[:, below]) | (columns == table[:, above])
    for byte in lone[~alike.all(axis=0)].tolist():
        rows = np.flatnonzero(table[:, byte] >= 0)
        if not (table[rows][:, usable] == table[rows, byte][:, None]).any(axis=1).all():
            return False
    return True


def _read_bytes(byte_runs: tuple[tuple[tuple[int, int, int], ...], ...]) -> int:
    """The bytes some state reads (``ByteDfa.byte_runs``), bit ``b`` for byte ``b``.

    >>> bin(_read_bytes((((1, 2, 0),), ((5, 5, 1),))))
    '0b100110'
    """
    read = 0
    for state_runs in byte_runs:
        for lo, hi, _ in state_runs:
            read |= (2 << hi) - (1 << lo)
    return read


def _byte_liveness_is_token_liveness(byte_dfa: ByteDfa, trie: VocabTrie) -> bool:
    """True when every state that can reach acceptance byte by byte can also do so with
    single-byte tokens, so no state is live in bytes but dead in tokens."""
    if (
        byte_dfa.byte_runs is not None
        and not _read_bytes(byte_dfa.byte_runs) & trie.untokened_bytes
    ):
        return True  # a small DFA within ASCII reads no byte that is no token (no numpy)
    table, usable = byte_dfa.table, trie.single_byte_tokens
    if _doubled(table, usable, trie.untokened_neighbours):
        return True
    restricted = byte_dfa.live_states(usable_bytes=usable)
    # ``to_bytes`` left only edges into live states: a state is live in bytes exactly when
    # it accepts or has an edge (no second search needed).
    live = byte_dfa.accepting | (table >= 0).any(axis=1)
    return bool((restricted == live).all())


def _walk(
    trie: VocabTrie,
    table: np.ndarray,
    starts: list[int],
    budget: int | None = None,
    check: Callable[[], None] | None = None,
    deepest: int | None = None,
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], int] | None:
    """Walk every token from every start state at once.

    The frontier is three parallel arrays: a trie node, the DFA state reached by reading
    the bytes (or byte classes) on the path to that node, and which start the walk began
    in. Each round moves every pair to all children of its node, looks the child's edge
    up in the DFA table, and keeps the pairs that did not fall off. Returns the pairs that
    sit on a token-carrying node, as (start position in ``starts``, node, state reached),
    and the number of rounds; or None once more than ``budget`` pairs have been made, or
    pairs live past ``deepest`` rounds.
    ``check`` is called every round (it may raise to stop a walk that runs out of time).

    A worked example: the toy vocabulary of seed 000 and ``[0-9]+\\.[0-9]+``. From state
    0 only "1" survives the first round ("a" and "." fall off); from state 1 (after a
    digit) ".", ".2" and "1" all do: the tokens ending there are the allowed ones.

    >>> from fsmviz import Vocabulary, build_index
    >>> vocab = Vocabulary.from_strings(["a", ".", ".2", "1"], eos_token="</s>")
    >>> index = build_index(r"[0-9]+\\.[0-9]+", vocab)
    >>> (start, node, state), rounds = _walk(index.trie, index.byte_dfa.table, [0, 1])
    >>> sorted((int(s), vocab.token_text(int(index.trie.token_ids[index.trie.token_start[n]])))
    ...        for s, n in zip(start, node))
    [(0, '1'), (1, '.'), (1, '.2'), (1, '1')]
    >>> [vocab.token_text(int(t)) for t in index.allowed_tokens(1)]
    ['.', '.2', '1']
    """
    flat = table.reshape(-1)
    width = table.shape[1]
    first_child, num_children, edge, has_token = (
        trie.first_child,
        trie.num_children,
        trie.byte,
        trie.has_token,
    )
    # The first round, from the root, is one gather: the root's children are consecutive
    # nodes, and a start reads each of their bytes in its table row.
    root_children = first_child[0] + np.arange(num_children[0])
    if budget is not None and len(starts) * len(root_children) > budget:
        return None  # the first round alone makes too many pairs
    first = table[np.asarray(starts, dtype=np.intp)][:, edge[root_children]]
    origins, nodes = np.nonzero(first >= 0)
    states = first[origins, nodes]
    nodes = root_children[nodes]
    origins, nodes = origins.astype(np.int32), nodes.astype(np.int32)
    # Every round's live pairs are kept; those on a token's node are picked out at the end.
    walked_origin, walked_node, walked_state = [origins], [nodes], [states]
    rounds, made = 1, first.size
    while nodes.size:
        counts = num_children[nodes]
        ends = np.cumsum(counts, dtype=nodes.dtype)
        total = int(ends[-1])
        if total == 0:
            break
        rounds += 1
        if check is not None:
            check()
        made += total
        if (budget is not None and made > budget) or (deepest is not None and rounds > deepest):
            return None
        # Children of pair i are first_child[node_i] + 0, 1, ..., counts_i - 1.
        children = runs(first_child[nodes], counts, ends)
        reached = np.repeat(states * width, counts)
        reached += edge[children]
        reached = flat[reached]
        alive = (reached >= 0).nonzero()[0]  # by position: boolean indexing is ~2x slower
        nodes, states = children.take(alive), reached.take(alive)
        origins = origins.repeat(counts).take(alive)
        walked_origin.append(origins)
        walked_node.append(nodes)
        walked_state.append(states)
    node = np.concatenate(walked_node)
    hit = has_token[node].nonzero()[0]
    origin, state = np.concatenate(walked_origin).take(hit), np.concatenate(walked_state).take(hit)
    return (origin, node.take(hit), state), rounds


_INDEXES: BoundedCache[TokenIndex] = BoundedCache(maxsize=32)


def built_index(pattern: str, vocab: Vocabulary) -> TokenIndex | None:
    """The index of ``pattern`` over ``vocab`` if one is kept already (never builds it)."""
    return _INDEXES.peek((pattern, vocab.fingerprint))


def build_index(pattern_or_dfa: str | Dfa, vocab: Vocabulary) -> TokenIndex:
    r"""The token index of a pattern (or an already compiled DFA) over ``vocab``'s bytes.

    Cached by (pattern, vocabulary fingerprint), so every caller along a page action shares
    one index; rows are filled in lazily as states are visited. Raises ``RegexError`` for
    patterns that cannot be used, ``IndexTooLarge`` when the walk would take too long.

    >>> from fsmviz import Vocabulary, compile_regex
    >>> vocab = Vocabulary.from_strings(["1", "2", "12", "."], eos_token="<eos>")
    >>> index = build_index(r"[0-9]+\.[0-9]", vocab)
    >>> [vocab.token_text(t) for t in index.allowed_tokens(index.initial_state)]
    ['1', '2', '12']
    >>> build_index(compile_regex(r"[0-9]+\.[0-9]"), vocab) is index
    True
    """
    if not isinstance(vocab, Vocabulary):
        raise InputError(
            "build_index needs a Vocabulary (e.g. Vocabulary.bundled() or "
            f"Vocabulary.from_tokenizer(tok)), not {type(vocab).__name__}"
        )
    dfa = pattern_or_dfa if isinstance(pattern_or_dfa, Dfa) else None
    pattern = dfa.pattern if dfa is not None else pattern_or_dfa
    if not isinstance(pattern, str):
        raise InputError(f"the pattern must be a str or a Dfa, not {type(pattern).__name__}")

    def build() -> TokenIndex:
        compiled = dfa if dfa is not None else compile_regex(pattern)
        return TokenIndex(compiled, to_bytes(compiled), vocab, trie_of(vocab))

    return _INDEXES.get_or_build((pattern, vocab.fingerprint), build)


def warm(vocab: Vocabulary) -> None:
    """Build what every index over ``vocab`` shares (its byte trie, and the minimal
    automaton the whole-index walks use; ~0.5 s for 49k tokens) ahead of the first pattern,
    so a server that has just loaded its model answers the first visitor at full speed."""
    dawg.dawg_of(vocab)  # builds the trie on the way
    levels_of(trie_of(vocab))  # the first allowed set's level walk (``levelwalk``)
    trie_of(vocab).lists  # noqa: B018  (narrow rows' walk in Python: ``rowwalk.small_row``)
    trie_of(vocab).untokened_bytes  # noqa: B018  (a small DFA's liveness: ``_read_bytes``)
    trie_of(vocab).untokened_neighbours  # noqa: B018  (the liveness test's columns)
    byte_classes(trie_of(vocab), len(vocab))  # wide rows of patterns with many byte classes
    packed_vocab(trie_of(vocab), len(vocab))  # wide states' packed masks (``bitmask``)
    warm_classes(trie_of(vocab))  # ``[^\n]``, ``.``: the class trie (index, first set)
    known_loops(trie_of(vocab), len(vocab))  # a search's masks (``bitmask``: ``_loop_words``)
    _long_runs(trie_of(vocab))  # whether a pair walk surely gives up (``_runs_past``)
