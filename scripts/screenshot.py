"""Take the README's screenshots from a running app: the desktop page and a phone.

    python app.py --port 7860 &
    python scripts/screenshot.py --url http://127.0.0.1:7860 --out static/screenshot.png
    python scripts/screenshot.py --width 390 --out static/screenshot-phone.png

The picture tells seed 002's story: the email pattern, the prompt as a sentence to continue
(chat template off), 40 tokens. The model writes an address, then rides `.I.I.I` because
`.` is inside the last repeat, and the valid mass collapses. The run is then stepped
through: a step in the collapse chosen, then Next twice, so the picture shows the page as
an instrument: the drawing lit at that step, the step's token and the model's candidates,
its allowed set; on the left the output (the step's token outlined), the shadow run and the
doctor. Desktop: one 1440 x 900 screen, scrolled to the output. A phone: two screens from
the drawing down. Needs Debian's chromium (no Playwright browser download).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "fsmviz" / "app" / "examples.json"
CHROMIUM = "/usr/bin/chromium"
ARGS = [  # also the browser tests' launch flags (tests/test_e2e.py)
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TRACKER = "#status [data-testid=status-tracker]"
"""Gradio's tracker of the running event: a run shows its progress on the status line
(``fsmviz.app.live.run_event``), hidden once the event is over."""
SHADOW_GOING = r"Now the (unconstrained )?shadow run"
"""The status while the shadow run is announced or streams (a skipped one's status ends
"The shadow run was skipped.": no match)."""
SKIP_OFFERED = """() => {
    const stop = document.querySelector('#stop');
    return stop && stop.offsetParent && stop.textContent.includes('Skip shadow run') ? stop : null;
}"""
"""The "Skip shadow run" button if the page shows it now, else null. Checked and clicked in
one step in the page, so a shadow run that ends in between is no error."""


def open_page(playwright, width: int, height: int, timeout_s: float):
    """Debian's chromium with the tests' flags, and one page ``width`` wide: a phone
    (under 600 px) is 844 px high at twice the pixels, a desktop ``height`` high. Every
    wait on the page may take ``timeout_s``. Returns (browser, page)."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    phone = width < 600
    page = browser.new_page(
        viewport={"width": width, "height": 844 if phone else height},
        device_scale_factor=2 if phone else 1,
    )
    page.set_default_timeout(timeout_s * 1000)
    return browser, page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:7860")
    parser.add_argument("--out", type=Path, default=ROOT / "static" / "screenshot.png")
    parser.add_argument("--example", default="email", help="a seed regex by name")
    parser.add_argument("--max-tokens", type=int, default=40)
    parser.add_argument("--width", type=int, default=1440, help="1440 desktop, 390 a phone")
    parser.add_argument("--timeout", type=float, default=600, help="seconds for the run")
    parser.add_argument(
        "--skip-shadow", action="store_true", help="skip the shadow run (a busy machine)"
    )
    args = parser.parse_args()

    cases = json.loads(CASES.read_text())
    pattern, prompt = cases["regexes"][args.example], cases["prompts"][args.example]

    with sync_playwright() as p:
        browser, page = open_page(p, args.width, 900, args.timeout)
        phone = args.width < 600
        page.goto(args.url)
        # the page-load event fills the inputs; wait for it before typing
        page.wait_for_function(
            "() => (document.querySelector('#status')?.textContent || '').includes('Model:')"
            " && document.querySelector('#regex textarea')?.value"
        )
        page.fill("#regex textarea", pattern)
        page.fill("#prompt textarea", prompt)
        page.locator("#chat input[type=checkbox]").set_checked(False)
        box = page.locator("#max-tokens input[type=number]")
        box.fill(str(args.max_tokens))
        box.press("Enter")

        started = time.monotonic()
        page.click("#run")
        page.wait_for_selector("#dfa .lights", state="attached")  # the run is over
        if args.skip_shadow:  # unless a short shadow run is over already
            page.evaluate(f"() => ({SKIP_OFFERED})()?.click()")
        page.wait_for_function(
            f"() => document.querySelector('{TRACKER}')?.classList.contains('hide')"
        )
        page.wait_for_function(
            "going => !new RegExp(going).test(document.querySelector('#status')?.textContent"
            " || '')",
            arg=SHADOW_GOING,
        )
        status = page.text_content("#status") or ""
        if not status.strip().startswith("Done"):
            sys.exit(f"the run did not finish: {status.strip()!r}")
        print(f"run: {time.monotonic() - started:.1f} s; {status.strip()}")
        print(f"output: {page.eval_on_selector('#output .tokens', 'e => e.textContent')!r}")

        # stepping through: a step in the collapse chosen, then Next twice (in the browser)
        last = page.locator("#steps tbody tr").count() - 1
        page.click(f"#steps tbody tr[data-step='{max(last - 6, 0)}']")
        for _ in range(2):
            page.click("[data-stepper=next]")
            page.wait_for_timeout(300)
        chosen = min(max(last - 6, 0) + 2, last)
        page.wait_for_selector(f"#allowed-tokens .allowed-view[data-step='{chosen}']")
        page.wait_for_timeout(1500)  # let Plotly settle and the drawing follow
        page.mouse.move(0, 0)  # no hover label or tooltip in the picture
        args.out.parent.mkdir(parents=True, exist_ok=True)
        if phone:  # two screens from the drawing down
            top = page.eval_on_selector("#dfa", "e => e.getBoundingClientRect().top + scrollY")
            # scrolled there first: the stepper, stuck to the screen's top once a step is
            # chosen, is drawn in its place under the drawing, not left as a blank gap
            page.evaluate(f"window.scrollTo(0, {max(top - 8, 0)})")
            page.wait_for_timeout(500)
            clip = {"x": 0, "y": max(top - 8, 0), "width": args.width, "height": 844 * 2}
            page.screenshot(path=str(args.out), full_page=True, clip=clip, animations="disabled")
        else:  # one screen, scrolled to the output: the sticky instrument beside it
            page.evaluate(
                "() => window.scrollTo(0, document.querySelector('#output-head')"
                ".getBoundingClientRect().top + scrollY - 12)"
            )
            page.wait_for_timeout(500)
            page.screenshot(path=str(args.out), animations="disabled")
        browser.close()
    size = args.out.stat().st_size
    print(f"wrote {args.out} ({size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
