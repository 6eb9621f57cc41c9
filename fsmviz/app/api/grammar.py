"""The ``/grammar`` endpoint (and MCP tool): text generated under a context-free grammar.

The answer is the engine's (``fsmviz.grammar.answer.grammar_answer``: plain data);
``grammar_endpoint`` wraps it for ``gr.api``, every bad input a ``gr.Error`` whose message
names the line and column.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from fsmviz.errors import FsmvizError
from fsmviz.grammar import GrammarError, compile_grammar
from fsmviz.grammar.answer import grammar_answer

__all__ = ["grammar_endpoint"]


def grammar_endpoint(get_model: Any) -> Any:
    """The ``/grammar`` API function for ``gr.api``."""

    def grammar(
        grammar: str,
        prompt: str,
        max_tokens: int = 64,
        temperature: float = 0.0,
        seed: int = 0,
        backend: str = "",
    ) -> dict[str, Any]:
        """Generate text with a small language model while a context-free grammar
        constrains every token (exact masks from llguidance), and return the whole trace.
        Unlike a regex, a grammar can nest without limit: JSON, arithmetic, code.

        Args:
            grammar: The grammar, in llama.cpp's GBNF (`root ::= "(" root ")" | "x"`) or
                llguidance's Lark dialect (`start: expr` with `expr: ...`, UPPERCASE
                terminals, `/regex/`, `%ignore`). The format is told apart by `::=`.
            prompt: What the model is asked (with the chat template).
            max_tokens: The most tokens to generate (1 to 1024); the run still ends in a
                whole sentence whenever the shortest completion fits.
            temperature: 0 for greedy decoding; higher samples more freely (up to 2).
            seed: Random seed for sampling, so a run can be repeated.
            backend: Empty for the app's own model, or the name of a server the operator
                configured (`--server NAME=URL`; a name, never a URL): the server writes
                under its own engine and fsmviz replays each token through the exact mask.

        Returns:
            The generated text, whether it is a sentence of the grammar, why it stopped,
            and every step (allowed tokens, valid mass, forced tokens).
        """
        try:
            compile_grammar(grammar)  # a bad grammar answers before the model is waited for
            model = get_model(backend) if backend else get_model()  # a server, by name
            return grammar_answer(grammar, prompt, max_tokens, temperature, seed, model=model)
        except GrammarError as error:
            raise gr.Error(f"{error} [line:column {error.location()}]") from None
        except (ValueError, FsmvizError) as error:  # FsmvizError: a server's fault, named
            raise gr.Error(str(error)) from None

    return grammar
