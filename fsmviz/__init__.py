"""fsmviz: see and debug regex-guided generation with language models.

Read the engine top-down, in the order data flows:

1. ``syntax``  which patterns are regular, and clear errors for the rest
2. ``dfa``     pattern -> minimal character DFA (what is drawn)
3. ``bytedfa`` the same DFA one UTF-8 byte at a time (what tokens are made of)
4. ``vocab``   a tokenizer's vocabulary as raw bytes; ``trie`` the same as a byte trie
5. ``index``   state -> {allowed token -> next state}, over the whole vocabulary
"""

from .dfa import CharClass, Dfa, Edge, compile_regex
from .index import TokenIndex, build_index
from .syntax import RegexError
from .vocab import Vocabulary

__all__ = [
    "CharClass",
    "Dfa",
    "Edge",
    "RegexError",
    "TokenIndex",
    "Vocabulary",
    "build_index",
    "compile_regex",
]
