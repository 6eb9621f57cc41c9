"""End-to-end: the JSON Schema part in headless Chromium with the real app. A schema's regex
goes in the main Regex box and the main Generate runs it: DFA, chart, steps and the output
as JSON with its verdict; each schema finding's fix is a button."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

import test_e2e  # noqa: E402
from test_schema_grammar_page import TREE  # noqa: E402  (a small recursive schema)

from fsmviz.app.handlers import MAX_PROMPT  # noqa: E402
from fsmviz.app.schema_page import schema_examples  # noqa: E402
from fsmviz.schema.convert import regex_from_schema  # noqa: E402

app_url = test_e2e.app_url  # the browser tests' fixtures: one app, one Chromium
browser_type_launch_args = test_e2e.browser_type_launch_args

RUN_TIMEOUT = 240_000  # ms: diagnose + generate on a busy CPU
UI_TIMEOUT = 90_000  # ms: compile and diagnose a schema through the queue
PART = "Or a JSON Schema"


def open_part(page, app_url: str) -> None:
    """The page, loaded (the page-load event is over, the model ready), the part open."""
    page.set_default_timeout(UI_TIMEOUT)
    page.goto(app_url + "/")
    expect(page.locator("body[data-restored=yes]")).to_have_count(1, timeout=UI_TIMEOUT)
    test_e2e.wait_for_model(page)
    page.get_by_text(PART).click()


def fill_schema(page, text: str) -> None:
    """Type ``text`` in the schema box, once the part has opened and mounted.

    Two clean runs (of about twenty) found the first example's schema back in the box
    right after a fill made at once on opening, and never again; it never happened in 21
    tries alone. If Gradio mounted the part's box anew (the box filled is no longer on the
    page), the fill goes into the new box; a box that stays and loses the text fails."""
    box = page.locator("#schema textarea")
    expect(box).to_be_editable(timeout=UI_TIMEOUT)
    filled = box.element_handle()
    filled.fill(text)
    page.wait_for_timeout(500)
    if box.input_value() != text and not filled.evaluate("e => e.isConnected"):
        box.fill(text)  # the part was mounted again: this is the box on the page now
    expect(box).to_have_value(text)


def run_to_done(page) -> None:
    """Click Generate and wait until the run is over (its shadow run skipped: no test here
    looks at it)."""
    test_e2e.click_and_wait(page, "#run", shadow=False)
    expect(page.locator("#status")).to_have_text(re.compile(r"^\s*Done"), timeout=RUN_TIMEOUT)


def valid_json_written(page) -> object:
    """The run's JSON, once its view says it parses and validates against the schema."""
    view = page.locator("#json-view")
    expect(view.locator(".json-verdict.good")).to_have_text(
        "parses and validates against the schema"
    )
    return json.loads(view.locator(".json-text").text_content())


def test_a_schema_example_runs_in_the_main_view_with_the_json_verdict(page, app_url):
    open_part(page, app_url)
    page.locator("#schema-example input").click()
    page.locator("ul[role=listbox] li", has_text="enum").first.click()
    # the example's regex is in the Regex box, its prompt and budget in the main inputs
    expect(page.locator("#regex textarea")).to_have_value(
        re.compile(r'^\\\{\[ \]\?"sentiment"'), timeout=UI_TIMEOUT
    )
    expect(page.locator("#prompt textarea")).to_have_value(re.compile("soup was cold"))
    expect(page.locator("#schema-mode")).to_contain_text("Generate writes JSON")
    expect(page.locator("#dfa svg.fsm")).to_be_visible()
    run_to_done(page)
    view = page.locator("#json-view")
    written = valid_json_written(page)
    assert written["sentiment"] in {"positive", "negative", "neutral"}
    assert (
        page.locator("#output .tokens").text_content() == view.locator(".json-text").text_content()
    )
    # drawn into the main run: the DFA lit, the chart, one table row per token
    assert page.locator("#dfa svg .node.current").count() == 1
    expect(page.locator("#valid-mass .js-plotly-plot")).to_be_visible()
    assert page.locator("#steps tbody tr").count() >= 5
    # a run that fails before its first token takes the last run's JSON view with it
    prompt = page.locator("#prompt textarea").input_value()
    page.fill("#prompt textarea", "x" * (MAX_PROMPT + 1))
    page.click("#run")
    too_long = "prompt must be text of at most"
    expect(page.locator("#error")).to_contain_text(too_long, timeout=UI_TIMEOUT)
    expect(view).to_be_hidden()
    page.fill("#prompt textarea", prompt)
    # an edited regex is a plain regex again: no JSON view on the next run
    page.fill("#regex textarea", "[0-9]{2}")
    expect(page.locator("#schema-mode")).not_to_contain_text("JSON")
    test_e2e.click_and_wait(page, "#run", shadow=False)  # (no look at its shadow run)
    expect(page.locator("#output .tokens")).to_have_text(
        re.compile(r"^[0-9]{2}$"), timeout=RUN_TIMEOUT
    )
    expect(view).to_be_hidden()
    # another example on the same page (one page load fewer)
    a_regex_path_schema_shows_its_structure_beside_its_dfa(page)


def test_a_typed_schema_outlives_the_menu_a_broken_one_is_refused_and_a_fix_rewrites_it(
    page, app_url, browser
):
    """Four checks that need no run, then a schema run's link, on one page load (5-6 s of
    Chromium's CPU each), in this order: the first needs the part as it opens (no example
    chosen, the default whitespace); the others set all they look at; the link's comes
    last (it closes this page for the link's own)."""
    open_part(page, app_url)
    leaving_the_example_menu_without_a_choice_keeps_the_typed_schema(page)
    a_broken_schema_is_refused_with_its_pointer(page)
    a_findings_fix_button_rewrites_the_schema_and_its_regex(page)
    which_engine_gets_the_schema_right_is_a_table_on_the_page(page)
    a_schema_runs_link_restores_the_schema_part(page, app_url, browser)


def a_findings_fix_button_rewrites_the_schema_and_its_regex(page):
    schema = {
        "type": "object",
        "properties": {
            "sentiment": {"enum": ["positive", "negative"]},
            "reason": {"type": "string"},
        },
        "required": ["sentiment", "reason"],
    }
    fill_schema(page, json.dumps(schema))
    page.locator("#schema-whitespace").get_by_text("none", exact=True).click()
    regex = page.locator("#regex textarea")
    expect(regex).to_have_value(re.compile(r'^\\\{"sentiment":'), timeout=UI_TIMEOUT)
    page.click("#schema-use")  # the same schema again: its findings stay
    findings = page.locator("#schema-findings")
    expect(findings).to_contain_text("/properties/reason")
    before = regex.input_value()
    assert "{0,50}" not in before
    fix = findings.locator("button.schema-fix", has_text="maxLength")
    expect(fix).to_have_count(1)
    fix.click()
    expect(page.locator("#schema textarea")).to_have_value(re.compile(r'"maxLength": 50'))
    expect(regex).to_have_value(re.compile(r"\{0,50\}"), timeout=UI_TIMEOUT)
    expect(findings.locator("button.schema-fix", has_text="maxLength")).to_have_count(0)
    expect(page.locator("#schema-mode")).to_contain_text("Generate writes JSON")
    assert page.locator("#schema-findings script").count() == 0


def a_broken_schema_is_refused_with_its_pointer(page):
    before = page.locator("#regex textarea").input_value()
    fill_schema(page, '{"type": "object", "properties": {"a": {"type": 3}}}')
    page.locator("#schema-use").click()
    expect(page.locator("#schema-error")).to_contain_text("/properties/a/type", timeout=UI_TIMEOUT)
    assert page.locator("#regex textarea").input_value() == before


def leaving_the_example_menu_without_a_choice_keeps_the_typed_schema(page):
    # Gradio's Dropdown fires ``input`` on every blur: wired to ``input``, the example menu
    # put the first example over a schema being typed (and its prompt over the user's)
    # when the menu was only focused and left. A clean CI run lost a fill so.
    typed = '{"type": "string", "maxLength": 8}'
    fill_schema(page, typed)
    prompt = page.locator("#prompt textarea").input_value()
    page.locator("#schema-example input").focus()
    page.locator("#prompt textarea").click()  # leave the menu: a blur, no choice
    page.locator("#schema-use").click()  # a queued event after any the blur started
    expect(page.locator("#schema-mode")).to_contain_text("Generate writes JSON", timeout=UI_TIMEOUT)
    assert page.locator("#schema textarea").input_value() == typed
    assert page.locator("#prompt textarea").input_value() == prompt
    expect(page.locator("#schema-example input")).to_have_value("")  # no example's schema
    expect(page.locator("#regex textarea")).to_have_value(regex_from_schema(typed))


def a_schema_runs_link_restores_the_schema_part(page, app_url, browser):
    """(After the no-run checks, on their page: the fix's schema, its sentiment first, and
    whitespace none are there before the example is chosen.)"""
    page.locator("#schema-example input").click()
    page.locator("ul[role=listbox] li", has_text="enum").first.click()
    expect(page.locator("#schema-mode")).to_contain_text("Generate writes JSON", timeout=UI_TIMEOUT)
    # the example's own regex (under the whitespace already chosen) before the next input:
    # a whitespace click while the choice is pending re-uses the schema box as it was
    enum = schema_examples()["enum"]
    regex = page.locator("#regex textarea")
    expect(regex).to_have_value(regex_from_schema(enum.schema, whitespace="none"))
    page.locator("#schema-whitespace").get_by_text("none", exact=True).click()
    expect(regex).to_have_value(re.compile(r'^\\\{"sentiment":'), timeout=UI_TIMEOUT)
    expect(page).to_have_url(re.compile(r"[?&]schema=.*&whitespace=none\b"))
    expect(page).to_have_url(re.compile(r"[?&]schema=[^&]*stars"))  # the enum's field
    # what the link must restore, read before the page is closed (an idle open page costs
    # CPU while the other one loads and runs)
    url, want = page.url, {
        box: page.locator(box).input_value()
        for box in ("#regex textarea", "#schema textarea", "#schema-example input",
                    "#prompt textarea")
    }  # fmt: skip
    page.close()
    other = browser.new_page()
    try:
        other.set_default_timeout(UI_TIMEOUT)
        other.goto(url)
        # the schema's regex, the schema part open with the same schema and whitespace
        expect(other.locator("#schema-mode")).to_contain_text("Generate writes JSON")
        expect(other.locator("#regex textarea")).to_have_value(want["#regex textarea"])
        expect(other.locator("#schema textarea")).to_have_value(want["#schema textarea"])
        expect(other.locator("#schema-whitespace input[value=none]")).to_be_checked()
        expect(other.locator("#schema-example input")).to_have_value(want["#schema-example input"])
        expect(other.locator("#prompt textarea")).to_have_value(want["#prompt textarea"])
        # a schema run: the output as JSON with its verdict (its shadow run skipped: no
        # look at it, and it streamed on while the page went on to the next link)
        test_e2e.click_and_wait(other, "#run", shadow=False)
        expect(other.locator("#json-view .json-verdict")).to_be_visible(timeout=RUN_TIMEOUT)
        # a link whose schema is broken says where, and leaves the given regex
        other.goto(app_url + "/?regex=%5B0-9%5D%2B&schema=%7B%22type%22%3A3%7D")
        expect(other.locator("#schema-error")).to_contain_text("/type")
        expect(other.locator("#regex textarea")).to_have_value("[0-9]+")
        expect(other.locator("#schema-mode")).not_to_contain_text("JSON")
    finally:
        other.close()


def test_a_recursive_schema_runs_on_the_grammar_path_drawn_by_its_structure(page, app_url):
    """The tree example takes the grammar path: the Regex box is emptied, the drawing
    panel says why there is no DFA and draws the tree by its structure instead, Generate
    streams under llguidance's mask, and the JSON view ends with the verdict."""
    open_part(page, app_url)
    page.locator("#schema-example input").click()
    page.locator("ul[role=listbox] li", has_text="tree").first.click()
    expect(page.locator("#schema-mode")).to_contain_text("grammar path", timeout=UI_TIMEOUT)
    expect(page.locator("#regex textarea")).to_have_value("")
    expect(page.locator("#dfa")).to_contain_text("no character DFA")
    expect(page.locator("#error")).not_to_contain_text("empty")
    run_to_done(page)
    written = valid_json_written(page)
    assert written["label"] == "fruit" and len(written["children"]) == 2
    drawing = page.locator("#dfa #schema-structure svg.rules")  # where a DFA would be
    expect(drawing).to_be_visible()
    assert drawing.locator(".cluster.rule").count() == 3  # start, its fields, children
    # (the lights while it streams are checked without a browser: test_schema_structure)
    assert page.locator("#steps tbody tr").count() >= 10
    expect(page.locator("#valid-mass .js-plotly-plot")).to_be_visible()
    # the drawing options have no DFA to redraw here: the structure stays
    page.get_by_text("Drawing options").click()
    page.locator("#compact input[value=exact]").check()
    expect(page.locator("#compact input[value=exact]")).to_be_checked()
    page.wait_for_timeout(1000)  # the change's answer, were it a redraw, has come
    expect(drawing).to_be_visible()
    expect(page.locator("#dfa")).to_contain_text("no character DFA")
    # a regex typed in the box is a plain regex run again
    page.fill("#regex textarea", "[0-9]{2}")
    expect(page.locator("#schema-mode")).not_to_contain_text("grammar path")
    expect(page.locator("#dfa svg.fsm")).to_be_visible(timeout=UI_TIMEOUT)
    # the same schema pasted on the same page, then a big one (two page loads fewer)
    a_grammar_path_run_shows_each_steps_allowed_set_and_lights_its_field(page)
    a_pasted_kubernetes_deployment_schema_compiles_draws_and_runs(page)


def a_regex_path_schema_shows_its_structure_beside_its_dfa(page):
    page.locator("#schema-example input").click()
    page.locator("ul[role=listbox] li", has_text="person").first.click()
    expect(page.locator("#schema-mode")).to_contain_text("Generate writes JSON", timeout=UI_TIMEOUT)
    # a few tokens of the person, not the example's 48: the structure is drawn for any run
    # of a regex-path schema, lit where its output stops (``json_view_html``), and this
    # checks only that it is drawn, whole, beside the DFA
    set_budget(page, 8)
    run_to_done(page)
    expect(page.locator("#dfa svg.fsm")).to_be_visible()  # the character DFA stays
    drawing = page.locator("#json-view #schema-structure svg.rules")
    expect(drawing).to_be_visible()
    assert drawing.locator(".cluster.rule").count() == 2  # the person and its fields


def which_engine_gets_the_schema_right_is_a_table_on_the_page(page):
    schema = {
        "type": "object",
        "properties": {"qty": {"type": "integer", "minimum": 1}, "note": {"type": "string"}},
        "required": ["qty"],
        "additionalProperties": False,
    }
    fill_schema(page, json.dumps(schema))
    page.click("#schema-engines-run")
    table = page.locator("#schema-engines table")
    expect(table).to_be_visible(timeout=RUN_TIMEOUT)
    fsmviz_row = table.locator("tr", has_text="fsmviz")
    expect(fsmviz_row).to_contain_text("yes (regex path)")
    expect(fsmviz_row).to_have_class(re.compile("right"))
    assert table.locator("tr").count() >= 3  # the head, fsmviz and at least one peer
    expect(page.locator("#schema-engines")).to_contain_text("near-misses")


LIT_TOPS = """() => [...document.querySelectorAll('#schema-structure svg g.node.pos.top')]
    .map((g) => [...g.classList].find((c) => /^r\\d+s\\d+$/.test(c))).sort()"""


def set_budget(page, max_tokens: int) -> None:
    box = page.locator("#max-tokens input[type=number]")
    box.fill(str(max_tokens))
    box.press("Enter")
    expect(page.locator("#max-tokens input[type=range]")).to_have_value(str(max_tokens))


def paste(page, schema: str, prompt: str, max_tokens: int) -> None:
    """``schema`` pasted in the open part and used, the prompt and budget set."""
    fill_schema(page, schema)
    page.click("#schema-use")
    expect(page.locator("#schema-mode .schema-mode")).to_be_attached(timeout=UI_TIMEOUT)
    page.fill("#prompt textarea", prompt)
    set_budget(page, max_tokens)


def a_grammar_path_run_shows_each_steps_allowed_set_and_lights_its_field(page):
    """A grammar-path schema run ends with every step's allowed set (llguidance's mask
    replayed, the model's probabilities beside it), and choosing a step (a row, the ← →
    keys) shows that step's set and lights the field it wrote in the structure drawing."""
    paste(page, json.dumps(TREE), "A tree of two fruits, as JSON:", 10)
    expect(page.locator("#schema-mode")).to_contain_text("grammar path")
    allowed = page.locator("#allowed-tokens")
    expect(allowed.locator(".allowed-data")).to_have_count(0)  # no earlier run's sets
    page.click("#run")
    expect(allowed.locator(".allowed-data")).to_be_attached(timeout=RUN_TIMEOUT)
    n = page.locator("#steps tbody tr[data-step]").count()
    expect(allowed.locator(".allowed-head")).to_contain_text(f"Step {n - 1}:")
    lights = json.loads(page.get_attribute("#schema-structure .lights", "data-json") or "")
    assert len(lights) == n

    def tops(i: int) -> list[str]:
        return sorted(name for name, classes in lights[i].items() if "top" in classes.split())

    moved = [i for i in range(n - 1) if tops(i) != tops(n - 1)]
    assert moved, lights  # some step was written in another place than the last
    i = moved[0]
    page.locator(f"#steps tbody tr[data-step='{i}']").click()
    expect(allowed.locator(".allowed-head")).to_contain_text(f"Step {i}:")
    expect(allowed.locator(".allowed-head")).to_contain_text("took")
    expect(allowed.locator(".allowed-list li").first).to_be_attached()
    expect(page.locator("#schema-structure svg")).to_have_attribute("data-lit", str(i))
    assert page.evaluate(LIT_TOPS) == tops(i)
    page.keyboard.press("ArrowRight")
    expect(allowed.locator(".allowed-head")).to_contain_text(f"Step {i + 1}:")
    expect(page.locator("#schema-structure svg")).to_have_attribute("data-lit", str(i + 1))
    assert page.evaluate(LIT_TOPS) == tops(i + 1)
    expect(allowed.locator(".blocked-list")).not_to_contain_text("0.00%")


def a_pasted_kubernetes_deployment_schema_compiles_draws_and_runs(page):
    """A Kubernetes Deployment's schema (nested $defs) pasted as an engineer would: it
    compiles, its structure is drawn (one box per object and array), and a few tokens of
    a manifest are written under it."""
    root = Path(__file__).resolve().parent.parent
    schema = (root / "bench" / "schemas" / "kubernetes" / "deployment.json").read_text()
    prompt = "A Deployment named web with 3 replicas, as JSON:"
    note = page.locator("#schema-mode").text_content()  # the tree's, before this schema's
    paste(page, schema, prompt, 8)
    expect(page.locator("#schema-mode")).not_to_have_text(note or "", timeout=UI_TIMEOUT)
    expect(page.locator("#schema-mode")).to_contain_text(re.compile("grammar path|writes JSON"))
    expect(page.locator("#schema-error")).to_have_text("")
    run_to_done(page)
    drawing = page.locator("#schema-structure svg.rules")
    expect(drawing).to_be_visible()
    assert drawing.locator(".cluster.rule").count() >= 20  # the Deployment and its $defs
    text = page.locator("#output .tokens").text_content() or ""
    assert text.startswith("{") and len(page.locator("#steps tbody tr").all()) >= 3
