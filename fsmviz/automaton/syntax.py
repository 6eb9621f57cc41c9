"""Which regular expressions fsmviz accepts, and a clear error for every other one.

A regex that guides generation must describe a *regular language*: something a finite
automaton can check one character at a time, with no memory beyond its current state.
Most of Python's regex syntax qualifies. A few features do not, because they look
around the current position or remember earlier text:

* lookarounds ``(?=…)``, ``(?!…)``, ``(?<=…)``, ``(?<!…)``,
* backreferences ``\\1``, ``(?P=name)`` and conditionals ``(?(1)…)``,
* word boundaries ``\\b``, ``\\B`` and anchors where text can come before ``^`` or after
  ``$`` (``a^b``, ``(^a)*``); where nothing can, as in ``(?i)^abc$`` or ``(a|$)``, an
  anchor means the empty text, as under ``re.fullmatch``, and is accepted,
* possessive quantifiers and atomic groups, which change what backtracking may match.

``parse`` checks the syntax with Python's ``re`` (and the ``regex`` module, the engine
the naive partial-match method uses), refuses the features above with the position and a
hint, and hands the rest to interegular's parser, whose syntax tree ``fsmviz.automaton.dfa``
compiles. A public page receives every kind of input, so ``parse`` answers *any* string
with a tree or a ``RegexError``, never another exception: groups nested deeper than
``MAX_NESTING`` and classes naming more than ``MAX_CLASS_CHARACTERS`` characters are
refused before any parser sees them, and the spellings interegular reads differently from
Python (``\\0``, ``[\\0a]``, ``(?#…)``, a literal ``{``) are rewritten first. Python's
own warnings about a pattern (``[-a-z+--]``: "possible set difference") stay off the
user's stderr.

Most patterns use only the common syntax (literals, classes, ``\\d``-style escapes, groups,
``|`` and quantifiers). ``_Reader`` reads those in one pass, checking what ``re`` would
check there, and builds the same tree as the path above in a fifth of its time; at the first
thing it does not know it hands the pattern to that full path.
"""

from __future__ import annotations

import re
import string
import warnings
from dataclasses import dataclass

import regex

# --- interegular, wrapped in this one place ------------------------------------------------
# fsmviz compiles interegular's syntax tree itself (``fsmviz.automaton.dfa``), so it needs
# the tree's node classes, which interegular keeps private (``_CharGroup``, ``_Repeated``…).
# They are imported here and nowhere else, under public names, so that an interegular release that
# renames them breaks one import (``tests/test_syntax_classes.py`` pins the behaviour of
# interegular 0.3.3 that fsmviz relies on). One interegular behaviour is replaced: a class
# with two or more negated shorthands, ``[\W\D]``, is the *union* of what each accepts, so
# the characters it refuses are the *intersection* of what each refuses; interegular 0.3.3's
# ``_combine_char_groups`` takes their union (``[\W\D]`` refused ``a``). ``_Parser`` reads
# classes with ``class_union`` instead.
from interegular.patterns import (  # noqa: E402
    _CHAR_GROUPS,
    InvalidSyntax,
    Pattern,
    REFlags,
    Unsupported,
    _ParsePattern,
)
from interegular.patterns import (  # noqa: E402
    _DOT as DOT,
)
from interegular.patterns import (  # noqa: E402
    _EMPTY as EMPTY,
)
from interegular.patterns import (  # noqa: E402
    _CharGroup as CharGroup,
)
from interegular.patterns import (  # noqa: E402
    _Concatenation as Concatenation,
)
from interegular.patterns import (  # noqa: E402
    _NonCapturing as NonCapturing,
)
from interegular.patterns import (  # noqa: E402
    _Repeated as Repeated,
)
from interegular.utils.simple_parser import NoMatch, nomatch  # noqa: E402

from fsmviz.cache import OwnedCache, bounded
from fsmviz.errors import ExplainedError

__all__ = [
    "DOT",
    "EMPTY",
    "EMPTY_GROUP",
    "CharGroup",
    "Concatenation",
    "NonCapturing",
    "Pattern",
    "REFlags",
    "Repeated",
    "RegexError",
    "TREE_SIZES",
    "class_union",
    "greedy_quantifiers",
    "parse",
    "read_classes",
    "strip_anchors",
]


def class_union(items: list[CharGroup], negate: bool) -> CharGroup:
    r"""The character set of a class ``[items]`` (``[^items]`` when ``negate``).

    Each item is a plain set (``a``, ``0-9``, ``\d``) or a negated one (``\W``, ``\D``:
    everything *except* its characters). The class accepts a character when any item does,
    so it refuses exactly the characters every negated item refuses and no plain item lists.

    >>> c = class_union([CharGroup(frozenset("_a"), True), CharGroup(frozenset("0"), True)], False)
    >>> sorted(c.chars), c.negated   # [\W\D] with \W = not "_a": refuses nothing
    ([], True)
    >>> c = class_union([CharGroup(frozenset("0"), True), CharGroup(frozenset("0"), False)], True)
    >>> sorted(c.chars), c.negated   # [^\D0]: accepts nothing
    ([], False)
    """
    listed = frozenset().union(*(g.chars for g in items if not g.negated))
    refused = [g.chars for g in items if g.negated]
    if not refused:
        return CharGroup(listed, negate)
    return CharGroup(frozenset.intersection(*refused) - listed, not negate)


class _Parser(_ParsePattern):
    """interegular's parser with classes read by ``class_union``, and each plain group
    ``(…)`` parsed once per distinct text: a JSON schema's regex repeats the group of a
    string's characters for every string field, and its number group for every number.
    Groups whose text holds ``(?`` are always parsed afresh (an inline flag there is
    parser state)."""

    def __init__(self, data: str):
        super().__init__(data)
        self._closing = _closing_parens(data)
        self._groups: dict[str, Pattern] = {}

    def chargroup(self) -> CharGroup:
        negate = self.static_b("^")
        items = []
        while True:
            try:
                items.append(self.chargroup_inner())
            except nomatch:
                break
        self.static("]")
        return class_union(items, negate)

    def group(self) -> object:
        if self.data.startswith("?", self.index):
            return super().group()
        end = self._closing.get(self.index - 1)
        text = self.data[self.index : end]
        if end is None or "(?" in text:
            return super().group()
        known = self._groups.get(text)
        if known is None:
            known = self.pattern()
            self.static(")")
            self._groups[text] = known
        else:
            self.index = end + 1
        return self.repetition(known)


def plain_characters(pattern: str) -> list[tuple[int, str]] | None:
    r"""Each character of ``pattern`` that is neither escaped nor inside a character class,
    with its index: where a scan of the pattern's text finds its groups, alternatives and
    anchors. None if the pattern ends inside a class or with a lone backslash. A ``]`` first
    in a class (``[]a]``, ``[^]a]``) is one of its characters, as Python's ``re`` reads it.

    >>> plain_characters(r"a\|[|\]]|(b)")
    [(0, 'a'), (8, '|'), (9, '('), (10, 'b'), (11, ')')]
    >>> plain_characters("[^]a]$"), plain_characters("[a"), plain_characters("a\\")
    ([(5, '$')], None, None)
    """
    found: list[tuple[int, str]] = []
    i, size = 0, len(pattern)
    while i < size:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            end = _class_close(pattern, i)
            if end is None:
                return None
            i = end
        else:
            found.append((i, c))
        i += 1
    return None if i > size else found


def _closing_parens(pattern: str) -> dict[int, int]:
    """Index of each ``(`` -> index of the ``)`` closing it (escapes and classes skipped).

    >>> _closing_parens(r"(a|\\()([)](b))")
    {0: 5, 10: 12, 6: 13}
    """
    closing: dict[int, int] = {}
    open_at: list[int] = []
    for i, c in plain_characters(pattern) or ():
        if c == "(":
            open_at.append(i)
        elif c == ")" and open_at:
            closing[open_at.pop()] = i
    return closing


def _parse_tree(pattern: str) -> Pattern:
    """interegular's ``parse_pattern`` with the class fix above."""
    return _Parser(pattern).parse().simplify()


# --- the common syntax, read directly ------------------------------------------------------
# Most patterns (every seed, the everyday ones, a JSON schema's) use only literals, ``.``,
# classes, escapes like ``\d`` or ``\.``, groups ``(…)``, ``(?:…)``, ``(?P<name>…)``,
# alternation and quantifiers. For those the full path (``re.compile`` for the syntax,
# ``_normalize``, interegular's backtracking parser) costs ~0.5 ms even for ``\d+``.
# ``_Reader`` reads that syntax in one pass, checks what ``re`` would check there, and stops
# (``_Unusual``) at the first thing it does not know, leaving the pattern to the full path.
# So it only has to be right on what it reads to the end: there ``re`` accepts the pattern,
# ``_normalize`` changes nothing and interegular builds the very same tree
# (``tests/test_parse_fast.py`` compares both paths on every corpus pattern and on fuzz).

_QUANTIFIER_SYNTAX = r"(?:[*+?]|\{(?:[0-9]+|[0-9]*,[0-9]*)\})\??"
"""A quantifier as ``re`` reads one (ASCII digits only: ``{١}`` is literal text), lazy or not."""
_RUN_SYNTAX = r"[^\\\[\](){}|*+?.^$]+"
"""A run of characters that ``_Reader`` takes as literals (``]``, ``{`` and ``}`` standing
alone, which ``re`` reads as literals, it leaves to the full path)."""
_TOKEN = re.compile(
    r"""
      (((\[\^?+(?:[^\\\]]|\\.)++\]|\\x[0-9a-fA-F]{2}|\\.|\.)(<Q>)?)(<R>)?)  # 1: an item
    | (<R>)                                     # 6: a run of literals
    | (\)(<Q>)?(<R>)?)                          # 7: a group's ")"
    | ((?:\((?:\?:)?\))+(?![*+?{])(<R>)?)        # 10: empty groups "()", "(?:" ")"
    | (\((?:\?:|\?P<([A-Za-z_][A-Za-z0-9_]*)>)?(<R>)?)  # 12: "(", "(?:" or "(?P<13>"
    | (\|(<R>)?)                                # 15
    | ((<Q>)(<R>)?)                             # 17: a quantifier after a run or a group
    | (.)                                       # 20: what the reader leaves to the full path
    """.replace("<Q>", _QUANTIFIER_SYNTAX).replace("<R>", _RUN_SYNTAX),
    re.DOTALL | re.VERBOSE,
)
"""The common syntax's tokens, one match each (``_Reader``), so that the pieces a JSON
schema's regex repeats cost one step: an item (3: a class, an escape or the dot; a class
with no ``]`` first) with its quantifier (4) and the run of literals after it (5), as
``[ ]?"name"``; a run alone (6); a group's ``)`` (7) with its quantifier (8) and run (9);
a run of empty groups with no quantifier after its last (10) and the run after it (11);
a group's opening (12) with its name (13) and run (14); ``|`` (15) and its run (16); a
quantifier alone (17: 18) and its run (19). Matched from every position in turn, so
nothing is skipped: what is no token of the reader's (``^ $ { } ]``, an unclosed ``[``, a
lone ``\\``) is token 20."""
_COUNTS = re.compile(r"\{(?:([0-9]+)|([0-9]*),([0-9]*))\}")
_PLAIN_ESCAPED = frozenset(string.punctuation + " ")
"""Escaped characters that stand for themselves in ``re`` and interegular alike (an escaped
letter or digit means something else, or is an error)."""
_ASCII = {c: CharGroup(frozenset(c), False) for c in map(chr, range(128))}
"""The one-character set of each ASCII character, made once: a pattern's literals and
escaped punctuation are these (trees share them; no tree changes them)."""
EMPTY_GROUP = Pattern((Concatenation(()),))
"""The tree of an empty group, ``()`` or ``(?:)``, as ``_close`` makes one (it matches the
empty text only). A run of them is one token (10), whose groups are this one tree: reading
each as a group opened and closed took ~1.7 µs, and the benchmarks' fresh pattern strings
end with 31 or more (``p + "()" * n``)."""
_CLASS_ESCAPES = {
    **{"\\" + c: _ASCII[c] for c in sorted(_PLAIN_ESCAPED)},
    **{"\\" + c: group for c, group in _CHAR_GROUPS.items()},
}
"""Escapes in a class: ``\\d \\D \\s \\S \\w \\W``, the control characters ``\\n \\t \\b``…
and escaped punctuation (``\\x..`` is read apart)."""
_ESCAPES = {
    text: (group, (group.chars, group.negated))
    for text, group in _CLASS_ESCAPES.items()
    if text != "\\b"
}
"""Escapes outside a class, with their class keys: ``\\b`` there is a word boundary."""
_REPEATS = {"*": (0, None), "+": (1, None), "?": (0, 1), "*?": (0, None), "+?": (1, None),
            "??": (0, 1)}  # fmt: skip
"""The counts of the quantifiers without braces, lazy or not (laziness changes nothing for
a DFA)."""
_CLASS_ITEM = re.compile(
    r"(\\x[0-9a-fA-F]{2}|\\.|[^\\])(?:-(?!\])(\\x[0-9a-fA-F]{2}|\\.|[^\\]))?", re.DOTALL
)
"""An item of a class's body, a range ``low-high`` or one item (``-`` before ``]`` is one)."""
_DOT_KEY = (frozenset("\n"), True)
"""The dot's class as ``class_keys`` names it: all but a newline."""


_Repeat = tuple[Repeated, int]
"""A repeat read, and the copies of its item it expands to (``_Reader._repeat``)."""
_Item = tuple[object, int, int]
"""An item token read (``_Reader._item``): its item, its class's width, its positions."""
_Group = tuple[str, Pattern, int, int, int]
"""A group read (``_Reader._close``): its text, tree, positions, class width and ``(``."""
_Met = tuple[Pattern, int, int, int]
"""A group met again (``_Reader._open``): its tree, positions, the class width with its
classes added, and where it ends."""
_Frame = tuple[list, list[Concatenation], int, int, int, int]
"""An open group's surroundings (``_Reader.read``): the parts, options, and their positions
of the alternative it opened in, where it opened and the class width then."""
_GROUP_KEY = 12
"""Characters from a group's ``(`` by which ``_Reader._open`` finds the groups it read."""


class _Unusual(Exception):
    """The pattern uses something ``_Reader`` leaves to the full path."""


def _code(item: str) -> int:
    """The code point of a range's end in a class (``a``, ``\\x41``, ``\\n``, ``\\-``);
    ``_Unusual`` for a set (``[\\d-z]``: ``re`` refuses it) or an escape the reader
    leaves to the full path."""
    if len(item) == 1:
        return ord(item)
    group = _CLASS_ESCAPES.get(item)
    if group is not None and len(group.chars) == 1 and not group.negated:
        return ord(*group.chars)
    if group is None and len(item) == 4:  # \xHH
        return int(item[2:], 16)
    raise _Unusual  # a set, \u, octal, \p{…}, bad escapes


def _read_class(text: str, room: int) -> tuple[CharGroup, int]:
    """The set of the class ``text`` (``[…]``, no ``]`` first), as ``class_union`` reads its
    items, and its width as ``_class_width`` counts it (a range all its characters, any
    other item one); ``_Unusual`` where ``re`` or interegular would read it otherwise, or
    where the width is past ``room`` (the class is not built then). A body of plain
    characters (no ``\\``, no ``-``: a keyword's ``[eE]``) is one item a character, read
    at once, where ``_read_items`` matched each (~3.4 µs a class, now ~1.5).

    >>> _read_class("[^eE^]", 10)[0] == _read_items("[^eE^]", 10)[0], _read_class("[eE]", 10)[1]
    (True, 2)
    """
    negate = text.startswith("[^")
    body = text[1 + negate : -1]
    if "\\" in body or "-" in body:
        return _read_items(text, room)
    if len(body) > room:
        raise _Unusual  # _check_shape refuses it
    return CharGroup(frozenset(body), negate), len(body)


def _read_items(text: str, room: int) -> tuple[CharGroup, int]:
    """``_read_class`` item by item (``_CLASS_ITEM``): ranges, escapes and sets."""
    negate = text.startswith("[^")
    listed: set[str] = set()  # what the items accept (ranges apart)
    refused: list[frozenset[str]] = []  # what each negated set (\W, \D) refuses
    spans: list[range] = []
    width = 0
    for low, high in _CLASS_ITEM.findall(text, 1 + negate, len(text) - 1):
        if high:
            first = ord(low) if len(low) == 1 else _code(low)
            last = ord(high) if len(high) == 1 else _code(high)
            if first > last:
                raise _Unusual  # re: bad character range
            spans.append(range(first, last + 1))
            width += last - first + 1
        elif len(low) == 1:
            listed.add(low)
            width += 1
        else:
            group = _item_set(low)
            (refused.append if group.negated else listed.update)(group.chars)
            width += 1
    if width > room:
        raise _Unusual  # _check_shape refuses it
    for span in spans:
        listed.update(map(chr, span))
    if not refused:
        return CharGroup(frozenset(listed), negate), width
    return CharGroup(frozenset.intersection(*refused) - listed, not negate), width


def _item_set(item: str) -> CharGroup:
    """The set of one escape in a class: ``\\d``, ``\\n``, ``\\-``, ``\\x41``…"""
    found = _CLASS_ESCAPES.get(item)
    if found is not None:
        return found
    return CharGroup(frozenset(chr(_code(item))), False)


def _repeat_counts(quantifier: str) -> tuple[int, int | None]:
    """(least, most) of a quantifier (``_QUANTIFIER_SYNTAX``); ``_Unusual`` where ``re``
    refuses the counts."""
    simple = _REPEATS.get(quantifier)
    if simple is not None:
        return simple
    exact, low, high = _COUNTS.match(quantifier).groups()
    if len(quantifier) > 11 and any(_is_huge(d or "") for d in (exact, low, high)):
        raise _Unusual  # re refuses it (a count past it has ten digits or more)
    least = int(exact or low or 0)
    most = least if exact else int(high) if high else None
    if most is not None and most < least:
        raise _Unusual  # re refuses it
    return least, most


def _escape(text: str) -> tuple[CharGroup, ClassKey]:
    """The set an escape outside a class stands for that ``_ESCAPES`` does not list
    (``\\xHH``), and its class key; ``_Unusual`` for the rest."""
    if len(text) == 4:
        group = CharGroup(frozenset(chr(int(text[2:], 16))), False)
        return group, (group.chars, False)
    raise _Unusual  # \u, octal, backreferences, anchors, \p{…}, bad escapes


def _alternation(options: list[Concatenation], parts: list) -> Pattern:
    """The group of ``options`` and the last one's ``parts``, simplified as
    ``Pattern.simplify`` does it: a group holding nothing but a group is that group."""
    if not options and len(parts) == 1 and type(parts[0]) is Pattern:
        return parts[0]
    return Pattern((*options, Concatenation(tuple(parts))))


def _empty_groups(text: str, depth: int) -> list[Pattern]:
    """The trees of the run of empty groups ``text`` (token 10) opening at ``depth``: each
    ``EMPTY_GROUP``, as ``_close`` reads one; ``_Unusual`` where it would nest too deep."""
    if depth == MAX_NESTING:
        raise _Unusual  # _check_shape refuses it
    return [EMPTY_GROUP] * text.count(")")


class _Literals(dict[str, CharGroup]):
    """Character -> its one-character set, made at its first asking, its class key noted
    in ``keys`` then: ``map(literals.__getitem__, run)`` reads a run in C."""

    keys: dict[ClassKey, None]

    def __missing__(self, c: str) -> CharGroup:
        found = self[c] = _ASCII.get(c) or CharGroup(frozenset(c), False)
        self.keys[found.chars, False] = None
        return found


class _Reader:
    """A reader of the common syntax into interegular's tree, one ``_TOKEN`` at a time, with
    a stack of the groups open (no recursion). Each item token (``[ ]?``: a class and its
    quantifier) is read once per text, each class once per text, each repeat of one item
    and counts made once, and a group whose text was read before is the tree read then,
    its text not read again (a JSON schema's regex spells its string characters out for
    every string field, its number for every number; ``_Parser.group`` does the same on the
    full path). A group is read afresh where it names a group (a name used twice is
    refused), or where its ``(``, counted, could nest too deep.

    It keeps ``_check_shape``'s two counts as it reads (the depth of groups, checked as a
    group opens; the width of classes at every class, before one is built) and leaves a
    pattern past either to the full path, where ``_check_shape`` points at the excess. It
    counts too the positions the tree expands to (``size``, as ``dfa._expanded_size``
    counts them: a class or a literal is one, a repeat its base's times its most copies, or
    its least and at least one where unbounded; ``TREE_SIZES``), and notes each distinct
    class in the order a walk of the tree meets them (``keys``).

    >>> _Reader(r"((ab|c))?\\d").read() == _parse_tree(r"((ab|c))?\\d")
    True
    >>> _Reader(r"(?i)ab").read()
    Traceback (most recent call last):
    fsmviz.automaton.syntax._Unusual
    """

    def __init__(self, data: str):
        self.data = data
        self.size = 0  # positions of the tree read
        self.keys: dict[ClassKey, None] = {}  # ``class_keys``, in order
        self.items: dict[str, _Item] = {}  # item token -> its item, width, positions
        self.sets: dict[str, tuple[CharGroup, int]] = {}  # class text -> its set, width
        self.repeats: dict[tuple[int, str], _Repeat] = {}  # (id(item), quantifier) -> repeat
        self.repeated: dict[tuple[int, int, int | None], Repeated] = {}  # by counts
        self.groups: dict[str, list[_Group]] = {}  # first characters -> the groups read
        self.texts: dict[str, _Group] = {}  # group text -> the group read
        self.names: set[str] = set()  # group names so far: re refuses one used twice

    def read(self) -> Pattern:
        """The whole pattern's tree, or ``_Unusual``. ``parts``: the items of the open
        alternative, ``size`` their positions; ``options`` and ``done``: the group's
        alternatives before, and their positions; ``stack``: those of the groups around,
        with where each opened and the class width then; ``loose``: where the last run or
        group met again ended, and its last item's positions (a quantifier right there
        repeats that item)."""
        data, literals, items = self.data, _Literals(), self.items
        literals.keys = self.keys
        stack: list[_Frame] = []
        parts: list = []
        options: list[Concatenation] = []
        size = done = width = 0
        loose = (-1, 0)
        tokens = _TOKEN.finditer(data)
        while True:
            for token in tokens:
                kind = token.lastindex
                if kind == 1:
                    item, wide, positions = items.get(token[2]) or self._item(token, width)
                    parts.append(item)
                    size += positions
                    width += wide
                    if width > MAX_CLASS_CHARACTERS:
                        raise _Unusual  # _check_shape refuses it
                    run = token[5]
                elif kind == 6:
                    run = token[6]
                elif kind == 7:
                    closed = self._close(stack, options, parts, done + size, width, token)
                    parts, options, size, done = closed
                    run = token[9]
                elif kind == 10:
                    parts += _empty_groups(token[10], len(stack))
                    run = token[11]
                elif kind == 12:
                    met = self._open(token, len(stack), width)
                    if met is not None:
                        tree, positions, width, end = met
                        parts.append(tree)
                        size += positions
                        loose, tokens = (end, positions), _TOKEN.finditer(data, end)
                        break
                    stack.append((parts, options, size, done, token.start(), width))
                    parts, options, size, done = [], [], 0, 0
                    run = token[14]
                elif kind == 15:
                    options.append(Concatenation(tuple(parts)))
                    done += size
                    parts, size = [], 0
                    run = token[16]
                elif kind == 17 and token.start() == loose[0]:
                    parts[-1], copies = self._repeated(parts[-1], token[18])
                    size += loose[1] * (copies - 1)
                    run = token[19]
                else:  # ^ $ { } ], an unclosed class, a lone \, a quantifier after (, |
                    raise _Unusual  # or another quantifier
                if run is not None:
                    parts += map(literals.__getitem__, run)
                    size += len(run)
                    loose = (token.end(), 1)
            else:
                break
        if stack:
            raise _Unusual  # a missing ")"
        self.size = done + size
        return _alternation(options, parts)

    def _item(self, token: re.Match[str], width: int) -> _Item:
        """An item token met first: its item (a class, an escape or the dot, repeated by
        its quantifier if one follows), its class's width and its positions. A class's set
        is read once per class text (its key noted then), and not built where its width is
        past what is left; an escape's and the dot's key are noted."""
        text = token[3]
        if text[0] == "[":
            known = self.sets.get(text)
            if known is None:
                known = self.sets[text] = _read_class(text, MAX_CLASS_CHARACTERS - width)
                self.keys[known[0].chars, known[0].negated] = None
            group, wide = known
        elif text == ".":
            group, wide = DOT, 0
            self.keys[_DOT_KEY] = None
        else:
            group, key = _ESCAPES.get(text) or _escape(text)
            self.keys[key] = None
            wide = 0
        if token[4] is None:
            found: _Item = (group, wide, 1)
        else:
            item, copies = self._repeated(group, token[4])
            found = (item, wide, copies)
        self.items[token[2]] = found
        return found

    def _repeated(self, item: object, quantifier: str) -> _Repeat:
        """``item`` repeated by ``quantifier``, and the copies of ``item`` it expands to:
        one ``Repeated`` per item and counts (``{2}`` and ``{2,2}`` alike; the item is kept
        by its repeat, so its id stays its own), kept by item and quantifier."""
        kept = self.repeats.get((id(item), quantifier))
        if kept is None:
            least, most = _repeat_counts(quantifier)
            same = (id(item), least, most)
            found = self.repeated.get(same)
            if found is None:
                found = self.repeated[same] = Repeated(item, least, most)
            copies = most if most is not None else max(least, 1)
            kept = self.repeats[id(item), quantifier] = found, copies
        return kept

    def _open(self, token: re.Match[str], depth: int, width: int) -> _Met | None:
        """A group opening at ``depth``: where its text was read before (and its ``(``
        cannot nest too deep), that group's tree and positions, the class width with its
        classes added again, and where it ends; else None, its depth and name checked.
        A group read before is found by its text up to the first ``)`` (a group with no
        group inside), or else by its first characters."""
        data, start = self.data, token.start()
        flat = self.texts.get(data[start : data.find(")", start) + 1])
        for text, tree, positions, wide, opens in (
            [flat] if flat is not None else self.groups.get(data[start : start + _GROUP_KEY], ())
        ):
            if data.startswith(text, start) and depth + opens <= MAX_NESTING:
                if width + wide > MAX_CLASS_CHARACTERS:
                    raise _Unusual  # _check_shape refuses it
                return tree, positions, width + wide, start + len(text)
        if depth == MAX_NESTING:
            raise _Unusual  # _check_shape refuses it
        name = token[13]
        if name is not None:
            if name in self.names:
                raise _Unusual  # re: a name used twice
            self.names.add(name)
        return None

    def _close(
        self,
        stack: list[_Frame],
        options: list[Concatenation],
        parts: list,
        positions: int,
        width: int,
        token: re.Match[str],
    ) -> tuple[list, list[Concatenation], int, int]:
        """The group last opened (``stack``'s top) closing at ``token``: its tree (the tree
        of its text if read before, else its own, simplified), repeated by the quantifier
        after it, added to the alternative around it, which is returned. The group is kept
        by its text and by its first characters for ``_open`` to meet it again (not where
        it names a group: its name must be checked again)."""
        if not stack:
            raise _Unusual  # an unbalanced ")"
        frame = stack.pop()
        data, start = self.data, frame[4]
        text = data[start : token.start() + 1]
        group = self.texts.get(text)
        if group is None:
            group = (
                text,
                _alternation(options, parts),
                positions,
                width - frame[5],
                text.count("("),
            )
            if "(?P" not in text:  # kept once, when first made (met again: found here)
                self.texts[text] = group
                self.groups.setdefault(data[start : start + _GROUP_KEY], []).append(group)
        tree = group[1]
        if token[8] is not None:
            tree, copies = self._repeated(tree, token[8])
            positions *= copies
        outer, outer_options, size, done = frame[:4]
        outer.append(tree)
        return outer, outer_options, size + positions, done


MAX_PATTERN_LENGTH = 50_000
"""Characters of a pattern. Parsing is linear (a 100,000-character schema regex in 0.05 s);
what bounds the work is the DFA's budget (``dfa.MAX_POSITIONS``, ``dfa.MAX_SECONDS``), so a
50,000-character regex that compiles within it is not refused for its length (JSON Schema
regexes of real schemas run to 13,000-190,000 characters)."""
MAX_NESTING = 50
"""Groups inside groups. The parsers recurse once per level (interegular spends about eight
Python frames on each), so ``(`` × 10,000 would otherwise end in a ``RecursionError``."""
MAX_CLASS_CHARACTERS = 500_000
"""Characters named by all character classes together, counting each range in full.
interegular spells every class out as a set of characters: ``[\\x00-\\U0010ffff]`` is a
set of 1.1 million strings, and a 10,000-character pattern holds 450 such classes."""


class RegexError(ExplainedError, ValueError):
    """A pattern fsmviz cannot use: ``.message``, ``.position``, ``.hint``, ``.pointer()``."""


@dataclass(frozen=True)
class _Refusal:
    message: str
    hint: str


# Constructs found by scanning the pattern (outside character classes).
_GROUP_REFUSALS: dict[str, _Refusal] = {
    "(?=": _Refusal(
        "lookahead (?=…) is not supported: a DFA reads the output once, left to right",
        "fold the condition into the pattern itself, e.g. (?=\\d)\\w+ becomes \\d\\w*",
    ),
    "(?!": _Refusal(
        "negative lookahead (?!…) is not supported: a DFA reads the output once, left to right",
        "list what may follow instead, e.g. a character class [^x]",
    ),
    "(?<=": _Refusal(
        "lookbehind (?<=…) is not supported: the whole output is matched from its start",
        "write the preceding text into the pattern itself",
    ),
    "(?<!": _Refusal(
        "negative lookbehind (?<!…) is not supported",
        "write the allowed preceding characters into the pattern as a class",
    ),
    "(?P=": _Refusal(
        "backreferences are not supported: a DFA cannot remember earlier text",
        "repeat the group's pattern instead, e.g. (ab)\\1 becomes (ab)(ab)",
    ),
    "(?(": _Refusal(
        "conditional groups (?(…)…) are not supported",
        "write both branches as an alternation (a|b)",
    ),
    "(?>": _Refusal(
        "atomic groups (?>…) are not supported: they change which strings match",
        "use an ordinary group (…)",
    ),
}

_ESCAPE_REFUSALS: dict[str, _Refusal] = {
    "b": _Refusal(
        "word boundary \\b is not supported: it looks at characters on both sides",
        "remove it, or spell the boundary out, e.g. a space ' ' or [^A-Za-z0-9_]",
    ),
    "B": _Refusal("\\B (not a word boundary) is not supported", "remove it"),
    "A": _Refusal(
        "\\A is only allowed at the very start", "remove it: the whole output is matched"
    ),
    "Z": _Refusal("\\Z is only allowed at the very end", "remove it: the whole output is matched"),
    "z": _Refusal("\\z is only allowed at the very end", "remove it: the whole output is matched"),
    "G": _Refusal("\\G is not supported", "remove it"),
    "p": _Refusal(
        "Unicode properties \\p{…} are not supported",
        "list the characters as a class, e.g. [A-Za-zÀ-ÿ]",
    ),
    "P": _Refusal(
        "Unicode properties \\P{…} are not supported",
        "list the characters as a negated class, e.g. [^0-9]",
    ),
    "N": _Refusal("named characters \\N{…} are not supported", "write the character itself"),
    "X": _Refusal("grapheme clusters \\X are not supported", "use . or a character class"),
    "K": _Refusal("\\K is not supported", "remove it"),
    "g": _Refusal(
        "group references \\g<…> are not supported: a DFA cannot remember earlier text",
        "repeat the group's pattern instead, e.g. (ab)\\g<1> becomes (ab)(ab)",
    ),
}

_BACKREF = _Refusal(
    "backreferences like \\1 are not supported: a DFA cannot remember earlier text",
    "repeat the group's pattern instead, e.g. (ab)\\1 becomes (ab)(ab)",
)
_POSSESSIVE = _Refusal(
    "possessive quantifiers (*+, ++, ?+, {n}+) are not supported: they change which strings match",
    "drop the extra +, e.g. a*+ becomes a*",
)
_ANCHOR = _Refusal(
    "anchors ^ and $ may only stand where nothing can be read before ^ or after $ "
    "(the start or end of an alternative, in groups that are not repeated)",
    "remove it: the whole output always has to match, so an anchor adds nothing",
)

_NESTING = _Refusal(
    f"groups are nested more than {MAX_NESTING} deep",
    "flatten the groups: ((a)) means the same as a, and (?:ab|cd) needs no extra parentheses",
)
_WIDE_CLASSES = _Refusal(
    f"the character classes are too wide: together they name more than "
    f"{MAX_CLASS_CHARACTERS:,} characters (the limit)",
    "write a wide class negated, e.g. [^\\x00-\\x1f] rather than [\\x20-\\U0010ffff], or use "
    "(?s). for any character",
)
_OVERFLOW = _Refusal(
    "invalid regular expression: the repetition number is too large",
    "use repeat counts of a few thousand at most, or + and * instead of {n,m}",
)

_FLAG_GROUP = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?[:)]")
_SUPPORTED_FLAGS = set("ims")


def strip_anchors(pattern: str) -> str:
    """Drop a leading ``^``/``\\A`` and a trailing ``$``/``\\Z``/``\\z``: the whole output is
    always matched, so they are redundant. (``\\$`` is a literal dollar and stays.)"""
    for start in ("^", "\\A"):
        if pattern.startswith(start):
            pattern = pattern[len(start) :]
            break
    for end in ("$", "\\Z", "\\z"):
        if pattern.endswith(end) and not _is_escaped(pattern, len(pattern) - len(end)):
            pattern = pattern[: -len(end)]
            break
    return pattern


_COUNT = re.compile(r"\{(?:\d+(?:,\d*)?|,\d+)\}")  # {2}, {2,}, {2,5}, {,5}
_BRACED_ESCAPES = frozenset("pPxNo")  # \p{L}, \x{41}, \N{DASH}: braces that count nothing


def greedy_quantifiers(pattern: str) -> str:
    r"""``pattern`` with every lazy quantifier made greedy: ``+?`` -> ``+``, ``*?`` -> ``*``,
    ``??`` -> ``?``, ``{2,5}?`` -> ``{2,5}``. Under ``fullmatch`` the two take exactly the
    same texts (laziness only changes the order in which a backtracking matcher tries
    them), but the ``regex`` module's *partial* matching gets lazy quantifiers wrong:
    ``regex.fullmatch("ab+?bc", "abbcx", partial=True)`` matches, though no text that
    starts with ``abbcx`` matches ``ab+?bc``. Every naive judge that asks for a partial
    match (the token oracle, Learn's walk, the engine comparison) asks it of this.

    A ``?`` inside a class (``[+?]``), after a backslash (``\+?``: a literal ``+``, then
    an optional one) or opening a group (``(?:``) is no lazy quantifier and stays. Where
    backtracking is cut (an atomic group ``(?>…)``, a possessive ``a++``) laziness can
    change the language, and the pattern is left as it is.

    >>> greedy_quantifiers("ab+?bc"), greedy_quantifiers("(?:x|y)*?z{2,3}?w??")
    ('ab+bc', '(?:x|y)*z{2,3}w?')
    >>> print(greedy_quantifiers(r"[+?*?]\+?\??x{,2}?\p{L}+?"))
    [+?*?]\+?\??x{,2}\p{L}+
    >>> print(greedy_quantifiers(r"(?>a+?)b"))
    (?>a+?)b
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    lazy = committed = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            end = i + 2
            if pattern[i + 1 : i + 2] in _BRACED_ESCAPES and pattern.startswith("{", end):
                close = pattern.find("}", end)
                end = n if close < 0 else close + 1
            out.append(pattern[i:end])
            i = end
            continue
        if c == "[":
            end = _class_end(pattern, i) + 1
            out.append(pattern[i:end])
            i = end
            continue
        if c == "(":  # a "?" or "*" right after "(" opens a group: no quantifier
            committed = committed or pattern.startswith("(?>", i)
            end = i + 2 if pattern[i + 1 : i + 2] in ("?", "*") else i + 1
            if pattern.startswith("(?#", i):  # a comment, read through its ")"
                close = pattern.find(")", i)
                end = n if close < 0 else close + 1
            out.append(pattern[i:end])
            i = end
            continue
        count = _COUNT.match(pattern, i) if c == "{" else None
        quantifier = count.group() if count else c if c in "*+?" else None
        if quantifier is None:
            out.append(c)
            i += 1
            continue
        out.append(quantifier)
        i += len(quantifier)
        if pattern.startswith("?", i):  # lazy: the "?" goes
            lazy, i = True, i + 1
        elif pattern.startswith("+", i):  # possessive: backtracking is cut
            committed = True
            out.append("+")
            i += 1
    return "".join(out) if lazy and not committed else pattern


# A group's opening: "(", "(?:", "(?P<name>", "(?i:", "(?=" … (lookarounds are refused later).
_GROUP_OPEN = re.compile(r"\((?:\?(?:P?<[^>]*>|[a-zA-Z-]*:|[=!>]|<[=!]))?")


def _regular_anchors(pattern: str) -> frozenset[int]:
    """Positions of the anchors that are regular: under ``fullmatch`` each is the empty string.

    A start anchor (``^``, ``\\A``) is regular when nothing can have been read before it:
    it opens an alternative (after ``(``, ``|``, a global flag group like ``(?i)``, or the
    pattern's start) of a group that is itself such a first item, up to the top level, and
    no group around it is repeated. An end anchor (``$``, ``\\Z``, ``\\z``) likewise closes
    its alternatives up to the top level. ``(?i)^abc$`` and ``(a|$)`` qualify
    (``(a|$)`` fully matches ``a`` and the empty text); ``a^b``, ``(^a)*`` and ``^^`` do not.

    >>> [sorted(_regular_anchors(p)) for p in ["(?i)^abc$", "(a|$)", "a$b", "^^"]]
    [[4, 8], [3], [], [0]]
    """
    tokens = _anchor_tokens(pattern)
    partner = _group_partners(tokens)
    regular = set()
    for t, (kind, position) in enumerate(tokens):
        first = kind == "start" and _nothing_before(tokens, partner, t)
        if first or kind == "end" and _nothing_after(tokens, partner, t):
            regular.add(position)
    return frozenset(regular)


_Tokens = list[tuple[str, int]]
"""The anchor tokens, ``(kind, position)`` pairs (``_anchor_tokens``)."""


def _group_partners(tokens: _Tokens) -> dict[int, int]:
    """Each ``(`` token's ``)`` token and back (an unclosed group has none)."""
    partner: dict[int, int] = {}
    stack: list[int] = []
    for t, (kind, _) in enumerate(tokens):
        if kind == "(":
            stack.append(t)
        elif kind == ")" and stack:
            opened = stack.pop()
            partner[opened], partner[t] = t, opened
    return partner


def _repeated(tokens: _Tokens, close: int) -> bool:
    """Whether the group closed by token ``close`` is repeated (a quantifier follows)."""
    return close + 1 < len(tokens) and tokens[close + 1][0] == "quantifier"


def _nothing_before(tokens: _Tokens, partner: dict[int, int], t: int) -> bool:
    """Whether nothing can be read before token ``t``: going left, only flag groups and
    the openings of unrepeated groups, or an ``|`` whose group is itself such a first
    item, up to the pattern's start."""
    t -= 1
    while t >= 0:
        kind = tokens[t][0]
        if kind == "flags" or kind == "(" and t in partner and not _repeated(tokens, partner[t]):
            t -= 1
        elif kind == "|":
            depth = 0  # go out to the group holding this alternative
            while t >= 0 and not (tokens[t][0] == "(" and depth == 0):
                depth += 1 if tokens[t][0] == ")" else -1 if tokens[t][0] == "(" else 0
                t -= 1
            if t < 0:
                return True
            if t not in partner or _repeated(tokens, partner[t]):
                return False
            t -= 1
        else:
            return False
    return True


def _nothing_after(tokens: _Tokens, partner: dict[int, int], t: int) -> bool:
    """Whether nothing can be read after token ``t``: ``_nothing_before`` mirrored, going
    right through the closings of unrepeated groups and out of alternatives."""
    t += 1
    while t < len(tokens):
        kind = tokens[t][0]
        if kind == ")" and t in partner and not _repeated(tokens, t):
            t += 1
        elif kind == "|":
            depth = 0
            while t < len(tokens) and not (tokens[t][0] == ")" and depth == 0):
                depth += 1 if tokens[t][0] == "(" else -1 if tokens[t][0] == ")" else 0
                t += 1
            if t == len(tokens):
                return True
            if t not in partner or _repeated(tokens, t):
                return False
            t += 1
        else:
            return False
    return True


def _anchor_tokens(pattern: str) -> list[tuple[str, int]]:
    """The pattern as (kind, position) tokens, enough to place anchors: ``(``, ``)``, ``|``,
    ``flags`` (a global flag group), ``start``/``end`` (anchors), ``quantifier``, and
    ``item`` for everything else (a character, an escape, a whole class)."""
    tokens: list[tuple[str, int]] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            two = pattern[i : i + 2]
            tokens.append(
                ("start" if two == "\\A" else "end" if two in ("\\Z", "\\z") else "item", i)
            )
            i += 2
            continue
        if c == "[":
            tokens.append(("item", i))
            i = _class_end(pattern, i) + 1
            continue
        if pattern.startswith("(?#", i):
            i = _comment_end(pattern, i)
            continue
        flags = _FLAG_GROUP.match(pattern, i)
        if flags and flags.group().endswith(")"):
            tokens.append(("flags", i))
            i = flags.end()
            continue
        if c == "(":
            tokens.append(("(", i))
            i = _GROUP_OPEN.match(pattern, i).end()
            continue
        quantifier = _QUANTIFIER.match(pattern, i) if c == "{" else None
        if quantifier:
            tokens.append(("quantifier", i))
            i = quantifier.end()
            continue
        kind = {"^": "start", "$": "end", ")": ")", "|": "|"}.get(c)
        tokens.append((kind or ("quantifier" if c in "*+?" else "item"), i))
        i += 1
    return tokens


def _is_escaped(pattern: str, index: int) -> bool:
    """Whether the character at ``index`` is preceded by an odd number of backslashes."""
    backslashes = 0
    while index - backslashes - 1 >= 0 and pattern[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _check_shape(pattern: str) -> None:
    """Refuse groups nested deeper than ``MAX_NESTING`` and classes wider than
    ``MAX_CLASS_CHARACTERS``, pointing at the first ``(`` or ``[`` too many. A plain scan
    (escapes and comments skipped) that cannot recurse or allocate, run before the full
    parser (``_Reader`` keeps the same counts itself and leaves a pattern past them to it).
    A pattern with no ``[`` and at most ``MAX_NESTING`` ``(`` in all passes unscanned."""
    if "[" not in pattern and pattern.count("(") <= MAX_NESTING:
        return
    depth, width, i, n = 0, 0, 0, len(pattern)
    widths: dict[str, int] = {}  # a schema's regex repeats its string class per field
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            end = _class_end(pattern, i)
            text = pattern[i : end + 1]
            if text not in widths:
                widths[text] = _class_width(pattern, i, end)
            width += widths[text]
            if width > MAX_CLASS_CHARACTERS:
                _refuse(_WIDE_CLASSES, i)
            i = end
        elif pattern.startswith("(?#", i):
            i = _comment_end(pattern, i) - 1
        elif c == "(":
            depth += 1
            if depth > MAX_NESTING:
                _refuse(_NESTING, i)
        elif c == ")":
            depth = max(depth - 1, 0)
        i += 1


def _class_close(pattern: str, start: int) -> int | None:
    r"""Index of the ``]`` closing the class opened at ``start``, None if none does. A ``]``
    right after ``[`` or ``[^`` is a literal, as is every ``[`` inside a class.

    >>> _class_close("[]a]b", 0), _class_close("[^]", 0), _class_close("[a\\]", 0)
    (3, None, None)
    """
    found = _CLASS_BODY.match(pattern, start)
    return None if found is None else found.end() - 1


_CLASS_BODY = re.compile(r".\^?+\]?+(?:[^\\\]]|\\.)*+\]", re.DOTALL)
"""A class from its ``[`` to its ``]`` (``_class_close``), read in one match: ``^`` and a
``]`` first taken possessively (never given back to end the class early), an escape two
characters at once. A schema's regex reads ~130 classes, each once to find its end."""


def _class_end(pattern: str, start: int) -> int:
    """``_class_close``, or the last index where the class is never closed."""
    end = _class_close(pattern, start)
    return len(pattern) - 1 if end is None else end


def _class_width(pattern: str, start: int, end: int) -> int:
    """How many characters the class ``pattern[start:end + 1]`` names, a range ``a-z``
    counting all of its characters (negation ignored: ``[^…]`` is spelled out just the same)."""
    i = start + 1
    if pattern.startswith("^", i):
        i += 1
    width, first = 0, True
    while i < end or (first and i == end):  # a "]" first in the class is a character
        low, i = _class_item(pattern, i)
        first = False
        if pattern.startswith("-", i) and i + 1 < end and low is not None:
            high, after = _class_item(pattern, i + 1)
            if high is not None:
                width += max(high - low + 1, 1)
                i = after
                continue
        width += 1
    return width


def _class_item(pattern: str, i: int) -> tuple[int | None, int]:
    """The code point of the class item at ``i`` (None for ``\\d``, ``\\w`` and such sets)
    and the index after it, read as Python's ``re`` reads items inside a class."""
    if pattern[i] != "\\":
        return ord(pattern[i]), i + 1
    item = _CLASS_ESCAPE.match(pattern, i)
    if item is None:  # a backslash at the very end: re has refused it already
        return None, i + 1
    hex_digits = item.group(1) or item.group(2) or item.group(3)
    if hex_digits:
        return int(hex_digits, 16), item.end()
    if item.group(4):
        return int(item.group(4), 8), item.end()
    letter = item.group(5)
    if letter in "dDsSwWN":
        return None, item.end()
    return ord(_LETTER_ESCAPES.get(letter, letter)), item.end()


def _comment_end(pattern: str, start: int) -> int:
    """Index just after the ``)`` closing the comment ``(?#…`` at ``start``. As in ``re``, an
    escaped ``\\)`` does not close it."""
    i = start + 3
    while i < len(pattern) and pattern[i] != ")":
        i += 2 if pattern[i] == "\\" else 1
    return min(i + 1, len(pattern))


def _check_syntax(pattern: str) -> RegexError | None:
    """Judge the syntax with Python's own ``re`` (precise positions and messages). A pattern
    both ``re`` and ``regex`` reject is refused here. What only the ``regex`` module accepts
    (``\\p{L}``, ``\\m``, possessive ``a++`` before Python 3.11) is returned as ``re``'s
    verdict: ``_normalize`` refuses the constructs it knows with a hint, and ``parse``
    raises this error for the rest."""
    if pattern.endswith("\\z") and not _is_escaped(pattern, len(pattern) - 2):
        pattern = pattern[:-2] + "\\Z"  # the same end anchor; re knows \z only from 3.14
    try:
        with warnings.catch_warnings():  # "Possible set difference" and such: not the user's stderr
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except (OverflowError, ValueError):  # a{4294967296}, a{999…}: re raises these, not re.error
        raise RegexError(_OVERFLOW.message, _huge_repeat(pattern), _OVERFLOW.hint) from None
    except re.error as error:
        verdict = RegexError(
            f"invalid regular expression: {error.msg}", error.pos, _syntax_hint(error.msg)
        )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                regex.compile(pattern)
        except (regex.error, OverflowError, ValueError):
            raise verdict from None
        return verdict
    return None


def _huge_repeat(pattern: str) -> int | None:
    """Position of the first repeat ``{m,n}`` with a count ``re`` cannot hold, if found."""
    for match in _QUANTIFIER_SEARCH.finditer(pattern):
        huge = any(_is_huge(d) for d in match.groups())
        if huge and not _is_escaped(pattern, match.start()):
            return match.start()
    return None


def _is_huge(digits: str) -> bool:
    """Whether a repeat count is past ``re``'s largest. Told by length first: ``int`` refuses
    more than 4,300 digits.

    >>> _is_huge("4294967295"), _is_huge("9" * 5000), _is_huge("12"), _is_huge("")
    (True, True, False, False)
    """
    return len(digits) > len(str(MAXREPEAT)) or bool(digits) and int(digits) >= MAXREPEAT


def _syntax_hint(message: str) -> str | None:
    hints = {
        "missing )": "close the group with ) or escape the parenthesis as \\(",
        "unbalanced parenthesis": "remove the extra ) or escape it as \\)",
        "missing ]": "close the character class with ] or escape the bracket as \\[",
        "unterminated character set": "close the character class with ] or escape it as \\[",
        "nothing to repeat": "put the quantifier after something, or escape it (\\*, \\+, \\?)",
        "multiple repeat": "use a single quantifier, e.g. a+ instead of a++",
        "bad escape": "escape a literal backslash as \\\\",
        "invalid group reference": "backreferences are not supported; repeat the group instead",
        "unknown group": "backreferences are not supported; repeat the group instead",
        "bad character range": "write ranges low-high, e.g. [a-z] not [z-a]",
        "min repeat greater than max": "write repeats as {min,max} with min <= max",
        "unknown extension ?<": "name a group the Python way, (?P<name>…), or use (?:…)",
        "global flags not at the start": "put (?i) at the very start, or scope it: (?i:…)",
        "octal escape": "octal escapes go up to \\377; write other characters themselves",
    }
    for needle, hint in hints.items():
        if needle in message:
            return hint
    return None


def _normalize(pattern: str) -> str:
    """Refuse non-regular constructs, naming their position, and rewrite the spellings
    interegular reads differently from Python: ``\\uXXXX`` escapes and octal escapes
    (``\\0``, ``\\101``) become the characters themselves, a literal ``]`` first in a class
    (``[]a]``) becomes ``\\]``, a ``{`` that starts no repeat (``a{``, ``x{}``) becomes
    ``\\{``, comments ``(?#…)`` are dropped, and so are the anchors ``_regular_anchors``
    finds (each stands for the empty string there).

    One pass, left to right; each construct's piece says what it becomes and where the
    reading goes on."""
    regular = _regular_anchors(pattern)
    out: list[str] = []
    i, in_class = 0, False
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            text, i = _escape_at(pattern, i, in_class, regular)
        elif in_class:
            in_class = c != "]"
            text, i = c, i + 1
        elif pattern.startswith("(?#", i):
            text, i = "", _comment_end(pattern, i)
        elif c == "{":
            text, i = _brace_at(pattern, i)
        elif c == "[":
            text, i = _class_open_at(pattern, i)
            in_class = True
        elif c in "^$":
            if i not in regular:
                _refuse(_ANCHOR, i)
            text, i = "", i + 1
        else:
            _check_outside_class(pattern, i)
            text, i = c, i + 1
        out.append(text)
    return "".join(out)


def _escape_at(pattern: str, i: int, in_class: bool, regular: frozenset[int]) -> tuple[str, int]:
    """The escape at ``pattern[i]`` as interegular should read it, and where reading goes on:
    a ``\\uXXXX`` or octal escape becomes its character (escaped again if special), a
    regular anchor (``\\A``, ``\\Z``) is dropped, a back-reference or an escape interegular
    cannot read is refused; any other escape stays as written."""
    code = _UNICODE_ESCAPE.match(pattern, i)
    if not code:
        code = (_CLASS_OCTAL if in_class else _OCTAL_ESCAPE).match(pattern, i)
    if code:
        char = _escaped_char(code)
        return ("\\" + char if char in _SPECIAL else char), code.end()
    if not in_class:
        e = pattern[i + 1]
        if i in regular:
            return "", i + 2
        if e in _ESCAPE_REFUSALS:
            _refuse(_ESCAPE_REFUSALS[e], i)
        if e in "123456789":
            _refuse(_BACKREF, i)
    return pattern[i : i + 2], i + 2


def _brace_at(pattern: str, i: int) -> tuple[str, int]:
    """A ``{`` outside a class: a repeat ``{m,n}`` stays (a possessive ``{m,n}+`` is
    refused); any other ``{`` is the character itself, written ``\\{``."""
    repeat = _QUANTIFIER.match(pattern, i)
    if repeat is None:
        return "\\{", i + 1  # Python reads it as the character "{"
    if pattern.startswith("+", repeat.end()):
        _refuse(_POSSESSIVE, repeat.end())
    return repeat.group(), repeat.end()


def _class_open_at(pattern: str, i: int) -> tuple[str, int]:
    """A class's opening ``[`` or ``[^``; a ``]`` right after it is a literal, written
    ``\\]``."""
    negated = pattern.startswith("[^", i)
    text, i = ("[^", i + 2) if negated else ("[", i + 1)
    if pattern.startswith("]", i):
        return text + "\\]", i + 1
    return text, i


def _check_outside_class(pattern: str, i: int) -> None:
    """Refuse what ``pattern[i]`` starts, outside a class, if it is not regular: a group
    kind interegular lacks (look-around, named back-reference, …), an unsupported inline
    flag, a possessive quantifier (``a*+``)."""
    c = pattern[i]
    if c == "(":
        for prefix, refusal in _GROUP_REFUSALS.items():
            if pattern.startswith(prefix, i):
                _refuse(refusal, i)
        flags = _FLAG_GROUP.match(pattern, i)
        for flag in (flags.group(1) or "") + (flags.group(2) or "") if flags else "":
            if flag not in _SUPPORTED_FLAGS:
                _refuse(_Refusal(f"the inline flag {flag!r} is not supported", _FLAG_HINT), i)
    elif c in "*+?" and pattern.startswith("+", i + 1) and _is_quantifier_end(pattern, i):
        _refuse(_POSSESSIVE, i + 1)


_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})")
# Python's octal escapes outside a class: \0 with up to two more octal digits, or exactly
# three octal digits (\101 is "A"); \1 .. \99 otherwise are backreferences.
_OCTAL_ESCAPE = re.compile(r"\\(0[0-7]{0,2}|[0-7]{3})")
# Inside a class every \N with one to three octal digits is a character: [\0a], [\12].
_CLASS_OCTAL = re.compile(r"\\([0-7]{1,3})")
# What Python reads as a repeat: {3}, {2,5}, {2,}, {,5}, {,}. Any other "{" is a character.
_QUANTIFIER = re.compile(r"\{(?:\d+|\d*,\d*)\}")
_CLASS_ESCAPE = re.compile(
    r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([0-7]{1,3})|(.))", re.DOTALL
)
_LETTER_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_QUANTIFIER_SEARCH = re.compile(r"\{(\d*),?(\d*)\}")
MAXREPEAT = 4_294_967_295  # re's largest repeat count (sre_constants.MAXREPEAT)
_SPECIAL = set("\\^$.|?*+()[]{}-")
_FLAG_HINT = "use (?i) for case-insensitive, (?s) to let . match a newline"


def _escaped_char(code: re.Match[str]) -> str:
    """The character a ``\\uXXXX``, ``\\UXXXXXXXX`` or octal escape stands for. Out of range
    values (which ``re`` refuses anyway) become U+FFFD rather than an exception."""
    if code.re is not _UNICODE_ESCAPE:
        value = int(code.group(1), 8)
    else:
        value = int(code.group(1) or code.group(2), 16)
    return chr(value) if value <= 0x10FFFF else "\ufffd"


def _is_quantifier_end(pattern: str, i: int) -> bool:
    """Whether the ``*``, ``+`` or ``?`` at ``i`` is a quantifier (so a following ``+`` is
    possessive). The caller's scan has already skipped escapes; ``(?+`` is no quantifier."""
    return i > 0 and pattern[i - 1] != "(" and not _is_escaped(pattern, i)


def _refuse(refusal: _Refusal, position: int) -> None:
    raise RegexError(refusal.message, position, refusal.hint)


def parse(pattern: str) -> tuple[str, Pattern]:
    """Check ``pattern`` and parse it. Returns the pattern without redundant anchors and
    the syntax tree of it; raises ``RegexError`` for anything unusable. Kept for the last
    ``PARSED`` patterns (the tree is immutable): a run asks for the same pattern's tree
    two or three times (its size, its DFA, its first mask by derivatives)."""
    return read_classes(pattern)[:2]


ClassKey = tuple[frozenset[str], bool]
"""A character class as (its characters, negated)."""


def read_classes(pattern: str) -> tuple[str, Pattern, tuple[ClassKey, ...] | None]:
    """``parse`` and the distinct classes of the tree, in the order a walk from the left
    meets them (the dot as all but a newline), as ``_Reader`` noted them while reading:
    the first mask's classes without another walk (``regex_terms.TreeTerms.survey``).
    None where the full path read the pattern."""
    if not isinstance(pattern, str):
        raise RegexError("the pattern must be text", None, None)
    return _parsed(pattern)


PARSED = 64
"""Parsed patterns kept (``parse``)."""


TREE_SIZES: OwnedCache[int] = OwnedCache(maxsize=PARSED)
"""The positions each kept tree expands to, by the tree's identity (``dfa._tree_size``):
the reader's count for its trees, put here as it parses; others are counted by a walk."""


@bounded(maxsize=PARSED)
def _parsed(pattern: str) -> tuple[str, Pattern, tuple[ClassKey, ...] | None]:
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise RegexError(
            f"the pattern is too long ({len(pattern):,} characters; the limit is "
            f"{MAX_PATTERN_LENGTH:,})",
            MAX_PATTERN_LENGTH,
            "shorten it, e.g. with repeats {n} instead of written-out copies",
        )
    try:
        reader = _Reader(pattern)
        tree = reader.read()
        TREE_SIZES.put(tree, "positions", reader.size)
        return pattern, tree, tuple(reader.keys)  # the reader takes no anchor to strip
    except _Unusual:
        _check_shape(pattern)
        return (*_parse_full(pattern), None)


def _parse_full(pattern: str) -> tuple[str, Pattern]:
    """``parse`` for any syntax: ``re`` judges it, ``_normalize`` refuses and rewrites,
    interegular reads the result."""
    python_verdict = _check_syntax(pattern)
    expanded = _normalize(pattern)
    if python_verdict is not None:
        raise python_verdict
    try:
        return strip_anchors(pattern), _parse_tree(expanded)
    except (NoMatch, InvalidSyntax):
        raise RegexError(
            "this part of the pattern could not be read", None, "check for a stray character"
        ) from None
    except Unsupported as error:
        detail = str(error) or "this part of the pattern could not be read"
        raise RegexError(f"not supported: {detail}", None, None) from None
