"""The Learn tab: the engine's intermediate objects drawn for a teacher.

Its views (``*_html``, in ``fsmviz.html.learn``) turn ``fsmviz.learn`` records into escaped
HTML; ``build_learn_tab`` lays out the components inside the caller's ``gr.Tab`` and wires
them to the shared regex box.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import gradio as gr

from fsmviz.html.learn import (
    LEARN_CSS,
    bytes_html,
    construction_html,
    expectations_html,
    naive_html,
    table_html,
    token_table_html,
    toy_html,
    walk_html,
)
from fsmviz.html.text import shown
from fsmviz.learn import TOY_EXAMPLES
from fsmviz.learn.toy import ToyView
from fsmviz.learn.typed import toy_state

__all__ = ["build_learn_tab"]

CUSTOM = "your own tokens"
DEFAULT_TESTS = "+ 23.37\n+ .5\n- 23.\n- 1.2.3\n+ ٣.٣"
DEFAULT_TRAINING = "pi is 3.14, e is 2.71, the square root of 2 is 1.41, and 0.5 is a half."


# --- the tab -------------------------------------------------------------------------------


PRIVATE = {"api_visibility": "private"}
"""The Learn tab's events are the page's own, not API endpoints."""


def build_learn_tab(regex_box: gr.Textbox, tab: gr.Tab) -> None:
    """The Learn view, created inside the caller's ``gr.Tab`` (``tab``): an introduction, a
    copy of the regex box, then one accordion per lesson, each laid out and wired by its
    builder."""
    pattern0 = regex_box.value or ""
    with gr.Column(elem_id="learn"):
        gr.HTML(
            LEARN_CSS + "<p>How the regex above becomes an automaton, how a string and a "
            "toy vocabulary walk it, and why an index beats matching every token.</p>",
            elem_id="learn-intro",
        )
        mirror = _mirror(regex_box, tab, pattern0)
        stages = _construction_section(mirror, pattern0)
        walk, walk_result, table = _walk_section(mirror, pattern0)
        tests, tests_result = _tests_section(mirror, pattern0)
        _toy_section(mirror, pattern0)
        hex_tokens, byte_result = _bytes_section(mirror, pattern0)
        _naive_section(mirror)
        _token_table_section(mirror)

    def on_pattern(pattern, walked, block, hexes):
        return (
            construction_html(pattern, 0)[0],
            walk_html(pattern, walked),
            table_html(pattern),
            expectations_html(pattern, block),
            bytes_html(pattern, hexes),
        )

    mirror.change(
        on_pattern,
        [mirror, walk, tests, hex_tokens],
        [stages, walk_result, table, tests_result, byte_result],
        js=FRAME_RESET,
        **PRIVATE,
    )


def _mirror(regex_box: gr.Textbox, tab: gr.Tab, pattern0: str) -> gr.Textbox:
    """The Learn tab's own copy of the regex (a hidden tab's components fire no change
    events). The Generate tab's box is copied here when the tab is opened, if it changed
    since the last copy (``_copied``): copied on each of its changes, every edit on the
    Generate tab also redrew the hidden tab's views (three more events: the copy, five HTML
    views, the toy's), and an edit cost ~1.5 s of Chromium's CPU where it now costs ~1.0
    (3 s after the edit included, ~0.3 of them idle; bench/page_cost.py).
    Only what is typed here (``input``, never a programmatic change) is copied back, so the
    two boxes cannot set each other in a loop while the page restores a link or an
    example."""
    mirror = gr.Textbox(
        pattern0,
        label="Regex (the same as on the Generate tab)",
        elem_id="learn-regex",
        lines=1,
        max_lines=4,
    )
    copied = gr.State(pattern0)  # the Generate tab's regex as last copied here
    tab.select(_copied, [regex_box, copied], [mirror, copied], **PRIVATE)
    # ``always_last``: an ``input`` event's default ("once") drops the keystrokes typed
    # while a copy is under way, and fast typing left the Generate tab's box short of the
    # last characters for good (`[0-9]{2}` arrived as `[0-9]{`)
    mirror.input(_same, mirror, regex_box, trigger_mode="always_last", **PRIVATE)
    return mirror


def _construction_section(mirror: gr.Textbox, pattern0: str) -> gr.HTML:
    """1. regex → NFA → DFA → minimal DFA, one frame at a time. The frame number lives in
    the browser (``FRAME_STEP``), so quick clicks each count; the server draws the frame
    asked for, one click after the other (``ONE_FRAME_AT_A_TIME``)."""
    with gr.Accordion("1. Construction: regex → NFA → DFA → minimal DFA", open=True):
        frame = gr.Number(0, visible=False)  # what a click sends: set by FRAME_STEP
        with gr.Row():
            back = gr.Button("◀ Back", elem_id="learn-back", size="sm")
            forward = gr.Button("Next ▶", elem_id="learn-next", size="sm")
        stages = gr.HTML(construction_html(pattern0, 0)[0], elem_id="construction")
    for button, step in ((back, -1), (forward, 1)):
        button.click(
            _frame,
            [mirror, frame],
            stages,
            js=FRAME_STEP.replace("STEP", str(step)),
            **ONE_FRAME_AT_A_TIME,
            **PRIVATE,
        )
    return stages


FRAME_STEP = """(pattern, _) => {
    const shown = document.querySelector('#construction [data-frames]');
    const last = Math.max(0, Number(shown?.dataset.frames || 1) - 1);
    const at = window.fsmvizFrame?.pattern === pattern ? window.fsmvizFrame.at : 0;
    const next = Math.max(0, Math.min(last, at + STEP));
    window.fsmvizFrame = { pattern, at: next };
    return [pattern, next];
}"""
"""Back's and Next's click, in the browser before the request is sent: the frame to show
is the last one *asked for* (kept per pattern in ``window.fsmvizFrame``) one step on,
within the frames the panel says it has. Kept on the server instead, two quick Nexts both
read frame 6 and both asked for 7: the second click was lost."""

FRAME_RESET = "(...inputs) => { window.fsmvizFrame = null; return inputs; }"
"""A new pattern shows its frame 0: the frame asked for starts again (typing ``a``, then
``b``, then ``a`` again must not carry on from ``a``'s old frame)."""

ONE_FRAME_AT_A_TIME = {
    "concurrency_limit": 1,
    "concurrency_id": "learn-frame",
    "trigger_mode": "multiple",
}
"""Every click is sent (a click's default, ``"once"``, drops a click made while the last
one's frame is on its way: under load one of seven quick Nexts was lost), and the frames
asked for are drawn in the order asked (a few ms each), so the last click's frame is the
one that stays."""


def _walk_section(mirror: gr.Textbox, pattern0: str) -> tuple[gr.Textbox, gr.HTML, gr.HTML]:
    """2. A string walked character by character; 3. the transition table."""
    with (
        gr.Accordion("2. Walk a string, 3. the transition table", open=True),
        gr.Row(equal_height=False),
    ):
        with gr.Column(scale=3, min_width=300):
            walk = gr.Textbox("23.37", label="A string to walk", elem_id="walk")
            walk_result = gr.HTML(walk_html(pattern0, "23.37"), elem_id="walk-result")
        with gr.Column(scale=2, min_width=260):
            table = gr.HTML(table_html(pattern0), elem_id="transitions")
    walk.change(walk_html, [mirror, walk], walk_result, **PRIVATE)
    return walk, walk_result, table


def _tests_section(mirror: gr.Textbox, pattern0: str) -> tuple[gr.Textbox, gr.HTML]:
    """4. regex101-style test strings, each held against Python's ``regex``."""
    with gr.Accordion("4. Test strings (+ should match, - should not)", open=False):
        tests = gr.Textbox(DEFAULT_TESTS, lines=5, label="One per line", elem_id="tests")
        tests_result = gr.HTML(expectations_html(pattern0, DEFAULT_TESTS), elem_id="tests-result")
    tests.change(expectations_html, [mirror, tests], tests_result, **PRIVATE)
    return tests, tests_result


@dataclass(frozen=True)
class ToyWalk:
    """The toy tokens picked so far, with the pattern and vocabulary they were picked for.

    Nothing ever resets a walk: one made for another pattern or vocabulary reads as empty
    (:meth:`ids_for`). A reset event could land after a later Next click under load (events
    of one page run side by side) and undo it; a key cannot go stale that way."""

    pattern: str = ""
    tokens: str = ""
    ids: tuple[int, ...] = ()

    def ids_for(self, pattern: str, tokens: str) -> tuple[int, ...]:
        return self.ids if (self.pattern, self.tokens) == (pattern, tokens) else ()

    def added(self, pattern: str, tokens: str, token: int) -> ToyWalk:
        """This walk, as read for ``pattern`` and ``tokens``, one token longer."""
        return ToyWalk(pattern, tokens, (*self.ids_for(pattern, tokens), token))

    def dropped(self, pattern: str, tokens: str) -> ToyWalk:
        """This walk, as read for ``pattern`` and ``tokens``, one token shorter."""
        return ToyWalk(pattern, tokens, self.ids_for(pattern, tokens)[:-1])


def _toy_section(mirror: gr.Textbox, pattern0: str) -> None:
    """5. A toy vocabulary stepped token by token, with uniform, typed or ZipModel logits
    (8. the gzip model). The walk so far is a :class:`ToyWalk`."""
    first = next(iter(TOY_EXAMPLES.values()))
    first_tokens = json.dumps(list(first.tokens))
    with gr.Accordion("5. Toy vocabularies, token by token (8. a gzip model)", open=False):
        with gr.Row():
            example = gr.Dropdown(
                [*TOY_EXAMPLES, CUSTOM], value=first.name, label="Vocabulary", elem_id="toy-example"
            )
            tokens = gr.Textbox(first_tokens, label="Tokens (JSON)", elem_id="toy-tokens")
        with gr.Row():
            model = gr.Radio(
                ["uniform", "typed", "ZipModel"],
                value="uniform",
                label="Logits",
                elem_id="toy-model",
            )
            logits = gr.Textbox(
                "", label="Typed logits (one per token, end token last)", elem_id="toy-logits"
            )
            training = gr.Textbox(
                DEFAULT_TRAINING, label="ZipModel training text", elem_id="toy-training"
            )
        history = gr.State(ToyWalk())
        with gr.Row():
            toy_back = gr.Button("◀ Back", elem_id="toy-back", size="sm")
            toy_next = gr.Button("Next ▶ (sample)", elem_id="toy-next", size="sm")
            pick = gr.Dropdown([], label="or click a token", elem_id="toy-pick")
        view0, problem0 = toy_state(pattern0, first_tokens, first.name, [], "uniform", "", "")
        toy = gr.HTML(toy_html(view0, problem0, pattern0), elem_id="toy")

    toy_inputs = [mirror, tokens, example, history, model, logits, training]
    example.change(
        _on_toy_example,
        [example, tokens, mirror],
        [tokens, mirror, model, training],
        **PRIVATE,
    )
    toy_next.click(_step_toy, toy_inputs, history, **PRIVATE)
    toy_back.click(_drop_last, [mirror, tokens, history], history, **PRIVATE)
    pick.select(_pick_toy, [*toy_inputs, pick], history, **PRIVATE)  # (a blur fires input)
    # One listener for every input, not one each: its runs follow one another, and the last
    # reads the latest inputs. Six listeners ran side by side, and under load a render from
    # before Next or Back (an example's several changed inputs) could land after it.
    gr.on(
        [c.change for c in (mirror, history, tokens, model, logits, training)],
        _show_toy,
        toy_inputs,
        [toy, pick],
        trigger_mode="always_last",
        **PRIVATE,
    )


def _bytes_section(mirror: gr.Textbox, pattern0: str) -> tuple[gr.Textbox, gr.HTML]:
    """6. A token that splits a character, walked through the byte-level DFA."""
    with gr.Accordion("6. Bytes: a token that splits a character", open=False):
        hex_tokens = gr.Textbox(
            "e6 97 | a5", label="Tokens as hex bytes, | between tokens", elem_id="byte-tokens"
        )
        byte_result = gr.HTML(bytes_html(pattern0, "e6 97 | a5"), elem_id="bytes")
    hex_tokens.change(bytes_html, [mirror, hex_tokens], byte_result, **PRIVATE)
    return hex_tokens, byte_result


def _naive_section(mirror: gr.Textbox) -> None:
    """7. The seeds' naive method (one partial match per token) timed against the index."""
    with gr.Accordion("7. Naive matching against the index (49,152 tokens)", open=False):
        with gr.Row():
            target = gr.Textbox("23.37", label="Walk towards", elem_id="naive-target")
            measure = gr.Button("Measure", elem_id="naive-run")
        naive = gr.HTML(elem_id="naive")
    measure.click(naive_html, [mirror, target], naive, **PRIVATE)


def _token_table_section(mirror: gr.Textbox) -> None:
    """9. Seed 001's ``state_transitions[state, token_id]`` over the real vocabulary."""
    with gr.Accordion(
        "9. The whole index as one table: states × token ids of the real vocabulary",
        open=False,
    ):
        build_table = gr.Button("Build it for the regex above", elem_id="token-table-run")
        token_transitions = gr.HTML(elem_id="token-transitions")
    build_table.click(token_table_html, mirror, token_transitions, **PRIVATE)


def _toy(pattern, tokens, example, walk: ToyWalk, *rest) -> tuple[ToyView | None, str]:
    """``toy_state`` for the page's inputs: the walk as its token ids (none if it was made
    for another pattern or vocabulary)."""
    return toy_state(pattern, tokens, example, walk.ids_for(pattern, tokens), *rest)


def _show_toy(*args):
    view, problem = _toy(*args)
    choices = (
        []
        if view is None
        else [(shown(t), int(i)) for t, i in zip(view.allowed_texts(), view.allowed, strict=True)]
    )
    return toy_html(view, problem, args[0]), gr.update(choices=choices, value=None)


def _step_toy(pattern, tokens, example, walk: ToyWalk, *rest) -> ToyWalk:
    view, _ = _toy(pattern, tokens, example, walk, *rest)
    if view is None or not view.allowed:
        return walk
    step = len(walk.ids_for(pattern, tokens))
    return walk.added(pattern, tokens, view.allowed[_pick_index(view, step)])


def _pick_toy(*args) -> ToyWalk:
    """A clicked token goes on the text, if it is allowed where the text now stands (a
    pick made against an older state, e.g. one the Back button undid, is dropped)."""
    *inputs, token = args
    pattern, tokens, _, walk = inputs[:4]
    view, _ = _toy(*inputs)
    if token is None or view is None or int(token) not in view.allowed:
        return walk
    return walk.added(pattern, tokens, int(token))


def _on_toy_example(name, current_tokens, pattern):
    if name not in TOY_EXAMPLES:
        return current_tokens, pattern, gr.update(), gr.update()
    e = TOY_EXAMPLES[name]
    training_text = e.training or gr.update()  # a ZipModel example brings its book
    return json.dumps(list(e.tokens), ensure_ascii=False), e.pattern, e.model, training_text


def _same(value: str) -> str:
    return value


def _copied(regex: str, copied: str):
    """The Learn tab opened: the Generate tab's regex, if it changed since it was last
    copied (a toy example's pattern, picked here, stays until then)."""
    if regex == copied:
        return gr.skip(), gr.skip()
    return regex, regex


def _frame(pattern: str, i: float) -> str:
    return construction_html(pattern, int(i))[0]


def _drop_last(pattern: str, tokens: str, walk: ToyWalk) -> ToyWalk:
    return walk.dropped(pattern, tokens)


def _pick_index(view: ToyView, step: int) -> int:
    """The sampled token's position among the allowed ones (seed = the step number)."""
    token = view.sample(step)
    return view.allowed.index(token)
