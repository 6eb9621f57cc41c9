"""From regex to grammar: why balanced brackets need a stack, in numbers and pictures.

A DFA remembers only which state it is in. To check that brackets balance it must count
the open ones, one state per count: brackets nested at most ``k`` deep need ``k + 1``
states, and the regex that says so nests ``k`` groups. No finite automaton checks them
to any depth. The grammar says it in one rule whatever the depth::

    root ::= ( "(" root ")" )*

drawn as one small automaton whose middle edge *calls* ``root`` again. What is added to
the DFA is exactly a **stack**: each call pushes the place to come back to, each end of
the rule pops it. The parser's place after ``(((`` is three positions deep
(``fsmviz.grammar.place``), where the DFA for depth 3 would be in its state 3 and the DFA
for depth 2 would be dead.

    >>> brackets_regex(2)
    '(\\\\((\\\\(\\\\))*\\\\))*'
    >>> [(row.depth, row.states) for row in brackets_rows(4)]
    [(1, 2), (2, 3), (3, 4), (4, 5)]
"""

from __future__ import annotations

from dataclasses import dataclass

from fsmviz.automaton.dfa import Dfa, compile_regex
from fsmviz.grammar.network import Network, Symbol, build_network
from fsmviz.grammar.place import Chart, reader
from fsmviz.grammar.tree import Grammar
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "BRACKETS_GRAMMAR",
    "BracketsRow",
    "TerminalMaskComparison",
    "brackets_dfa",
    "brackets_regex",
    "brackets_rows",
    "compare_masks",
    "per_terminal_mask",
]

BRACKETS_GRAMMAR = 'root ::= ( "(" root ")" )*\n'
"""Balanced brackets to any depth, in GBNF: one rule."""


def brackets_regex(depth: int) -> str:
    """Balanced brackets nested at most ``depth`` deep, as a regex (each level one more
    group around the last)."""
    if depth < 0:
        raise ValueError(f"depth must be 0 or more, not {depth}")
    inner = ""
    for _ in range(depth):
        inner = rf"(\({inner}\))*"
    return inner


def brackets_dfa(depth: int) -> Dfa:
    """The minimal DFA of ``brackets_regex(depth)``."""
    return compile_regex(brackets_regex(depth))


@dataclass(frozen=True)
class BracketsRow:
    """Depth ``depth``: the regex's length and its minimal DFA's state count."""

    depth: int
    regex: str
    states: int


def brackets_rows(max_depth: int) -> list[BracketsRow]:
    """One row per depth 1..``max_depth``: the DFA grows with the depth, the grammar not."""
    return [
        BracketsRow(k, brackets_regex(k), brackets_dfa(k).num_states)
        for k in range(1, max_depth + 1)
    ]


# --- ParserLLM's method against the exact mask ----------------------------------------------


@dataclass(frozen=True)
class TerminalMaskComparison:
    """One step, two masks. ``exact``: the tokens allowed by the definition (P + token a
    prefix of a sentence; ``fsmviz.grammar.oracle``). ``per_terminal``: ParserLLM's (seed
    002): the terminals the parser may read next, one regex, and a token allowed only when
    it stays inside one terminal. ``lost``: allowed, but not by ParserLLM's method; ``terminals``
    the terminals it offered."""

    text: str
    exact: frozenset[int]
    per_terminal: frozenset[int]
    terminals: tuple[str, ...]

    @property
    def lost(self) -> frozenset[int]:
        return self.exact - self.per_terminal


def per_terminal_mask(network: Network, vocab: Vocabulary, text: str) -> TerminalMaskComparison:
    """ParserLLM's mask after ``text``: a token is allowed when, for some live parser
    position, the terminal being read (or one that may come next, through calls) can go
    on to read the token's whole text. A token that ends one terminal and begins the next
    (``":`` after a JSON key) is not: the method asks one terminal at a time. ``exact`` is
    left empty here (``compare_masks`` fills it)."""
    chart = Chart.start(network).after(text)
    starts: dict[tuple[str, object], None] = {}
    labels: dict[str, None] = {}
    first = _first_terminals(network)
    for m, s, _, arc, inner, _ in chart.sets[-1]:
        machine = network.machines[m]
        if arc >= 0:
            symbol = machine.arcs[arc].symbol
            starts[(symbol.regex or "", inner)] = None
            labels[symbol.label] = None
        elif arc == -1:
            for out in machine.outgoing[s]:
                symbols = (
                    first.get(out.symbol.rule or "", ()) if out.symbol.is_call else (out.symbol,)
                )
                for symbol in symbols:
                    read = reader(symbol.regex or "")
                    starts[(symbol.regex or "", read.initial)] = None
                    labels[symbol.label] = None
    allowed = []
    for token in range(len(vocab)):
        if vocab.is_special(token):
            continue
        try:
            piece = vocab.all_token_bytes[token].decode("utf-8")
        except UnicodeDecodeError:
            continue  # half a character: the method works on text
        if piece and any(_reads(pattern, state, piece) for pattern, state in starts):
            allowed.append(token)
    return TerminalMaskComparison(text, frozenset(), frozenset(allowed), tuple(labels))


def _reads(pattern: str, state: object, piece: str) -> bool:
    read = reader(pattern)
    for char in piece:
        state = read.step(state, char)
        if state is None:
            return False
    return True


def _first_terminals(network: Network) -> dict[str, tuple[Symbol, ...]]:
    """The terminals each rule may begin with (through calls and empty parts)."""
    from fsmviz.diagnose.grammar import first_terminals

    return first_terminals(network)


def compare_masks(grammar: Grammar, vocab: Vocabulary, text: str) -> TerminalMaskComparison:
    """ParserLLM's per-terminal mask after ``text`` beside the exact one: llguidance's
    (``fsmviz.grammar.matcher``) after the text spelled greedily in tokens, or the naive
    definition (``fsmviz.grammar.oracle``) when that spelling is not one the grammar
    allows token by token. EOS is left out of both."""
    per = per_terminal_mask(build_network(grammar), vocab, text)
    exact = _exact(grammar, vocab, text) - {vocab.eos_token_id}
    return TerminalMaskComparison(text, frozenset(exact), per.per_terminal, per.terminals)


def _exact(grammar: Grammar, vocab: Vocabulary, text: str) -> set[int]:
    from fsmviz.grammar.matcher import GrammarMatcher
    from fsmviz.grammar.oracle import naive_allowed

    matcher = GrammarMatcher(grammar, vocab)
    if all(matcher.consume(token) for token in greedy_tokens(vocab, text)):
        return {int(t) for t in matcher.allowed_tokens()}
    return {int(t) for t in naive_allowed(grammar, vocab, text.encode("utf-8"))}


def greedy_tokens(vocab: Vocabulary, text: str) -> list[int]:
    """``text`` spelled in tokens, longest first (a tokenizer's estimate, not its own).

    >>> greedy_tokens(Vocabulary.from_strings(["a", "b", "ab", "abc"]), "abcab")
    [3, 2]
    """
    pieces = {data: k for k, data in enumerate(vocab.all_token_bytes) if data}
    pieces = {data: k for data, k in pieces.items() if not vocab.is_special(k)}
    longest = max(map(len, pieces), default=1)
    data = text.encode("utf-8")
    out, at = [], 0
    while at < len(data):
        for size in range(min(longest, len(data) - at), 0, -1):
            token = pieces.get(data[at : at + size])
            if token is not None:
                out.append(token)
                at += size
                break
        else:
            raise ValueError(f"no token spells the byte {data[at]:#04x} of {text!r}")
    return out
