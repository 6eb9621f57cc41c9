"""Wording: how text, characters and numbers appear in a finding's message.

Two kinds of text get quoted. The model's output (``show``) is escaped and, when long, cut
to its end, which is where the action is. The pattern (``frag``) is quoted as written,
backslashes kept, and long pieces are shortened in the middle. Characters that are not
plain ASCII are named by code point (``\\x04`` (U+0004)), and counts come with their noun.
Every escape is ``fsmviz.printable``'s, with C's names (``\\n``) and the backslash doubled.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fsmviz.printable import C_ESCAPES, escape_char, printable

RAW_BYTE = re.compile(r"(\\x[0-9a-f]{2})")
"""How a token's text writes a byte that is not UTF-8 on its own (half of a character):
``Vocabulary.token_text`` decodes with ``backslashreplace``, so byte A2 is ``\\xa2``."""


def show(text: str, limit: int = 40) -> str:
    r"""Text as it appears in a message: control characters escaped, long text cut short
    (keeping its end, which is where the action is). A lone byte stays one escape; only
    a real backslash is doubled:

    >>> print(show("caf\\xc3 a\\b\n"))
    caf\xc3 a\\b\n
    """
    parts = RAW_BYTE.split(text)  # odd parts: the lone bytes' escapes
    shown = "".join(p if i % 2 else printable(p, C_ESCAPES) for i, p in enumerate(parts))
    if len(shown) > limit:
        shown = "…" + shown[-(limit - 1) :]
    return shown


def frag(pattern_text: str, limit: int = 60) -> str:
    """A piece of the pattern as it appears in a message: as written (backslashes kept),
    invisible characters escaped, long pieces shortened in the middle."""
    shown = "".join(c if c.isprintable() else escape_char(c, C_ESCAPES) for c in pattern_text)
    if len(shown) > limit:
        half = (limit - 1) // 2
        shown = shown[:half] + "…" + shown[-half:]
    return shown


def char_name(char: str) -> str:
    """``c``, ``é`` (U+00E9), ``\\x04`` (U+0004), a space (U+0020)."""
    if char == " ":
        return "a space (U+0020)"
    if char.isascii() and char.isprintable():
        return f"`{char}`"
    return f"`{escape_char(char, C_ESCAPES)}` (U+{ord(char):04X})"


def range_name(lo: int, hi: int) -> str:
    """An inclusive range of code points: each character when there are up to three."""
    if lo == hi:
        return char_name(chr(lo))
    if hi - lo <= 2:
        return ", ".join(char_name(chr(c)) for c in range(lo, hi + 1))
    return f"U+{lo:04X}–U+{hi:04X}"


def ranges_text(ranges: Sequence[tuple[int, int]], most: int) -> str:
    """The first ``most`` ranges by name, then ``and more`` if there are others."""
    names = ", ".join(range_name(lo, hi) for lo, hi in ranges[:most])
    return names + (" and more" if len(ranges) > most else "")


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def after(prefix: str) -> str:
    """``after `a@a.```, or ``at the start`` for the empty text."""
    return f"after `{show(prefix)}`" if prefix else "at the start"


def states_text(states: Sequence[int]) -> str:
    """``state 4``, ``states 4, 5 and 6``."""
    states = list(states)
    if len(states) == 1:
        return f"state {states[0]}"
    return "states " + ", ".join(map(str, states[:-1])) + f" and {states[-1]}"


STATES_LISTED = 6
"""Up to this many states a finding names them all; beyond, it says what they share."""


def states_summary(states: Sequence[int], prefixes: Sequence[str]) -> str:
    """``states_text`` for a few states; for many, what they have in common, as far as the
    DFA tells (``prefixes``: each state's shortest example text, ``example_prefixes``):
    all inside a quoted string (their texts open a ``"`` they have not closed), every
    state or all but a few, or all after the same text; else how many, and the first few.

    >>> from fsmviz.automaton.dfa import compile_regex
    >>> from fsmviz.diagnose.examples import example_prefixes
    >>> prefixes = example_prefixes(compile_regex('"[a-z]{7}"'))
    >>> states_summary([1, 2, 3, 4, 5, 6, 7, 8], prefixes)
    '8 states, all inside a quoted string (states 1, 2, 3, …)'
    >>> states_summary(range(9), prefixes)
    'all 10 states but state 9'
    >>> states_summary([2, 3], prefixes)
    'states 2 and 3'
    """
    states = sorted(set(states))
    n, total = len(states), len(prefixes)
    if n <= STATES_LISTED:
        return states_text(states)
    drawn = [prefixes[s] for s in states if s < total]  # beyond: inside a character
    rest = [s for s in range(total) if s not in set(states)]
    few = "states " + ", ".join(map(str, states[:3])) + ", …"
    if len(drawn) == n and all(_in_quotes(text) for text in drawn):
        return f"{n:,} states, all inside a quoted string ({few})"
    if len(drawn) == n and len(rest) <= 3:
        return f"all {total:,} states" + (f" but {states_text(rest)}" if rest else "")
    shared = _common_prefix(drawn) if len(drawn) == n else ""
    if shared.strip():
        return f"{n:,} states, all after `{show(shared)}` ({few})"
    return f"{n:,} {few[:-3]} and more"


def _in_quotes(text: str) -> bool:
    """Whether ``text`` leaves a ``"`` open (a backslash escapes the next character)."""
    inside, escaped = False, False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            inside = not inside
    return inside


def _common_prefix(texts: Sequence[str]) -> str:
    if not texts:
        return ""
    first, last = min(texts), max(texts)
    k = 0
    while k < min(len(first), len(last)) and first[k] == last[k]:
        k += 1
    return first[:k]


def percent(p: float) -> str:
    """``100%``, ``42%``, ``<1%``, ``0%``."""
    if p >= 0.995:
        return "100%"
    if p >= 0.01:
        return f"{p:.0%}"
    return "<1%" if p > 0 else "0%"


def plural(n: int, word: str) -> str:
    """A count with its noun, thousands separated: the one such helper (the page uses it too).

    >>> plural(1, "token"), plural(49152, "token")
    ('1 token', '49,152 tokens')
    """
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"
