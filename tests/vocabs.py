"""Real vocabularies for the tests: llama.cpp's own vocabulary files, as a user deploys them.

llama.cpp keeps one small GGUF per tokenizer family (``ggml-vocab-<family>.gguf``: the
vocabulary and merges, no weights) with its tokenizer test cases beside it (``.inp``: texts
separated by ``__ggml_vocab_test__`` lines; ``.out``: the ids llama.cpp writes for each, one
line per text). They ship inside llama-cpp-python's source distribution on PyPI, which
``make vocabs`` (a step of ``make test``) downloads once into ``VOCABS_DIR``, outside the
work tree, extracting only the families below; then ``python tests/vocabs.py`` converts each
GGUF to a ``tokenizer.json`` folder there (transformers' GGUF conversion is slow Python:
13-40 s for a 32k vocabulary and minutes for 128k on a busy 2-core machine; loading the
converted folder takes about a second).

    family      kind                                      tokens
    llama-spm   Llama 2: SentencePiece, ``▁``, ``<0x0A>``   32,000
    phi-3       Phi-3: the same, plus chat tokens          32,064
    llama-bpe   Llama 3: byte-level BPE                   128,256 (+1, see below)
    qwen2       Qwen2: byte-level BPE                     151,936
    gpt-2       GPT-2: byte-level BPE                      50,257
    gemma-4     Gemma 4: SentencePiece, byte fallback     262,144

Two repairs make the converted tokenizer the real one (``.inp``/``.out`` prove it,
``tests/test_tokenizers.py``): transformers converts llama-spm with a ``Metaspace``
pre-tokenizer that does not add the word-boundary ``▁`` before a text that starts with a
space (``" Hello"`` became ``▁Hello``; SentencePiece and llama.cpp write ``▁ ▁Hello``), so
its normalizer is set back to what Llama 2's own ``tokenizer.json`` has (prepend ``▁``,
spaces to ``▁``). Nothing else is changed. Gemma 4's GGUF cannot go through
``AutoTokenizer(gguf_file=...)`` (it reads the model's config first, and fails on Gemma 4's);
its tokenizer is built from the file's vocabulary alone, by transformers' own
``get_gguf_tokenizer`` and ``convert_gguf_tokenizer`` (all 46 of llama.cpp's cases agree).

``tiny_model(family)``: a random-weight Llama (hidden size 16, one layer) whose output layer
is as wide as the GGUF's token list (the model's logits), wrapped as an fsmviz ``Model``.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VOCABS_DIR = Path(os.environ.get("FSMVIZ_VOCABS", Path.home() / ".cache" / "fsmviz" / "vocabs"))
"""Where ``make vocabs`` puts the GGUF files and their converted tokenizers."""

FAMILIES = ("llama-spm", "phi-3", "llama-bpe", "qwen2", "gpt-2", "gemma-4")
"""The families ``make vocabs`` extracts (the Makefile's ``VOCAB_FAMILIES``)."""

SENTENCEPIECE = ("llama-spm", "phi-3")
"""The SentencePiece families that write a word boundary ``▁`` before a text (Llama 2,
Phi-3; Gemma 4 is SentencePiece without it)."""


def gguf_path(family: str) -> Path:
    return VOCABS_DIR / f"ggml-vocab-{family}.gguf"


def missing() -> str | None:
    """Why the real vocabularies cannot be used here, or None when they can."""
    absent = [family for family in FAMILIES if not gguf_path(family).is_file()]
    if absent:
        return f"no llama.cpp vocabularies in {VOCABS_DIR} ({', '.join(absent)}): run `make vocabs`"
    return None


@dataclass(frozen=True)
class Case:
    """One of llama.cpp's tokenizer test cases: a text and the ids llama.cpp writes for it."""

    text: str
    ids: tuple[int, ...]


def llama_cpp_cases(family: str) -> list[Case]:
    """llama.cpp's tokenizer test cases for ``family`` (``.inp`` and ``.out``)."""
    path = gguf_path(family)
    marker = "\n__ggml_vocab_test__\n"
    texts = path.with_name(path.name + ".inp").read_text(encoding="utf-8")
    inputs = texts.removesuffix(marker).split(marker)  # every text ends with the marker
    lines = path.with_name(path.name + ".out").read_text(encoding="utf-8").split("\n")
    lines = lines[: len(inputs)] if len(lines) > len(inputs) and not lines[-1] else lines
    ids = [tuple(int(i) for i in line.split()) for line in lines]
    return [Case(text, out) for text, out in zip(inputs, ids, strict=True)]


def gguf_token_count(family: str) -> int:
    """How many tokens the GGUF lists: the width of a real model's output layer. Read once
    (``GGUFReader`` takes a minute over 152k tokens on a busy machine) and kept beside the
    converted tokenizer."""
    kept = converted_dir(family) / "gguf_tokens.json"
    if kept.is_file():
        return int(json.loads(kept.read_text())["tokens"])
    if family in _TOKEN_COUNTS:  # read by this process's conversion
        count = _TOKEN_COUNTS[family]
    else:
        from gguf import GGUFReader

        count = len(GGUFReader(str(gguf_path(family))).fields["tokenizer.ggml.tokens"].data)
    kept.write_text(json.dumps({"tokens": count}))
    return count


def converted_dir(family: str) -> Path:
    return VOCABS_DIR / "converted" / family


def convert(family: str) -> Path:
    """The GGUF's tokenizer as a ``tokenizer.json`` folder (converted once, then kept)."""
    folder = converted_dir(family)
    if (folder / "tokenizer.json").is_file():
        return folder
    partial = folder.with_name(f"{family}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    if family in VOCABULARY_ONLY:
        _from_vocabulary(family).save_pretrained(partial)
    else:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(VOCABS_DIR), gguf_file=gguf_path(family).name)
        tokenizer.save_pretrained(partial)
    _repair(partial / "tokenizer.json")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)  # whole or not at all: another worker may convert meanwhile
    return folder


VOCABULARY_ONLY = ("gemma-4",)
"""Families whose tokenizer is built from the GGUF's vocabulary alone (see the module docstring)."""


def _from_vocabulary(family: str) -> Any:
    """The tokenizer of the GGUF's ``tokenizer.*`` fields alone, with its special tokens
    named as the file names them; the token count kept on the way (``gguf_token_count``)."""
    from transformers import PreTrainedTokenizerFast
    from transformers.integrations.gguf.gguf_tokenizer_mapping import (
        convert_gguf_tokenizer,
        get_gguf_tokenizer,
    )

    architecture, fields, config = get_gguf_tokenizer(str(gguf_path(family)))
    backend, _ = convert_gguf_tokenizer(architecture, fields)
    named = {k: v for k, v in config.items() if k.endswith("_token") and v is not None}
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, **named)
    tokenizer.chat_template = config.get("chat_template")
    _TOKEN_COUNTS[family] = len(fields["tokens"])
    return tokenizer


_TOKEN_COUNTS: dict[str, int] = {}


def _repair(path: Path) -> None:
    """SentencePiece's own normalizer where transformers wrote a ``Metaspace`` that adds no
    ``▁`` before a leading space (see the module docstring)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    pre = data.get("pre_tokenizer") or {}
    if pre.get("type") == "Metaspace" and pre.get("prepend_scheme") == "first":
        data["normalizer"] = {
            "type": "Sequence",
            "normalizers": [
                {"type": "Prepend", "prepend": "▁"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
            ],
        }
        data["pre_tokenizer"] = None
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


@functools.cache
def tokenizer(family: str) -> Any:
    """The family's Hugging Face tokenizer (kept for the session)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(convert(family)))


@functools.cache
def vocabulary(family: str) -> Any:
    """fsmviz's ``Vocabulary`` of the family's tokenizer (kept for the session)."""
    from fsmviz import Vocabulary

    return Vocabulary.from_tokenizer(tokenizer(family), name=family)


@functools.cache
def tiny_model(family: str) -> Any:
    """A random-weight Llama over the family's vocabulary (hidden size 16, one layer; its
    output layer as wide as the GGUF's token list), as an fsmviz ``Model``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from fsmviz.generation.models import Model

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=gguf_token_count(family),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=512,
    )
    net = LlamaForCausalLM(config).eval()
    net.requires_grad_(False)
    device = torch.device("cpu")
    return Model(f"tiny-{family}", net, tokenizer(family), vocabulary(family), device)


def model_folder(family: str, folder: Path) -> Path:
    """``tiny_model(family)``'s weights and tokenizer saved as a model folder (what
    ``load_model`` and ``app.py --model`` read): ~4 MB at 32k tokens, written in a second."""
    tiny = tiny_model(family)
    tiny.model.save_pretrained(folder)
    tiny.tokenizer.save_pretrained(folder)
    return folder


if __name__ == "__main__":  # `make vocabs`: convert every family once
    import time

    for name in sys.argv[1:] or FAMILIES:
        started = time.perf_counter()
        convert(name)
        gguf_token_count(name)
        print(f"{name}: tokenizer ready in {time.perf_counter() - started:.1f} s")
