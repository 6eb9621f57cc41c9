"""A constraint: what the step loop and the page ask of whatever holds the output's form.

A regex (its ``TokenIndex``), a JSON Schema (compiled to a regex or to a grammar) and a
context-free grammar (llguidance's matcher beside fsmviz's Earley chart) look different
inside, but a generation asks the same few questions of each, one token at a time:

============================  ==================================================
``initial_state``             where a run starts
``allowed_tokens(state)``     the token ids allowed next (EOS where the text may end)
``bitmask(state)``            the same set packed in int32 words, as the peers pack it
``next_state(state, token)``  the state after ``token`` (advance), None if refused
``is_accepting(state)``       whether the text so far is a whole match
``shortest_completion(s)``    fewest tokens from ``s`` to a match (None: unknown)
``place(text)``               where the drawing lights up after ``text``
``accepts(text)``             the constraint's own judge of a finished text
``text``                      its source (a pattern, a grammar): ``Trace.pattern``
============================  ==================================================

``Constraint`` is that list as a ``typing.Protocol``: anything with these members is one
(``isinstance`` checks the names). A page action builds its constraint **once**, at its top
(``fsmviz.constraint(regex=..., vocab=...)``), and hands the same object down: the drawing,
the doctor, the run and every step's allowed set all read it, so nothing is compiled twice.

A worked example, a regex over a toy vocabulary (the states are the index's)::

    pattern [0-9]+\\.[0-9]      tokens: 0 "1", 1 "2", 2 "12", 3 ".", 4 "</s>" (EOS)

      state 0 --"1","2","12"--> state 1 --"."--> state 2 --"1","2"--> state 3 (accepting)
                                  ^  |
                                  +--+ "1","2","12"

>>> from fsmviz import Vocabulary
>>> vocab = Vocabulary.from_strings(["1", "2", "12", "."], eos_token="</s>")
>>> c = regex_constraint(r"[0-9]+\\.[0-9]", vocab)
>>> s = c.initial_state
>>> [vocab.token_text(int(t)) for t in c.allowed_tokens(s)], c.shortest_completion(s)
(['1', '2', '12'], 3)
>>> s = c.next_state(s, 2)                          # "12": still digits or the point
>>> [vocab.token_text(int(t)) for t in c.allowed_tokens(s)], c.is_accepting(s)
(['1', '2', '12', '.'], False)
>>> s = c.next_state(s, 3)                          # ".": one digit must follow
>>> c.next_state(s, 3) is None, c.shortest_completion(s)   # a second "." is refused
(True, 1)
>>> s = c.next_state(s, 0)                          # "1": a whole match, EOS allowed
>>> c.is_accepting(s), vocab.token_text(int(c.allowed_tokens(s)[-1])), c.accepts("12.1")
(True, '</s>', True)
>>> c.place("12."), c.bitmask(0)                    # the drawn DFA's state; tokens 0-2
(2, array([7], dtype=int32))

A grammar's constraint (``fsmviz.grammar.run.GrammarCursor``) answers the same questions
from llguidance's matcher; its state counts the tokens written (it only moves on), and its
``place`` is the parser's stack (``fsmviz.grammar.place``).

**The step loop's side.** A run asks more than the public questions (its masks as
booleans, the safe end, fast-forward, drafts, why it is stuck): ``Steering`` lists them.
A regex's steering is the index's (``fsmviz.generation.generate``); a grammar brings its
own (``fsmviz.grammar.run.GrammarRun``). The loop holds one and never subclasses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import regex

from fsmviz.automaton.dfa import Dfa, compile_regex
from fsmviz.automaton.graph import UNREACHABLE
from fsmviz.errors import InputError
from fsmviz.tokens.index import IndexTooLarge, TokenIndex, build_index
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["Constraint", "RegexConstraint", "Steering", "regex_constraint"]


@runtime_checkable
class Constraint(Protocol):
    """What the step loop and the page need of any constraint (see the module's table)."""

    text: str
    initial_state: int

    def allowed_tokens(self, state: int) -> Sequence[int] | np.ndarray: ...

    def bitmask(self, state: int) -> np.ndarray: ...

    def next_state(self, state: int, token: int) -> int | None: ...

    def is_accepting(self, state: int) -> bool: ...

    def shortest_completion(self, state: int) -> int | None: ...

    def place(self, text: str) -> Any: ...

    def accepts(self, text: str) -> bool: ...


class Steering(Protocol):
    """What one run's step loop (``generate._Run``) asks beyond ``Constraint``, per run:

    * ``opts``, ``notes``: the run's options (a safe end given up is turned off there) and
      what the trace should say about how it went; ``index``: the constraint it steers by;
    * ``allowed``, ``accepting``, ``finished``: a state's mask as booleans (None at a dead
      end), and whether it ends a match (and nothing may follow);
    * ``stuck``: why the run stops where nothing can follow (``dead_end``, ``engine_error``);
    * ``safe``: the mask narrowed to what can still finish in time (the safe end);
    * ``choose``: the token drawn with ``draw(mask)``, redrawn where it cannot finish;
    * ``advance``: the state after a sampled token (and bytes kept, for an overshoot);
    * ``forced``, ``drafts``: tokens written unasked (fast-forward), tokens tried ahead;
    * ``overshoots``: how many overshoot tokens a state has (``overshoot`` runs only).
    """

    opts: Any
    notes: list[str]
    index: Any

    def allowed(self, state: int) -> np.ndarray | None: ...

    def accepting(self, state: int) -> bool: ...

    def finished(self, state: int) -> bool: ...

    def stuck(self) -> str: ...

    def safe(self, allowed: np.ndarray, state: int, done: int) -> np.ndarray: ...

    def choose(self, draw: Callable[[np.ndarray], int], mask: np.ndarray, done: int) -> int: ...

    def advance(self, state: int, token: int) -> tuple[int | None, int | None]: ...

    def forced(self, state: int, budget: int) -> list[tuple[int, int]]: ...

    def drafts(self, context: list[int], state: int, budget: int) -> list[int]: ...

    def overshoots(self, state: int) -> int | None: ...


@dataclass(frozen=True, eq=False)
class RegexConstraint:
    """A regex as a ``Constraint``: its character DFA (what is drawn) and its token index
    over one vocabulary (what masks), compiled once (``regex_constraint``). Everything of
    the index stays reachable: ``.index`` is the ``TokenIndex`` itself."""

    pattern: str
    dfa: Dfa
    index: TokenIndex

    @property
    def text(self) -> str:
        return self.pattern

    @property
    def initial_state(self) -> int:
        return self.index.initial_state

    @property
    def vocab(self) -> Vocabulary:
        return self.index.vocab

    def allowed_tokens(self, state: int) -> np.ndarray:
        return self.index.allowed_tokens(state)

    def bitmask(self, state: int) -> np.ndarray:
        return self.index.bitmask(state)

    def next_state(self, state: int, token: int) -> int | None:
        return self.index.next_state(state, token)

    def is_accepting(self, state: int) -> bool:
        return self.index.is_accepting(state)

    def shortest_completion(self, state: int) -> int | None:
        """Fewest tokens from ``state`` to a match (0 when it accepts); None when none can
        be reached, or the index is too large to know (``IndexTooLarge``)."""
        try:
            far = int(self.index.token_distances()[self.index._known(state)])
        except IndexTooLarge:
            return None
        return None if far >= UNREACHABLE else far

    def place(self, text: str) -> int | None:
        """The drawn DFA's state after ``text`` (characters), None off the pattern."""
        state: int | None = self.dfa.initial
        for char in text:
            state = self.dfa.step(state, char)
            if state is None:
                return None
        return state

    def accepts(self, text: str) -> bool:
        """``regex.fullmatch``, as the seeds judge (the DFA's verdict where that times out)."""
        try:
            return regex.fullmatch(self.pattern, text, timeout=0.25) is not None
        except (TimeoutError, regex.error):
            return self.dfa.accepts(text)


def regex_constraint(pattern: str | Dfa, vocab: Vocabulary) -> RegexConstraint:
    """``pattern`` compiled once for ``vocab``: one ``compile_regex``, one ``build_index``
    (given its DFA, so the index does not ask for it again). Raises ``RegexError`` for a
    pattern that cannot be used, ``InputError`` without a ``Vocabulary``."""
    if not isinstance(vocab, Vocabulary):
        raise InputError(
            "a regex constraint needs a Vocabulary (e.g. Vocabulary.bundled()), not "
            f"{type(vocab).__name__}"
        )
    dfa = pattern if isinstance(pattern, Dfa) else compile_regex(pattern)
    return RegexConstraint(dfa.pattern, dfa, build_index(dfa, vocab))
