"""fsmviz: see and debug regex-guided generation with language models.

Read the engine top-down, one folder a layer, in the order data flows; each folder's
``__init__`` says what it holds and what it may import (a test holds every import to that):

1. ``automaton/``  a pattern becomes automata: ``syntax`` (which patterns are regular, and
   a clear error for the rest), ``dfa`` (the minimal character DFA that is drawn),
   ``bytedfa`` (the same DFA one UTF-8 byte at a time: what tokens are made of), ``graph``
   (how far each state is from a match)
2. ``tokens/``     the automaton meets a vocabulary: ``vocab`` (a tokenizer's tokens as raw
   bytes), ``trie`` (the same as a byte trie), ``index`` (state -> {allowed token -> next
   state}); ``tokens/fast/`` the same answers, faster, each held to the plain walk
3. ``generation/`` a real model under the mask: ``models``, ``batching``, ``generate``
   (the recorded step loop), ``trace`` (its records), ``constraint`` (``fsmviz.Constraint``:
   what the loop and the page ask of any constraint), ``processor`` (the mask for
   transformers' own ``generate``), ``server`` (a model behind a vLLM server);
   ``processor`` beside the folders is the contract's path to it
4. ``schema/``     JSON Schema in: a schema becomes a regex or a grammar that keeps its schema
   names; ``grammar/`` a context-free grammar in (GBNF, Lark): its tree, fsmviz's own Earley
   recognizer, llguidance's exact masks, and the run that puts them in the loop;
   ``constraints`` ``fsmviz.constraint(regex=|schema=|grammar=, vocab=)``, the one place a
   constraint is built, once
5. ``peers/``      the same pattern asked of outlines-core, llguidance and xgrammar
6. ``diagnose/``   the stall doctor; ``learn/`` the teaching view's pure functions;
   ``drawing/`` DOT and SVG (graphviz's ``dot``): the automata drawn
7. ``audit/``      one constraint over a file of prompts: where and how often runs stall;
   ``html/`` the page's HTML and charts, written from records (pure, no gradio)
8. ``app/`` the web page (gradio: layout, events) and ``cli`` the command line
   (``__main__``): the top, which nothing below imports

Beside the folders, the few things every layer shares: ``errors`` (``FsmvizError``, the base
of every error raised here), ``cache`` (``BoundedCache``, the only shared state),
``printable`` (the one escaper), ``arrays`` (two numpy helpers of the walks), ``params``
(every parameter a caller sets, checked in one place) and ``bundled`` (where the bundled
model's files live).

``import fsmviz`` loads no torch, gradio or plotly: the generation names (``load_model``,
``generate``, ``stream``…) import torch on first use.
"""

from typing import TYPE_CHECKING

# ``fsmviz.audit`` is both a folder and a function: imported here, as ``diagnose`` is, so the
# name is the function (a later import of the folder would otherwise shadow it). No torch.
from fsmviz.audit import AuditReport, audit
from fsmviz.automaton.dfa import CharClass, Dfa, Edge, compile_regex
from fsmviz.automaton.syntax import RegexError
from fsmviz.cache import clear_caches
from fsmviz.constraints import Constraint, constraint
from fsmviz.diagnose import Finding, diagnose
from fsmviz.errors import FsmvizError
from fsmviz.generation.trace import Candidate, GenerationOptions, Step, Trace
from fsmviz.grammar import Grammar, GrammarError, compile_grammar
from fsmviz.tokens.fast.derivatives import first_allowed_tokens
from fsmviz.tokens.index import IndexTooLarge, TokenIndex, build_index
from fsmviz.tokens.vocab import Vocabulary

if TYPE_CHECKING:
    from fsmviz.bundled import BundledModelMissing
    from fsmviz.generation.batching import ForwardPassError
    from fsmviz.generation.generate import Stream, generate, stream
    from fsmviz.generation.models import Model, ModelLoadError, load_model
    from fsmviz.generation.server import ServerError, ServerModel, connect
    from fsmviz.schema.convert import SchemaError, compile_schema, regex_from_schema

# The generation names need torch and transformers, which take seconds to import; someone
# who only wants ``build_index`` should not pay for them. They load on first use.
_LAZY = {
    "Stream": "fsmviz.generation.generate",
    "generate": "fsmviz.generation.generate",
    "stream": "fsmviz.generation.generate",
    "Model": "fsmviz.generation.models",
    "ModelLoadError": "fsmviz.generation.models",
    "load_model": "fsmviz.generation.models",
    # JSON Schema in: outlines-core and jsonschema load with it, not with fsmviz.
    "SchemaError": "fsmviz.schema.convert",
    "regex_from_schema": "fsmviz.schema.convert",
    "compile_schema": "fsmviz.schema.convert",
    "ForwardPassError": "fsmviz.generation.batching",
    "BundledModelMissing": "fsmviz.bundled",
    # A model behind a vLLM server: the server writes, fsmviz replays.
    "connect": "fsmviz.generation.server",
    "ServerError": "fsmviz.generation.server",
    "ServerModel": "fsmviz.generation.server",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fsmviz' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AuditReport",
    "BundledModelMissing",
    "Candidate",
    "CharClass",
    "Constraint",
    "Dfa",
    "Edge",
    "Finding",
    "ForwardPassError",
    "FsmvizError",
    "GenerationOptions",
    "Grammar",
    "GrammarError",
    "IndexTooLarge",
    "Model",
    "ModelLoadError",
    "RegexError",
    "SchemaError",
    "ServerError",
    "ServerModel",
    "Step",
    "Stream",
    "TokenIndex",
    "Trace",
    "Vocabulary",
    "audit",
    "build_index",
    "clear_caches",
    "compile_grammar",
    "compile_regex",
    "compile_schema",
    "connect",
    "constraint",
    "diagnose",
    "first_allowed_tokens",
    "generate",
    "load_model",
    "regex_from_schema",
    "stream",
]
