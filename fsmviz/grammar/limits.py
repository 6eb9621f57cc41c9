"""How much work a grammar can force, measured before anything is expanded.

A grammar is short text that can stand for very long text. Thirty-four bytes,
``root ::= (("a"{1000}){1000}){1000}``, have exactly one sentence: a billion ``a``. Twenty-five
rules ``rN ::= rN-1 rN-1`` double the length twenty-four times (sixteen million). Nothing
here may *build* such text, and a run could never write it, so ``compile_grammar`` refuses
a grammar whose pieces cannot finish within a bound, with the rule that crosses it.

Everything is counted, never spelled out:

* **the shortest text of each rule**, as a number: a literal's length, one character for
  a class, a regex's fewest characters, a sequence's sum, a choice's least, a repeat's
  ``min`` times its item. Rules call each other (maybe in cycles), so the lengths are a
  least fixed point, found as Knuth (1977) generalised Dijkstra's shortest paths: the rule
  with the least tentative length is final, and only the rules that use it are looked at
  again. Numbers saturate at ``_HUGE``, so ``{1000}`` nested forty deep costs nothing;
* **nesting**: how deep groups and repeats sit inside each other (the readers and every
  walk of the tree recurse, so depth is bounded: ``MAX_NESTING``);
* **the expanded size**: the symbols of the productions the Earley recognizer flattens the
  grammar into (``fsmviz.grammar.productions``: a literal is one symbol per character,
  ``x{m,n}`` is ``m`` copies of ``x`` and ``n - m`` helper rules);
* **the written-out repeats**: the positions counted repeats write out, nested ones
  multiplying, as the regex compiler counts them (the drawing and the doctor compile such
  parts of a rule as regex terminals).

>>> from fsmviz.grammar.gbnf import parse_gbnf
>>> size = measure(parse_gbnf('root ::= (("a"{1000}){1000}){1000}'))
>>> size.shortest["root"], size.nesting
(1000000000, 3)
>>> check_size(parse_gbnf('root ::= (("a"{1000}){1000}){1000}'))
Traceback (most recent call last):
...
fsmviz.grammar.errors.GrammarError: the rule 'root' cannot finish in fewer than \
1,000,000,000 characters; fsmviz takes rules that can finish within 100,000 (line 1, \
column 1). Hint: lower the repeat counts, or make fewer rules use a rule twice over

(``grammar_budget``, the doctor's finding, then says whether a sentence fits the tokens
of a run; this module only keeps the work bounded: milliseconds and kilobytes.)
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

from fsmviz.automaton.dfa import compile_regex
from fsmviz.automaton.graph import UNREACHABLE
from fsmviz.grammar.as_regex import node_regex
from fsmviz.grammar.errors import GrammarError
from fsmviz.grammar.nodes import (
    Alt,
    CharSet,
    GrammarTree,
    Literal,
    Node,
    RegexTerm,
    Repeat,
    RuleRef,
    Seq,
    children,
)

__all__ = [
    "MAX_EXPANDED_SYMBOLS",
    "MAX_NESTING",
    "MAX_REPEATED_POSITIONS",
    "MAX_SHORTEST_CHARS",
    "GrammarSize",
    "check_nesting",
    "check_size",
    "check_text",
    "measure",
    "shortest_lengths",
]

MAX_SHORTEST_CHARS = 100_000
"""The longest that any rule's shortest text may be, in characters. A run writes at most
1,024 tokens (about 4,000 characters of English); a rule that cannot finish in 100,000 could
never be written, and its text (which the shortest completion and the doctor read) would
cost memory for nothing."""
MAX_NESTING = 100
"""Groups and repeats inside each other (``((("a")))``, ``"a"{2}{2}{2}``) at most."""
MAX_REPEATED_POSITIONS = 25_000
"""Characters and pieces written out by counted repeats, all of them together, counted as
the regex compiler counts a pattern's positions (nested repeats multiply: ``("ab"{10}){3}``
is 60). The page draws, and the doctor checks, such parts of a rule as one regex terminal
each (``fsmviz.grammar.network``); this keeps their DFAs together within what one regex
may cost (``fsmviz.automaton.dfa.MAX_POSITIONS``)."""
MAX_EXPANDED_SYMBOLS = 250_000
"""Symbols of the flattened productions at most (a 50,000-character grammar of plain
literals has 50,000; ``"a"{1000}`` written 250 times reaches the bound)."""

_HUGE = 1 << 62
"""Lengths saturate here (a sentence longer than any memory)."""
_SURROGATES = (0xD800, 0xDFFF)


@dataclass(frozen=True)
class GrammarSize:
    """What a grammar can force: ``shortest`` (each rule's shortest text, in characters;
    None when it cannot finish; saturated at 2**62), ``nesting`` (the deepest groups and
    repeats) and ``expanded`` (symbols of the flattened productions)."""

    shortest: dict[str, int | None]
    nesting: int
    expanded: int
    repeated: int = 0
    """Positions written out by counted repeats (``MAX_REPEATED_POSITIONS``)."""


def measure(
    grammar: GrammarTree, regex_length: Callable[[RegexTerm], int | None] | None = None
) -> GrammarSize:
    """``grammar``'s size, counted without expanding anything (see the module's
    docstring). ``regex_length`` gives a ``/regex/``'s fewest characters (default: its
    DFA's, via ``compile_regex``); None when it matches nothing."""
    depth = max((nesting(rule.body) for rule in grammar.rules), default=0)
    if depth > MAX_NESTING:
        return GrammarSize({}, depth, 0)
    shortest = shortest_lengths(grammar, regex_length or _regex_length)
    expanded = sum(_expanded(rule.body) for rule in grammar.rules)
    expanded += sum(_expanded(piece) for piece in grammar.ignore)
    repeated = sum(_repeated(rule.body) for rule in grammar.rules)
    repeated += sum(_repeated(piece) for piece in grammar.ignore)
    return GrammarSize(shortest, depth, expanded, repeated)


def check_nesting(grammar: GrammarTree) -> None:
    """A ``GrammarError`` naming the first rule whose groups and repeats nest deeper than
    ``MAX_NESTING`` (checked before anything walks the tree by recursion)."""
    for rule in grammar.rules:
        depth = nesting(rule.body)
        if depth > MAX_NESTING:
            raise GrammarError(
                f"the rule {rule.name!r} nests groups and repeats {depth:,} deep; fsmviz "
                f"takes at most {MAX_NESTING}",
                rule.line,
                rule.column,
                "move inner groups into rules of their own",
            )
    depth = max((nesting(piece) for piece in grammar.ignore), default=0)
    if depth > MAX_NESTING:
        raise GrammarError(
            f"an %ignore nests groups and repeats {depth:,} deep; fsmviz takes at most "
            f"{MAX_NESTING}",
            None,
            None,
            "name the ignored text as a terminal and %ignore that",
        )


def check_size(
    grammar: GrammarTree, regex_length: Callable[[RegexTerm], int | None] | None = None
) -> GrammarSize:
    """``measure(grammar)``, or a ``GrammarError`` naming the rule past a bound."""
    check_nesting(grammar)
    size = measure(grammar, regex_length)
    over = [
        rule for rule in grammar.rules if (size.shortest.get(rule.name) or 0) > MAX_SHORTEST_CHARS
    ]
    if over:
        # Name the rule where the bound is crossed: one whose callees all stay within it.
        called = {rule.name: {ref.name for ref in _refs(rule.body)} for rule in over}
        names = {rule.name for rule in over}
        rule = next((r for r in over if not called[r.name] & names), over[0])
        length = size.shortest[rule.name] or 0
        shown = f"{length:,}" if length < _HUGE else "more than 4,000,000,000,000,000,000"
        raise GrammarError(
            f"the rule {rule.name!r} cannot finish in fewer than {shown} characters; "
            f"fsmviz takes rules that can finish within {MAX_SHORTEST_CHARS:,}",
            rule.line,
            rule.column,
            "lower the repeat counts, or make fewer rules use a rule twice over",
        )
    if size.expanded > MAX_EXPANDED_SYMBOLS:
        biggest = max(grammar.rules, key=lambda r: _expanded(r.body))
        raise GrammarError(
            f"the grammar expands to {size.expanded:,} symbols (its repeats written out, "
            f"{_expanded(biggest.body):,} of them in {biggest.name!r}); fsmviz takes at most "
            f"{MAX_EXPANDED_SYMBOLS:,}",
            biggest.line,
            biggest.column,
            "use * or + for long runs instead of large counted repeats",
        )
    if size.repeated > MAX_REPEATED_POSITIONS:
        biggest = max(grammar.rules, key=lambda r: _repeated(r.body))
        raise GrammarError(
            f"the grammar's counted repeats write out {size.repeated:,} characters and "
            f"pieces ({_repeated(biggest.body):,} of them in {biggest.name!r}); fsmviz takes "
            f"at most {MAX_REPEATED_POSITIONS:,}",
            biggest.line,
            biggest.column,
            "use * or + for long runs instead of large counted repeats",
        )
    return size


def check_text(grammar: GrammarTree) -> None:
    """Refuse what no text can hold: a literal or a class made only of UTF-16 surrogates
    (``"\\uD800"``, ``[\\uD800-\\uDFFF]``). UTF-8 cannot write them, so no token spells
    them, and a tokenizer refuses them outright."""
    places = [(f"the rule {r.name!r}", r.body, r.line, r.column) for r in grammar.rules]
    places += [("an %ignore", piece, None, None) for piece in grammar.ignore]
    for what, body, line, column in places:
        for node in _walk(body):
            bad = None
            if isinstance(node, Literal):
                bad = next((c for c in node.text if _is_surrogate(ord(c))), None)
            elif isinstance(node, CharSet):
                ranges = node.positive()
                if ranges and all(
                    _SURROGATES[0] <= lo and hi <= _SURROGATES[1] for lo, hi in ranges
                ):
                    bad = chr(ranges[0][0])
            if bad is not None:
                raise GrammarError(
                    f"{what} uses the code point U+{ord(bad):04X}, a UTF-16 surrogate: it is "
                    "no character of text (UTF-8 cannot write it, so no token can)",
                    line,
                    column,
                    "write the character itself (\\U0001F600 for 😀), not its two surrogate halves",
                )


def nesting(node: Node) -> int:
    """How deep groups and repeats sit in ``node`` (a walk with its own stack, so a tree
    of any depth is measured without recursion).

    >>> nesting(Repeat(Repeat(Literal("a"), 2, 2), 2, 2))
    2
    """
    deepest = 0
    stack = [(node, 0)]
    while stack:
        here, depth = stack.pop()
        if isinstance(here, (Repeat, Alt)) or (isinstance(here, Seq) and depth):
            depth += 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children(here))
    return deepest


def shortest_lengths(
    grammar: GrammarTree, regex_length: Callable[[RegexTerm], int | None]
) -> dict[str, int | None]:
    """Each rule's shortest text as a length (None: it cannot finish), saturated at
    ``_HUGE``: Knuth's generalisation of Dijkstra (see the module's docstring).

    >>> from fsmviz.grammar.gbnf import parse_gbnf
    >>> g = parse_gbnf('root ::= r2\\nr0 ::= "ab"\\nr1 ::= r0 r0\\nr2 ::= r1 r1 | r0 "x"')
    >>> shortest_lengths(g, _regex_length)
    {'root': 3, 'r0': 2, 'r1': 4, 'r2': 3}
    """
    bodies = {rule.name: rule.body for rule in grammar.rules}
    users: dict[str, set[str]] = {name: set() for name in bodies}
    for name, body in bodies.items():
        for ref in _refs(body):
            if ref.name in users:
                users[ref.name].add(name)
    final: dict[str, int] = {}
    leaves: dict[int, int | None] = {}

    def leaf(node: Node) -> int | None:
        key = id(node)
        if key not in leaves:
            leaves[key] = _leaf_length(node, regex_length)
        return leaves[key]

    heap: list[tuple[int, str]] = []
    for name, body in bodies.items():
        value = _length(body, final, leaf)
        if value is not None:
            heapq.heappush(heap, (value, name))
    while heap:
        value, name = heapq.heappop(heap)
        if name in final:
            continue
        final[name] = value
        for user in users[name]:
            if user not in final:
                again = _length(bodies[user], final, leaf)
                if again is not None:
                    heapq.heappush(heap, (again, user))
    return {name: final.get(name) for name in bodies}


def _length(node: Node, final: dict[str, int], leaf: Callable[[Node], int | None]) -> int | None:
    """The shortest text of ``node`` with the rules in ``final`` known (others: none yet)."""
    if isinstance(node, RuleRef):
        return final.get(node.name)
    if isinstance(node, Seq):
        total = 0
        for item in node.items:
            part = _length(item, final, leaf)
            if part is None:
                return None
            total = min(total + part, _HUGE)
        return total
    if isinstance(node, Alt):
        found = [v for v in (_length(o, final, leaf) for o in node.options) if v is not None]
        return min(found) if found else None
    if isinstance(node, Repeat):
        if node.min == 0:
            return 0
        part = _length(node.item, final, leaf)
        return None if part is None else min(part * node.min, _HUGE)
    return leaf(node)


def _leaf_length(node: Node, regex_length: Callable[[RegexTerm], int | None]) -> int | None:
    if isinstance(node, Literal):
        return len(node.text)
    if isinstance(node, CharSet):
        return 1 if node.positive() else None
    if isinstance(node, RegexTerm):
        return regex_length(node)
    raise TypeError(node)


def _regex_length(term: RegexTerm) -> int | None:
    dfa = compile_regex(node_regex(term) or "")
    far = dfa.distances()[dfa.initial]
    return None if far >= UNREACHABLE else far


def _expanded(node: Node) -> int:
    """Symbols ``node`` adds to the flattened productions (``Productions._symbols``): a
    literal's characters, one per class, regex or rule, a choice's options (in a helper
    rule), and a repeat's item once (a helper's when it is more than one symbol) plus its
    copies and two symbols per helper of the optional tail or the loop. Nested repeats
    *add* here (each item is flattened once), where their shortest texts multiply.

    >>> _expanded(Repeat(Repeat(Literal("a"), 1000, 1000), 1000, 1000))
    2001
    """
    total = 0
    stack = [node]
    while stack:
        here = stack.pop()
        if isinstance(here, Literal):
            total += len(here.text)
        elif isinstance(here, (CharSet, RegexTerm, RuleRef)):
            total += 1
        elif isinstance(here, Alt):
            total += 1
            stack.extend(here.options)
        elif isinstance(here, Seq):
            stack.extend(here.items)
        elif isinstance(here, Repeat):
            total += here.min + (2 if here.max is None else 2 * (here.max - here.min))
            stack.append(here.item)
    return total


def _repeated(node: Node) -> int:
    """Positions the counted repeats in ``node`` write out (the outermost repeats' sizes,
    nested ones multiplying, saturated).

    >>> _repeated(Seq((Literal("xyz"), Repeat(Repeat(Literal("ab"), 10, 10), 0, 3))))
    60
    """
    total = 0
    stack = [node]
    while stack:
        here = stack.pop()
        if isinstance(here, Repeat):
            total = min(total + _positions(here), _HUGE)
        else:
            stack.extend(children(here))
    return total


def _positions(node: Node) -> int:
    """Positions of ``node`` written out, as a regex compiler counts them (a piece is
    one, a literal one per character, a repeat its item's times its largest count or,
    unbounded, its least count and one more)."""
    if isinstance(node, Literal):
        return len(node.text)
    if isinstance(node, RegexTerm):
        return len(node.pattern)
    if isinstance(node, (CharSet, RuleRef)):
        return 1
    if isinstance(node, Repeat):
        copies = node.max if node.max is not None else node.min + 1
        return min(_positions(node.item) * max(copies, 1), _HUGE)
    return min(sum(_positions(child) for child in children(node)), _HUGE)


def _refs(node: Node) -> list[RuleRef]:
    return [n for n in _walk(node) if isinstance(n, RuleRef)]


def _walk(node: Node) -> list[Node]:
    """Every piece inside ``node`` (``node`` first), without recursion."""
    out, stack = [], [node]
    while stack:
        here = stack.pop()
        out.append(here)
        stack.extend(reversed(children(here)))
    return out


def _is_surrogate(code: int) -> bool:
    return _SURROGATES[0] <= code <= _SURROGATES[1]
