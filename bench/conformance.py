"""JSON Schema conformance, keyword by keyword: the official JSON-Schema-Test-Suite (draft
2020-12, its required tests, not ``optional/``) asked of fsmviz and of the engines.

Each test is a schema and instances marked valid or invalid. An engine gets a test *right*
when it accepts the instance exactly when it is valid. Instances are written as compact JSON
with their keys in the order of the schema's ``properties`` (the order outlines-core and
llguidance write; fsmviz follows it too), so a rejection is about the schema, not about key
order. A test whose schema an engine does not compile counts as *refused*. For fsmviz, a
wrong answer on an invalid instance is *named* when fsmviz named a keyword of that schema as
not enforced (``.unenforced``) and *silent* otherwise; a valid instance it rejects is
*cannot write*. The engines run with their defaults, each test file in a child process with
a time and memory limit (``fsmviz.peers.schema.isolated``), over a vocabulary of bytes.

The suite is looked for beside the repository (``../shared/corpora``, as the CI clone has it,
and ``/work/shared/corpora``); without it the benchmark prints a note and is skipped.

    python -m bench.conformance            # every keyword, every installed engine
    python -m bench.conformance minimum    # only files whose name contains "minimum"
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.table import check, print_table

ROOT = Path(__file__).resolve().parents[1]
SUITE = "JSON-Schema-Test-Suite"
PLACES = (ROOT.parent / "shared" / "corpora", ROOT.parent.parent / "shared" / "corpora",
          Path("/work/shared/corpora"))  # fmt: skip


def suite_dir() -> Path | None:
    """The draft 2020-12 folder of the test suite, or None when it is not here."""
    for place in PLACES:
        folder = place / SUITE / "tests" / "draft2020-12"
        if folder.is_dir():
            return folder
    return None


def preload(engines: list[str]) -> None:
    """Import the engines once here, so each forked child starts with them (xgrammar's
    import alone takes seconds)."""
    import importlib

    from fsmviz.peers.schema import _PACKAGE

    for engine in engines:
        if engine in _PACKAGE:
            importlib.import_module(_PACKAGE[engine])
    import fsmviz.schema.convert  # noqa: F401


def _run_file(engine: str, groups: list[dict[str, Any]]) -> list[Any]:
    """In a child: per group, ``("refused", message)`` or ``(accepted list, named)``."""
    from fsmviz.peers.schema import compile_checker, in_schema_order
    from fsmviz.schema.convert import compile_schema

    out: list[Any] = []
    for group in groups:
        schema = group["schema"]
        text = json.dumps(schema)
        try:
            accepts = compile_checker(engine, text)
            named = engine == "fsmviz" and bool(compile_schema(text).unenforced)
        except Exception as error:  # noqa: BLE001 - a refusal, recorded with its message
            out.append(("refused", str(error).splitlines()[0][:200] if str(error) else ""))
            continue
        verdicts = []
        for test in group["tests"]:
            data = test["data"]
            if isinstance(schema, dict):
                data = in_schema_order(data, schema)
            sample = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
            try:
                verdicts.append(bool(accepts(sample)))
            except Exception:  # noqa: BLE001 - a matcher that fails rejects
                verdicts.append(False)
        out.append((verdicts, named))
    return out


def measure(only: str = "") -> tuple[list[str], dict[str, dict[str, dict[str, int]]]]:
    """Per engine, per keyword file: counts of right, named, silent, cannot write, refused."""
    from fsmviz.peers.schema import ENGINES, isolated, version

    folder = suite_dir()
    assert folder is not None
    engines = [e for e in ENGINES if version(e) is not None]
    preload(engines)
    table: dict[str, dict[str, dict[str, int]]] = {e: {} for e in engines}
    for path in sorted(folder.glob("*.json")):
        if only and only not in path.stem:
            continue
        groups = json.loads(path.read_text(encoding="utf-8"))
        for engine in engines:
            status, answer = isolated(_run_file, engine, groups, seconds=120)
            counts = {"tests": 0, "right": 0, "named": 0, "silent": 0, "cannot": 0, "refused": 0}
            for i, group in enumerate(groups):
                tests = group["tests"]
                counts["tests"] += len(tests)
                result = answer[i] if status == "ok" else ("refused", str(answer))
                if result[0] == "refused":
                    counts["refused"] += len(tests)
                    continue
                verdicts, named = result
                for test, accepted in zip(tests, verdicts, strict=True):
                    if accepted == test["valid"]:
                        counts["right"] += 1
                    elif test["valid"]:
                        counts["cannot"] += 1
                    else:
                        counts["named" if named else "silent"] += 1
            table[engine][path.stem] = counts
    return engines, table


def _cell(c: dict[str, int], fsmviz: bool) -> str:
    if fsmviz:
        return f"{c['right']}/{c['named']}/{c['silent']}/{c['cannot']}/{c['refused']}"
    return f"{c['right']}/{c['silent'] + c['named']}/{c['cannot']}/{c['refused']}"


def main(only: str = "") -> list[tuple[str, ...]]:
    if suite_dir() is None:
        print(f"\nconformance: {SUITE} not found beside the repository (looked in "
              f"{', '.join(str(p) for p in PLACES)}); skipped")  # fmt: skip
        return []
    start = time.perf_counter()
    engines, table = measure(only)
    keywords = sorted(table[engines[0]])
    rows = []
    for keyword in keywords:
        first = table[engines[0]][keyword]
        rows.append((keyword, first["tests"],
                     *(_cell(table[e][keyword], e == "fsmviz") for e in engines)))  # fmt: skip
    totals = {e: {k: sum(table[e][kw][k] for kw in keywords) for k in table[e][keywords[0]]}
              for e in engines}  # fmt: skip
    rows.append(("all", totals[engines[0]]["tests"],
                 *(_cell(totals[e], e == "fsmviz") for e in engines)))  # fmt: skip
    print_table(
        "JSON-Schema-Test-Suite draft 2020-12, by keyword file. fsmviz: right / wrong but "
        "named (invalid accepted, a keyword named as not enforced) / wrong, silent / valid it "
        "cannot write / refused; engines: right / invalid accepted / valid rejected / refused",
        ["keyword", "tests", *engines],
        rows,
    )
    for e in engines:
        t = totals[e]
        print(f"{e}: {t['right']}/{t['tests']} right ({100 * t['right'] / t['tests']:.1f}%), "
              f"{t['refused']} refused, {t['named'] + t['silent']} invalid accepted "
              f"({t['named']} named), {t['cannot']} valid rejected")  # fmt: skip
    print(f"({time.perf_counter() - start:.0f} s)")
    f = totals["fsmviz"]
    return [
        check("conformance: invalid accepted, no keyword named (fsmviz)", f["silent"], "0",
              f["silent"] == 0),
        check("conformance: right, refused or named (fsmviz)",
              100 * (f["right"] + f["refused"] + f["named"]) / f["tests"], ">= 95 %",
              (f["right"] + f["refused"] + f["named"]) >= 0.95 * f["tests"], " %"),
    ]  # fmt: skip


if __name__ == "__main__":
    print_table("Targets", ["target", "measured", "wanted", ""], main(*sys.argv[1:2]))
