"""Shared test set-up: offline environment, the bundled vocabulary, the seed cases."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Test the working tree's fsmviz, also when pytest is run as `.venv/bin/pytest` (which,
# unlike `python -m pytest`, does not put the current folder on sys.path).
_REPO_ROOT = str(Path(__file__).resolve().parent.parent)
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

# Tests never touch the network and never phone home. Set before anything imports
# transformers, huggingface_hub or gradio (conftest is imported first).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from oracle import load_seed_cases  # noqa: E402  (tests/ is on sys.path under pytest)

RUNS_AT_ONCE = 4
"""Generations the test app serves at once: fewer than the eight visitors of
``test_concurrency.py``, so some must wait in the queue."""


@pytest.fixture(scope="session")
def seed_cases() -> dict[str, Any]:
    """tests/cases/seed_regexes.json: a copy of ../shared/cases, so that CI has it too."""
    return load_seed_cases()


@pytest.fixture(scope="session")
def bundled_vocab():
    """The real 49,152-token SmolLM2 vocabulary, loaded once per test session."""
    from fsmviz import Vocabulary

    return Vocabulary.bundled()


@pytest.fixture(scope="session")
def tiny():
    """A 2-layer random Llama over the real tokenizer: fast, deterministic noise. Shared by
    the generation tests and the fuzz tests (no weights to load, nothing downloaded)."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from fsmviz import Vocabulary
    from fsmviz.bundled import bundled_tokenizer_dir
    from fsmviz.generation.models import Model

    tokenizer = AutoTokenizer.from_pretrained(bundled_tokenizer_dir())
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
    )
    net = LlamaForCausalLM(config).eval()
    return Model("tiny-random", net, tokenizer, Vocabulary.bundled(), torch.device("cpu"))


@pytest.fixture(scope="session")
def app_server() -> Iterator[str]:
    """The real app (``app.py``, bundled model) on a free port, model loaded: its URL, no
    trailing slash. One process for the whole session, shared by the browser tests and the
    concurrency tests, killed with its process group at the end (see ``appserver.py``).
    ``FSMVIZ_E2E_URL=http://127.0.0.1:7870`` uses an app already running instead."""
    from appserver import ROOT, AppServer, AppStartError

    server = AppServer(
        ROOT / ".tmp" / "e2e-app.log",
        url=os.environ.get("FSMVIZ_E2E_URL"),
        args=("--runs-at-once", str(RUNS_AT_ONCE)),
    )
    try:
        url = server.__enter__()
    except AppStartError as error:
        pytest.fail(str(error))
    try:
        yield url
    finally:
        server.stop()
