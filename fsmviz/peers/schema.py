"""Which engine gets your schema right: a JSON Schema asked of fsmviz, outlines-core,
llguidance and xgrammar (where installed), and checked on instances made from the schema.

Engines differ on the same schema in three ways nobody reports: one refuses it, one takes
it but lets invalid JSON through (a keyword it ignores), one cannot write some valid JSON
(a property order, a number form). ``engine_verdicts`` makes it visible:

1. each engine compiles the schema as a user would call it, with its defaults (or refuses,
   with its message): fsmviz ``compile_schema``; outlines-core ``build_regex_from_schema``
   matched with ``regex.fullmatch``; llguidance ``grammar_from("json_schema")`` and an
   ``LLMatcher``; xgrammar ``GrammarCompiler.compile_json_schema`` and a
   ``GrammarMatcher``. The matchers run over a vocabulary of single bytes, so a verdict is
   the engine's language, not a tokenizer's accident;
2. ``instances`` makes texts from the schema: valid ones by walking it (every required
   property, then every property, each value inside its bounds) and near-misses by
   mutation (a bound crossed, a required key dropped, a wrong type, an extra key, a value
   outside an ``enum``), each labelled valid or invalid by ``jsonschema``; keys follow the
   schema's ``properties`` order (the order outlines-core and llguidance write);
3. every engine's matcher says accept or reject; the table counts invalid JSON accepted,
   valid JSON rejected, and for fsmviz the keywords it names as not enforced.

Every engine's compile and checks run in a child process (``isolated``) with a time and
memory limit: outlines-core's regex grows with the square of optional properties, and a
native crash or runaway must cost one row, not the caller.

>>> table = engine_verdicts({"type": "number", "minimum": 1, "maximum": 9},
...                         engines=("fsmviz", "llguidance"))
>>> [(v.engine, v.compiled, bool(v.invalid_accepted)) for v in table.verdicts]
[('fsmviz', True, True), ('llguidance', True, False)]
"""

from __future__ import annotations

import copy
import faulthandler
import importlib
import importlib.metadata
import json
import multiprocessing
import resource
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fsmviz.tokens.encoding import BYTE_TOKENS, byte_tokenizer

__all__ = [
    "ENGINES",
    "EngineVerdict",
    "Instance",
    "VerdictTable",
    "compile_checker",
    "engine_verdicts",
    "in_schema_order",
    "instances",
    "isolated",
    "verdicts_text",
]

ENGINES = ("fsmviz", "outlines-core", "llguidance", "xgrammar")
_PACKAGE = {"outlines-core": "outlines_core", "llguidance": "llguidance", "xgrammar": "xgrammar"}
CHILD_SECONDS = 30.0
"""Wall time one engine may spend on one schema (compile and every check) in its child."""
CHILD_MEMORY = 4 << 30
"""Address space one engine's child may map beyond what it inherits (``RLIMIT_AS``)."""


def version(engine: str) -> str | None:
    """The installed version of an engine's package, None if it is not installed."""
    if engine == "fsmviz":
        return "this"
    try:
        return importlib.metadata.version(engine)
    except importlib.metadata.PackageNotFoundError:
        return None


# --- running something where a crash or a runaway costs nothing -----------------------------


def _child(conn: Any, fn: Callable[..., Any], args: tuple[Any, ...], memory: int) -> None:
    faulthandler.disable()  # a native abort is expected here, not a traceback to print
    try:
        resource.setrlimit(resource.RLIMIT_AS, (_cap(memory),) * 2)
        conn.send(("ok", fn(*args)))
    except MemoryError:
        conn.send(("error", "out of memory"))
    except BaseException as error:  # noqa: BLE001 - everything goes back as a message
        conn.send(("error", f"{type(error).__name__}: {_first_line(error)}"))
    finally:
        conn.close()


def _cap(memory: int) -> int:
    """The address-space limit that leaves a forked child ``memory`` bytes more than it
    inherited. A fixed cap would not: a parent that has loaded torch and a model, or started
    threads (each reserves a malloc arena), can map more than 4 GiB before the child maps
    a byte, and its engine would then fail at its first import ("failed to map segment")."""
    with open("/proc/self/status", encoding="ascii") as status:
        mapped = next(int(line.split()[1]) << 10 for line in status if line.startswith("VmSize:"))
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    return mapped + memory if hard == resource.RLIM_INFINITY else min(mapped + memory, hard)


def isolated(
    fn: Callable[..., Any],
    *args: Any,
    seconds: float = CHILD_SECONDS,
    memory: int = CHILD_MEMORY,
) -> tuple[str, Any]:
    """``fn(*args)`` in a forked child under a memory limit and a wall-clock limit:
    ``("ok", result)``, ``("error", message)`` when it raised, or ``("killed", why)`` when
    it ran out of time or died (a native abort, the kernel).

    >>> isolated(sum, [1, 2, 3])
    ('ok', 6)
    """
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(child, fn, args, memory), daemon=True)
    process.start()
    child.close()
    try:
        if parent.poll(seconds):
            try:
                answer = parent.recv()
            except EOFError:
                answer = None
        else:
            answer = ("killed", f"over the {seconds:g} s limit")
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        parent.close()
    if answer is None:
        return "killed", f"the process died (exit code {process.exitcode})"
    return answer


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0][:300] if lines else type(error).__name__


# --- each engine as a user calls it -------------------------------------------------------


def _fsmviz(text: str) -> Callable[[str], bool]:
    from fsmviz.schema.convert import compile_schema

    return compile_schema(text).accepts


def _outlines_core(text: str) -> Callable[[str], bool]:
    import regex
    from outlines_core.json_schema import build_regex_from_schema

    pattern = regex.compile(build_regex_from_schema(text, None))
    return lambda s: pattern.fullmatch(s) is not None


def _llguidance(text: str) -> Callable[[str], bool]:
    import llguidance

    tok = byte_tokenizer()  # 256 bytes and an end token (fsmviz.tokens.encoding)
    grammar = llguidance.grammar_from("json_schema", text)
    problem = llguidance.LLMatcher.validate_grammar(grammar, tok)
    if problem:
        raise ValueError(problem)

    def accepts(s: str) -> bool:
        matcher = llguidance.LLMatcher(tok, grammar, log_level=0)
        return matcher.consume_tokens(list(s.encode("utf-8"))) and matcher.is_accepting()

    return accepts


def _xgrammar(text: str) -> Callable[[str], bool]:
    import xgrammar

    info = xgrammar.TokenizerInfo(list(BYTE_TOKENS), stop_token_ids=[256])
    compiled = xgrammar.GrammarCompiler(info).compile_json_schema(text)

    def accepts(s: str) -> bool:
        matcher = xgrammar.GrammarMatcher(compiled, terminate_without_stop_token=True)
        return bool(matcher.accept_string(s)) and matcher.is_completed()

    return accepts


_COMPILERS: dict[str, Callable[[str], Callable[[str], bool]]] = {
    "fsmviz": _fsmviz,
    "outlines-core": _outlines_core,
    "llguidance": _llguidance,
    "xgrammar": _xgrammar,
}


def compile_checker(engine: str, text: str) -> Callable[[str], bool]:
    """The engine's acceptor for schema ``text`` (in this process); raises its refusal."""
    return _COMPILERS[engine](text)


def _check_all(engine: str, text: str, samples: Sequence[str]) -> list[bool]:
    accepts = compile_checker(engine, text)
    return [bool(accepts(s)) for s in samples]


def check_isolated(
    engine: str, text: str, samples: Sequence[str], seconds: float = CHILD_SECONDS
) -> tuple[str, Any]:
    """``isolated`` compile of ``text`` by ``engine`` and its verdict on every sample:
    ``("ok", [bool, ...])``, ``("error", refusal)`` or ``("killed", why)``."""
    return isolated(_check_all, engine, text, list(samples), seconds=seconds)


# --- instances made from the schema --------------------------------------------------------


@dataclass(frozen=True)
class Instance:
    """A text made from the schema: ``how`` it was made, ``valid`` by ``jsonschema``."""

    text: str
    valid: bool
    how: str


_FORMATS = {
    "date-time": "2024-05-06T07:08:09Z",
    "date": "2024-05-06",
    "time": "07:08:09Z",
    "email": "ada@example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "uri": "https://example.com/a",
    "ipv4": "192.168.0.1",
    "ipv6": "::1",
    "hostname": "example.com",
    "duration": "P1D",
}


class _Walker:
    """Makes values that follow a schema, following local ``$ref``s to a bounded depth."""

    def __init__(self, root: Mapping[str, Any], full: bool):
        self.root = root
        self.full = full

    def resolve(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        from fsmviz.schema.convert import resolve

        for _ in range(8):
            ref = node.get("$ref")
            if not isinstance(ref, str):
                break
            target = resolve(self.root, ref)
            if target is None or not isinstance(target[1], Mapping):
                break
            merged = {k: v for k, v in node.items() if k != "$ref"}
            node = {**target[1], **merged}
        return node

    def value(self, node: object, depth: int = 0) -> Any:
        if not isinstance(node, Mapping) or depth > 12:
            return None if node is not False else None
        node = self.resolve(node)
        if "const" in node:
            return copy.deepcopy(node["const"])
        if isinstance(node.get("enum"), list) and node["enum"]:
            return copy.deepcopy(node["enum"][0])
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list) and node[key]:
                return self.value({**node[key][0], **_siblings(node, key)}, depth + 1)
        if isinstance(node.get("allOf"), list):
            merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
            for part in node["allOf"]:
                if isinstance(part, Mapping):
                    merged = _merge(merged, self.resolve(part))
            return self.value(merged, depth + 1)
        kinds = node.get("type")
        kind = kinds[0] if isinstance(kinds, list) and kinds else kinds
        if kind is None:
            kind = _guess(node)
        if kind == "object":
            out: dict[str, Any] = {}
            props = node.get("properties") if isinstance(node.get("properties"), Mapping) else {}
            required = set(node.get("required") or ())
            for name, sub in props.items():
                if name in required or (self.full and depth < 10):
                    out[name] = self.value(sub, depth + 1)
            for name in required - set(out):
                out[name] = self.value(_extra_schema(node), depth + 1)
            return out
        if kind == "array":
            prefix = node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else []
            items = [self.value(p, depth + 1) for p in prefix]
            want = max(int(node.get("minItems", 0) or 0), 1 if self.full else 0)
            want = min(want, int(node.get("maxItems", want) or 0), 20)
            while len(items) < want:
                items.append(self.value(node.get("items", {}), depth + 1))
            return items
        if kind in ("integer", "number"):
            return _number(node, kind)
        if kind == "string":
            return _string(node)
        if kind == "boolean":
            return True
        return None


def _siblings(node: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k not in (key, "$ref")}


def _merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        if k == "properties" and isinstance(out.get(k), Mapping) and isinstance(v, Mapping):
            out[k] = {**out[k], **v}
        elif k == "required" and isinstance(out.get(k), list) and isinstance(v, list):
            out[k] = list(dict.fromkeys([*out[k], *v]))
        else:
            out.setdefault(k, v)
    return out


def _extra_schema(node: Mapping[str, Any]) -> object:
    extra = node.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else {"type": "string"}


def _guess(node: Mapping[str, Any]) -> str | None:
    if any(k in node for k in ("properties", "required", "additionalProperties")):
        return "object"
    if any(k in node for k in ("items", "prefixItems", "minItems", "maxItems")):
        return "array"
    if any(k in node for k in ("minLength", "maxLength", "pattern", "format")):
        return "string"
    if any(k in node for k in ("minimum", "maximum", "multipleOf")):
        return "number"
    return None


def _number(node: Mapping[str, Any], kind: str) -> int | float:
    low = node.get("minimum", node.get("exclusiveMinimum"))
    high = node.get("maximum", node.get("exclusiveMaximum"))
    value: float = 0
    if isinstance(low, (int, float)):
        value = low + (1 if "exclusiveMinimum" in node and "minimum" not in node else 0)
    elif isinstance(high, (int, float)) and high < 0:
        value = high - (1 if "exclusiveMaximum" in node and "maximum" not in node else 0)
    step = node.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0:
        value = step * -(-value // step)
    if kind == "integer" or float(value).is_integer():
        return int(value)
    return value


def _string(node: Mapping[str, Any]) -> str:
    if isinstance(node.get("format"), str) and node["format"] in _FORMATS:
        return _FORMATS[node["format"]]
    if isinstance(node.get("pattern"), str):
        for guess in ("a", "abc", "A1", "1", "12345", "AB123", "ab-12", "a1b2", "2024-01-01",
                      "x@y.z", "AB", "aa", "en-US", "1.2.3", "a/b", "ABC"):  # fmt: skip
            import regex

            try:
                if regex.search(node["pattern"], guess, timeout=0.05):
                    return guess
            except (regex.error, TimeoutError):
                break
    low = int(node.get("minLength", 0) or 0)
    high = node.get("maxLength")
    size = max(low, 3)
    if isinstance(high, int):
        size = min(size, high)
    return "a" * size


def in_schema_order(value: Any, schema: object, root: Mapping[str, Any] | None = None) -> Any:
    """``value`` with each object's keys in the order of its schema's ``properties`` (the
    order outlines-core and llguidance write them), unknown keys after.

    >>> in_schema_order({"b": 1, "a": 2}, {"properties": {"a": {}, "b": {}}})
    {'a': 2, 'b': 1}
    """
    root = root if root is not None else (schema if isinstance(schema, Mapping) else {})
    if not isinstance(schema, Mapping):
        return value
    node = _Walker(root, False).resolve(schema)
    if isinstance(value, dict):
        props = node.get("properties") if isinstance(node.get("properties"), Mapping) else {}
        keys = [k for k in props if k in value] + [k for k in value if k not in props]
        return {k: in_schema_order(value[k], props.get(k, {}), root) for k in keys}
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        return [in_schema_order(v, node["items"], root) for v in value]
    return value


def _mutations(value: Any, node: object, root: Mapping[str, Any]) -> Iterator[tuple[Any, str]]:
    """Near-misses of ``value`` (which follows ``node``), each with how it was made."""
    if not isinstance(node, Mapping):
        return
    node = _Walker(root, False).resolve(node)
    if isinstance(value, dict):
        props = node.get("properties") if isinstance(node.get("properties"), Mapping) else {}
        for key in node.get("required") or ():
            if key in value:
                yield {k: v for k, v in value.items() if k != key}, f"required {key} dropped"
        if node.get("additionalProperties") is False:
            yield {**value, "zz_extra": 1}, "extra key"
        for key, sub in value.items():
            for bad, how in _mutations(sub, props.get(key, {}), root):
                yield {**value, key: bad}, f"{key}: {how}"
        return
    if isinstance(value, list):
        if isinstance(node.get("maxItems"), int) and value:
            yield value + [value[-1]] * (node["maxItems"] + 1 - len(value)), "maxItems crossed"
        if isinstance(node.get("minItems"), int) and node["minItems"] > 0:
            yield value[: node["minItems"] - 1], "minItems crossed"
        if node.get("uniqueItems") is True and value:
            yield [value[0], value[0]], "uniqueItems broken"
        if value and isinstance(node.get("items"), Mapping):
            for bad, how in _mutations(value[0], node["items"], root):
                yield [bad, *value[1:]], f"item: {how}"
        return
    if isinstance(node.get("enum"), list):
        yield "zz-not-in-enum", "not in enum"
    if isinstance(value, bool) or value is None:
        yield "text", "wrong type"
        return
    if isinstance(value, (int, float)):
        yield "12", "wrong type (a string)"
        for key, delta in (("minimum", -1), ("maximum", 1)):
            if isinstance(node.get(key), (int, float)):
                yield node[key] + delta, f"{key} crossed"
        for key, delta in (("exclusiveMinimum", 0), ("exclusiveMaximum", 0)):
            if isinstance(node.get(key), (int, float)):
                yield node[key] + delta, f"{key} crossed"
        if isinstance(node.get("multipleOf"), (int, float)):
            yield value + node["multipleOf"] / 2, "multipleOf broken"
        if node.get("type") == "integer":
            yield value + 0.5, "not an integer"
        return
    if isinstance(value, str):
        yield 7, "wrong type (a number)"
        if isinstance(node.get("maxLength"), int):
            yield "a" * (node["maxLength"] + 1), "maxLength crossed"
        if isinstance(node.get("minLength"), int) and node["minLength"] > 0:
            yield "a" * (node["minLength"] - 1), "minLength crossed"
        if node.get("format") in _FORMATS:
            yield "!!", "format broken"
        elif "pattern" in node:
            yield "!!", "pattern broken"


def instances(schema: Mapping[str, Any], limit: int = 40) -> list[Instance]:
    """Texts made from ``schema`` (compact JSON, keys in schema order): valid ones from a
    walk (required properties; every property) and near-misses by mutation, each labelled
    by ``jsonschema``; at most ``limit``, duplicates dropped.

    >>> for i in instances({"type": "integer", "maximum": 3}):
    ...     print(i.text, i.valid, i.how)
    0 True walk
    "12" False wrong type (a string)
    4 False maximum crossed
    0.5 False not an integer
    """
    from fsmviz.schema.guarded import bounded_patterns, validator

    check = validator(schema, formats=True)  # offline, patterns bounded: a visitor's schema
    made: dict[str, Instance] = {}
    bases = [_Walker(schema, full).value(schema) for full in (False, True)]
    candidates = [(bases[0], "walk"), (bases[1], "walk, every property")]
    mutated = [list(_mutations(base, schema, schema)) for base in bases]
    for pair in zip(*mutated, strict=False):  # the two walks' near-misses in turn
        candidates += pair
    longer = max(mutated, key=len)
    candidates += longer[min(len(m) for m in mutated) :]
    for value, how in candidates:
        ordered = in_schema_order(value, schema)
        text = json.dumps(ordered, separators=(",", ":"), ensure_ascii=False)
        if text not in made and len(made) < limit:
            # "!!" is no date, e-mail, uuid...: jsonschema checks only some formats
            broken = how.endswith("format broken")
            with bounded_patterns():
                valid = not broken and check.is_valid(ordered)
            made[text] = Instance(text, valid, how)
    return list(made.values())


# --- the table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineVerdict:
    """One engine on one schema: ``compiled`` or ``refusal`` (its message), then on the
    instances: ``valid_rejected`` and ``invalid_accepted`` (with how they were made), and
    ``ignored``, the keywords it says it does not enforce (fsmviz alone names them)."""

    engine: str
    version: str | None
    compiled: bool
    refusal: str = ""
    valid_rejected: tuple[str, ...] = ()
    invalid_accepted: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    path: str = ""
    stricter: tuple[str, ...] = ()
    """The rules by which it refuses JSON the schema allows (fsmviz alone names them:
    ``compile_schema(...).stricter``), each with where."""

    @property
    def right(self) -> bool:
        return self.compiled and not self.valid_rejected and not self.invalid_accepted


@dataclass(frozen=True)
class VerdictTable:
    """``engine_verdicts``' answer: the instances and one verdict per engine."""

    instances: tuple[Instance, ...]
    verdicts: tuple[EngineVerdict, ...] = field(default=())


def engine_verdicts(
    schema: str | Mapping[str, Any] | type,
    engines: Sequence[str] = ENGINES,
    seconds: float = CHILD_SECONDS,
) -> VerdictTable:
    """Each engine's verdict on ``schema`` and on instances made from it (see the module
    doc). Engines not installed are left out. Raises ``SchemaError`` for a schema fsmviz
    cannot read at all (not JSON, over its size limits, against the metaschema), one that
    points outside itself (``guarded.refuse_remote``: the instances could not be labelled,
    and nothing is ever fetched), or whose pattern is too slow to check."""
    from fsmviz.schema.convert import SchemaError, compile_schema, load_schema
    from fsmviz.schema.guarded import PatternTooSlow, refuse_remote

    root = load_schema(schema)
    refuse_remote(root)
    text = json.dumps(root)
    try:
        made = tuple(instances(root))
    except PatternTooSlow as slow:
        raise SchemaError(f"the instances cannot be labelled: {slow.message}", "") from None
    samples = [i.text for i in made]
    verdicts = []
    for engine in engines:
        have = version(engine)
        if have is None:
            continue
        if engine in _PACKAGE:  # imported here once: a child forked from us starts with it
            importlib.import_module(_PACKAGE[engine])
        status, answer = check_isolated(engine, text, samples, seconds)
        if status != "ok":
            why = str(answer) if status == "error" else f"no answer: {answer}"
            verdicts.append(EngineVerdict(engine, have, False, why))
            continue
        ignored: tuple[str, ...] = ()
        stricter: tuple[str, ...] = ()
        path = ""
        if engine == "fsmviz":
            try:
                compiled = compile_schema(root)
            except SchemaError:  # pragma: no cover - the child compiled it
                compiled = None
            if compiled is not None:
                ignored = tuple(f"{k} at {w or '/'}" for w, k in compiled.unenforced)
                path = compiled.path
                stricter = tuple(f"{r} at {w or '/'}" for w, r in compiled.stricter)
        verdicts.append(
            EngineVerdict(
                engine,
                have,
                True,
                valid_rejected=tuple(
                    i.how for i, ok in zip(made, answer, strict=True) if i.valid and not ok
                ),
                invalid_accepted=tuple(
                    i.how for i, ok in zip(made, answer, strict=True) if not i.valid and ok
                ),
                ignored=ignored,
                path=path,
                stricter=stricter,
            )
        )
    return VerdictTable(made, tuple(verdicts))


def verdicts_text(table: VerdictTable) -> str:
    """The verdicts as a Markdown table, then the instances that split the engines."""
    valid = sum(i.valid for i in table.instances)
    lines = [
        f"{len(table.instances)} instances made from the schema: {valid} valid, "
        f"{len(table.instances) - valid} invalid (by jsonschema)",
        "",
        "| engine | compiled | invalid accepted | valid rejected | keywords named as "
        "not enforced | rules stricter than the schema |",
        "|---|---|---|---|---|---|",
    ]
    for v in table.verdicts:
        name = f"{v.engine} {v.version}" if v.version != "this" else v.engine
        if not v.compiled:
            lines.append(f"| {name} | refused: {_cell(v.refusal)} | | | | |")
            continue
        how = f" ({v.path} path)" if v.path else ""
        lines.append(
            f"| {name} | yes{how} | {_count(v.invalid_accepted)} | "
            f"{_count(v.valid_rejected)} | {_cell(', '.join(v.ignored)) or '—'} | "
            f"{_cell('; '.join(v.stricter)) or '—'} |"
        )
    return "\n".join(lines)


def _count(hows: tuple[str, ...]) -> str:
    if not hows:
        return "0"
    shown = "; ".join(hows[:3]) + ("; …" if len(hows) > 3 else "")
    return f"{len(hows)}: {_cell(shown)}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:160]
