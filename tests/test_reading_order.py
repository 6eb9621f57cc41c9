"""Every package docstring true to its folder: it names each of the folder's modules, its
list names no module that is not there, and a folder read "bottom-up" lists each module
after every module of the folder it imports.

The docstrings are the house's signs (``fsmviz/__init__.py`` the reading guide, each
folder's ``__init__`` its reading order); a module that moved or was split leaves a sign
pointing at nothing, which a newcomer follows first.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from test_circles import graphs  # tests/ is on sys.path under pytest

PACKAGE = Path(__file__).resolve().parents[1] / "fsmviz"
FOLDERS = sorted(p.parent for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts)
NAMED = re.compile(r"``([a-z_][a-z0-9_]*)/?``")
LISTED = re.compile(r"^\s*(?:\*|[0-9]+\.)\s+``([a-z_][a-z0-9_]*)/?``", re.MULTILINE)


def _doc(folder: Path) -> str:
    return ast.get_docstring(ast.parse((folder / "__init__.py").read_text("utf-8"))) or ""


def _members(folder: Path) -> set[str]:
    """The folder's modules and sub-folders, by name."""
    modules = {p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return modules | {p.parent.name for p in folder.glob("*/__init__.py")}


def _ids(folders: list[Path]) -> list[str]:
    return [f.relative_to(PACKAGE.parent).as_posix() for f in folders]


@pytest.mark.parametrize("folder", FOLDERS, ids=_ids(FOLDERS))
def test_the_docstring_names_every_module_of_its_folder(folder: Path) -> None:
    named = set(NAMED.findall(_doc(folder)))
    missing = sorted(_members(folder) - named)
    assert not missing, f"{folder.name}/__init__.py does not name {missing}"


@pytest.mark.parametrize("folder", FOLDERS, ids=_ids(FOLDERS))
def test_the_docstring_lists_no_module_that_is_not_there(folder: Path) -> None:
    gone = sorted(set(LISTED.findall(_doc(folder))) - _members(folder))
    assert not gone, f"{folder.name}/__init__.py lists {gone}, not in the folder"


BOTTOM_UP = [f for f in FOLDERS if "bottom-up" in _doc(f)]


@pytest.mark.parametrize("folder", BOTTOM_UP, ids=_ids(BOTTOM_UP))
def test_a_bottom_up_reading_order_follows_the_imports(folder: Path) -> None:
    doc = _doc(folder)
    first = {}
    for match in NAMED.finditer(doc):
        first.setdefault(match.group(1), match.start())
    package = ".".join(folder.relative_to(PACKAGE.parent).parts)
    late = [
        f"{a.rpartition('.')[2]} imports {b.rpartition('.')[2]}, listed after it"
        for a, edges in graphs()[package].items()
        for b in edges
        if a != package and b != package
        and first[b.rpartition(".")[2]] > first[a.rpartition(".")[2]]
    ]  # fmt: skip
    assert not late, late


def test_the_check_sees_a_module_that_moved() -> None:
    """``* ``bundled``` in a folder without it is caught."""
    assert LISTED.findall("Read:\n\n* ``bundled``  where it lives;\n1. ``tokens/`` x") == [
        "bundled",
        "tokens",
    ]
