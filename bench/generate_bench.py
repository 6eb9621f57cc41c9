"""Generation speed on this machine's CPU with the real bundled model.

* The price of the mask: tokens/s unconstrained against constrained with the widest mask
  (``[^\\n]+``, 49k tokens allowed every step). Both runs compute the same per-step
  statistics (valid mass, top candidates), so the difference is the masking itself.
* Fast-forward: the seed JSON regex with the constant text written without sampling
  (several forced tokens per forward pass) against one forward pass per token.
* Time to the first token, with the index cold (built inside the call) and warm.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from bench.table import check, print_table
from fsmviz import load_model, stream
from fsmviz.index import _INDEXES

CASES = Path(__file__).resolve().parents[1] / "tests" / "cases" / "seed_regexes.json"
PROMPT = "Write a long story about a lighthouse keeper and the sea."


def decode_rate(model, pattern, prompt, tokens, **options):
    """(tokens/s between the first and last token, steps, seconds to the first token,
    seconds in all, characters written)."""
    start = time.perf_counter()
    run = stream(model, pattern, prompt, max_tokens=tokens, **options)
    stamps = []
    for _ in run:
        stamps.append(time.perf_counter())
    steps = len(stamps)
    rate = (steps - 1) / (stamps[-1] - stamps[0]) if steps > 1 else 0.0
    return rate, steps, stamps[0] - start, stamps[-1] - start, len(run.trace().text)


def main() -> list[tuple[str, ...]]:
    model = load_model()
    regexes = json.loads(CASES.read_text())["regexes"]
    decode_rate(model, None, "warm up", 4)

    # 1. mask overhead, interleaved repeats, best of each
    free, masked = [], []
    for _ in range(3):
        free.append(decode_rate(model, None, PROMPT, 64)[0])
        masked.append(decode_rate(model, r"[^\n]+", PROMPT, 64)[0])
    ratio = max(masked) / max(free)

    # 2. fast-forward on the seed JSON regex, and on the same template with fixed
    # indentation (the seed's flexible whitespace [^\S\r\n] interrupts every constant run).
    json_prompt = "List one Pink Floyd song as JSON."
    seed_json = regexes["pink_floyd_json"]
    variants = {
        "seed JSON": seed_json,
        "JSON, fixed indent": seed_json.replace("[^\\S\\r\\n]", " "),
    }
    timings = {}
    for label, pattern in variants.items():
        for ff in (True, False):
            runs = [
                decode_rate(model, pattern, json_prompt, 160, fast_forward=ff) for _ in range(2)
            ]
            timings[label, ff] = min(runs, key=lambda r: r[3])
    # On and off tokenize the constant text differently, so they may write different
    # answers; compare output speed in characters per second, not tokens or total time.
    chars_per_s = {key: t[4] / t[3] for key, t in timings.items()}
    speedup = chars_per_s["seed JSON", True] / chars_per_s["seed JSON", False]
    fixed_speedup = (
        chars_per_s["JSON, fixed indent", True] / chars_per_s["JSON, fixed indent", False]
    )

    # 3. time to first token
    ttft_rows = []
    for name in ("email", "pink_floyd_json", "url"):
        _INDEXES.clear()
        cold = decode_rate(model, regexes[name], "Give an example.", 1)[2]
        warm = min(decode_rate(model, regexes[name], "Give an example.", 1)[2] for _ in range(3))
        ttft_rows.append((name, cold * 1e3, warm * 1e3))

    print_table(
        "Generation on this CPU (SmolLM2-135M-Instruct, float32)",
        ["run", "tokens/s", "chars/s", "steps", "total s"],
        [
            ("unconstrained, 64 tokens", max(free), "", 64, 64 / max(free)),
            ("[^\\n]+ (widest mask), 64 tokens", max(masked), "", 64, 64 / max(masked)),
            *[
                (
                    f"{label}, fast-forward {'on' if ff else 'off'}",
                    t[1] / t[3],
                    chars_per_s[label, ff],
                    t[1],
                    t[3],
                )
                for (label, ff), t in timings.items()
            ],
        ],  # fmt: skip
    )
    print_table("Time to first token (ms)", ["regex", "index cold", "index warm"], ttft_rows)
    return [
        check("masked / unconstrained tokens/s", ratio, ">= 0.97", ratio >= 0.97),
        check("fast-forward speed-up, chars/s (JSON)", speedup, ">= 1.5x", speedup >= 1.5, "x"),
        check("  same, fixed indentation (info)", fixed_speedup, "-", True, "x"),
    ]


if __name__ == "__main__":
    print_table("Targets", ["target", "measured", "wanted", ""], main())
