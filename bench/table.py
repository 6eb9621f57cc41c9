"""Print benchmark results as aligned tables, with targets checked side by side; and the
timing helpers the benches share."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """Best wall time of ``repeat`` calls, in seconds (the least disturbed run)."""
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def walk_us(step: Callable[[], object], ids: list[int], advance: Callable[[int], object]) -> float:
    """Mean µs of ``step()`` along ``ids`` (``advance(token)`` between steps, untimed): a
    mask's cost per step along a text written token by token."""
    spent = 0.0
    for token in ids:
        start = time.perf_counter()
        step()
        spent += time.perf_counter() - start
        advance(token)
    return spent / len(ids) * 1e6


def geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(header)]
    print(f"\n{title}")
    print(_line(header, widths))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print(_line(row, widths))


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    """First column left-aligned, the rest right-aligned."""
    pairs = enumerate(zip(cells, widths, strict=True))
    return "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in pairs)


def check(name: str, value: float, target: str, ok: bool, unit: str = "") -> tuple[str, ...]:
    """A row for the targets table: measured value, target, and whether it is met."""
    return (name, f"{value:.3g}{unit}", target, "PASS" if ok else "FAIL")


def _fmt(cell: object) -> str:
    if isinstance(cell, float):
        return f"{cell:.2f}" if cell < 1000 else f"{cell:.0f}"
    return str(cell)
