"""A grammar run as plain data: what the app's ``/grammar`` endpoint (and MCP tool) answers.

``grammar_answer`` checks every input first (``fsmviz.params``; a bad grammar is a
``GrammarError`` with its line and column), then runs the model under the compiled grammar
and returns the trace as a dict. The page wraps it for Gradio (``fsmviz.app.api.grammar``);
a notebook or a script calls it as it is.
"""

from __future__ import annotations

from typing import Any

from fsmviz.generation.generate import generate
from fsmviz.grammar.compile import MAX_GRAMMAR_CHARS, compile_grammar
from fsmviz.params import MAX_PROMPT_CHARS, check_generation, text

__all__ = ["grammar_answer"]


def grammar_answer(
    grammar: str,
    prompt: str,
    max_tokens: int = 64,
    temperature: float = 0.0,
    seed: int = 0,
    *,
    model: Any,
) -> dict[str, Any]:
    """Compile ``grammar`` (GBNF or Lark, told apart), generate under it with ``model``,
    and return the trace as a dict (``matched``: the text is a sentence of the grammar;
    ``format``: the grammar's). Raises ``GrammarError`` (a ``ValueError``) for a bad
    grammar and ``ParameterError`` for a bad option, before the model runs."""
    options = check_generation(max_tokens=max_tokens, temperature=temperature, seed=seed)
    compiled = compile_grammar(text("grammar", grammar, MAX_GRAMMAR_CHARS))
    trace = generate(model, compiled, text("prompt", prompt, MAX_PROMPT_CHARS), **options)
    return {**trace.to_dict(), "format": compiled.format}
