"""``make gpu-check`` where there is no GPU: it says so and succeeds, and ``--export``
writes what a GPU machine without weights needs (config and tokenizer, no weights)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu_check.py"


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA: the check runs")
def test_without_cuda_it_says_so_and_exits_0() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "no CUDA GPU here" in done.stdout and "--device cpu" in done.stdout


@pytest.mark.slow
def test_export_writes_the_config_and_tokenizer_without_weights(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--export", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    model = tmp_path / "model"
    assert (model / "config.json").is_file() and (model / "tokenizer.json").is_file()
    assert not list(model.glob("*.safetensors"))
    assert (tmp_path / "site" / "interegular" / "__init__.py").is_file()
    assert (tmp_path / "schema.regex").read_text().startswith("\\{")
