"""conftest's ``pytest_runtest_teardown``: a module fixture ends as soon as the last test
that asks for it is done, not at the end of its file (an idle page or app server left open
costs CPU for as long as its worker stays in the file)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

ENDED: list[str] = []
"""The fixtures below that have ended, in order."""

# Both tests on one worker, in this order: the fixture's xdist group (conftest names it so).
GROUP = pytest.mark.xdist_group("test_fixture_ends.py:kept")


@pytest.fixture(scope="module")
def kept() -> Iterator[str]:
    yield "open"
    ENDED.append("kept")


@GROUP
def test_the_last_test_that_asks_for_a_module_fixture_has_it_open(kept: str) -> None:
    assert kept == "open" and ENDED == []


@GROUP
def test_the_next_test_in_its_file_finds_it_ended() -> None:
    assert ENDED == ["kept"]
