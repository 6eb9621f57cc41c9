"""End-to-end: a click while an example is still on its way does not leave the page with
what the example replaced. Each race is made certain by holding the browser's requests
(``Held``): the example's event and the click's are both sent, then let through in the
order that lost before (the click's, carrying the page as it was, last)."""

from __future__ import annotations

import json
import time
import uuid

import pytest

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

import test_e2e  # noqa: E402
from test_schema_e2e import UI_TIMEOUT, fill_schema, open_part  # noqa: E402

from fsmviz.app.examples import examples, grammar_examples  # noqa: E402
from fsmviz.app.schema_page import schema_examples  # noqa: E402
from fsmviz.schema.convert import regex_from_schema  # noqa: E402

app_url = test_e2e.app_url  # the browser tests' fixtures: one app, one Chromium
browser_type_launch_args = test_e2e.browser_type_launch_args

JOIN = "**/gradio_api/queue/join*"
"""Where the page sends each event (its inputs, as the page holds them at the send)."""
SETTLED_S = 1.5
"""Seconds a box must keep its value, nothing pending on the page, to count as settled."""


class Held:
    """Holds the first of the page's event requests whose body (the event, its inputs as
    the page held them at the send) passes a test, each until ``release``; every other
    request goes on (a deferred event is sent again with its first trigger's id)."""

    def __init__(self, page, **tests) -> None:
        self.page, self.tests, self.routes = page, tests, {}
        page.route(JOIN, self._route)

    def _route(self, route) -> None:
        body = route.request.post_data_json or {}
        for name, test in self.tests.items():
            if name not in self.routes and test(body):
                self.routes[name] = route
                self.tests = {k: t for k, t in self.tests.items() if k != name}
                return
        route.continue_()

    def wait(self, name: str) -> None:
        """Until the request ``name`` is held (the page answers routes while it waits)."""
        deadline = time.monotonic() + UI_TIMEOUT / 1000
        while name not in self.routes:
            assert time.monotonic() < deadline, f"no request {name} was sent"
            self.page.wait_for_timeout(20)

    def release(self, name: str) -> None:
        self.routes.pop(name).continue_()

    def close(self) -> None:
        """Stop holding; a request still held is dropped (never heard by the app)."""
        for route in self.routes.values():
            route.abort()
        self.page.unroute(JOIN)


def settled(page, component: str, read: str) -> str:
    """What the script ``read`` returns, once it has kept it ``SETTLED_S`` with no event
    pending on ``component`` (its Gradio status tracker hidden)."""
    pending = f"""() => [...document.querySelectorAll('{component} [data-testid=status-tracker]')]
        .some((t) => !t.matches('.hide'))"""
    since, last = time.monotonic(), None
    deadline = since + UI_TIMEOUT / 1000
    while time.monotonic() < deadline:
        value = page.evaluate(read)
        if value != last or page.evaluate(pending):
            since, last = time.monotonic(), value
        elif time.monotonic() - since >= SETTLED_S:
            return value
        page.wait_for_timeout(50)
    raise AssertionError(f"{component} never settled (last: {last!r})")


def until(page, read: str, value, seconds: float) -> None:
    """Wait up to ``seconds`` for the script ``read`` to return ``value`` (no failure: the
    caller asserts what it needs after)."""
    deadline = time.monotonic() + seconds
    while page.evaluate(read) != value and time.monotonic() < deadline:
        page.wait_for_timeout(50)


REGEX = "() => document.querySelector('#regex textarea').value"
DRAWN = """() => document.querySelector('#dfa svg.fsm g.graph > text')?.textContent
    .split('\\u00a0')[0].trim()"""
"""The pattern the DFA panel draws (its drawing's caption)."""
DRAWINGS = """() => { const drawn = []; let last = null;
    const seen = () => { const svg = document.querySelector('#dfa svg.fsm');
        const caption = svg?.querySelector('g.graph > text')?.textContent;
        const now = [caption?.split('\\u00a0')[0].trim(), svg?.querySelectorAll('g.node').length];
        if (JSON.stringify(now) !== JSON.stringify(last)) { last = now; drawn.push(now); } };
    seen();
    new MutationObserver(seen).observe(document.body, { childList: true, subtree: true });
    window.fsmvizDrawn = drawn; }"""
"""From now on, each drawing the DFA panel shows, in order, as [its pattern, its count of
states drawn] (``fsmvizDrawn``; Gradio may patch the drawing in place)."""
RULES = """() => [document.querySelectorAll('#rules svg g.cluster').length,
    document.querySelector('#grammar-error')?.textContent.trim() ?? '']"""
"""The grammar tab's drawing, as its count of rule boxes, and its error."""


def test_a_click_while_an_example_loads_leaves_the_examples_page(page, app_url):
    """On one page load: the main view's drawing option, the JSON Schema part's whitespace,
    then the Grammar tab's format."""
    open_part(page, app_url)
    a_drawing_option_while_a_regex_example_loads_draws_the_example(page)
    an_edit_while_a_slow_drawing_option_is_drawn_draws_the_edit(page)
    a_whitespace_click_while_a_schema_example_loads_uses_the_example(page)
    a_whitespace_click_while_a_schema_fix_is_on_its_way_stays(page)
    a_format_click_while_a_grammar_example_loads_draws_the_example(page)


def a_drawing_option_while_a_regex_example_loads_draws_the_example(page):
    """The first pattern drawn, then the moby_choice example chosen and "Show each state's
    fewest tokens" ticked at once: the tick carries the first pattern. Held until the
    example's pattern is in the box, it came last and drew the first pattern (DFA only)
    beside the example's pattern in the Regex box."""
    regex = page.locator("#regex textarea")
    first = regex.input_value()
    moby = examples()["moby_choice"].pattern
    box = page.evaluate(
        "(p) => window.gradio_config.components.find((c) => c.props.elem_id === p).id", "distances"
    )
    page.get_by_text("Drawing options").click()
    held = Held(
        page,
        example=lambda body: str((body.get("data") or [""])[0]).startswith("moby_choice"),
        click=lambda body: body.get("trigger_id") == box,
    )
    try:
        page.locator("#examples input").click()
        page.locator("ul[role=listbox] li", has_text="moby_choice").first.click()
        held.wait("example")
        page.locator("#distances input").check()
        held.wait("click")  # sent with the first pattern
        held.release("example")
        expect(regex).to_have_value(moby)
        until(page, DRAWN, moby, 3)  # the example's drawing, where it is an event apart
        held.release("click")
        assert settled(page, "#dfa", DRAWN) == moby
    finally:
        held.close()
    expect(regex).to_have_value(moby)
    expect(page.locator("#distances input")).to_be_checked()
    assert first != moby


SLOW = r"([a-z]{1,4} ){1,12}[a-z]{1,4}\."
"""A pattern of 66 states whose exact drawing takes Graphviz seconds (3-5 s here, against
0.05 s for its compact one)."""


def an_edit_while_a_slow_drawing_option_is_drawn_draws_the_edit(page):
    """A pattern drawn compact, then "exact" chosen and, while its slow drawing is still
    being made on the server, the pattern before it typed back. As events apart, the edit
    was answered first and the option's drawing (begun before the edit came, so not yet
    stale) came last: the DFA panel drew the slow pattern beside the typed one. The
    option's drawing comes either way (first, or last); the test waits for it."""
    regex = page.locator("#regex textarea")
    back = regex.input_value()
    slow = f"{SLOW}{uuid.uuid4().hex[:6]}"  # a drawing new to the app: none cached
    regex.fill(slow)
    until(page, DRAWN, slow, UI_TIMEOUT / 1000)
    page.evaluate(DRAWINGS)
    radio = page.evaluate(
        "(p) => window.gradio_config.components.find((c) => c.props.elem_id === p).id", "compact"
    )
    held = Held(
        page,
        option=lambda body: body.get("trigger_id") == radio,
        edit=lambda body: back in (body.get("data") or []),
    )
    try:
        page.locator("#compact").get_by_text("exact: every state").click()
        held.wait("option")  # sent with the slow pattern
        regex.fill(back)
        held.release("option")
        page.wait_for_timeout(500)  # the option's drawing under way on the server
        held.wait("edit")  # sent at once (events apart), or once the option is answered
        held.release("edit")
        page.wait_for_function(  # the option's drawing (or Graphviz's time out, no caption)
            "(p) => window.fsmvizDrawn.slice(1).some(([q]) => q !== p)",
            arg=back,
            polling=100,  # (its default, each animation frame, never came here)
        )
        assert settled(page, "#dfa", DRAWN) == back
    finally:
        held.close()
    expect(regex).to_have_value(back)
    expect(page.locator("#compact input[value=exact]")).to_be_checked()
    page.locator("#compact").get_by_text("auto (compact above").click()  # as it was
    expect(page.locator("#compact input[value=auto]")).to_be_checked()


def a_whitespace_click_while_a_schema_example_loads_uses_the_example(page):
    """A schema in use, then an example chosen and a whitespace clicked at once: the click
    carries the old schema. Held until the example's schema and regex are in, it came
    last, and the Regex box went back to the old schema's regex (session 36), the
    example's schema and prompt left beside it."""
    marker = f"m{uuid.uuid4().hex[:8]}"  # a schema new to the app
    old = json.dumps({"type": "object", "properties": {marker: {"type": "integer", "maxDigits": 3}},
                      "required": [marker]})  # fmt: skip
    fill_schema(page, old)
    page.click("#schema-use")
    expect(page.locator("#regex textarea")).to_have_value(regex_from_schema(old))
    enum = schema_examples()["enum"]
    want = regex_from_schema(enum.schema, whitespace="flexible")
    held = Held(
        page,
        example=lambda body: body.get("data") == ["enum"],
        click=lambda body: (body.get("data") or [])[:2] == [old, "flexible"],
    )
    try:
        page.locator("#schema-example input").click()
        page.locator("ul[role=listbox] li", has_text="enum").first.click()
        held.wait("example")
        page.locator("#schema-whitespace").get_by_text("flexible", exact=True).click()
        held.wait("click")  # sent with the old schema
        held.release("example")
        expect(page.locator("#schema textarea")).to_have_value(enum.schema)
        until(page, REGEX, want, 3)  # the example's own use, where it is an event apart
        held.release("click")
        assert settled(page, "#regex", REGEX) == want
    finally:
        held.close()
    expect(page.locator("#schema textarea")).to_have_value(enum.schema)
    expect(page.locator("#schema-whitespace input[value=flexible]")).to_be_checked()
    expect(page.locator("#schema-mode")).to_contain_text("Generate writes JSON")


def a_whitespace_click_while_a_schema_fix_is_on_its_way_stays(page):
    """A schema in use whose fix rewrites it (a string given a maxLength), the fix clicked,
    then another whitespace clicked while the fix is on its way: the fix was sent with the
    whitespace before the click, and its answer put that whitespace back (the fixed schema
    used under it). The last choice wins: the fixed schema under the clicked whitespace."""
    marker = f"m{uuid.uuid4().hex[:8]}"
    loose = json.dumps({"type": "object", "properties": {marker: {"type": "string"}},
                        "required": [marker]})  # fmt: skip
    fill_schema(page, loose)
    page.locator("#schema-whitespace").get_by_text("none", exact=True).click()
    page.click("#schema-use")
    expect(page.locator("#regex textarea")).to_have_value(regex_from_schema(loose, "none"))
    button = page.locator("#schema-findings [data-schema-fix]", has_text="maxLength")
    held = Held(page, fix=lambda body: (body.get("data") or [])[2:] == [loose, "none"])
    try:
        button.click()
        held.wait("fix")  # sent with the whitespace none
        # by the keyboard: the fix's progress covers its outputs, the whitespace among them,
        # from the pointer
        page.locator("#schema-whitespace input[value=space]").focus()
        page.keyboard.press("Space")
        until(page, REGEX, regex_from_schema(loose, "space"), 3)  # the click's own use
        held.release("fix")
        expect(page.locator("#schema textarea")).not_to_have_value(loose)
        fixed = page.locator("#schema textarea").input_value()
        assert settled(page, "#regex", REGEX) == regex_from_schema(fixed, "space")
    finally:
        held.close()
    assert json.loads(fixed)["properties"][marker]["maxLength"]
    expect(page.locator("#schema-whitespace input[value=space]")).to_be_checked()


def a_format_click_while_a_grammar_example_loads_draws_the_example(page):
    """The first example's grammar in the box, then the arithmetic example clicked and the
    format lark chosen at once: the choice carries the first grammar. Held until the example's
    grammar is drawn, it came last and drew the first grammar read as lark (an error)
    beside the arithmetic grammar. (The example's run is held and never heard.)"""
    page.get_by_role("tab", name="Grammar").click()
    box = page.locator("#grammar textarea")
    expect(box).to_be_visible()
    first = box.input_value()
    arithmetic = grammar_examples()["arithmetic"]
    drawn = [5, ""]  # its drawing alone: five boxes, no error
    button = page.evaluate(
        """(name) => window.gradio_config.components.find((c) => c.type === 'button'
            && c.props.value === name).id""",
        "arithmetic",
    )
    held = Held(
        page,
        example=lambda body: body.get("trigger_id") == button and not body.get("data"),
        run=lambda body: body.get("trigger_id") == button and bool(body.get("data")),
        click=lambda body: (body.get("data") or [])[:2] == [first, "lark"],
    )
    try:
        page.locator(".grammar-example", has_text="arithmetic").click()
        held.wait("example")
        # by the keyboard: the example's progress covers its outputs, the format among
        # them, from the pointer (the model menu, which it does not cover, has one model)
        page.locator("#grammar-format input[value=lark]").focus()
        page.keyboard.press("Space")
        held.wait("click")  # sent with the first example's grammar
        held.release("example")
        expect(box).to_have_value(arithmetic.grammar)
        until(page, RULES, drawn, 3)  # the example's drawing, where it is an event apart
        held.release("click")
        assert settled(page, "#rules", RULES) == drawn
    finally:
        held.close()
    expect(box).to_have_value(arithmetic.grammar)
    expect(page.locator("#grammar-format input[value=gbnf]")).to_be_checked()
