"""The page layer (``fsmviz/app/``) stays thin: it lays out, wires and writes HTML, and asks
the engine for everything else.

The layer test (``tests/test_layers.py``) keeps the engine from reaching up into the page;
this one keeps the page from doing the engine's work. A forward pass, a softmax, a mask
replay or a ``Trace`` put together by hand in ``app/`` is engine work in the wrong room: it
cannot be used by the command line or the audit, and it is tested only through the page.
Such work lives in ``fsmviz.generation`` (``allowed``: every step's allowed set after a
run; ``trace.stopped_trace``: a stopped run's trace) or ``fsmviz.grammar.replay`` (a grammar
run's masks replayed), and the page calls it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "fsmviz" / "app"

HEAVY = ("torch", "transformers", "numpy", "llguidance", "outlines_core", "xgrammar")
"""Libraries the page has no business importing: the model's, the masks' arithmetic, the
grammar engines'. (gradio and plotly are the page's own.)"""
ENGINE_CALLS = ("forward", "softmax", "log_softmax", "exp", "open_sequence")
"""Calls that mean a forward pass or a distribution computed here."""
ENGINE_RECORDS = ("Trace", "Step")
"""Records the engine writes: the page reads them, it does not make them up."""


def engine_work(source: str) -> list[str]:
    """What in ``source`` (a module of the page) is engine work, one line each: an import
    of a heavy library, a call named in ``ENGINE_CALLS`` (``sequence.forward(ids)``,
    ``np.exp(x)``), a record of ``ENGINE_RECORDS`` built, a model's forward passes opened
    (``model.passes``). Doctests (strings) do not count."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if not node.level else []
        else:
            names = []
        found += [
            f"line {node.lineno}: imports {name}" for name in names if name.split(".")[0] in HEAVY
        ]
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ENGINE_CALLS or name in ENGINE_RECORDS:
                found.append(f"line {node.lineno}: calls {name}(...)")
        if isinstance(node, ast.Attribute) and node.attr == "passes":
            found.append(f"line {node.lineno}: opens the model's forward passes (.passes)")
    return sorted(found, key=lambda said: int(said.split(":")[0].split()[1]))


PAGES = sorted(PAGE.rglob("*.py"))


@pytest.mark.parametrize("path", PAGES, ids=[p.relative_to(PAGE).as_posix() for p in PAGES])
def test_the_page_does_no_engine_work(path: Path) -> None:
    work = engine_work(path.read_text(encoding="utf-8"))
    assert not work, f"app/{path.name} does the engine's work: {work}"


def test_the_check_sees_engine_work() -> None:
    """The finder itself: the old ``live.allowed_sets`` (a forward pass and a softmax) and
    ``handlers.stopped_frame`` (a Trace built by hand) would be caught; a doctest would not."""
    source = (
        "import numpy as np\n"
        "def allowed(model, ids):\n"
        '    """>>> Trace("a", (), "accepted", True)"""\n'
        "    sequence = model.passes.open()\n"
        "    logits = sequence.forward(ids, 1)\n"
        "    return np.exp(logits)\n"
        "def stopped(text, steps):\n"
        "    return Trace(text=text, steps=steps, stop_reason='max_tokens', matched=False)\n"
    )
    assert engine_work(source) == [
        "line 1: imports numpy",
        "line 4: opens the model's forward passes (.passes)",
        "line 5: calls forward(...)",
        "line 6: calls exp(...)",
        "line 8: calls Trace(...)",
    ]


HANDFUL = 6
"""The most parameters a function of ``app/handlers.py`` takes: what the event brings,
the page and the model, and one typed value for the rest (``RunInputs``, ``Drawn``)."""


def parameters(source: str) -> dict[str, int]:
    """Each function of ``source`` (methods and nested functions too) by name, with how
    many parameters it takes (``*values`` and ``**options`` count one each)."""
    counts = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            given = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            counts[node.name] = sum(p is not None and p.arg not in ("self", "cls") for p in given)
    return counts


def test_no_handler_takes_more_than_a_handful_of_parameters() -> None:
    """``on_run`` took 17 values in a row, and a new input meant a new parameter in four
    places; now the page's inputs are read once into ``RunInputs`` (``handlers.reads``)."""
    counts = parameters((PAGE / "handlers.py").read_text(encoding="utf-8"))
    many = {name: n for name, n in counts.items() if n > HANDFUL}
    assert not many, f"handlers taking more than {HANDFUL} parameters: {many}"
    assert counts["on_run"] <= 4 and counts["on_apply"] <= 5


def test_the_compare_tabs_handler_takes_one_value() -> None:
    """Compare's ``on_compare`` took eleven values in a row; now the page's inputs are read
    once into ``CompareInputs`` (``compare_event``) and handed down whole."""
    counts = parameters((PAGE / "compare_page.py").read_text(encoding="utf-8"))
    assert counts["on_compare"] == 2 and max(counts.values()) <= HANDFUL, counts


def test_the_grammar_tabs_handlers_take_a_handful_too() -> None:
    """The Grammar tab's ``on_run`` took 11 values in a row (its ``_stopped`` 7); now the
    tab's inputs are read once into ``GrammarRunInputs`` (``handlers.reads``)."""
    counts = parameters((PAGE / "grammar_page.py").read_text(encoding="utf-8"))
    many = {name: n for name, n in counts.items() if n > HANDFUL}
    assert not many, f"grammar_page functions taking more than {HANDFUL} parameters: {many}"
    assert counts["on_run"] <= 4


def test_the_count_sees_a_long_handler() -> None:
    source = "def on_run(page, models, a, b, c, d, e, *rest, mark=None, **more): pass\n"
    assert parameters(source) == {"on_run": 10}
