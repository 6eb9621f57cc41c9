"""Schema -> first generated token on the public schemas (``bench/schemas_public/``): the
issue's budget is a first token within a second at the 95th percentile.

For each of the 120 schemas: the wall time from the schema's text to the first token the
bundled model streams under it, as a page run does it: ``compile_schema`` (the regex path
or the grammar path), the run's preparation with the page's budget (``MAX_TOKENS``: the
safe end prepared), the prompt's forward pass and the first sample. The model is loaded
and warm before the first schema; each schema is new to the process (nothing of it
cached). A schema fsmviz refuses counts as past the budget.

    python -m bench.schema_first_token            # every schema
    python -m bench.schema_first_token kubernetes  # those whose name contains it
"""

from __future__ import annotations

import statistics
import sys
import time

from bench.coverage import p95
from bench.public_coverage import PUBLIC
from bench.table import check, print_table
from fsmviz import compile_schema, load_model, stream
from fsmviz.errors import FsmvizError

PROMPT = "Write one example that fits the schema, as JSON."
MAX_TOKENS = 256
BUDGET_S = 1.0


def first_token_seconds(model, text: str) -> tuple[float, str]:
    """(seconds from the schema's text to the first streamed token, the path taken)."""
    start = time.perf_counter()
    compiled = compile_schema(text)
    constraint = compiled if compiled.path == "grammar" else compiled.regex
    steps = stream(model, constraint, PROMPT, max_tokens=MAX_TOKENS)
    next(iter(steps))
    seconds = time.perf_counter() - start
    steps.close()
    return seconds, compiled.path


def main(name: str = "") -> list[tuple[str, ...]]:
    model = load_model()
    first_token_seconds(model, '{"type": "object", "properties": {"a": {"type": "integer"}}}')
    rows, times = [], []
    for path in sorted(PUBLIC.glob("*/*.json")):
        if name not in path.stem:
            continue
        try:
            seconds, how = first_token_seconds(model, path.read_text(encoding="utf-8"))
        except (FsmvizError, ValueError) as error:
            seconds, how = float("inf"), f"refused: {str(error)[:60]}"
        times.append(seconds)
        rows.append((f"{path.parent.name}/{path.stem}"[:48], how, seconds))
    if not rows:
        raise SystemExit(f"no schema in {PUBLIC} has {name!r} in its name")
    slowest = sorted(rows, key=lambda row: -row[2])[:10]
    print_table(
        f"Schema -> first generated token, the 10 slowest of {len(rows)} public schemas (s)",
        ["schema", "path", "first token"],
        slowest,
    )
    late = sum(t > BUDGET_S for t in times)
    print(f"  median {statistics.median(times):.3f} s; {late} of {len(times)} past {BUDGET_S} s")
    worst95 = p95(times)
    return [
        check("public schemas: schema -> first token, p95", worst95, f"<= {BUDGET_S:g} s",
              worst95 <= BUDGET_S, " s"),
    ]  # fmt: skip


if __name__ == "__main__":
    print_table("Targets", ["target", "measured", "wanted", ""], main(*sys.argv[1:2]))
