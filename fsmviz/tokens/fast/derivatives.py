"""The first allowed set without the whole DFA: only the states near the start, by derivatives.

``build_index`` starts from the pattern's minimal DFA, and for a long pattern building it
is most of the wait for the first mask: a 22-field JSON schema's regex has ~2,500 states,
~20 ms of Python. The first mask needs far less, only the states a token can reach from
the start, and those lie a few bytes into the pattern. This module finds just those, one
at a time, with Brzozowski's derivatives (llguidance answers its first mask the same way).

The *derivative* of a regex ``r`` by a character ``c`` is a regex for what may follow
``c`` in ``r``'s matches:

    d("ab|ac", "a") = "b|c"      d("[0-9]+", "7") = "[0-9]*"      d("ab", "b") = ∅

The regex left after the text read so far is a DFA state: deriving by each character in
turn walks the DFA without building it. Equal regexes must be found equal, so each is made
once (``regex_terms.Terms``: ``∅`` absorbs a concatenation, ``ε`` vanishes from one, alternatives
are a sorted set), and since no part of a pattern matches nothing (an empty class becomes
``∅`` at once), every regex but ``∅`` can still be finished. So a token is allowed exactly
when deriving by its characters never gives ``∅``.

Tokens are bytes, and one may end inside a character ("é" is two bytes). A state inside a
character is (regex, the character's bytes so far); it lives while some character the
regex can read next begins with those bytes. Where all of those characters derive alike
(under ``.`` every one does), the state is (that derivative, bytes left): one state for
every prefix alike, not one per prefix in the vocabulary.

The walk is ``levelwalk.walk_bytes``: one trie level per round in numpy, every node's
state from its parent's, over a table whose rows (a state's next state for each of 256
bytes) are derived the first time a token's path lands in that state. A counted repeat's
copies (each count of ``[^\\n]{1,20}``) lead alike, one to the next, so their rows are
written from one plan, not derived one by one (``counted_rows``).

Three answers come before that walk. A pattern that begins with a loop ``B{m,}`` and
whose every match is a text of ``B*`` allows what ``B*`` allows (``regex_terms.loop_led``:
``.*\\.json`` is ``[^\\n]*``). ``B*``, or a set ``S`` inside ``B`` then ``B*``, with
each set holding every character past ASCII or none, allows the tokens spelt with those
characters, read off per token (``levelwalk.loop_tokens``: ``[a-z]+``, identifiers).
A start that reads a few bytes (a keyword) walks its few tokens in Python
(``rowwalk.small_row``).

A counted repeat of a set bounded at ``TrieLevels.long`` or more (15 bytes on SmolLM2:
all but 243 tokens are that short) is let go first (``regex_terms.TreeTerms.relax_from``):
``[^,\\n]{1,20}`` is read as ``[^,\\n]{1,}``, which allows the same tokens of up to 20
bytes, in one loop state where each count was a state and a row a level. The few longer
tokens the relaxed pattern allows are then walked with the pattern as written
(``levelwalk.walk_long``), its copies' rows written together (``counted_rows``).

>>> from fsmviz import Vocabulary
>>> vocab = Vocabulary.from_strings(["a", "b", "ab", "ba", "c"], eos_token="</s>")
>>> [vocab.token_text(int(t)) for t in first_allowed_tokens("a(b|c)*", vocab)]
['a', 'ab']
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from fsmviz.automaton.dfa import set_bits
from fsmviz.automaton.syntax import ClassKey
from fsmviz.cache import bounded
from fsmviz.tokens.fast.counted_rows import CHAR, ENDS, ENTER, STAY, CountedPlan, counted
from fsmviz.tokens.fast.levelwalk import levels_of, loop_tokens, walk_bytes, walk_long, walk_root
from fsmviz.tokens.fast.regex_terms import (
    ALT,
    CAT,
    EPS,
    NONE,
    REP,
    SEQ,
    SET,
    TreeTerms,
    Unsure,
    loop_led,
)
from fsmviz.tokens.fast.rowwalk import Steps, small_row, steps_of
from fsmviz.tokens.index import build_index, built_index, with_eos
from fsmviz.tokens.trie import VocabTrie, trie_of
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["first_allowed_tokens"]

_CONTINUATION = range(0x80, 0xC0)
_LEADS = range(0xC2, 0xF5)  # bytes that begin a character of 2, 3 or 4 bytes
_CODES = {2: (0x80, 0x7FF), 3: (0x800, 0xFFFF), 4: (0x10000, 0x10FFFF)}  # by UTF-8 length


MAX_DERIVED = 2_000
"""States derived before the first set is handed to the index, whose construction runs
under a time budget (``dfa.MAX_SECONDS``): a pattern with many states a token's length from
the start, where the DFA may be too large to build, is refused there as it should be. The
22-field schema's first set derives 4, ``words`` 15."""


GROWTH = 3
"""The table grows by this many times its rows when full (64 rows, then 256: ``[^\n]{1,20}``
makes 161 states, and each growth copies the whole table)."""


def first_allowed_tokens(pattern: str, vocab: Vocabulary) -> np.ndarray:
    """Token ids allowed in the initial state of ``pattern`` (sorted; EOS among them when
    the empty text matches): ``build_index(pattern, vocab).allowed_tokens(0)``, without
    building the DFA. Raises ``RegexError`` where ``parse`` does or the pattern expands to
    too many positions; a pattern whose DFA would have too many states still answers
    here, and the index refuses it. The index answers instead where it is already built,
    under ``(?i)``, where a class accepts nothing, where a class holds only characters
    some byte of which is no token on its own (then a state could be alive in bytes and
    dead in tokens, which only the whole index finds), and past ``MAX_DERIVED`` states."""
    built = built_index(pattern, vocab)
    if built is None:
        trie = trie_of(vocab)
        try:
            relax = levels_of(trie).long.bound
            regexes, start = _Regexes.of(pattern, trie.single_byte_tokens, relax)
            walked = loop_led(regexes, start)
            tokens = _spelt_loop(regexes, walked, trie)
            if tokens is None:
                tokens = _NearStart(regexes, walked).first_row(trie)
            if regexes.relaxed is not None:
                tokens = _long_ones_walked(tokens, regexes, trie)
        except Unsure:
            built = build_index(pattern, vocab)
        else:
            return with_eos(tokens, vocab.eos_token_id) if regexes.nullable[start] else tokens
    return built.allowed_tokens(built.initial_state)


def _long_ones_walked(tokens: np.ndarray, relaxed: _Regexes, trie: VocabTrie) -> np.ndarray:
    """``tokens``, the first set of the pattern whose counted repeats ``relaxed`` let go
    (``regex_terms.TreeTerms.relax_from``: exact for the tokens of ``relaxed.relaxed``
    bytes or fewer, and a superset for the others), less the longer tokens that the
    pattern as written does not allow (``levelwalk.walk_long``)."""
    long = levels_of(trie).long

    def rows() -> _Rows:
        regexes = _Regexes()
        made = _Rows(regexes, regexes.convert(relaxed.tree, 0))
        made.ahead = long.longest  # copies a token can reach
        return made

    return walk_long(long, relaxed.relaxed, rows, tokens)


def _spelt_loop(regexes: _Regexes, regex: int, trie: VocabTrie) -> np.ndarray | None:
    """``levelwalk.loop_tokens`` where ``regex`` is ``B*``, or ``SB*`` with ``S`` a set
    inside ``B`` (``S`` then a ``T`` that ``loop_led`` makes ``B*``: its tokens are
    ``SB*``'s), each set holding every character beyond ASCII or none of them: the
    tokens spelt with ``B``'s characters (the first with ``S``'s), read off per token,
    not walked (``[^\\n]*``, ``[a-z]*``, what ``loop_led`` makes of ``.*\\.json``,
    ``[A-Za-z_][A-Za-z0-9_]*``). An option ``ε`` beside one other allows no token.
    Else None."""
    nodes = regexes.nodes
    node = nodes[regex]
    if node[0] == ALT and len(node[1]) == 2 and node[1][0] == EPS:
        node = nodes[node[1][1]]  # ``ε`` sorts first: the other option's tokens
    head = None
    if node[0] in (CAT, SEQ):
        first, rest = node[1:3] if node[0] == CAT else regexes.head(node)
        head, node = first, nodes[loop_led(regexes, rest)]
        if nodes[head][0] != SET or _span(regexes, head) is None:
            return None
    if node[0] != REP or node[2] != 0 or node[3] is not None or nodes[node[1]][0] != SET:
        return None
    base = node[1]
    beyond = _span(regexes, base)
    if beyond is None or (head is not None and not regexes.covers(base, head)):
        return None
    spelt_head = None if head is None else (regexes.ascii[head], bool(_span(regexes, head)))
    return loop_tokens(trie, regexes.ascii[base], beyond, spelt_head)


def _span(regexes: _Regexes, charset: int) -> bool | None:
    """Whether the set holds every character past ASCII (True) or none (False); None
    where it holds some."""
    if regexes.covers(charset, regexes.charset(_BEYOND_ASCII)):
        return True
    return False if regexes.bounds[charset][-1] <= 0x80 else None


_ROOT = np.zeros(1, dtype=np.intp)
SMALL_START = 12
"""``_NearStart._small_row`` is tried where the start reads this many bytes or fewer (a
keyword's one or two, a digit's ten): a UUID's 22 hex digits lead to so many tokens
that the walk gave up past ``rowwalk.SMALL_WORK`` steps, ~0.3 ms spent (rows made on the way
are kept for the byte walk)."""

_BEYOND_ASCII = ((0x80, 0xD7FF), (0xE000, 0x10FFFF))
"""Every character past ASCII (no surrogate is one)."""


class _Regexes(TreeTerms):
    """A pattern's terms (``regex_terms.TreeTerms``) and their derivatives: what a match
    may begin with (``heads``), what is left after one character (``derive``), and which
    characters derive alike (``code_signature``, ``signature``), so that a state's 256
    bytes take a handful of derivatives, not 256.

    >>> r = _Regexes()
    >>> a, b = r.charset(((97, 97),)), r.charset(((98, 98),))
    >>> ab = r.cat(a, b)
    >>> r.derive(r.alt([ab, r.cat(a, a)]), 97) == r.alt([b, a])
    True
    >>> r.derive(ab, 98)
    0
    """

    def __init__(self, relax_from: int | None = None) -> None:
        super().__init__(relax_from)
        self.tree: object = None
        self._heads: dict[int, tuple[int, ...]] = {NONE: (), EPS: ()}
        self._derived: dict[tuple[int, int], int] = {}  # (regex, signature) -> derivative
        self._signatures: dict[tuple[tuple[int, ...], int, int], int] = {}  # ``signature``
        self._by_code: dict[tuple[int, int], int] = {}  # (regex, code) -> ``derive``
        self._ascii_heads: dict[int, int] = {}  # regex -> its heads' ASCII (``_may_read``)

    @classmethod
    def of(
        cls, pattern: str, single_bytes: np.ndarray, relax_from: int | None = None
    ) -> tuple[_Regexes, int]:
        """The regexes of ``pattern`` and the whole pattern's (its counted repeats of
        ``relax_from`` or more let go: ``TreeTerms.relax_from``; ``tree`` keeps the syntax
        tree). Raises ``RegexError`` as ``compile_regex`` would before building anything,
        and ``Unsure`` where only the whole index can answer: under ``(?i)``, where a
        class accepts nothing, and where some class is not ``spellable`` with
        ``single_bytes``, the bytes that are tokens on their own."""
        regexes = cls(relax_from)
        tree, keys = regexes.survey(pattern)
        regexes.tree = tree
        if not regexes.spellable(keys, single_bytes):
            raise Unsure
        return regexes, regexes.convert(tree, 0)

    def heads(self, regex: int) -> tuple[int, ...]:
        """The sets a match of ``regex`` may begin with."""
        found = self._heads.get(regex)
        if found is None:
            node = self.nodes[regex]
            kind = node[0]
            if kind == SET:
                found = (regex,)
            elif kind in (CAT, SEQ):
                first, rest = node[1:3] if kind == CAT else self.head(node)
                found = self.heads(first)
                if self.nullable[first]:
                    found = tuple(dict.fromkeys(found + self.heads(rest)))
            elif kind == ALT:
                found = tuple(dict.fromkeys(h for option in node[1] for h in self.heads(option)))
            else:  # REP
                found = self.heads(node[1])
            self._heads[regex] = found
        return found

    def signature(self, heads: tuple[int, ...], lo: int, hi: int) -> int:
        """Which ``heads`` hold all of ``lo..hi`` (bit k for ``heads[k]``), when each holds
        all or none of it; -1 when some head holds only part. (Kept: every state whose
        regex has these heads asks it again for each lead byte.)"""
        key = (heads, lo, hi)
        found = self._signatures.get(key)
        if found is None:
            found = self._signatures[key] = self._signature(heads, lo, hi)
        return found

    def _signature(self, heads: tuple[int, ...], lo: int, hi: int) -> int:
        signature = 0
        for k, head in enumerate(heads):
            bounds = self.bounds[head]
            i = bisect_right(bounds, lo)
            if i % 2 == 1:  # lo is inside a range of the set: all of lo..hi must be too
                if bounds[i] <= hi:
                    return -1
                signature |= 1 << k
            elif i < len(bounds) and bounds[i] <= hi:  # a range starts inside lo..hi
                return -1
        return signature

    def derive(self, regex: int, code: int) -> int:
        """``d(regex, chr(code))``, kept per ``(regex, code)``: the derivatives of one
        state's bytes meet the same parts again (each option of ``.*(error|warning)``'s
        states derives ``.*(error|warning)`` anew). A regex none of whose ``heads`` holds
        ``code`` derives to ``∅`` without reading its parts."""
        key = (regex, code)
        found = self._by_code.get(key)
        if found is None:
            if regex <= EPS or not self._may_read(regex, code):
                found = NONE
            else:
                found = self._derive(regex, code)
            self._by_code[key] = found
        return found

    def _may_read(self, regex: int, code: int) -> bool:
        """Whether a head of ``regex`` holds ``code``: for ASCII, one bit of the heads'
        ASCII members together (kept per regex), not a search of each head's ranges."""
        if code < 128:
            mask = self._ascii_heads.get(regex)
            if mask is None:
                mask = 0
                for head in self.heads(regex):
                    mask |= self.ascii[head]
                self._ascii_heads[regex] = mask
            return mask >> code & 1 == 1
        return any(self.contains(h, code) for h in self.heads(regex))

    def _derive(self, regex: int, code: int) -> int:
        node = self.nodes[regex]
        kind = node[0]
        if kind == SET:  # ``derive`` found that it holds ``code``
            return EPS
        if kind in (CAT, SEQ):
            first, rest = node[1:3] if kind == CAT else self.head(node)
            derived = self.cat(self.derive(first, code), rest)
            if self.nullable[first]:
                derived = self.alt([derived, self.derive(rest, code)])
            return derived
        if kind == ALT:
            return self.alt([self.derive(option, code) for option in node[1]])
        base, least, most = node[1], node[2], node[3]
        rest = self.rep(base, max(least - 1, 0), None if most is None else most - 1)
        return self.cat(self.derive(base, code), rest)

    def code_signature(self, heads: tuple[int, ...], code: int) -> int:
        """Which ``heads`` hold ``code`` (bit k for ``heads[k]``). Characters that every
        head treats alike derive alike (all the letters of a JSON string give the same
        string state): see ``derived``."""
        signature = 0
        for k, head in enumerate(heads):
            if self.contains(head, code):
                signature |= 1 << k
        return signature

    def derived(self, regex: int, signature: int, code: int) -> int:
        """``derive(regex, code)``, kept per ``(regex, signature)``: ``signature`` must be
        ``code``'s (``code_signature``)."""
        key = (regex, signature)
        found = self._derived.get(key)
        if found is None:
            found = self._derived[key] = self.derive(regex, code)
        return found

    def spellable(self, keys: tuple[ClassKey, ...], single_bytes: np.ndarray) -> bool:
        """Whether each class of ``keys`` (``survey``'s) holds a character all of whose
        bytes are tokens on their own (``single_bytes``), every continuation byte being
        one too (or the classes are ASCII). Then whatever can be finished in bytes can be
        finished in tokens, one byte per token, a token that ends inside a character
        included. False too where a class accepts nothing (its branch is ∅: rare, and
        the DFA prunes it). A class of a few characters that holds an ASCII one of a
        single-byte token (all of a schema's 53: its keys' letters, its digits, a JSON
        string's class) is read from its key, no set made (one is made when a
        derivative reaches it)."""
        usable, continued, leads = _spelling(single_bytes.tobytes())
        for chars, negated in keys:
            if continued and len(chars) <= _FEW and _ascii_spelt(chars, negated, usable):
                continue
            s = self.class_set(chars, negated)
            if s == NONE:
                return False
            if not continued:
                # A token may end inside a character that no token can then finish: only
                # the whole index knows, unless the pattern reads no such character.
                if not (self.ascii[s] & usable and self.bounds[s][-1] <= 128):
                    return False
            elif not (self.ascii[s] & usable or any(self.meets(s, lo, hi) for lo, hi in leads)):
                return False
        return True


_FEW = 256
"""Classes of up to this many characters are tried by ``_ascii_spelt`` first."""


def _ascii_spelt(chars: frozenset[str], negated: bool, usable: int) -> bool:
    """Whether the class ``chars`` (all others where ``negated``) holds an ASCII character
    whose byte is a token on its own (bit ``b`` of ``usable`` for byte ``b``); False
    leaves the question to its set.

    >>> b = 1 << ord("b")
    >>> _ascii_spelt(frozenset("ab"), False, b), _ascii_spelt(frozenset("b"), True, b)
    (True, False)
    """
    if negated:
        for c in chars:
            if (code := ord(c)) < 128:
                usable &= ~(1 << code)
        return usable != 0
    return any((code := ord(c)) < 128 and usable >> code & 1 for c in chars)


@bounded(maxsize=64)
def _spelling(single: bytes) -> tuple[int, bool, tuple[tuple[int, int], ...]]:
    """What ``_Regexes.spellable`` reads of a vocabulary's single-byte tokens (``single``:
    256 flags), kept per vocabulary (~0.1 ms a pattern): the ASCII ones (bit ``b`` for
    byte ``b``), whether every continuation byte is one, and the code points each lead
    byte that is one begins.

    >>> usable, continued, leads = _spelling(bytes([1] * 98 + [0] * 158))
    >>> usable == (1 << 98) - 1, continued, leads
    (True, False, ())
    """
    flags = np.frombuffer(single, dtype=bool)
    usable = int.from_bytes(np.packbits(flags[:128], bitorder="little").tobytes(), "little")
    continued = bool(flags[_CONTINUATION.start : _CONTINUATION.stop].all())
    leads = np.flatnonzero(flags[_LEADS.start : _LEADS.stop]).tolist()
    return usable, continued, tuple(_LEAD_CODES[k] for k in leads)


@bounded(maxsize=4096)
def _columns(bits: int) -> np.ndarray:
    """The bytes of a 256-bit set, as an array of byte values.

    >>> _columns(0b101).tolist()
    [0, 2]
    """
    return np.flatnonzero(np.unpackbits(np.frombuffer(bits.to_bytes(32, "little"), np.uint8),
                                        bitorder="little"))  # fmt: skip


def _length(lead: int) -> int:
    """The length of a UTF-8 character from its first byte (``_LEADS``)."""
    return 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


@bounded(maxsize=4096)
def _interval(prefix: bytes) -> tuple[int, int]:
    """The code points whose UTF-8 form begins with ``prefix`` (a lead byte, then
    continuation bytes): ``lo > hi`` when there is none (an overlong form).

    >>> [hex(c) for c in _interval(b"\\xc3")], [hex(c) for c in _interval(b"\\xe0\\xa0")]
    (['0xc0', '0xff'], ['0x800', '0x83f'])
    >>> _interval(b"\\xe0\\x80")  # would spell U+0000..U+003F in three bytes
    (2048, 63)
    """
    lead, length = prefix[0], _length(prefix[0])
    value = lead & (0x7F >> length)
    for byte in prefix[1:]:
        value = value << 6 | (byte & 0x3F)
    missing = 6 * (length - len(prefix))
    least, most = _CODES[length]
    return max(value << missing, least), min((value + 1 << missing) - 1, most)


_LEAD_CODES = [_interval(bytes([lead])) for lead in _LEADS]
"""The code points each lead byte begins (``_spelling``), by its position in ``_LEADS``."""


_Partial = bytes | tuple[int, int, int]
"""What a state inside a character knows of it: ``b""`` between characters; the bytes read
so far; or, where every completion derives alike (``_layout_of``), how many bytes
are left and the range of the next one (its regex is then the derivative to come)."""


def _second_bytes(lead: int) -> tuple[int, int]:
    """The range of the byte after ``lead`` that can still spell a character (``\\xe0``
    must be followed by a0..bf: lower would spell a shorter character's code point)."""
    valid = []
    for byte in _CONTINUATION:
        lo, hi = _interval(bytes([lead, byte]))
        if lo <= hi:
            valid.append(byte)
    return valid[0], valid[-1]


_NEXT = {bytes([lead]): _second_bytes(lead) for lead in _LEADS}


Sets = tuple[tuple[tuple[int, int], ...], ...]
"""Character sets, each as its code point ranges (a ``SET`` term's), in the order of a
regex's ``heads``."""


@dataclass(frozen=True, eq=False)
class _Layout:
    """A ``_layout_of``: its ``groups``, and ``group_of[b]``, the position of byte ``b``'s
    group among them (``len(groups)`` for a byte in none), so that a row is one gather of
    the groups' targets (``_Rows.make_row``), not one write per group.

    >>> _Layout.of(((0b110, CHAR, 1, 1, b""),)).group_of[:4].tolist()
    [1, 0, 0, 1]
    """

    groups: tuple[tuple[int, int, int, int, object], ...]
    group_of: np.ndarray

    @staticmethod
    def of(groups: tuple[tuple[int, int, int, int, object], ...]) -> _Layout:
        group_of = np.full(256, len(groups), dtype=np.intp)
        for k, (bits, *_) in enumerate(groups):
            group_of[_columns(bits)] = k
        group_of.flags.writeable = False
        return _Layout(groups, group_of)


@bounded(maxsize=2_048)
def _layout_of(sets: Sets, partial: bytes) -> _Layout:
    """The bytes that lead alike from any state whose regex has heads ``sets`` and which
    has read ``partial`` of a character: ``(bits, kind, signature, code, extra)`` groups
    (``bits`` as a 256-bit int), in the order their states are first met (``_Layout``).
    A group's bytes all derive by ``signature`` (which heads hold them; ``code`` one of
    its code points), so one derivative serves them all: ``CHAR`` to a state between
    characters (``extra`` is ``b""``), ``ENDS`` likewise unless the
    derivative is ``∅``, ``ENTER`` to a state inside a character that every completion
    derives alike (``extra``: the ``_Partial`` tuple), ``STAY`` to the same regex with
    the bytes so far (``extra`` the prefix; ``signature`` and ``code`` unused).

    It depends on the sets alone, not on the pattern, so it is kept across patterns:
    ``.``, a JSON string's ``[^"\\\\]`` and ``[a-z]`` recur in most, and working out
    which of 51 lead bytes begin characters a set holds whole is ~0.2 ms a set.

    >>> ab, b = ((97, 98),), ((98, 98),)  # heads [ab] and b: "a" is [ab]'s alone
    >>> {chr(code): signature for *_, signature, code, _ in _layout_of((ab, b), b"").groups}
    {'b': 3, 'a': 1}
    """
    regexes, heads = _scratch(sets)
    groups: dict[tuple, list[int]] = {}  # (kind, signature, extra) -> [code, bytes]

    def add(kind: int, signature: int, code: int, extra: object, bits: int) -> None:
        group = groups.setdefault((kind, signature, extra), [code, 0])
        group[1] |= bits

    if partial:
        length = _length(partial[0])
        for byte in _CONTINUATION:
            prefix = partial + bytes([byte])
            if len(prefix) < length:
                kind, signature, code, extra = _enter(regexes, heads, prefix)
                if kind >= 0:
                    add(kind, signature, code, extra, 1 << byte)
                continue
            lo, hi = _interval(prefix)
            if lo <= hi and (signature := regexes.code_signature(heads, lo)):
                add(ENDS, signature, lo, b"", 1 << byte)
    else:
        parts: list[int] = []  # ASCII split into sets each head holds whole or not at all
        for head in heads:
            mask, split = regexes.ascii[head], []
            for part in parts:
                split += [p for p in (part & mask, part & ~mask) if p]
                mask &= ~part
            parts = split + ([mask] if mask else [])
        for part in parts:
            code = (part & -part).bit_length() - 1
            add(CHAR, regexes.code_signature(heads, code), code, b"", part)
        wide = [k for k, head in enumerate(heads) if regexes.bounds[head][-1] > 128]
        if wide:
            for kind, signature, code, extra, bits in _leads_of(tuple(sets[k] for k in wide)):
                if kind == ENTER:  # its heads' bits where ``heads`` has them
                    signature = sum(1 << wide[j] for j in set_bits(signature))
                add(kind, signature, code, extra, bits)
    return _Layout.of(
        tuple(
            (bits, kind, signature, code, extra)
            for (kind, signature, extra), (code, bits) in groups.items()
        )
    )


@bounded(maxsize=1_024)
def _leads_of(sets: Sets) -> tuple[tuple, ...]:
    """``(kind, signature, code, extra, bytes)`` groups of the lead bytes that ``_enter``
    does not refuse (``bytes`` as a 256-bit int), for heads ``sets`` that each hold a
    character beyond ASCII (the others can never take a lead byte): states with
    different heads often share these (``.`` beside the letters of a keyword)."""
    regexes, heads = _scratch(sets)
    groups: dict[tuple, list[int]] = {}  # (kind, signature, extra) -> [code, bytes]
    for lead in _LEADS:
        kind, signature, code, extra = _enter(regexes, heads, bytes([lead]))
        if kind >= 0:
            groups.setdefault((kind, signature, extra), [code, 0])[1] |= 1 << lead
    return tuple(
        (kind, signature, code, extra, bits)
        for (kind, signature, extra), (code, bits) in groups.items()
    )


def _scratch(sets: Sets) -> tuple[_Regexes, tuple[int, ...]]:
    """Regexes holding just ``sets``, and their numbers: what ``_layout_of`` asks of them."""
    regexes = _Regexes()
    return regexes, tuple(regexes.charset(ranges) for ranges in sets)


def _enter(
    regexes: _Regexes, heads: tuple[int, ...], prefix: bytes
) -> tuple[int, int, int, object]:
    """How the unfinished character ``prefix`` leads from a regex with ``heads``, as
    ``(kind, signature, code, extra)`` of a ``_layout_of`` group (kind -1: nowhere).
    Where every head holds all or none of the code points ``prefix`` can still become
    (the usual case: ``.`` or a JSON string's class takes every character from
    ``\\xe6``), they all derive alike, and the state is that derivative with the bytes
    left to read and the range of the next (``_Partial``): one state for all of them,
    not one per prefix in the vocabulary (thousands under ``.*``)."""
    lo, hi = _interval(prefix)
    if lo <= hi:
        signature = regexes.signature(heads, lo, hi)
        if signature > 0:
            left = _length(prefix[0]) - len(prefix)
            return ENTER, signature, lo, (left, *_NEXT.get(prefix, (0x80, 0xBF)))
        if signature < 0 and any(regexes.meets(h, lo, hi) for h in heads):
            return STAY, 0, 0, prefix
    return -1, 0, 0, None


class _Rows:
    """The byte DFA of one pattern as a table, rows derived as tokens reach them. A state
    is ``(regex, partial)`` (``_Partial``), numbered in the order met (``state``);
    ``table[s, b]`` is the state after byte ``b``, or -1, once ``s``'s row is made
    (``make_row``: by derivatives, one per group of bytes alike; a counted repeat's copy
    from its plan, ``counted_rows``)."""

    def __init__(self, regexes: _Regexes, start: int):
        self.regexes = regexes
        self.states: list[tuple[int, _Partial]] = []
        self._ids: dict[tuple[int, _Partial], int] = {}
        self.table = np.full((64, 256), -1, dtype=np.int32)
        self.made = np.zeros(64, dtype=bool)
        self._layouts: dict[tuple[tuple[int, ...], bytes], _Layout] = {}
        self._plans: dict[tuple[int, bool, int, bytes], CountedPlan] = {}  # per copy kind
        self.ahead = 0  # counted copies written with the one asked for (``_copies``)
        self._ahead_written = False  # since ``made_ahead`` last answered
        self.state(start, b"")

    def state(self, regex: int, partial: _Partial) -> int:
        key = (regex, partial)
        found = self._ids.get(key)
        if found is None:
            if len(self.states) == MAX_DERIVED:
                raise Unsure
            found = self._ids[key] = len(self.states)
            self.states.append(key)
            if found + 1 == len(self.table):
                self._grow()
        return found

    def _grow(self) -> None:
        """Grow the table (and ``made``) to hold every state and a last row that stays -1
        (``rows``): a copy of the whole table each time."""
        while len(self.states) >= len(self.table):
            more = GROWTH * len(self.table)
            self.table = np.concatenate([self.table, np.full((more, 256), -1, np.int32)])
            self.made = np.concatenate([self.made, np.zeros(more, dtype=bool)])

    def new_states(self, keys: list[tuple[int, _Partial]]) -> int | None:
        """Number the states ``keys`` (distinct: ``counted_rows.Block.write``) as ``state``
        would one after the other; returns the first one's number, or None (nothing
        numbered) where one of them is known already."""
        if not self._ids.keys().isdisjoint(keys):
            return None
        first = len(self.states)
        if first + len(keys) > MAX_DERIVED:
            raise Unsure
        self.states += keys
        self._ids.update(zip(keys, range(first, first + len(keys)), strict=True))
        if len(self.states) >= len(self.table):
            self._grow()
        return first

    def rows(self, states: np.ndarray) -> np.ndarray:
        """The table, with the rows of ``states`` made (``levelwalk.walk_bytes``,
        ``walk_root``); its last row, which no state uses, is all -1."""
        self.make_rows(states)
        return self.table

    def make_rows(self, states: np.ndarray) -> None:
        """Make the rows of ``states`` not made yet (``make_row``)."""
        todo = states[~self.made[states]]
        for s in sorted(set(todo.tolist())) if todo.size else ():
            self.make_row(s)

    def make_row(self, s: int) -> None:
        """Make state ``s``'s row. A row not made is all -1 (``state``), so a state inside
        a character whose completions all derive alike (``ENTER``) writes its one interval
        of bytes alone."""
        regex, partial = self.states[s]
        self.made[s] = True
        if isinstance(partial, tuple):  # one interval, one target
            left, first, last = partial
            target = self.state(regex, b"" if left == 1 else (left - 1, 0x80, 0xBF))
            self.table[s, first : last + 1] = target  # after ``state``: the table may grow
            return
        repeat = self._counted(regex, partial)
        if repeat is None:
            layout, found = self._derived_targets(regex, partial)
        else:
            base, least, most, rest = repeat
            plan = self.plan(regex, partial, repeat)
            after = self.regexes.cat(self.regexes.rep(base, max(least - 1, 0), most - 1), rest)
            block = plan.block
            copies = None if block is None else self._copies(plan, regex, after)
            if copies is not None and block.write(self, s, copies):
                self._ahead_written |= len(copies) > 2
                return
            layout, found = plan.layout, plan.targets(self, regex, after)
        found.append(-1)  # the bytes in no group: one gather of the groups' targets
        self.table[s] = np.array(found, dtype=np.int32)[layout.group_of]

    def made_ahead(self) -> np.ndarray | None:
        """The states whose rows are made, where some were made ahead since last asked
        (counted copies written with the one asked for: ``ahead``); else None."""
        if not self._ahead_written:
            return None
        self._ahead_written = False
        return np.flatnonzero(self.made[: len(self.states)])

    def _copies(self, plan: CountedPlan, regex: int, after: int) -> list[int]:
        """The counted copy ``regex``, its next copy ``after``, and up to ``ahead`` copies
        more that follow it under ``plan`` (each the one before's next): their rows are
        written in one go (``counted_rows.Block.write``)."""
        copies = [regex, after]
        regexes = self.regexes
        while len(copies) <= self.ahead + 1:  # none more where ``ahead`` is 0
            repeat = counted(regexes, copies[-1])
            if repeat is None:
                break
            base, least, most, rest = repeat
            if self._plans.get((base, least > 0, rest, b"")) is not plan:
                break
            copies.append(regexes.cat(regexes.rep(base, max(least - 1, 0), most - 1), rest))
        return copies

    def _counted(self, regex: int, partial: bytes) -> tuple[int, int, int, int] | None:
        """``counted(regex)`` where a ``CountedPlan`` is worth it: not for ``X?T`` whose
        plan no copy of more made (a schema's ``[ ]?`` after each ``{``, ``:`` and ``,``):
        a plan and its block (``counted_rows``) for one row cost more than its
        derivatives."""
        repeat = counted(self.regexes, regex)
        if repeat is None or repeat[2] > 1:
            return repeat
        base, _, _, rest = repeat  # ``X{0,1}T``: its copies' plans are kept under
        return repeat if (base, False, rest, partial) in self._plans else None

    def plan(
        self, regex: int, partial: bytes, repeat: tuple[int, int, int, int] | None = None
    ) -> CountedPlan:
        """The ``CountedPlan`` of the counted copy ``regex`` (``counted``), ``partial``
        read: one for every copy alike."""
        base, least, _, rest = repeat or counted(self.regexes, regex)
        key = (base, least > 0, rest, partial)
        found = self._plans.get(key)
        if found is None:
            found = self._plans[key] = CountedPlan.of(self, regex, rest, partial)
            if found.alike:
                self._plans[base, least == 0, rest, partial] = found
        return found

    def _derived_targets(self, regex: int, partial: bytes) -> tuple[_Layout, list[int]]:
        """``_layout`` of ``regex``'s heads and each group's target (-1: none), deriving
        ``regex`` once per signature (``_Regexes.derived``): one derivative per group (a
        handful), not one per byte. (A counted repeat's copy is not derived: ``make_row``
        follows its ``counted_rows.CountedPlan``.)"""
        regexes = self.regexes
        layout = self._layout(regexes.heads(regex), partial)
        found: list[int] = []
        for _, kind, signature, code, extra in layout.groups:
            if kind == STAY:
                found.append(self.state(regex, extra))
                continue
            after = regexes.derived(regex, signature, code)
            found.append(-1 if kind == ENDS and after == NONE else self.state(after, extra))
        return layout, found

    def _layout(self, heads: tuple[int, ...], partial: bytes) -> _Layout:
        """``_layout_of`` the sets ``heads``, kept per ``(heads, partial)``: many states
        share their heads (every count of ``[^,\\n]{1,20}``)."""
        key = (heads, partial)
        found = self._layouts.get(key)
        if found is None:
            nodes = self.regexes.nodes
            found = self._layouts[key] = _layout_of(tuple(nodes[h][1] for h in heads), partial)
        return found


class _NearStart(_Rows):
    """The walk of the vocabulary trie from the start (``first_row``) over the table of
    ``_Rows``, its rows made as the walk meets their states."""

    def first_row(self, trie: VocabTrie) -> np.ndarray:
        """The token ids walkable from the start (sorted, int32): the trie's levels
        walked in numpy, every node's state from its parent's (``levelwalk.walk_bytes``),
        or, where the start row's classes were learnt (``[^\\n]``'s, by ``warm``), the
        class trie from the root (``levelwalk.walk_root``); first, where the start reads
        a few bytes, in Python (``_small_row``). The byte walk has a counted repeat's
        copies written together, as many as it has whole levels (``ahead``), and reads
        them as they are made (``made_ahead``): ``words``' 12 copies a field were a
        row read a level, each with a count of the level's states."""
        found = self._small_row(trie)
        if found is not None:
            return found
        level = walk_root(trie, self.rows)
        if level is not None:
            return level
        self.ahead = levels_of(trie).deep  # copies the whole levels can meet
        return walk_bytes(trie, self.rows, self.regexes.relaxed, self.made_ahead)

    def _small_row(self, trie: VocabTrie) -> np.ndarray | None:
        """The first set by ``rowwalk.small_row`` (a depth-first walk of (node, state)
        pairs in Python, as the index walks a narrow row), where the start reads at most
        ``SMALL_START`` bytes; None past its ``rowwalk.SMALL_WORK`` steps. A keyword's tokens
        ([nN][oO][nN][eE]: 9 of them) are a few dozen steps, where each numpy level of
        the byte walk cost ~25 µs."""
        start = self.rows(_ROOT)[0]
        if np.count_nonzero(start >= 0) > SMALL_START:
            return None
        kept: dict[int, Steps] = {}

        def steps(state: int) -> Steps:
            found = kept.get(state)
            if found is None:
                row = self.rows(np.array([state]))[state]
                reads = int.from_bytes(np.packbits(row >= 0, bitorder="little").tobytes(), "little")
                found = kept[state] = steps_of(row, reads)
            return found

        walked = small_row(trie.lists, steps, 0)
        return None if walked is None else walked[0]
