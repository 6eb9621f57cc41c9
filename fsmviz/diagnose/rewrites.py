"""Suggested rewrites: the whole pattern with a few pieces replaced, checked before offered.

A suggestion must be a pattern the user can paste back. ``rewrite`` replaces pieces of the
text and returns the result only if it is usable (``compiles``).

The rewrites themselves: an upper bound for an unbounded repeat, sized for the kind of text
it reads (``bounded``); a class without the ``.`` that lets a match go on (``drop_member``);
``\\w`` widened to Latin-1 letters.
"""

from __future__ import annotations

from collections.abc import Iterable

from fsmviz.automaton.dfa import MAX_POSITIONS, compile_regex
from fsmviz.automaton.dfa import _expanded_size as expanded_size
from fsmviz.automaton.syntax import RegexError, parse
from fsmviz.cache import bounded
from fsmviz.diagnose.fragments import WHITESPACE, PatternNode, atom_chars, class_members

FULL_CHECK_POSITIONS = 600
"""Suggestions up to this many character positions are compiled into their DFA before they
are offered. Larger ones (a bounded repeat of a whole JSON object, whose DFA takes a second
to build) are only parsed and measured; the tests compile every seed suggestion fully."""


@bounded(maxsize=512)
def compiles(pattern: str) -> bool:
    """Whether ``pattern`` is a usable pattern: parsed, within the size budget, and for
    small patterns also compiled into its DFA."""
    try:
        _, tree = parse(pattern)
    except RegexError:
        return False
    size = expanded_size(tree)
    if size > MAX_POSITIONS:
        return False
    if size > FULL_CHECK_POSITIONS:
        return True
    try:
        compile_regex(pattern)
    except RegexError:
        return False
    return True


def rewrite(pattern: str, edits: Iterable[tuple[PatternNode, str]]) -> str | None:
    """``pattern`` with each (node, replacement) applied, if that changes it and compiles.
    A node nested in another one that is replaced is left alone."""
    out = pattern
    last = len(out) + 1
    for node, replacement in sorted(edits, key=lambda e: e[0].start, reverse=True):
        if node.end > last:
            continue
        out = out[: node.start] + replacement + out[node.end :]
        last = node.start
    return out if out != pattern and compiles(out) else None


def bounded_loop(
    pattern: str, node: PatternNode, reopens: bool, shrink: int = 1
) -> tuple[str, str]:
    """A bounded rewrite of the unbounded repeat ``node``: (new fragment, why). The bound is a
    plausible length for the kind of text (12 digits, 32 letters, 8 repetitions of a group,
    one space), divided by ``shrink``. With ``reopens`` (a ``.`` in the loop leads out of
    the match), a ``.`` is dropped from the repeated class when that is all it changes."""
    base = pattern[node.start : node.quant_start]
    lo = node.lo
    charset = atom_chars(base) if node.children[0].kind == "atom" else None
    why = ""
    if charset is None:
        limit = max(2, 8 // shrink)
        hi = lo + limit if lo >= limit else limit
        why = f"at most {hi} repetitions"
    else:
        chars, others = charset
        if not others and chars and chars <= WHITESPACE:
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
                dropped = drop_member(base, ".")
                if dropped is not None:
                    base = dropped
                    why = (
                        "without `.` in the class, the model cannot chain `.x.x.x` "
                        "segments after a complete match; "
                    )
            hi = lo + limit if lo >= limit else limit
            why += f"at most {hi} characters"
    return base + _quantifier(lo, hi), why


def _quantifier(lo: int, hi: int) -> str:
    if (lo, hi) == (0, 1):
        return "?"
    if (lo, hi) == (1, 1):
        return ""
    if lo == hi:
        return f"{{{lo}}}"
    return f"{{{lo},{hi}}}"


def drop_member(atom: str, char: str) -> str | None:
    """The class ``atom`` without its single member ``char`` (written as such), or None."""
    if not atom.startswith("[") or atom.startswith("[^"):
        return None
    body = atom[1:-1]
    kept, dropped = [], False
    for a, b, is_range in class_members(body):
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
    before, after = atom_chars(atom), atom_chars(new)
    if before is None or after is None or after[0] != before[0] - {char} or after[1] != before[1]:
        return None
    return new


LATIN1_LETTERS = "À-ÖØ-öø-ÿ"
"""The Latin-1 letters that ``widen_word_classes`` adds to a ``\\w`` class."""


def widen_word_classes(pattern: str, atoms: list[PatternNode]) -> str | None:
    """``pattern`` with each ``\\w`` among ``atoms`` (alone or in a class) also taking the
    Latin-1 letters, if that compiles."""
    edits = []
    for atom in atoms:
        text = pattern[atom.start : atom.end]
        if text == "\\w":
            edits.append((atom, f"[\\w{LATIN1_LETTERS}]"))
        elif text.startswith("[") and not text.startswith("[^"):
            edits.append((atom, text[:-1] + LATIN1_LETTERS + "]"))
    return rewrite(pattern, edits)
