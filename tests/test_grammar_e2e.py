"""End-to-end: the grammar tab in headless Chromium with the real app and model. A grammar
is typed, drawn as one box per rule, run on the real model, and the parser's place is lit
in the drawing (``#rules svg .current``) and said in words; an example runs in one click.
A run does what a regex run does: Stop keeps what was written, Generate is always there,
the valid-mass chart, the step table and each step's allowed set, the shadow run, a link
that restores the run and its step, and the downloads.
Screenshots of the tab at 1440 and 390 px go to ``.tmp/`` (``static/grammar*.png`` are
taken from them)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

import test_e2e  # noqa: E402

from fsmviz.app.examples import grammar_examples  # noqa: E402
from scripts.pagecapture import skip_offered  # noqa: E402

app_url = test_e2e.app_url  # the browser tests' fixtures: one app, one Chromium
browser_type_launch_args = test_e2e.browser_type_launch_args

RUN_TIMEOUT = 240_000  # ms: a grammar run on a busy CPU
UI_TIMEOUT = 90_000  # ms: compile, draw and diagnose a grammar through the queue
ROOT = Path(__file__).resolve().parent.parent
expect.set_options(timeout=UI_TIMEOUT)

ARITHMETIC = (
    'root ::= expr\nexpr ::= term (("+" | "-") term)*\nterm ::= [0-9]{1,4} | "(" expr ")"\n'
)


def open_tab(page, url: str) -> None:
    page.set_default_timeout(UI_TIMEOUT)
    page.goto(url + "/")
    test_e2e.wait_for_model(page)
    page.get_by_role("tab", name="Grammar").click()
    expect(page.locator("#grammar textarea")).to_be_visible()


def set_budget(page, max_tokens: int) -> None:
    box = page.locator("#grammar-max-tokens input[type=number]")
    box.fill(str(max_tokens))
    box.press("Enter")
    expect(page.locator("#grammar-max-tokens input[type=range]")).to_have_value(str(max_tokens))


SKIP = skip_offered("#grammar-stop")
"""The Grammar tab's "Skip shadow run" button if the page offers it now, else null."""


def wait_done(page, shadow: bool = True) -> int:
    """Wait for the whole run (constrained, then shadow) to end; its number of steps.
    Without ``shadow``, the shadow run is skipped as soon as the page offers it (a test
    that does not look at it would only pay for its frames)."""
    status = page.locator("#grammar-status")
    expect(status).to_have_text(re.compile(r"^\s*Done: \d+"), timeout=RUN_TIMEOUT)
    if not shadow:
        stop_gone = "!document.querySelector('#grammar-stop')?.offsetParent"
        page.wait_for_function(
            f"() => ({SKIP})() !== null || {stop_gone}",
            timeout=RUN_TIMEOUT,
            polling=test_e2e.POLL_MS,
        )
        page.evaluate(f"() => ({SKIP})()?.click()")
    expect(status).not_to_contain_text(test_e2e.SHADOW_GOING, timeout=RUN_TIMEOUT)
    expect(page.locator("#grammar-stop")).to_be_hidden(timeout=RUN_TIMEOUT)
    found = re.match(r"\s*Done: (\d+) tokens?", page.text_content("#grammar-status") or "")
    assert found, page.text_content("#grammar-status")
    return int(found.group(1))


def run_one_rule(
    page, app_url: str, grammar: str, prompt: str, max_tokens: int, shadow: bool = False
) -> int:
    """The tab opened, a one-rule ``grammar`` typed (its box drawn) and run on ``prompt``
    to the end (its shadow run skipped unless ``shadow``); the run's number of steps."""
    open_tab(page, app_url)
    page.fill("#grammar textarea", grammar)
    expect(page.locator("#rules svg g.cluster")).to_have_count(1)
    page.fill("#grammar-prompt textarea", prompt)
    set_budget(page, max_tokens)
    page.click("#grammar-run")
    return wait_done(page, shadow)


def choose_step(page, i: int) -> None:
    """Click step ``i``'s row: its place, row, token and allowed set are shown."""
    page.locator(f"#grammar-steps tbody tr[data-step='{i}']").click()
    expect(page.locator(f"#grammar-steps tbody tr.selected[data-step='{i}']")).to_have_count(1)
    expect(page.locator("#grammar-allowed .allowed-view")).to_have_attribute("data-step", str(i))


SERVER_CALL = re.compile(r"/gradio_api/(queue/join|run/|call/)")
"""A request that asks the server to run an event: a step chosen must make none."""
LIT_RULE = """() => {
    const top = document.querySelector('#rules svg g.node.pos.current.top');
    const at = top && [...top.classList].map((c) => c.match(/^r(\\d+)s\\d+$/)).find(Boolean);
    const box = at && document.querySelector(`#rules svg g.cluster.r${at[1]}`);
    return box ? box.querySelector('text').textContent.trim().split(/\\s/)[0] : null;
}"""
"""The rule whose box holds the lit top of the parser's stack."""


def expect_card_and_lit_rule(page, i: int) -> None:
    """Step ``i``'s card says its step, rules, token and mass as its row does, and the
    rule the row says the parser is in after it holds the drawing's lit position."""
    row = page.locator(f"#grammar-steps tbody tr[data-step='{i}'] td")
    rules = (row.nth(1).text_content() or "").strip()
    card = page.locator("#grammar-step-buttons .step-card")
    expect(card).to_have_attribute("data-step", str(i))
    expect(card).to_contain_text(f"Step {i} · rule {rules}")
    expect(card).to_contain_text(f"valid mass {(row.nth(4).text_content() or '').strip()}")
    after = rules.split("→")[-1].strip()
    if after not in ("end", "—"):
        assert page.evaluate(LIT_RULE) == after


def test_a_typed_grammar_is_drawn_run_and_its_place_lit(page, app_url: str) -> None:
    """A typed grammar is drawn (one box per rule), run to its end with its place lit and
    said, and has its chart, steps, allowed sets and shadow (``a_run_has_…``); the step
    slider replays the place. One page load and one run for what were two tests."""
    open_tab(page, app_url)
    page.fill("#grammar textarea", ARITHMETIC)
    # one box per rule: root, expr, term
    expect(page.locator("#rules svg g.cluster")).to_have_count(3)
    expect(page.locator("#rules svg g.edge.call")).not_to_have_count(0)
    page.fill("#grammar-prompt textarea", "Write a sum of three small numbers.")
    set_budget(page, 8)
    page.click("#grammar-run")
    n = wait_done(page)  # with its shadow run: a_run_has_… looks at it
    expect(page.locator("#rules svg .current").first).to_be_attached()
    assert page.locator("#rules svg g.node.pos.current").count() >= 1
    place = page.text_content("#grammar-place") or ""
    assert "in root" in place or "whole sentence" in place
    text = page.text_content("#grammar-output .tokens") or ""
    assert text, "the output is empty"
    a_run_has_the_chart_the_steps_their_allowed_sets_and_the_shadow(page, n)
    # the step slider replays the place: after step 0, the first token read
    expect(page.locator("#grammar-step input[type=range]")).to_be_enabled()
    number = page.locator("#grammar-step input[type=number]")
    number.fill("0")
    number.press("Enter")
    first = page.locator("#grammar-output .tok[data-step='0']").text_content() or ""
    shown = page.locator("#grammar-place p").first
    expect(shown).to_contain_text(first.strip() or "After")
    expect(page.locator("#grammar-place")).to_contain_text("in root")
    page.screenshot(path=str(ROOT / ".tmp" / "grammar-typed.png"), full_page=True)


def an_example_runs_in_one_click(page) -> None:
    """From a page whose status names no tokens (a grammar typed since the last run)."""
    expect(page.locator("#grammar-status")).not_to_contain_text("tokens")
    page.locator("#grammar-examples button", has_text="arithmetic").click()
    expect(page.locator("#grammar textarea")).to_have_value(
        grammar_examples()["arithmetic"].grammar
    )
    expect(page.locator("#grammar-status")).to_contain_text("tokens", timeout=RUN_TIMEOUT)
    expect(page.locator("#rules svg g.cluster.current").first).to_be_attached()


LONG = 'root ::= "Once upon a time, " [a-z ,.]{150,400}\n'
"""A grammar the model cannot finish soon: a run of it is still going when Stop comes."""


def start_long_run(page) -> None:
    """Start a run of ``LONG``; its grammar, prompt and budget typed unless still there
    (each edit is a round trip, and a run streaming meanwhile costs the page frames)."""
    if page.locator("#grammar textarea").input_value() != LONG:
        page.fill("#grammar textarea", LONG)
        expect(page.locator("#rules svg g.cluster")).to_have_count(1)
    prompt = "Tell a long story."
    if page.locator("#grammar-prompt textarea").input_value() != prompt:
        page.fill("#grammar-prompt textarea", prompt)
    if page.locator("#grammar-max-tokens input[type=number]").input_value() != "200":
        set_budget(page, 200)
    page.click("#grammar-run")
    expect(page.locator("#grammar-status")).to_contain_text("Generating", timeout=RUN_TIMEOUT)


def test_stop_keeps_the_run_generate_during_a_run_starts_anew_an_example_runs_in_one_click(
    page, app_url: str
) -> None:
    """Three runs on one page load: a long one stopped (what was written stays, stepped as
    a finished run is), another ended by Generate on another grammar (the new run is the
    one shown), then an example's, started by its button alone."""
    open_tab(page, app_url)
    stop_keeps_what_was_written_for_stepping(page)
    generate_during_a_run_starts_the_new_run(page)
    page.fill("#grammar textarea", 'root ::= "Yes" | "No"\n')  # the last run's output goes
    expect(page.locator("#grammar-status")).to_contain_text("input changed")
    an_example_runs_in_one_click(page)


def stop_keeps_what_was_written_for_stepping(page) -> None:
    start_long_run(page)
    expect(page.locator("#grammar-run")).to_be_enabled()  # never disabled while a run goes
    expect(page.locator("#grammar-output .tok").nth(2)).to_be_attached(timeout=RUN_TIMEOUT)
    page.click("#grammar-stop")
    status = page.locator("#grammar-status")
    expect(status).to_have_text(re.compile(r"^\s*Stopped after \d+ tokens?\.\s*$"),
                                timeout=RUN_TIMEOUT)  # fmt: skip
    expect(page.locator("#grammar-stop")).to_be_hidden()
    n = int(re.findall(r"\d+", page.text_content("#grammar-status") or "")[0])
    assert 3 <= n < 200
    # what was written stays, and is stepped through as a finished run is
    expect(page.locator("#grammar-steps tbody tr")).to_have_count(n)
    expect(page.locator("#grammar-allowed .allowed-data")).to_have_count(1)
    expect(page.locator("#grammar-chart .js-plotly-plot")).to_be_visible()
    choose_step(page, 1)
    expect(page.locator("#grammar-place")).to_contain_text("in root")


def generate_during_a_run_starts_the_new_run(page) -> None:
    start_long_run(page)
    page.fill("#grammar textarea", 'root ::= [0-9]{3} "!"\n')  # ends by itself: no budget
    page.click("#grammar-run")  # the first run ends, this one runs
    done = re.compile(r"^\s*Done: \d+ tokens?")
    expect(page.locator("#grammar-status")).to_have_text(done, timeout=RUN_TIMEOUT)
    n = wait_done(page, shadow=False)
    page.wait_for_timeout(1000)  # nothing of the first run comes back after it
    expect(page.locator("#grammar-status")).to_have_text(done)
    assert re.fullmatch(r"[0-9]{3}!", page.text_content("#grammar-output .tokens") or "")
    expect(page.locator("#grammar-steps tbody tr")).to_have_count(n)


def a_run_has_the_chart_the_steps_their_allowed_sets_and_the_shadow(page, n: int) -> None:
    """A finished run of ``n`` steps: its chart, table, allowed sets and shadow; steps are
    chosen in the browser without a request to the server."""
    # the chart: one point per step
    expect(page.locator("#grammar-chart .js-plotly-plot")).to_be_visible()
    points = page.locator("#grammar-chart .js-plotly-plot .scatterlayer .trace").first
    expect(points.locator(".point")).to_have_count(n)
    # the table, and each step's allowed set with the blocked favourites
    expect(page.locator("#grammar-steps tbody tr")).to_have_count(n)
    expect(page.locator("#grammar-allowed .allowed-list li").first).to_be_attached()
    expect(page.locator("#grammar-allowed .blocked-list")).to_be_attached()
    # stepping is the browser's: no request reaches the server while steps are chosen
    sent = []
    page.on("request", lambda r: sent.append(r.url) if SERVER_CALL.search(r.url) else None)
    choose_step(page, 0)
    expect(page.locator("#grammar-output .tok.selected[data-step='0']")).to_have_count(1)
    expect(page.locator("#grammar-allowed .allowed-head")).to_contain_text("Step 0:")
    expect_card_and_lit_rule(page, 0)
    # Next moves on one step: the row, the card, the lit rule and the place follow
    page.click("#grammar-stepper [data-stepper=next]")
    expect(page.locator("#grammar-steps tbody tr.selected[data-step='1']")).to_have_count(1)
    expect_card_and_lit_rule(page, 1)
    text = "".join(page.locator("#grammar-output .tok").nth(k).text_content() for k in (0, 1))
    expect(page.locator("#grammar-place p").first).to_contain_text(text.strip())
    page.wait_for_timeout(800)  # the slider follows the step after a pause, still no request
    expect(page.locator("#grammar-step input[type=number]")).to_have_value("1")
    assert sent == [], sent
    # the shadow run: what the model wrote freely for the same prompt and seed
    expect(page.locator("#grammar-shadow .tokens")).to_be_attached()
    assert (page.text_content("#grammar-shadow .tokens") or "").strip()


def test_a_link_restores_the_grammar_the_run_and_its_step_and_play_and_arrows_step_it(
    page, app_url: str, browser
) -> None:
    """One run (its shadow skipped: nothing here looks at it) for what were two tests: the
    downloads, Play and the arrow keys, then the link (read before them) that restores the
    run and its step, on a second page."""
    grammar = 'root ::= "<" [a-z]{2,6} ">" " & " [0-9]{1,3}\n'
    n = run_one_rule(page, app_url, grammar, "A tag & a number: <x>", 7)
    assert n >= 3
    # a finished run shows its last step
    expect(page.locator(f"#grammar-steps tbody tr.selected[data-step='{n - 1}']")).to_have_count(1)
    choose_step(page, 1)
    # the downloads: the trace, the grammar and its rules drawing
    page.get_by_text("Downloads: the trace as JSON and CSV, the grammar").click()
    for name in ("trace", "grammar", "rules"):
        expect(page.locator("#grammar-downloads")).to_contain_text(name)
    offered = re.sub(r"\s+", "", page.text_content("#grammar-downloads") or "")
    for name in ("trace.json", "trace.csv", "grammar.gbnf", "rules.svg"):
        assert name in offered, offered
    # the address follows the tab: grammar, prompt, options, run and step
    expect(page).to_have_url(re.compile(r"[?&]step=1\b"))
    query = parse_qs(urlparse(page.url).query)
    assert query["grammar"] == [grammar]
    assert query["prompt"] == ["A tag & a number: <x>"]
    assert query["max_tokens"] == ["7"] and query["run"] == ["1"] and query["step"] == ["1"]
    url, text = page.url, page.text_content("#grammar-output .tokens")
    # Play and the keys on this page first, then it is closed: an idle open page costs
    # Chromium CPU while the link's page loads and runs again
    play_and_the_arrow_keys_step_through_a_grammar_run(page, n)
    page.close()
    other = browser.new_page()
    try:
        other.set_default_timeout(UI_TIMEOUT)
        other.goto(url)
        expect(other.locator("#grammar textarea")).to_be_visible(timeout=UI_TIMEOUT)
        expect(other.locator("#grammar textarea")).to_have_value(grammar)
        expect(other.locator("#grammar-prompt textarea")).to_have_value("A tag & a number: <x>")
        expect(other.locator("#grammar-steps tbody tr.selected[data-step='1']")).to_have_count(
            1, timeout=RUN_TIMEOUT
        )
        # the same run (greedy, the same seed): the same text
        assert other.text_content("#grammar-output .tokens") == text
        expect(other.locator("#grammar-place")).to_contain_text("After")
    finally:
        other.close()


SEEN_STEPS = """() => {
    window.__seenSteps = [];
    const note = () => {
        const row = document.querySelector('#grammar-steps tbody tr.selected');
        const seen = window.__seenSteps;
        if (row && seen[seen.length - 1] !== Number(row.dataset.step)) {
            seen.push(Number(row.dataset.step));
        }
    };
    note();
    new MutationObserver(note).observe(document.querySelector('#grammar-steps'),
        {subtree: true, childList: true, attributes: true});
}"""
"""Records each step the Grammar tab's table shows selected, in turn (from the one now)."""


def play_and_the_arrow_keys_step_through_a_grammar_run(page, n: int) -> None:
    """The Generate tab's Prev / Play / Next and ← → keys step the Grammar tab's run too:
    Play shows every step in turn, each drawn before the next (it never runs ahead); the
    blocked favourites list only what the model wanted (no 0.00% entries). From the last
    of the run's ``n`` steps."""
    selected = "#grammar-steps tbody tr.selected[data-step='{}']"
    choose_step(page, n - 1)
    expect(page.locator(selected.format(n - 1))).to_have_count(1)
    page.locator("#grammar-place").click()  # the keys are the page's, not a box's
    page.keyboard.press("ArrowLeft")
    expect(page.locator(selected.format(n - 2))).to_have_count(1)
    expect(page.locator("#grammar-allowed .allowed-view")).to_have_attribute(
        "data-step", str(n - 2)
    )
    page.keyboard.press("ArrowRight")
    expect(page.locator(selected.format(n - 1))).to_have_count(1)
    page.evaluate(SEEN_STEPS)
    play = page.locator("#grammar-stepper [data-stepper=play]")
    play.click()  # at the last step: Play starts again from the first
    expect(play).to_have_text("⏸ Pause")
    expect(play).to_have_text("▶ Play", timeout=RUN_TIMEOUT)
    expect(page.locator(selected.format(n - 1))).to_have_count(1)
    assert page.evaluate("() => window.__seenSteps") == [n - 1, *range(n)]
    expect(page.locator("#grammar-allowed .blocked-list")).not_to_contain_text("0.00%")
