"""Take the README's schema screenshot from a running app: a review schema used in the
main run.

    python app.py --port 7860 &
    python scripts/screenshot_schema.py --url http://127.0.0.1:7860 --out static/schema.png

The picture: a review schema whose ``reason`` has no ``maxLength``, typed into the JSON
Schema part and used ("Use this schema"): its regex in the Regex box, the run on the real
model with the DFA lit to the accepting state, the output as JSON that parses and
validates, and the schema's findings (``/properties/reason``) with their one-click fix.
The page from its top to the end of the schema part, 1440 px wide.
Needs Debian's chromium (no Playwright browser download).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.screenshot import SKIP_OFFERED, TRACKER, open_page  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {
        "sentiment": {"enum": ["positive", "negative"]},
        "reason": {"type": "string"},
    },
    "required": ["sentiment", "reason"],
}
PROMPT = (
    'Review: "The soup was cold and the waiter was rude." Classify this review as JSON, '
    "with the reason."
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:7860")
    parser.add_argument("--out", type=Path, default=ROOT / "static" / "schema.png")
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--timeout", type=float, default=600, help="seconds for the run")
    parser.add_argument(
        "--skip-shadow", action="store_true", help="skip the shadow run (a busy machine)"
    )
    args = parser.parse_args()

    with sync_playwright() as p:
        browser, page = open_page(p, 1440, 900, args.timeout)
        page.goto(args.url)
        page.wait_for_function(
            "() => (document.querySelector('#status')?.textContent || '').includes('Model:')"
            " && document.querySelector('#regex textarea')?.value"
        )
        page.get_by_text("Or a JSON Schema").first.click()
        page.fill("#schema textarea", json.dumps(SCHEMA, indent=1))
        page.click("#schema-use")
        page.wait_for_function(  # the schema's regex in the Regex box
            "() => (document.querySelector('#regex textarea')?.value || '').includes('sentiment')"
        )
        page.fill("#prompt textarea", PROMPT)
        box = page.locator("#max-tokens input[type=number]")
        box.fill(str(args.max_tokens))
        box.press("Enter")
        started = time.monotonic()
        page.click("#run")
        page.wait_for_selector("#dfa .lights", state="attached")  # the run is over
        if args.skip_shadow:  # as soon as it is offered: the doctor's checks come first
            page.wait_for_function(
                f"() => ({SKIP_OFFERED})()"
                f" || document.querySelector('{TRACKER}')?.classList.contains('hide')"
            )
            page.evaluate(f"() => ({SKIP_OFFERED})()?.click()")
        page.wait_for_function(
            f"() => document.querySelector('{TRACKER}')?.classList.contains('hide')"
        )
        print(f"run: {time.monotonic() - started:.1f} s; {page.text_content('#status')!r}")
        page.wait_for_timeout(1500)  # Plotly settles
        page.mouse.move(0, 0)
        page.evaluate("window.scrollTo(0, 0)")
        bottom = page.eval_on_selector(
            "#schema-findings", "e => e.getBoundingClientRect().bottom + scrollY"
        )
        clip = {"x": 0, "y": 0, "width": 1440, "height": bottom + 24}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(args.out), full_page=True, clip=clip, animations="disabled")
        browser.close()
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
