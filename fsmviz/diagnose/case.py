"""One case for the doctor: a pattern with its token index and vocabulary, and the facts
that several findings draw on (example texts, the pattern's pieces, its loops and their
fixes, the cycles of the token graph), each computed once and only when first needed."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from functools import cached_property

from fsmviz.diagnose.examples import completion, example_prefixes
from fsmviz.diagnose.finding import Finding
from fsmviz.diagnose.fragments import PatternNode, parse_pieces
from fsmviz.diagnose.loops import Loop, LoopFix, bounded_fix, cycle_ids, find_loops, loop_for, sccs
from fsmviz.diagnose.rewrites import rewrite
from fsmviz.diagnose.text import after, states_summary
from fsmviz.tokens.index import TokenIndex
from fsmviz.tokens.vocab import Vocabulary


class Case:
    """Everything the findings need about one (pattern, vocabulary), computed lazily.

    With ``suggests=False`` the findings come without their rewrites: ``fixes`` are all
    None and ``rewrite`` answers None. ``held`` re-checks a suggestion that way, since it
    needs only each finding's kind and place, and compiling the rewrites of a rewrite cost
    up to a minute for a 70-character pattern (each candidate is a DFA build)."""

    def __init__(
        self, pattern: str, index: TokenIndex, vocab: Vocabulary, *, suggests: bool = True
    ):
        self.pattern = pattern
        self.index = index
        self.dfa = index.dfa
        self.vocab = vocab
        self.suggests = suggests

    # --- the character DFA: example texts -------------------------------------------------

    @cached_property
    def prefixes(self) -> list[str]:
        return example_prefixes(self.dfa)

    @cached_property
    def char_distances(self) -> list[int]:
        return self.dfa.distances()

    def completion(self, state: int) -> str:
        """A shortest readable text from ``state`` to a match."""
        return completion(self.dfa, self.char_distances, state)

    def where(self, state: int) -> str:
        """``after `a@a.` (state 4)``."""
        if state >= self.dfa.num_states:
            return f"inside a multi-byte character (state {state})"
        return f"{after(self.prefixes[state])} (state {state})"

    def states(self, states: Iterable[int]) -> str:
        """A few states by number; many by what they share (``text.states_summary``)."""
        return states_summary(list(states), self.prefixes)

    @cached_property
    def char_cycles(self) -> dict[int, int]:
        """Each DFA state on a cycle -> an id of its strongly connected component."""
        transitions = self.dfa.transitions

        def successors(state: int) -> Iterable[int]:
            return transitions[state].values()

        return cycle_ids(sccs(self.dfa.states, successors), successors)

    # --- the pattern's text ---------------------------------------------------------------

    @cached_property
    def nodes(self) -> list[PatternNode]:
        """Every piece of the pattern text (``fragments``), outermost first."""
        return parse_pieces(self.pattern)

    def text(self, node: PatternNode) -> str:
        return self.pattern[node.start : node.end]

    def locate(self, finding: Finding, node: PatternNode | None) -> Finding:
        """``finding`` with ``node`` as its fragment and span (unchanged without a node)."""
        if node is None:
            return finding
        return dataclasses.replace(finding, fragment=self.text(node), span=(node.start, node.end))

    # --- loops ----------------------------------------------------------------------------

    @cached_property
    def repeats(self) -> list[PatternNode]:
        """The pattern's unbounded repeats."""
        return [n for n in self.nodes if n.kind == "repeat" and n.hi is None]

    @cached_property
    def loops(self) -> list[Loop]:
        return find_loops(self.pattern, self.dfa, self.repeats, self.prefixes, self.char_distances)

    @cached_property
    def fixes(self) -> dict[Loop, LoopFix | None]:
        return {
            loop: bounded_fix(self.pattern, self.dfa, loop, self.loops, self.repeats)
            if self.suggests
            else None
            for loop in self.loops
        }

    @cached_property
    def run_fixes(self) -> dict[Loop, LoopFix | None]:
        """A run's fixes: each loop's repeat bounded with every twin of it (``twins``)."""
        return {
            loop: bounded_fix(self.pattern, self.dfa, loop, self.loops, self.repeats, twins=True)
            for loop in self.loops
        }

    def rewrite(self, edits: Iterable[tuple[PatternNode, str]]) -> str | None:
        """The pattern with ``edits`` applied, if usable (``rewrites.rewrite``); None
        without ``suggests``."""
        return rewrite(self.pattern, edits) if self.suggests else None

    def loop_for(self, states: Iterable[int]) -> Loop | None:
        """The innermost loop holding all of ``states``."""
        return loop_for(self.loops, states)

    # --- the token graph ------------------------------------------------------------------

    @cached_property
    def token_successors(self) -> dict[int, list[int]]:
        index = self.index
        return {s: index.successors(s).tolist() for s in index.states}

    @cached_property
    def token_sccs(self) -> list[list[int]]:
        """Strongly connected components of the token graph, in reverse topological order."""
        return sccs(self.index.states, self.token_successors.__getitem__)

    @cached_property
    def token_cycles(self) -> dict[int, int]:
        """Each index state on a cycle -> an id of its strongly connected component."""
        return cycle_ids(self.token_sccs, self.token_successors.__getitem__)

    def tokens_needed(self, state: int) -> int:
        """Fewest tokens from ``state`` to a match; ``UNREACHABLE`` when there is none."""
        return int(self.index.token_distances()[state])

    @cached_property
    def eos_text(self) -> str:
        return self.vocab.token_text(self.vocab.eos_token_id)
