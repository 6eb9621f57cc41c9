"""The Grammar tab's run on the real model: does drawing the parser's place slow it down?

The tab streams a grammar run through ``grammar_live.grammar_frames``: the generation on a
thread of its own, and on the page's thread, every frame, the Earley chart moved on, the
place found and the rules drawing lit, the table and the chart redrawn. The issue's
target: masked (the tab's run, drawing and all) / unconstrained tokens/s ≥ 0.95.

The machine is shared and loaded, so the runs are interleaved (unconstrained, the
engine's grammar run, the tab's run; ``ROUNDS`` times) and each ratio is taken between
the medians of one invocation, never against a number from another run. The tab's
tokens/s is the stream's own (the allowed sets and the shadow run, which come after the
last token, are not in it). Beside it, one step's mask: llguidance's bare
``compute_bitmask`` against fsmviz's ``GrammarMatcher.allowed_mask`` (``grammar_bench``
has the full table with xgrammar).
"""

from __future__ import annotations

import statistics
import time

from bench.grammar_bench import JSON_GBNF, _walk
from bench.table import check, print_table, walk_us

ROUNDS = 3
TOKENS = 48
PROMPT = "Describe a cat as a JSON object with many fields."


def rates(rounds: int = ROUNDS, tokens: int = TOKENS) -> dict[str, float]:
    """Median tokens/s of each way of running, interleaved ``rounds`` times."""
    from fsmviz import compile_grammar, generate, load_model
    from fsmviz.app.grammar_live import grammar_frames
    from fsmviz.generation.trace import GenerationOptions
    from fsmviz.html.grammar import grammar_view

    model = load_model()
    text = JSON_GBNF.read_text()
    grammar = compile_grammar(text)
    view = grammar_view(text, "gbnf")
    options = GenerationOptions(max_tokens=tokens, temperature=0.0)
    generate(model, None, PROMPT, max_tokens=4)  # warm
    seen: dict[str, list[float]] = {"unconstrained": [], "engine": [], "tab": []}
    for _ in range(rounds):
        free = generate(model, None, PROMPT, max_tokens=tokens, temperature=0.0)
        seen["unconstrained"].append(free.tokens_per_second)
        engine = generate(model, grammar, PROMPT, max_tokens=tokens, temperature=0.0)
        seen["engine"].append(engine.tokens_per_second)
        frames = grammar_frames(model, view, PROMPT, options, shadow=False)
        trace = next(f.frame.trace for f in frames if f.frame.trace is not None)
        seen["tab"].append(trace.tokens_per_second)
    return {name: statistics.median(values) for name, values in seen.items()}


def mask_costs() -> tuple[float, float]:
    """µs per step along a JSON document: fsmviz's mask, llguidance's bare bitmask."""
    import llguidance

    from fsmviz import Vocabulary, compile_grammar
    from fsmviz.grammar.matcher import GrammarMatcher, lltokenizer

    vocab = Vocabulary.bundled()
    text = JSON_GBNF.read_text()
    steps = _walk(vocab)
    ours = GrammarMatcher(compile_grammar(text), vocab)
    mine = walk_us(ours.allowed_mask, steps, ours.consume)
    bare = llguidance.LLMatcher(lltokenizer(vocab), llguidance.grammar_from("gbnf", text))
    theirs = walk_us(bare.compute_bitmask, steps, bare.consume_token)
    return mine, theirs


def main() -> list[tuple[str, ...]]:
    start = time.perf_counter()
    found = rates()
    ours, bare = mask_costs()
    print_table(
        f"Grammar tab's run, JSON grammar, {TOKENS} tokens (tokens/s, median of {ROUNDS} "
        "interleaved)",
        ["run", "tokens/s"],
        [(name, f"{value:.1f}") for name, value in found.items()],
    )
    print_table(
        "One step's mask along a JSON document (µs, mean)",
        ["engine", "µs"],
        [("fsmviz GrammarMatcher.allowed_mask", f"{ours:.0f}"),
         ("llguidance compute_bitmask", f"{bare:.0f}")],
    )  # fmt: skip
    print(f"({time.perf_counter() - start:.0f} s)")
    tab = found["tab"] / found["unconstrained"]
    engine = found["engine"] / found["unconstrained"]
    return [
        check("grammar tab run tokens/s / unconstrained", tab, "≥ 0.95", tab >= 0.95),
        check("grammar engine run tokens/s / unconstrained", engine, "≥ 0.95", engine >= 0.95),
        check("grammar mask / llguidance compute_bitmask", ours / bare, "≤ 2", ours / bare <= 2,
              "×"),
    ]  # fmt: skip


if __name__ == "__main__":
    print_table("Targets", ["target", "measured", "wanted", ""], main())
