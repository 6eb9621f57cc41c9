"""Which regular expressions fsmviz accepts, and a clear error for every other one.

A regex that guides generation must describe a *regular language*: something a finite
automaton can check one character at a time, with no memory beyond its current state.
Most of Python's regex syntax qualifies. A few features do not, because they look
around the current position or remember earlier text:

* lookarounds ``(?=…)``, ``(?!…)``, ``(?<=…)``, ``(?<!…)``,
* backreferences ``\\1``, ``(?P=name)`` and conditionals ``(?(1)…)``,
* word boundaries ``\\b``, ``\\B`` and anchors in the middle of a pattern,
* possessive quantifiers and atomic groups, which change what backtracking may match.

``parse`` checks the syntax with the ``regex`` module (the same engine the naive
partial-match method uses), refuses the features above with the position and a hint,
and hands the rest to interegular's parser, whose syntax tree ``fsmviz.dfa`` compiles.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import interegular
import regex
from interegular.patterns import InvalidSyntax, Pattern, Unsupported
from interegular.utils.simple_parser import NoMatch

__all__ = ["RegexError", "parse", "strip_anchors"]

MAX_PATTERN_LENGTH = 10_000


class RegexError(ValueError):
    """A pattern fsmviz cannot use: what is wrong, where, and what to write instead."""

    def __init__(self, message: str, position: int | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.position = position
        self.hint = hint

    def __str__(self) -> str:
        where = f" (at position {self.position})" if self.position is not None else ""
        hint = f" Hint: {self.hint}" if self.hint else ""
        return f"{self.message}{where}.{hint}"

    def pointer(self, pattern: str) -> str:
        """The pattern with a caret under the offending position, for plain-text display."""
        if self.position is None:
            return pattern
        return f"{pattern}\n{' ' * self.position}^"


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
    "anchors ^ and $ may only appear at the very start and end of the pattern",
    "remove it: the whole output always has to match, so no anchor is needed",
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


def _is_escaped(pattern: str, index: int) -> bool:
    """Whether the character at ``index`` is preceded by an odd number of backslashes."""
    backslashes = 0
    while index - backslashes - 1 >= 0 and pattern[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _check_syntax(pattern: str) -> None:
    """Judge the syntax with Python's own ``re`` (precise positions and messages). What only
    the ``regex`` module accepts (``\\p{L}``, possessive ``a++``) passes on to ``_normalize``,
    which refuses it with a hint."""
    try:
        re.compile(pattern)
    except re.error as error:
        try:
            regex.compile(pattern)
        except regex.error:
            raise RegexError(
                f"invalid regular expression: {error.msg}", error.pos, _syntax_hint(error.msg)
            ) from None


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
    }
    for needle, hint in hints.items():
        if needle in message:
            return hint
    return None


def _normalize(pattern: str) -> str:
    """Refuse non-regular constructs, naming their position, and rewrite the two spellings
    interegular reads differently from Python: ``\\uXXXX`` escapes become the characters
    themselves, and a literal ``]`` first in a class (``[]a]``) becomes ``\\]``."""
    out: list[str] = []
    i, in_class = 0, False
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            code = _UNICODE_ESCAPE.match(pattern, i)
            if code:
                char = chr(int(code.group(1) or code.group(2), 16))
                out.append("\\" + char if char in _SPECIAL else char)
                i = code.end()
                continue
            if not in_class:
                if e in _ESCAPE_REFUSALS:
                    _refuse(_ESCAPE_REFUSALS[e], i)
                if e in "123456789":
                    _refuse(_BACKREF, i)
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            negated = pattern.startswith("[^", i)
            out.append("[^" if negated else "[")
            i += 2 if negated else 1
            if pattern.startswith("]", i):
                out.append("\\]")
                i += 1
            in_class = True
            continue
        elif c == "(":
            for prefix, refusal in _GROUP_REFUSALS.items():
                if pattern.startswith(prefix, i):
                    _refuse(refusal, i)
            flags = _FLAG_GROUP.match(pattern, i)
            for flag in (flags.group(1) or "") + (flags.group(2) or "") if flags else "":
                if flag not in _SUPPORTED_FLAGS:
                    _refuse(_Refusal(f"the inline flag {flag!r} is not supported", _FLAG_HINT), i)
        elif c in "^$":
            _refuse(_ANCHOR, i)
        elif c in "*+?}" and pattern.startswith("+", i + 1) and _is_quantifier_end(pattern, i):
            _refuse(_POSSESSIVE, i + 1)
        out.append(c)
        i += 1
    return "".join(out)


_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})")
_SPECIAL = set("\\^$.|?*+()[]{}-")
_FLAG_HINT = "use (?i) for case-insensitive, (?s) to let . match a newline"


def _is_quantifier_end(pattern: str, i: int) -> bool:
    """Whether the character at ``i`` ends a quantifier (so a following '+' is possessive)."""
    if pattern[i] == "}":
        return re.search(r"\{\d*,?\d*\}$", pattern[: i + 1]) is not None
    return i > 0 and not _is_escaped(pattern, i)


def _refuse(refusal: _Refusal, position: int) -> None:
    raise RegexError(refusal.message, position, refusal.hint)


def parse(pattern: str) -> tuple[str, Pattern]:
    """Check ``pattern`` and parse it. Returns the pattern without redundant anchors and
    interegular's syntax tree of it; raises ``RegexError`` for anything unusable."""
    if not isinstance(pattern, str):
        raise RegexError("the pattern must be text", None, None)
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise RegexError(
            f"the pattern is too long ({len(pattern):,} characters; the limit is "
            f"{MAX_PATTERN_LENGTH:,})",
            MAX_PATTERN_LENGTH,
            "shorten it, e.g. with repeats {n} instead of written-out copies",
        )
    _check_syntax(pattern)
    core = strip_anchors(pattern)
    offset = len(pattern) - len(pattern.lstrip("^")) if pattern.startswith("^") else 0
    if pattern.startswith("\\A"):
        offset = 2
    try:
        expanded = _normalize(core)
    except RegexError as error:
        error.position = None if error.position is None else error.position + offset
        raise
    try:
        return core, interegular.parse_pattern(expanded)
    except NoMatch as error:
        position = error.index if expanded == core else None
        raise RegexError(
            "this part of the pattern could not be read", position, "check for a stray character"
        ) from None
    except (Unsupported, InvalidSyntax) as error:
        raise RegexError(f"not supported: {error}", None, None) from None
