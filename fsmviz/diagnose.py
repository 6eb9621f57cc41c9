"""The stall doctor: why a regex-guided generation loops, truncates or stalls, in plain words.

Constrained generation fails in a handful of recurring ways, and each leaves a trace in
either the pattern, the vocabulary, or the run itself:

* **The vocabulary cannot spell it.** The DFA allows a character that no token of this
  vocabulary can write (SmolLM2 has no token containing ``\\x04``). If every route to a match
  needs such a character, no generation can ever finish (``dead_end``).
* **The pattern never has to end.** A cycle in the DFA (``[a-zA-Z0-9-.]+``, flexible
  whitespace ``[ \\n]*``) lets a model that does not choose to stop ride it forever. Seed 002's
  ``ian.swannack@gmail.com.au.I.I.I.I`` is exactly this: the model meant ``.`` as the end of
  its sentence, the pattern read it as another domain label (``unbounded_repeat``, ``loop``).
* **The output stops too early**, at the shorter option of ``hot|hotel`` (``prefix_alternative``).
* **The budget is too small**: the fewest tokens from the start to a match exceed
  ``max_tokens`` (``budget``), or a run was cut off before it matched (``truncation``).
* **The model is being dragged.** The *valid mass*, the model's own probability of all
  allowed tokens, collapses: the pattern forces text the model did not want
  (``valid_mass_collapse``).

``diagnose(pattern, vocab, trace=None)`` returns ``Finding`` records, errors first. Static
findings need only the pattern and the vocabulary; a ``Trace`` adds the dynamic ones.

Where the pitfalls come from: seed 002 (summed valid mass, the ``.I.I.I`` email, digits
without end), seed 001 (truncation at the token limit and the safe end), seed 003 (``hot``
vs ``hotel`` needs an end marker), and the trackers: endless whitespace in JSON (outlines
#484, #839; xgrammar #345, #412; llama.cpp bounds it as ``[ \\t]{0,20}`` in #7866), ASCII
``\\d \\w \\s`` in interegular/outlines, and the leading-space problem that token healing
addresses (outlines #161).

**Naming regex fragments.** DFA states do not remember which part of the pattern made them.
A small lexer finds the quantified atoms and alternations in the pattern text with their
positions; to learn which of them a DFA cycle belongs to, we build a witness string that
goes round the cycle three times, wrap every unbounded repeat in a named capture group, and
ask the ``regex`` module which group captured the middle lap. Alternations are found the
same way: the group that picks a different option for ``hot`` and for ``hotel``. Every
suggested rewrite is checked before it is offered (compiled into its DFA when small;
parsed and measured when large, whose DFA can take a second to build).

Everything here is a pure function of (pattern, vocabulary, trace); the only state kept
between calls is in bounded caches.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property, lru_cache
from typing import Literal

import numpy as np
import regex
from interegular.patterns import _EMPTY, _Concatenation, _Repeated
from interegular.patterns import Pattern as InterPattern

from .cache import BoundedCache
from .dfa import MAX_POSITIONS, Dfa, compile_regex
from .index import TokenIndex, build_index
from .syntax import RegexError, parse
from .trace import Step, Trace
from .trie import trie_of
from .vocab import Vocabulary

__all__ = [
    "KINDS",
    "Finding",
    "Severity",
    "diagnose",
    "example_prefixes",
    "token_distances",
]

Severity = Literal["error", "warning", "info"]
_RANK = {"error": 0, "warning": 1, "info": 2}

KINDS: dict[str, str] = {
    "regex_error": "the pattern cannot be compiled",
    "empty_language": "no text at all matches the pattern",
    "accepts_empty": "the pattern matches the empty string, so the model may stop at once",
    "dead_end": "no sequence of this vocabulary's tokens can finish a match",
    "unreachable_char": "the pattern allows characters that no token can write",
    "unbounded_repeat": "a repeat without an upper bound that a model can ride forever",
    "budget": "the fewest tokens to a match compared with max_tokens",
    "prefix_alternative": "one alternative is a prefix of another (hot|hotel): the output may "
    "stop at the shorter one",
    "optional_tail": "the match is already complete before an optional part",
    "ascii_class": "\\d \\w \\s mean ASCII only here, unlike Python's re",
    "unescaped_dot": "a bare . between literal characters matches any character",
    "lazy_quantifier": "a lazy quantifier (+? *?) does not make the model stop earlier",
    "valid_mass_collapse": "steps where the allowed tokens held almost none of the model's "
    "probability",
    "loop": "the output circled the same DFA cycle, repeating itself",
    "truncation": "the run hit max_tokens before the text matched",
    "prob_limit": "the run was stopped because the valid mass fell below prob_limit",
}
"""Every finding kind, with a one-line description (for legends and documentation)."""


@dataclass(frozen=True)
class Finding:
    """One diagnosis.

    ``states`` are states of the drawn DFA to light; ``steps`` are step indices of the trace
    (``Step.index``, from 0) to light on the chart. ``suggestion`` is a complete rewritten
    pattern that compiles, when one exists. ``fragment``/``span`` name the part of the
    pattern concerned, as written, and where it is (``pattern[span[0]:span[1]]``).
    """

    kind: str
    severity: Severity
    message: str
    states: tuple[int, ...] = ()
    suggestion: str | None = None
    steps: tuple[int, ...] = ()
    fragment: str | None = None
    span: tuple[int, int] | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def diagnose(
    pattern: str,
    vocab: Vocabulary,
    trace: Trace | None = None,
    *,
    max_tokens: int | None = None,
    collapse_threshold: float = 0.05,
) -> list[Finding]:
    """Why ``pattern`` may stall with ``vocab`` (and, given a ``trace``, why that run did).

    Never raises for a bad pattern: it becomes a single ``regex_error`` finding. When
    ``max_tokens`` is not given it is taken from ``trace.options`` if present. The trace
    must come from this pattern and vocabulary (its states are the index's states);
    ``ValueError`` otherwise. ``collapse_threshold`` is the valid mass below which a step
    counts as a collapse.
    """
    try:
        index = build_index(pattern, vocab)
    except RegexError as error:
        return [_regex_error(pattern, error)]
    if trace is not None:
        known = index.byte_dfa.num_states
        if any(not 0 <= s < known for st in trace.steps for s in (st.state_before, st.state_after)):
            raise ValueError("the trace's states do not belong to this pattern's index")
    if max_tokens is None and trace is not None:
        value = trace.options.get("max_tokens") if trace.options else None
        max_tokens = int(value) if isinstance(value, (int, float)) else None
    doctor = _Doctor(pattern, index, vocab)
    found: list[Finding] = []
    if trace is not None:
        found += doctor.dynamic(trace, collapse_threshold, max_tokens)
    found += doctor.static(max_tokens)
    return sorted(found, key=lambda f: _RANK[f.severity])


def token_distances(index: TokenIndex) -> dict[int, int]:
    """Fewest tokens from each state of ``index`` to an accepting state (0 when accepting).

    A breadth-first search over the index's rows in reverse. States from which no match can
    be reached with this vocabulary are absent. Pure: computes all rows, stores nothing.
    """
    predecessors = _predecessors(index)
    distance = {s: 0 for s in index.states if index.is_accepting(s)}
    frontier = list(distance)
    while frontier:
        following = []
        for target in frontier:
            for state in predecessors.get(target, ()):
                if state not in distance:
                    distance[state] = distance[target] + 1
                    following.append(state)
        frontier = following
    return distance


def example_prefixes(dfa: Dfa) -> list[str]:
    """For each state, a shortest text that leads there from the start, spelled with readable
    characters (``a`` for a letter, ``0`` for a digit). ``""`` for state 0."""
    prefix: list[str | None] = [None] * dfa.num_states
    prefix[dfa.initial] = ""
    queue = deque([dfa.initial])
    while queue:
        state = queue.popleft()
        for k, target in sorted(
            dfa.transitions[state].items(), key=lambda kt: _rank(_representative(dfa, kt[0]))
        ):
            if prefix[target] is None:
                prefix[target] = prefix[state] + _representative(dfa, k)  # type: ignore[operator]
                queue.append(target)
    return [p if p is not None else "" for p in prefix]


# --- small helpers: characters and text ---------------------------------------------------

_PREFERRED = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_WHITESPACE = frozenset(" \t\n\r\f\v")


def _rank(char: str) -> tuple[int, int]:
    """Readability order: letters, digits, capitals, punctuation, space, the rest."""
    if char in _PREFERRED:
        return (0, _PREFERRED.index(char))
    if char.isascii() and char.isprintable() and char != " ":
        return (1, ord(char))
    if char == " ":
        return (2, 0)
    if char.isprintable():
        return (3, ord(char))
    return (4, ord(char))


def _representative(dfa: Dfa, k: int) -> str:
    """A readable character of class ``k``."""
    return _class_representative(dfa, k)


@lru_cache(maxsize=4096)
def _class_representative(dfa: Dfa, k: int) -> str:
    cls = dfa.classes[k]
    if cls.chars:
        return min(cls.chars, key=_rank)
    for char in _PREFERRED + "!#%&*,;:=~_-/":
        if char not in dfa.mentioned:
            return char
    for code in range(0xA1, 0x3000):
        char = chr(code)
        if char.isprintable() and char not in dfa.mentioned:
            return char
    lo, _ = cls.ranges(dfa.mentioned)[0]
    return chr(lo)


def _show(text: str, limit: int = 40) -> str:
    """Text as it appears in a message: control characters escaped, long text cut short
    (keeping its end, which is where the action is)."""
    shown = "".join(_escape_char(c) for c in text)
    if len(shown) > limit:
        shown = "…" + shown[-(limit - 1) :]
    return shown


def _frag(pattern_text: str, limit: int = 60) -> str:
    """A piece of the pattern as it appears in a message: as written (backslashes kept),
    invisible characters escaped, long pieces shortened in the middle."""
    shown = "".join(c if c.isprintable() else _escape_char(c) for c in pattern_text)
    if len(shown) > limit:
        half = (limit - 1) // 2
        shown = shown[:half] + "…" + shown[-half:]
    return shown


def _escape_char(char: str) -> str:
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}
    if char in named:
        return named[char]
    if not char.isprintable():
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return char


def _char_name(char: str) -> str:
    """``c``, ``é`` (U+00E9), ``\\x04`` (U+0004), a space (U+0020)."""
    code = ord(char)
    if char == " ":
        return "a space (U+0020)"
    if char.isascii() and char.isprintable():
        return f"`{char}`"
    return f"`{_escape_char(char)}` (U+{code:04X})"


def _range_name(lo: int, hi: int) -> str:
    if lo == hi:
        return _char_name(chr(lo))
    if hi - lo <= 2:
        return ", ".join(_char_name(chr(c)) for c in range(lo, hi + 1))
    return f"U+{lo:04X}–U+{hi:04X}"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _after(prefix: str) -> str:
    return f"after `{_show(prefix)}`" if prefix else "at the start"


def _states_text(states: Sequence[int]) -> str:
    states = list(states)
    if len(states) == 1:
        return f"state {states[0]}"
    return "states " + ", ".join(map(str, states[:-1])) + f" and {states[-1]}"


def _percent(p: float) -> str:
    if p >= 0.995:
        return "100%"
    if p >= 0.01:
        return f"{p:.0%}"
    return "<1%" if p > 0 else "0%"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


FULL_CHECK_POSITIONS = 600
"""Suggestions up to this many character positions are compiled into their DFA before they
are offered. Larger ones (a bounded repeat of a whole JSON object, whose DFA takes a second
to build) are only parsed and measured; the tests compile every seed suggestion fully."""


@lru_cache(maxsize=512)
def _compiles(pattern: str) -> bool:
    """Whether ``pattern`` is a usable pattern: parsed, within the size budget, and for
    small patterns also compiled into its DFA."""
    try:
        _, tree = parse(pattern)
    except RegexError:
        return False
    size = _positions(tree)
    if size > MAX_POSITIONS:
        return False
    if size > FULL_CHECK_POSITIONS:
        return True
    try:
        compile_regex(pattern)
    except RegexError:
        return False
    return True


def _positions(node: object) -> int:
    """Character positions of a parsed pattern once bounded repeats are written out."""
    if isinstance(node, _Repeated):
        times = node.max if node.max is not None else max(node.min, 1)
        return _positions(node.base) * times
    if isinstance(node, InterPattern):
        return sum(_positions(option) for option in node.options)
    if isinstance(node, _Concatenation):
        return sum(_positions(part) for part in node.parts)
    if node is _EMPTY:
        return 0
    return 1


def _sccs(nodes: Iterable[int], successors: Callable[[int], Iterable[int]]) -> list[list[int]]:
    """Strongly connected components (Tarjan, iterative)."""
    order: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    out: list[list[int]] = []
    for root in nodes:
        if root in order:
            continue
        order[root] = low[root] = len(order)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(successors(root)))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in order:
                    order[child] = low[child] = len(order)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors(child))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], order[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == order[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    out.append(sorted(component))
    return out


def _predecessors(index: TokenIndex) -> dict[int, set[int]]:
    predecessors: dict[int, set[int]] = {}
    for state in index.states:
        for target in np.unique(index.row(state).targets).tolist():
            predecessors.setdefault(target, set()).add(state)
    return predecessors


def _regex_error(pattern: str, error: RegexError) -> Finding:
    where = f" at position {error.position}" if error.position is not None else ""
    hint = f" {error.hint[0].upper()}{error.hint[1:]}." if error.hint else ""
    span = None
    fragment = None
    if error.position is not None and isinstance(pattern, str) and pattern:
        start = min(error.position, len(pattern) - 1)
        span = (start, start + 1)
        fragment = pattern[start]
    return Finding(
        "regex_error",
        "error",
        f"The pattern cannot be used{where}: {error.message}.{hint}",
        fragment=fragment,
        span=span,
    )


# --- the pattern's text: a small lexer/parser that keeps positions -----------------------


@dataclass
class _Node:
    """A piece of the pattern text. ``kind``: alt, seq, group, repeat, atom (one character
    class: a literal, an escape, ``[...]`` or ``.``) or zero (anchors, flag groups)."""

    kind: str
    start: int
    end: int
    children: list[_Node] = field(default_factory=list)
    lo: int = 1
    hi: int | None = 1
    lazy: bool = False
    quant_start: int = 0

    def walk(self) -> Iterable[_Node]:
        yield self
        for child in self.children:
            yield from child.walk()


_QUANT = re.compile(r"\{(\d*)(,?)(\d*)\}")
_FLAGS_ONLY = re.compile(r"\(\?[aiLmsux]+\)")
_GROUP_OPEN = re.compile(r"\((?:\?(?:P<\w+>|<\w+>|:|[aiLmsux]*(?:-[imsx]+)?:))?")
_ESCAPE = re.compile(
    r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|0[0-7]{0,2}|N\{[^}]*\}|.)", re.S
)


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.i = 0

    def parse(self) -> _Node:
        node = self.alt()
        if self.i != len(self.text):
            raise ValueError(f"unexpected {self.text[self.i]!r} at {self.i}")
        return node

    def alt(self) -> _Node:
        start = self.i
        options = [self.seq()]
        while self.i < len(self.text) and self.text[self.i] == "|":
            self.i += 1
            options.append(self.seq())
        if len(options) == 1:
            return options[0]
        return _Node("alt", start, self.i, options)

    def seq(self) -> _Node:
        start = self.i
        items = []
        while self.i < len(self.text) and self.text[self.i] not in "|)":
            items.append(self.item())
        return _Node("seq", start, self.i, items)

    def item(self) -> _Node:
        node = self.atom()
        while True:
            quantifier = self.quantifier()
            if quantifier is None:
                return node
            lo, hi, lazy = quantifier
            node = _Node("repeat", node.start, self.i, [node], lo, hi, lazy, node.end)

    def atom(self) -> _Node:
        text, i = self.text, self.i
        c = text[i]
        if c == "(":
            flags = _FLAGS_ONLY.match(text, i)
            if flags:
                self.i = flags.end()
                return _Node("zero", i, self.i)
            opening = _GROUP_OPEN.match(text, i)
            self.i = opening.end() if opening else i + 1
            inner = self.alt()
            if self.i >= len(text) or text[self.i] != ")":
                raise ValueError("missing )")
            self.i += 1
            return _Node("group", i, self.i, [inner])
        if c == "[":
            self.i = _class_end(text, i)
            return _Node("atom", i, self.i)
        if c == "\\":
            m = _ESCAPE.match(text, i)
            self.i = m.end() if m else i + 1
            kind = "zero" if text[i : self.i] in ("\\A", "\\Z", "\\z") else "atom"
            return _Node(kind, i, self.i)
        self.i = i + 1
        return _Node("zero" if c in "^$" else "atom", i, self.i)

    def quantifier(self) -> tuple[int, int | None, bool] | None:
        text, i = self.text, self.i
        if i >= len(text):
            return None
        c = text[i]
        if c in "*+?":
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            self.i = i + 1
        elif c == "{":
            m = _QUANT.match(text, i)
            if not m or not (m.group(1) or m.group(3)):
                return None
            lo = int(m.group(1) or 0)
            hi = int(m.group(3)) if m.group(3) else (None if m.group(2) else lo)
            self.i = m.end()
        else:
            return None
        lazy = self.i < len(text) and text[self.i] == "?"
        if lazy:
            self.i += 1
        return lo, hi, lazy


def _class_end(text: str, i: int) -> int:
    """Index just after the ``]`` closing the class that opens at ``i``."""
    j = i + 1
    if j < len(text) and text[j] == "^":
        j += 1
    if j < len(text) and text[j] == "]":
        j += 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == "]":
            return j + 1
        j += 1
    raise ValueError("missing ]")


def _class_members(body: str) -> list[tuple[int, int, bool]]:
    """Members of a class body (between ``[`` or ``[^`` and ``]``) as (start, end, is_range)."""
    members = []
    j = 0

    def one(j: int) -> int:
        if body[j] == "\\":
            m = _ESCAPE.match(body, j)
            return m.end() if m else j + 2
        return j + 1

    while j < len(body):
        end = one(j)
        if end + 1 < len(body) and body[end] == "-":
            members.append((j, one(end + 1), True))
            j = one(end + 1)
        else:
            members.append((j, end, False))
            j = end
    return members


@lru_cache(maxsize=2048)
def _atom_chars(atom: str) -> tuple[frozenset[str], bool] | None:
    """(characters, also every unmentioned character) one atom of the pattern stands for."""
    try:
        dfa = compile_regex(atom)
    except RegexError:
        return None
    chars: set[str] = set()
    others = False
    for k in dfa.transitions[dfa.initial]:
        chars |= dfa.classes[k].chars
        others = others or dfa.classes[k].others
    return frozenset(chars), others


def _parse(pattern: str) -> _Node | None:
    try:
        return _Parser(pattern).parse()
    except (ValueError, IndexError):
        return None


def _instrument(pattern: str, spans: list[tuple[int, int, str]]) -> str:
    """``pattern`` with a named group ``(?P<name>…)`` around each (start, end) span."""
    opens: dict[int, list[tuple[int, str]]] = {}
    closes: dict[int, list[int]] = {}
    for start, end, name in spans:
        opens.setdefault(start, []).append((end, name))
        closes.setdefault(end, []).append(start)
    out = []
    for i in range(len(pattern) + 1):
        out.extend(")" for _ in sorted(closes.get(i, ()), reverse=True))
        out.extend(f"(?P<{name}>" for _, name in sorted(opens.get(i, ()), reverse=True))
        if i < len(pattern):
            out.append(pattern[i])
    return "".join(out)


def _fullmatch(pattern: str, text: str) -> regex.Match | None:
    try:
        return regex.fullmatch(pattern, text, flags=regex.ASCII, timeout=0.05)
    except (regex.error, TimeoutError):
        return None


# --- vocabulary: which bytes can start a token -------------------------------------------

_BY_FIRST_BYTE: BoundedCache[dict[int, list[bytes]]] = BoundedCache(maxsize=4)


def _tokens_by_first_byte(vocab: Vocabulary) -> dict[int, list[bytes]]:
    def build() -> dict[int, list[bytes]]:
        table: dict[int, list[bytes]] = {}
        for data in vocab.all_token_bytes:
            if data:
                table.setdefault(data[0], []).append(data)
        for tokens in table.values():
            tokens.sort(key=len)
        return table

    return _BY_FIRST_BYTE.get_or_build(vocab.fingerprint, build)


def _lead_range(lead: int) -> tuple[int, int]:
    """Code points whose UTF-8 encoding starts with ``lead``."""
    if lead < 0x80:
        return lead, lead
    if lead < 0xE0:
        base = (lead & 0x1F) << 6
        return max(base, 0x80), base + 0x3F
    if lead < 0xF0:
        base = (lead & 0x0F) << 12
        return max(base, 0x800), base + 0xFFF
    base = (lead & 0x07) << 18
    return max(base, 0x10000), min(base + 0x3FFFF, 0x10FFFF)


@dataclass(frozen=True)
class _Blocked:
    """Characters the DFA allows in ``state`` on class ``k`` that no token can write."""

    state: int
    k: int
    ranges: tuple[tuple[int, int], ...]
    whole_edge: bool
    explicit: bool


@dataclass(frozen=True, eq=False)
class _Loop:
    """A cycle of the DFA: its states, the state it is entered by, a text going round once
    from there (and the states passed), and the repeat of the pattern that makes it."""

    states: tuple[int, ...]
    entry: int
    lap: str
    path: tuple[int, ...]
    node: _Node | None
    accepting: bool


# --- the doctor ---------------------------------------------------------------------------


class _Doctor:
    """Everything diagnose() needs about one (pattern, vocabulary), computed lazily."""

    def __init__(self, pattern: str, index: TokenIndex, vocab: Vocabulary):
        self.pattern = pattern
        self.index = index
        self.dfa = index.dfa
        self.vocab = vocab

    # --- shared facts ---------------------------------------------------------------------

    @cached_property
    def prefixes(self) -> list[str]:
        return example_prefixes(self.dfa)

    @cached_property
    def char_distances(self) -> list[int]:
        return self.dfa.distances()

    def completion(self, state: int) -> str:
        """A shortest readable text from ``state`` to a match."""
        dist = self.char_distances
        out = []
        while dist[state] > 0:
            options = [
                (_rank(_representative(self.dfa, k)), k, t)
                for k, t in self.dfa.transitions[state].items()
                if dist[t] == dist[state] - 1
            ]
            if not options:
                break
            _, k, state = min(options)
            out.append(_representative(self.dfa, k))
        return "".join(out)

    def where(self, state: int) -> str:
        """``after `a@a.` (state 4)``."""
        if state >= self.dfa.num_states:
            return f"inside a multi-byte character (state {state})"
        return f"{_after(self.prefixes[state])} (state {state})"

    @cached_property
    def tree(self) -> _Node | None:
        return _parse(self.pattern)

    @cached_property
    def nodes(self) -> list[_Node]:
        return list(self.tree.walk()) if self.tree is not None else []

    def text(self, node: _Node) -> str:
        return self.pattern[node.start : node.end]

    @cached_property
    def char_sccs(self) -> list[list[int]]:
        """The DFA's cyclic strongly connected components (top level)."""
        dfa = self.dfa
        comps = _sccs(dfa.states, lambda s: dfa.transitions[s].values())
        return [c for c in comps if len(c) > 1 or c[0] in dfa.transitions[c[0]].values()]

    @cached_property
    def scc_of(self) -> dict[int, int]:
        return {s: i for i, comp in enumerate(self.char_sccs) for s in comp}

    @cached_property
    def distances(self) -> dict[int, int]:
        return token_distances(self.index)

    def rewrite(self, node: _Node, replacement: str) -> str | None:
        """The pattern with ``node`` replaced, if that compiles."""
        return self.rewrite_all([node], replacement)

    def rewrite_all(self, nodes: list[_Node], replacement: str) -> str | None:
        """The pattern with each of ``nodes`` (not nested in one another) replaced, if that
        compiles."""
        out = self.pattern
        last = len(out) + 1
        for node in sorted(nodes, key=lambda n: n.start, reverse=True):
            if node.end > last:
                continue
            out = out[: node.start] + replacement + out[node.end :]
            last = node.start
        return out if out != self.pattern and _compiles(out) else None

    # --- loops and the repeats that make them ---------------------------------------------

    def lap(self, entry: int, members: set[int]) -> tuple[str, tuple[int, ...]]:
        """A shortest readable text going from ``entry`` round back to it inside
        ``members``, and the states it passes (starting with ``entry``)."""
        dfa = self.dfa
        parent: dict[int, tuple[int, str]] = {}
        queue = deque([entry])
        while queue and entry not in parent:
            state = queue.popleft()
            edges = sorted(
                dfa.transitions[state].items(), key=lambda kt: _rank(_representative(dfa, kt[0]))
            )
            for k, target in edges:
                if target in members and target not in parent:
                    parent[target] = (state, _representative(dfa, k))
                    if target == entry:
                        break
                    queue.append(target)
        chars, path, state = [], [], entry
        while True:
            source, char = parent[state]
            chars.append(char)
            path.append(source)
            state = source
            if state == entry:
                break
        return "".join(reversed(chars)), tuple(reversed(path))

    @cached_property
    def unbounded_repeats(self) -> list[_Node]:
        return [n for n in self.nodes if n.kind == "repeat" and n.hi is None]

    @cached_property
    def loops(self) -> list[_Loop]:
        """The DFA's loops, outer ones first and nested ones (found by removing each loop's
        entry state and looking again) when they belong to another repeat of the pattern."""
        dfa = self.dfa
        out: list[_Loop] = []

        def visit(members: set[int], top: bool) -> None:
            def inside(s: int) -> list[int]:
                return [t for t in dfa.transitions[s].values() if t in members]

            for comp in _sccs(sorted(members), inside):
                if len(comp) == 1 and comp[0] not in inside(comp[0]):
                    continue
                entry = min(comp, key=lambda s: (len(self.prefixes[s]), s))
                lap, path = self.lap(entry, set(comp))
                node = self.repeat_of(entry, lap)
                if top or (node is not None and all(loop.node is not node for loop in out)):
                    accepting = any(dfa.is_accepting(s) for s in comp)
                    out.append(_Loop(tuple(comp), entry, lap, path, node, accepting))
                visit(set(comp) - {entry}, False)

        if self.char_sccs:
            visit(set(dfa.states), True)
        out.sort(key=lambda loop: (len(self.prefixes[loop.entry]), loop.entry))
        # One loop per repeat of the pattern: a repeat inside {2} or copied by minimisation
        # can make several DFA loops; they are one thing to fix.
        merged: list[_Loop] = []
        by_node: dict[int, int] = {}
        for loop in out:
            if loop.node is None or id(loop.node) not in by_node:
                if loop.node is not None:
                    by_node[id(loop.node)] = len(merged)
                merged.append(loop)
                continue
            i = by_node[id(loop.node)]
            first = merged[i]
            merged[i] = dataclasses.replace(
                first,
                states=tuple(sorted({*first.states, *loop.states})),
                accepting=first.accepting or loop.accepting,
            )
        return merged

    def loop_for(self, states: Iterable[int]) -> _Loop | None:
        """The innermost loop holding all of ``states``."""
        wanted = set(states)
        holding = [loop for loop in self.loops if wanted and wanted <= set(loop.states)]
        return min(holding, key=lambda loop: len(loop.states)) if holding else None

    @cached_property
    def _instrumented_repeats(self) -> str | None:
        repeats = self.unbounded_repeats
        if not repeats:
            return None
        return _instrument(
            self.pattern, [(r.start, r.end, f"fsmvizR{i}") for i, r in enumerate(repeats)]
        )

    def repeat_of(self, entry: int, lap: str) -> _Node | None:
        """Which unbounded repeat of the pattern text goes round the loop through ``entry``:
        the innermost one whose capture holds the middle lap of a witness that goes round
        three times."""
        instrumented = self._instrumented_repeats
        if instrumented is None:
            return None
        prefix = self.prefixes[entry]
        witness = prefix + lap * 3 + self.completion(entry)
        lo, hi = len(prefix) + len(lap), len(prefix) + 2 * len(lap)
        match = _fullmatch(instrumented, witness)
        best: tuple[int, _Node] | None = None
        if match is not None:
            for i, node in enumerate(self.unbounded_repeats):
                for start, end in match.spans(f"fsmvizR{i}"):
                    if start <= lo and hi <= end and (best is None or end - start < best[0]):
                        best = (end - start, node)
        return best[1] if best is not None else None

    @cached_property
    def bounded_fixes(self) -> dict[int, tuple[str, str, str] | None]:
        return {id(loop): self._bounded_fix(loop) for loop in self.loops}

    def bounded_fix(self, loop: _Loop) -> tuple[str, str, str] | None:
        """(rewritten pattern, bounded fragment, why) for a loop's repeat, or None."""
        return self.bounded_fixes.get(id(loop))

    def _bounded_fix(self, loop: _Loop) -> tuple[str, str, str] | None:
        """Copies of the same repeat text that no other loop claims are bounded too:
        patterns like the JSON seed repeat their structure, and the DFA shares one loop
        between them. When the rewrite does not compile (a bound inside an ambiguous part
        makes the DFA count in many places at once), smaller bounds are tried."""
        if loop.node is None:
            return None
        fragment = self.text(loop.node)
        claimed = {id(other.node) for other in self.loops if other is not loop and other.node}
        copies = [
            n
            for n in self.unbounded_repeats
            if n is loop.node or (self.text(n) == fragment and id(n) not in claimed)
        ]
        reopens = self.dot_reopens(loop)
        for shrink in (1, 2, 4, 8):
            rewritten = self.bounded(loop.node, reopens, shrink)
            pattern = self.rewrite_all(copies, rewritten[0])
            if pattern:
                return pattern, rewritten[0], rewritten[1]
        return None

    def bounded(self, node: _Node, reopens: bool, shrink: int = 1) -> tuple[str, str]:
        """A bounded rewrite of an unbounded repeat: (new fragment, why). The bound is a
        plausible length for the kind of text (12 digits, 32 letters, 8 repetitions of a
        group, one space), divided by ``shrink``."""
        base_node = node.children[0]
        base = self.pattern[node.start : node.quant_start]
        lo = node.lo
        charset = _atom_chars(base) if base_node.kind == "atom" else None
        why = ""
        if charset is not None:
            chars, others = charset
            if not others and chars and chars <= _WHITESPACE:
                if " " in chars and base not in (" ", "[ ]"):
                    base = "[ ]"
                    why = "a single space instead of any amount of whitespace"
                else:
                    why = "at most one, instead of any number"
                hi = max(lo, 1)
            else:
                limit = 12 if not others and chars <= set("0123456789") else 32
                limit = max(2, limit // shrink)
                if reopens and not others and "." in chars and len(chars) > 1:
                    dropped = _drop_member(base, ".")
                    if dropped is not None:
                        base = dropped
                        why = (
                            "without `.` in the class, the model cannot chain `.x.x.x` "
                            "segments after a complete match; "
                        )
                hi = lo + limit if lo >= limit else limit
                why += f"at most {hi} characters"
        else:
            limit = max(2, 8 // shrink)
            hi = lo + limit if lo >= limit else limit
            why = f"at most {hi} repetitions"
        if (lo, hi) == (0, 1):
            quantifier = "?"
        elif (lo, hi) == (1, 1):
            quantifier = ""
        elif lo == hi:
            quantifier = f"{{{lo}}}"
        else:
            quantifier = f"{{{lo},{hi}}}"
        return base + quantifier, why

    # --- static findings ------------------------------------------------------------------

    def static(self, max_tokens: int | None) -> list[Finding]:
        dfa = self.dfa
        if not dfa.accepting or not self.index.byte_dfa.live_states()[dfa.initial]:
            return [
                Finding(
                    "empty_language",
                    "error",
                    "No text at all matches this pattern (its language is empty), so "
                    "nothing can be generated.",
                    states=(dfa.initial,),
                )
            ]
        found: list[Finding] = []
        found += self.spelling()
        if any(f.kind == "dead_end" for f in found):
            return found + self.style()
        found += self.empty_match()
        found += self.unbounded()
        found += self.budget(max_tokens)
        found += self.early_stops()
        found += self.style()
        return found

    def empty_match(self) -> list[Finding]:
        dfa = self.dfa
        if not dfa.is_accepting(dfa.initial):
            return []
        if not dfa.transitions[dfa.initial]:
            return [
                Finding(
                    "accepts_empty",
                    "error",
                    "The pattern matches only the empty string: the model can write nothing "
                    "but the end of text.",
                    states=(dfa.initial,),
                )
            ]
        shortest = min(
            (self.prefixes[s] for s in dfa.accepting if s != dfa.initial),
            key=len,
            default="",
        )
        example = f" (the shortest non-empty match is `{_show(shortest)}`)" if shortest else ""
        return [
            Finding(
                "accepts_empty",
                "warning",
                "The pattern matches the empty string, so the end of text is allowed at "
                f"step 0 and the output may be empty{example}. Make at least one part "
                "mandatory, e.g. + instead of *.",
                states=(dfa.initial,),
            )
        ]

    # spelling: characters no token can write

    def blocked(self) -> list[_Blocked]:
        dfa, byte_dfa = self.dfa, self.index.byte_dfa
        n = dfa.num_states
        table = byte_dfa.table[:n]
        single = trie_of(self.vocab).single_byte_tokens
        suspects = np.argwhere((table >= 0) & ~single[None, :])
        if len(suspects) == 0:
            return []
        by_first = _tokens_by_first_byte(self.vocab)
        cut: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for state, byte in suspects.tolist():
            if any(byte_dfa.run(tok, state) is not None for tok in by_first.get(byte, ())):
                continue
            lo, hi = _lead_range(byte)
            for k in dfa.transitions[state]:
                for a, b in dfa.classes[k].ranges(dfa.mentioned):
                    a, b = max(a, lo), min(b, hi)
                    if a <= b:
                        cut.setdefault((state, k), []).append((a, b))
        out = []
        for (state, k), ranges in sorted(cut.items()):
            ranges.sort()
            merged: list[tuple[int, int]] = []
            for a, b in ranges:
                if merged and merged[-1][1] >= a - 1:
                    merged[-1] = (merged[-1][0], max(merged[-1][1], b))
                else:
                    merged.append((a, b))
            cls = dfa.classes[k]
            whole = sum(b - a + 1 for a, b in merged) == sum(
                b - a + 1 for a, b in cls.ranges(dfa.mentioned)
            )
            explicit = any(
                chr(c) in dfa.mentioned for a, b in merged for c in range(a, min(b, a + 512) + 1)
            )
            out.append(_Blocked(state, k, tuple(merged), whole, explicit or whole))
        return out

    def atom_for(self, chars: Iterable[int]) -> _Node | None:
        """The first atom of the pattern text that stands for one of ``chars``."""
        wanted = list(chars)[:64]
        for node in self.nodes:
            if node.kind != "atom":
                continue
            charset = _atom_chars(self.text(node))
            if charset is None:
                continue
            members, others = charset
            if any(chr(c) in members for c in wanted):
                return node
            if others and any(chr(c) not in self.dfa.mentioned for c in wanted):
                return node
        return None

    def spelling(self) -> list[Finding]:
        blocked = self.blocked()
        index, dfa = self.index, self.dfa
        reachable = set(index.states)
        lost = [s for s in dfa.states if s not in reachable]
        dead = (
            not index.is_accepting(index.initial_state)
            and index.allowed_count(index.initial_state) == 0
        )
        name = f"the {self.vocab.name} vocabulary"
        found = []
        explicit = [b for b in blocked if b.explicit]
        incidental = [b for b in blocked if not b.explicit]

        def chars_text(b: _Blocked) -> str:
            names = [_range_name(lo, hi) for lo, hi in b.ranges[:4]]
            more = " and more" if len(b.ranges) > 4 else ""
            return ", ".join(names) + more

        if dead:
            causes = explicit or incidental
            if causes:
                first = causes[0]
                atom = self.atom_for(c for lo, hi in first.ranges for c in range(lo, hi + 1))
                fragment = f" (from `{_frag(self.text(atom))}`)" if atom else ""
                more = (
                    f" ({_plural(len(causes) - 1, 'more place')} like it)"
                    if len(causes) > 1
                    else ""
                )
                detail = (
                    f" {_cap(self.where(first.state))} the pattern needs "
                    f"{chars_text(first)}{fragment}, and no token of {name} can write it{more}."
                )
            else:
                atom, detail = None, ""
            found.append(
                Finding(
                    "dead_end",
                    "error",
                    f"No sequence of tokens from {name} can complete a match, so every generation "
                    f"would get stuck.{detail}",
                    states=tuple(sorted({index.initial_state, *(b.state for b in causes)})),
                    fragment=self.text(atom) if atom else None,
                    span=(atom.start, atom.end) if atom else None,
                )
            )
            return found
        grouped: dict[tuple[tuple[tuple[int, int], ...], bool], list[_Blocked]] = {}
        for b in explicit:
            grouped.setdefault((b.ranges, b.whole_edge), []).append(b)
        for (ranges, whole), group in grouped.items():
            first = group[0]
            atom = self.atom_for(c for lo, hi in ranges for c in range(lo, hi + 1))
            targets = sorted({dfa.transitions[g.state][g.k] for g in group})
            single = len(ranges) == 1 and ranges[0][0] == ranges[0][1]
            if whole:
                edges = "edge" if len(group) == 1 else "edges"
                consequence = f" The {edges} to {_states_text(targets)} can never be taken"
            else:
                consequence = f" {'It' if single else 'They'} can never be written there"
            never = [t for t in targets if t in lost]
            if never:
                consequence += f", and {_states_text(never)} {'is' if len(never) == 1 else 'are'}"
                consequence += " never reached"
            fragment = f" (from `{_frag(self.text(atom))}`)" if atom else ""
            where = (
                _cap(self.where(first.state))
                if len(group) == 1
                else f"In {_states_text(sorted({g.state for g in group}))}"
            )
            found.append(
                Finding(
                    "unreachable_char",
                    "warning",
                    f"{where} the pattern allows "
                    f"{chars_text(first)}{fragment}, but no token of {name} can write "
                    f"{'it' if single else 'them'}.{consequence}.",
                    states=tuple(dict.fromkeys([*(g.state for g in group), *targets])),
                    fragment=self.text(atom) if atom else None,
                    span=(atom.start, atom.end) if atom else None,
                )
            )
        if incidental:
            states = sorted({b.state for b in incidental})
            ranges = sorted({r for b in incidental for r in b.ranges})
            names = ", ".join(_range_name(lo, hi) for lo, hi in ranges[:6])
            more = " and more" if len(ranges) > 6 else ""
            found.append(
                Finding(
                    "unreachable_char",
                    "info",
                    f"In {_states_text(states)} the pattern's wide classes include {names}"
                    f"{more}, which no token of {name} can write. Harmless unless you need "
                    "those characters.",
                    states=tuple(states),
                )
            )
        return found

    # unbounded repeats

    def loop_chars(self, loop: _Loop) -> tuple[frozenset[str], bool]:
        """(characters, any unmentioned character too) the loop's repeat reads."""
        if loop.node is not None and loop.node.children[0].kind == "atom":
            charset = _atom_chars(self.pattern[loop.node.start : loop.node.quant_start])
            if charset is not None:
                return charset
        dfa, members = self.dfa, set(loop.states)
        ks = {k for s in loop.states for k, t in dfa.transitions[s].items() if t in members}
        chars = frozenset().union(*(dfa.classes[k].chars for k in ks))
        return chars, any(dfa.classes[k].others for k in ks)

    def dot_reopens(self, loop: _Loop) -> bool:
        """Whether, inside an accepting loop, a `.` leads to a state that is not a match:
        the model that means `.` as the end of its sentence must then write more."""
        dfa = self.dfa
        if not loop.accepting:
            return False
        for s in loop.states:
            t = dfa.step(s, ".")
            if t is not None and t in loop.states and not dfa.is_accepting(t):
                return True
        return False

    def unbounded(self) -> list[Finding]:
        found = []
        for loop in self.loops:
            node = loop.node
            chars, others = self.loop_chars(loop)
            fragment = self.text(node) if node else None
            if fragment:
                what = f"`{_frag(fragment)}`"
            else:
                labels = {
                    self.dfa.class_label(k)
                    for s in loop.states
                    for k, t in self.dfa.transitions[s].items()
                    if t in set(loop.states)
                }
                what = f"`{_frag(' '.join(sorted(labels)))}`"
            if not others and chars and chars <= _WHITESPACE:
                flavour = (
                    " Flexible whitespace is a classic trap: models pad it with endless "
                    "spaces or newlines."
                )
            elif others and node is not None and node.children[0].kind == "atom":
                flavour = " It takes almost any character, so nothing in the text forces an end."
            elif self.dot_reopens(loop) and len(chars) > 1:
                flavour = (
                    " Because `.` is in the loop, a model that ends its sentence with `.` "
                    "is forced to go on (seed 002: `ian.swannack@gmail.com.au.I.I.I`)."
                )
            else:
                flavour = ""
            ending = (
                "The end of text is allowed in the loop, but nothing forces it."
                if loop.accepting
                else "It can only be left by writing what comes next; the end of text is not "
                "allowed inside it."
            )
            path = _states_text(loop.path) if len(loop.path) <= 6 else f"{len(loop.path)} states"
            shown_lap = loop.lap[-1] + loop.lap[:-1]  # start the lap where the repeat starts
            example = _show(shown_lap * 3 if len(shown_lap) < 8 else shown_lap, 30)
            fix = self.bounded_fix(loop)
            why = f" Bounded: `{_frag(fix[1])}` ({fix[2]})." if fix else ""
            found.append(
                Finding(
                    "unbounded_repeat",
                    "warning",
                    f"{_cap(self.where(loop.entry))} the pattern can loop on {what} "
                    f"forever (round {path}, e.g. `{example}`…). {ending}{flavour}{why}",
                    states=loop.states,
                    suggestion=fix[0] if fix else None,
                    fragment=fragment,
                    span=(node.start, node.end) if node else None,
                )
            )
        return found

    # budget

    @cached_property
    def acyclic_longest(self) -> int | None:
        """Most tokens any match can take (None if unbounded)."""
        index = self.index
        states = index.states
        successors = {s: np.unique(index.row(s).targets).tolist() for s in states}
        comps = _sccs(states, lambda s: successors[s])
        if any(len(c) > 1 or c[0] in successors[c[0]] for c in comps):
            return None
        longest: dict[int, int] = {}
        for comp in comps:  # Tarjan emits components in reverse topological order
            s = comp[0]
            best = 0 if index.is_accepting(s) else -1
            for t in successors[s]:
                if longest.get(t, -1) >= 0:
                    best = max(best, longest[t] + 1)
            longest[s] = best
        return longest.get(index.initial_state)

    def budget(self, max_tokens: int | None) -> list[Finding]:
        if max_tokens is None:
            return []
        start = self.index.initial_state
        need = self.distances.get(start)
        if need is None:
            return []
        example = self.completion(self.dfa.initial)
        shown = f" (e.g. `{_show(example)}`, {_plural(len(example), 'character')})"
        if need > max_tokens:
            return [
                Finding(
                    "budget",
                    "error",
                    f"Even the shortest match needs {_plural(need, 'token')}{shown}, but "
                    f"max_tokens is {max_tokens}: every run will be cut off. Raise max_tokens "
                    f"to at least {need}.",
                    states=(start,),
                )
            ]
        if need > 0.75 * max_tokens:
            return [
                Finding(
                    "budget",
                    "warning",
                    f"The shortest match already needs {_plural(need, 'token')}{shown} of "
                    f"max_tokens={max_tokens}: little room for the model's own choices.",
                    states=(start,),
                )
            ]
        longest = self.acyclic_longest
        if longest is not None and longest > max_tokens:
            return [
                Finding(
                    "budget",
                    "info",
                    f"A match takes {need} to {longest} tokens (the most when the model spells "
                    f"it a character at a time); max_tokens={max_tokens} can cut the longest "
                    "ones short.",
                    states=(start,),
                )
            ]
        return []

    # early stops: prefix alternatives and optional tails

    def early_stops(self) -> list[Finding]:
        dfa = self.dfa
        candidates: dict[int, list[tuple[str, str]]] = {}
        for s in sorted(dfa.accepting):
            comp = self.scc_of.get(s)
            short = self.prefixes[s]
            if not short:
                continue  # the empty match is accepts_empty's business
            edges = sorted(
                dfa.transitions[s].items(), key=lambda kt: _rank(_representative(dfa, kt[0]))
            )
            for k, t in edges:
                if comp is not None and self.scc_of.get(t) == comp:
                    continue  # more of the same loop: that is unbounded_repeat's business
                longer = short + _representative(dfa, k) + self.completion(t)
                candidates.setdefault(s, []).append((short, longer))
        if not candidates:
            return []
        alts = [n for n in self.nodes if n.kind == "alt"]
        optionals = [n for n in self.nodes if n.kind == "repeat" and n.lo == 0 and n.hi]
        spans = [
            (o.start, o.end, f"fsmvizA{a}o{j}")
            for a, alt in enumerate(alts)
            for j, o in enumerate(alt.children)
        ]
        spans += [(n.start, n.end, f"fsmvizQ{q}") for q, n in enumerate(optionals)]
        instrumented = _instrument(self.pattern, spans) if spans else self.pattern
        groups: dict[tuple[str, int], list[tuple[int, str, str, str, str]]] = {}
        for s, pairs in candidates.items():
            for short, longer in pairs:
                if self._explain_stop(s, short, longer, instrumented, alts, optionals, groups):
                    break
        found = []
        for (what, i), hits in groups.items():
            states = tuple(sorted({h[0] for h in hits}))
            s, short, longer, shorter_option, longer_option = hits[0]
            if what == "alt":
                node = alts[i]
                fragment = self.text(node)
                found.append(
                    Finding(
                        "prefix_alternative",
                        "warning",
                        f"In `{_frag(fragment)}` the option `{_frag(shorter_option)}` "
                        f"matches the start of `{_frag(longer_option)}`: `{_show(short)}` "
                        f"(state {s}) is already a complete match, so the model may stop "
                        f"there instead of writing `{_show(longer)}`. Put something after the "
                        "choice that marks its end (seed 003 adds an end marker), and list "
                        "the longer option first for engines that take the first alternative "
                        "that matches.",
                        states=states,
                        suggestion=self.rewrite(node, _longest_first(self, node)),
                        fragment=fragment,
                        span=(node.start, node.end),
                    )
                )
            else:
                node = optionals[i]
                fragment = self.text(node)
                found.append(
                    Finding(
                        "optional_tail",
                        "info",
                        f"{_cap(self.where(s))} the text `{_show(short)}` is already a "
                        f"complete match, so the model may stop before the optional "
                        f"`{_frag(fragment)}` (as in `{_show(longer)}`).",
                        states=states,
                        fragment=fragment,
                        span=(node.start, node.end),
                    )
                )
        return found

    def _explain_stop(
        self,
        s: int,
        short: str,
        longer: str,
        instrumented: str,
        alts: list[_Node],
        optionals: list[_Node],
        groups: dict[tuple[str, int], list[tuple[int, str, str, str, str]]],
    ) -> bool:
        """Record which alternation (different options chosen) or optional part (empty in
        the short match, used in the longer one) lets the match stop at ``short``."""
        m_short, m_long = _fullmatch(instrumented, short), _fullmatch(instrumented, longer)
        if m_short is None or m_long is None:
            return False
        for a, alt in enumerate(alts):
            chosen = []
            for m in (m_short, m_long):
                picked = [j for j in range(len(alt.children)) if m.spans(f"fsmvizA{a}o{j}")]
                chosen.append(picked[-1] if picked else None)
            if None not in chosen and chosen[0] != chosen[1]:
                j0, j1 = chosen
                groups.setdefault(("alt", a), []).append(
                    (s, short, longer, self.text(alt.children[j0]), self.text(alt.children[j1]))
                )
                return True
        for q in range(len(optionals)):
            in_short = any(e > b for b, e in m_short.spans(f"fsmvizQ{q}"))
            in_long = any(e > b for b, e in m_long.spans(f"fsmvizQ{q}"))
            if in_long and not in_short:
                groups.setdefault(("opt", q), []).append((s, short, longer, "", ""))
                return True
        return False

    # style pitfalls found in the text

    def style(self) -> list[Finding]:
        found = []
        escapes: dict[str, list[_Node]] = {}
        for node in self.nodes:
            if node.kind != "atom":
                continue
            text = self.text(node)
            for letter in "dwsDWS":
                if f"\\{letter}" in _unescaped_escapes(text):
                    escapes.setdefault(letter, []).append(node)
        for letter, nodes in escapes.items():
            found.append(self._ascii(letter, nodes))
        for node in self.nodes:
            if node.kind == "seq":
                found += self._dots(node)
            if node.kind == "repeat" and node.lazy:
                fragment = self.text(node)
                plain = fragment[:-1]
                found.append(
                    Finding(
                        "lazy_quantifier",
                        "info",
                        f"`{_frag(fragment)}` is lazy, but a DFA has no notion of lazy: it "
                        f"allows exactly what `{_frag(plain)}` allows, and the model decides "
                        "when to stop. Bound the repeat instead if it must stay short.",
                        suggestion=self.rewrite(node, plain),
                        fragment=fragment,
                        span=(node.start, node.end),
                    )
                )
        return found

    def _ascii(self, letter: str, nodes: list[_Node]) -> Finding:
        meaning = {
            "d": "`\\d` means only the digits 0-9 here, while Python's re also accepts other "
            "Unicode digits such as ٣.",
            "w": "`\\w` means only ASCII letters, digits and _ here, while Python's re also "
            "accepts letters such as é or 日: names like José cannot be written.",
            "s": "`\\s` means only space, \\t, \\n, \\r, \\f and \\v here (newlines "
            "included), while Python's re also accepts other Unicode spaces.",
            "D": "`\\D` means any character but 0-9 here, so it also allows Unicode digits "
            "such as ٣ that Python's re would refuse.",
            "W": "`\\W` means anything but ASCII letters, digits and _ here, so it also allows "
            "letters such as é that Python's re would refuse.",
            "S": "`\\S` means anything but ASCII whitespace here, so it also allows Unicode "
            "spaces such as U+00A0 that Python's re would refuse.",
        }[letter]
        first = nodes[0]
        suggestion = self._widen_word_classes(nodes) if letter == "w" else None
        return Finding(
            "ascii_class",
            "info",
            f"{meaning} (outlines and interegular read it the same way.)"
            + (" The suggestion adds the Latin-1 letters À-ÿ." if suggestion else ""),
            suggestion=suggestion,
            fragment=self.text(first),
            span=(first.start, first.end),
        )

    def _widen_word_classes(self, nodes: list[_Node]) -> str | None:
        extra = "À-ÖØ-öø-ÿ"
        out = self.pattern
        for node in sorted(nodes, key=lambda n: n.start, reverse=True):
            text = out[node.start : node.end]
            if text == "\\w":
                new = f"[\\w{extra}]"
            elif text.startswith("[") and not text.startswith("[^"):
                new = text[:-1] + extra + "]"
            else:
                continue
            out = out[: node.start] + new + out[node.end :]
        return out if out != self.pattern and _compiles(out) else None

    def _dots(self, seq: _Node) -> list[Finding]:
        found = []
        items = seq.children
        for j in range(1, len(items) - 1):
            dot, before, after = items[j], items[j - 1], items[j + 1]
            if dot.kind != "atom" or self.text(dot) != ".":
                continue
            after_text = self.text(after)
            if not (after.kind == "atom" and after_text.isalnum() and len(after_text) == 1):
                continue
            before_text = self.text(before)
            if not (
                before.kind in ("repeat", "group")
                or (
                    before.kind == "atom" and (before_text.isalnum() or before_text.startswith("["))
                )
            ):
                continue
            left = ""
            for item in reversed(items[:j]):
                piece = self.text(item)
                if item.kind != "atom" or not (len(piece) == 1 and piece.isalnum()):
                    break
                left = piece + left
            right = ""
            for item in items[j + 1 :]:
                piece = self.text(item)
                if item.kind != "atom" or not (len(piece) == 1 and piece.isalnum()):
                    break
                right += piece
            example = f", so `{left}X{right}` is allowed as well as `{left}.{right}`"
            found.append(
                Finding(
                    "unescaped_dot",
                    "warning",
                    f"The `.` at position {dot.start} matches any character{example}. "
                    "Write `\\.` for a literal dot.",
                    suggestion=self.rewrite(dot, "\\."),
                    fragment=".",
                    span=(dot.start, dot.end),
                )
            )
        return found

    # --- dynamic findings -----------------------------------------------------------------

    def dynamic(self, trace: Trace, threshold: float, max_tokens: int | None) -> list[Finding]:
        steps = list(trace.steps)
        found: list[Finding] = []
        loops = self.trace_loops(trace)
        found += self.collapses(steps, threshold)
        found += loops
        found += self.ending(trace, max_tokens, loops)
        return found

    def text_before(self, steps: Sequence[Step], i: int) -> str:
        return "".join(_step_text(s) for s in steps[:i])

    def state_label(self, state: int) -> int | None:
        return state if 0 <= state < self.dfa.num_states else None

    @cached_property
    def eos_text(self) -> str:
        return self.vocab.token_text(self.vocab.eos_token_id)

    def eos_prob(self, step: Step) -> float | None:
        """The model's probability of ending at ``step``, if it was among its top choices."""
        for cand in step.top:
            if cand.text == self.eos_text:
                return cand.prob
        return None

    def collapses(self, steps: list[Step], threshold: float) -> list[Finding]:
        low = [
            i
            for i, s in enumerate(steps)
            if not s.is_eos and not math.isnan(s.valid_mass) and s.valid_mass < threshold
        ]
        runs: list[list[int]] = []
        for i in low:
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        found = []
        shown = runs[:5]
        for run in shown:
            worst = min(run, key=lambda i: steps[i].valid_mass)
            step = steps[worst]
            numbers = [_step_number(steps[i], i) for i in run]
            blocked = [c for c in step.top if not c.allowed][:3]
            wanted = ", ".join(f"`{_show(c.text, 20)}` ({_percent(c.prob)})" for c in blocked)
            wrote = f"`{_show(_step_text(step), 20)}`" if _step_text(step) else "the end of text"
            when = f"At step {numbers[0]}"
            if len(run) > 1:
                when = (
                    f"At steps {numbers[0]}–{numbers[-1]} (worst: step {numbers[run.index(worst)]})"
                )
            before = self.text_before(steps, worst)
            place = f"after `{_show(before)}`" if before else "at the start"
            message = (
                f"{when} the allowed tokens held only {_percent(step.valid_mass)} of the "
                f"model's probability ({place}, state {step.state_before}"
                f"{', forced' if step.forced else ''})."
            )
            if wanted:
                message += (
                    f" It wanted {wanted}, which the pattern forbids there; it wrote {wrote}."
                )
            else:
                message += f" It wrote {wrote}."
            message += self._why_blocked(step, blocked, worst)
            states = tuple(
                dict.fromkeys(
                    s
                    for i in run
                    for s in (
                        self.state_label(steps[i].state_before),
                        self.state_label(steps[i].state_after),
                    )
                    if s is not None
                )
            )
            loop = self.loop_for([step.state_before])
            fix = self.bounded_fix(loop) if loop is not None else None
            node = loop.node if fix and loop else None
            suggestion = fix[0] if fix else None
            found.append(
                Finding(
                    "valid_mass_collapse",
                    "warning",
                    message,
                    states=states,
                    suggestion=suggestion,
                    steps=tuple(numbers),
                    fragment=self.text(node) if node else None,
                    span=(node.start, node.end) if node else None,
                )
            )
        rest = runs[5:]
        if rest:
            numbers = [_step_number(steps[i], i) for r in rest for i in r]
            found.append(
                Finding(
                    "valid_mass_collapse",
                    "info",
                    f"The valid mass also fell below {_percent(threshold)} at "
                    f"{_plural(len(numbers), 'more step')}: {', '.join(map(str, numbers[:12]))}"
                    f"{'…' if len(numbers) > 12 else ''}.",
                    steps=tuple(numbers),
                )
            )
        return found

    def _why_blocked(self, step: Step, blocked: list, i: int) -> str:
        state = step.state_before
        notes = []
        if any(c.text == self.eos_text for c in blocked) and not self.index.is_accepting(state):
            if state < self.dfa.num_states:
                rest = self.completion(state)
                notes.append(
                    f" The model wanted to end here, but the pattern needs at least "
                    f"{_plural(len(rest), 'more character')} (e.g. `{_show(rest)}`)."
                )
            else:
                notes.append(" The model wanted to end here, but the pattern is not complete.")
        starts_with_space = any(c.text.startswith(" ") for c in blocked)
        if i == 0 and starts_with_space and self.dfa.step(self.dfa.initial, " ") is None:
            notes.append(
                " Its favourite tokens start with a space, as words do after a prompt, "
                "but the pattern cannot start with one: use chat mode, or allow `[ ]?` "
                "at the start and strip it."
            )
        return "".join(notes)

    @cached_property
    def token_scc_of(self) -> dict[int, int]:
        index = self.index
        successors = {s: np.unique(index.row(s).targets).tolist() for s in index.states}
        comps = _sccs(index.states, lambda s: successors[s])
        out = {}
        for i, comp in enumerate(comps):
            if len(comp) > 1 or comp[0] in successors[comp[0]]:
                for s in comp:
                    out[s] = i
        return out

    def trace_loops(self, trace: Trace) -> list[Finding]:
        """Stretches of the run that go round one DFA cycle again and again, writing little
        but the same few things (seed 002's ``.I.I.I``)."""
        steps = list(trace.steps)
        scc = self.token_scc_of
        segments: list[tuple[int, int]] = []  # [first, last] steps inside one cycle
        i = 0
        while i < len(steps):
            comp = scc.get(steps[i].state_before)
            if comp is None or steps[i].is_eos or scc.get(steps[i].state_after) != comp:
                i += 1
                continue
            j = i
            while (
                j + 1 < len(steps)
                and not steps[j + 1].is_eos
                and scc.get(steps[j + 1].state_before) == comp
                and scc.get(steps[j + 1].state_after) == comp
            ):
                j += 1
            segments.append((i, j))
            i = j + 1
        found = []
        for first, last in segments:
            finding = self._loop_finding(trace, steps, first, last)
            if finding is not None:
                found.append(finding)
        return found

    def _loop_finding(
        self, trace: Trace, steps: list[Step], first: int, last: int
    ) -> Finding | None:
        # A lap starts each time the run comes back to the state it visits most.
        befores = [steps[k].state_before for k in range(first, last + 1)]
        anchor = Counter(befores).most_common(1)[0][0]
        starts = [k for k in range(first, last + 1) if steps[k].state_before == anchor]
        laps = [
            "".join(_step_text(steps[k]) for k in range(a, b))
            for a, b in zip(starts, starts[1:], strict=False)
        ]
        counts = Counter(laps)
        if len(laps) < 4 or len(counts) > len(laps) // 2:
            return None  # too short, or varied text: the model is writing, not circling
        ks = list(range(starts[0], last + 1))
        text = "".join(_step_text(steps[k]) for k in ks)
        periodic = _periodic_stretch(text)
        if periodic is not None and periodic[1] >= 2 * len(periodic[2]) + 2:
            repeated = (
                f"; `{_show(periodic[2])}` comes {periodic[1] // len(periodic[2])} times in a row"
            )
        else:
            unit, times = counts.most_common(1)[0]
            repeated = f"; `{_show(unit)}` alone makes {times} of the laps"
        numbers = tuple(_step_number(steps[k], k) for k in ks)
        states = tuple(
            sorted(
                {
                    s
                    for k in ks
                    for s in (steps[k].state_before, steps[k].state_after)
                    if self.state_label(s) is not None
                }
            )
        )
        could_stop = [k for k in ks if self.index.is_accepting(steps[k].state_before)]
        seen = [p for p in (self.eos_prob(steps[k]) for k in could_stop) if p is not None]
        if not could_stop:
            ending = "The end of text is never allowed inside this loop."
        elif seen:
            ending = (
                "In the states where it could have stopped, the model gave the end of text "
                f"at most {_percent(max(seen))}."
            )
        else:
            ending = (
                "In the states where it could have stopped, the end of text was never among "
                "the model's top choices."
            )
        loop = self.loop_for(states) or self.loop_for(states[:1])
        node = loop.node if loop is not None else None
        fix = self.bounded_fix(loop) if loop is not None else None
        through = (
            f" The pattern allows this through `{_frag(self.text(node))}`, which has no upper "
            "bound."
            if node is not None
            else ""
        )
        cut = trace.stop_reason == "max_tokens" and last == len(steps) - 1
        return Finding(
            "loop",
            "error" if cut else "warning",
            f"Steps {numbers[0]}–{numbers[-1]} went round {_states_text(states)} "
            f"{len(laps)} times with little variety ({_plural(len(counts), 'different lap')}), "
            f"writing `{_show(text)}`{repeated}. {ending}{through}"
            + (" The loop ran until max_tokens." if cut else ""),
            states=states,
            suggestion=fix[0] if fix else None,
            steps=numbers,
            fragment=self.text(node) if node else None,
            span=(node.start, node.end) if node else None,
        )

    def ending(self, trace: Trace, max_tokens: int | None, loops: list[Finding]) -> list[Finding]:
        steps = list(trace.steps)
        final = steps[-1].state_after if steps else self.index.initial_state
        text = trace.text
        loop_fix = next((f.suggestion for f in loops if f.suggestion), None)
        if trace.stop_reason == "max_tokens":
            limit = max_tokens if max_tokens is not None else len(steps)
            if trace.matched:
                return [
                    Finding(
                        "truncation",
                        "info",
                        f"The run stopped at max_tokens={limit}. The text happens to match, "
                        "but the model had not chosen to end it.",
                        states=(final,) if final < self.dfa.num_states else (),
                        steps=(len(steps) - 1,) if steps else (),
                        suggestion=loop_fix,
                    )
                ]
            need_tokens = self.distances.get(final)
            if final < self.dfa.num_states:
                rest = self.completion(final)
                tokens = f", {_plural(need_tokens, 'token')}" if need_tokens is not None else ""
                missing = (
                    f"it still needed at least {_plural(len(rest), 'more character')} "
                    f"(e.g. `{_show(rest)}`{tokens})"
                )
            elif need_tokens is not None:
                missing = f"it still needed at least {_plural(need_tokens, 'more token')}"
            else:
                missing = "it stopped inside a character"
            safe = trace.options.get("safe_end") if trace.options else None
            advice = " Raise max_tokens"
            if safe is False:
                advice += ", turn safe_end on (it steers towards a match when tokens run out)"
            if loop_fix:
                advice += ", or bound the loop as suggested"
            return [
                Finding(
                    "truncation",
                    "error",
                    f"The run hit max_tokens={limit} without a complete match: after "
                    f"`{_show(text)}` (state {final}) {missing}.{advice}.",
                    states=(final,) if final < self.dfa.num_states else (),
                    steps=(len(steps) - 1,) if steps else (),
                    suggestion=loop_fix,
                )
            ]
        if trace.stop_reason == "prob_limit":
            limit = trace.options.get("prob_limit") if trace.options else None
            shown = f" ({_percent(float(limit))})" if isinstance(limit, (int, float)) else ""
            return [
                Finding(
                    "prob_limit",
                    "info",
                    f"The run stopped after step {len(steps) - 1} because the allowed tokens' "
                    f"share of the model's probability fell below prob_limit{shown}; the text "
                    f"`{_show(text)}` was already a complete match.",
                    states=(final,) if final < self.dfa.num_states else (),
                    steps=(len(steps) - 1,) if steps else (),
                )
            ]
        if trace.stop_reason == "dead_end":
            return [
                Finding(
                    "dead_end",
                    "error",
                    f"The run got stuck {self.where(final)}: no token could follow "
                    f"`{_show(text)}` and it was not a complete match.",
                    states=(final,) if final < self.dfa.num_states else (),
                    steps=(len(steps) - 1,) if steps else (),
                )
            ]
        return []


def _step_text(step: Step) -> str:
    if step.is_eos:
        return ""
    if step.token_bytes:
        return step.token_bytes.decode("utf-8", errors="replace")
    return step.text


def _step_number(step: Step, position: int) -> int:
    return step.index if step.index else position


def _periodic_stretch(text: str, max_unit: int = 16) -> tuple[int, int, str] | None:
    """The longest stretch of ``text`` that repeats one short unit: (start, length, unit),
    the length a whole number of units; None when nothing repeats three times."""
    best: tuple[int, int, str] | None = None
    n = len(text)
    for p in range(1, min(max_unit, n // 3) + 1):
        k = 0
        while k + p < n:
            if text[k] != text[k + p]:
                k += 1
                continue
            j = k
            while j + p < n and text[j] == text[j + p]:
                j += 1
            length = (j - k + p) // p * p
            if length >= 3 * p and (best is None or length > best[1]):
                best = (k, length, text[k : k + p])
            k = j + 1
    return best


def _unescaped_escapes(atom: str) -> set[str]:
    """Two-character escapes like ``\\d`` written in an atom (a class or a single escape)."""
    out = set()
    j = 0
    while j < len(atom):
        if atom[j] == "\\" and j + 1 < len(atom):
            out.add(atom[j : j + 2])
            j += 2
        else:
            j += 1
    return out


def _drop_member(atom: str, char: str) -> str | None:
    """The class ``atom`` without its single member ``char`` (written as such), or None."""
    if not atom.startswith("[") or atom.startswith("[^"):
        return None
    body = atom[1:-1]
    kept, dropped = [], False
    for a, b, is_range in _class_members(body):
        member = body[a:b]
        if not is_range and member in (char, "\\" + char):
            dropped = True
            continue
        kept.append(member)
    if not dropped or not kept:
        return None
    # A '-' left at the start or in the middle would form a range: move it to the end.
    if "-" in kept:
        kept = [m for m in kept if m != "-"] + ["-"]
    new = "[" + "".join(kept) + "]"
    before, after = _atom_chars(atom), _atom_chars(new)
    if before is None or after is None or after[0] != before[0] - {char} or after[1] != before[1]:
        return None
    return new


def _longest_first(doctor: _Doctor, alt: _Node) -> str:
    options = [doctor.text(o) for o in alt.children]
    return "|".join(sorted(options, key=lambda o: -len(o)))
