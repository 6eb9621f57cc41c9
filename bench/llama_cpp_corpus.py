"""Grammar mode on a corpus others wrote: llama.cpp's own grammars and grammar tests.

llama.cpp ships GBNF grammars (``grammars/*.gbnf``) and an integration test
(``tests/test-grammar-integration.cpp``) whose cases are a grammar, or a JSON Schema, with
strings it must accept and strings it must refuse. Nobody on this project wrote them. The
files are not copied into this repository: the bench downloads the ``llama-cpp-python``
source distribution from PyPI once (it vendors llama.cpp; ~75 MB, kept under
``.tmp/corpora``) and reads them there.

What is measured:

* every ``grammars/*.gbnf`` file: compiled by ``compile_grammar`` or refused (with what);
* every ``test_grammar`` case: compiled or refused; each of its strings judged by
  ``Grammar.accepts`` against llama.cpp's verdict. Cases written with llama.cpp's
  token-level syntax (``<[10]>``, ``token(10)``) are counted apart: fsmviz's grammars are
  over text, and such a grammar is refused with a message;
* every ``test_schema`` case: ``compile_schema(...).accepts`` on each string, judged by
  ``jsonschema`` (the JSON Schema's own meaning). llama.cpp's lists are its converter's
  verdicts, which differ from the standard in places (it refuses integers of more than 15
  digits): where they differ from ``jsonschema`` the standard is the judge, and the count
  of such strings is printed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from bench.table import check, print_table

VERSION = "0.3.36"
ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / ".tmp" / "corpora"
WANTED = ("vendor/llama.cpp/grammars/", "vendor/llama.cpp/tests/test-grammar-integration.cpp")


@dataclass(frozen=True)
class Case:
    """One ``test_grammar``/``test_schema`` call: its kind, name, constraint and strings."""

    kind: str  # "grammar" or "schema"
    name: str
    text: str
    passing: tuple[str, ...]
    failing: tuple[str, ...]
    token_level: bool  # written with token(...) or <[n]>: not a grammar over text


def corpus() -> Path:
    """The extracted llama.cpp files (downloaded and unpacked on first use)."""
    home = CORPORA / f"llama_cpp_python-{VERSION}"
    if (home / WANTED[1]).exists():
        return home
    CORPORA.mkdir(parents=True, exist_ok=True)
    archive = CORPORA / f"llama_cpp_python-{VERSION}.tar.gz"
    if not archive.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"llama-cpp-python=={VERSION}",
             "--no-deps", "--no-binary", ":all:", "-d", str(CORPORA), "-q"],
            check=True,
        )  # fmt: skip
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if any(w in m.name for w in WANTED)]
        tar.extractall(CORPORA, members=members, filter="data")
    return home


# --- reading the C++ test file -------------------------------------------------------------

_TOKEN = re.compile(
    r'R"(?P<delim>[^(\s]*)\((?P<raw>.*?)\)(?P=delim)"'  # raw string R"""(...)"""
    r'|"(?P<str>(?:[^"\\]|\\.)*)"'  # ordinary string literal
    r"|(?P<comment>//[^\n]*)"
    r"|(?P<punct>[{}(),+])"
    r"|(?P<word>[A-Za-z_]\w*)",
    re.S,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "0": "\0"}


def _unescape(body: str) -> str:
    r"""A C++ string literal's text: ``\n``, ``\"``, ``\\``, ``\xHH``, ``\uXXXX``.

    >>> _unescape(r'a\"b\\n\n\x41\u00e9')
    'a"b\\n\nAé'
    """

    def one(m: re.Match) -> str:
        s = m.group(1)
        if s[0] in "xu":
            return chr(int(s[1:], 16))
        return _ESCAPES.get(s, s)

    return re.sub(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", one, body)


def _tokens(source: str):
    for m in _TOKEN.finditer(source):
        if m.group("comment"):
            continue
        if m.group("raw") is not None:
            yield "str", m.group("raw")
        elif m.group("str") is not None:
            yield "str", _unescape(m.group("str"))
        elif m.group("punct"):
            yield "punct", m.group("punct")
        else:
            yield "word", m.group("word")


def cases(source: str) -> list[Case]:
    """The ``test_grammar``/``test_schema`` calls of llama.cpp's integration test.

    >>> src = 'test_grammar("t", R\"\"\"(root ::= "a")\"\"\", {"a",}, {"b", "aa"});'
    >>> cases(src)[0]
    Case(kind='grammar', name='t', text='root ::= "a"', passing=('a',), failing=('b', 'aa'), token_level=False)
    """  # noqa: E501
    found: list[Case] = []
    tokens = list(_tokens(source))
    i = 0
    while i < len(tokens):
        kind, value = tokens[i]
        called = i + 1 < len(tokens) and tokens[i + 1] == ("punct", "(")
        if kind == "word" and value in ("test_grammar", "test_schema") and called:
            case, i = _call(value.removeprefix("test_"), tokens, i + 2)
            if case is not None:
                found.append(case)
            continue
        i += 1
    return found


def _call(kind: str, tokens: list, i: int) -> tuple[Case | None, int]:
    """One call's arguments from ``tokens[i]`` on: two strings, then two brace lists."""
    args: list = []
    token_level = False
    current: list[str] | None = None  # the brace list being read
    piece: list[str] = []  # adjacent literals and token(...) joined by +
    depth = 1
    while i < len(tokens) and depth:
        kind_, value = tokens[i]
        if kind_ == "str":
            piece.append(value)
        elif kind_ == "word" and value == "token":
            token_level = True
        elif kind_ == "punct" and value == "{":
            current = []
        elif kind_ == "punct" and value in ",}" and current is not None:
            if piece:
                current.append("".join(piece))
                piece = []
            if value == "}":
                args.append(tuple(current))
                current = None
        elif kind_ == "punct" and value == "," and piece:
            args.append("".join(piece))
            piece = []
        elif kind_ == "punct" and value == "(":
            depth += 1
        elif kind_ == "punct" and value == ")":
            depth -= 1
        i += 1
    if piece:
        args.append("".join(piece))
    if len(args) != 4 or not all(isinstance(a, str) for a in args[:2]):
        return None, i
    name, text, passing, failing = args
    token_level = token_level or "<[" in text
    return Case(kind, name, text, passing, failing, token_level), i


BROKEN = ("test_failure_missing_root", "test_failure_missing_reference")
"""llama.cpp's tests of grammars that must be refused (no ``root``; a rule used, never
defined). Its left-recursion tests are not here: llama.cpp's stack parser cannot take left
recursion, but fsmviz's Earley chart and llguidance can, so those grammars are fine here."""


def broken(source: str, function: str) -> str:
    """The grammar text of one of llama.cpp's must-refuse tests."""
    body = source[source.index(f"static void {function}(") :]
    return re.search(r'grammar_str\s*=\s*R"""\((.*?)\)"""', body, re.S).group(1)


def _refused(compile_grammar, text: str) -> bool:
    try:
        compile_grammar(text, "gbnf")
    except ValueError as error:
        print(f"  refused as it should be: {str(error).splitlines()[0][:100]}")
        return True
    return False


# --- judging --------------------------------------------------------------------------------


def _valid(schema: dict, text: str) -> bool:
    import jsonschema

    try:
        instance = json.loads(text)
    except ValueError:
        return False
    try:  # as peers.schema.instances labels its instances: the schema's dialect, formats
        cls = jsonschema.validators.validator_for(schema)
        return cls(schema, format_checker=cls.FORMAT_CHECKER).is_valid(instance)
    except Exception:  # noqa: BLE001 - a schema jsonschema cannot read judges nothing valid
        return False


def _out_of_order(schema: dict, text: str) -> bool:
    """Whether ``text`` is an object whose keys come in another order than the schema's
    ``properties`` (fsmviz, like outlines-core, writes them in the schema's order)."""
    keys = list(json.loads(text)) if text.lstrip().startswith("{") else []
    order = [k for k in schema.get("properties", {}) if k in keys]
    return [k for k in keys if k in order] != order


def judge_grammars(found: list[Case]) -> dict[str, int]:
    """Counts over the grammar cases: compiled, refused, strings right and wrong."""
    from fsmviz import compile_grammar

    counts = dict(cases=0, token_level=0, compiled=0, refused=0, right=0, wrong=0)
    for case in found:
        if case.kind != "grammar":
            continue
        counts["cases"] += 1
        if case.token_level:
            counts["token_level"] += 1
            continue
        try:
            grammar = compile_grammar(case.text, "gbnf")
        except ValueError as error:
            counts["refused"] += 1
            print(f"  refused {case.name!r}: {str(error).splitlines()[0][:120]}")
            continue
        counts["compiled"] += 1
        for text, want in [(s, True) for s in case.passing] + [(s, False) for s in case.failing]:
            try:
                got = grammar.accepts(text)
            except ValueError:  # the recognizer's work bound: not an answer
                got = None
            if got == want:
                counts["right"] += 1
            else:
                counts["wrong"] += 1
                print(f"  {case.name!r}: {text!r} judged {got}, llama.cpp says {want}")
    return counts


def judge_schemas(found: list[Case]) -> dict[str, int]:
    """Counts over the schema cases, ``jsonschema`` the judge."""
    from fsmviz import compile_schema

    counts = dict(cases=0, compiled=0, refused=0, right=0, order=0, wrong=0, llama_differs=0)
    for case in found:
        if case.kind != "schema":
            continue
        counts["cases"] += 1
        try:
            schema = json.loads(case.text)
            compiled = compile_schema(case.text)
        except ValueError as error:
            counts["refused"] += 1
            print(f"  refused schema {case.name!r}: {str(error).splitlines()[0][:120]}")
            continue
        counts["compiled"] += 1
        for text, llama in [(s, True) for s in case.passing] + [(s, False) for s in case.failing]:
            want = _valid(schema, text)
            counts["llama_differs"] += want != llama
            if compiled.accepts(text) == want:
                counts["right"] += 1
            elif want and _out_of_order(schema, text):
                counts["order"] += 1  # the rule: properties in the schema's order
            else:
                counts["wrong"] += 1
                print(f"  schema {case.name!r}: {text[:60]!r} judged wrongly (valid: {want})")
    return counts


def main() -> list[tuple]:
    from fsmviz import compile_grammar

    home = corpus() / "vendor" / "llama.cpp"
    files = sorted((home / "grammars").glob("*.gbnf"))
    compiled = []
    for path in files:
        try:
            compile_grammar(path.read_text(encoding="utf-8"), "gbnf")
            compiled.append(path.name)
        except ValueError as error:
            print(f"  refused {path.name}: {str(error).splitlines()[0][:120]}")
    source = (home / "tests" / "test-grammar-integration.cpp").read_text(encoding="utf-8")
    found = cases(source)
    refused_right = sum(_refused(compile_grammar, broken(source, name)) for name in BROKEN)
    g, s = judge_grammars(found), judge_schemas(found)
    rows = [
        ("grammars/*.gbnf compiled", f"{len(compiled)} of {len(files)}"),
        ("grammar tests compiled (text grammars)",
         f"{g['compiled']} of {g['cases'] - g['token_level']} "
         f"({g['token_level']} token-level cases apart, {g['refused']} refused)"),
        ("grammar tests: strings judged as llama.cpp",
         f"{g['right']} of {g['right'] + g['wrong']}"),
        ("schema tests compiled", f"{s['compiled']} of {s['cases']}"),
        ("schema tests: strings judged as jsonschema",
         f"{s['right']} of {s['right'] + s['order'] + s['wrong']}; {s['order']} valid objects "
         "refused for their key order (the rule: the schema's order); llama.cpp's own list "
         f"differs from jsonschema on {s['llama_differs']}"),
    ]  # fmt: skip
    print_table(f"llama.cpp's grammar corpus (llama-cpp-python {VERSION})",
                ["what", "fsmviz"], rows)  # fmt: skip
    judged = g["right"] + g["wrong"]
    return [
        check("llama.cpp grammar tests: strings judged right", g["right"] / max(judged, 1),
              "1 (all)", g["wrong"] == 0 and g["refused"] == 0),
        check("llama.cpp grammars/*.gbnf compiled", len(compiled) / max(len(files), 1),
              "1 (all)", len(compiled) == len(files)),
        check("llama.cpp's broken grammars refused", refused_right / len(BROKEN), "1 (all)",
              refused_right == len(BROKEN)),
    ]  # fmt: skip


if __name__ == "__main__":
    main()
