# ruff: noqa: F811  (the fixtures imported from test_e2e are used as arguments)
"""The page chooses the model, in Chromium (issue 43 point 3): ``app.py --model spm=FOLDER``
offers a tiny random-weight model over Llama 2's 32k SentencePiece vocabulary beside the
bundled SmolLM2 in the ``backend`` menu; a visitor picks it, generates, and the page says
whose run it is ("Done on spm: ...") and holds that model's tokens (the run's trace.json:
the model's name, every token id spelled by *its* tokenizer). One app and one page load for
the module (the shared app offers no second model); the unit tests of the same choice are
tests/test_model_menu.py's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urljoin

import pytest
import regex
from test_e2e import (  # noqa: F401  (fixtures used by name)
    RUN_TIMEOUT,
    SHADOW_GOING,
    STATUS_TEXT,
    UI_TIMEOUT,
    Page,
    browser_type_launch_args,
    click_and_wait,
    expect,
    open_app,
    output_text,
    set_inputs,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

NAME = "spm"
PATTERN = r"[a-z]{2,5}( [0-9]{1,2})?"


@pytest.fixture(scope="module")
def menu_app(tmp_path_factory):
    """The real app (bundled model) offering ``NAME``: a tiny Llama-2-vocabulary model
    saved as a folder; its URL and the folder."""
    import vocabs
    from appserver import serve_app

    from scripts.pagecapture import HEADLESS_SHELL

    why = vocabs.missing()
    if why:
        pytest.skip(why)
    if not Path(HEADLESS_SHELL).exists():
        pytest.skip(f"{HEADLESS_SHELL} is not installed")
    folder = vocabs.model_folder("llama-spm", tmp_path_factory.mktemp("models") / NAME)
    for url in serve_app("menu-app", args=("--model", f"{NAME}={folder}")):
        yield url, folder


def test_a_picked_model_writes_the_run_in_its_own_tokens_and_the_page_names_it(
    menu_app, browser
) -> None:
    from transformers import AutoTokenizer

    url, folder = menu_app
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.set_default_timeout(UI_TIMEOUT)
    try:
        open_app(page, url + "/")
        menu = page.locator("#backend input")
        expect(menu).to_have_value("bundled model")  # the app's own model comes first
        menu.click()
        page.locator("ul[role=listbox] li", has_text=NAME).first.click()
        expect(menu).to_have_value(NAME)
        set_inputs(page, PATTERN, "Word:", 6, True)
        click_and_wait(page, "#run", shadow=False)
        expect(page.locator("#status")).not_to_contain_text(SHADOW_GOING, timeout=RUN_TIMEOUT)
        status = page.evaluate(STATUS_TEXT).strip()
        done = re.fullmatch(rf"Done on {NAME}: (\d+) tokens? in .*", status)
        assert done, f"the status does not name the chosen model: {status!r}"
        text = output_text(page)
        # the run's trace, as the page offers it: written by the chosen model, in its tokens
        if not page.locator("#downloads").is_visible():
            page.get_by_text("Downloads: the trace as JSON and CSV, a regex").click()
        link = page.locator("#downloads a[href*='trace.json']").first
        expect(link).to_have_count(1)
        trace = json.loads(page.request.get(urljoin(url + "/", link.get_attribute("href"))).text())
    finally:
        page.close()
    assert trace["model"] == str(folder) and trace["text"] == text
    assert len(trace["steps"]) == int(done.group(1))
    assert regex.fullmatch(PATTERN, text) or trace["stop_reason"] == "max_tokens", trace
    pieces = AutoTokenizer.from_pretrained(folder).convert_ids_to_tokens(
        [step["token_id"] for step in trace["steps"]]
    )  # each id spells, in the chosen model's tokenizer, the bytes the page shows
    shown = [bytes(step["token_bytes"]) for step in trace["steps"]]
    assert [spelled(piece) for piece in pieces] == shown


def spelled(piece: str) -> bytes:
    """A SentencePiece token's bytes: ``▁`` a space, ``<0x0A>`` the byte fallback's byte.

    >>> spelled("▁ab"), spelled("<0x38>")
    (b' ab', b'8')
    """
    fallback = re.fullmatch(r"<0x([0-9A-F]{2})>", piece)
    return bytes([int(fallback.group(1), 16)]) if fallback else piece.replace("▁", " ").encode()
