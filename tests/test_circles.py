"""No import circles inside a folder: each folder of ``fsmviz/`` reads bottom-up.

The layer test (``tests/test_layers.py``) holds the folders to one direction; this one holds
the modules *inside* each folder to one direction too. A circle (``convert`` imports
``limits``, which imports ``convert`` back from inside a function) means neither module can
be read, tested or moved without the other, and a lazy import that dodges the circle at
import time only hides it until the function runs. Every import counts, at the top of a file
or inside a function; an import under ``if TYPE_CHECKING:`` counts too (the names it brings
are still one module leaning on the other).

A folder's ``__init__`` is one of its modules: ``from fsmviz.schema import X`` inside
``fsmviz/schema/`` is an edge to the package, which imports its modules back.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from test_layers import PACKAGE, imported, modules  # tests/ is on sys.path under pytest

from fsmviz.diagnose.loops import sccs

DEBT: dict[str, str] = {}
"""Folders known to hold a circle today, each with where it runs: being taken apart. A folder
listed here that has no circle left fails too, so the list only shrinks."""


def _known() -> dict[str, Path]:
    return dict(modules())


def _targets(package: str, source: str, known: dict[str, Path]) -> list[tuple[int, str]]:
    """Every fsmviz module a module of ``package`` imports in ``source``, with its line:
    ``from fsmviz.schema import convert`` is an edge to ``fsmviz.schema.convert``;
    ``from fsmviz.schema import SchemaError`` an edge to the package ``fsmviz.schema``."""
    return [(line, name) for line, name in imported(package, source, known) if name in known]


def folder_of(module: str, path: Path) -> str:
    """The folder a module lives in: ``fsmviz.schema`` for ``fsmviz.schema.convert`` and
    for the package ``fsmviz.schema`` itself (its ``__init__``)."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


@cache
def graphs() -> dict[str, dict[str, dict[str, int]]]:
    """folder -> module -> {module of the same folder it imports -> the line}."""
    known = _known()
    out: dict[str, dict[str, dict[str, int]]] = {}
    for module, path in known.items():
        folder = folder_of(module, path)
        edges = out.setdefault(folder, {}).setdefault(module, {})
        source = path.read_text(encoding="utf-8")
        for line, name in _targets(folder, source, known):
            if name != module and folder_of(name, known[name]) == folder:
                edges.setdefault(name, line)
    return out


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan's algorithm, the doctor's
    own ``sccs``): each is a set of modules that all reach one another, so at least one
    circle runs through them."""
    groups = sccs(sorted(graph), lambda node: graph.get(node, {}))
    return [group for group in groups if len(group) > 1]


def _described(group: list[str], graph: dict[str, dict[str, int]]) -> str:
    """One group as its edges with lines: ``convert -> limits (convert.py:12)``."""
    short = {m: m.rpartition(".")[2] for m in group}
    edges = [
        f"{short[a]} -> {short[b]} (line {graph[a][b]})"
        for a in group
        for b in sorted(graph[a])
        if b in group
    ]
    return "{" + ", ".join(short[m] for m in group) + "}: " + "; ".join(edges)


def test_no_folder_has_an_import_circle() -> None:
    found = []
    for folder, graph in sorted(graphs().items()):
        if folder not in DEBT:
            found += [f"{folder}: {_described(g, graph)}" for g in circles(graph)]
    assert not found, "import circles inside a folder:\n" + "\n".join(found)


def test_the_known_circles_are_still_there() -> None:
    """A folder on the debt list whose circles are gone must leave the list."""
    gone = [folder for folder in DEBT if not circles(graphs().get(folder, {}))]
    assert not gone, f"no circle left in {gone}: remove them from DEBT"


def test_the_check_sees_a_circle() -> None:
    """The finder itself: a -> b -> c -> a is one group; d, which only points in, is not."""
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b": 1}, "b": {}}) == []


def test_a_lazy_import_counts() -> None:
    """An import inside a function is an edge as much as one at the top of the file, and
    ``from fsmviz.schema import convert`` names the module, not the package."""
    known = _known()
    source = (
        "from fsmviz.schema import convert\n"
        "def f():\n"
        "    from .limits import check_text\n"
        "    from fsmviz.schema import SchemaError\n"
    )
    assert _targets("fsmviz.schema", source, known) == [
        (1, "fsmviz.schema.convert"),
        (3, "fsmviz.schema.limits"),
        (4, "fsmviz.schema"),
    ]
    assert PACKAGE.joinpath("schema", "limits.py").exists()


LAZY_CHECKED = ("schema", "grammar")
"""Folders whose imports inside functions are all for heavy optional dependencies (torch,
llguidance, outlines-core, jsonschema...), each with its reason on the line; the other
folders are to follow."""


def _lazy_imports(path: Path) -> list[int]:
    """The line of every import statement inside a function of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for func in ast.walk(tree):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [
                node.lineno
                for node in ast.walk(func)
                if isinstance(node, (ast.Import, ast.ImportFrom))
            ]
    return found


def test_an_import_inside_a_function_says_why() -> None:
    """In the folders checked, an import inside a function carries a comment giving its
    reason (a heavy optional dependency: ``tree`` reaches the run, and torch, that way;
    the circle test above holds such an import to one direction)."""
    bad = []
    for folder in LAZY_CHECKED:
        for path in sorted((PACKAGE / folder).glob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            for line in sorted(set(_lazy_imports(path))):
                if "#" not in lines[line - 1]:
                    bad.append(f"{folder}/{path.name}:{line}: {lines[line - 1].strip()}")
    assert not bad, "imports inside functions without a reason:\n" + "\n".join(bad)
