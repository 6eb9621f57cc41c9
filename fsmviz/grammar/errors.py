"""``GrammarError``: a grammar that cannot be used, with where and what to write instead."""

from __future__ import annotations

from fsmviz.errors import FsmvizError, caret_after

__all__ = ["GrammarError", "line_column"]


class GrammarError(FsmvizError, ValueError):
    """A grammar fsmviz cannot use: ``.message`` (what is wrong), ``.line`` and ``.column``
    (1-based, or None when the problem has no one place) and ``.hint`` (what to write
    instead, or None).

    >>> print(GrammarError("undefined rule 'valu'", 3, 12, "define it: valu ::= ..."))
    undefined rule 'valu' (line 3, column 12). Hint: define it: valu ::= ...
    """

    def __init__(
        self,
        message: str,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.hint = hint

    def __str__(self) -> str:
        where = ""
        if self.line is not None:
            where = f" (line {self.line}" + (
                f", column {self.column})" if self.column is not None else ")"
            )
        hint = f" Hint: {self.hint}" if self.hint else ""
        return f"{self.message}{where}.{hint}"

    def excerpt(self, text: str) -> str:
        r"""The line of ``text`` the error is on, with a caret under its column ("" when the
        error has no line).

        >>> print(GrammarError("expected ::=", 2, 7).excerpt('root ::= a\na   =  "x"'))
        a   =  "x"
              ^
        """
        lines = text.split("\n")
        if self.line is None or not 1 <= self.line <= len(lines):
            return ""
        line = lines[self.line - 1]
        if self.column is None:
            return line
        return f"{line}\n{caret_after(line[: self.column - 1])}"

    def location(self) -> str:
        """``line:column`` for a command line (``"?"`` parts when unknown)."""
        return f"{self.line or '?'}:{self.column or '?'}"


def line_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in ``text``.

    >>> line_column("ab\\ncd", 4)
    (2, 2)
    """
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column
