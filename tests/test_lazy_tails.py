"""``regex_terms._tails``: a concatenation's tails read only as far as a derivative asks,
held to their plain definition on every concatenation of the bench's and the corpus's
patterns and of the 22-field schema's regex."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsmviz.automaton.dfa import Concatenation, Pattern, Repeated
from fsmviz.automaton.syntax import RegexError, parse
from fsmviz.tokens.fast import regex_terms
from fsmviz.tokens.fast.regex_terms import _empty, _nullable, _tails

HERE = Path(__file__).resolve().parent


def concatenations(node: object):
    """Every concatenation's parts under a syntax-tree node."""
    if isinstance(node, Concatenation):
        yield node.parts
        for part in node.parts:
            yield from concatenations(part)
    elif isinstance(node, Pattern):
        for option in node.options:
            yield from concatenations(option)
    elif isinstance(node, Repeated):
        yield from concatenations(node.base)


@pytest.mark.parametrize("eager", [0, regex_terms.EAGER_TAILS])
def test_tails_read_lazily_are_the_plain_ones(eager, monkeypatch):
    """Read as asked (every concatenation, ``eager`` 0) or at once (the short ones), in
    either order, each tail is as its definition reads it."""
    monkeypatch.setattr(regex_terms, "EAGER_TAILS", eager)
    from bench.heldout import corpus_patterns
    from bench.mask_patterns import PATTERNS
    from fsmviz.schema.convert import regex_from_schema

    patterns = [*corpus_patterns(), *(p for p, _ in PATTERNS.values())]
    patterns += ["a()b*()", "()()a", "a?()(b|)()c*", "(){3}x()", "x(y?)*()()"]
    patterns.append(regex_from_schema((HERE / "cases" / "schema_22_fields.json").read_text()))
    checked = 0
    for pattern in patterns:
        try:
            tree = parse(pattern)[1]
        except RegexError:
            continue
        for parts in concatenations(tree):
            after, solid = _tails(parts)
            order = list(range(len(parts) + 1))
            for i in order[::-1] if checked % 2 else order:  # asked in either order
                rest = parts[i:]
                nullable = solid[i] == len(parts)
                assert nullable == all(_empty(p) or _nullable(p) for p in rest)
                assert after[i] == next(
                    (i + k for k, p in enumerate(rest) if not _empty(p)), len(parts)
                )
            checked += 1
    assert checked > 500
