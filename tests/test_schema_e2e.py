"""End-to-end: the page's JSON Schema part in headless Chromium, with the real app."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

from scripts.screenshot import ARGS as CHROMIUM_ARGS  # noqa: E402  (one launch recipe)
from scripts.screenshot import CHROMIUM  # noqa: E402

RUN_TIMEOUT = 240_000  # ms: diagnose + generate on a busy CPU


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def app_url(request: pytest.FixtureRequest, browser) -> str:
    if not os.environ.get("FSMVIZ_E2E_URL") and not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    return request.getfixturevalue("app_server")


def test_a_typed_schema_gives_valid_json_and_findings_naming_its_field(page, app_url):
    schema = {
        "type": "object",
        "properties": {
            "sentiment": {"enum": ["positive", "negative"]},
            "reason": {"type": "string"},
        },
        "required": ["sentiment", "reason"],
    }
    page.goto(app_url + "/")
    page.get_by_text("JSON Schema: valid JSON for a schema").click()
    page.locator("#schema textarea").fill(json.dumps(schema))
    page.locator("#schema-prompt textarea").fill('Review: "Cold soup." Classify it as JSON.')
    page.locator("#schema-whitespace").get_by_text("none", exact=True).click()
    page.locator("#schema-run").click()
    output = page.locator("#schema-output")
    expect(output).to_contain_text('{"sentiment":', timeout=RUN_TIMEOUT)
    expect(output.locator(".json-verdict")).to_be_visible(timeout=RUN_TIMEOUT)
    expect(page.locator("#schema-findings")).to_contain_text("/properties/reason")
    assert page.locator("#schema-output script").count() == 0


def test_a_broken_schema_is_refused_with_its_pointer(page, app_url):
    page.goto(app_url + "/")
    page.get_by_text("JSON Schema: valid JSON for a schema").click()
    page.locator("#schema textarea").fill('{"type": "object", "properties": {"a": {"type": 3}}}')
    page.locator("#schema-run").click()
    expect(page.locator("#schema-error")).to_contain_text("/properties/a/type", timeout=60_000)
