"""fsmviz: see and debug regex-guided generation with language models."""

from .dfa import CharClass, Dfa, Edge, compile_regex
from .syntax import RegexError

__all__ = ["CharClass", "Dfa", "Edge", "RegexError", "compile_regex"]
