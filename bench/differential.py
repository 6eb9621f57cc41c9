"""Differential test of fsmviz's constraint against ``jsonschema``, on instances nobody here
wrote: is every valid instance the constraint refuses explained by a rule it names
(``.stricter``), and every invalid one it accepts by a keyword it names (``.unenforced``)?

Two corpora, in one run:

* the **JSON-Schema-Test-Suite** (draft 2020-12, its required tests: ``../shared/corpora``,
  as ``bench.conformance`` finds it): each valid instance as the suite writes it
  (``json.dumps``: spaces after ``,`` and ``:``, the suite's key order), then in the
  constraint's own form (``fsmviz.schema.differential.canonical``);
* the **public schemas** the benchmarks measure (``bench/schemas_public``, 120 from
  SchemaStore and check-jsonschema) and **outlines-core's own test schemas**
  (``tests/cases/outlines_core_schemas.json``, 61): the instances
  ``fsmviz.peers.schema.instances`` makes from each (valid by a walk, invalid by mutation,
  labelled by ``jsonschema``), and each valid one spelled otherwise as JSON allows
  (``variants``: keys reversed, integers written ``1.0``, indented), all valid by JSON
  Schema's own equality.

A valid instance refused is *explained* when ``differential.explain`` finds the named
rule it breaks, *unexplained* (a bug) otherwise; an invalid instance accepted is explained
when one of ``jsonschema``'s errors on it passes through a keyword fsmviz names as not
enforced (``bench.coverage.explained``).

    python -m bench.differential                 # both corpora, default whitespace
    python -m bench.differential --whitespace none
    python -m bench.differential --suite-only    # the test suite alone (seconds)
"""

from __future__ import annotations

import argparse
import json
import signal
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.table import check, print_table

PUBLIC = Path(__file__).resolve().parent / "schemas_public"
COMPILE_SECONDS = 20


@dataclass
class Tally:
    """What one corpus gave: counts, the rules that explain refusals, and the misses."""

    schemas: int = 0
    compiled: int = 0
    valid: int = 0
    refused: int = 0
    """Valid instances refused as written (the suite's spelling, or a variant)."""
    refused_canonical: int = 0
    """Valid instances refused even in the constraint's own form."""
    rules: Counter[str] = field(default_factory=Counter)
    unexplained: list[str] = field(default_factory=list)
    invalid: int = 0
    accepted: int = 0
    accepted_unexplained: list[str] = field(default_factory=list)


class _Late(Exception):
    pass


def _alarm(*_: object) -> None:
    raise _Late


def compile_within(schema: object, whitespace: str | None, seconds: int = COMPILE_SECONDS) -> Any:
    """``compile_schema`` or None (refused, or past ``seconds``)."""
    from fsmviz.schema.convert import compile_schema

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        compiled = compile_schema(json.dumps(schema), whitespace)
        return FastGrammar(compiled) if compiled.path == "grammar" else compiled
    except (_Late, ValueError, RecursionError):
        return None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


class FastGrammar:
    """A grammar-path schema whose ``accepts`` asks one llguidance matcher again and again
    (``validate_tokens``, then consume and roll back), where ``SchemaGrammar.accepts`` makes
    a fresh matcher per text (0.1 to 0.7 s on a large schema): the same verdicts, checked
    against the original on the first texts."""

    def __init__(self, compiled: Any):
        self.compiled = compiled
        self.schema, self.path, self.whitespace = compiled.schema, compiled.path, None
        self.whitespace = compiled.whitespace
        self.stricter, self.unenforced = compiled.stricter, compiled.unenforced
        self.matcher = compiled.matcher()
        self.checked = 0

    def accepts(self, text: str) -> bool:
        ids = list(text.encode("utf-8"))
        if self.matcher.is_error() or self.matcher.validate_tokens(ids) < len(ids):
            verdict = False
        else:
            verdict = bool(self.matcher.consume_tokens(ids)) and self.matcher.is_accepting()
            self.matcher.rollback(len(ids))
        if self.checked < 3 or self.matcher.is_error():  # the same as the original's
            self.checked += 1
            assert verdict == self.compiled.accepts(text), text
            if self.matcher.is_error():
                self.matcher = self.compiled.matcher()
        return verdict


def explained_acceptance(schema: object, text: str, unenforced: Iterable[tuple[str, str]]) -> bool:
    """Whether an invalid instance the constraint accepts is explained by a keyword it
    names as not enforced: ``bench.coverage.explained``; a ``$ref`` ``jsonschema`` cannot
    resolve here (a remote one) is explained when fsmviz names a ``$ref``; an error with no
    schema path (a ``false`` subschema, ``then: false``) when the keyword holding it is named."""
    import jsonschema

    from bench.coverage import explained

    named = set(unenforced)
    if not isinstance(schema, dict):
        return False
    if explained(schema, text, "", named):
        return True
    try:
        validator = jsonschema.validators.validator_for(schema)(schema)
        errors = list(validator.iter_errors(json.loads(text)))
    except Exception:  # noqa: BLE001 - an unresolvable (remote) $ref
        return any(k in ("$ref", "$dynamicRef") for _, k in named)
    holders = {"if", "then", "else", "not", "dependentSchemas", "$dynamicRef"}
    if any(e.validator is None for e in errors) and any(k in holders for _, k in named):
        return True
    refs = any(k in ("$ref", "$dynamicRef") for _, k in named)
    return refs and any(not _walks(schema, list(e.absolute_schema_path)) for e in errors)


def _walks(schema: object, steps: list[object]) -> bool:
    """Whether a ``jsonschema`` error's schema path leads somewhere in ``schema`` as written:
    one that does not went through a ``$ref`` into another resource (an ``$id``)."""
    node = schema
    for step in steps:
        if isinstance(node, dict) and step in node:
            node = node[step]  # type: ignore[index]
        elif isinstance(node, list) and isinstance(step, int) and step < len(node):
            node = node[step]
        else:
            return False
    return True


def judge(
    tally: Tally, compiled: Any, schema: Any, value: Any, valid: bool, text: str, label: str
) -> None:
    """Count one instance (``value``, written ``text``) of ``schema`` (as its author wrote
    it: ``compiled.schema`` is fsmviz's reading, a remote ``$ref`` dropped) against
    ``compiled``."""
    from fsmviz.schema.differential import canonical, explain

    if valid:
        tally.valid += 1
        why = explain(compiled, value, text)
        if why == ("", ""):
            return
        tally.refused += 1
        if not compiled.accepts(canonical(value, compiled.schema)):
            tally.refused_canonical += 1
        if why is None:
            tally.unexplained.append(f"{label}: {text[:120]}")
        else:
            tally.rules[why[1]] += 1
        return
    tally.invalid += 1
    written = canonical(value, compiled.schema)
    if compiled.accepts(written):
        tally.accepted += 1
        if not explained_acceptance(schema, written, compiled.unenforced):
            tally.accepted_unexplained.append(f"{label}: {written[:120]}")


def suite_groups(folder: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(keyword file, group) for every group of the suite's draft 2020-12 required tests."""
    for path in sorted(folder.glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            yield path.stem, group


def run_suite(groups: Iterable[tuple[str, dict[str, Any]]], whitespace: str | None) -> Tally:
    """The differential over test-suite groups; a group whose schema fsmviz refuses is not
    applicable (counted as a schema, not compiled)."""
    tally = Tally()
    for name, group in groups:
        tally.schemas += 1
        compiled = compile_within(group["schema"], whitespace)
        if compiled is None:
            continue
        tally.compiled += 1
        for test in group["tests"]:
            label = f"{name} / {group['description']} / {test['description']}"
            text = json.dumps(test["data"], ensure_ascii=False)
            judge(tally, compiled, group["schema"], test["data"], test["valid"], text, label)
    return tally


def variants(value: Any) -> Iterator[tuple[Any, str, str]]:
    """``value`` spelled otherwise, as JSON Schema takes it alike: (value, text, how).

    >>> [how for _, _, how in variants({"a": 1, "b": [2]})]
    ['keys reversed', 'integers as 1.0', 'indented']
    """

    def reverse(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: reverse(v[k]) for k in reversed(list(v))}
        return [reverse(x) for x in v] if isinstance(v, list) else v

    def floats(v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            return float(v)
        if isinstance(v, dict):
            return {k: floats(x) for k, x in v.items()}
        return [floats(x) for x in v] if isinstance(v, list) else v

    compact = {"separators": (",", ":"), "ensure_ascii": False}
    if isinstance(value, dict) and len(value) > 1 or isinstance(value, list):
        turned = reverse(value)
        yield turned, json.dumps(turned, **compact), "keys reversed"  # type: ignore[arg-type]
    as_floats = floats(value)
    if json.dumps(as_floats) != json.dumps(value):
        yield as_floats, json.dumps(as_floats, **compact), "integers as 1.0"  # type: ignore[arg-type]
    if isinstance(value, (dict, list)):
        yield value, json.dumps(value, indent=2, ensure_ascii=False), "indented"


def run_public(paths: Iterable[Path], whitespace: str | None) -> Tally:
    """The differential over public schema files (``run_schemas``)."""
    named = ((f"{p.parent.name}/{p.stem}", p.read_text(encoding="utf-8")) for p in paths)
    return run_schemas(named, whitespace)


def run_schemas(named: Iterable[tuple[str, str]], whitespace: str | None) -> Tally:
    """The differential over (name, schema as JSON text) pairs, on the instances made from
    each and the spelling variants of the valid ones."""
    from fsmviz.peers.schema import instances
    from fsmviz.schema.convert import load_schema

    tally = Tally()
    for name, text in named:
        tally.schemas += 1
        compiled = compile_within(json.loads(text), whitespace)
        if compiled is None:
            continue
        tally.compiled += 1
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(COMPILE_SECONDS)  # the walk of a recursive schema can run long
        try:
            schema = load_schema(text)
            made = instances(schema)
        except (_Late, Exception):  # noqa: BLE001 - the walk or jsonschema failed or ran long
            continue
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        for instance in made:
            value = json.loads(instance.text)
            label = f"{name} ({instance.how})"
            judge(tally, compiled, schema, value, instance.valid, instance.text, label)
            if instance.valid:
                for other, written, how in variants(value):
                    judge(tally, compiled, schema, other, True, written, f"{label}, {how}")
    return tally


def outlines_core_schemas() -> list[tuple[str, str]]:
    """The schemas of outlines-core's own tests (``tests/cases``), as (name, JSON text)."""
    cases = Path(__file__).resolve().parents[1] / "tests" / "cases" / "outlines_core_schemas.json"
    schemas = json.loads(cases.read_text(encoding="utf-8"))["schemas"]
    return [(f"outlines-core #{i}", json.dumps(s)) for i, s in enumerate(schemas)]


def public_paths() -> list[Path]:
    return sorted(p for p in PUBLIC.rglob("*.json") if "licenses" not in p.parts)


def report(name: str, tally: Tally) -> list[tuple[str, ...]]:
    """Print one corpus's figures; return its rows of the targets table."""
    print(f"\n{name}: {tally.compiled}/{tally.schemas} schemas compiled; {tally.valid} valid "
          f"instances, {tally.refused} refused as written, {tally.refused_canonical} in the "
          f"constraint's own form; explained {tally.refused - len(tally.unexplained)}, "
          f"unexplained {len(tally.unexplained)}; {tally.invalid} invalid, {tally.accepted} "
          f"accepted, {len(tally.accepted_unexplained)} with no keyword named")  # fmt: skip
    if tally.rules:
        rows = [(r, n) for r, n in tally.rules.most_common()]
        print_table(f"{name}: valid instances refused, by the named rule that explains them",
                    ["rule", "refused"], rows)  # fmt: skip
    for miss in tally.unexplained[:20]:
        print(f"  unexplained refusal: {miss}")
    for miss in tally.accepted_unexplained[:20]:
        print(f"  accepted, no keyword named: {miss}")
    return [
        check(f"{name}: valid refused, no rule named", len(tally.unexplained), "0",
              not tally.unexplained),
        check(f"{name}: invalid accepted, no keyword named", len(tally.accepted_unexplained),
              "0", not tally.accepted_unexplained),
    ]  # fmt: skip


def main(whitespace: str | None = None, suite_only: bool = False) -> list[tuple[str, ...]]:
    from bench.conformance import suite_dir

    start = time.perf_counter()
    rows: list[tuple[str, ...]] = []
    folder = suite_dir()
    if folder is None:
        print("\ndifferential: JSON-Schema-Test-Suite not found beside the repository; skipped")
    else:
        rows += report("JSON-Schema-Test-Suite", run_suite(suite_groups(folder), whitespace))
    if not suite_only:
        rows += report("outlines-core's test schemas", run_schemas(outlines_core_schemas(),
                                                                   whitespace))  # fmt: skip
        rows += report("public schemas", run_public(public_paths(), whitespace))
    print(f"({time.perf_counter() - start:.0f} s, whitespace {whitespace or 'default'})")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--whitespace", choices=("none", "space", "flexible"), default=None)
    parser.add_argument("--suite-only", action="store_true")
    args = parser.parse_args()
    print_table("Targets", ["target", "measured", "wanted", ""],
                main(args.whitespace, args.suite_only))  # fmt: skip
