"""The page's JSON Schema part: a schema instead of a regex, drawn into the main run.

Choosing a schema example (or typing one and pressing "Use this schema") compiles it to a
regex (``fsmviz.schema.convert.compile_schema``, with the chosen whitespace) and puts that regex in
the main Regex box, so the main Generate draws it like any regex: the DFA lit, the chart,
the steps, the doctor. While the box still holds the schema's regex (``SchemaChoice``,
``in_use``), the output panel also shows the output as JSON (``json_view_html``: the field
being written highlighted, then whether it parses and validates). The schema's own
findings (``fsmviz.diagnose.schema``) are listed here, each fix a button.

Everything but ``build_schema_part`` and ``wire_schema_part`` (layout and wiring) and the
``on_*`` handlers (one call each) is a pure function returning data or HTML (every piece of
user text and model output escaped), tested without a browser; the views that need no page
record (the JSON while it streams, the findings, the engines' table) are
``fsmviz.html.schema``'s.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import gradio as gr

from fsmviz.app.backend import vocabulary_for
from fsmviz.cache import bounded
from fsmviz.html.schema import (
    NESTED_SCHEMA,
    SchemaChoice,
    apply_fix,
    engines_html,
    in_use,
    mode_html,
    use_schema,
)
from fsmviz.html.text import error_html
from fsmviz.params import check_generation
from fsmviz.peers.schema import engine_verdicts
from fsmviz.schema.answer import DEFAULT_WHITESPACE, WHITESPACE_CHOICES
from fsmviz.schema.convert import SchemaError

__all__ = [
    "Answered",
    "SchemaExample",
    "build_schema_part",
    "schema_examples",
    "wire_schema_part",
    "with_mode_note",
]

EXAMPLES_FILE = Path(__file__).with_name("schema_examples.json")


@dataclass(frozen=True)
class SchemaExample:
    """A schema (as pretty JSON text), a prompt for it and a max_tokens that lets it close."""

    name: str
    schema: str
    prompt: str
    max_tokens: int


@bounded(maxsize=1)
def schema_examples() -> dict[str, SchemaExample]:
    """The schema examples by name, in the file's order."""
    data = json.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))["examples"]
    return {
        name: SchemaExample(
            name, json.dumps(item["schema"], indent=2), item["prompt"], int(item["max_tokens"])
        )
        for name, item in data.items()
    }


def example_named(schema: str) -> str | None:
    """The name of the example whose schema ``schema`` is (as JSON, whatever its layout),
    None for any other: the example menu names what the box holds, or nothing.

    >>> name = next(iter(schema_examples()))
    >>> example_named(json.dumps(json.loads(schema_examples()[name].schema))) == name
    True
    >>> example_named('{"type": "string"}') is None
    True
    """
    try:
        value = json.loads(schema)
    except ValueError:
        return None
    for name, item in schema_examples().items():
        if json.loads(item.schema) == value:
            return name
    return None


@dataclass(frozen=True)
class SchemaPart:
    """The JSON Schema part's components, laid out by ``build_schema_part`` and wired to
    the main view's by ``wire_schema_part``."""

    example: Any
    schema: Any
    whitespace: Any
    use: Any
    error: Any
    findings: Any
    pick: Any
    """Offscreen number: the page's script sets it to a fix button's finding index."""
    found: Any
    """gr.State: the findings shown, whose fixes the buttons apply."""
    choice: Any
    """gr.State: the ``SchemaChoice`` put in the Regex box, or None."""
    engines: Any = None
    """The button "Which engine gets it right?"."""
    verdicts: Any = None
    """Its answer: ``engines_html``."""
    asked: Any = None
    """Hidden text: a new name each time a use is asked (Use, a whitespace, an example, a
    fix); its change uses the box's schema (``wire_schema_part``). Held by the page, not
    a ``gr.State``: an event reads it as the page held it when the event was sent, with
    the box's schema, where a state is read when the server takes the event up."""
    answered: Any = None
    """gr.State: what the last use answered (``Answered``)."""


@dataclass(frozen=True)
class Answered:
    """What the part's last use (``on_asked``) answered: the ask (``SchemaPart.asked``)
    and the model menu's choice, whose tokens its findings are in."""

    asked: str = ""
    backend: str | None = None


def build_schema_part() -> SchemaPart:
    """Lay out the JSON Schema part inside the current ``gr.Blocks`` context (the main
    view puts it in an accordion under Generate): examples, the ``schema`` box,
    the whitespace choice, "Use this schema", the error and the findings."""
    first = next(iter(schema_examples().values()))
    example = gr.Dropdown(
        list(schema_examples()), value=first.name, label="Schema example", elem_id="schema-example"
    )
    schema_box = gr.Textbox(
        first.schema, label="JSON Schema", lines=8, max_lines=16, elem_id="schema"
    )
    whitespace = gr.Radio(
        list(WHITESPACE_CHOICES),
        value=DEFAULT_WHITESPACE,
        label="Whitespace between JSON tokens (flexible is what loops)",
        elem_id="schema-whitespace",
    )
    use = gr.Button("Use this schema", elem_id="schema-use")
    error = gr.HTML("", elem_id="schema-error")
    findings = gr.HTML("", elem_id="schema-findings")
    pick = gr.Number(
        -1, precision=0, elem_id="schema-fix-pick", elem_classes="offscreen", label="fix"
    )
    engines = gr.Button("Which engine gets it right?", elem_id="schema-engines-run", size="sm")
    verdicts = gr.HTML("", elem_id="schema-engines")
    return SchemaPart(example, schema_box, whitespace, use, error, findings, pick,
                      gr.State(()), gr.State(None), engines, verdicts,
                      gr.Textbox("", visible="hidden", label="ask", elem_id="schema-asked"),
                      gr.State(Answered()))  # fmt: skip


def wire_schema_part(
    part: SchemaPart,
    models: Any,
    regex: Any,
    note: Any,
    prompt: Any,
    max_tokens: Any,
    chat: Any,
    backend: Any,
) -> None:
    """Wire the part to the main view: an example fills the schema box, the prompt and
    max tokens and is used at once; "Use this schema", a whitespace choice and a fix
    button put the schema's regex in the ``regex`` box; ``note`` says when it holds one.
    ``backend``: the model menu; the schema's findings are in its model's tokens, and
    diagnosed again when it changes.

    Every use, and the diagnosis again in another model's tokens, is one event,
    ``always_last``: one at a time per page, and one asked while one is under way is sent
    once it is done, with the page as it is then. So the last reads the page last. Use, a
    whitespace, an example or a fix only asks (a new ``asked``: an example or a fix puts
    its schema in the box first), and the event tells an ask from another model by what
    it last answered (``on_asked``). As events of their own, a whitespace clicked while
    an example was on its way (sent with the schema the example replaced) could come back
    after the example's use and put the old schema's regex beside the example's schema;
    and another model's diagnosis, beside a use under way, could leave the findings in
    the other model's tokens, or of the schema the use replaced."""
    private = {"api_visibility": "private"}
    used = [regex, part.choice, part.found, part.findings, part.error, note, part.answered]
    gr.on([part.use.click, part.whitespace.input], new_ask, None, part.asked,
          trigger_mode="multiple", **private)  # fmt: skip
    gr.on([part.asked.change, backend.change], partial(on_asked, models),
          [part.schema, part.whitespace, max_tokens, backend, part.asked, part.answered,
           part.choice, regex], used, trigger_mode="always_last", **private)  # fmt: skip
    # ``select``, not ``input``: Gradio's Dropdown fires ``input`` on every blur too, so
    # leaving the menu without a choice would put the example over a schema being typed.
    part.example.select(on_schema_example, part.example,
                        [part.schema, prompt, max_tokens, chat, part.asked],
                        trigger_mode="always_last", **private)  # fmt: skip
    part.pick.change(on_fix, [part.pick, part.found, part.schema, part.whitespace],
                     [part.schema, part.whitespace, part.asked, part.pick], **private)  # fmt: skip
    # the note follows the Regex box's edits in the drawing's own event (``with_mode_note``)
    if part.engines is not None:  # one at a time: a child process per engine
        part.engines.click(on_engines, part.schema, part.verdicts, concurrency_limit=1,
                           concurrency_id="schema-engines", **private)  # fmt: skip
    # the example menu names what the schema box holds (typed, fixed or linked), or nothing
    part.schema.change(example_named, part.schema, part.example, trigger_mode="always_last",
                       **private)  # fmt: skip


def with_mode_note(edit: Any, note: Any) -> Any:
    """``edit`` (the Regex box's edit: the trace, the ``handlers.Drawn`` record, the stop
    mark; answered with a dict of updates), taking the shown ``note`` (the schema note
    under the box) last and updating it to ``mode_html`` of the drawn pattern and schema
    in use, only where that differs. In an event of its own, it was one more round trip
    per edit, resending "" to a note already empty."""

    def edited(trace: Any, drawn: Any, *rest: Any) -> dict:
        *rest, shown = rest
        updates = edit(trace, drawn, *rest)
        now = mode_html(drawn.schema, drawn.pattern or "")
        if now != (shown or ""):
            updates[note] = now
        return updates

    return edited


def on_engines(schema: str) -> str:
    """Which engine gets it right: the table, or why the schema cannot be read."""
    try:
        return engines_html(engine_verdicts(schema))
    except SchemaError as error:
        return error_html(error)
    except RecursionError:
        return error_html(SchemaError(NESTED_SCHEMA))


def new_ask() -> str:
    """A name no ask had before (``SchemaPart.asked``): two asks at once (an example, a
    fix) are two changes, where reading the last and adding one could make them one."""
    return uuid.uuid4().hex


def on_schema_example(name: str):
    """A schema example chosen: its schema, prompt and max tokens (chat template on), and
    a new ask that uses it."""
    item = schema_examples()[name]
    return item.schema, item.prompt, item.max_tokens, True, new_ask()


def on_use(models: Any, schema: str, whitespace: str, max_tokens, backend: str | None = None):
    """Use this schema: its regex in the Regex box, its findings (in the tokens of the
    model the menu chose, ``backend``); or why it cannot be."""
    budget = check_generation(max_tokens=max_tokens)["max_tokens"]  # a message naming it
    used = use_schema(schema, whitespace, vocabulary_for(models, backend), budget)
    if used.choice is None:  # a bad schema: the Regex box and the choice stay
        return gr.skip(), gr.skip(), (), "", used.error, gr.skip()
    regex = used.choice.regex
    return regex, used.choice, used.findings, used.findings_html, "", mode_html(used.choice, regex)


def on_fix(k, found, schema: str, whitespace: str):
    """A fix button: the finding's rewritten schema (or whitespace), and a new ask that
    uses it; the picker back to -1 (nothing, on that change). The part the fix leaves as
    it was is not written: a whitespace clicked while the fix was on its way stays (the
    answer would put back the whitespace the fix was sent with)."""
    fixed = apply_fix(k, found, schema, whitespace)
    if fixed is None:
        return (gr.skip(),) * 4
    new_schema, new_whitespace = fixed
    return (
        new_schema if new_schema != schema else gr.skip(),
        new_whitespace if new_whitespace != whitespace else gr.skip(),
        new_ask(),
        -1,
    )


def asks_for(answered: Answered, now: Answered) -> str:
    """What the use event is asked for, read from the page (the event does not say which
    of its triggers fired it, and one sending can stand for several): a new ask, ``use``
    (the menu's model read with it); else another model, ``diagnose`` the schema in use
    in its tokens; else ``nothing`` (an ask already answered).

    >>> asks_for(Answered("1", "a"), Answered("2", "a")), asks_for(Answered("1"), Answered("2"))
    ('use', 'use')
    >>> asks_for(Answered("1", "a"), Answered("1", "b")), asks_for(Answered("1"), Answered("1"))
    ('diagnose', 'nothing')
    """
    if now.asked != answered.asked:
        return "use"
    return "diagnose" if now.backend != answered.backend else "nothing"


def on_asked(models: Any, schema: str, whitespace: str, max_tokens, backend: str | None,
             asked: str, answered: Answered, choice: SchemaChoice | None, regex: str):  # fmt: skip
    """The use event (``wire_schema_part``): ``on_use`` or ``on_model_change``, as
    ``asks_for`` says, then what it answered."""
    now = Answered(asked, backend)
    wanted = asks_for(answered, now)
    if wanted == "use":
        return (*on_use(models, schema, whitespace, max_tokens, backend), now)
    skip = gr.skip()
    if wanted == "diagnose":
        found, shown = on_model_change(models, choice, regex, max_tokens, backend)
        return skip, skip, found, shown, skip, skip, now
    return skip, skip, skip, skip, skip, skip, now


def on_model_change(models: Any, choice: SchemaChoice | None, regex: str, max_tokens, backend):
    """The model menu changed: the schema in use (while the Regex box holds its regex)
    diagnosed again in the chosen model's tokens; nothing when no schema is in use."""
    chosen = in_use(choice, regex or "")
    if chosen is None:
        return gr.skip(), gr.skip()
    try:
        budget = check_generation(max_tokens=max_tokens)["max_tokens"]
    except ValueError:  # a bad budget is said where it is typed; diagnosed without one
        budget = None
    used = use_schema(chosen.schema, chosen.whitespace, vocabulary_for(models, backend), budget)
    return used.findings, used.findings_html
