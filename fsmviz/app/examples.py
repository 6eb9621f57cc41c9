"""The examples the page offers: the seed documents' regexes, each with its prompt, and
the Grammar tab's grammars (``grammar_examples``).

They ship with the package (``examples.json`` beside this module), so an installed app or
a container needs nothing from ``tests/``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from fsmviz.cache import bounded

__all__ = ["Example", "GrammarExample", "default_example", "examples", "grammar_examples"]

EXAMPLES_FILE = Path(__file__).with_name("examples.json")
GRAMMAR_EXAMPLES_FILE = Path(__file__).with_name("grammar_examples.json")

BUDGETS = {"email": 32}
"""Max tokens for an example whose story is told in fewer than the page's usual 64. The
default example (seed 002's email) leaves the address at step 13 and rides ``.I.I.I``: by
32 tokens it has gone round the loop nine times (the doctor needs four laps), in half the
wait; the doctor's check of its fix and the shadow run are bounded by the same budget."""

MAX_TOKENS = 64
"""Max tokens for the other examples."""

CONTINUATIONS = frozenset({"moby_choice", "email", "protein", "protein_20g"})
"""Seed prompts that are the start of a sentence to continue, not a question for a chat."""


@dataclass(frozen=True)
class Example:
    """A regex, a prompt for it, and whether the prompt goes through the chat template."""

    name: str
    pattern: str
    prompt: str
    chat: bool
    max_tokens: int = MAX_TOKENS
    """The budget the example is shown with (``BUDGETS``)."""


@bounded(maxsize=1)
def examples() -> dict[str, Example]:
    """The seed examples by name, in the file's order."""
    data = json.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))
    prompts = data["prompts"]
    return {
        name: Example(
            name,
            pattern,
            prompts.get(name, "Give one example."),
            name not in CONTINUATIONS,
            BUDGETS.get(name, MAX_TOKENS),
        )
        for name, pattern in data["regexes"].items()
    }


def default_example() -> Example:
    """The example the page opens with: seed 002's email, which loops."""
    return examples()["email"]


@dataclass(frozen=True)
class GrammarExample:
    """A grammar (``format`` gbnf or lark), a prompt for it and a max_tokens that fits."""

    name: str
    format: str
    grammar: str
    prompt: str
    max_tokens: int


@bounded(maxsize=1)
def grammar_examples() -> dict[str, GrammarExample]:
    """The examples by name, in the file's order.

    >>> list(grammar_examples())[:2]
    ['nested JSON', 'arithmetic']
    """
    data = json.loads(GRAMMAR_EXAMPLES_FILE.read_text(encoding="utf-8"))["examples"]
    return {
        name: GrammarExample(
            name, item["format"], item["grammar"], item["prompt"], int(item["max_tokens"])
        )
        for name, item in data.items()
    }
