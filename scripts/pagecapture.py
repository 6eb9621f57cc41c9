"""The capture steps the README's screenshot scripts share (scripts/screenshot*.py).

A script parses its arguments with ``parser`` (``--url`` or ``--start``, ``--out``,
``--width``, ``--timeout``, ``--skip-shadow``), opens the page with ``captured_page``
(the app started on a free port if ``--start``, Debian's chromium with the browser tests'
flags, a desktop 1440 px or a phone 390 x 844 at twice the pixels, the page loaded), does
its own clicks, waits for a run with ``wait_run_over``, then ``settle`` and ``capture``:

    args = pagecapture.parser(__doc__, "learn.png").parse_args()
    with pagecapture.captured_page(args) as page:
        ...  # the script's own steps
        pagecapture.settle(page)
        pagecapture.capture(page, args.out, clip)

Needs Debian's chromium (no Playwright browser download). The browser tests launch
Debian's chromium-headless-shell (``HEADLESS_SHELL``) with the same flags (``ARGS``); the
pictures and the page benchmark take the full browser (``CHROMIUM``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
"""Debian's full browser (headless here in Chromium's new headless mode): the README's
pictures are taken in it, as a reader's browser draws the page."""
HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell"
"""Debian's ``chromium-headless-shell`` (the same version as ``chromium``: Chromium's old
headless mode, no browser window behind the page), for the browser tests: a launch and
two page loads of the app cost it 5.3-5.4 CPU-s where the full browser took 8.6-10.9
(3 rounds side by side, loaded 2-core machine). It draws the same layout, its text hinted
a little differently, so the pictures stay on ``CHROMIUM``. The binary itself, not the
/usr/bin wrapper (a shell that stays its parent)."""
ARGS = [  # also the browser tests' launch flags (tests/test_e2e.py)
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = 1440
"""A desktop screen's width in px (the README's pictures)."""
PHONE, PHONE_HEIGHT = 390, 844
"""A phone's screen in px (drawn at twice the pixels): any width under 600 is a phone."""
TRACKER = "#status [data-testid=status-tracker]"
"""Gradio's tracker of the running event: a run shows its progress on the status line
(``fsmviz.app.live.run_event``), hidden once the event is over."""
POLL_MS = 100
"""How often a wait checks its condition (Playwright's default: every animation frame,
which was ~11 % of a streaming page's CPU in bench/page_cost.py's profile); the
browser tests' waits too. Every condition waited on stays true once reached."""
SHADOW_GOING = r"Now the (unconstrained )?shadow run"
"""The status while the shadow run is announced or streams (a skipped one's status ends
"The shadow run was skipped.": no match)."""
LOADED = "() => (document.querySelector('#status')?.textContent || '').includes('Model:')"
"""The page-load event is over (it names the model on the status line)."""
LOADED_WITH_REGEX = LOADED + " && document.querySelector('#regex textarea')?.value"
"""Over, and the inputs filled: wait for this before typing into them."""


def skip_offered(stop: str = "#stop") -> str:
    """A JS function: the "Skip shadow run" button (``stop``, a selector) if the page shows
    it now, else null. Checked and clicked in one step in the page, so a shadow run that
    ends in between is no error. A button still offered by the run before the one just
    started (``data-stale``: static/app.js ignores a click on it) is not offered."""
    return f"""() => {{
    const stop = document.querySelector('{stop}');
    return stop && stop.offsetParent && !stop.dataset.stale
        && stop.textContent.includes('Skip shadow run') ? stop : null;
}}"""


SKIP_OFFERED = skip_offered()
"""``skip_offered()`` for the Generate tab's button."""


def parser(
    doc: str, out: str, width: int = DESKTOP, timeout: float = 600, run: bool = True
) -> argparse.ArgumentParser:
    """The arguments every screenshot script takes; ``doc``'s first line is the
    description, ``out`` the picture's name under static/, ``run`` whether the picture
    holds a model run (then ``--skip-shadow`` too). A script adds its own."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:7860", help="a running app")
    parser.add_argument(
        "--start", action="store_true", help="start the app (not --url), stop it after"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "static" / out, help="the picture")
    parser.add_argument(
        "--width", type=int, default=width, help=f"{DESKTOP} a desktop, {PHONE} a phone"
    )
    parser.add_argument("--timeout", type=float, default=timeout, help="seconds for each wait")
    if run:
        parser.add_argument(
            "--skip-shadow", action="store_true", help="skip the shadow run (a busy machine)"
        )
    return parser


def open_page(playwright, width: int, height: int, timeout_s: float):
    """Debian's chromium with the tests' flags, and one page ``width`` wide: a phone
    (under 600 px) is 844 px high at twice the pixels, a desktop ``height`` high. Every
    wait on the page may take ``timeout_s``. Returns (browser, page)."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    phone = width < 600
    page = browser.new_page(
        viewport={"width": width, "height": PHONE_HEIGHT if phone else height},
        device_scale_factor=2 if phone else 1,
    )
    page.set_default_timeout(timeout_s * 1000)
    return browser, page


def _started_app(stack: ExitStack) -> str:
    """The app (bundled model) started on a free port by the tests' ``AppServer``, ready
    (model loaded); stopped when ``stack`` closes. Its log is .tmp/screenshot-app.log."""
    sys.path.insert(0, str(ROOT / "tests"))
    from appserver import AppServer

    return stack.enter_context(AppServer(ROOT / ".tmp" / "screenshot-app.log"))


@contextmanager
def captured_page(args: argparse.Namespace, height: int = 900, ready: str = LOADED) -> Iterator:
    """The page at ``args.url`` (or an app started for it with ``args.start``), ``args.width``
    wide (``height`` high on a desktop), once ``ready`` (a JS condition) holds. The browser
    is closed and a started app stopped on the way out."""
    from playwright.sync_api import sync_playwright

    with ExitStack() as stack:
        url = _started_app(stack) if args.start else args.url
        playwright = stack.enter_context(sync_playwright())
        browser, page = open_page(playwright, args.width, height, args.timeout)
        stack.callback(browser.close)
        page.goto(url)
        page.wait_for_function(ready)
        yield page


def set_max_tokens(page, max_tokens: int) -> None:
    """The Generate tab's max-tokens box set (Enter commits it)."""
    box = page.locator("#max-tokens input[type=number]")
    box.fill(str(max_tokens))
    box.press("Enter")


def wait_run_over(page, skip_shadow: bool) -> str:
    """After a click on Generate: the run over (the drawing lit), its shadow run skipped as
    soon as it is offered (after the doctor's checks) if ``skip_shadow``, else over too.
    Returns the status line."""
    page.wait_for_selector("#dfa .lights", state="attached")
    hidden = f"document.querySelector('{TRACKER}')?.classList.contains('hide')"
    if skip_shadow:
        page.wait_for_function(f"() => ({SKIP_OFFERED})() || {hidden}", polling=POLL_MS)
        page.evaluate(f"() => ({SKIP_OFFERED})()?.click()")
    page.wait_for_function(f"() => {hidden}", polling=POLL_MS)
    page.wait_for_function(
        "going => !new RegExp(going).test(document.querySelector('#status')?.textContent || '')",
        arg=SHADOW_GOING,
        polling=POLL_MS,
    )
    return (page.text_content("#status") or "").strip()


def settle(page, ms: int = 1500) -> None:
    """Let Plotly and the drawing settle, the mouse moved away (no hover label)."""
    page.wait_for_timeout(ms)
    page.mouse.move(0, 0)


def box(page, selector: str) -> dict:
    """``selector``'s top and height in the page's coordinates (not the window's):
    ``{"y": …, "height": …}``."""
    return page.eval_on_selector(
        selector,
        "e => { const r = e.getBoundingClientRect();"
        " return {y: r.y + window.scrollY, height: r.height}; }",
    )


def clip(page, top: float, bottom: float) -> dict:
    """The page's full width from ``top`` to ``bottom`` (page coordinates)."""
    width = page.viewport_size["width"]
    return {"x": 0, "y": max(top, 0), "width": width, "height": bottom - max(top, 0)}


def capture(page, out: Path, clip: dict | None = None) -> None:
    """The picture to ``out``: ``clip`` of the whole page, or the screen as scrolled."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if clip is None:
        page.screenshot(path=str(out), animations="disabled")
    else:
        page.screenshot(path=str(out), full_page=True, clip=clip, animations="disabled")
    print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KB)")
