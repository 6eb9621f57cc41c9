"""End-to-end: the Compare view of the real app in headless Chromium: one prompt and seed
under every way of decoding, a table row each, and the valid-mass curves."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api")
Page = playwright_api.Page
expect = playwright_api.expect

from test_e2e import app_url, browser_type_launch_args  # noqa: E402, F401  (same fixtures)

RUN_TIMEOUT = 240_000


def test_compare_runs_every_way_and_draws_the_curves(page: Page, app_url: str) -> None:  # noqa: F811
    page.set_default_timeout(60_000)
    page.goto(app_url + "/")
    expect(page.locator("body[data-restored=yes]")).to_have_count(1)
    page.get_by_role("tab", name="Compare").click()
    expect(page.locator("#compare")).to_contain_text("Press Compare")
    page.fill("#compare-regex textarea", r"[0-9]+\.[0-9]+")
    page.fill("#compare-prompt textarea", "How much does a coffee cost in Paris, in euros? <b>")
    page.locator("#compare-run").click()
    table = page.locator("#compare table")
    expect(table.locator("tbody tr:not(.pending)")).to_have_count(5, timeout=RUN_TIMEOUT)
    for way in ("constrained", "overshoot", "first", "extract", "retries"):
        expect(table.locator(f"tr[data-way={way}]")).to_have_count(1)
    for way in ("constrained", "overshoot", "first"):  # masking always matches
        expect(table.locator(f"tr[data-way={way}]")).to_contain_text("✓ yes")
    expect(table.locator("tr[data-way=first]")).to_contain_text("first_match")
    expect(page.locator("#compare-chart .scatterlayer .trace")).to_have_count(3)
