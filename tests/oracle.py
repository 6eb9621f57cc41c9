"""The naive reference for the token index: loop over every token and ask `regex`.

This is the algorithm of the seed article ("High hopes"): after the model has
written the text P, a token t may come next exactly when P + t can still be
extended into a full match of the pattern:

    regex.fullmatch(pattern, P + t, partial=True) is not None

It is hopelessly slow (one partial match per token of a 49k vocabulary, every
step) and that is the point: it is obviously right, so the fast index is held
against it. Three precisions turn the one-liner into an exact definition.

1. **ASCII classes.** The engine (like interegular and outlines) reads ``\\d``,
   ``\\w`` and ``\\s`` as ASCII classes, so the oracle matches with
   ``flags=regex.ASCII``. A leading ``^`` and a trailing ``$`` mean nothing (the
   whole output must match anyway) and are dropped.

2. **Tokens are bytes, not characters.** A byte-level BPE vocabulary spells
   "日" (e6 97 a5) as b"\\xe6\\x97" + b"\\xa5", so P + t is a byte string that may
   stop in the middle of a character. We split it into the decoded complete
   part S and an incomplete tail of 0-3 bytes:

   * if P + t is not a prefix of any valid UTF-8 text: not allowed;
   * no tail: allowed iff ``regex.fullmatch(pattern, S, partial=True)``;
   * a tail: the next character must be one of the code points R whose UTF-8
     encoding starts with the tail (never a surrogate D800-DFFF). The token is
     allowed iff *some* c in R gives a partial match of S + c.

   R can hold 262,144 code points, so we do not try them all. Under ASCII
   flags a pattern can only tell two non-ASCII characters apart if one of them
   is written in the pattern (a literal, or the end of a class range such as
   一-龥): between such "breakpoints" every character behaves the same. So it
   is enough, and exact, to try R's two ends and x-1, x, x+1 for every
   non-ASCII character x written in the pattern, when they fall inside R.

3. **End of sequence.** EOS is allowed exactly when P is complete UTF-8 and
   ``regex.fullmatch(pattern, S)`` matches (no partial). Other special tokens
   (their bytes are b"") are never allowed.

What the oracle deliberately does *not* model: the engine also refuses a token
that leads into a state from which no sequence of *this vocabulary's* tokens
can reach a match (pattern ``ab`` with tokens ["a", "c"]: "a" partially
matches, but no token can ever add the "b"). The oracle is the seeds' naive
definition and allows "a". Tests that compare the two for equality therefore
use vocabularies in which every needed character (and, when tokens split
characters, every needed continuation byte) is a token of its own.
"""

from __future__ import annotations

import functools
import json
import re as _re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import regex

from fsmviz.automaton.syntax import greedy_quantifiers

__all__ = [
    "ORACLE_FLAGS",
    "avoid_regex_bugs",
    "breakpoints",
    "check_state_against_oracle",
    "compile_oracle",
    "describe_difference",
    "engine_allowed",
    "eos_allowed",
    "full_match_bytes",
    "load_seed_cases",
    "oracle_allowed",
    "oracle_allowed_strings",
    "prefix_is_viable",
    "split_utf8",
    "strip_anchors",
    "tail_code_point_ranges",
    "vocab_token_bytes",
    "walk_against_oracle",
]

ORACLE_FLAGS = regex.ASCII

_SURROGATES = (0xD800, 0xDFFF)
# (smallest, largest) code point of each UTF-8 length: the smallest excludes overlong forms.
_LENGTH_RANGES = {2: (0x80, 0x7FF), 3: (0x800, 0xFFFF), 4: (0x10000, 0x10FFFF)}


def strip_anchors(pattern: str) -> str:
    """Drop one leading ``^`` and one trailing unescaped ``$``: they mean nothing here."""
    if pattern.startswith("^"):
        pattern = pattern[1:]
    if pattern.endswith("$"):
        backslashes = len(pattern[:-1]) - len(pattern[:-1].rstrip("\\"))
        if backslashes % 2 == 0:  # "\$" is a literal dollar, "\\$" is a backslash + anchor
            pattern = pattern[:-1]
    return pattern


@functools.lru_cache(maxsize=256)
def compile_oracle(pattern: str) -> regex.Pattern:
    """The pattern as the oracle matches it: anchors dropped, ASCII classes, around the
    ``regex`` module's bugs (``avoid_regex_bugs``)."""
    return regex.compile(avoid_regex_bugs(strip_anchors(pattern)), flags=ORACLE_FLAGS)


_CASE_INSENSITIVE = _re.compile(r"\(\?[a-zA-Z-]*i")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}


def avoid_regex_bugs(pattern: str) -> str:
    """Rewrite ``[^x]`` (one excluded character) as the equivalent positive class, and make
    lazy quantifiers greedy (``fsmviz.automaton.syntax.greedy_quantifiers``: the same
    language, and the ``regex`` module's partial matching errs on lazy ones:
    ``regex.fullmatch("ab+?bc", "abbcx", partial=True)`` matches).

    The ``regex`` module (2026.11.15 and earlier) compiles a union of two or more such
    classes as if it were one class excluding all of them: ``[^a]|[^b]`` matches neither
    "a" nor "b" (it should match both), ``x[^a]|x[^b]`` does not match "xa", and
    ``[^\\n]|[^b]`` does not match "b". Python's ``re`` gets them right. Spelling ``[^a]``
    as ``[\\x00-`b-\\U0010ffff]`` means the same and stays out of that code path.
    """
    pattern = greedy_quantifiers(pattern)
    if _CASE_INSENSITIVE.search(pattern):
        return pattern  # [^a] would also exclude "A": leave such patterns alone
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if c != "[":
            out.append(c)
            i += 1
            continue
        end = _class_end(pattern, i)
        body = pattern[i + 1 : end]
        excluded = _single_excluded_char(body)
        if excluded is None:
            out.append(pattern[i : end + 1])
        else:
            x = ord(excluded)
            ranges = [(0, x - 1), (x + 1, 0x10FFFF)]
            out.append(
                "[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges if lo <= hi) + "]"
            )
        i = end + 1
    return "".join(out)


def _class_end(pattern: str, start: int) -> int:
    """Index of the ``]`` that closes the class opened at ``start`` (or the last index)."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1  # a "]" first in a class is literal
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
        elif pattern[i] == "]":
            return i
        else:
            i += 1
    return len(pattern) - 1


def _single_excluded_char(body: str) -> str | None:
    """The character of a class body ``^x`` or ``^\\x`` (an escaped literal), else None."""
    if not body.startswith("^"):
        return None
    rest = body[1:]
    if len(rest) == 1 and rest not in "[]\\":
        return rest
    if len(rest) == 2 and rest[0] == "\\":
        e = rest[1]
        if e in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[e]
        if not e.isalnum():
            return e  # an escaped punctuation character stands for itself
    return None


def _utf8_length(lead: int) -> int:
    """Length of the UTF-8 sequence that starts with byte ``lead`` (0: not a lead byte)."""
    if lead < 0x80:
        return 1
    if 0xC0 <= lead < 0xE0:
        return 2
    if 0xE0 <= lead < 0xF0:
        return 3
    if 0xF0 <= lead < 0xF8:
        return 4
    return 0  # a continuation byte (80-BF) or never valid (F8-FF)


def tail_code_point_ranges(tail: bytes) -> list[tuple[int, int]]:
    """Code points (inclusive ranges) whose UTF-8 encoding starts with ``tail``.

    ``tail`` is a lead byte followed by fewer continuation bytes than the
    character needs. The result is empty when no valid character starts that
    way (overlong forms such as c0/c1/e0 80, beyond U+10FFFF, or surrogates).

    >>> [tuple(map(hex, r)) for r in tail_code_point_ranges(b"\\xe6\\x97")]
    [('0x65c0', '0x65ff')]
    """
    if not tail:
        return []
    n = _utf8_length(tail[0])
    if n < 2 or len(tail) >= n:
        return []
    if any(not 0x80 <= b <= 0xBF for b in tail[1:]):
        return []
    value = tail[0] & (0xFF >> (n + 1))
    for b in tail[1:]:
        value = (value << 6) | (b & 0x3F)
    free_bits = 6 * (n - len(tail))
    lo = max(value << free_bits, _LENGTH_RANGES[n][0])
    hi = min(((value + 1) << free_bits) - 1, _LENGTH_RANGES[n][1])
    ranges = []
    for a, b in ((lo, min(hi, _SURROGATES[0] - 1)), (max(lo, _SURROGATES[1] + 1), hi)):
        if a <= b:
            ranges.append((a, b))
    return ranges


def split_utf8(data: bytes) -> tuple[str, bytes] | None:
    """Split bytes into (complete text, incomplete tail), or None if not a UTF-8 prefix.

    >>> split_utf8("日".encode()[:2])
    ('', b'\\xe6\\x97')
    >>> split_utf8(b"a\\xa5") is None
    True
    """
    try:
        return data.decode("utf-8"), b""
    except UnicodeDecodeError:
        pass
    # The tail starts at the last byte that is not a continuation byte, if that
    # byte announces a longer character than what follows it.
    start = len(data) - 1
    while start >= 0 and start >= len(data) - 4 and 0x80 <= data[start] <= 0xBF:
        start -= 1
    if start < 0 or start < len(data) - 4:
        return None
    n = _utf8_length(data[start])
    if n == 0 or len(data) - start >= n:
        return None  # the end is not an incomplete character, so the error is real
    tail = data[start:]
    if not tail_code_point_ranges(tail):
        return None
    try:
        return data[:start].decode("utf-8"), tail
    except UnicodeDecodeError:
        return None


_ESCAPED_CODE_POINT = _re.compile(
    r"\\(?:x\{([0-9a-fA-F]+)\}|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))"
)


@functools.lru_cache(maxsize=256)
def breakpoints(pattern: str) -> tuple[int, ...]:
    """Non-ASCII code points the pattern writes (literally, or as \\xHH \\uHHHH escapes).

    Under ASCII flags, two non-ASCII characters that are not separated by one of
    these (as x-1 | x | x+1) are indistinguishable to the pattern.
    """
    points = {ord(ch) for ch in pattern if ord(ch) >= 0x80}
    for m in _ESCAPED_CODE_POINT.finditer(pattern):
        cp = int(next(g for g in m.groups() if g), 16)
        if cp >= 0x80:
            points.add(cp)
    return tuple(sorted(points))


def _candidates(pattern: str, ranges: Iterable[tuple[int, int]]) -> list[str]:
    out: set[int] = set()
    points = breakpoints(pattern)
    for lo, hi in ranges:
        out.update((lo, hi))
        for x in points:
            for c in (x - 1, x, x + 1):
                if lo <= c <= hi:
                    out.add(c)
    return [chr(c) for c in sorted(out)]


def prefix_is_viable(pattern: str, data: bytes) -> bool:
    """True when the bytes ``data`` can still be extended into a full match."""
    split = split_utf8(data)
    if split is None:
        return False
    text, tail = split
    compiled = compile_oracle(pattern)
    if not tail:
        return compiled.fullmatch(text, partial=True) is not None
    return any(
        compiled.fullmatch(text + c, partial=True) is not None
        for c in _candidates(pattern, tail_code_point_ranges(tail))
    )


@functools.lru_cache(maxsize=256)
def _compile_stdlib(pattern: str) -> _re.Pattern | None:
    try:
        return _re.compile(strip_anchors(pattern), flags=_re.ASCII)
    except _re.error:
        return None  # syntax only the regex module knows


def full_match_bytes(pattern: str, data: bytes) -> bool:
    """True when ``data`` is complete UTF-8 text that fully matches the pattern.

    Cross-checked with Python's own ``re`` (a second, independent engine), so that a bug
    of the ``regex`` module shows up as an error instead of a wrong expectation.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    matched = compile_oracle(pattern).fullmatch(text) is not None
    stdlib = _compile_stdlib(pattern)
    if stdlib is not None and (stdlib.fullmatch(text) is not None) != matched:
        raise AssertionError(
            f"oracle unreliable: regex and re disagree on fullmatch({pattern!r}, {text!r})"
        )
    return matched


def eos_allowed(pattern: str, prefix: bytes) -> bool:
    """EOS may end the output exactly when the output so far is a full match."""
    return full_match_bytes(pattern, prefix)


def vocab_token_bytes(vocab) -> Sequence[bytes]:
    """Bytes of every token by id (``vocab.all_token_bytes``, else ``token_bytes(i)``)."""
    all_bytes = getattr(vocab, "all_token_bytes", None)
    if all_bytes is not None:
        return all_bytes
    return [vocab.token_bytes(i) for i in range(len(vocab))]


def oracle_allowed(pattern: str, vocab, prefix: bytes) -> set[int]:
    """Ids of the tokens allowed after the generated bytes ``prefix`` (naive, every token).

    ``vocab`` needs ``eos_token_id`` and ``all_token_bytes`` (or ``token_bytes``
    and ``len``). See the module docstring for the definition.
    """
    eos = vocab.eos_token_id
    # A text that can still become a match can be cut anywhere and still become one: so a
    # token whose first byte is an ASCII character that cannot follow ``prefix`` is refused
    # without trying the rest of it (at most 128 trials stand for most of the vocabulary;
    # a token that starts with a non-ASCII byte is tried whole, as before).
    dead_first = {b for b in range(0x80) if not prefix_is_viable(pattern, prefix + bytes([b]))}
    allowed = {
        token_id
        for token_id, tok in enumerate(vocab_token_bytes(vocab))
        # Special tokens (b"") other than EOS are never written.
        if token_id != eos
        and tok
        and tok[0] not in dead_first
        and prefix_is_viable(pattern, prefix + tok)
    }
    if eos_allowed(pattern, prefix):
        allowed.add(eos)
    return allowed


def oracle_allowed_strings(pattern: str, vocab, prefix: bytes) -> set[bytes]:
    """Like :func:`oracle_allowed`, but the allowed tokens' bytes (EOS left out)."""
    token_bytes = vocab_token_bytes(vocab)
    return {
        token_bytes[i] for i in oracle_allowed(pattern, vocab, prefix) if i != vocab.eos_token_id
    }


# ---------------------------------------------------------------------- helpers for the tests

SEED_CASES_PATH = Path(__file__).resolve().parent / "cases" / "seed_regexes.json"


def load_seed_cases() -> dict[str, Any]:
    """Regexes, prompts and toy vocabularies taken from the seed documents.

    A copy of ``../shared/cases/seed_regexes.json`` lives in ``tests/cases`` so that a clean
    clone (CI) has it too.
    """
    with SEED_CASES_PATH.open(encoding="utf-8") as f:
        return json.load(f)


def engine_allowed(index, state) -> set[int]:
    """``index.allowed_tokens(state)`` as a set of Python ints (it may be a numpy array)."""
    tokens = [int(t) for t in index.allowed_tokens(state)]
    assert len(tokens) == len(set(tokens)), f"allowed_tokens({state}) lists an id twice"
    return set(tokens)


def describe_difference(vocab, got: set[int], expected: set[int], limit: int = 12) -> str:
    """A readable account of two allowed sets that differ: which tokens, by bytes."""
    token_bytes = vocab_token_bytes(vocab)

    def show(ids: set[int]) -> str:
        items = sorted(ids)
        shown = ", ".join(f"{i}:{token_bytes[i]!r}" for i in items[:limit])
        more = f", ... ({len(items)} in all)" if len(items) > limit else ""
        return "{" + shown + more + "}"

    return (
        f"index allows but oracle refuses {show(got - expected)}; "
        f"oracle allows but index refuses {show(expected - got)}"
    )


def check_state_against_oracle(index, vocab, pattern: str, state, prefix: bytes) -> set[int]:
    """Assert the index's allowed set at ``state`` equals the oracle's after ``prefix``.

    Also checks that EOS is allowed exactly in accepting states, and that acceptance agrees
    with a full match of the text so far. Returns the allowed set.
    """
    got = engine_allowed(index, state)
    expected = oracle_allowed(pattern, vocab, prefix)
    assert got == expected, f"pattern {pattern!r}, prefix {prefix!r}: " + describe_difference(
        vocab, got, expected
    )
    accepting = bool(index.is_accepting(state))
    assert accepting == full_match_bytes(pattern, prefix), (
        f"pattern {pattern!r}, prefix {prefix!r}: is_accepting is {accepting}"
    )
    assert (vocab.eos_token_id in got) == accepting, (
        f"pattern {pattern!r}, prefix {prefix!r}: EOS allowed must equal is_accepting"
    )
    return got


def walk_against_oracle(
    index,
    vocab,
    pattern: str,
    pick: Callable[[list[int]], int],
    max_steps: int,
) -> tuple[bytes, Any, int]:
    """Walk the index from its initial state, comparing with the oracle at every state.

    ``pick`` chooses the next token among the allowed non-EOS ids (sorted). The walk stops
    after ``max_steps`` tokens, at a dead end, or when only EOS is left. Returns the bytes
    written, the final state and the number of states compared.
    """
    state = index.initial_state
    prefix = b""
    token_bytes = vocab_token_bytes(vocab)
    compared = 0
    for step in range(max_steps + 1):
        allowed = check_state_against_oracle(index, vocab, pattern, state, prefix)
        compared += 1
        candidates = sorted(allowed - {vocab.eos_token_id})
        if step == max_steps or not candidates:
            break
        token = pick(candidates)
        following = index.next_state(state, token)
        assert following is not None, (
            f"pattern {pattern!r}, prefix {prefix!r}: token {token} ({token_bytes[token]!r}) "
            f"is in allowed_tokens but next_state returned None"
        )
        assert following in index.states, f"next_state gave {following!r}, not in index.states"
        state = following
        prefix += token_bytes[token]
    return prefix, state, compared
