"""The escapers every view of the page shares.

Everything shown comes from a user (the pattern, the prompt) or from a model (token text,
which can hold ``<``, ``&``, quotes and control characters), so every string passes through
``html.escape`` on its way into markup.
"""

from __future__ import annotations

import html
import re

from fsmviz.automaton.syntax import RegexError
from fsmviz.printable import VISIBLE_WHITESPACE, printable

__all__ = [
    "change_html", "code_spans", "error_html", "esc", "markdown_html", "shown", "summarised",
]  # fmt: skip


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


_NUMBERS = re.compile(r"\b\d+(?:, \d+){9,}(?:,? and \d+)?\b")


def summarised(text: str, shown: int = 6) -> str:
    """A message's long list of numbers (states, steps) cut to its first few and a count.

    >>> summarised("states 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 11 loop")
    'states 1, 2, 3, 4, 5, 6, … (11 in all) loop'
    """

    def cut(m: re.Match[str]) -> str:
        numbers = re.findall(r"\d+", m.group(0))
        return ", ".join(numbers[:shown]) + f", … ({len(numbers)} in all)"

    return _NUMBERS.sub(cut, text)


def markdown_html(text: str) -> str:
    """A message's light Markdown as HTML, everything escaped: ```code``` spans and
    ``**bold**``; nothing else is read.

    >>> markdown_html("write `a{0,9}` not **`a*`** <b>")
    'write <code>a{0,9}</code> not <b><code>a*</code></b> &lt;b&gt;'
    """
    parts = re.split(r"(`[^`\n]+`)", text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"<code>{esc(part[1:-1])}</code>")
        else:
            out.append(esc(part))
    joined = "".join(out)
    return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", joined)


def change_html(old: str, new: str, context: int = 24) -> str:
    """Where ``new`` differs from ``old``: the changed text marked, a little context around.

    >>> change_html("a:[^x]*,b:1", "a:[^x]{0,64},b:1", context=4)
    '<code>…[^x]<ins>{0,64}</ins>,b:1</code> in place of <code><del>*</del></code>'
    """
    start = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), 0)
    end = 0  # characters equal at both ends, not overlapping the start
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    before = new[max(start - context, 0) : start]
    after = new[len(new) - end : len(new) - end + context]
    lead = "…" if start > context else ""
    tail = "…" if end > context else ""
    changed = esc(new[start : len(new) - end])
    removed = esc(old[start : len(old) - end])
    shown = f"<code>{lead}{esc(before)}<ins>{changed}</ins>{esc(after)}{tail}</code>"
    return shown + (f" in place of <code><del>{removed}</del></code>" if removed else "")
