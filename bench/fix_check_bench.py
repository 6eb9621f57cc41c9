"""No fix without a measured improvement, over the seed examples: each example run as the
page runs it, diagnosed, and every fix for what the run did re-run on the same prompt and
seed (``fsmviz.diagnose.checks``). One row per checked finding: the measure before → after
and whether the page offers the fix.

    python -m bench.fix_check_bench                       # every seed example, its budget
    python -m bench.fix_check_bench email stop_string --max-tokens 32

Seconds are this process's CPU time (``time.process_time``, every thread; wall time means
little on a shared machine, the load average is printed): the constrained run, then the
checks (at most ``MAX_CHECKS`` runs, each no longer than the run), so the checks' cost
reads as a ratio to the run's. Issue 47 at load ~17 with one torch thread: the default
example's run 4.3-4.8 s, its two checks 6.8-7.1 s (the loop's bound 1.8-2.3 s, ending
early; the chat template 4.5-5.0 s, the whole budget over a longer prompt).
"""

from __future__ import annotations

import argparse
import os
import time

from bench.table import print_table


def main(argv: list[str] | None = None) -> list[tuple[str, ...]]:
    from fsmviz.app.examples import examples
    from fsmviz.diagnose import diagnose
    from fsmviz.diagnose.checks import check_fixes, needs_check
    from fsmviz.generation.generate import generate
    from fsmviz.generation.models import load_model
    from fsmviz.html.fixes import offered

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="seed examples (default: all)")
    parser.add_argument("--max-tokens", type=int, help="instead of each example's budget")
    args = parser.parse_args(argv)
    model = load_model()
    rows = []
    for name, ex in examples().items():
        if args.names and name not in args.names:
            continue
        budget = args.max_tokens or ex.max_tokens
        started = time.process_time()
        trace = generate(model, ex.pattern, ex.prompt, max_tokens=budget, chat=ex.chat)
        ran = time.process_time() - started
        found = diagnose(ex.pattern, model.vocab, trace)
        started = time.process_time()
        checked = check_fixes(model, found, trace)
        took = time.process_time() - started
        shown = [f for f in checked if needs_check(f) and f.check is not None]
        for f in shown or [None]:
            rows.append(
                (
                    name,
                    f"{len(trace.steps)} in {ran:.1f} s CPU",
                    f.kind if f else "no run fix",
                    f.check.said if f else "",
                    ("offered" if offered(f, checked) else "not offered") if f else "",
                    f"{took:.1f} s CPU",
                )
            )
    print(f"load average (1 min): {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print_table(
        "Run fixes checked on the same prompt and seed",
        ["example", "tokens", "finding", "before → after", "fix", "checks"],
        rows,
    )
    return rows


if __name__ == "__main__":
    main()
