"""End-to-end: the Learn tab of the real app in headless Chromium, one test per part.

Shares the session's app (conftest's ``app_server``) and the launch recipe of
``test_e2e.py``. The Learn tab needs no model run, so each test is a few round trips, all
on one page (``learn_page``: a page load is 5-6 s of Chromium's CPU, the round trips a
fraction of that); each test starts from the seed pattern typed afresh and the walk's
text the page opened with, and opens the part it needs if it is closed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api")
Page = playwright_api.Page
expect = playwright_api.expect

from test_e2e import app_url, browser_type_launch_args, wait_for_model  # noqa: E402, F401

UI_TIMEOUT = 60_000
FLOAT = r"([0-9]+)?\.[0-9]+"


@pytest.fixture(scope="module")
def learn_page(browser, app_url: str) -> Iterator[tuple[Page, str]]:  # noqa: F811
    """One page for the module, loaded, the Learn tab open; with the walk's text it
    opened with."""
    page = browser.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    page.goto(app_url + "/")
    expect(page.locator("body[data-restored=yes]")).to_have_count(1)  # the page-load event
    wait_for_model(page)
    page.get_by_role("tab", name="Learn").click()
    expect(page.locator("#learn")).to_be_visible()
    yield page, page.locator("#walk textarea").input_value()
    page.close()


@pytest.fixture
def learn(learn_page: tuple[Page, str]) -> Page:
    """The Learn tab open, with seed 000's float pattern typed afresh into its regex box
    (another pattern first: its views start again from their first frame) and the walk's
    first text back."""
    page, walk = learn_page
    page.fill("#learn-regex textarea", "ab")
    expect(page.locator("#construction")).to_contain_text("2 positions")
    if page.locator("#walk textarea").input_value() != walk:
        page.fill("#walk textarea", walk)
    page.fill("#learn-regex textarea", FLOAT)
    expect(page.locator("#construction")).to_contain_text("3 positions")
    expect(page.locator("#construction h3")).to_contain_text("(1 / 8)")
    expect(page.locator("#transitions table tr")).to_have_count(4)
    return page


def open_part(page: Page, title: str, inside: str) -> None:
    """Open the Learn tab's part ``title`` unless it is open (its ``inside`` shown): a
    click on an open part's title would close it."""
    if not page.locator(inside).is_visible():
        page.get_by_text(title).click()
    expect(page.locator(inside)).to_be_visible()


def test_construction_steps_forward_and_back(learn: Page) -> None:
    title = learn.locator("#construction h3")
    expect(title).to_contain_text("Positions")
    learn.locator("#learn-next").click()
    expect(title).to_contain_text("Subset construction: state 0 of 4")
    # six quick clicks, none waiting for the last one's frame: each counts (the frame
    # number is kept in the browser, learn.FRAME_STEP), and one more past the end stays
    for _ in range(7):
        learn.locator("#learn-next").click()
    expect(title).to_contain_text("(8 / 8)")
    expect(title).to_contain_text("Minimal DFA")
    expect(learn.locator("#construction svg.fsm")).to_be_visible()
    learn.locator("#learn-back").click()
    expect(title).to_contain_text("Minimisation")
    expect(learn.locator("#construction")).to_contain_text("States 0 and 2 merge into state 0")
    # another pattern, then this one again: its frame 0, and Next goes on from there
    learn.fill("#learn-regex textarea", "ab")
    expect(learn.locator("#construction")).to_contain_text("2 positions")
    learn.fill("#learn-regex textarea", FLOAT)
    expect(title).to_contain_text("(1 / 8)")
    learn.locator("#learn-next").click()
    expect(title).to_contain_text("(2 / 8)")


def test_walk_lights_the_path_and_gives_the_verdict(learn: Page) -> None:
    result = learn.locator("#walk-result")
    expect(result).to_contain_text("23.37 matches")
    expect(result.locator(".node.current")).to_have_count(1)
    learn.fill("#walk textarea", "2.x<b>")
    expect(result).to_contain_text("dead at character 3")
    expect(result).to_contain_text("regex matcher agrees")
    expect(result.locator("b", has_text="x")).to_have_count(0)  # user text escaped


def test_transition_table_marks_start_accepting_and_blank_entries(learn: Page) -> None:
    table = learn.locator("#transitions table")
    expect(table.locator("tr")).to_have_count(4)  # header + 3 states
    expect(table.locator("td.blank")).to_have_count(2)
    expect(table.locator("tr").nth(1)).to_contain_text("→")


def test_test_strings_show_a_python_disagreement(learn: Page) -> None:
    open_part(learn, "4. Test strings", "#tests textarea")
    learn.fill("#learn-regex textarea", r"\d+")
    # Wait for the new pattern's views (they redraw the test results too), as a person
    # would see them, before typing the tests: otherwise the pattern's redraw, computed with
    # the old test lines, may land after the tests' own result.
    expect(learn.locator("#transitions table tr")).to_have_count(3)
    learn.fill("#tests textarea", "+ 42\n- 4a\n+ ٣")
    result = learn.locator("#tests-result")
    expect(result).to_contain_text("2 of 3 expectations met")
    expect(result.locator("tr.fail")).to_contain_text("ASCII")


def test_toy_vocabulary_steps_token_by_token(learn: Page) -> None:
    open_part(learn, "5. Toy vocabularies", "#toy-example input")
    learn.locator("#toy-example input").click()
    learn.get_by_role("option", name="seed 003: hot / cold / hotel").click()
    expect(learn.locator("#learn-regex textarea")).to_have_value("(hot|cold|hotel)")
    # the new pattern's views have been answered (the construction's first stage of it)
    expect(learn.locator("#construction")).to_contain_text("12 positions")
    toy = learn.locator("#toy")
    expect(toy).to_contain_text("allowed next: c, h.")
    expect(toy.locator(".mask td.on")).to_have_count(2)  # of 53 tokens (52 letters and *)
    learn.locator("#toy-next").click()  # "c" or "h" is sampled; either way "o" comes next
    expect(toy).to_contain_text("allowed next: o.")
    expect(toy.locator(".mask td.on")).to_have_count(1)
    expect(toy.locator(".node.current")).to_have_count(1)
    learn.locator("#toy-back").click()
    expect(toy).to_contain_text("allowed next: c, h.")
    learn.locator("#toy-pick input").click()  # a clicked token instead of a sampled one
    learn.get_by_role("option", name="h", exact=True).click()
    expect(toy).to_contain_text("Text so far: h")
    expect(toy).to_contain_text("allowed next: o.")
    learn.fill("#learn-regex textarea", "(hot|cold)")  # a walk made for another pattern
    expect(toy).to_contain_text("Text so far: (empty)")
    expect(toy).to_contain_text("allowed next: c, h.")


def test_zip_model_gives_real_logits(learn: Page) -> None:
    open_part(learn, "5. Toy vocabularies", "#toy-model")
    learn.locator("#toy-model").get_by_text("ZipModel").click()
    row = learn.locator("#toy tr").nth(2)  # the logits
    expect(row).to_contain_text("-")
    expect(row).not_to_contain_text("0.00")


def test_bytes_walk_a_split_character(learn: Page) -> None:
    open_part(learn, "6. Bytes", "#bytes")
    learn.fill("#learn-regex textarea", "[一-龥]+")
    result = learn.locator("#bytes")
    expect(result).to_contain_text("inside a character")
    expect(result).to_contain_text("日")
    expect(result.locator("svg.fsm")).to_be_visible()


def test_naive_against_the_index_on_the_real_vocabulary(learn: Page) -> None:
    open_part(learn, "7. Naive matching", "#naive-run")
    learn.locator("#naive-run").click()
    result = learn.locator("#naive")
    expect(result).to_contain_text("49,152 tokens")
    expect(result).to_contain_text("same set")
    expect(result.locator("tr")).to_have_count(7)  # header + "", 2, 23, 23., 23.3, 23.37


def test_a_regex_typed_fast_here_reaches_the_generate_tab_whole(learn: Page) -> None:
    """Each keystroke in the Learn tab's box is copied to the Generate tab's; one typed
    while the last copy is under way must not be dropped (Gradio's default for ``input``
    drops it: `[0-9]{2}` arrived as `[0-9]{`), or the Generate tab runs another pattern."""
    box = learn.locator("#learn-regex textarea")
    box.fill("")
    box.press_sequentially(r"[0-9]{2}-[a-z]{3}", delay=30)
    expect(learn.locator("#regex textarea")).to_have_value(r"[0-9]{2}-[a-z]{3}")
