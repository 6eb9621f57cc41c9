"""Take the README's screenshot of the Learn tab from a running app (no model run).

    python app.py --port 7860 &
    python scripts/screenshot_learn.py --url http://127.0.0.1:7860 --out static/learn.png

(``--start`` starts the app itself.) The picture: ``([0-9]+)?\\.[0-9]+`` being minimised
(the construction stepped to its minimisation frame), "23.3x" walked to its dead character
beside the transition table, and seed 000's toy vocabulary two tokens in. From the tab's
introduction to the toy. The capture steps are scripts/pagecapture.py's.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts import pagecapture as pc  # noqa: E402  (the shared capture steps)

PATTERN = r"([0-9]+)?\.[0-9]+"


def main() -> None:
    parser = pc.parser(__doc__, "learn.png", width=1260, timeout=300, run=False)
    parser.add_argument("--frame", default="Minimisation", help="the construction frame shown")
    args = parser.parse_args()

    with pc.captured_page(args) as page:
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
        pc.settle(page, 800)
        top, toy = pc.box(page, "#learn-intro"), pc.box(page, "#toy")
        bottom = toy["y"] + toy["height"]
        pc.capture(page, args.out, pc.clip(page, top["y"] - 8, bottom + 16))


if __name__ == "__main__":
    main()
