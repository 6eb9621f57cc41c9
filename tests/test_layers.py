"""The engine's folders are layers: a module imports only its own layer and those below.

Read top-down, ``fsmviz/`` is a stack (see ``fsmviz/__init__.py``): the shared modules, then
``automaton``, ``tokens``, ``generation``, ``schema``, ``peers``, the doctor, Learn and the
drawing, and last the page and the command line. A lower layer that imports a higher one
(the index reaching for the page's renderer, say) fails here, with the line that does it.
Every import counts, at the top of a file or inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "fsmviz"

# The rank of each layer; a module may import modules of its own rank or lower.
LAYERS = {
    "errors": 0,
    "cache": 0,
    "printable": 0,
    "arrays": 0,
    "bundled": 0,  # where the bundled model's files live: read by the vocabulary and the model
    "automaton": 1,
    "tokens": 2,
    "generation": 3,
    "params": 0,  # every parameter checked in one place
    "processor": 3,  # the contract's path to generation.processor
    "schema": 4,
    "grammar": 4,
    "peers": 5,
    "diagnose": 6,
    "learn": 6,
    "drawing": 6,
    "constraints": 4,  # fsmviz.constraint(regex=|schema=|grammar=): the one place one is built
    "audit": 7,  # a constraint over many prompts: runs, rows, the report
    "html": 7,  # the page's HTML and charts from records: pure, no gradio
    "app": 8,
    "cli": 8,
    "__main__": 8,
    "": 8,  # ``fsmviz`` itself: the public names, gathered from every layer
}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.append((".".join(parts), path))
    return found


def imports(module: str, path: Path) -> list[tuple[int, str]]:
    """Every fsmviz module ``module`` imports, with its line: ``(12, 'fsmviz.tokens.index')``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return imported(package, path.read_text(encoding="utf-8"))


def imported(
    package: str, source: str, known: dict[str, Path] | None = None
) -> list[tuple[int, str]]:
    """Every fsmviz module that ``source``, a module of ``package``, imports, with its line.
    ``from fsmviz.schema import X`` names the package ``fsmviz.schema``; given the ``known``
    modules, it names ``fsmviz.schema.X`` where that is a module (``tests/test_circles.py``
    reads edges inside a folder, where the difference counts)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            subs = [f"{name}.{alias.name}" for alias in node.names] if known else []
            found += [(node.lineno, sub if sub in known else name) for sub in subs] or [
                (node.lineno, name)
            ]
    return [(line, name) for line, name in found if name.split(".")[0] == "fsmviz"]


def test_every_folder_has_a_rank() -> None:
    assert {layer_of(m) for m, _ in modules()} <= set(LAYERS)


@pytest.mark.parametrize("module,path", modules(), ids=[m for m, _ in modules()])
def test_no_module_imports_a_higher_layer(module: str, path: Path) -> None:
    rank = LAYERS[layer_of(module)]
    leaks = [
        f"{path.name}:{line} imports {name} ({layer_of(name) or 'fsmviz'})"
        for line, name in imports(module, path)
        if LAYERS[layer_of(name)] > rank
    ]
    assert not leaks, f"{module} (layer {layer_of(module)!r}) reaches up: {leaks}"


def test_the_check_sees_a_leak() -> None:
    """The rule itself: the index importing the page would be caught."""
    assert LAYERS[layer_of("fsmviz.app.page")] > LAYERS[layer_of("fsmviz.tokens.index")]
