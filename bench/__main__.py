"""Run every benchmark and print the targets table last."""

from bench import (
    app_bench,
    conformance,
    coverage,
    crowd_bench,
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
)
from bench.table import print_table


def main() -> None:
    targets = []
    targets += index_bench.main()
    targets += mask_bench.main()
    targets += schema_bench.main()
    targets += conformance.main()
    targets += coverage.main()
    targets += public_coverage.main()
    targets += generate_bench.main()
    targets += app_bench.main()
    targets += load_bench.main()
    targets += crowd_bench.main()
    targets += grammar_bench.main()
    targets += grammar_run_bench.main()
    targets += llama_cpp_corpus.main()
    targets += page_bench.main([])
    print_table("Targets", ["target", "measured", "wanted", ""], targets)


if __name__ == "__main__":
    main()
