"""Run the benchmarks and print the targets table last: ``python -m bench`` runs them all
(``make bench``); ``python -m bench index mask generate crowd`` runs those named and prints
their targets the same way (``make bench BENCH="index mask"``).

Each benchmark runs in a Python process of its own (``python -m bench --alone NAME FILE``,
its targets written to FILE as JSON), with the peers it measures against in that same
process: what one benchmark leaves behind (its indexes, its caches, a heap grown by
thirty whole indexes) neither slows nor warms the next. In one shared process the
22-field schema's first set measured 5.8-6.8 ms after the mask and index benchmarks and
4.4 ms alone, llguidance's slowing by the same factor (2.9 -> 3.7 ms), and clearing
fsmviz's caches and the collector between benchmarks did not undo it."""

import json
import subprocess
import sys
from pathlib import Path
from tempfile import TemporaryDirectory

from bench import (
    app_bench,
    conformance,
    coverage,
    crowd_bench,
    differential,
    family_bench,
    generate_bench,
    grammar_bench,
    grammar_run_bench,
    heldout,
    index_bench,
    llama_cpp_corpus,
    load_bench,
    mask_bench,
    page_bench,
    public_coverage,
    schema_bench,
    schema_first_token,
)
from bench.table import print_table

BENCHES = {
    "index": index_bench.main,
    "mask": mask_bench.main,
    "heldout": heldout.main,
    "schema": schema_bench.main,
    "schema_set": schema_bench.first_set_main,
    "conformance": conformance.main,
    "coverage": coverage.main,
    "public": public_coverage.main,
    "differential": differential.main,
    "schema_first": schema_first_token.main,
    "generate": generate_bench.main,
    "app": app_bench.main,
    "load": load_bench.main,
    "crowd": crowd_bench.main,
    "grammar": grammar_bench.main,
    "grammar_run": grammar_run_bench.main,
    "llama_cpp": llama_cpp_corpus.main,
    "families": family_bench.main,
    "page": lambda: page_bench.main([]),
}
"""Each benchmark by its short name, in the order ``make bench`` runs them."""


def main(names: list[str]) -> None:
    unknown = [name for name in names if name not in BENCHES]
    if unknown:
        known = ", ".join(BENCHES)
        raise SystemExit(f"unknown benchmark {', '.join(unknown)}: choose from {known}")
    targets = []
    for name in names or BENCHES:
        targets += alone(name)
    print_table("Targets", ["target", "measured", "wanted", ""], targets)


def alone(name: str) -> list[list[str]]:
    """Benchmark ``name`` in a fresh process (its tables printed as it goes); its targets
    rows, or one failing row saying it did not finish."""
    with TemporaryDirectory() as folder:
        rows = Path(folder) / "targets.json"
        done = subprocess.run([sys.executable, "-m", "bench", "--alone", name, str(rows)])
        if done.returncode != 0:
            return [[f"benchmark {name!r}", f"exit status {done.returncode}", "0", "FAIL"]]
        return json.loads(rows.read_text())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--alone"]:
        _, _, name, path = sys.argv
        Path(path).write_text(json.dumps(BENCHES[name]()))
    else:
        main(sys.argv[1:])
