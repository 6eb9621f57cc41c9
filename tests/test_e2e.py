"""End-to-end: the real app (``app.py`` with the bundled model) driven in headless Chromium.

One app process serves the whole session (conftest's ``app_server``: started on a free
port, killed with its process group at the end). Every test opens a fresh page, fills the
inputs itself, keeps ``max_tokens`` small and waits with generous timeouts: a run streams
the constrained generation, then the unconstrained shadow run, and on a busy 2-core machine
that can take a minute. Plotly's first draw blocks the page for ~0.7 s, so the tests look
at the final state of the page, never at individual streamed chunks.

Set ``FSMVIZ_E2E_URL=http://127.0.0.1:7870`` to run them against an app already running.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
import regex

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api")
Page = playwright_api.Page
expect = playwright_api.expect

from fsmviz import compile_regex  # noqa: E402
from scripts.pagecapture import ARGS as CHROMIUM_ARGS  # noqa: E402  (one launch recipe)
from scripts.pagecapture import HEADLESS_SHELL, POLL_MS, SKIP_OFFERED, TRACKER  # noqa: E402
from scripts.pagecapture import SHADOW_GOING as SHADOW_GOING_PATTERN  # noqa: E402

RUN_TIMEOUT = 240_000  # ms: one run = constrained + shadow generation on a busy CPU
UI_TIMEOUT = 60_000  # ms: a round trip through the queue (re-render, re-diagnose)
DFA_SVGS = "#dfa svg:not([data-testid=status-tracker] svg)"
"""Every svg in the drawing panel but Gradio's loader: the status tracker shows one (an
animated logo) over the panel while an event that writes it is pending, so for a moment,
or longer on a busy machine, ``#dfa svg`` counts two. The drawing itself is ``svg.fsm``."""
STATUS_TEXT = """() => { const s = document.querySelector('#status');
    if (!s) return '';
    const copy = s.cloneNode(true);
    copy.querySelectorAll('[data-testid=status-tracker]').forEach((t) => t.remove());
    return copy.textContent; }"""
"""The status line's own text, without the timer of a tracker shown there: the tracker's
timer ("0.8s") is text inside ``#status``, and a clean-clone run read "0.2s Done: …" after
the event had ended."""

EMAIL = r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+[a-zA-Z0-9]"
PHONE = r"[0-9]{3}-[0-9]{4}"
PHONE_PROMPT = "Give a phone number"

expect.set_options(timeout=UI_TIMEOUT)

XSS = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", '"><svg onload=alert(1)>']


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """Debian's chromium-headless-shell, never a downloaded browser (see DESIGN.md): half
    the full browser's CPU for a page load (``scripts.pagecapture.HEADLESS_SHELL``)."""
    return {
        **browser_type_launch_args,
        "executable_path": HEADLESS_SHELL,
        "args": CHROMIUM_ARGS,
    }


@pytest.fixture(scope="session")
def app_url(request: pytest.FixtureRequest, browser) -> str:
    """The app, ready (conftest's ``app_server``: its model loaded and a run answered;
    shared with the concurrency tests), once Chromium is known to be there. Every test
    waits for its own page to say the model is ready (``open_app``); a page loaded here
    only for that cost each worker one more page load (5-6 s of Chromium's CPU)."""
    if not os.environ.get("FSMVIZ_E2E_URL") and not Path(HEADLESS_SHELL).exists():
        pytest.skip(f"{HEADLESS_SHELL} is not installed")
    return request.getfixturevalue("app_server")


@pytest.fixture
def dialogs(page: Page) -> Iterator[list[str]]:
    """Every alert/confirm/prompt any page of this test's context opens (dismissed)."""
    seen: list[str] = []

    def record(dialog) -> None:
        seen.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.context.on("dialog", record)
    yield seen
    assert seen == [], f"a dialog fired: {seen}"


@pytest.fixture
def app(page: Page, app_url: str, dialogs: list[str]) -> Page:
    """A fresh page of the app, loaded and ready for input."""
    page.set_default_timeout(UI_TIMEOUT)
    open_app(page, app_url + "/")
    return page


# --------------------------------------------------------------------------- helpers


MODEL_READY = re.compile(r"^\s*(?!Loading|The model could not)\S")
"""The status line once the model is ready: "Model: …", or, where a link's run has already
started (``run=1``) or even finished on a quiet machine, that run's "Generating…" or
"Done: …"; never empty, "Loading …" or the model's failure."""


def wait_for_model(page: Page) -> None:
    """Wait until the page's status says the model is ready (``MODEL_READY``)."""
    expect(page.locator("#status")).to_contain_text(MODEL_READY, timeout=UI_TIMEOUT)


def open_app(page: Page, url: str) -> None:
    """Load ``url`` and wait until the page-load event is over (a permalink's values are in
    place) and the model is ready."""
    page.goto(url)
    expect(page.locator("body[data-restored=yes]")).to_have_count(1, timeout=UI_TIMEOUT)
    wait_for_model(page)


def type_regex(page: Page, pattern: str) -> None:
    page.fill("#regex textarea", pattern)


def set_inputs(page: Page, pattern: str, prompt: str, max_tokens: int, chat: bool) -> None:
    type_regex(page, pattern)
    page.fill("#prompt textarea", prompt)
    page.locator("#chat input[type=checkbox]").set_checked(chat)
    box = page.locator("#max-tokens input[type=number]")
    box.fill(str(max_tokens))
    box.press("Enter")
    expect(page.locator("#max-tokens input[type=range]")).to_have_value(str(max_tokens))


SHADOW_GOING = re.compile(SHADOW_GOING_PATTERN)
"""The status while the shadow run is announced or streams."""

TRACKER_DONE = """tracker => { const t = document.querySelector(tracker);
    return t && (t.classList.contains('hide') || t.querySelector('.error') !== null); }"""
"""Whether the run's event is over (Gradio's tracker hidden) or failed."""


def click_and_wait(
    page: Page, selector: str, timeout: float = RUN_TIMEOUT, shadow: bool = True
) -> None:
    """Click ``selector`` and wait until the event it starts has finished, as seen by the
    tracker Gradio keeps on ``#status`` (a run shows its progress there only:
    ``fsmviz.app.live.run_event``): shown while the event is pending or streaming, hidden at
    the end, showing ``Error`` if the handler failed. A MutationObserver set up before the
    click catches even a very short event. Without ``shadow``, the shadow run is skipped as
    soon as the page offers it (most tests look only at the constrained run: the shadow run
    would double their generation)."""
    page.evaluate(
        """tracker => {
            window.__e2eBusy = false;
            if (window.__e2eObserver) window.__e2eObserver.disconnect();
            const root = document.querySelector('#status');
            const check = () => {
                const t = document.querySelector(tracker);
                if (t && !t.classList.contains('hide')) window.__e2eBusy = true;
            };
            window.__e2eObserver = new MutationObserver(check);
            window.__e2eObserver.observe(root,
                {subtree: true, childList: true, attributes: true, attributeFilter: ['class']});
        }""",
        TRACKER,
    )
    page.click(selector)
    page.wait_for_function("() => window.__e2eBusy", timeout=timeout, polling=POLL_MS)
    if not shadow:
        page.wait_for_function(
            f"tracker => ({TRACKER_DONE})(tracker) || ({SKIP_OFFERED})() !== null",
            arg=TRACKER,
            timeout=timeout,
            polling=POLL_MS,
        )
        page.evaluate(f"() => ({SKIP_OFFERED})()?.click()")
    page.wait_for_function(TRACKER_DONE, arg=TRACKER, timeout=timeout, polling=POLL_MS)
    assert page.locator(f"{TRACKER} .error").count() == 0, (
        f"the event failed on the server: {page.text_content('#status')!r}"
    )


def run(
    page: Page,
    pattern: str,
    prompt: str,
    max_tokens: int = 12,
    chat: bool = True,
    shadow: bool = False,
) -> int:
    """Generate and wait for the whole event to finish (constrained run, the shadow run or
    its skip (``shadow``: see ``click_and_wait``), the step slider updated); return the
    number of steps from the status line."""
    set_inputs(page, pattern, prompt, max_tokens, chat)
    click_and_wait(page, "#run", shadow=shadow)
    # the event ends after the shadow run; the status says so once it is over
    expect(page.locator("#status")).not_to_contain_text(SHADOW_GOING, timeout=RUN_TIMEOUT)
    status = page.evaluate(STATUS_TEXT)
    match = re.fullmatch(r"Done: (\d+) tokens? in .*", status.strip())
    assert match, f"unexpected status after a run: {status!r}"
    assert page.locator("#output .tokens.live, #shadow .tokens.live").count() == 0
    return int(match.group(1))


def eventually(check, timeout: float = UI_TIMEOUT / 1000) -> None:
    """Poll ``check`` until it is true (for state the page reaches through the queue)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"still false after {timeout} s: {check}"
        time.sleep(0.2)


def output_text(page: Page, elem_id: str = "output") -> str:
    return page.eval_on_selector(f"#{elem_id} .tokens", "e => e.textContent")


def node_ids(page: Page, cls: str) -> set[int]:
    """DFA states whose SVG node carries ``cls`` (nodes are ``<g class="node state sN …">``)."""
    classes = page.eval_on_selector_all(
        f"#dfa svg .node.{cls}", "nodes => nodes.map(n => n.getAttribute('class'))"
    )
    ids = set()
    for c in classes:
        found = re.search(r"\bs(\d+)\b", c)
        assert found, f"a DFA node without a state class: {c!r}"
        ids.add(int(found.group(1)))
    return ids


def table_rows(page: Page) -> list[tuple[int, int, int]]:
    """(step, state before, state after) for every row of the step table."""
    rows = page.eval_on_selector_all(
        "#steps tbody tr",
        "rows => rows.map(r => [r.dataset.step, r.cells[0].textContent, r.cells[1].textContent])",
    )
    out = []
    for data_step, first, states in rows:
        assert data_step == first.strip(), (data_step, first)
        before, after = (int(s) for s in states.split("→"))
        out.append((int(data_step), before, after))
    return out


def assert_nothing_injected(page: Page) -> None:
    """No element that a payload could have planted exists anywhere on the page."""
    injected = page.evaluate(
        """() => ({
            imgX: document.querySelectorAll('img[src="x"], img[src$="/x"]').length,
            onerror: document.querySelectorAll('[onerror]').length,
            onload: document.querySelectorAll('[onload]').length,
            svgOnload: document.querySelectorAll('svg[onload]').length,
            alertScripts: [...document.scripts].filter(s => s.text.includes('alert(')).length,
            javascriptLinks: document.querySelectorAll('[href^="javascript:"]').length,
        })"""
    )
    assert injected == {
        "imgX": 0,
        "onerror": 0,
        "onload": 0,
        "svgOnload": 0,
        "alertScripts": 0,
        "javascriptLinks": 0,
    }, injected


# --------------------------------------------------------------------------- tests


# (a phone-number run's output, drawing, chart, table and an earlier step chosen: test_page.py,
# on its page after that run, ``ran``: a page load and a run fewer)


def test_payloads_a_one_token_run_bad_patterns_and_the_permalink_on_one_page(
    app: Page, dialogs: list[str]
) -> None:
    """Three scenarios on one page (once a page load each): payloads stay text, a one-token
    run and bad patterns after it, the link's round trip; each sets every input it runs
    with, and no dialog may fire in any."""
    payloads_in_the_regex_and_prompt_stay_text(app, dialogs)
    a_one_token_run_finishes_without_an_error(app)
    permalink_round_trip(app, dialogs)


def a_one_token_run_finishes_without_an_error(app: Page) -> None:
    # One step leaves the Step slider a single position (0..0), which Gradio refuses.
    n = run(app, PHONE, PHONE_PROMPT, max_tokens=1)
    assert n == 1
    # one token is singular (issue 14, B9; test_page's own one-token run until session 24)
    assert app.evaluate(STATUS_TEXT).strip().startswith("Done: 1 token in")
    expect(app.locator("#status")).to_contain_text("the token budget ran out")
    assert len(table_rows(app)) == 1
    assert regex.fullmatch(PHONE, output_text(app), partial=True)
    expect(app.locator("#step input[type=range]")).to_have_value("0")
    # on the same page (one page load fewer): bad patterns after a run
    a_bad_pattern_is_explained_and_the_app_keeps_working(app)


BAD_PATTERNS = [("(?=a)b", "lookahead", 0), ("[abc", "unterminated character set", 0)]


def a_bad_pattern_is_explained_and_the_app_keeps_working(app: Page) -> None:
    # both patterns on one page, one after the other, each after a run (of one token, then
    # of the first's good pattern): one page load for what were three
    for pattern, message, position in BAD_PATTERNS:
        type_regex(app, pattern)
        error = app.locator("#error .error-box")
        expect(error).to_contain_text(message)
        caret = app.locator("#error .error-box pre").text_content()
        assert caret.split("\n") == [pattern, " " * position + "^"]
        expect(app.locator("#error .error-box .hint")).not_to_be_empty()
        expect(app.locator(DFA_SVGS)).to_have_count(0)
        # running it anyway says so instead of failing
        click_and_wait(app, "#run")
        expect(app.locator("#status")).to_contain_text("Fix the pattern first")
        # then a good pattern clears the error and runs
        n = run(app, r"[0-9]{2}", "Two digits:", max_tokens=8)
        assert n >= 2
        expect(app.locator("#error .error-box")).to_have_count(0)
        assert regex.fullmatch(r"[0-9]{2}", output_text(app))


def payloads_in_the_regex_and_prompt_stay_text(app: Page, dialogs: list[str]) -> None:
    # Several payloads to an edit (an edit costs the page ~1 s of CPU; one per payload and
    # form made nine): each is still checked to stay text.
    literals = [regex.escape(payload, special_only=True) for payload in XSS]
    # escaped, the payloads are a literal pattern: it is compiled and drawn, and each is in
    # the drawing's title (shortened past 80 characters: two edits hold the three)
    for group in (literals[:2], literals[2:]):
        type_regex(app, "".join(group))
        expect(app.locator("#dfa .dfa-bar")).to_be_visible()
        expect(app.locator(DFA_SVGS)).to_have_count(1)
        for literal in group:
            expect(app.locator("#dfa svg.fsm")).to_contain_text(literal)
        assert_nothing_injected(app)
    # followed by an unclosed class they are an error whose caret line shows them verbatim
    broken = "".join(XSS) + "["
    type_regex(app, broken)
    expect(app.locator("#error .error-box pre")).to_contain_text(broken)
    assert app.text_content("#error .error-box pre").split("\n")[0] == broken
    assert_nothing_injected(app)
    # unescaped they still compile (`(1)` is a group) and are drawn, not interpreted
    type_regex(app, "".join(XSS))
    expect(app.locator(DFA_SVGS)).to_have_count(1)
    expect(app.locator("#error .error-box")).to_have_count(0)
    for payload in XSS:
        expect(app.locator("#dfa svg.fsm")).to_contain_text(payload)
    assert_nothing_injected(app)

    # the model is forced to write a payload: the output shows it as text (12 tokens; the
    # budget is the shadow run's too: 16, where 40 had it write 24 tokens more of prose)
    prompt = "Repeat exactly: " + " ".join(XSS)
    run(app, regex.escape(XSS[0], special_only=True), prompt, max_tokens=16, shadow=True)
    assert output_text(app) == XSS[0]
    assert app.locator("#output img, #shadow img, #steps img").count() == 0
    assert_nothing_injected(app)

    # markup-like token text from a free-form pattern
    run(app, r"<b>[a-z]{2}</b>", prompt, max_tokens=16)
    text = output_text(app)
    assert regex.fullmatch(r"<b>[a-z]{2}</b>", text), text
    assert app.locator("#output b, #shadow b, #steps td b, #dfa b").count() == 0
    assert "<" in app.text_content("#steps tbody")
    assert_nothing_injected(app)
    app.wait_for_timeout(500)  # let any late handler fire before the dialog check
    assert dialogs == []


def permalink_round_trip(app: Page, dialogs: list[str]) -> None:
    pattern, prompt = r"[0-9]{2}-[a-z]{2}", "Code & name: <x>"
    run(app, pattern, prompt, max_tokens=10)
    query = parse_qs(urlparse(app.url).query)
    assert query["regex"] == [pattern]
    assert query["prompt"] == [prompt]
    assert query["max_tokens"] == ["10"]
    # a chosen step is in the link too (test_page's test_the_link_follows_edits_and_restores_
    # _the_run: "Copy link" gives this same link)
    app.click("#steps tbody tr[data-step='2']")
    expect(app.locator("#steps tbody tr[data-step='2']")).to_have_class(re.compile(r"\bselected\b"))
    expect(app).to_have_url(re.compile(r"[?&]step=2\b"))
    assert parse_qs(urlparse(app.url).query)["run"] == ["1"]
    # what the other pages need of this one, read before it is closed (an idle open page
    # costs Chromium CPU while they load and run)
    link, text, base = app.url, output_text(app), app.url.split("?")[0]
    context = app.context
    app.close()

    other = context.new_page()
    other.set_default_timeout(UI_TIMEOUT)
    open_app(other, link)
    expect(other.locator("#regex textarea")).to_have_value(pattern)
    expect(other.locator("#prompt textarea")).to_have_value(prompt)
    expect(other.locator("#max-tokens input[type=number]")).to_have_value("10")
    # the link's pattern drawn (the first paint holds the default pattern's drawing)
    states = str(compile_regex(pattern).num_states)
    expect(other.locator("#dfa .dfa-view")).to_have_attribute("data-states", states)
    # the link's run is made again, at the link's step
    expect(other.locator("#steps tbody tr.selected")).to_have_attribute(
        "data-step", "2", timeout=RUN_TIMEOUT
    )
    expect(other.locator("#steps tbody tr.selected")).to_have_count(1)
    expect(other.locator("#dfa svg .node.current")).to_have_count(1)
    assert output_text(other) == text
    other.close()

    # a hostile link: values arrive as plain text, nothing runs
    hostile = context.new_page()
    hostile.set_default_timeout(UI_TIMEOUT)
    open_app(hostile, base + "?regex=<img src=x onerror=alert(1)>&prompt=javascript:alert(1)")
    expect(hostile.locator("#regex textarea")).to_have_value("<img src=x onerror=alert(1)>")
    expect(hostile.locator("#prompt textarea")).to_have_value("javascript:alert(1)")
    expect(hostile.locator(DFA_SVGS)).to_have_count(1)
    assert_nothing_injected(hostile)
    # the same with the query properly encoded
    encoded = urlencode({"regex": XSS[2], "prompt": XSS[1]})
    open_app(hostile, base + "?" + encoded)
    expect(hostile.locator("#regex textarea")).to_have_value(XSS[2])
    expect(hostile.locator("#prompt textarea")).to_have_value(XSS[1])
    assert_nothing_injected(hostile)
    hostile.wait_for_timeout(500)
    assert dialogs == []


def test_what_is_typed_before_the_page_has_loaded_is_kept(page: Page, app_url: str) -> None:
    # The page-load event used to set every input, to a link's values or the defaults: a
    # visitor typing while it was on its way got the default pattern back, and Gradio's
    # page fired the box's change event for seconds (150 events), one value after another.
    page.set_default_timeout(UI_TIMEOUT)
    joins: list[str] = []
    page.on("request", lambda r: joins.append(r.url) if "queue/join" in r.url else None)
    page.goto(app_url + "/")
    page.fill("#regex textarea", "[0-9]{2}")  # at once: the page-load event is on its way
    expect(page.locator("body[data-restored=yes]")).to_have_count(1)
    expect(page.locator("#diagnosis")).to_contain_text("No problems found")
    page.wait_for_timeout(2000)  # time for late events to show
    expect(page.locator("#regex textarea")).to_have_value("[0-9]{2}")
    expect(page.locator("#diagnosis")).to_contain_text("No problems found")
    states = str(compile_regex("[0-9]{2}").num_states)
    expect(page.locator("#dfa .dfa-view")).to_have_attribute("data-states", states)
    assert len(joins) < 20, f"{len(joins)} events for one page load and one edit"


# (a plain visit's default pattern, drawn and diagnosed, and the doctor's findings marking
# their states: test_page.py, on its page just loaded, ``fresh``)


def test_api_for_gradio_client_users(app_url: str) -> None:
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    client = Client(app_url + "/", verbose=False)
    trace = client.predict("[0-9]{2}", "Two digits:", 8, 0.0, 0, api_name="/trace")
    assert regex.fullmatch("[0-9]{2}", trace["text"])
    assert isinstance(trace["steps"], list) and trace["steps"]
    assert trace["matched"] is True
    assert trace["stop_reason"] == "accepted"
    assert "".join(s["text"] for s in trace["steps"] if not s["is_eos"]) == trace["text"]

    dfa = client.predict("[0-9]{2}", api_name="/dfa")
    assert dfa["states"] == [0, 1, 2]
    assert dfa["accepting"] == [2]
    assert len(dfa["transitions"]) == 2
    assert dfa["dot"].startswith("digraph")

    with pytest.raises(AppError, match="lookahead"):
        client.predict("(?=a)b", "x", 4, 0.0, 0, api_name="/trace")
    with pytest.raises(AppError, match="unterminated character set"):
        client.predict("[abc", api_name="/dfa")
