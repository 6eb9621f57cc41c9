"""Take the README's screenshots of the grammar tab from a running app.

    python app.py --port 7860 &
    python scripts/screenshot_grammar.py --url http://127.0.0.1:7860 --out static/grammar.png
    python scripts/screenshot_grammar.py --width 390 --out static/grammar-phone.png

The picture: an example grammar (nested JSON by default) run on the real model in one
click, then a step part-way through the run chosen by a click on
its row and Next pressed once, so the parser's place is a stack several rules deep: said
in words above the drawing, lit across the rules' boxes, the step's allowed set beside
it, its row and its token outlined, its point on the valid-mass chart. The desktop
picture is the tab from its examples to the chart; a phone's, from the output to the
step's place and the top of the drawing.
Needs Debian's chromium (no Playwright browser download).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.screenshot import SKIP_OFFERED, open_page  # noqa: E402  (one launch recipe)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:7860")
    parser.add_argument("--out", type=Path, default=ROOT / "static" / "grammar.png")
    parser.add_argument("--example", default="nested JSON", help="an example's button text")
    parser.add_argument("--at", type=float, default=0.45, help="the step shown, as a fraction")
    parser.add_argument("--width", type=int, default=1440, help="1440 desktop, 390 a phone")
    parser.add_argument(  # the sticky right column is one screen high and scrolls itself
        "--height", type=int, default=1300, help="a desktop's screen: the right column's height"
    )
    parser.add_argument("--timeout", type=float, default=600, help="seconds for the run")
    parser.add_argument(
        "--skip-shadow", action="store_true", help="skip the shadow run (a busy machine)"
    )
    args = parser.parse_args()

    with sync_playwright() as p:
        browser, page = open_page(p, args.width, args.height, args.timeout)
        phone = args.width < 600
        page.goto(args.url)
        page.wait_for_function(
            "() => (document.querySelector('#status')?.textContent || '').includes('Model:')"
        )
        page.get_by_role("tab", name="Grammar").click()
        page.wait_for_selector("#rules svg")
        started = time.monotonic()
        page.locator("#grammar-examples button", has_text=args.example).click()
        if args.skip_shadow:  # pressed as soon as it is offered (the run is over then)
            page.wait_for_function(f"() => ({SKIP_OFFERED.replace('#stop', '#grammar-stop')})()")
            page.evaluate(f"() => ({SKIP_OFFERED.replace('#stop', '#grammar-stop')})()?.click()")
        page.wait_for_function(  # the run, then its shadow run, over
            "() => { const s = document.querySelector('#grammar-status')?.textContent || '';"
            " return s.includes('Done') && !/Now the (unconstrained )?shadow run/.test(s); }",
            polling=1000,
        )
        page.wait_for_selector("#grammar-allowed .allowed-data", state="attached")
        status = (page.text_content("#grammar-status") or "").strip()
        output = page.eval_on_selector("#grammar-output .tokens", "e => e.textContent")
        print(f"run: {time.monotonic() - started:.1f} s; {status}")
        print(f"output: {output!r}")
        rows = page.locator("#grammar-steps tbody tr").count()
        chosen = max(round(rows * args.at) - 1, 0)
        page.locator(f"#grammar-steps tbody tr[data-step='{chosen}']").click()
        page.wait_for_selector(f"#grammar-steps tr.selected[data-step='{chosen}']")
        page.click("#grammar-stepper [data-stepper=next]")
        page.wait_for_selector(f"#grammar-steps tr.selected[data-step='{chosen + 1}']")
        page.wait_for_selector(f"#grammar-allowed .allowed-view[data-step='{chosen + 1}']")
        page.wait_for_timeout(1500)  # the chart's redraw
        print(f"place: {page.text_content('#grammar-place')!r}")
        page.mouse.move(0, 0)
        args.out.parent.mkdir(parents=True, exist_ok=True)

        def box(selector: str) -> dict:  # in the page's coordinates, not the window's
            return page.eval_on_selector(
                selector,
                "e => { const r = e.getBoundingClientRect();"
                " return {y: r.y + window.scrollY, height: r.height}; }",
            )

        if phone:  # the output, the shadow run, the doctor, the step and its place
            top = box("#grammar-output-head")
            bottom = box("#rules")
            height = min(bottom["y"] + 844 * 0.6, top["y"] + 844 * 4) - top["y"]
        else:  # from the top: the sticky right column beside the controls, not mid-page
            page.evaluate("window.scrollTo(0, 0)")
            page.wait_for_timeout(500)
            top = box("#grammar-intro")
            bottom = box("#grammar-chart")
            height = bottom["y"] + bottom["height"] + 16 - top["y"]
        clip = {"x": 0, "y": top["y"], "width": args.width, "height": height}
        page.screenshot(path=str(args.out), full_page=True, clip=clip, animations="disabled")
        browser.close()
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
