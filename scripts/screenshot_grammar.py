"""Take the README's screenshots of the grammar tab from a running app.

    python app.py --port 7860 &
    python scripts/screenshot_grammar.py --url http://127.0.0.1:7860 --out static/grammar.png
    python scripts/screenshot_grammar.py --width 390 --out static/grammar-phone.png

(``--start`` starts the app itself.) The picture: an example grammar (nested JSON by
default) run on the real model in one click, then a step part-way through the run chosen by
a click on its row and Next pressed once, so the parser's place is a stack several rules
deep: said in words above the drawing, lit across the rules' boxes, the step's allowed set
beside it, its row and its token outlined, its point on the valid-mass chart. The desktop
picture is the tab from its examples to the chart; a phone's, from the output to the step's
place and the top of the drawing. The capture steps are scripts/pagecapture.py's.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts import pagecapture as pc  # noqa: E402  (the shared capture steps)

SKIP = pc.skip_offered("#grammar-stop")


def main() -> None:
    parser = pc.parser(__doc__, "grammar.png")
    parser.add_argument("--example", default="nested JSON", help="an example's button text")
    parser.add_argument("--at", type=float, default=0.45, help="the step shown, as a fraction")
    parser.add_argument(  # the sticky right column is one screen high and scrolls itself
        "--height", type=int, default=1300, help="a desktop's screen: the right column's height"
    )
    args = parser.parse_args()

    with pc.captured_page(args, height=args.height) as page:
        page.get_by_role("tab", name="Grammar").click()
        page.wait_for_selector("#rules svg")
        started = time.monotonic()
        page.locator("#grammar-examples button", has_text=args.example).click()
        if args.skip_shadow:  # pressed as soon as it is offered (the run is over then)
            page.wait_for_function(f"() => ({SKIP})()")
            page.evaluate(f"() => ({SKIP})()?.click()")
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
        pc.settle(page)  # the chart's redraw
        print(f"place: {page.text_content('#grammar-place')!r}")
        if args.width < 600:  # the output, the shadow run, the doctor, the step and its place
            top = pc.box(page, "#grammar-output-head")["y"]
            rules = pc.box(page, "#rules")["y"]
            bottom = min(rules + pc.PHONE_HEIGHT * 0.6, top + pc.PHONE_HEIGHT * 4)
        else:  # from the top: the sticky right column beside the controls, not mid-page
            page.evaluate("window.scrollTo(0, 0)")
            page.wait_for_timeout(500)
            top = pc.box(page, "#grammar-intro")["y"]
            chart = pc.box(page, "#grammar-chart")
            bottom = chart["y"] + chart["height"] + 16
        pc.capture(page, args.out, pc.clip(page, top, bottom))


if __name__ == "__main__":
    main()
