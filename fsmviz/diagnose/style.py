"""Style: pitfalls in how the pattern is written, found in its text alone.

``\\d \\w \\s`` are ASCII-only here, unlike in Python's ``re`` (``ascii_class``); a bare
``.`` between literal characters, as in ``gmail.com``, matches any character
(``unescaped_dot``); and a lazy ``+?`` changes nothing for a DFA, where the model alone
decides when to stop (``lazy_quantifier``).
"""

from __future__ import annotations

from fsmviz.diagnose.case import Case
from fsmviz.diagnose.finding import Finding
from fsmviz.diagnose.fragments import PatternNode, escapes_in
from fsmviz.diagnose.rewrites import LATIN1_LETTERS, widen_word_classes
from fsmviz.diagnose.text import frag

_ASCII_MEANING = {
    "d": "`\\d` means only the digits 0-9 here, while Python's re also accepts other "
    "Unicode digits such as ٣.",
    "w": "`\\w` means only ASCII letters, digits and _ here, while Python's re also "
    "accepts letters such as é or 日: names like José cannot be written.",
    "s": "`\\s` means only space, \\t, \\n, \\r, \\f and \\v here (newlines "
    "included), while Python's re also accepts other Unicode spaces.",
    "D": "`\\D` means any character but 0-9 here, so it also allows Unicode digits "
    "such as ٣ that Python's re would refuse.",
    "W": "`\\W` means anything but ASCII letters, digits and _ here, so it also allows "
    "letters such as é that Python's re would refuse.",
    "S": "`\\S` means anything but ASCII whitespace here, so it also allows Unicode "
    "spaces such as U+00A0 that Python's re would refuse.",
}


def style(case: Case) -> list[Finding]:
    found = []
    escapes: dict[str, list[PatternNode]] = {}
    for node in case.nodes:
        if node.kind == "atom":
            written = escapes_in(case.text(node))
            widened = LATIN1_LETTERS in case.text(node)  # widen_word_classes' fix
            for letter in "dwsDWS":
                if f"\\{letter}" in written and not (letter == "w" and widened):
                    escapes.setdefault(letter, []).append(node)
    for letter, nodes in escapes.items():
        found.append(_ascii(case, letter, nodes))
    for node in case.nodes:
        if node.kind == "seq":
            found += _dots(case, node)
        if node.kind == "repeat" and node.lazy:
            fragment = case.text(node)
            plain = fragment[:-1]
            finding = Finding(
                "lazy_quantifier",
                "info",
                f"`{frag(fragment)}` is lazy, but a DFA has no notion of lazy: it "
                f"allows exactly what `{frag(plain)}` allows, and the model decides "
                "when to stop. Bound the repeat instead if it must stay short.",
                suggestion=case.rewrite([(node, plain)]),
            )
            found.append(case.locate(finding, node))
    return found


def _ascii(case: Case, letter: str, nodes: list[PatternNode]) -> Finding:
    """One note per class letter, pointing at its first use; for ``\\w`` a widened pattern."""
    widen = letter == "w" and case.suggests
    suggestion = widen_word_classes(case.pattern, nodes) if widen else None
    finding = Finding(
        "ascii_class",
        "info",
        f"{_ASCII_MEANING[letter]} (outlines, a common library for constrained generation, "
        "reads it the same way.)"
        + (" The suggestion adds the Latin-1 letters À-ÿ." if suggestion else ""),
        suggestion=suggestion,
    )
    return case.locate(finding, nodes[0])


def _single_alnum(case: Case, item: PatternNode) -> bool:
    piece = case.text(item)
    return item.kind == "atom" and len(piece) == 1 and piece.isalnum()


def _dots(case: Case, seq: PatternNode) -> list[Finding]:
    """A ``.`` between a literal-ish item and a single letter or digit, in one sequence."""
    found = []
    items = seq.children
    for j in range(1, len(items) - 1):
        dot, before, after = items[j], items[j - 1], items[j + 1]
        if dot.kind != "atom" or case.text(dot) != ".":
            continue
        if not _single_alnum(case, after):
            continue
        before_text = case.text(before)
        if not (
            before.kind in ("repeat", "group")
            or (before.kind == "atom" and (before_text.isalnum() or before_text.startswith("[")))
        ):
            continue
        left = ""
        for item in reversed(items[:j]):
            if not _single_alnum(case, item):
                break
            left = case.text(item) + left
        right = ""
        for item in items[j + 1 :]:
            if not _single_alnum(case, item):
                break
            right += case.text(item)
        finding = Finding(
            "unescaped_dot",
            "warning",
            f"The `.` at position {dot.start} matches any character, so `{left}X{right}` is "
            f"allowed as well as `{left}.{right}`. Write `\\.` for a literal dot.",
            suggestion=case.rewrite([(dot, "\\.")]),
        )
        found.append(case.locate(finding, dot))
    return found
