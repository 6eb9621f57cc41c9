"""A JSON Schema drawn by its structure on the page, lit where the output is.

``fsmviz.schema.structure`` writes the schema's structure as a grammar (one rule per object,
its fields, each array and alternative; strings and numbers one labelled edge each); the
grammar tab draws it (``fsmviz.html.grammar.grammar_view``: the rules as small automata) and
finds the parser's place after a text (``fsmviz.html.grammar.place_after``), so the object and
the field being written are lit while a schema run streams, on either path; once it has
ended, at whichever step is chosen (``rules_lights``, applied in the browser). The
character DFA of a regex-path schema stays in the main drawing.

Pure functions returning HTML (every piece of user text escaped), tested without a browser.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from fsmviz.cache import BoundedCache
from fsmviz.grammar import Grammar
from fsmviz.grammar.place import rule_states, step_charts
from fsmviz.html.grammar import (
    GrammarView,
    grammar_view,
    place_after,
    rules_html,
    rules_lights,
)
from fsmviz.schema.convert import SchemaError
from fsmviz.schema.structure import structure_lark

__all__ = ["structure_grammar", "structure_html", "structure_states", "structure_view"]

_lark: BoundedCache[str | SchemaError] = BoundedCache(32)


def _structure_text(schema: str) -> str | SchemaError:
    """``structure_lark(schema)``, or why it cannot be written; cached by schema text."""

    def build() -> str | SchemaError:
        try:
            return structure_lark(schema)
        except SchemaError as error:
            return error

    return _lark.get_or_build(schema, build)


def structure_grammar(schema: str) -> Grammar | None:
    """The schema's structure as a compiled grammar (the one ``structure_view`` draws,
    compiled once for both), or None where it cannot be written."""
    lark = _structure_text(schema)
    return None if isinstance(lark, SchemaError) else grammar_view(lark, "lark").grammar


def structure_view(schema: str) -> GrammarView | str:
    """The drawn structure of ``schema`` (JSON text), or why it is not drawn (plain text).

    >>> view = structure_view('{"type": "object", "properties": {"n": {"type": "integer"}}}')
    >>> view.grammar.format, [m.rule for m in view.network.machines]
    ('lark', ['start', 'start_field'])
    """
    lark = _structure_text(schema)
    if isinstance(lark, SchemaError):
        return lark.message
    view = grammar_view(lark, "lark")
    if view.network is None:  # too large to draw: the grammar tab's own words
        return "its structure is too large to draw on the page"
    return view


def structure_states(schema: str, steps: Sequence[Any]) -> tuple[tuple[str, str], ...] | None:
    """Each step's (rule before, rule after) in the schema's structure, as the Grammar
    tab's step table names them (``grammar_live.rule_states``): ``start_field`` while a
    field of the top object is written; None when the structure is not drawn.

    >>> from fsmviz.generation.trace import Step
    >>> schema = '{"type": "object", "properties": {"n": {"type": "integer"}}}'
    >>> steps = [Step(k, t, k, k + 1, 1, 1.0, (), index=k, token_bytes=t.encode())
    ...          for k, t in enumerate(['{"', 'n":', ' 1', '}'])]
    >>> structure_states(schema, steps)
    (('start', 'start_field'), ('start_field', 'start_field'), ('start_field', 'start_field'), ('start_field', 'end'))

    After `` 1`` the number may go on: the parser is still in the field.
    """  # noqa: E501
    view = structure_view(schema)
    if isinstance(view, str) or view.network is None:
        return None
    return rule_states(step_charts(view.network, steps))


STREAM_LIMIT = 150_000
"""Characters of drawing sent with every streamed frame at most (about ten a second): a
Kubernetes Deployment's 67 boxes (350 KB) are drawn once the run ends instead."""


def structure_html(
    schema: str, text: str | None = None, streaming: bool = False, steps: Sequence[Any] = ()
) -> str:
    """The structure drawing (``#schema-structure``), lit at the place after ``text`` (the
    output so far) when given; a schema too large to draw is said so, and one whose
    drawing is over ``STREAM_LIMIT`` is drawn when the run ends, not while ``streaming``.
    With a finished run's ``steps``, each step's lights go with it (``rules_lights``): the
    page lights the field being written at whichever step is chosen.

    >>> html = structure_html('{"type": "object", "properties": {"n": {"type": "integer"}}}',
    ...                       '{"n": 1')
    >>> import re
    >>> re.findall(r'class="node pos (r[0-9]+s[0-9]+) current top"', html)
    ['r1s1', 'r0s2']

    Two places are live: in the field, reading the number, and back in the object after it
    (the number may be whole).
    """
    view = structure_view(schema)
    head = (
        '<div class="structure-head">The schema by its structure: one automaton per object '
        "(its frame and its fields), array and alternative; strings and numbers are one "
        "edge each. Lit: where the output is.</div>"
    )
    if isinstance(view, str):
        body = f'<p class="empty">The structure is not drawn: {escape(view)}.</p>'
    elif streaming and len(view.svg) > STREAM_LIMIT:
        body = (
            f'<p class="empty">The structure ({len(view.network.machines)} boxes) is drawn '  # type: ignore[union-attr]
            "when the run ends: too large to send with every token.</p>"
        )
    else:
        place = place_after(view, text) if text else None
        # the scroll shades (static/app.js) sit on the drawing's own box, under the head
        drawing = f'<div class="structure-drawing">{rules_html(view, place)}</div>'
        body = drawing + rules_lights(view, steps)
    return f'<div id="schema-structure" class="schema-structure">{head}{body}</div>'
