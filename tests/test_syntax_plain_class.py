"""Classes of plain characters read at once (``syntax._read_class``) read as item by item.

The plain definition is ``_read_items``: the class body matched one item at a time
(ranges, escapes, sets). A body with no ``\\`` and no ``-`` is one item a character.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsmviz.automaton.syntax import _read_class, _read_items, _Unusual

PLAIN = "abcXYZ09^[.*+?(){}|$ éß日_"
"""Characters a plain class body may hold (``]`` ends the body; ``\\`` and ``-`` are
read item by item)."""


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.booleans(), st.text(alphabet=PLAIN, min_size=1, max_size=8), st.integers(0, 9))
def test_plain_bodies_read_as_their_items(negated, body, room):
    """Set, negation and width as ``_read_items`` reads them; the same refusal past
    ``room``."""
    text = f"[{'^' if negated else ''}{body}]"
    try:
        plain = _read_items(text, room)
    except _Unusual:
        with pytest.raises(_Unusual):
            _read_class(text, room)
        return
    ours = _read_class(text, room)
    assert (ours[0].chars, ours[0].negated, ours[1]) == (plain[0].chars, plain[0].negated, plain[1])


@pytest.mark.parametrize(
    "text", ["[eE]", "[^eE]", "[a-c]", r"[\d.]", "[x-]", "[^-]", "[[]", "[^^]"]
)
def test_classes_with_ranges_or_escapes_and_without(text):
    """Ranges, escapes and a ``-`` go item by item; the rest at once: the same set."""
    ours, plain = _read_class(text, 100), _read_items(text, 100)
    assert (ours[0].chars, ours[0].negated, ours[1]) == (plain[0].chars, plain[0].negated, plain[1])
