"""Real-world coverage: how many schemas of each kind each engine takes, how fast, and how
right it is on instances made from each schema.

The sample is ``bench/schemas/<kind>/*.json``: 64 schemas written by us in the shapes of
public ones (``bench/schemas/make.py``; see ``bench/schemas/README.md``). For each schema and
engine (fsmviz, outlines-core, llguidance, xgrammar where installed), in a child process
with a time and memory limit (``fsmviz.peers.schema.isolated``; a kill is "not taken"):

* **taken**: the engine compiled it, with its defaults; the time to compile (engines
  imported beforehand, so an import is not counted);
* the instances of ``fsmviz.peers.schema.instances`` (valid by walking the schema,
  near-misses by mutation, labelled by ``jsonschema``): **invalid accepted** and **valid
  rejected**; for fsmviz an invalid instance accepted is *named* when the keyword its
  mutation broke is among those fsmviz named as not enforced.

    python -m bench.coverage                                # every kind
    python -m bench.coverage recursive                      # one kind
    python -m bench.coverage --engines fsmviz --misses      # fsmviz alone, its misses listed
    python -m bench.coverage --only tree                    # schemas whose name has "tree"
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.conformance import preload
from bench.table import check, print_table

SAMPLE = Path(__file__).resolve().parent / "schemas"
SECONDS = 30.0
MEMORY = 3 << 30
MAX_TEXT = 5_000
"""Instances longer than this (a 2,000-property object) are not checked: the bench is about
taking the schema, and a matcher's time on a 60 KB text is not the question."""


def _compile_and_check(engine: str, text: str, samples: list[str]) -> dict[str, Any]:
    """In a child: compile time, verdicts, and for fsmviz its path and unenforced keywords."""
    from fsmviz.peers.schema import compile_checker

    start, cpu = time.perf_counter(), time.process_time()
    accepts = compile_checker(engine, text)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    out: dict[str, Any] = {
        "seconds": seconds,
        "cpu": cpu,
        "verdicts": [bool(accepts(s)) for s in samples],
    }
    if engine == "fsmviz":
        from fsmviz.schema.convert import compile_schema

        compiled = compile_schema(text)
        out["path"] = compiled.path
        out["unenforced"] = list(compiled.unenforced)
    return out


def p95(values: Sequence[float]) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def outcome(status: str, answer: object) -> str:
    """How an engine that did not take a schema failed: ``refused`` (its own error, with a
    message), ``hang`` (over the time limit), ``crash`` (died, or an error that is not a
    refusal: a ``KeyError`` deep inside is a bug, not an answer).

    >>> outcome("error", "SchemaError: the $ref at /a cannot be read"), outcome("killed", "over the 30 s limit")
    ('refused', 'hang')
    """  # noqa: E501
    if status == "killed":
        return "hang" if "limit" in str(answer) else "crash"
    kind = str(answer).split(":", 1)[0]
    refusals = ("SchemaError", "ValueError", "RuntimeError", "JSONDecodeError", "out of memory")
    return "refused" if kind in refusals or "Error" not in kind else "crash"


def broken(schema: dict[str, Any], text: str, how: str = "") -> set[str]:
    """The keywords an invalid instance breaks, by ``jsonschema`` (``oneOf`` for a value
    valid under two branches, ``minimum`` for a bound crossed...), and ``format`` for a
    format the mutation broke (``how``: jsonschema checks few formats).

    >>> sorted(broken({"properties": {"n": {"minimum": 1}}}, '{"n": 0}'))
    ['minimum']
    """
    from fsmviz.schema.guarded import bounded_patterns, validator

    try:  # offline and bounded: public schemas name remote $refs
        with bounded_patterns():
            found = {e.validator for e in validator(schema).iter_errors(json.loads(text))}
    except Exception:  # noqa: BLE001 - a $ref jsonschema cannot resolve: nothing to name
        found = set()
    return found | ({"format"} if how.endswith("format broken") else set())


_NAMES = frozenset(("properties", "patternProperties", "definitions", "$defs", "dependentSchemas",
                    "dependencies", "prefixItems", "anyOf", "oneOf", "allOf", "items"))  # fmt: skip
"""Keywords whose next step in a schema path is a name or an index, not a keyword."""


def _named_on_path(
    schema: dict[str, Any], steps: Sequence[object], named: set[tuple[str, str]]
) -> bool:  # noqa: E501
    """Whether a ``jsonschema`` error's schema path (``$ref`` followed into its target)
    passes through one of the (JSON pointer, keyword) pairs in ``named``."""
    from fsmviz.schema.convert import pointer, resolve

    node: object = schema
    where: tuple[str | int, ...] = ()
    keyword_next = True
    for step in steps:
        for _ in range(64):  # draft 7's paths skip the "$ref" they follow: follow it here
            ref = node.get("$ref") if isinstance(node, dict) and keyword_next else None
            if not isinstance(ref, str) or (step != "$ref" and step in node):  # type: ignore[operator]
                break
            if (pointer(where), "$ref") in named:
                return True
            target = resolve(schema, ref)
            if target is None:
                return False
            where, node = tuple(target[0]), target[1]
        if step == "$ref":
            continue
        if keyword_next and isinstance(node, dict) and (pointer(where), str(step)) in named:
            return True
        if isinstance(node, dict) and step in node:
            node = node[step]  # type: ignore[index]
        elif isinstance(node, list) and isinstance(step, int) and step < len(node):
            node = node[step]
        else:
            return False
        where = (*where, step)  # type: ignore[assignment]
        if keyword_next:  # a name or an index next, but "items" may be one schema
            keyword_next = step not in _NAMES or (step == "items" and isinstance(node, dict))
        else:
            keyword_next = True
    return False


def explained(schema: dict[str, Any], text: str, how: str, named: set[tuple[str, str]]) -> bool:
    """Whether an invalid instance an engine accepted is explained by a keyword it named
    (``named``: (JSON pointer, keyword) pairs): one of ``jsonschema``'s errors passes
    through such a keyword (an error inside a named ``then`` is the ``then``'s), or, for a
    format the mutation broke, ``format`` is named.

    >>> s = {"properties": {"n": {"if": {"minimum": 5}, "then": {"multipleOf": 2}}}}
    >>> explained(s, '{"n": 7}', "", {("/properties/n", "then")})
    True
    >>> explained(s, '{"n": 7}', "", {("", "then")})
    False
    """
    from fsmviz.schema.guarded import bounded_patterns, validator

    if how.endswith("format broken") and any(k == "format" for _, k in named):
        return True
    try:  # offline and bounded: public schemas name remote $refs
        with bounded_patterns():
            todo = list(validator(schema).iter_errors(json.loads(text)))
    except Exception:  # noqa: BLE001 - a $ref jsonschema cannot resolve: nothing to name
        return False
    while todo:
        error = todo.pop()
        if _named_on_path(schema, list(error.absolute_schema_path), named):
            return True
        todo += list(error.context or ())  # an anyOf's branches: their own errors
    return False


def measure(
    only: str = "",
    sample: Path = SAMPLE,
    seconds: float = SECONDS,
    engines: Sequence[str] = (),
    name: str = "",
) -> tuple[list[str], list[dict[str, Any]]]:
    """Each schema of ``sample`` (of kind ``only``, its file name containing ``name``, where
    given) on each engine (``engines``, or every one installed; fsmviz is always measured)."""
    from fsmviz.peers.schema import ENGINES, instances, isolated, version

    wanted = {"fsmviz", *engines} if engines else set(ENGINES)
    engines = [e for e in ENGINES if e in wanted and version(e) is not None]
    preload(engines)
    rows = []
    for path in sorted(sample.glob("*/*.json")):
        kind = path.parent.name
        if (only and only != kind) or name not in path.stem:
            continue
        schema = json.loads(path.read_text(encoding="utf-8"))
        status, made = isolated(instances, schema, seconds=seconds, memory=MEMORY)
        if status != "ok":  # a schema jsonschema cannot resolve, or too slow to walk
            made = []
        made = [i for i in made if len(i.text) <= MAX_TEXT]
        samples = [i.text for i in made]
        row: dict[str, Any] = {"kind": kind, "name": path.stem, "engines": {}}
        for engine in engines:
            status, answer = isolated(_compile_and_check, engine, json.dumps(schema), samples,
                                      seconds=seconds, memory=MEMORY)  # fmt: skip
            if status != "ok":
                row["engines"][engine] = {"taken": False, "why": str(answer)[:120],
                                          "outcome": outcome(status, answer)}  # fmt: skip
                continue
            bad = [i for i, ok in zip(made, answer["verdicts"], strict=True) if ok != i.valid]
            named = {tuple(pair) for pair in answer.get("unenforced", [])}
            accepted = [i for i in bad if not i.valid]
            silent = [i for i in accepted if not explained(schema, i.text, i.how, named)]
            row["engines"][engine] = {
                "taken": True,
                "seconds": answer["seconds"],
                "cpu": answer["cpu"],
                "path": answer.get("path", ""),
                "invalid_accepted": len(accepted),
                "named": len(accepted) - len(silent),
                "valid_rejected": sum(i.valid for i in bad),
                "misses": [("valid rejected", i.how, i.text) for i in bad if i.valid]
                + [("invalid accepted, unnamed", i.how, i.text) for i in silent],
                "valid": sum(i.valid for i in made),
                "invalid": sum(not i.valid for i in made),
            }
        rows.append(row)
        print(f"  {kind}/{path.stem}: " + ", ".join(
            f"{e} {'ok' if r['taken'] else 'no'}" for e, r in row["engines"].items()),
            flush=True)  # fmt: skip
    return engines, rows


def main(
    only: str = "",
    sample: Path = SAMPLE,
    seconds: float = SECONDS,
    name: str = "bench/schemas",
    engines: Sequence[str] = (),
    schema: str = "",
    misses: bool = False,
) -> list[tuple[str, ...]]:
    engines, rows = measure(only, sample, seconds, engines, schema)
    if not rows:
        raise SystemExit(f"no schema of {name} matches kind {only!r} and name {schema!r}")
    kinds = sorted({r["kind"] for r in rows})
    table = []
    for kind in [*kinds, "all"]:
        mine = [r for r in rows if kind in ("all", r["kind"])]
        f = [r["engines"]["fsmviz"] for r in mine]
        paths = [sum(x.get("path") == p for x in f) for p in ("regex", "grammar")]
        failed = [sum(x.get("outcome") == o for x in f) for o in ("refused", "crash", "hang")]
        cells = [f"{sum(r['engines'][e]['taken'] for r in mine)}/{len(mine)}"
                 for e in engines if e != "fsmviz"]  # fmt: skip
        cpu = p95([x["cpu"] for x in f if x["taken"]])
        table.append((kind, len(mine), f"{sum(paths)}/{len(mine)}", *paths, *failed, *cells, cpu))
    others = [e for e in engines if e != "fsmviz"]
    print_table(f"Schemas taken (compiled), by kind ({name}); fsmviz's compile CPU p95 in s",
                ["kind", "schemas", "fsmviz", "regex path", "grammar path", "refused", "crash",
                 "hang", *others, "CPU p95"], table)  # fmt: skip
    summary = []
    for e in engines:
        got = [r["engines"][e] for r in rows if r["engines"][e]["taken"]]
        valid = sum(g["valid"] for g in got)
        invalid = sum(g["invalid"] for g in got)
        summary.append((
            e, f"{100 * len(got) / len(rows):.0f}%",
            f"{sum(g['invalid_accepted'] for g in got)}/{invalid}",
            f"{sum(g['named'] for g in got)}" if e == "fsmviz" else "-",
            f"{sum(g['valid_rejected'] for g in got)}/{valid}",
            p95([g["seconds"] for g in got]), p95([g["cpu"] for g in got]),
            max((g["cpu"] for g in got), default=math.nan),
        ))  # fmt: skip
    print_table(
        "Per engine, on the schemas it took: instances made from the schema (jsonschema's "
        "label); compile time in seconds, wall and CPU (the CPU time of the compiling process, "
        "all its threads: this 2-core machine is shared, and its wall clock is not)",
        ["engine", "taken", "invalid accepted", "of them named", "valid rejected",
         "wall p95", "CPU p95", "CPU max"],
        summary,
    )  # fmt: skip
    refused = [(r["kind"], r["name"], e, r["engines"][e]["outcome"], r["engines"][e]["why"])
               for r in rows for e in engines if not r["engines"][e]["taken"]]  # fmt: skip
    if refused:
        print_table("Not taken, with the engine's message",
                    ["kind", "schema", "engine", "how", "why"], refused)  # fmt: skip
    missed = [
        (f"{r['kind']}/{r['name']}", m, how, text[:160])
        for r in rows
        for m, how, text in r["engines"]["fsmviz"].get("misses", [])
    ]
    if misses and missed:
        print_table(
            "fsmviz's misses: valid JSON rejected, invalid JSON accepted with no keyword named",
            ["schema", "miss", "how the instance was made", "instance"],
            missed,
        )
    elif misses:
        print("\nfsmviz's misses: none (no valid JSON rejected, every invalid one named)")
    f = [r["engines"]["fsmviz"] for r in rows]
    taken = 100 * sum(x["taken"] for x in f) / len(f)
    got = [x for x in f if x["taken"]]
    silent = sum(x["invalid_accepted"] - x["named"] for x in got)
    rejected = sum(x["valid_rejected"] for x in got)
    valid = max(1, sum(x["valid"] for x in got))
    slowest = p95([x["cpu"] for x in got])
    broken = sum(x.get("outcome") in ("crash", "hang") for x in f)
    return [
        check(f"crashes and hangs (fsmviz, {name})", broken, "0", broken == 0),
        check(f"schemas taken (fsmviz, {name})", taken, ">= 95 %", taken >= 95, " %"),
        check("invalid accepted, no keyword named (fsmviz)", silent, "0", silent == 0),
        check("valid instances rejected (fsmviz)", 100 * rejected / valid, "<= 1 %",
              rejected <= 0.01 * valid, " %"),
        check("schema compile p95, CPU (fsmviz)", slowest, "<= 1 s", slowest <= 1.0, " s"),
    ]  # fmt: skip


def arguments(description: str) -> argparse.Namespace:
    """The command line of ``bench.coverage`` and ``bench.public_coverage``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("kind", nargs="?", default="", help="one kind (a folder) only")
    parser.add_argument("--only", default="", help="schemas whose file name contains this")
    parser.add_argument("--engines", default="", help="comma-separated engines (fsmviz always)")
    parser.add_argument("--misses", action="store_true", help="list fsmviz's misses")
    return parser.parse_args()


def run(args: argparse.Namespace, sample: Path, seconds: float, name: str) -> None:
    """Measure as the command line asks and print the tables, then the targets."""
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    targets = main(args.kind, sample, seconds, name, engines, args.only, args.misses)
    print_table("Targets", ["target", "measured", "wanted", ""], targets)


if __name__ == "__main__":
    run(arguments(__doc__.splitlines()[0]), SAMPLE, SECONDS, "bench/schemas")
