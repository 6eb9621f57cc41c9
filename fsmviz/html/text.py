"""The escapers every view of the page shares.

Everything shown comes from a user (the pattern, the prompt) or from a model (token text,
which can hold ``<``, ``&``, quotes and control characters), so every string passes through
``html.escape`` on its way into markup.
"""

from __future__ import annotations

import html

from fsmviz.automaton.syntax import RegexError
from fsmviz.printable import VISIBLE_WHITESPACE, printable

__all__ = ["code_spans", "error_html", "esc", "shown"]


def esc(text: str) -> str:
    """``text`` escaped for HTML text and quoted attributes.

    >>> esc('<a href="x">')
    '&lt;a href=&quot;x&quot;&gt;'
    """
    return html.escape(text, quote=True)


def shown(text: str) -> str:
    """Token text with whitespace made visible (for tables, not for the output itself)."""
    return printable(text, VISIBLE_WHITESPACE)


def code_spans(text: str) -> str:
    """``text`` escaped, each pair of backticks a ``<code>`` (an unpaired one is kept): the
    findings of every doctor (a schema's, a grammar's) and the parser's place in words.

    >>> code_spans("`/a` is a <string>")
    '<code>/a</code> is a &lt;string&gt;'
    """
    parts = esc(text).split("`")
    if len(parts) % 2 == 0:
        return esc(text)
    return "".join(f"<code>{p}</code>" if k % 2 else p for k, p in enumerate(parts))


def error_html(error: Exception | None, pattern: str = "") -> str:
    """A clear message for a bad pattern (with a caret under the position) or any failure."""
    if error is None:
        return ""
    if isinstance(error, RegexError):
        caret = f"<pre>{esc(error.pointer(pattern))}</pre>" if error.position is not None else ""
        hint = f'<div class="hint">{esc(error.hint)}</div>' if error.hint else ""
        return f'<div class="error-box"><b>{esc(error.message)}</b>{caret}{hint}</div>'
    return f'<div class="error-box"><b>{esc(str(error))}</b></div>'
