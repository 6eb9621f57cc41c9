"""fsmviz: see and debug regex-guided generation with language models.

Read the engine top-down, in the order data flows:

1. ``syntax``  which patterns are regular, and clear errors for the rest
2. ``dfa``     pattern -> minimal character DFA (what is drawn)
3. ``bytedfa`` the same DFA one UTF-8 byte at a time (what tokens are made of)
4. ``vocab``   a tokenizer's vocabulary as raw bytes; ``trie`` the same as a byte trie
5. ``index``   state -> {allowed token -> next state}, over the whole vocabulary;
   ``derivatives`` the first step's tokens alone, without building the DFA
6. ``models``  a real model (bundled offline, or from the hub); ``batching`` its forward
   passes, on one thread, concurrent generations in one batch; ``generate`` the masked,
   recorded step loop with fast-forward and speculative drafts (``trace`` holds its
   records); ``processor`` the same mask for transformers' own ``generate``
7. ``diagnose`` the stall doctor: why a pattern stalls, loops or truncates; ``engines``
   the same pattern in outlines-core, llguidance and xgrammar (vLLM, SGLang, TGI)
8. ``errors`` ``FsmvizError``, the base of every error raised here; ``cli`` the command
   line (``python -m fsmviz``)

The web page lives in ``fsmviz.app`` (gradio, plotly, graphviz), which imports the engine
and never the other way round. ``import fsmviz`` loads no torch, gradio or plotly: the
generation names (``load_model``, ``generate``, ``stream``…) import torch on first use.
"""

import sys
from types import ModuleType
from typing import TYPE_CHECKING

from .cache import clear_caches
from .derivatives import first_allowed_tokens
from .dfa import CharClass, Dfa, Edge, compile_regex
from .diagnose import Finding, diagnose
from .errors import FsmvizError
from .index import IndexTooLarge, TokenIndex, build_index
from .syntax import RegexError
from .trace import Candidate, GenerationOptions, Step, Trace
from .vocab import Vocabulary

if TYPE_CHECKING:
    from .batching import ForwardPassError
    from .bundled import BundledModelMissing
    from .generate import Stream, generate, stream
    from .models import Model, ModelLoadError, load_model
    from .schema import SchemaError, regex_from_schema

# The generation names need torch and transformers, which take seconds to import; someone
# who only wants ``build_index`` should not pay for them. They load on first use.
_LAZY = {
    "Stream": "generate",
    "generate": "generate",
    "stream": "generate",
    "Model": "models",
    "ModelLoadError": "models",
    "load_model": "models",
    # JSON Schema in: outlines-core and jsonschema load with it, not with fsmviz.
    "SchemaError": "schema",
    "regex_from_schema": "schema",
    "ForwardPassError": "batching",
    "BundledModelMissing": "bundled",
}


class _Package(ModuleType):
    """``fsmviz`` itself. Importing the submodule ``fsmviz.generate`` (as ``from
    fsmviz.generate import …`` does) would set the package's attribute ``generate`` to that
    module, hiding the function ``fsmviz.generate`` for every later ``from fsmviz import
    generate``; the function keeps the name (the module stays in ``sys.modules``)."""

    def __setattr__(self, name: str, value: object) -> None:
        if _LAZY.get(name) == name and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fsmviz' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "BundledModelMissing",
    "Candidate",
    "CharClass",
    "Dfa",
    "Edge",
    "Finding",
    "ForwardPassError",
    "FsmvizError",
    "GenerationOptions",
    "IndexTooLarge",
    "Model",
    "ModelLoadError",
    "RegexError",
    "SchemaError",
    "Step",
    "Stream",
    "TokenIndex",
    "Trace",
    "Vocabulary",
    "build_index",
    "clear_caches",
    "compile_regex",
    "diagnose",
    "first_allowed_tokens",
    "generate",
    "load_model",
    "regex_from_schema",
    "stream",
]
