"""What a learner types into the Learn view, read and checked: a toy vocabulary as the seeds
write it (a JSON list of strings), logits typed by hand, tokens as hex bytes; and the toy
walk those inputs give (``toy_state``).

Each reader answers ``(value, "")`` or ``(None, what is wrong)`` in plain English, so that
the page shows the problem where the input is, never a traceback.

>>> parse_tokens('["a", ".", ".2", "1"]')
(['a', '.', '.2', '1'], '')
>>> parse_logits("0 1.5, 2", 3)
([0.0, 1.5, 2.0], '')
>>> parse_hex_tokens("e6 97 | a5")
([b'\\xe6\\x97', b'\\xa5'], '')
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from fsmviz.automaton.syntax import RegexError
from fsmviz.errors import FsmvizError
from fsmviz.learn.bytes import ByteStep
from fsmviz.learn.toy import TOY_EXAMPLES, ToyView, ZipModel, toy_view
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "MAX_TOY_TOKENS",
    "byte_kind",
    "parse_hex_tokens",
    "parse_logits",
    "parse_tokens",
    "toy_state",
    "toy_vocabulary",
]

MAX_TOY_TOKENS = 200
"""Tokens a toy vocabulary holds at most: each is a column of the mask table."""


def parse_tokens(text: str) -> tuple[list[str] | None, str]:
    """A JSON list of strings, as the seeds write it: ``["a", ".", ".2", "1"]``."""
    try:
        tokens = json.loads(text)
    except json.JSONDecodeError as error:
        return None, f"the tokens are not a JSON list (column {error.colno}): {error.msg}"
    if not isinstance(tokens, list) or not all(isinstance(t, str) and t for t in tokens):
        return None, 'write the tokens as a JSON list of non-empty strings: ["a", ".", ".2"]'
    if len(tokens) > MAX_TOY_TOKENS:
        return None, f"{len(tokens)} tokens: a toy vocabulary holds at most {MAX_TOY_TOKENS}"
    return tokens, ""


def parse_logits(text: str, size: int) -> tuple[list[float] | None, str]:
    """``size`` numbers separated by spaces or commas, one per token (the end token last);
    blank is none (the model's own)."""
    if not text.strip():
        return None, ""
    try:
        values = [float(x) for x in text.replace(",", " ").split()]
    except ValueError:
        return None, "logits are numbers separated by spaces, one per token"
    if len(values) != size:
        return None, f"{len(values)} logits for {size} tokens (the last one is the end token)"
    return values, ""


def parse_hex_tokens(text: str) -> tuple[list[bytes] | None, str]:
    """``e6 97 | a5``: tokens separated by ``|``, bytes in hex; empty tokens dropped."""
    try:
        tokens = [bytes.fromhex(part) for part in text.split("|")]
    except ValueError:
        return None, "write bytes in hex, tokens separated by |, e.g. e6 97 | a5"
    return [t for t in tokens if t], ""


def byte_kind(step: ByteStep) -> str:
    """Where one byte of a byte walk leaves the byte DFA, in words."""
    if step.after is None:
        return "dead"
    return "inside a character" if step.inside else "character state"


def toy_vocabulary(tokens_text: str, example: str) -> tuple[Vocabulary | None, str]:
    """The typed tokens as a toy vocabulary, its end token the ``example``'s (``<eos>`` for
    tokens of one's own); a duplicate or an empty list is said, as any reader's problem."""
    tokens, problem = parse_tokens(tokens_text)
    if tokens is None:
        return None, problem
    eos = TOY_EXAMPLES[example].eos if example in TOY_EXAMPLES else "<eos>"
    try:
        return Vocabulary.from_strings(tokens, eos), ""
    except (ValueError, FsmvizError) as error:
        return None, getattr(error, "message", str(error))


def toy_state(
    pattern: str,
    tokens_text: str,
    example: str,
    history: Sequence[int],
    model: str,
    logits_text: str,
    training: str,
) -> tuple[ToyView | None, str]:
    """The toy walk after ``history`` (token ids) under ``pattern``, with the model chosen
    (``typed`` logits, ``ZipModel`` trained on ``training``, else uniform), or the problem
    with what was typed."""
    vocab, problem = toy_vocabulary(tokens_text, example)
    if vocab is None:
        return None, problem
    logits, problem = parse_logits(logits_text, len(vocab)) if model == "typed" else (None, "")
    if problem:
        return None, problem
    prompt = TOY_EXAMPLES[example].prompt if example in TOY_EXAMPLES else ""
    zip_model = ZipModel(training.lower(), prompt=prompt) if model == "ZipModel" else None
    try:
        return toy_view(pattern, vocab, history, logits=logits, model=zip_model), ""
    except (RegexError, ValueError) as error:
        return None, getattr(error, "message", str(error))
