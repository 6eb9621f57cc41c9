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
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from html import escape
from pathlib import Path
from typing import Any

import gradio as gr

from fsmviz.app.backend import vocabulary_for
from fsmviz.app.views import error_html
from fsmviz.cache import bounded
from fsmviz.diagnose.schema import (
    SchemaFinding,
    diagnose_schema,
)
from fsmviz.html.schema import engines_html, fix_label, json_stream_html, schema_findings_html
from fsmviz.html.schema_structure import structure_html
from fsmviz.params import check_generation
from fsmviz.peers.schema import engine_verdicts
from fsmviz.schema.answer import DEFAULT_WHITESPACE, WHITESPACE_CHOICES
from fsmviz.schema.convert import SchemaError, compile_schema
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "SchemaChoice",
    "SchemaExample",
    "SchemaUse",
    "engines_html",
    "schema_findings_html",
    "in_use",
    "json_stream_html",
    "json_view_html",
    "schema_examples",
    "use_schema",
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


def apply_fix(
    k: int, findings: Sequence[SchemaFinding], schema: str, whitespace: str
) -> tuple[str, str] | None:
    """The (schema text, whitespace) after applying finding ``k``'s fix; None when ``k``
    names no finding with a fix (the page's fix picker is reset to -1 after each fix)."""
    k = int(k) if k is not None else -1
    if not 0 <= k < len(findings) or fix_label(findings[k]) is None:
        return None
    finding = findings[k]
    return finding.schema or schema, finding.whitespace or whitespace


@dataclass(frozen=True)
class SchemaChoice:
    """The schema whose regex was put in the Regex box ("Use this schema").

    ``schema`` is the schema as JSON text. While the Regex box still holds ``regex``
    (``in_use``), Generate is a schema run: the output is also shown as JSON and checked
    against the schema; an edit of the regex makes it a plain regex again.
    """

    schema: str
    whitespace: str
    regex: str
    path: str = "regex"
    """``"grammar"`` for a schema no regex holds (``SchemaGrammar``): the Regex box is then
    emptied (``regex`` is ""), and Generate runs llguidance's mask (``schema_run``)."""
    reason: str = ""
    """Why the grammar path (``SchemaGrammar.reason``)."""


@dataclass(frozen=True)
class SchemaUse:
    """What "Use this schema" gives the page: the choice (None when the schema cannot be
    used, ``error`` says why), the schema findings and their HTML (with fix buttons)."""

    choice: SchemaChoice | None
    findings: tuple[SchemaFinding, ...]
    findings_html: str
    error: str


def use_schema(
    schema: str, whitespace: str, vocab: Vocabulary | None, max_tokens: int | None = None
) -> SchemaUse:
    """Compile and diagnose ``schema`` for the main run; a bad schema is an error, never
    an exception.

    >>> used = use_schema('{"type": "object", "properties": {"n": {"enum": [1, 2]}}}', "none", None)
    >>> used.choice.regex, used.error
    ('\\\\{("n":(1|2))?\\\\}', '')
    """
    try:
        compiled = compile_schema(schema, whitespace or None)
        found = diagnose_schema(
            compiled, vocab, whitespace=whitespace or None, max_tokens=max_tokens
        )
    except SchemaError as error:
        return SchemaUse(None, (), "", error_html(error))
    except RecursionError:  # JSON nested thousands deep: Python's reader gives up
        return SchemaUse(None, (), "", error_html(SchemaError(NESTED_SCHEMA)))
    if compiled.path == "grammar":
        choice = SchemaChoice(compiled.text, whitespace, "", "grammar", compiled.reason)
    else:
        choice = SchemaChoice(compiled.text, whitespace, compiled.regex)
    return SchemaUse(choice, tuple(found), schema_findings_html(found), "")


NESTED_SCHEMA = "the schema is nested too deeply to read: write fewer levels of nesting"


MAX_LINKED_SCHEMA = 20_000
"""Characters of a schema a link may carry (a 22-field schema is ~3,000)."""


def use_linked_schema(
    schema: str, whitespace: str | None, vocab: Vocabulary | None, max_tokens: int | None
) -> SchemaUse:
    """``use_schema`` for a schema a link carries: an unknown whitespace is the default
    and a schema over ``MAX_LINKED_SCHEMA`` characters is refused with its size."""
    if len(schema) > MAX_LINKED_SCHEMA:
        error = SchemaError(
            f"the linked schema has {len(schema):,} characters, more than a link carries "
            f"({MAX_LINKED_SCHEMA:,}): paste it into the JSON Schema box instead"
        )
        return SchemaUse(None, (), "", error_html(error))
    if whitespace not in WHITESPACE_CHOICES:
        whitespace = DEFAULT_WHITESPACE
    return use_schema(schema, whitespace, vocab, max_tokens)


def in_use(choice: SchemaChoice | None, pattern: str) -> SchemaChoice | None:
    """``choice`` while the Regex box still holds its regex, else None."""
    return choice if choice is not None and choice.regex == pattern else None


def mode_html(choice: SchemaChoice | None, pattern: str) -> str:
    """The note under the Regex box while it holds a schema's regex ("" otherwise)."""
    if in_use(choice, pattern) is None:
        return ""
    assert choice is not None
    # the schema and its whitespace ride along for the page's link (static/app.js)
    head = (
        f'<p class="schema-mode" data-schema="{escape(choice.schema, quote=True)}" '
        f'data-whitespace="{escape(choice.whitespace, quote=True)}" '
        f'data-path="{escape(choice.path)}">'
    )
    if choice.path == "grammar":
        return (
            f"{head}The JSON Schema takes the <b>grammar path</b> ({escape(choice.reason)}): "
            "no regex holds it, so the Regex box is empty and Generate runs llguidance's "
            f"mask for it (whitespace <code>{escape(choice.whitespace)}</code>), writes JSON "
            "and checks it against the schema. Type a regex and it is a plain regex run "
            "again.</p>"
        )
    return (
        f"{head}This regex is the JSON Schema's (whitespace "
        f"<code>{escape(choice.whitespace)}</code>): Generate writes JSON and checks it "
        "against the schema. Edit the regex and it is a plain regex again.</p>"
    )


def json_view_html(
    choice: SchemaChoice | None, text: str, done: bool = False, steps: Sequence[Any] = ()
) -> str:
    """The output as JSON (``json_stream_html``) for a schema run, "" for a plain regex
    run; ``choice`` is the schema in use (``in_use``). Under it, for a regex-path schema
    (whose character DFA has the drawing panel), the schema drawn by its structure, lit
    where the output is (``fsmviz.html.schema_structure.structure_html``), and with a finished run's
    ``steps`` lit at whichever step the page chooses; a grammar-path schema's structure is
    in the drawing panel instead (``schema_run.grammar_panel``)."""
    if choice is None:
        return ""
    schema = json.loads(choice.schema) if done else None
    structure = ""  # a grammar-path schema's is in the drawing panel
    if choice.path != "grammar":
        structure = structure_html(choice.schema, text, streaming=not done, steps=steps)
    return (
        '<div class="json-view"><div class="json-head">The output as JSON'
        f"{' (streaming)' if not done else ''}</div>"
        f"{json_stream_html(text, schema, done)}"
        f"{structure}</div>"
    )


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
                      gr.State(()), gr.State(None), engines, verdicts)  # fmt: skip


def wire_schema_part(
    part: SchemaPart,
    models: Any,
    regex: Any,
    note: Any,
    prompt: Any,
    max_tokens: Any,
    chat: Any,
    backend: Any = None,
) -> None:
    """Wire the part to the main view: an example fills the schema box, the prompt and
    max tokens and is used at once; "Use this schema", a whitespace choice and a fix
    button put the schema's regex in the ``regex`` box; ``note`` says when it holds one.
    ``backend``: the model menu; the schema's findings are in its model's tokens, and
    diagnosed again when it changes."""
    private = {"api_visibility": "private"}
    used = [regex, part.choice, part.found, part.findings, part.error, note]
    use = partial(on_use, models)
    chosen = [] if backend is None else [backend]  # on_use's last input: the menu's choice
    # ``select``, not ``input``: Gradio's Dropdown fires ``input`` on every blur too, so
    # leaving the menu without a choice would put the example over a schema being typed.
    part.example.select(
        on_schema_example, part.example, [part.schema, prompt, max_tokens, chat], **private
    ).then(use, [part.schema, part.whitespace, max_tokens, *chosen], used, **private)
    part.use.click(use, [part.schema, part.whitespace, max_tokens, *chosen], used, **private)
    part.whitespace.input(use, [part.schema, part.whitespace, max_tokens, *chosen], used, **private)
    part.pick.change(
        partial(on_fix, models),
        [part.pick, part.found, part.schema, part.whitespace, max_tokens, *chosen],
        [part.schema, part.whitespace, *used, part.pick],
        **private,
    )
    if backend is not None:  # another model: the schema in use diagnosed in its tokens
        again = [part.choice, regex, max_tokens, backend]
        backend.change(partial(on_model_change, models), again, [part.found, part.findings],
                       trigger_mode="always_last", **private)  # fmt: skip
    regex.change(mode_html, [part.choice, regex], note, trigger_mode="always_last", **private)
    if part.engines is not None:  # one at a time: a child process per engine
        part.engines.click(on_engines, part.schema, part.verdicts, concurrency_limit=1,
                           concurrency_id="schema-engines", **private)  # fmt: skip
    # the example menu names what the schema box holds (typed, fixed or linked), or nothing
    part.schema.change(example_named, part.schema, part.example, trigger_mode="always_last",
                       **private)  # fmt: skip


def on_engines(schema: str) -> str:
    """Which engine gets it right: the table, or why the schema cannot be read."""
    try:
        return engines_html(engine_verdicts(schema))
    except SchemaError as error:
        return error_html(error)
    except RecursionError:
        return error_html(SchemaError(NESTED_SCHEMA))


def on_schema_example(name: str):
    """A schema example chosen: its schema, prompt and max tokens (chat template on)."""
    item = schema_examples()[name]
    return item.schema, item.prompt, item.max_tokens, True


def on_use(models: Any, schema: str, whitespace: str, max_tokens, backend: str | None = None):
    """Use this schema: its regex in the Regex box, its findings (in the tokens of the
    model the menu chose, ``backend``); or why it cannot be."""
    budget = check_generation(max_tokens=max_tokens)["max_tokens"]  # a message naming it
    used = use_schema(schema, whitespace, vocabulary_for(models, backend), budget)
    if used.choice is None:  # a bad schema: the Regex box and the choice stay
        return gr.skip(), gr.skip(), (), "", used.error, gr.skip()
    regex = used.choice.regex
    return regex, used.choice, used.findings, used.findings_html, "", mode_html(used.choice, regex)


def on_fix(models: Any, k, found, schema: str, whitespace: str, max_tokens, backend=None):
    """A fix button: the finding's rewritten schema (or whitespace) used at once."""
    fixed = apply_fix(k, found, schema, whitespace)
    if fixed is None:
        return (gr.skip(),) * 9
    return (*fixed, *on_use(models, *fixed, max_tokens, backend), -1)


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
