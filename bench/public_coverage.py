"""Coverage on public schemas nobody on this project wrote (``bench/schemas_public/``: 120
from SchemaStore and check-jsonschema, by kind and size; see its README): the same measure
as ``bench.coverage`` (each engine in a child with a time and memory limit; instances made
from each schema, labelled by ``jsonschema``), with fsmviz's path, its refusals, crashes
and hangs apart.

    python -m bench.public_coverage            # every kind
    python -m bench.public_coverage recursive  # one kind
    python -m bench.public_coverage --engines fsmviz --misses  # fsmviz alone, misses listed
    python -m bench.public_coverage --only kubernetes          # schemas whose name has this
"""

from __future__ import annotations

from pathlib import Path

from bench import coverage

PUBLIC = Path(__file__).resolve().parent / "schemas_public"
SECONDS = 20.0
"""A compile past this is a hang (the issue's budget: a first token within a second)."""


def main(only: str = "") -> list[tuple[str, ...]]:
    """The tables, and the targets' rows (``make bench`` prints them last)."""
    return coverage.main(only, PUBLIC, SECONDS, "bench/schemas_public")


if __name__ == "__main__":
    coverage.run(coverage.arguments(__doc__.splitlines()[0]), PUBLIC, SECONDS,
                 "bench/schemas_public")  # fmt: skip
