r"""The naive token mask for a grammar, the definition written as code.

The seeds define the mask of a regex in one line: a token is allowed after the text P iff
P + token is a prefix of some match. For a grammar it is the same line, with "match" read
as "sentence of the grammar": a token is allowed iff ``grammar.is_prefix(P + token)``;
EOS is allowed iff ``grammar.accepts(P)``. Special tokens (no bytes) never are.

Asking that of 49,152 tokens one by one would rebuild the Earley chart of P every time;
instead the tokens are visited in byte order, so neighbours share their first bytes, and a
stack of charts follows the shared bytes (a walk of the vocabulary's trie without building
it). A branch whose bytes already fail is skipped whole. Bytes that end inside a UTF-8
character are judged by ``Recognizer.can_continue``.

>>> from fsmviz.grammar.compile import compile_grammar
>>> from fsmviz.tokens.vocab import Vocabulary
>>> vocab = Vocabulary.from_strings(["(", ")", "()", "x", ")("])
>>> g = compile_grammar('root ::= "(" root ")" | "x"')
>>> [vocab.token_text(t) for t in naive_allowed(g, vocab, b"((x")]
[')']
"""

from __future__ import annotations

import numpy as np

from fsmviz.cache import BoundedCache
from fsmviz.grammar.earley import Recognizer, recognizer, utf8_size
from fsmviz.grammar.nodes import GrammarTree
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["naive_allowed", "split_utf8"]

_ORDER: BoundedCache[list[int]] = BoundedCache(maxsize=4)


def split_utf8(data: bytes) -> tuple[str, bytes] | None:
    """``data`` as whole characters and the bytes of a character cut short at its end;
    None when ``data`` is not UTF-8 (or its start).

    >>> split_utf8("aé".encode()[:2])
    ('a', b'\\xc3')
    """
    for cut in range(min(3, len(data)) + 1):
        head = data[: len(data) - cut]
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError:
            continue
        tail = data[len(data) - cut :]
        if cut and not _is_lead(tail):
            return None
        return text, tail
    return None


def _is_lead(tail: bytes) -> bool:
    size = utf8_size(tail[0])
    return size > len(tail) > 0 and all(0x80 <= b <= 0xBF for b in tail[1:])


def naive_allowed(grammar: GrammarTree, vocab: Vocabulary, prefix: bytes = b"") -> np.ndarray:
    """Token ids allowed after ``prefix`` by the naive definition, ascending."""
    r = recognizer(grammar)
    split = split_utf8(prefix)
    if split is None:
        return np.zeros(0, dtype=np.int64)
    text, tail = split
    columns = r.chart(text)
    if len(columns) != len(text) + 1 or not columns[-1]:
        return np.zeros(0, dtype=np.int64)
    if tail and not r.can_continue(columns[-1], tail):
        return np.zeros(0, dtype=np.int64)
    allowed = []
    if not tail and r.finished(columns[-1]):
        allowed.append(vocab.eos_token_id)
    table = vocab.all_token_bytes
    order = _ORDER.get_or_build(
        vocab.fingerprint,
        lambda: sorted((i for i, b in enumerate(table) if b), key=table.__getitem__),
    )
    # stack[d]: (columns kept, bytes of a character begun, alive) after d bytes of a token
    stack: list[tuple[int, bytes, bool]] = [(len(columns), tail, True)]
    previous = b""
    for token in order:
        data = table[token]
        shared = _common(previous, data, len(stack) - 1)
        del stack[shared + 1 :]
        kept, pending, alive = stack[shared]
        depth = shared
        while alive and depth < len(data):
            del columns[kept:]
            kept, pending, alive = _advance(r, columns, kept, pending, data[depth])
            stack.append((kept, pending, alive))
            depth += 1
        if alive and depth == len(data):
            allowed.append(token)
        previous = data
    return np.array(sorted(allowed), dtype=np.int64)


def _common(a: bytes, b: bytes, limit: int) -> int:
    n = min(len(a), len(b), limit)
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _advance(
    r: Recognizer, columns: list, kept: int, pending: bytes, byte: int
) -> tuple[int, bytes, bool]:
    data = pending + bytes([byte])
    split = split_utf8(data)
    if split is None:
        return kept, data, False
    text, tail = split
    if text:
        column = r.step(columns, text)
        if not column:
            return kept, data, False
        columns.append(column)
        return kept + 1, b"", True
    return kept, data, r.can_continue(columns[-1], tail)
