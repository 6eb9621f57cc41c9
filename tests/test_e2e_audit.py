"""End-to-end: the Audit view of the real app in headless Chromium: a file of three prompts
uploaded, the report's counts on the page, and a run's link opening the Generate tab with
that run loaded and run."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api")
Page = playwright_api.Page
expect = playwright_api.expect

from test_e2e import app_url, browser_type_launch_args  # noqa: E402, F401  (same fixtures)

RUN_TIMEOUT = 400_000
PATTERN = r"[0-9]{4}"


def test_an_uploaded_prompts_file_is_audited_and_each_run_opens_on_the_page(
    page: Page,
    app_url: str,  # noqa: F811
    tmp_path,
) -> None:
    from test_e2e import open_app, type_regex

    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(
        '{"id": "moon", "prompt": "In what year did Apollo 11 land on the moon?"}\n'
        '{"id": "wall", "prompt": "In what year did the Berlin Wall fall? <b>"}\n'
        "In what year did the first iPhone go on sale?\n"
    )
    page.set_default_timeout(60_000)
    open_app(page, app_url + "/")
    type_regex(page, PATTERN)
    page.get_by_role("tab", name="Audit").click()
    expect(page.locator("#audit-report")).to_contain_text("Upload a prompts file")
    page.locator("#audit-file input[type=file]").set_input_files(str(prompts))
    box = page.locator("#audit-max-tokens input[type=number]")
    box.fill("4")  # enough for the report: its counts, not the years, are looked at
    box.press("Enter")
    page.locator("#audit-run").click()
    report = page.locator("#audit-report")
    expect(report).to_contain_text(re.compile(r"3 runs: \d matched"), timeout=RUN_TIMEOUT)
    expect(report.locator("tr", has_text="prompts")).to_contain_text("3")
    expect(report).to_contain_text("Berlin Wall fall? <b>")  # text, not markup
    links = report.locator("a", has_text="open")
    expect(links).to_have_count(3)
    href = links.nth(1).get_attribute("href")
    assert href and href.startswith("?regex=") and "run=1" in href
    open_app(page, app_url + "/" + href)  # the run loaded: its regex, prompt, and run
    expect(page.locator("#regex textarea")).to_have_value(PATTERN)
    expect(page.locator("#prompt textarea")).to_have_value(
        "In what year did the Berlin Wall fall? <b>"
    )
    expect(page.locator("#steps tbody tr").first).to_be_attached(timeout=RUN_TIMEOUT)
