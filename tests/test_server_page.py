"""The page with other models to choose, one app for both kinds (``app.py --server
vllm=URL --model spm=FOLDER``: one app start fewer than an app each).

- A configured server (the session's real vLLM server): the ``backend`` menu offers it by
  name, a run on it lights the DFA, fills the steps, the chart, the doctor and the allowed
  sets from the replayed ``Step`` records, and the ``engine-check`` panel shows the
  per-step verdict. Neither the page nor its link ever shows the server's URL.
- A local model (issue 43 point 3): a tiny random-weight model over Llama 2's 32k
  SentencePiece vocabulary beside the bundled SmolLM2; a visitor picks it, generates, and
  the page says whose run it is ("Done on spm: ...") and holds that model's tokens (the
  run's trace.json: the model's name, every token id spelled by *its* tokenizer). The unit
  tests of the same choice are tests/test_model_menu.py's.
- The menu changed while a schema's use is on its way (a race made certain as in
  test_page_races.py): the findings are the new schema's, in the chosen model's tokens.

Without servers or models (the shared app) the menu is not there (test_page.py's plain
visit). Without vLLM here the app offers the model alone and the server's tests skip (the
``vllm_server`` fixture says why); without the vocabularies, the other way round.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlparse

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
    run,
    set_inputs,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

NAME = "vllm"
ANSWER = "(yes|no)"
ASK = "Is the sky blue? Answer yes or no."


MODEL = "spm"
PATTERN = r"[a-z]{2,5}( [0-9]{1,2})?"


@pytest.fixture(scope="module")
def offering_app(request: pytest.FixtureRequest, tmp_path_factory):
    """The real app offering the session's vLLM server as ``NAME`` and a tiny
    Llama-2-vocabulary model saved as a folder as ``MODEL``: its URL, the server's URL and
    the folder (None for what this machine lacks: its tests skip, saying why). One app per
    module (conftest groups these tests on one worker)."""
    import vocabs
    from appserver import serve_app

    from scripts.pagecapture import HEADLESS_SHELL

    if not Path(HEADLESS_SHELL).exists():
        pytest.skip(f"{HEADLESS_SHELL} is not installed")
    try:
        served = request.getfixturevalue("vllm_server")
        args: tuple[str, ...] = ("--server", f"{NAME}={served}")
    except pytest.skip.Exception as why:
        served, args, no_server = None, (), str(why)
    folder = None
    if not vocabs.missing():
        folder = vocabs.model_folder("llama-spm", tmp_path_factory.mktemp("models") / MODEL)
        args += ("--model", f"{MODEL}={folder}")
    if served is None and folder is None:
        pytest.skip(f"{no_server}; {vocabs.missing()}")
    for url in serve_app("offering-app", args=args):
        yield url, served, folder


@pytest.fixture
def server_app(offering_app) -> tuple[str, str]:
    """The app's URL and the server's; skips where vLLM is not here."""
    url, served, _ = offering_app
    if served is None:
        pytest.skip("no vLLM server here (`make vllm`)")
    return url, served


@pytest.fixture
def menu_app(offering_app) -> tuple[str, Path]:
    """The app's URL and the offered model's folder; skips without the vocabularies."""
    import vocabs

    url, _, folder = offering_app
    if folder is None:
        pytest.skip(vocabs.missing() or "no model folder")
    return url, folder


@contextmanager
def opened(browser, **args) -> Iterator[Page]:
    """A new page (``browser.new_page(**args)``) with the suite's UI timeout, closed
    however the test ends."""
    page = browser.new_page(**args)
    page.set_default_timeout(UI_TIMEOUT)
    try:
        yield page
    finally:
        page.close()


def choose_backend(page: Page, name: str) -> None:
    page.click("#backend input")
    page.locator("ul[role=listbox] li", has_text=name).first.click()
    expect(page.locator("#backend input")).to_have_value(name)


def test_a_run_on_the_configured_server_is_drawn_stepped_charted_and_checked(
    server_app, browser
) -> None:
    url, served = server_app
    with opened(browser, viewport={"width": 1440, "height": 1000}) as page:
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


def test_a_link_restores_a_configured_server_and_ignores_anything_else(server_app, browser):
    url, served = server_app
    with opened(browser) as page:
        open_app(page, f"{url}/?backend={NAME}")
        expect(page.locator("#backend input")).to_have_value(NAME)
        open_app(page, f"{url}/?backend={served}")  # a URL is not a name: the menu stays
        expect(page.locator("#backend input")).to_have_value(re.compile("^bundled model$"))


def test_a_picked_model_writes_the_run_in_its_own_tokens_and_the_page_names_it(
    menu_app, browser
) -> None:
    from transformers import AutoTokenizer

    url, folder = menu_app
    with opened(browser, viewport={"width": 1440, "height": 1000}) as page:
        open_app(page, url + "/")
        menu = page.locator("#backend input")
        expect(menu).to_have_value("bundled model")  # the app's own model comes first
        menu.click()
        page.locator("ul[role=listbox] li", has_text=MODEL).first.click()
        expect(menu).to_have_value(MODEL)
        set_inputs(page, PATTERN, "Word:", 6, True)
        click_and_wait(page, "#run", shadow=False)
        expect(page.locator("#status")).not_to_contain_text(SHADOW_GOING, timeout=RUN_TIMEOUT)
        status = page.evaluate(STATUS_TEXT).strip()
        done = re.fullmatch(rf"Done on {MODEL}: (\d+) tokens? in .*", status)
        assert done, f"the status does not name the chosen model: {status!r}"
        text = output_text(page)
        # the run's trace, as the page offers it: written by the chosen model, in its tokens
        if not page.locator("#downloads").is_visible():
            page.get_by_text("Downloads: the trace as JSON and CSV, a regex").click()
        link = page.locator("#downloads a[href*='trace.json']").first
        expect(link).to_have_count(1)
        trace = json.loads(page.request.get(urljoin(url + "/", link.get_attribute("href"))).text())
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


CONTROL = json.dumps({"type": "object", "properties": {"a": {"type": "string",
                      "pattern": "^x\u0004$"}}, "required": ["a"]})  # fmt: skip
"""A schema with a dead end in the bundled model's tokens, none in ``MODEL``'s
(test_model_menu.py)."""


def test_another_model_while_a_schema_is_used_diagnoses_that_schema_in_its_tokens(
    menu_app, browser
) -> None:
    """A schema in use, then another used and the model menu changed while that use is on
    its way (a race made certain as in test_page_races.py: the use's request held). As
    events apart, the menu's diagnosis (sent with the schema in use then) came first and
    the use (sent with the bundled model) last: the findings in the bundled model's tokens
    beside the menu's other model; or the other way round, the replaced schema's
    findings."""
    from test_page_races import Held, settled
    from test_schema_e2e import fill_schema, open_part

    from fsmviz.schema.convert import regex_from_schema

    url, _ = menu_app
    with opened(browser) as page:
        open_part(page, url)
        loose = json.dumps({"type": "object", "properties": {"q": {"type": "string"}}})
        fill_schema(page, loose)
        page.click("#schema-use")
        expect(page.locator("#regex textarea")).to_have_value(regex_from_schema(loose, "space"))
        fill_schema(page, CONTROL)
        held = Held(page, use=lambda body: (body.get("data") or [])[:3] == [CONTROL, "space", 32])
        try:
            page.click("#schema-use")
            held.wait("use")  # sent with the bundled model
            choose_backend(page, MODEL)
            page.wait_for_timeout(3000)  # the menu's own diagnosis, where it is an event apart
            held.release("use")
            regex_box = page.locator("#regex textarea")
            expect(regex_box).to_have_value(regex_from_schema(CONTROL, "space"))
            kinds = """() => [...document.querySelectorAll('#schema-findings [data-kind]')]
                .map((f) => f.dataset.kind).sort().join(' ')"""
            found = settled(page, "#schema-findings", kinds)
        finally:
            held.close()
    assert "dead_end" not in found and "unbounded_string" not in found, found
