"""``load_model`` hands back a model whose vocabulary is warm: its byte trie and DAWG (what
every index over it shares; 2-7 s at 128k tokens) are built during the load, not by the
first run (issue 43: the app warmed its vocabulary, a library user's first run paid)."""

from __future__ import annotations

import time

import pytest

from fsmviz import build_index, load_model
from fsmviz.tokens.fast.dawg import _DAWGS

pytestmark = pytest.mark.slow  # the bundled tokenizer's 49k vocabulary, a model saved and loaded


def test_load_model_builds_the_vocabularys_dawg_before_the_first_run(tmp_path) -> None:
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from fsmviz.bundled import bundled_tokenizer_dir

    tokenizer = AutoTokenizer.from_pretrained(bundled_tokenizer_dir())
    tokenizer.add_tokens([f"<warm-{time.time_ns()}>"])  # a vocabulary no cache has seen
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=8,
        intermediate_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    LlamaForCausalLM(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    model = load_model(str(tmp_path), device="cpu")
    dawg = _DAWGS.peek(model.vocab.fingerprint)
    assert dawg is not None
    build_index(r"[a-z]{1,3}", model.vocab)
    assert _DAWGS.peek(model.vocab.fingerprint) is dawg  # the run used it, built none
