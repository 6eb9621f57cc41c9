# ruff: noqa: F811  (the fixtures imported from test_e2e are used as arguments)
"""The page with a server configured (``app.py --server vllm=URL``, the session's real
vLLM server): the ``backend`` menu offers it by name, a run on it lights the DFA, fills
the steps, the chart, the doctor and the allowed sets from the replayed ``Step`` records,
and the ``engine-check`` panel shows the per-step verdict. Neither the page nor its link
ever shows the server's URL. Without servers (the shared app) the menu is not there.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import regex
from test_e2e import (  # noqa: F401  (fixtures used by name)
    CHROMIUM_ARGS,
    UI_TIMEOUT,
    Page,
    app,
    app_url,
    browser_type_launch_args,
    dialogs,
    expect,
    open_app,
    output_text,
    run,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

NAME = "vllm"
ANSWER = "(yes|no)"
ASK = "Is the sky blue? Answer yes or no."


@pytest.fixture(scope="module")
def server_app(vllm_server):
    """The real app with the real vLLM server configured as ``vllm`` (``--server``), its
    URL and the server's; one per module (conftest groups these tests on one worker)."""
    from appserver import serve_app

    from scripts.pagecapture import HEADLESS_SHELL

    if not Path(HEADLESS_SHELL).exists():
        pytest.skip(f"{HEADLESS_SHELL} is not installed")
    for url in serve_app("server-app", args=("--server", f"{NAME}={vllm_server}")):
        yield url, vllm_server


def choose_backend(page: Page, name: str) -> None:
    page.click("#backend input")
    page.locator("ul[role=listbox] li", has_text=name).first.click()
    expect(page.locator("#backend input")).to_have_value(name)


def test_a_run_on_the_configured_server_is_drawn_stepped_charted_and_checked(
    server_app, browser
) -> None:
    url, served = server_app
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.set_default_timeout(UI_TIMEOUT)
    try:
        open_app(page, url + "/")
        expect(page.locator("#backend")).to_be_visible()
        choose_backend(page, NAME)
        n = run(page, ANSWER, ASK, max_tokens=8)
        text = output_text(page)
        assert regex.fullmatch(ANSWER, text), text
        # the engine check: one row per step the server wrote, each agreeing
        check = page.locator("#engine-check")
        expect(check).to_contain_text(f"Engine check: {NAME}")
        expect(check.locator("tbody tr")).to_have_count(n)
        expect(check.locator("tbody tr.agrees")).to_have_count(n)
        expect(check).to_contain_text(f"All {n} steps agree with the exact automaton")
        # everything downstream reads the replayed steps: table, lit drawing, chart, doctor
        expect(page.locator("#steps tbody tr")).to_have_count(n)
        expect(page.locator("#dfa .current")).not_to_have_count(0)
        expect(page.locator("#valid-mass .js-plotly-plot")).to_have_count(1)
        page.click("#steps tbody tr[data-step='0']")  # stepping: the first step's set
        first = page.locator("#allowed-tokens .allowed-view[data-step='0']")
        expect(first).to_have_count(1)
        expect(first).to_contain_text("yes")  # either answer was allowed there
        assert page.text_content("#diagnosis").strip()
        # the server is named, never addressed: not on the page, not in the link
        host = urlparse(served).netloc
        assert host not in page.text_content("body")
        assert "The server (SmolLM2-135M-Instruct at server 'vllm')" in page.text_content("#status")
        link = page.evaluate("location.search")
        assert parse_qs(link.lstrip("?")).get("backend") == [NAME] and host not in link
        # the Grammar and Compare tabs offer the same servers in menus of their own
        for tab, menu in (("Grammar", "#grammar-backend"), ("Compare", "#compare-backend")):
            page.get_by_role("tab", name=tab).click()
            expect(page.locator(menu)).to_be_visible()
            page.click(f"{menu} input")
            expect(page.locator("ul[role=listbox] li", has_text=NAME)).to_have_count(1)
            page.keyboard.press("Escape")
    finally:
        page.close()


def test_a_link_restores_a_configured_server_and_ignores_anything_else(server_app, browser):
    url, served = server_app
    page = browser.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    try:
        open_app(page, f"{url}/?backend={NAME}")
        expect(page.locator("#backend input")).to_have_value(NAME)
        open_app(page, f"{url}/?backend={served}")  # a URL is not a name: the menu stays
        expect(page.locator("#backend input")).to_have_value(re.compile("^bundled model$"))
    finally:
        page.close()


def test_without_servers_the_page_offers_no_model_menu(app: Page) -> None:
    expect(app.locator("#regex textarea")).to_be_visible()
    expect(app.locator("#backend")).to_be_hidden()
    expect(app.locator("#engine-check")).to_be_hidden()
