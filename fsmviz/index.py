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
trie (``fsmviz.trie``): a breadth-first walk over pairs (trie node, DFA state), one trie
level per round, every round a few numpy gathers over all live pairs. A branch the DFA
rejects dies with its whole subtree. Rows are computed lazily, a batch of states at a
time, so the first token's mask is ready long before the whole index would be.

**Never a dead end.** A token is allowed only if acceptance stays reachable afterwards *with
this vocabulary's tokens*. The byte DFA already drops states that cannot reach acceptance
at all. When some byte the pattern needs has no single-byte token (SmolLM2 has none for
``\\x04``), a state could be live in bytes yet unreachable in tokens; only then is the whole
index computed up front and such states removed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from threading import Lock

import numpy as np

from .bytedfa import ByteDfa, to_bytes
from .cache import BoundedCache
from .dfa import Dfa, compile_regex
from .errors import ExplainedError
from .graph import UNREACHABLE
from .trie import VocabTrie, trie_of
from .vocab import Vocabulary

__all__ = ["IndexTooLarge", "TokenIndex", "build_index"]

CLOSURE_SECONDS = 5.0
"""Time allowed for walking the whole index (all reachable states), which safe ends and
the doctor's token checks need. A long counted repeat (``[a-z ]{2000,}``: 2,001 states,
~30,000 tokens allowed in each) would otherwise take ~20 s."""
CLOSURE_CHUNK = 64
"""States walked together while closing the index: bounds the walk's working memory."""
KEPT_ENTRIES = 4_000_000
"""Row entries (token, target) kept from the closure, ~32 MB; later rows are dropped and
recomputed if a generation visits their state (their successor sets are kept)."""


class IndexTooLarge(ExplainedError):
    """Walking every state of this pattern's index would take too long."""


@dataclass(frozen=True)
class Row:
    """One state's outgoing tokens (sorted ids, EOS excluded) and the state each leads to."""

    tokens: np.ndarray
    targets: np.ndarray

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
    """Token-level view of a pattern over one vocabulary. States are byte-DFA states:
    ``0 .. dfa.num_states-1`` are the drawn DFA's states, larger ones sit inside a
    multi-byte character. Thread-safe: rows are filled in under a lock."""

    dfa: Dfa
    byte_dfa: ByteDfa
    vocab: Vocabulary
    trie: VocabTrie = field(repr=False)
    _rows: dict[int, Row] = field(default_factory=dict, repr=False)
    _lock: Lock = field(default_factory=Lock, repr=False)
    _states: tuple[int, ...] | None = field(default=None, repr=False)
    _distances: np.ndarray | None = field(default=None, repr=False)
    _successors: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    _live: np.ndarray | None = field(default=None, repr=False)  # set when pruned
    _too_large: IndexTooLarge | None = field(default=None, repr=False)

    initial_state: int = 0

    def __post_init__(self) -> None:
        if not _byte_liveness_is_token_liveness(self.byte_dfa, self.trie):
            self._prune_token_dead_states()

    # --- the contract -------------------------------------------------------------------

    def allowed_tokens(self, state: int) -> np.ndarray:
        """Token ids allowed in ``state`` (sorted); EOS is among them exactly when the
        state accepts."""
        tokens = self.row(state).tokens
        if self.is_accepting(state):
            eos = self.vocab.eos_token_id
            tokens = np.insert(tokens, int(np.searchsorted(tokens, eos)), eos)
        return tokens

    def next_state(self, state: int, token_id: int) -> int | None:
        """The state after ``token_id``, or None if it is not allowed. EOS keeps an
        accepting state where it is."""
        if token_id == self.vocab.eos_token_id:
            return state if self.is_accepting(state) else None
        return self.row(state).target_of(token_id)

    def is_accepting(self, state: int) -> bool:
        return bool(self.byte_dfa.accepting[state])

    @property
    def states(self) -> tuple[int, ...]:
        """Every state a generation can reach from the initial state (computes them all)."""
        if self._states is None:
            self._states = self._close()
        return self._states

    # --- beyond the contract ------------------------------------------------------------

    def row(self, state: int) -> Row:
        """The outgoing tokens of ``state``, computed on first use."""
        row = self._rows.get(state)
        if row is None:
            self._compute([state])
            row = self._rows[state]
        return row

    def successors(self, state: int) -> np.ndarray:
        """The distinct states the tokens of ``state`` lead to (sorted)."""
        found = self._successors.get(state)
        if found is None:
            found = self._successors[state] = np.unique(self.row(state).targets)
        return found

    def allowed_count(self, state: int) -> int:
        return len(self.row(state).tokens) + int(self.is_accepting(state))

    def mask(self, state: int) -> np.ndarray:
        """Boolean mask over the vocabulary: True where the token is allowed."""
        mask = np.zeros(len(self.vocab), dtype=bool)
        mask[self.allowed_tokens(state)] = True
        return mask

    def token_distances(self) -> np.ndarray:
        """Fewest tokens from each state to an accepting state (0 when accepting; a huge
        number when unreachable). What a safe end needs: with ``n`` tokens left, only
        tokens leading to a state at distance ``<= n - 1`` can still finish in time."""
        if self._distances is None:
            states = self.states
            predecessors: dict[int, set[int]] = {}
            for state in states:
                for target in self.successors(state).tolist():
                    predecessors.setdefault(target, set()).add(state)
            distances = np.full(self.byte_dfa.num_states, UNREACHABLE, dtype=np.int64)
            frontier = [s for s in states if self.is_accepting(s)]
            distances[frontier] = 0
            while frontier:
                following = []
                for target in frontier:
                    for state in predecessors.get(target, ()):
                        if distances[state] == UNREACHABLE:
                            distances[state] = distances[target] + 1
                            following.append(state)
                frontier = following
            self._distances = distances
        return self._distances

    def tokens_to_match(self, states: int | np.ndarray) -> np.ndarray:
        """Fewest tokens from each of ``states`` (one state id or an array of them) to an
        accepting state: 0 when accepting, ``UNREACHABLE`` when there is none. What the
        safe end asks about the states a generation may reach next."""
        return self.token_distances()[states]

    def prepare_safe_end(self) -> None:
        """Make ``tokens_to_match`` ready for a generation that ends safely; raises
        ``IndexTooLarge`` when the index is too large for a safe end."""
        self.token_distances()

    def is_char_state(self, state: int) -> bool:
        """Whether ``state`` is a state of the drawn DFA (not inside a character)."""
        return state < self.byte_dfa.num_char_states

    # --- construction -------------------------------------------------------------------

    def _compute(self, states: list[int], keep: bool = True) -> dict[int, Row]:
        """Walk ``states`` not yet known; store their rows (unless ``keep`` is False) and
        successor sets. Returns the new rows."""
        with self._lock:
            todo = sorted({s for s in states if s not in self._rows})
            if not todo:
                return {}
            rows = _walk(self.trie, self.byte_dfa.table, np.array(todo))
            if self._live is not None:  # pruned: tokens into token-dead states are gone
                rows = {state: row.into(self._live) for state, row in rows.items()}
            for state, row in rows.items():
                self._successors.setdefault(state, np.unique(row.targets))
            if keep:
                self._rows.update(rows)
            return rows

    def _close(self) -> tuple[int, ...]:
        """Breadth-first closure from the initial state. All character states are walked
        first (nearly always all reachable), then the states inside characters that tokens
        lead to, in chunks; successor sets are kept, rows while ``KEPT_ENTRIES`` allows.
        Raises ``IndexTooLarge`` after ``CLOSURE_SECONDS`` (and at once ever after)."""
        if self._too_large is not None:
            raise self._too_large
        walk = _ChunkedWalk(self, time.perf_counter() + CLOSURE_SECONDS)
        walk(list(range(self.byte_dfa.num_char_states)))
        seen = {self.initial_state}
        frontier = [self.initial_state]
        while frontier:
            walk(frontier)
            found: set[int] = set()
            for state in frontier:
                found.update(self.successors(state).tolist())
            frontier = sorted(found - seen)
            seen.update(frontier)
        return tuple(sorted(seen))

    def _prune_token_dead_states(self) -> None:
        """Remove tokens leading to states that no sequence of tokens can finish."""
        reachable = self._close()
        predecessors: dict[int, set[int]] = {}
        for state in reachable:
            for target in self.successors(state).tolist():
                predecessors.setdefault(target, set()).add(state)
        live = {s for s in reachable if self.is_accepting(s)}
        stack = list(live)
        while stack:
            for state in predecessors.get(stack.pop(), ()):
                if state not in live:
                    live.add(state)
                    stack.append(state)
        live_mask = np.zeros(self.byte_dfa.num_states, dtype=bool)
        live_mask[list(live)] = True
        self._live = live_mask
        self._rows = {state: row.into(live_mask) for state, row in self._rows.items()}
        self._successors.clear()  # found again from the pruned rows, as they are asked for
        self._states = None
        self._states = self._close()


class _ChunkedWalk:
    """Walks states for ``TokenIndex._close`` a chunk at a time, under its deadline."""

    def __init__(self, index: TokenIndex, deadline: float):
        self.index, self.deadline = index, deadline
        self.kept = sum(len(row.tokens) for row in index._rows.values())
        self.walked = 0

    def __call__(self, states: list[int]) -> None:
        index = self.index
        todo = [s for s in states if s not in index._successors]
        for at in range(0, len(todo), CLOSURE_CHUNK):
            rows = index._compute(todo[at : at + CLOSURE_CHUNK], keep=self.kept < KEPT_ENTRIES)
            self.kept += sum(len(row.tokens) for row in rows.values())
            self.walked += len(rows)
            if time.perf_counter() > self.deadline:
                widest = max((len(row.tokens) for row in rows.values()), default=0)
                index._too_large = IndexTooLarge(
                    "the token index of this pattern is too large to walk in full: "
                    f"{self.walked:,} states walked in {CLOSURE_SECONDS:.0f} s and more to go, "
                    f"with up to {widest:,} tokens allowed in a state",
                    hint="bound long repeats lower, e.g. {1,200} rather than {2000,}",
                )
                raise index._too_large


def _byte_liveness_is_token_liveness(byte_dfa: ByteDfa, trie: VocabTrie) -> bool:
    """True when every state that can reach acceptance byte by byte can also do so with
    single-byte tokens, so no state is live in bytes but dead in tokens."""
    used = (byte_dfa.table >= 0).any(axis=0)
    if not (used & ~trie.single_byte_tokens).any():
        return True
    restricted = byte_dfa.live_states(usable_bytes=trie.single_byte_tokens)
    return bool((restricted == byte_dfa.live_states()).all())


def _walk(trie: VocabTrie, table: np.ndarray, starts: np.ndarray) -> dict[int, Row]:
    """Walk every token from every start state at once; return each start's row.

    The frontier is three parallel arrays: a trie node, the DFA state reached by reading
    the bytes on the path to that node, and which start state the walk began in. Each
    round moves every pair to all children of its node, looks the child's byte up in the
    DFA table, and keeps the pairs that did not fall off. Tokens ending at a kept node are
    allowed from that start, and lead to the state reached.
    """
    flat = table.reshape(-1)
    first_child, num_children, byte, has_token = (
        trie.first_child,
        trie.num_children,
        trie.byte,
        trie.has_token,
    )
    nodes = np.zeros(len(starts), dtype=np.int32)
    states = starts.astype(np.int32)
    origins = np.arange(len(starts), dtype=np.int32)
    found_origin, found_node, found_state = [], [], []
    while nodes.size:
        counts = num_children[nodes]
        ends = np.cumsum(counts, dtype=np.int32)
        total = int(ends[-1])
        if total == 0:
            break
        # Children of pair i are first_child[node_i] + 0, 1, ..., counts_i - 1.
        children = np.repeat(first_child[nodes] - (ends - counts), counts)
        children += np.arange(total, dtype=np.int32)
        reached = np.repeat(states << 8, counts)
        reached += byte[children]
        reached = flat[reached]
        alive = reached >= 0
        nodes, states = children[alive], reached[alive]
        origins = np.repeat(origins, counts)[alive]
        hit = has_token[nodes]
        found_origin.append(origins[hit])
        found_node.append(nodes[hit])
        found_state.append(states[hit])
    origin = np.concatenate(found_origin) if found_origin else np.zeros(0, np.int32)
    node = np.concatenate(found_node) if found_node else np.zeros(0, np.int32)
    state = np.concatenate(found_state) if found_state else np.zeros(0, np.int32)
    # A node can carry several tokens (same bytes, different ids): expand through the CSR.
    per_node = trie.token_start[node + 1] - trie.token_start[node]
    if (per_node != 1).any():
        origin, state = np.repeat(origin, per_node), np.repeat(state, per_node)
        first = np.repeat(trie.token_start[node] - np.cumsum(per_node) + per_node, per_node)
        tokens = trie.token_ids[first + np.arange(int(per_node.sum()))]
    else:
        tokens = trie.token_ids[trie.token_start[node]]
    # Group by start state, tokens ascending: one sort of a packed (origin, token) key.
    stride = int(trie.token_ids.max(initial=0)) + 1
    key = origin.astype(np.int64) * stride + tokens
    order = np.argsort(key)
    tokens, state = tokens[order], state[order]
    bounds = np.searchsorted(key[order], np.arange(len(starts) + 1) * stride)
    return {
        int(start): Row(tokens[bounds[i] : bounds[i + 1]], state[bounds[i] : bounds[i + 1]])
        for i, start in enumerate(starts)
    }


_INDEXES: BoundedCache[TokenIndex] = BoundedCache(maxsize=32)


def build_index(pattern_or_dfa: str | Dfa, vocab: Vocabulary) -> TokenIndex:
    """The token index of a pattern (or an already compiled DFA) over ``vocab``. Cached by
    (pattern, vocabulary fingerprint); rows are filled in lazily as states are visited.
    Raises ``RegexError`` for patterns that cannot be used."""
    dfa = pattern_or_dfa if isinstance(pattern_or_dfa, Dfa) else None
    pattern = dfa.pattern if dfa is not None else pattern_or_dfa

    def build() -> TokenIndex:
        compiled = dfa if dfa is not None else compile_regex(pattern)
        return TokenIndex(compiled, to_bytes(compiled), vocab, trie_of(vocab))

    return _INDEXES.get_or_build((pattern, vocab.fingerprint), build)
