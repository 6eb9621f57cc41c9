"""Spelling: characters the pattern allows but no token of the vocabulary can write.

The DFA speaks characters, the model speaks tokens. SmolLM2 has no token containing
``\\x04``: a pattern that needs it somewhere is a ``dead_end`` when every match needs it,
and an ``unreachable_char`` warning when another way remains. A character counts as
writable in a state when some token starting with its first byte can be read from there
(``cd`` writes ``c`` even without a ``c`` token). Characters the pattern never names, only
swept up by a class such as ``[^"]`` or ``.``, are grouped into a single note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fsmviz.cache import BoundedCache
from fsmviz.diagnose.case import Case
from fsmviz.diagnose.finding import Finding
from fsmviz.diagnose.fragments import PatternNode, atom_chars
from fsmviz.diagnose.text import cap, frag, plural, ranges_text
from fsmviz.tokens.trie import trie_of
from fsmviz.tokens.vocab import Vocabulary

Ranges = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class _Blocked:
    """Characters the DFA allows in ``state`` on class ``k`` that no token can write:
    ``ranges`` of code points, all of the class or not (``whole_edge``), and whether the
    pattern names them (``explicit``) rather than only sweeping them up in a class such as
    ``[^"]``."""

    state: int
    k: int
    ranges: Ranges
    whole_edge: bool
    explicit: bool


def spelling(case: Case) -> list[Finding]:
    """``dead_end`` when no token sequence can finish a match; otherwise an
    ``unreachable_char`` warning per group of characters the pattern names but tokens cannot
    write, and one note for those only swept up by a class such as ``[^"]``."""
    index = case.index
    name = f"the {case.vocab.name} vocabulary"
    blocked = _blocked(case)
    explicit = [b for b in blocked if b.explicit]
    incidental = [b for b in blocked if not b.explicit]
    if (
        not index.is_accepting(index.initial_state)
        and index.allowed_count(index.initial_state) == 0
    ):
        return [_dead_end(case, explicit or incidental, name)]
    grouped: dict[tuple[Ranges, bool], list[_Blocked]] = {}
    for b in explicit:
        grouped.setdefault((b.ranges, b.whole_edge), []).append(b)
    found = [
        _unreachable(case, ranges, whole, group, name) for (ranges, whole), group in grouped.items()
    ]
    if incidental:
        found.append(_swept(case, incidental, name))
    return found


def _swept(case: Case, incidental: list[_Blocked], name: str) -> Finding:
    """One note for the characters only swept up by a class that names others: ``[^"]``
    or ``.`` also stands for U+0000-U+0008 and the far planes of Unicode, which few
    vocabularies can write. The note names the class, where it is, and the characters."""
    states = sorted({b.state for b in incidental})
    swept = _merge([r for b in incidental for r in b.ranges])
    atom = _atom_for(case, swept)
    what = f"`{frag(case.text(atom))}`" if atom else "a class of the pattern"
    where = cap(case.where(states[0])) if len(states) == 1 else f"In {case.states(states)}"
    finding = Finding(
        "unreachable_char",
        "info",
        f"{where}, {what} also stands for characters the pattern does not name: "
        f"{ranges_text(swept, 6)}. No token of {name} can write them, so they never "
        "appear there. Harmless unless you need those characters.",
        states=tuple(states),
    )
    return case.locate(finding, atom)


def _dead_end(case: Case, causes: list[_Blocked], name: str) -> Finding:
    initial = case.index.initial_state
    atom, detail = None, ""
    if causes:
        first = causes[0]
        atom = _atom_for(case, first.ranges)
        fragment = f" (from `{frag(case.text(atom))}`)" if atom else ""
        more = f" ({plural(len(causes) - 1, 'more place')} like it)" if len(causes) > 1 else ""
        detail = (
            f" {cap(case.where(first.state))} the pattern needs "
            f"{ranges_text(first.ranges, 4)}{fragment}, and no token of {name} can write "
            f"it{more}."
        )
    finding = Finding(
        "dead_end",
        "error",
        f"No sequence of tokens from {name} can complete a match, so every generation "
        f"would get stuck.{detail}",
        states=tuple(sorted({initial, *(b.state for b in causes)})),
    )
    return case.locate(finding, atom)


def _unreachable(
    case: Case, ranges: Ranges, whole: bool, group: list[_Blocked], name: str
) -> Finding:
    """One warning for characters blocked alike in one or more states."""
    dfa = case.dfa
    reachable = set(case.index.states)
    first = group[0]
    atom = _atom_for(case, ranges)
    targets = sorted({dfa.transitions[g.state][g.k] for g in group})
    single = len(ranges) == 1 and ranges[0][0] == ranges[0][1]
    if whole:
        edges = "edge" if len(group) == 1 else "edges"
        consequence = f" The {edges} to {case.states(targets)} can never be taken"
    else:
        consequence = f" {'It' if single else 'They'} can never be written there"
    never = [t for t in targets if t not in reachable]
    if never:
        consequence += f", and {case.states(never)} {'is' if len(never) == 1 else 'are'}"
        consequence += " never reached"
    fragment = f" (from `{frag(case.text(atom))}`)" if atom else ""
    where = (
        cap(case.where(first.state))
        if len(group) == 1
        else f"In {case.states({g.state for g in group})}"
    )
    finding = Finding(
        "unreachable_char",
        "warning",
        f"{where} the pattern allows {ranges_text(first.ranges, 4)}{fragment}, but no token of "
        f"{name} can write {'it' if single else 'them'}.{consequence}.",
        states=tuple(dict.fromkeys([*(g.state for g in group), *targets])),
    )
    return case.locate(finding, atom)


def _blocked(case: Case) -> list[_Blocked]:
    """Every (state, class) whose characters some first byte cannot start a token for."""
    dfa, byte_dfa = case.dfa, case.index.byte_dfa
    table = byte_dfa.table[: dfa.num_states]
    single = trie_of(case.vocab).single_byte_tokens
    suspects = np.argwhere((table >= 0) & ~single[None, :])
    if len(suspects) == 0:
        return []
    by_first = _tokens_by_first_byte(case.vocab)
    cut: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for state, byte in suspects.tolist():
        if any(byte_dfa.run(tok, state) is not None for tok in by_first.get(byte, ())):
            continue
        lo, hi = _lead_range(byte)
        for k in dfa.transitions[state]:
            for a, b in dfa.classes[k].ranges(dfa.mentioned):
                a, b = max(a, lo), min(b, hi)
                if a <= b:
                    cut.setdefault((state, k), []).append((a, b))
    out = []
    for (state, k), ranges in sorted(cut.items()):
        merged = _merge(ranges)
        whole = _size(merged) == _size(dfa.classes[k].ranges(dfa.mentioned))
        explicit = any(
            chr(c) in dfa.mentioned for a, b in merged for c in range(a, min(b, a + 512) + 1)
        )
        out.append(_Blocked(state, k, merged, whole, explicit or whole))
    return out


def _merge(ranges: list[tuple[int, int]]) -> Ranges:
    """Overlapping or adjacent ranges joined, sorted."""
    merged: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if merged and merged[-1][1] >= a - 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return tuple(merged)


def _size(ranges: Sequence[tuple[int, int]]) -> int:
    return sum(b - a + 1 for a, b in ranges)


def _atom_for(case: Case, ranges: Ranges) -> PatternNode | None:
    """The first atom of the pattern text that stands for one of the characters in
    ``ranges`` (looking at the first 64)."""
    wanted = [c for lo, hi in ranges for c in range(lo, min(hi, lo + 63) + 1)][:64]
    for node in case.nodes:
        if node.kind != "atom":
            continue
        charset = atom_chars(case.text(node))
        if charset is None:
            continue
        members, others = charset
        if any(chr(c) in members for c in wanted):
            return node
        if others and any(chr(c) not in case.dfa.mentioned for c in wanted):
            return node
    return None


_BY_FIRST_BYTE: BoundedCache[dict[int, list[bytes]]] = BoundedCache(maxsize=4)


def _tokens_by_first_byte(vocab: Vocabulary) -> dict[int, list[bytes]]:
    """The vocabulary's tokens grouped by first byte, shortest first (cached per vocabulary)."""

    def build() -> dict[int, list[bytes]]:
        table: dict[int, list[bytes]] = {}
        for data in vocab.all_token_bytes:
            if data:
                table.setdefault(data[0], []).append(data)
        for tokens in table.values():
            tokens.sort(key=len)
        return table

    return _BY_FIRST_BYTE.get_or_build(vocab.fingerprint, build)


def _lead_range(lead: int) -> tuple[int, int]:
    """Code points whose UTF-8 encoding starts with ``lead``."""
    if lead < 0x80:
        return lead, lead
    if lead < 0xE0:
        base = (lead & 0x1F) << 6
        return max(base, 0x80), base + 0x3F
    if lead < 0xF0:
        base = (lead & 0x0F) << 12
        return max(base, 0x800), base + 0xFFF
    base = (lead & 0x07) << 18
    return max(base, 0x10000), min(base + 0x3FFFF, 0x10FFFF)
