r"""How a character that may not be visible is shown: the one escaper of the project.

Patterns and token texts hold characters a reader cannot see (a newline, ``\x04``), and
some that are worse than invisible: U+202E turns the rest of a line backwards, and a
control character breaks the XML of a drawing. Everything fsmviz shows passes through
``escape_char``: a character named in ``names`` is spelled that way, a printable one stays
as it is, and any other is written as a Python escape of its code point, as short as is
unambiguous (``\x04``, ``\u202e``, ``\U000e0001``).

    >>> printable("a\tb\x04\u202e\U000e0001 \\")
    'a\\tb\\x04\\u202e\\U000e0001 \\'
    >>> printable("a b\n", VISIBLE_WHITESPACE)
    'a␣b↵'

Each place picks its ``names``: the drawing's labels name space ``␣`` (an edge labelled
by a bare space would look empty), messages double the backslash (so ``\n`` written in a
pattern cannot be mistaken for a newline), token tables draw whitespace as arrows.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "C_ESCAPES",
    "LABEL_NAMES",
    "NEWLINE_AND_TAB",
    "VISIBLE_WHITESPACE",
    "bytes_label",
    "escape_char",
    "printable",
]

NEWLINE_AND_TAB: Mapping[str, str] = {"\n": "\\n", "\t": "\\t"}
"""The drawing's captions and edge labels: the two escapes everyone reads."""
C_ESCAPES: Mapping[str, str] = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}
"""Messages quoting the model's output: C escapes, the backslash doubled."""
LABEL_NAMES: Mapping[str, str] = {**C_ESCAPES, "\f": "\\f", "\v": "\\v", " ": "␣"}
"""The character DFA's class labels (``a-z ␣``): space shown, every C escape by name."""
VISIBLE_WHITESPACE: Mapping[str, str] = {"\n": "↵", "\t": "⇥", " ": "␣", "\r": "␍"}
"""Token tables: whitespace drawn as symbols, so ``" the"`` and ``"the"`` differ."""


def escape_char(char: str, names: Mapping[str, str] = NEWLINE_AND_TAB) -> str:
    r"""``char`` as ``names`` spells it, else itself when printable, else its escape.

    >>> [escape_char(c) for c in "é\n\x85\u2028\U0001f600\U000f0000"]
    ['é', '\\n', '\\x85', '\\u2028', '😀', '\\U000f0000']
    """
    named = names.get(char)
    if named is not None:
        return named
    if char.isprintable():
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: str, names: Mapping[str, str] = NEWLINE_AND_TAB) -> str:
    """``text`` with every character passed through ``escape_char``."""
    if text.isprintable() and not any(name in text for name in names):
        return text
    return "".join(escape_char(char, names) for char in text)


def bytes_label(raw: bytes) -> tuple[str, bool]:
    r"""Token bytes as every table shows them: the text, whitespace made visible, when they
    are whole UTF-8; else the bytes as hex pairs. Also whether it is the bytes (the one
    notation for a token that splits a character: ``日`` is ``e6 97 a5``, and a token may
    hold only ``e6 97``).

    >>> bytes_label(b"a b"), bytes_label(b"\xe6\x9d")
    (('a␣b', False), ('e6 9d', True))
    """
    try:
        return printable(raw.decode("utf-8"), VISIBLE_WHITESPACE), False
    except UnicodeDecodeError:
        return " ".join(f"{b:02x}" for b in raw), True
