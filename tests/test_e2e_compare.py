"""End-to-end: the Compare view of the real app in headless Chromium: one prompt and seed
under every way of decoding, a table row each, and the valid-mass curves."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api")
Page = playwright_api.Page
expect = playwright_api.expect

from test_e2e import app_url, browser_type_launch_args  # noqa: E402, F401  (same fixtures)

RUN_TIMEOUT = 400_000


def test_decoding_options_then_compare_then_learn_s_moby_dick_on_one_page(
    page: Page,
    app_url: str,  # noqa: F811
) -> None:
    """Three views' checks on one page (once a page load each): the Generate tab's decoding
    options, then the Compare tab, then Learn's toy example; each view keeps its own inputs."""
    from test_e2e import open_app

    page.set_default_timeout(60_000)
    open_app(page, app_url + "/")
    the_decoding_options_reach_the_run_and_the_steps_table(page)
    compare_runs_every_way_and_draws_the_curves(page)
    learn_offers_moby_dick_on_the_zip_model(page)


def compare_runs_every_way_and_draws_the_curves(page: Page) -> None:
    page.get_by_role("tab", name="Compare").click()
    expect(page.locator("#compare")).to_contain_text("Press Compare")
    page.fill("#compare-regex textarea", r"[0-9]+\.[0-9]+")
    page.fill("#compare-prompt textarea", "How much does a coffee cost in Paris, in euros? <b>")
    for box, value in (("#compare-max-tokens", "8"), ("#compare-retries", "1")):
        page.fill(f"{box} input[type=number]", value)
        page.locator(f"{box} input[type=number]").press("Enter")
    page.locator("#compare-run").click()
    table = page.locator("#compare table")
    expect(table.locator("tbody tr:not(.pending)")).to_have_count(5, timeout=RUN_TIMEOUT)
    for way in ("constrained", "overshoot", "first", "extract", "retries"):
        expect(table.locator(f"tr[data-way={way}]")).to_have_count(1)
    for way in ("constrained", "overshoot", "first"):  # masking always matches
        expect(table.locator(f"tr[data-way={way}]")).to_contain_text("✓ yes")
    expect(table.locator("tr[data-way=first]")).to_contain_text("first_match")
    expect(page.locator("#compare-chart .scatterlayer .trace")).to_have_count(3)


def the_decoding_options_reach_the_run_and_the_steps_table(page: Page) -> None:
    from test_e2e import click_and_wait, set_inputs

    set_inputs(page, "[a-z]", "Write the word banana in lowercase.", 8, True)
    page.get_by_text("Decoding: samplers, stop rule, overshoot").click()
    page.locator("#overshoot input[type=checkbox]").set_checked(True)
    click_and_wait(page, "#run", shadow=False)  # (no look at its shadow run)
    steps = page.locator("#steps")
    expect(steps).to_contain_text("was cut", timeout=RUN_TIMEOUT)
    expect(steps).to_contain_text("by overshoot")
    text = page.eval_on_selector("#output .tokens", "e => e.textContent")
    assert len(text) == 1 and text.islower()  # the token's first letter; the rest was cut
    expect(page.locator("#output .tok.overshoot")).to_have_count(1)
    expect(page.locator("#status")).to_contain_text("its rest was cut (overshoot)")


def learn_offers_moby_dick_on_the_zip_model(page: Page) -> None:
    page.get_by_role("tab", name="Learn").click()
    learn = page
    learn.get_by_text("5. Toy vocabularies").click()
    learn.locator("#toy-example input").click()
    learn.get_by_role("option", name="seed 000: Moby Dick on the ZipModel").click()
    expect(learn.locator("#learn-regex textarea")).to_have_value("(ishmael|moby dick)")
    expect(learn.locator("#toy-model input[value=ZipModel]")).to_be_checked()
    expect(learn.locator("#toy-training textarea")).to_have_value(re.compile("^call me ishmael"))
    expect(learn.locator("#toy")).to_contain_text("allowed next: i, m.")
    learn.get_by_text("9. The whole index as one table").click()
    learn.fill("#learn-regex textarea", "[0-9]{2}")
    learn.locator("#token-table-run").click()
    table = learn.locator("#token-transitions table")
    expect(table.locator("tr")).to_have_count(4)  # header + 3 states
    expect(table.locator("th")).to_have_count(11)  # the corner + the ten digit tokens
