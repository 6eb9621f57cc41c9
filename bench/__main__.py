"""Run the benchmarks and print the targets table last: ``python -m bench`` runs them all
(``make bench``); ``python -m bench index mask generate crowd`` runs those named, in one
process, and prints their targets the same way (``make bench BENCH="index mask"``)."""

import gc
import sys

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
from fsmviz import clear_caches

BENCHES = {
    "index": index_bench.main,
    "mask": mask_bench.main,
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
        as_if_alone()
        targets += BENCHES[name]()
    print_table("Targets", ["target", "measured", "wanted", ""], targets)


def as_if_alone() -> None:
    """Drop what the benchmarks before left (their indexes and DFAs in fsmviz's caches, the
    set-up they froze out of the garbage collector's sight), so that each measures as it
    would in a process of its own, its own set-up untimed again, whatever ran before it
    (after the index benchmark's thirty whole indexes, one run's slowest first mask was
    6.5 ms against 4.2 ms alone)."""
    clear_caches()
    gc.unfreeze()
    gc.collect()


if __name__ == "__main__":
    main(sys.argv[1:])
