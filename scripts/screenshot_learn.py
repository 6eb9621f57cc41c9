"""Take the README's screenshot of the Learn tab from a running app (no model run).

    python app.py --port 7860 &
    python scripts/screenshot_learn.py --url http://127.0.0.1:7860 --out static/learn.png

The picture: ``([0-9]+)?\\.[0-9]+`` being minimised (the construction stepped to its
minimisation frame), "23.3x" walked to its dead character beside the transition table,
and seed 000's toy vocabulary two tokens in. From the tab's introduction to the toy.
Needs Debian's chromium (no Playwright browser download).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.screenshot import open_page  # noqa: E402  (one launch recipe)

PATTERN = r"([0-9]+)?\.[0-9]+"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:7860")
    parser.add_argument("--out", type=Path, default=ROOT / "static" / "learn.png")
    parser.add_argument("--width", type=int, default=1260)
    parser.add_argument("--frame", default="Minimisation", help="the construction frame shown")
    parser.add_argument("--timeout", type=float, default=300, help="seconds for each wait")
    args = parser.parse_args()

    with sync_playwright() as p:
        browser, page = open_page(p, args.width, 900, args.timeout)
        page.goto(args.url)
        page.wait_for_function(
            "() => (document.querySelector('#status')?.textContent || '').includes('Model:')"
        )
        page.get_by_role("tab", name="Learn").click()
        page.fill("#learn-regex textarea", PATTERN)
        page.wait_for_function(  # the construction redrawn for the new pattern
            "p => document.querySelector('#construction')?.textContent.includes(p)", arg=PATTERN
        )
        heading = "() => document.querySelector('#construction h3')?.textContent || ''"
        for _ in range(16):  # stepped to the frame asked for, by its heading
            shown = page.evaluate(heading)
            if args.frame in shown:
                break
            page.click("#learn-back" if "Minimal DFA" in shown else "#learn-next")
            page.wait_for_function(f"s => ({heading})() !== s", arg=shown)
            page.wait_for_timeout(300)  # one frame at a time: the server's answer settles
        page.fill("#walk textarea", "23.3x")
        page.wait_for_function(
            "() => document.querySelector('#walk-result')?.textContent.includes('23.3x')"
        )
        page.get_by_text("5. Toy vocabularies").click()
        for _ in range(2):  # two tokens in
            before = page.text_content("#toy")
            page.click("#toy-next")
            page.wait_for_function(
                "b => document.querySelector('#toy')?.textContent !== b", arg=before
            )
        page.wait_for_timeout(800)
        page.mouse.move(0, 0)
        top = page.eval_on_selector("#learn-intro", "e => e.getBoundingClientRect().top + scrollY")
        bottom = page.eval_on_selector("#toy", "e => e.getBoundingClientRect().bottom + scrollY")
        clip = {"x": 0, "y": top - 8, "width": args.width, "height": bottom - top + 24}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(args.out), full_page=True, clip=clip, animations="disabled")
        browser.close()
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
