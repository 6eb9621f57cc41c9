"""Grammar mode: the per-step mask of the JSON grammar beside llguidance's and xgrammar's
own, grammar -> first mask, and what a grammar costs a generation.

* Per-step mask: along one JSON document written token by token (the model's own
  tokenization), the mask at every step: fsmviz's ``GrammarMatcher.allowed_mask`` (llguidance
  underneath, plus the unpacking into one bool per token), llguidance's bare
  ``compute_bitmask`` on its own GBNF import, and xgrammar's ``GrammarMatcher`` on the same
  text (its EBNF reads GBNF). Mean over the steps, µs.
* Grammar -> first mask: compile a fresh grammar text (no cache holds it), the matcher, the
  first mask (the tokenizer kept, as on a warm page).
* Tokens/s: 64 tokens on the real model, the JSON grammar against no constraint (the
  grammar run pays the mask, the Earley chart and the safe end).
"""

from __future__ import annotations

import time
from pathlib import Path

from bench.table import check, print_table, walk_us
from fsmviz import Vocabulary, compile_grammar
from fsmviz.grammar.matcher import GrammarMatcher, lltokenizer

JSON_GBNF = Path(__file__).resolve().parents[1] / "tests" / "cases" / "grammars" / "json.gbnf"
DOCUMENT = '{"name": "Ada", "tags": ["math", "engines"], "born": 1815, "notes": {"a": [1, true]}}'


def _walk(vocab: Vocabulary) -> list[int]:
    from transformers import AutoTokenizer

    from fsmviz.bundled import bundled_tokenizer_dir

    tokenizer = AutoTokenizer.from_pretrained(bundled_tokenizer_dir())
    return tokenizer.encode(DOCUMENT, add_special_tokens=False)


def masks(vocab: Vocabulary) -> tuple[list[tuple], dict[str, float]]:
    import llguidance
    import xgrammar

    text = JSON_GBNF.read_text()
    tokens = _walk(vocab)
    grammar = compile_grammar(text)
    timings: dict[str, float] = {}

    ours = GrammarMatcher(grammar, vocab)
    timings["fsmviz (llguidance + unpack)"] = walk_us(ours.allowed_mask, tokens, ours.consume)

    bare = llguidance.LLMatcher(
        lltokenizer(vocab), llguidance.grammar_from("gbnf", text), log_level=0
    )
    timings["llguidance compute_bitmask"] = walk_us(
        bare.compute_bitmask, tokens, bare.consume_token
    )

    info = xgrammar.TokenizerInfo(
        [bytes(b) for b in vocab.all_token_bytes],
        vocab_type=xgrammar.VocabType.RAW,
        stop_token_ids=[vocab.eos_token_id],
    )
    # xgrammar's EBNF wants the empty choice spelled "" (llama.cpp's ``ws ::= | " "``)
    compiled = xgrammar.GrammarCompiler(info).compile_grammar(text.replace("::= |", '::= "" |'))
    matcher = xgrammar.GrammarMatcher(compiled)
    bits = xgrammar.allocate_token_bitmask(1, len(vocab))
    timings["xgrammar fill_next_token_bitmask"] = walk_us(
        lambda: matcher.fill_next_token_bitmask(bits), tokens, matcher.accept_token
    )
    rows = [(name, f"{value:.0f}") for name, value in timings.items()]
    return rows, timings


def first_mask(vocab: Vocabulary) -> float:
    lltokenizer(vocab)  # the page keeps it per vocabulary
    text = JSON_GBNF.read_text() + f"\n# fresh {time.time_ns()}\n"
    start = time.perf_counter()
    matcher = GrammarMatcher(compile_grammar(text), vocab)
    matcher.allowed_mask()
    return time.perf_counter() - start


def tokens_per_second() -> tuple[float, float]:
    from fsmviz import generate, load_model

    model = load_model()
    grammar = compile_grammar(JSON_GBNF.read_text())
    prompt = "Describe a cat as a JSON object with many fields."
    generate(model, None, prompt, max_tokens=4)  # warm
    rates = {}
    for name, constraint in (("none", None), ("json grammar", grammar)):
        best = 0.0
        for _ in range(2):
            trace = generate(model, constraint, prompt, max_tokens=64, temperature=0.0)
            best = max(best, trace.tokens_per_second)
        rates[name] = best
    return rates["json grammar"], rates["none"]


def main() -> list[tuple[str, ...]]:
    vocab = Vocabulary.bundled()
    rows, timings = masks(vocab)
    print_table("JSON grammar, per-step mask along a document (µs, mean)", ["engine", "µs"], rows)
    ratio = timings["fsmviz (llguidance + unpack)"] / timings["llguidance compute_bitmask"]
    first = first_mask(vocab)
    masked, free = tokens_per_second()
    print_table(
        "Grammar run on the real model (tokens/s, best of 2, 64 tokens)",
        ["constraint", "tokens/s"],
        [("none", free), ("json grammar", masked)],
    )
    return [
        check("grammar mask / llguidance's own", ratio, "≤ 2", ratio <= 2, "×"),
        check("grammar -> first mask", first, "≤ 1 s", first <= 1.0, " s"),
        check("grammar tokens/s / unconstrained", masked / free, "≥ 0.95", masked / free >= 0.95),
    ]


if __name__ == "__main__":
    targets = main()
    print_table("Targets", ["target", "measured", "wanted", ""], targets)
