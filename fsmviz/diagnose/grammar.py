"""The grammar doctor: what in a context-free grammar makes a guided generation stall, loop
or fail, found before any run, each a ``Finding`` naming the rule concerned.

All of it is read off the rules' automata (``fsmviz.grammar.network``) and each
terminal's own DFA:

* **A rule no string can finish** (``unfinishable_rule``): every way through it calls a
  rule that never ends (``a ::= "x" a``). A run that enters it can only stop at
  max_tokens. Found by the classic fixpoint: a rule finishes when some path of its
  automaton reads terminals and calls rules that finish.
* **A rule nothing reaches** (``unreachable_rule``): no chain of calls from the start
  rule names it; it is dead text (often a typo of a name).
* **Unbounded output** (``unbounded_rule``): a loop in a rule's automaton or a cycle of
  calls (``value → array → value``) lets the output grow without end; the model, not the
  grammar, has to decide to stop. Nesting is what a grammar is for, so this is a note,
  unless the shortest sentence does not fit the budget at all (``budget``).
* **Whitespace that can loop** (``looping_whitespace``): a terminal or rule that reads
  spaces, tabs or newlines without bound. It is the commonest endless output of every
  engine (outlines #839, xgrammar #412); llama.cpp bounds it as ``[ \\t\\n]{0,20}``.
* **Two terminals that match the same text** (``overlapping_terminals``): where both may
  come next, the same characters can be read as either (``"true"`` and a name pattern
  ``[a-z]+``); a lexer picks one, a parser over characters keeps both.
* **A terminal no token can spell** (``unspellable_terminal``): every text it matches
  needs a character no token of the vocabulary holds.

    >>> from fsmviz.grammar import tree as t
    >>> g = t.Grammar((t.Rule("s", t.Seq((t.Literal("a"), t.RuleRef("s")))),
    ...                t.Rule("x", t.Literal("x"))), "s")
    >>> [f.kind for f in diagnose_grammar(g)]
    ['unfinishable_rule', 'unreachable_rule']
"""

from __future__ import annotations

import codecs
import math
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from fsmviz.automaton.dfa import Dfa, compile_regex
from fsmviz.automaton.syntax import RegexError
from fsmviz.diagnose.finding import KINDS, RANK, Finding
from fsmviz.generation.trace import Trace
from fsmviz.grammar import tree as t
from fsmviz.grammar.network import Arc, Machine, Network, NetworkError, Symbol, build_network
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "GRAMMAR_KINDS",
    "SHOWN_CHARS",
    "Shortest",
    "diagnose_grammar",
    "first_terminals",
    "grammar_collapses",
    "shortest_texts",
]

GRAMMAR_KINDS: dict[str, str] = {
    kind: KINDS[kind]
    for kind in (
        "grammar_error",
        "unfinishable_rule",
        "unreachable_rule",
        "unbounded_rule",
        "looping_whitespace",
        "overlapping_terminals",
        "unspellable_terminal",
        "grammar_budget",
        "valid_mass_collapse",
    )
}
"""The grammar doctor's finding kinds, one line each (beside ``finding.KINDS``)."""

WHITESPACE = frozenset(" \t\n\r\f\v")
MAX_OVERLAPS = 4
"""Pairs of overlapping terminals reported at most."""
MAX_COLLAPSES = 3
"""A run's collapses told one by one at most (the worst); the rest in one line."""


# --- terminals -----------------------------------------------------------------------------


def _dfa(pattern: str) -> Dfa | None:
    try:
        return compile_regex(pattern)
    except RegexError:
        return None


def shortest_match(dfa: Dfa, allowed: Iterable[str] | None = None) -> str | None:
    """A shortest text ``dfa`` accepts (None if none), using only ``allowed`` characters
    when given (a class with ``others`` uses an allowed character the DFA never names).

    >>> shortest_match(compile_regex("ab+|c{3}"))
    'ab'
    >>> shortest_match(compile_regex("ab+|c{3}"), "c")
    'ccc'
    """
    pick = _class_chars(dfa, None if allowed is None else set(allowed))
    came: dict[int, tuple[int, str]] = {dfa.initial: (-1, "")}  # state -> (from, char)
    queue = deque([dfa.initial])
    while queue:
        state = queue.popleft()
        if state in dfa.accepting:
            chars = []
            while state != dfa.initial:
                state, char = came[state]
                chars.append(char)
            return "".join(reversed(chars))
        for k, target in sorted(dfa.transitions[state].items()):
            char = pick[k]
            if target not in came and char is not None:
                came[target] = (state, char)
                queue.append(target)
    return None


def _class_chars(dfa: Dfa, allowed: set[str] | None) -> list[str | None]:
    """One character of each class (an allowed one), or None when it has none."""
    out: list[str | None] = []
    for cls in dfa.classes:
        chars = sorted(cls.chars if allowed is None else cls.chars & allowed)
        if not chars and cls.others:
            if allowed is None:
                spare = "abcdefghijklmnopqrstuvwxyz0123456789 "
                chars = [c for c in spare if c not in dfa.mentioned][:1]
            else:
                chars = sorted(c for c in allowed if c not in dfa.mentioned)[:1]
        out.append(chars[0] if chars else None)
    return out


def _loops_on_whitespace(dfa: Dfa) -> bool:
    """Does some cycle of ``dfa`` read whitespace on every edge?"""
    ws = {k for k, cls in enumerate(dfa.classes) if cls.chars & WHITESPACE}
    graph = {s: {d for k, d in dfa.transitions[s].items() if k in ws} for s in dfa.states}
    return any(_on_cycle(graph, s) for s in dfa.states)


def _on_cycle(graph: dict[int, set[int]], start: int) -> bool:
    seen, todo = set(), list(graph[start])
    while todo:
        s = todo.pop()
        if s == start:
            return True
        if s not in seen:
            seen.add(s)
            todo.extend(graph[s])
    return False


def _only_whitespace(dfa: Dfa) -> bool:
    return all(not cls.others and cls.chars <= WHITESPACE for cls in dfa.classes)


def _common_text(a: Dfa, b: Dfa, limit: int = 5000) -> str | None:
    """A shortest text both DFAs accept (product breadth-first search), or None."""
    start = (a.initial, b.initial)
    seen = {start: ""}
    queue = deque([start])
    chars = sorted(a.mentioned | b.mentioned) + ["a", "0", " ", "é"]
    while queue and len(seen) < limit:
        sa, sb = queue.popleft()
        if sa in a.accepting and sb in b.accepting and seen[(sa, sb)]:
            return seen[(sa, sb)]
        for char in dict.fromkeys(chars):
            na, nb = a.step(sa, char), b.step(sb, char)
            if na is not None and nb is not None and (na, nb) not in seen:
                seen[(na, nb)] = seen[(sa, sb)] + char
                queue.append((na, nb))
    return None


# --- shortest texts ------------------------------------------------------------------------


@dataclass(frozen=True)
class Shortest:
    """The length of the shortest text each rule can read (None: it cannot finish), and
    from each position of each rule to that rule's end; ``via`` is the edge a shortest
    way leaves each position by. Lengths are numbers: a rule may stand for 100,000
    characters (``fsmviz.grammar.limits``), and its text is spelled only when asked,
    only as far as asked (``text``)."""

    lengths: dict[str, int | None]
    positions: dict[tuple[int, int], int | None]
    via: dict[tuple[int, int], Arc]
    network: Network
    terminal: dict[Symbol, str | None]

    def text(self, rule: str, limit: int | None = None) -> str | None:
        """A shortest text of ``rule``, its first ``limit`` characters (None: all of it),
        or None when the rule cannot finish."""
        if self.lengths.get(rule) is None:
            return None
        budget = limit if limit is not None else math.inf
        out: list[str] = []
        size = 0
        stack = [(self.network.machine(rule).index, 0)]
        while stack and size < budget:
            where = stack.pop()
            arc = self.via.get(where)
            if arc is None:  # the rule's end (nothing more to read)
                continue
            stack.append((where[0], arc.target))
            if arc.symbol.is_call:
                stack.append((self.network.machine(arc.symbol.rule or "").index, 0))
            else:
                piece = self.terminal[arc.symbol] or ""
                piece = piece[: int(min(len(piece), budget - size))]
                out.append(piece)
                size += len(piece)
        return "".join(out)

    @property
    def rules(self) -> dict[str, str | None]:
        """A shortest text of each rule, its first ``SHOWN_CHARS`` characters (None: the
        rule cannot finish)."""
        return {rule: self.text(rule, SHOWN_CHARS) for rule in self.lengths}


SHOWN_CHARS = 1_000
"""Characters of a rule's shortest text ``Shortest.rules`` spells."""


def shortest_texts(network: Network) -> Shortest:
    """Shortest texts by fixpoint, as lengths: a position's is the least over its edges of
    what the edge reads (a terminal's shortest match, a called rule's shortest text) plus
    the target's; a rule's is its start position's.

    >>> from fsmviz.grammar import tree as t
    >>> g = t.Grammar((t.Rule("s", t.Alt((t.Literal("x"), t.Seq((t.Literal("("),
    ...     t.RuleRef("s"), t.Literal(")")))))),), "s")
    >>> shortest = shortest_texts(build_network(g))
    >>> shortest.lengths, shortest.rules
    ({'s': 1}, {'s': 'x'})
    """
    terminal: dict[Symbol, str | None] = {}
    for machine in network.machines:
        for arc in machine.arcs:
            if not arc.symbol.is_call and arc.symbol not in terminal:
                dfa = _dfa(arc.symbol.regex or "")
                terminal[arc.symbol] = shortest_match(dfa) if dfa else (arc.symbol.text or "")
    best: dict[tuple[int, int], int | None] = {
        (m.index, s): (0 if s in m.accepting else None)
        for m in network.machines
        for s in range(m.num_states)
    }
    via: dict[tuple[int, int], Arc] = {}

    def shorten(machine: Machine, arc: Arc) -> bool:
        """Whether the arc gives its source a shorter way to the end."""
        after = best[(machine.index, arc.target)]
        if after is None:
            return False
        symbol = arc.symbol
        if symbol.is_call:
            if not network.has(symbol.rule or ""):
                return False
            read = best[(network.machine(symbol.rule or "").index, 0)]
        else:
            text = terminal[symbol]
            read = None if text is None else len(text)
        if read is None:
            return False
        here = best[(machine.index, arc.source)]
        if here is None or read + after < here:
            best[(machine.index, arc.source)] = read + after
            via[(machine.index, arc.source)] = arc
            return True
        return False

    _until_stable(network, shorten)
    lengths = {m.rule: best[(m.index, 0)] for m in network.machines}
    return Shortest(lengths, best, via, network, terminal)


# --- the findings --------------------------------------------------------------------------


def diagnose_grammar(
    grammar: t.Grammar, vocab: Vocabulary | None = None, *, max_tokens: int | None = None
) -> list[Finding]:
    """What in ``grammar`` may make a run stall, loop or fail (see the module's
    docstring), errors first. With ``vocab``, terminals are checked against its tokens;
    with ``max_tokens``, the shortest sentence against the budget. ``fragment`` names the
    rule (or terminal) concerned."""
    try:
        network = build_network(grammar)
    except NetworkError as error:
        return [Finding("grammar_error", "error", str(error))]
    shortest = shortest_texts(network)
    found: list[Finding] = []
    found += _unfinishable(network, shortest)
    found += _unreachable(network)
    found += _unbounded(network, shortest)
    found += _whitespace(network)
    found += _overlaps(network)
    if vocab is not None:
        found += _unspellable(network, vocab)
    if max_tokens is not None:
        found += _budget(network, shortest, vocab, max_tokens)
    return sorted(found, key=lambda f: RANK[f.severity])


def _unfinishable(network: Network, shortest: Shortest) -> list[Finding]:
    out = []
    for machine in network.machines:
        if shortest.lengths[machine.rule] is not None:
            continue
        start = machine.rule == network.start
        calls = sorted(
            {a.symbol.rule or "" for a in machine.arcs if a.symbol.is_call}
            - {r for r, length in shortest.lengths.items() if length is not None}
        )
        why = f" (every way through it calls {_names(calls)}, which never ends)" if calls else ""
        where = _where(machine.line)
        out.append(
            Finding(
                "unfinishable_rule",
                "error",
                f"No text can finish the rule `{machine.rule}`{where}{why}: "
                + ("no sentence of the grammar exists, so a run can only stop at max_tokens. "
                   if start else "a run that enters it can only stop at max_tokens. ")
                + "Give it a way out: an alternative that calls no rule, e.g. "
                f"`{machine.rule} ::= ... | \"\"`.",
                fragment=machine.rule,
            )
        )  # fmt: skip
    return out


def _unreachable(network: Network) -> list[Finding]:
    reached = {network.start}
    todo = [network.start]
    while todo:
        rule = todo.pop()
        if not network.has(rule):
            continue
        for arc in network.machine(rule).arcs:
            callee = arc.symbol.rule
            if arc.symbol.is_call and callee and callee not in reached:
                reached.add(callee)
                todo.append(callee)
    return [
        Finding(
            "unreachable_rule",
            "warning",
            f"The rule `{m.rule}`{_where(m.line)} is never called from the start rule "
            f"`{network.start}`: nothing it says is ever generated. Call it from a rule, or "
            "check the spelling of the name where it was meant to be used.",
            fragment=m.rule,
        )
        for m in network.machines
        if m.rule not in reached
    ]


def _unbounded(network: Network, shortest: Shortest) -> list[Finding]:
    """One note per group of rules that call each other in a cycle, one per rule whose own
    automaton loops (rules that cannot finish are left to ``unfinishable_rule``)."""
    finishes = {rule for rule, length in shortest.lengths.items() if length is not None}
    calls: dict[str, set[str]] = {}
    for m in network.machines:
        called = {a.symbol.rule or "" for a in m.arcs if a.symbol.is_call}
        calls[m.rule] = {c for c in called if network.has(c)}
    out = []
    grouped: set[str] = set()
    for machine in network.machines:
        cycle = _call_cycle(calls, machine.rule)
        if not cycle or machine.rule in grouped or machine.rule not in finishes:
            continue
        group = [r for r in calls if r == machine.rule or (
            _reaches(calls, machine.rule, r) and _reaches(calls, r, machine.rule))]  # fmt: skip
        grouped.update(group)
        names = _names(group, "and") if len(group) > 1 else f"`{machine.rule}`"
        verb = "call each other" if len(group) > 1 else "calls itself"
        chain = " → ".join([*cycle, machine.rule])
        out.append(
            Finding(
                "unbounded_rule",
                "info",
                f"{names} {verb} ({chain}): text can nest without a bound, and only the "
                "model decides when to stop. That is what a grammar is for; where a run must "
                "end, the budget ends it.",
                fragment=machine.rule,
            )
        )
    for machine in network.machines:
        if machine.rule not in finishes:
            continue
        graph = {s: {a.target for a in machine.outgoing[s]} for s in range(machine.num_states)}
        loop = {s for s in graph if _on_cycle(graph, s)}
        if not loop:
            continue
        labels = [a.symbol.label for a in machine.arcs if a.source in loop and a.target in loop]
        out.append(
            Finding(
                "unbounded_rule",
                "info",
                f"The rule `{machine.rule}` repeats ({', '.join(dict.fromkeys(labels))}) "
                "without a bound: the output may grow until max_tokens. Bound the repeat "
                "(`{0,8}`) where a run must end.",
                fragment=machine.rule,
            )
        )
    return out


def _call_cycle(calls: dict[str, set[str]], rule: str) -> list[str]:
    """A chain of calls from ``rule`` back to itself (``rule`` first), or []."""
    parent: dict[str, str] = {}
    todo = deque([rule])
    while todo:
        here = todo.popleft()
        for callee in sorted(calls.get(here, ())):
            if callee == rule:
                chain = [here]
                while chain[-1] != rule:
                    chain.append(parent[chain[-1]])
                return list(reversed(chain))
            if callee not in parent:
                parent[callee] = here
                todo.append(callee)
    return []


def _reaches(calls: dict[str, set[str]], a: str, b: str) -> bool:
    seen, todo = {a}, [a]
    while todo:
        for callee in calls.get(todo.pop(), ()):
            if callee == b:
                return True
            if callee not in seen:
                seen.add(callee)
                todo.append(callee)
    return False


def _terminals(network: Network) -> dict[Symbol, list[str]]:
    """Every terminal symbol, with the rules it appears in."""
    out: dict[Symbol, list[str]] = {}
    for machine in network.machines:
        for arc in machine.arcs:
            if not arc.symbol.is_call:
                out.setdefault(arc.symbol, [])
                if machine.rule not in out[arc.symbol]:
                    out[arc.symbol].append(machine.rule)
    return out


def _whitespace(network: Network) -> list[Finding]:
    out = []
    for symbol, rules in _terminals(network).items():
        dfa = _dfa(symbol.regex or "")
        if dfa is not None and _loops_on_whitespace(dfa):
            out.append(
                Finding(
                    "looping_whitespace",
                    "warning",
                    f"The terminal {symbol.label} in `{rules[0]}` reads whitespace without "
                    "bound: a model that keeps choosing a space or a newline is never made to "
                    "stop (the commonest endless output of every engine). Bound it, as "
                    "llama.cpp's grammars do: `[ \\t\\n]{0,20}`.",
                    fragment=rules[0],
                )
            )
    # a rule that reads only whitespace and loops or calls itself
    whitespace_only = {}
    for machine in network.machines:
        terms = [a.symbol for a in machine.arcs if not a.symbol.is_call]
        dfas = [_dfa(s.regex or "") for s in terms]
        whitespace_only[machine.rule] = bool(terms) and all(
            d is not None and _only_whitespace(d) for d in dfas
        )
    for machine in network.machines:
        if not whitespace_only[machine.rule]:
            continue
        graph = {s: {a.target for a in machine.outgoing[s]} for s in range(machine.num_states)}
        selfish = any(a.symbol.rule == machine.rule for a in machine.arcs if a.symbol.is_call)
        if selfish or any(_on_cycle(graph, s) for s in graph):
            out.append(
                Finding(
                    "looping_whitespace",
                    "warning",
                    f"The rule `{machine.rule}` reads only whitespace and repeats without "
                    "bound: a model can write spaces or newlines forever. Bound it: "
                    f"`{machine.rule} ::= [ \\t\\n]{{0,20}}`.",
                    fragment=machine.rule,
                )
            )
    return out


def _first(network: Network) -> dict[tuple[int, int], set[Symbol]]:
    """The terminals that may be read next at each position (through calls, and past
    edges that may read nothing)."""
    nullable_rules = {r for r, length in shortest_texts(network).lengths.items() if length == 0}
    empty: dict[Symbol, bool] = {}

    def nullable(symbol: Symbol) -> bool:
        if symbol.is_call:
            return (symbol.rule or "") in nullable_rules
        if symbol not in empty:
            dfa = _dfa(symbol.regex or "")
            empty[symbol] = dfa is not None and dfa.initial in dfa.accepting
        return empty[symbol]

    first: dict[tuple[int, int], set[Symbol]] = {
        (m.index, s): set() for m in network.machines for s in range(m.num_states)
    }

    def grow(m: Machine, arc: Arc) -> bool:
        """Whether the arc adds terminals to its source's FIRST set."""
        here = first[(m.index, arc.source)]
        size = len(here)
        if arc.symbol.is_call:
            if network.has(arc.symbol.rule or ""):
                here |= first[(network.machine(arc.symbol.rule or "").index, 0)]
        else:
            here.add(arc.symbol)
        if nullable(arc.symbol):
            here |= first[(m.index, arc.target)]
        return len(here) != size

    _until_stable(network, grow)
    return first


def _until_stable(network: Network, visit: Callable[[Machine, Arc], bool]) -> None:
    """Visit every arc of every machine, in order, again and again until no visit
    changes anything (it returns whether it did): the least fixed point behind the
    shortest texts and the FIRST sets."""
    changed = True
    while changed:
        changed = False
        for machine in network.machines:
            for arc in machine.arcs:
                changed |= visit(machine, arc)


def first_terminals(network: Network) -> dict[str, tuple[Symbol, ...]]:
    """The terminals each rule may begin with, through calls and parts that may read
    nothing (the parser's FIRST sets, over the drawn automata)."""
    first = _first(network)
    return {
        m.rule: tuple(sorted(first[(m.index, 0)], key=lambda s: (s.kind, s.label)))
        for m in network.machines
    }


def _overlaps(network: Network) -> list[Finding]:
    first = _first(network)
    dfas: dict[Symbol, Dfa | None] = {}
    out: list[Finding] = []
    done: set[frozenset[Symbol]] = set()
    told: set[int] = set()  # one finding per rule
    for (m, s), symbols in first.items():
        if m in told:
            continue
        ordered = sorted(symbols, key=lambda x: (x.kind, x.label))
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                pair = frozenset((a, b))
                if pair in done or m in told or len(out) >= MAX_OVERLAPS:
                    continue
                done.add(pair)
                da = dfas.setdefault(a, _dfa(a.regex or ""))
                db = dfas.setdefault(b, _dfa(b.regex or ""))
                if da is None or db is None:
                    continue
                common = _common_text(da, db)
                if common is None:
                    continue
                rule = network.machines[m].rule
                told.add(m)
                out.append(
                    Finding(
                        "overlapping_terminals",
                        "info",
                        f"In `{rule}` at position {s}, the terminals {a.label} and {b.label} "
                        f"may both come next and both match {common!r}: the same text can be "
                        "read two ways. A parser over characters keeps both; a lexer (Lark's, "
                        "llguidance's) picks one, which may not be the one meant.",
                        fragment=rule,
                    )
                )
    return out


def _unspellable(network: Network, vocab: Vocabulary) -> list[Finding]:
    held = _vocabulary_bytes(vocab)
    out = []
    for symbol, rules in _terminals(network).items():
        dfa = _dfa(symbol.regex or "")
        if dfa is None:
            continue
        chars = {c for cls in dfa.classes for c in cls.chars if _spellable(c, held)}
        if dfa.initial in dfa.accepting or any(c.others for c in dfa.classes):
            chars |= {c for c in "abcdefghijklmnopqrstuvwxyz0123456789 " if _spellable(c, held)}
        if shortest_match(dfa) is not None and shortest_match(dfa, chars) is None:
            needed = sorted({c for cls in dfa.classes for c in cls.chars} - chars)
            shown = ", ".join(repr(c) for c in needed[:5])
            out.append(
                Finding(
                    "unspellable_terminal",
                    "error",
                    f"No token of the {vocab.name} vocabulary can spell the terminal "
                    f"{symbol.label} in `{rules[0]}`: every text it matches needs a "
                    f"character no token holds ({shown}). A run that needs it stops dead.",
                    fragment=rules[0],
                )
            )
    return out


def _vocabulary_bytes(vocab: Vocabulary) -> frozenset[int]:
    """Every byte some (non-special) token holds."""
    held: set[int] = set()
    for token in range(len(vocab)):
        if not vocab.is_special(token):
            held.update(vocab.token_bytes(token))
    return frozenset(held)


def _spellable(char: str, held: frozenset[int]) -> bool:
    return all(b in held for b in char.encode("utf-8"))


def _budget(
    network: Network, shortest: Shortest, vocab: Vocabulary | None, max_tokens: int
) -> list[Finding]:
    length = shortest.lengths.get(network.start)
    if length is None:
        return []
    longest = max((len(vocab.token_bytes(k)) for k in range(len(vocab))), default=1) if vocab else 1
    longest = max(longest, 1)
    # only as much text as the budget needs: past (max_tokens + 1) tokens of the longest
    # token's bytes, no spelling fits, whatever the rest holds
    text = shortest.text(network.start, (max_tokens + 1) * longest) or ""
    at_least = max(math.ceil(len(text.encode("utf-8")) / longest), math.ceil(length / longest))
    tokens = _greedy_tokens(text, vocab) if vocab is not None else len(text)
    tokens = max(tokens, at_least)
    if tokens <= max_tokens:
        return []
    return [
        Finding(
            "grammar_budget",
            "warning" if at_least <= max_tokens else "error",
            f"The shortest sentence of the grammar, {text[:60]!r}, takes about {tokens} tokens "
            f"(at least {at_least}), more than max_tokens = {max_tokens}: the run is cut off "
            "before the text is complete. Raise max_tokens.",
            fragment=network.start,
            settings=(("max_tokens", max(tokens, max_tokens) + 8),),
        )
    ]


def _greedy_tokens(text: str, vocab: Vocabulary) -> int:
    """Tokens a greedy longest-match spelling of ``text`` takes (a tokenizer's estimate)."""
    pieces = {vocab.token_bytes(k) for k in range(len(vocab)) if not vocab.is_special(k)}
    longest = max(map(len, pieces), default=1)
    data = text.encode("utf-8")
    at = count = 0
    while at < len(data):
        for size in range(min(longest, len(data) - at), 0, -1):
            if data[at : at + size] in pieces:
                break
        else:
            size = 1
        at += size
        count += 1
    return count


def _where(line: int | None) -> str:
    return f" (line {line})" if line else ""


def _names(names: list[str], joiner: str = "or") -> str:
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" {joiner} " + quoted[-1]


# --- a run's collapses, by rule --------------------------------------------------------------


def grammar_collapses(grammar: t.Grammar, trace: Trace, threshold: float = 0.05) -> list[Finding]:
    """Where a grammar run's valid mass fell below ``threshold``, named by the parser's
    place before that step: the rule and position the grammar held the model in, what
    the model wanted instead and what the grammar let it write.

    >>> from fsmviz.generation.trace import Candidate, Step
    >>> g = t.Grammar((t.Rule("s", t.Seq((t.Literal("{"), t.RuleRef("k"), t.Literal("}")))),
    ...                t.Rule("k", t.Literal("a"))), "s")
    >>> steps = (Step(0, "{", 0, 0, 1, 0.9, (), token_bytes=b"{", index=0),
    ...          Step(1, "a", 0, 0, 1, 0.01, (Candidate("Hello", 0.7, False),),
    ...               token_bytes=b"a", index=1))
    >>> found = grammar_collapses(g, Trace("{a", steps, "max_tokens", False))
    >>> print(found[0].message)  # doctest: +NORMALIZE_WHITESPACE
    At step 1 the valid mass fell to 1.0%: the grammar held the model in `s` after `{`
    expecting `k`; it wanted 'Hello' and wrote 'a'.
    """
    from fsmviz.grammar.place import Chart, place_in

    network = build_network(grammar)
    chart = Chart.start(network)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    found = []
    for step in trace.steps:
        if step.valid_mass < threshold and not step.forced and not step.is_eos:
            place = place_in(chart, 1)
            where = place.lines()[0] if place.stacks else "at the start"
            wanted = next((c.text for c in step.top if not c.allowed), None)
            want = f"it wanted {wanted!r} and " if wanted is not None else ""
            top = place.stacks[0].top.rule if place.stacks else network.start
            found.append(
                Finding(
                    "valid_mass_collapse",
                    "info",
                    f"At step {step.index} the valid mass fell to {step.valid_mass:.1%}: the "
                    f"grammar held the model {where}; {want}wrote {step.text!r}.",
                    steps=(step.index,),
                    fragment=top,
                )
            )
        chart = chart.after(decoder.decode(step.token_bytes))
    if len(found) <= MAX_COLLAPSES:
        return found
    mass = {step.index: step.valid_mass for step in trace.steps}
    shown = sorted(found, key=lambda f: mass[f.steps[0]])[:MAX_COLLAPSES]
    rest = sorted(f.steps[0] for f in found if f not in shown)
    rules = sorted({f.fragment or "" for f in found if f not in shown})
    listed = ", ".join(map(str, rest[:12])) + ("…" if len(rest) > 12 else "")
    summary = Finding(
        "valid_mass_collapse",
        "info",
        f"The valid mass also fell below {threshold:.0%} at {len(rest)} more steps ({listed}), "
        f"in {', '.join(f'`{r}`' for r in rules)}.",
        steps=tuple(rest),
    )
    return sorted(shown, key=lambda f: f.steps[0]) + [summary]
