"""Each audited run as a link to the page with that run loaded (a permalink).

The page restores its inputs from the query (``fsmviz.app.handlers.on_load``, the Grammar
tab's ``grammar_page.on_load``) and, with ``run=1``, runs it and selects ``step``
(``static/app.js``, ``static/grammar.js``): the same constraint, prompt and decoding
options, so a greedy run comes back exactly as the audit saw it, its stalled step chosen.

    >>> from fsmviz.generation.trace import GenerationOptions
    >>> run_link("", (("regex", "[0-9]+"),), GenerationOptions(max_tokens=8), "Hi & bye", 3)
    '?regex=%5B0-9%5D%2B&prompt=Hi+%26+bye&max_tokens=8&temperature=0.0&seed=0&chat=1&run=1&step=3'
"""

from __future__ import annotations

from urllib.parse import urlencode

from fsmviz.generation.trace import GenerationOptions

__all__ = ["MAX_LINKED_PROMPT", "constraint_link", "run_link"]

MAX_LINKED_PROMPT = 4_000
"""The page's longest prompt (``MAX_PROMPT``): a longer one is not linked."""
MAX_LINKED_CONSTRAINT = 20_000
"""Characters of a schema or grammar a link carries (the page's ``MAX_LINKED_SCHEMA``)."""


def constraint_link(constraint: object) -> tuple[tuple[str, str], ...]:
    """The query parameters that put ``constraint`` back on the page: ``regex``; a compiled
    schema's ``schema``, ``whitespace`` (and its regex on the regex path); a grammar's
    ``grammar`` and ``format``. Empty when it is too long for a link."""
    import json

    from fsmviz.grammar.tree import Grammar

    if isinstance(constraint, str):
        return (("regex", constraint),)
    if isinstance(constraint, Grammar):
        text = constraint.text
        if not text or len(text) > MAX_LINKED_CONSTRAINT:
            return ()
        return (("grammar", text), ("format", constraint.format))
    schema = getattr(constraint, "schema", None)
    if not isinstance(schema, dict):
        return ()
    text = json.dumps(schema, ensure_ascii=False)
    if len(text) > MAX_LINKED_CONSTRAINT:
        return ()
    link = [("schema", text), ("whitespace", getattr(constraint, "whitespace", None) or "")]
    regex = getattr(constraint, "regex", None)
    if getattr(constraint, "path", None) == "regex" and isinstance(regex, str):
        link.insert(0, ("regex", regex))
    return tuple((k, v) for k, v in link if v)


def run_link(
    page: str,
    constraint: tuple[tuple[str, str], ...],
    options: GenerationOptions,
    prompt: str,
    step: int | None,
) -> str | None:
    """``page`` (its address; ``""`` for a link on the page itself) with the query that
    loads and runs this prompt under ``constraint`` (``constraint_link``) with ``options``
    and selects ``step``; None when the run cannot be linked (no constraint, a prompt
    longer than the page takes)."""
    if not constraint or len(prompt) > MAX_LINKED_PROMPT:
        return None
    query = [*constraint, ("prompt", prompt)]
    query += [
        ("max_tokens", str(options.max_tokens)),
        ("temperature", str(options.temperature)),
        ("seed", str(options.seed)),
        ("chat", "1" if options.chat else "0"),
    ]
    if options.prob_limit:
        query.append(("prob_limit", str(options.prob_limit)))
    if options.top_k:
        query.append(("top_k", str(options.top_k)))
    if options.top_p < 1:
        query.append(("top_p", str(options.top_p)))
    if options.stop != "eos":
        query.append(("stop", options.stop))
    if options.overshoot:
        query.append(("overshoot", "1"))
    query.append(("run", "1"))
    if step is not None:
        query.append(("step", str(step)))
    return f"{page}?{urlencode(query)}"
