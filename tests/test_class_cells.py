"""``ClassTable.cells``: the class table read entry by entry where ``class_states`` walks
nodes in Python (few live nodes, the tail), as a list where the table is small and through
a memoryview where it is past ``LISTED`` entries; and ``class_row``'s short rows, whose
targets are put by token id and read back in sorted order. Both against the plain rows."""

from __future__ import annotations

import pytest

from fsmviz import build_index
from fsmviz.tokens.fast import classwalk
from tests.test_class_walk import _class_walk, assert_class_rows_plain

FEW_LIVE = (
    r"(?:[^a-df-zA-DF-Z\s]+(?:[umUM][sS]|[dhmsDHMS])\s?)+",  # python levels and a tail
    r"[^@]+@[^@]+",
    r"[0-9]+(\.[0-9]+)*\s?(kg|lb|oz)",  # not tuned on
)
STATES_CHECKED = 24


@pytest.mark.slow
@pytest.mark.parametrize("listed", [True, False])
def test_class_rows_read_through_either_cells_are_the_plain_rows(
    bundled_vocab, monkeypatch, listed
):
    """With every table read as a list, and with none (``LISTED`` 0: a memoryview of
    ``flat``), the rows of few-live walks are the plain rows, and nodes were walked in
    Python through the cells."""
    monkeypatch.setattr(classwalk, "LISTED", 10**9 if listed else 0)
    walked = []
    real = classwalk._python_level

    def counted(lists, cells, dead, nodes, states):
        walked.append(type(cells))
        return real(lists, cells, dead, nodes, states)

    monkeypatch.setattr(classwalk, "_python_level", counted)
    short = 0
    for pattern in FEW_LIVE:
        index = build_index(pattern, bundled_vocab)
        classes, table = _class_walk(index)
        assert isinstance(table.cells, list if listed else memoryview)
        short += assert_class_rows_plain(index, classes, table, STATES_CHECKED)
    assert walked and set(walked) == {list if listed else memoryview}
    assert short  # short rows spelled from their nodes' tokens were checked too
