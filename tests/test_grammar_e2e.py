"""End-to-end: the grammar tab in headless Chromium with the real app and model. A grammar
is typed, drawn as one box per rule, run on the real model, and the parser's place is lit
in the drawing (``#rules svg .current``) and said in words; an example runs in one click.
Screenshots of the tab at 1440 and 390 px go to ``.tmp/`` (``static/grammar*.png`` are
taken from them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

from fsmviz.app.grammar_page import grammar_examples  # noqa: E402
from scripts.screenshot import ARGS as CHROMIUM_ARGS  # noqa: E402  (one launch recipe)
from scripts.screenshot import CHROMIUM  # noqa: E402

RUN_TIMEOUT = 240_000  # ms: a grammar run on a busy CPU
UI_TIMEOUT = 90_000  # ms: compile, draw and diagnose a grammar through the queue
ROOT = Path(__file__).resolve().parent.parent
expect.set_options(timeout=UI_TIMEOUT)

ARITHMETIC = (
    'root ::= expr\nexpr ::= term (("+" | "-") term)*\nterm ::= [0-9]{1,4} | "(" expr ")"\n'
)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def app_url(request: pytest.FixtureRequest, browser) -> str:
    if not os.environ.get("FSMVIZ_E2E_URL") and not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    return request.getfixturevalue("app_server")


def open_tab(page, url: str) -> None:
    page.set_default_timeout(UI_TIMEOUT)
    page.goto(url + "/")
    expect(page.locator("#status")).to_contain_text("Model:", timeout=UI_TIMEOUT)
    page.get_by_role("tab", name="Grammar").click()
    expect(page.locator("#grammar textarea")).to_be_visible()


def test_a_typed_grammar_is_drawn_run_and_its_place_lit(page, app_url: str) -> None:
    open_tab(page, app_url)
    page.fill("#grammar textarea", ARITHMETIC)
    # one box per rule: root, expr, term
    expect(page.locator("#rules svg g.cluster")).to_have_count(3)
    expect(page.locator("#rules svg g.edge.call")).not_to_have_count(0)
    page.fill("#grammar-prompt textarea", "Write a sum of three small numbers.")
    box = page.locator("#grammar-max-tokens input[type=number]")
    box.fill("8")
    box.press("Enter")
    page.click("#grammar-run")
    expect(page.locator("#grammar-status")).to_contain_text("tokens", timeout=RUN_TIMEOUT)
    expect(page.locator("#rules svg .current").first).to_be_attached()
    assert page.locator("#rules svg g.node.pos.current").count() >= 1
    place = page.text_content("#grammar-place") or ""
    assert "in root" in place or "whole sentence" in place
    text = page.text_content("#grammar-output .tokens") or ""
    assert text, "the output is empty"
    # the step slider replays the place: after step 0, the start rule's first position
    expect(page.locator("#grammar-step input[type=range]")).to_be_enabled()
    number = page.locator("#grammar-step input[type=number]")
    number.fill("0")
    number.press("Enter")
    expect(page.locator("#grammar-place")).to_contain_text("in root expecting expr")
    page.screenshot(path=str(ROOT / ".tmp" / "grammar-typed.png"), full_page=True)


def test_an_example_runs_in_one_click(page, app_url: str) -> None:
    open_tab(page, app_url)
    page.locator("#grammar-examples button", has_text="arithmetic").click()
    expect(page.locator("#grammar textarea")).to_have_value(
        grammar_examples()["arithmetic"].grammar
    )
    expect(page.locator("#grammar-status")).to_contain_text("tokens", timeout=RUN_TIMEOUT)
    expect(page.locator("#rules svg g.cluster.current").first).to_be_attached()
