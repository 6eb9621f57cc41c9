"""Schema -> first generated token on the 22-field schema (tests/cases/schema_22_fields.json).

Measured from the schema text to the first ``Step`` of ``stream`` (schema check, outlines-core's
regex, fsmviz's DFA and the first row of the token index, one forward pass), the model loaded
and warm. Each run bounds one string differently, so no cache holds its regex or index.
"first token" uses the default options with ``max_tokens=8``: no JSON of 22 fields fits in
8 tokens, so the safe end asks for the exact distances (the whole index) before the first
token, its worst case; "no safe end" the same with ``safe_end=False``. Beside them,
outlines-core's regex alone and the whole index with every state's distance.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

from bench.table import check, print_table

SCHEMA = Path(__file__).resolve().parents[1] / "tests" / "cases" / "schema_22_fields.json"
PROMPT = "Invent one realistic order as JSON."
TARGET_SECONDS = 0.5


def _fresh(k: int) -> str:
    schema = json.loads(SCHEMA.read_text())
    schema["properties"]["note"]["maxLength"] = 40 + k
    return json.dumps(schema)


def main() -> list[tuple[str, ...]]:
    from fsmviz import build_index, load_model, stream
    from fsmviz.schema.convert import regex_from_schema
    from fsmviz.tokens.index import IndexTooLarge

    model = load_model()
    next(iter(stream(model, r"[a-z]{3}", "Warm up.", max_tokens=2)))
    regex_s, first_s, lazy_s, whole_s = [], [], [], []
    for k in range(3):
        for safe_end, times in ((True, first_s), (False, lazy_s)):
            text = _fresh(2 * k + safe_end)
            start = time.perf_counter()
            regex = regex_from_schema(text)
            regex_s.append(time.perf_counter() - start)
            next(iter(stream(model, regex, PROMPT, max_tokens=8, safe_end=safe_end)))
            times.append(time.perf_counter() - start)
        regex = regex_from_schema(_fresh(100 + k))
        start = time.perf_counter()
        try:
            build_index(regex, model.vocab).token_distances()
            whole_s.append(time.perf_counter() - start)
        except IndexTooLarge:
            whole_s.append(math.inf)  # past the index walk's budget
    fields = sum(
        1 + len(p.get("properties", {}))
        for p in json.loads(SCHEMA.read_text())["properties"].values()
    )
    best = min(first_s)
    print_table(
        "JSON Schema: schema to first generated token (s, best of 3)",
        ["schema", "fields", "regex chars", "regex", "first token", "no safe end", "whole index"],
        [
            (
                "22-field order",
                fields,
                len(regex),
                min(regex_s),
                best,
                min(lazy_s),
                _seconds(min(whole_s)),
            )
        ],
    )
    return [
        check(
            "schema -> first token (22 fields)",
            best,
            f"<= {TARGET_SECONDS} s",
            best <= TARGET_SECONDS,
            " s",
        )
    ]


def _seconds(value: float) -> object:
    return "over budget" if math.isinf(value) else value


if __name__ == "__main__":
    print_table("Targets", ["target", "measured", "wanted", ""], main())
