"""A pattern's regexes as numbered terms, each made once, read lazily from its syntax tree.

Regex derivatives (``fsmviz.tokens.fast.derivatives``) walk a pattern's DFA without
building it: the regex left after the text read so far is the state. Two states are the
same exactly when their regexes are found equal, so every regex here is made once and
named by an int (``Terms``): a concatenation, an alternation or a repeat is looked up by
its parts before it is made, ``∅`` absorbs a concatenation, ``ε`` vanishes from one, and
an alternation is a sorted set of options. Then equality is ``==`` on ints.

A long pattern is mostly never read by its first mask (a JSON schema's regex is one
concatenation of ~200 parts; the first mask reads three), so ``TreeTerms`` makes the term
of a concatenation's rest only when a derivative reaches it (``SEQ``).

>>> terms = TreeTerms()
>>> tree, keys = terms.survey("ab|ac")
>>> len(keys)  # the classes a, b and c
3
>>> start = terms.convert(tree, 0)
>>> start == terms.convert(tree, 0), terms.nullable[start]
(True, False)
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

from fsmviz.automaton.dfa import (
    DOT,
    EMPTY,
    SURROGATES,
    CharGroup,
    Concatenation,
    NonCapturing,
    Pattern,
    Repeated,
    check_size,
    complement_ranges,
    point_ranges,
)
from fsmviz.automaton.syntax import ClassKey, REFlags, RegexError, read_classes

__all__ = ["EPS", "NONE", "TreeTerms", "Terms", "Unsure", "loop_led"]

_IGNORECASE, _DOTALL = REFlags.I.value, REFlags.S.value
NONE, EPS = 0, 1
"""The regexes ``∅`` (matches nothing) and ``ε`` (matches the empty text only)."""
SET, CAT, ALT, REP, SEQ = range(5)
"""The other kinds: a character set, ``ab``, ``a|b``, ``a{m,n}``, and the parts of a
concatenation in the syntax tree from one on (not yet read)."""


class Unsure(Exception):
    """The shortcut cannot answer this pattern exactly; the index will."""


class Terms:
    """Regexes each made once and named by an int: a node is ``(kind, a, b, c)`` in
    ``nodes``, ``nullable[r]`` says whether ``r`` matches the empty text. ``∅`` is 0 and
    ``ε`` is 1. A character set keeps its ranges as a flat list of bounds ``[lo, hi + 1,
    lo, hi + 1, …]`` (a code point is in it when ``bisect_right`` lands on an odd index)
    and its ASCII members as a bit mask.

    >>> t = Terms()
    >>> a, b = t.charset(((97, 97),)), t.charset(((98, 98),))
    >>> t.cat(a, b) == t.cat(a, b), t.alt([a, b]) == t.alt([b, a, NONE])
    (True, True)
    >>> t.cat(a, NONE), t.cat(EPS, b) == b, t.rep(a, 0, 0)
    (0, True, 1)
    >>> t.contains(a, 97), t.meets(b, 90, 100), t.meets(b, 99, 120)
    (True, True, False)
    """

    def __init__(self) -> None:
        self.nodes: list[tuple] = [(SET,), (SET,)]  # placeholders for ∅ and ε
        self.nullable: list[bool] = [False, True]
        self.bounds: dict[int, list[int]] = {}  # set -> its flat bounds
        self.ascii: dict[int, int] = {}  # set -> bit c set for each ASCII member c
        self._ids: dict[tuple, int] = {}

    def _make(self, key: tuple, nullable: bool) -> int:
        """The number of the node ``key``, made the first time it is asked for."""
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self.nodes)
            self.nodes.append(key)
            self.nullable.append(nullable)
        return found

    def charset(self, ranges: tuple[tuple[int, int], ...]) -> int:
        """The set of code points in ``ranges`` (sorted, disjoint ``(lo, hi)``); ``∅``
        when there are none."""
        if not ranges:
            return NONE
        key = (SET, ranges)
        found = self._ids.get(key)
        if found is None:
            found = self._make(key, False)
            self.bounds[found] = [bound for lo, hi in ranges for bound in (lo, hi + 1)]
            mask = 0
            for lo, hi in ranges:
                if lo < 128:
                    mask |= (1 << (min(hi, 127) + 1)) - (1 << lo)
            self.ascii[found] = mask
        return found

    def cat(self, a: int, b: int) -> int:
        """``ab``."""
        if a == NONE or b == NONE:
            return NONE
        if a == EPS:
            return b
        if b == EPS:
            return a
        node = self.nodes[a]
        if node[0] == CAT:  # (xy)b = x(yb): one spelling per concatenation
            return self.cat(node[1], self.cat(node[2], b))
        return self._make((CAT, a, b), self.nullable[a] and self.nullable[b])

    def alt(self, options: Iterable[int]) -> int:
        """``a|b|…``: nested alternations flattened, ``∅`` dropped, options sorted."""
        flat: set[int] = set()
        for option in options:
            node = self.nodes[option]
            if node[0] == ALT:
                flat.update(node[1])
            elif option != NONE:
                flat.add(option)
        if len(flat) <= 1:
            return flat.pop() if flat else NONE
        key = (ALT, tuple(sorted(flat)))
        found = self._ids.get(key)  # most are met again: nullable read only for a new one
        return found if found is not None else self._make(key, any(self.nullable[o] for o in flat))

    def rep(self, a: int, least: int, most: int | None) -> int:
        """``a{least,most}`` (``most`` None: unbounded)."""
        if most == 0 or a == EPS:
            return EPS
        if a == NONE:
            return EPS if least == 0 else NONE
        if least == most == 1:
            return a
        return self._make((REP, a, least, most), least == 0 or self.nullable[a])

    def contains(self, charset: int, code: int) -> bool:
        """Whether the set holds the code point ``code``."""
        return bisect_right(self.bounds[charset], code) % 2 == 1

    def covers(self, charset: int, inner: int) -> bool:
        """Whether the set ``charset`` holds every code point of the set ``inner``."""
        bounds, inside = self.bounds[charset], self.bounds[inner]
        for k in range(0, len(inside), 2):
            i = bisect_right(bounds, inside[k])
            if i % 2 == 0 or bounds[i] < inside[k + 1]:
                return False
        return True

    def meets(self, charset: int, lo: int, hi: int) -> bool:
        """Whether the set holds a code point in ``lo..hi``."""
        bounds = self.bounds[charset]
        i = bisect_right(bounds, lo)
        return i % 2 == 1 or (i < len(bounds) and bounds[i] <= hi)


class TreeTerms(Terms):
    """The terms of one pattern's syntax tree (``fsmviz.automaton.syntax.parse``), made
    as they are needed: a concatenation's rest stays unread (``SEQ``: the parts from one
    on) until ``head`` is asked for its first part."""

    def __init__(self, relax_from: int | None = None) -> None:
        super().__init__()
        self.relax_from = relax_from
        self.relaxed: int | None = None  # the least bound ``convert`` let go (``relax_from``)
        self._ranges: dict[tuple[frozenset[str], bool], int] = {}
        self._parts: dict[int, tuple] = {}  # id -> the parts of a ``SEQ``
        self._tails: dict[int, tuple] = {}  # id(parts) -> their ``_tails``
        self._converted: dict[tuple[int, int], int] = {}  # (id(node), flags) -> regex
        self._split: dict[tuple, tuple[int, int]] = {}  # a ``SEQ`` node -> ``head``

    def survey(self, pattern: str) -> tuple[object, tuple[ClassKey, ...]]:
        """``pattern``'s syntax tree and its distinct classes, as ``(characters,
        negated)`` keys (the dot's as without ``(?s)``: what it holds beyond "\\n" is
        what a check reads; ``class_set`` makes a key's set). Raises ``RegexError`` as
        ``compile_regex`` would before building anything, and ``Unsure`` under ``(?i)``
        (case folding is the DFA's: ``dfa._Positions._case_folded``)."""
        core, tree, keys = read_classes(pattern)  # the reader's classes: no walk here
        check_size(tree, core)  # refused here as the DFA's construction refuses it
        if keys is None:  # the full path's tree
            classes: dict[ClassKey, None] = {}
            _survey(tree, classes)
            keys = tuple(classes)
        return tree, keys

    def convert(self, node: object, flags: int) -> int:
        """The regex of a syntax-tree node under ``flags`` (as ``dfa._Positions.walk``
        reads the tree). A concatenation stays unread (``SEQ``) until a derivative gets
        to its parts: a schema's regex is one concatenation of ~200 parts, and the first
        mask reads three of them."""
        kind = type(node)
        if kind is CharGroup:
            return self.class_set(frozenset(node.chars), node.negated)
        if kind is Concatenation:
            return self.seq(node.parts, 0, flags)
        if node is EMPTY:
            return EPS
        if node is DOT:
            return self.class_set(frozenset() if flags & _DOTALL else frozenset("\n"), True)
        key = (id(node), flags)  # the tree outlives this object: ids stay its nodes'
        found = self._converted.get(key)
        if found is None:
            if kind is Repeated:
                found = self._repeat(node, flags)
            elif kind is Pattern:
                if node.added_flags or node.removed_flags:
                    flags = (flags | node.added_flags.value) & ~node.removed_flags.value
                found = self.alt([self.convert(option, flags) for option in node.options])
            else:
                raise RegexError(f"unsupported construct {kind.__name__}", None, None)
            self._converted[key] = found
        return found

    def _repeat(self, node: Repeated, flags: int) -> int:
        """The regex of a repeat ``X{a,m}``; ``X{a,}`` where ``X`` is a set and ``m`` is
        ``relax_from`` or more (``relaxed`` then holds the least such ``m``).

        Relaxed so, a pattern allows the same texts of up to ``relaxed`` bytes as begin
        its matches (the first allowed set's tokens that short): such a text ``w`` reads
        ``relaxed`` characters at most, so no copy of ``X`` in it can pass its bound;
        and where ``wv`` matches the relaxed pattern, so does ``wv'`` the pattern itself,
        ``v'`` being ``v`` with the characters of each repeat past ``max(a, those in w)``
        left out (``a`` and those in ``w`` are each ``m`` at most). A counted copy is a
        state per count (``[^,\\n]{1,20}``: 20, each a row a level of the first set's walk
        meets); relaxed, it is one loop. ``derivatives`` walks the longer tokens with
        the pattern as written."""
        base = self.convert(node.base, flags)
        most, bound = node.max, self.relax_from
        if most is not None and bound is not None and most >= bound and self.nodes[base][0] == SET:
            self.relaxed = most if self.relaxed is None else min(self.relaxed, most)
            most = None
        return self.rep(base, node.min, most)

    def seq(self, parts: tuple, i: int, flags: int) -> int:
        """``parts[i:]`` concatenated, read lazily. Parts that match the empty text only
        (``()``, ``(?:)``: ``_empty``) are passed over, as ``ε`` vanishes from a
        concatenation: a term made of them would be a state apart (the benchmarks' fresh
        strings end in 31 or more ``()``, each a ``SEQ`` that ``heads`` and ``derive``
        walked through)."""
        if i >= len(parts) - 1:
            return self.convert(parts[i], flags) if i < len(parts) else EPS
        tails = self._tails.get(id(parts))
        if tails is None:
            tails = self._tails[id(parts)] = _tails(parts)
            self._parts[id(parts)] = parts  # keeps ``id(parts)`` meaning these parts
        after, solid = tails
        i = after[i]
        if i >= len(parts) or after[i + 1] >= len(parts):  # parts[i] alone is left
            return self.convert(parts[i], flags) if i < len(parts) else EPS
        key = (SEQ, id(parts), i, flags)
        found = self._ids.get(key)
        return found if found is not None else self._make(key, solid[i] == len(parts))

    def head(self, node: tuple) -> tuple[int, int]:
        """A ``SEQ`` node's first part and the rest, as regexes (kept)."""
        found = self._split.get(node)
        if found is None:
            _, parts_id, i, flags = node
            parts = self._parts[parts_id]
            found = self._split[node] = self.convert(parts[i], flags), self.seq(parts, i + 1, flags)
        return found

    def class_set(self, chars: frozenset[str], negated: bool) -> int:
        """A class's set: its characters (all others when ``negated``), no surrogates. A
        single character (most of a schema's classes: its keys' letters) is its own range."""
        key = (chars, negated)
        found = self._ranges.get(key)
        if found is None:
            lo, hi = SURROGATES
            if len(chars) == 1 and not negated:
                (point,) = map(ord, chars)
                ranges = () if lo <= point <= hi else ((point, point),)
            else:
                points = sorted(p for p in map(ord, chars) if not lo <= p <= hi)
                ranges = complement_ranges(points) if negated else point_ranges(points)
            found = self._ranges[key] = self.charset(ranges)
        return found


LEAD_TERMS = 256
"""Terms ``loop_led`` reads at most before it gives up (a long pattern that begins with a
loop: the first set walks it as it is)."""


def loop_led(terms: TreeTerms, regex: int) -> int:
    """A regex that allows the same tokens as ``regex``: ``B*`` where a match of
    ``regex`` may begin with a loop ``B{m,}`` and every match of ``regex`` is a match of
    ``B*`` (each of its parts is ``B``, or reads characters of a set among ``B``'s own,
    ``_within``); else ``regex`` itself.

    Proof. A token is allowed when its bytes begin the UTF-8 text of some match (every
    regex but ``∅`` can be finished). Each text ``w`` of ``B*`` begins a match of
    ``regex``: ``w`` then the rest of a ``B{m,}`` match, then a match of what follows
    it (not ``∅``: it can be finished). And every match of ``regex`` is a text of
    ``B*``. So the texts that begin matches are the same for both, and so are the
    tokens. ``.*\\.[jJ][sS][oO][nN]`` allows what ``[^\\n]*`` does (a third of some
    held-out samples are such ``.*\\.ext`` patterns), and a JSON string's search
    ``ANY*(?:foo)ANY*`` what ``ANY*`` does: one state and its characters' bytes where
    the pattern made ~20, a row each, over the same trie levels; ``[^\\n]*`` walks the
    class trie ``warm`` learnt (``levelwalk.walk_root``).

    >>> terms = TreeTerms()
    >>> tree, _ = terms.survey(".*ab|x")
    >>> terms.nodes[loop_led(terms, terms.convert(tree, 0))][0] == REP
    True
    >>> tree, _ = terms.survey(".*\\n")  # a newline is no text of .*
    >>> start = terms.convert(tree, 0)
    >>> loop_led(terms, start) == start
    True
    """
    base = _lead(terms, regex)
    if base is None:
        return regex
    node = terms.nodes[base]
    sets = (
        (base,)
        if node[0] == SET
        else (tuple(o for o in node[1] if terms.nodes[o][0] == SET) if node[0] == ALT else ())
    )
    seen: set[int] = set()
    if not _within(terms, regex, base, sets, seen) or len(seen) > LEAD_TERMS:
        return regex
    return terms.rep(base, 0, None)


def _lead(terms: TreeTerms, regex: int) -> int | None:
    """``B`` of a loop ``B{m,}`` that a match of ``regex`` may begin with, or None."""
    node = terms.nodes[regex]
    kind = node[0]
    if kind == REP:
        return node[1] if node[3] is None else None
    if kind == ALT:
        return next((b for o in node[1] if (b := _lead(terms, o)) is not None), None)
    if kind in (CAT, SEQ):
        first, rest = node[1:3] if kind == CAT else terms.head(node)
        found = _lead(terms, first)
        return found if found is not None or not terms.nullable[first] else _lead(terms, rest)
    return None


def _within(terms: TreeTerms, regex: int, base: int, sets: tuple[int, ...], seen: set[int]) -> bool:
    """Whether every match of ``regex`` is a text of ``base*`` (a sufficient test: each
    part is ``base`` or ``ε``, or a set inside one of ``sets``, ``base``'s own; ``base*``
    holds their concatenations and repeats). ``seen`` holds the terms found so; False
    once it holds more than ``LEAD_TERMS``."""
    if regex <= EPS or regex == base or regex in seen:
        return True
    if len(seen) > LEAD_TERMS:
        return False
    seen.add(regex)
    node = terms.nodes[regex]
    kind = node[0]
    if kind == SET:
        return any(terms.covers(s, regex) for s in sets)
    if kind in (CAT, SEQ):
        first, rest = node[1:3] if kind == CAT else terms.head(node)
        return _within(terms, first, base, sets, seen) and _within(terms, rest, base, sets, seen)
    if kind == ALT:
        return all(_within(terms, o, base, sets, seen) for o in node[1])
    return _within(terms, node[1], base, sets, seen)  # REP


def _survey(node: object, classes: dict[tuple[frozenset[str], bool], None]) -> None:
    """Note each distinct class of ``node`` in ``classes`` (the dot's as without ``(?s)``:
    what it holds beyond "\\n" is what the checks read). Raises ``Unsure`` under ``(?i)``
    (case folding is the DFA's: ``dfa._Positions._case_folded``) and ``RegexError`` for a
    construct the DFA refuses."""
    kind = type(node)
    if kind is CharGroup:
        classes[frozenset(node.chars), node.negated] = None
    elif kind is Concatenation:
        for part in node.parts:
            if type(part) is NonCapturing:
                raise RegexError("lookarounds are not supported", None, "remove them")
            _survey(part, classes)
    elif kind is Pattern:
        if node.added_flags.value & _IGNORECASE:
            raise Unsure
        for option in node.options:
            _survey(option, classes)
    elif kind is Repeated:
        _survey(node.base, classes)
    elif node is DOT:
        classes[frozenset("\n"), True] = None
    elif node is not EMPTY:
        raise RegexError(f"unsupported construct {kind.__name__}", None, None)


EAGER_TAILS = 32
"""A concatenation of this many parts or fewer has its tails read whole when first asked
for (``_tails``: a keyword, a URL's options): fewer steps than reading each as asked."""


def _tails(parts: tuple) -> tuple[list[int] | _Scan, list[int] | _Scan]:
    """Of a concatenation's ``parts``: ``after[i]``, the first part from ``i`` on that
    matches more than the empty text (``len(parts)`` where none does), and ``solid[i]``,
    the first from ``i`` on that does not match the empty text (``parts[i:]`` match it
    where that is ``len(parts)``), for ``i`` from 0 to ``len(parts)``. Past
    ``EAGER_TAILS`` parts, read only as far as asked (``_Scan``): a schema's regex is
    one concatenation of ~440 parts, and its first set reads a few (all of them read
    cost ~0.1 ms a pattern).

    >>> from fsmviz.automaton.syntax import parse
    >>> after, solid = _tails(parse("a()b*()")[1].options[0].parts)
    >>> [solid[i] == 4 for i in range(5)], [after[i] for i in range(5)]
    ([False, True, True, True, True], [0, 2, 2, 4, 4])
    """
    if len(parts) > EAGER_TAILS:
        kinds = _Kinds(parts)
        return _Scan(kinds, 0), _Scan(kinds, 1)
    after, solid = [len(parts)], [len(parts)]
    of: dict[int, tuple[bool, bool]] = {}  # a part met again (the parser's one ``()``)
    for i in range(len(parts) - 1, -1, -1):
        empty, nullable = _kind(of, parts[i])
        after.append(after[-1] if empty else i)
        solid.append(solid[-1] if nullable else i)
    after.reverse()
    solid.reverse()
    return after, solid


class _Kinds(dict):
    """``kinds[i]``: whether ``parts[i]`` matches the empty text only, and whether it
    matches it (kept per part: the parser's one ``()`` is many parts)."""

    def __init__(self, parts: tuple) -> None:
        super().__init__()
        self.parts = parts
        self.of: dict[int, tuple[bool, bool]] = {}  # id(part) -> ``_kind``

    def __missing__(self, i: int) -> tuple[bool, bool]:
        found = self[i] = _kind(self.of, self.parts[i])
        return found


def _kind(of: dict[int, tuple[bool, bool]], part: object) -> tuple[bool, bool]:
    """Whether ``part`` matches the empty text only, and whether it matches it (kept in
    ``of`` by the part's id)."""
    found = of.get(id(part))
    if found is None:
        empty = _empty(part)
        found = of[id(part)] = empty, empty or _nullable(part)
    return found


class _Scan(dict):
    """``scan[i]``: the first part from ``i`` on whose ``kinds`` entry is False at
    ``kind`` (``len(parts)`` where none is), read when first asked for."""

    def __init__(self, kinds: _Kinds, kind: int) -> None:
        super().__init__()
        self.kinds, self.kind = kinds, kind

    def __missing__(self, i: int) -> int:
        found, end, kinds, kind = i, len(self.kinds.parts), self.kinds, self.kind
        while found < end and kinds[found][kind]:
            found += 1
        self[i] = found
        return found


def _empty(node: object) -> bool:
    """Whether a syntax-tree node matches the empty text and nothing else (``()``,
    ``(?:)``, ``(|)``, ``(){3}``)."""
    kind = type(node)
    if kind is Concatenation:
        return all(_empty(part) for part in node.parts)
    if kind is Pattern:
        return all(_empty(option) for option in node.options)
    if kind is Repeated:
        return node.max == 0 or _empty(node.base)
    return node is EMPTY


def _nullable(node: object) -> bool:
    """Whether a syntax-tree node matches the empty text."""
    kind = type(node)
    if kind is Concatenation:
        return all(_nullable(part) for part in node.parts)
    if kind is Pattern:
        return any(_nullable(option) for option in node.options)
    if kind is Repeated:
        return node.min == 0 or _nullable(node.base)
    return node is EMPTY
