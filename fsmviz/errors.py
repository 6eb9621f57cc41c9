"""The one base class of every error fsmviz raises, so a caller can catch them all.

    try:
        trace = fsmviz.generate(model, pattern, prompt)
    except fsmviz.FsmvizError as error:
        print(error)

What each kind means (each defined beside the code that raises it):

* ``RegexError`` (``fsmviz.automaton.syntax``, also a ``ValueError``): the pattern cannot be used.
* ``IndexTooLarge`` (``fsmviz.tokens.index``): the pattern is fine, but walking its whole token
  index takes too long; a generation still runs, without a safe end; the doctor skips the
  token-level checks and says so.
* ``ModelLoadError`` (``fsmviz.generation.models``), ``BundledModelMissing``
  (``fsmviz.bundled``): no model.
* ``ForwardPassError`` (``fsmviz.generation.batching``): the model failed during a step.
* ``RenderError`` (``fsmviz.drawing.render``): graphviz could not draw the DFA.
* ``InputError`` (here, also a ``ValueError``): a bad option, prompt or vocabulary; the
  message names the input, the value and what is allowed.

The first two are ``ExplainedError``s: a plain-English ``.message``, a ``.position`` in the
pattern (or None) and a ``.hint`` (what to write instead, or None).
"""

from __future__ import annotations

import unicodedata

__all__ = ["ExplainedError", "FsmvizError", "InputError", "caret_after"]


class FsmvizError(Exception):
    """Base of every error fsmviz raises."""


class InputError(FsmvizError, ValueError):
    """A bad option, prompt or vocabulary (not a pattern): the message says which, and what
    is allowed. A ``ValueError`` too, so code that caught ``ValueError`` still does.

    >>> raise InputError("max_tokens must be between 1 and 4096, not 0")
    Traceback (most recent call last):
    ...
    fsmviz.errors.InputError: max_tokens must be between 1 and 4096, not 0
    """


class ExplainedError(FsmvizError):
    """An error about a pattern: what is wrong, where, and what to write instead."""

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
        r"""The pattern with a caret line under the position, for plain text.

        The caret lines up in a terminal: a tab stays a tab, a wide character (CJK, most
        emoji) counts two columns, and in a pattern of several lines the caret's column is
        counted from the start of the line holding the position.

        >>> print(ExplainedError("x", 3).pointer("日本a^b"))
        日本a^b
             ^
        """
        if self.position is None:
            return pattern
        start = pattern.rfind("\n", 0, self.position) + 1
        return f"{pattern}\n{caret_after(pattern[start : self.position])}"


def caret_after(prefix: str) -> str:
    """A caret under the character after ``prefix``, as a terminal lines it up (a tab
    stays a tab, a wide character counts two columns).

    >>> caret_after("日本a")
    '     ^'
    """
    return "".join(_blank(c) for c in prefix) + "^"


def _blank(char: str) -> str:
    if char == "\t":
        return "\t"
    return "  " if unicodedata.east_asian_width(char) in "WF" else " "
