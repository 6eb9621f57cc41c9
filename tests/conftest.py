"""Shared test set-up: offline environment, the bundled vocabulary, the seed cases.

How the suite stays fast (``make test``: two pytest-xdist workers, ``--dist loadgroup``,
and the 15 slowest tests printed at the end of every run):

- Every test marked ``e2e``, or using the ``app_server`` fixture, goes to one of two xdist
  groups (``pytest_collection_modifyitems`` below): ``test_page.py`` in one, the other
  browser files in the other. Each group runs on one worker against one app process and one
  Chromium; xdist hands the two largest groups out first, one to each worker, and the other
  tests fill in around them. (One group for all was the suite's critical path.) A new
  browser test needs only the marker; it must not start its own app (ask for
  ``app_server``/``app_url``).
- Expensive things are session fixtures, built at most once per worker: ``bundled_vocab``
  (not ``Vocabulary.bundled()`` in a module fixture of its own), ``tiny``, ``app_server``;
  the real model is ``fsmviz.load_model()`` (cached; the bundled model's conversion is kept
  under ~/.cache/fsmviz). Tests that call ``clear_caches()`` also drop the loaded model.
- One torch thread per process (``OMP_NUM_THREADS=1``, set here): two workers and the app
  share two cores.
- Tests land on either worker in any order: no test may rely on another having run first.
"""

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
# One torch thread per process: `make test` runs two pytest workers, and the app under test
# generates beside them, on two cores. Two threads each made the real model's tests spend
# five times the CPU spinning (1.3 s against 6.7 s for 13 tokens, on a busy machine).
# The app server inherits it (appserver.py copies the environment).
os.environ.setdefault("OMP_NUM_THREADS", "1")

from oracle import load_seed_cases  # noqa: E402  (tests/ is on sys.path under pytest)

APP_GROUPS = {"test_page.py": "app-page"}
"""The pytest-xdist group of the tests that talk to the app server (marker ``e2e``, or the
``app_server`` fixture), by file; any other file's are in ``APP_GROUP``. ``make test`` runs
with ``--dist loadgroup``: each group runs on one worker, against that worker's app process
and Chromium, so the two groups run side by side."""
APP_GROUP = "app"

RUNS_AT_ONCE = 4
"""Generations the test app serves at once: fewer than the eight visitors of
``test_concurrency.py``, so some must wait in the queue."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the browser tests in their xdist group (see ``APP_GROUPS``), by marker or fixture,
    so a new browser test lands in one without being named anywhere."""
    for item in items:
        if item.get_closest_marker("e2e") or "app_server" in getattr(item, "fixturenames", ()):
            group = APP_GROUPS.get(item.path.name, APP_GROUP)
            item.add_marker(pytest.mark.xdist_group(group))


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
    """The real app (``app.py --mcp``, bundled model) on a free port, model loaded: its URL,
    no trailing slash. One process for the whole session, shared by the browser tests and the
    concurrency tests, killed with its process group at the end (see ``appserver.py``).
    ``FSMVIZ_E2E_URL=http://127.0.0.1:7870`` uses an app already running instead."""
    from appserver import ROOT, AppServer, AppStartError

    server = AppServer(
        ROOT / ".tmp" / f"e2e-app-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.log",
        url=os.environ.get("FSMVIZ_E2E_URL"),
        args=("--runs-at-once", str(RUNS_AT_ONCE), "--mcp"),  # test_mcp.py's server too
    )
    try:
        url = server.__enter__()
    except AppStartError as error:
        pytest.fail(str(error))
    try:
        yield url
    finally:
        server.stop()
