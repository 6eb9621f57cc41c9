"""fsmviz: see and debug regex-guided generation with language models.

Read the engine top-down, in the order data flows:

1. ``syntax``  which patterns are regular, and clear errors for the rest
2. ``dfa``     pattern -> minimal character DFA (what is drawn)
3. ``bytedfa`` the same DFA one UTF-8 byte at a time (what tokens are made of)
4. ``vocab``   a tokenizer's vocabulary as raw bytes; ``trie`` the same as a byte trie
5. ``index``   state -> {allowed token -> next state}, over the whole vocabulary
6. ``models``  a real model (bundled offline, or from the hub); ``batching`` its forward
   passes, on one thread, concurrent generations in one batch; ``generate`` the masked,
   recorded step loop with fast-forward and speculative drafts (``trace`` holds its
   records); ``processor`` the same mask for transformers' own ``generate``
7. ``diagnose`` the stall doctor: why a pattern stalls, loops or truncates;
   ``render`` draws the DFA with graphviz
"""

from .dfa import CharClass, Dfa, Edge, compile_regex
from .diagnose import Finding, diagnose
from .generate import GenerationOptions, Stream, generate, stream
from .index import TokenIndex, build_index
from .models import Model, ModelLoadError, load_model
from .syntax import RegexError
from .trace import Candidate, Step, Trace
from .vocab import Vocabulary

__all__ = [
    "Candidate",
    "CharClass",
    "Dfa",
    "Edge",
    "Finding",
    "GenerationOptions",
    "Model",
    "ModelLoadError",
    "RegexError",
    "Step",
    "Stream",
    "TokenIndex",
    "Trace",
    "Vocabulary",
    "build_index",
    "compile_regex",
    "diagnose",
    "generate",
    "load_model",
    "stream",
]
