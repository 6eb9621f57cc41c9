"""Take the README's screenshots from a running app: the desktop page and a phone.

    python app.py --port 7860 &
    python scripts/screenshot.py --url http://127.0.0.1:7860 --out static/screenshot.png
    python scripts/screenshot.py --width 390 --out static/screenshot-phone.png

(``--start`` starts the app itself.) The picture tells seed 002's story: the email pattern,
the prompt as a sentence to continue (chat template off), 40 tokens. The model writes an
address, then rides `.I.I.I` because `.` is inside the last repeat, and the valid mass
collapses. The run is then stepped through: a step in the collapse chosen, then Next twice,
so the picture shows the page as an instrument: the drawing lit at that step, the step's
token and the model's candidates, its allowed set; on the left the output (the step's token
outlined), the shadow run and the doctor. Desktop: one 1440 x 900 screen, scrolled to the
output. A phone: two screens from the drawing down. The capture steps are
scripts/pagecapture.py's.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts import pagecapture as pc  # noqa: E402  (the shared capture steps)
from scripts.pagecapture import (  # noqa: E402, F401  (their old home, for older importers)
    ARGS,
    CHROMIUM,
    SHADOW_GOING,
    SKIP_OFFERED,
    TRACKER,
    open_page,
)

CASES = ROOT / "fsmviz" / "app" / "examples.json"


def main() -> None:
    parser = pc.parser(__doc__, "screenshot.png")
    parser.add_argument("--example", default="email", help="a seed regex by name")
    parser.add_argument("--max-tokens", type=int, default=40)
    args = parser.parse_args()

    cases = json.loads(CASES.read_text())
    pattern, prompt = cases["regexes"][args.example], cases["prompts"][args.example]

    with pc.captured_page(args, ready=pc.LOADED_WITH_REGEX) as page:
        page.fill("#regex textarea", pattern)
        page.fill("#prompt textarea", prompt)
        page.locator("#chat input[type=checkbox]").set_checked(False)
        pc.set_max_tokens(page, args.max_tokens)
        started = time.monotonic()
        page.click("#run")
        status = pc.wait_run_over(page, args.skip_shadow)
        if not status.startswith("Done"):
            sys.exit(f"the run did not finish: {status!r}")
        print(f"run: {time.monotonic() - started:.1f} s; {status}")
        print(f"output: {page.eval_on_selector('#output .tokens', 'e => e.textContent')!r}")

        # stepping through: a step in the collapse chosen, then Next twice (in the browser)
        last = page.locator("#steps tbody tr").count() - 1
        page.click(f"#steps tbody tr[data-step='{max(last - 6, 0)}']")
        for _ in range(2):
            page.click("[data-stepper=next]")
            page.wait_for_timeout(300)
        chosen = min(max(last - 6, 0) + 2, last)
        page.wait_for_selector(f"#allowed-tokens .allowed-view[data-step='{chosen}']")
        pc.settle(page)  # Plotly settles and the drawing follows
        if args.width < 600:  # a phone: two screens from the drawing down
            top = max(pc.box(page, "#dfa")["y"] - 8, 0)
            # scrolled there first: the stepper, stuck to the screen's top once a step is
            # chosen, is drawn in its place under the drawing, not left as a blank gap
            page.evaluate(f"window.scrollTo(0, {top})")
            page.wait_for_timeout(500)
            pc.capture(page, args.out, pc.clip(page, top, top + pc.PHONE_HEIGHT * 2))
        else:  # one screen, scrolled to the output: the sticky instrument beside it
            page.evaluate(f"window.scrollTo(0, {pc.box(page, '#output-head')['y'] - 12})")
            page.wait_for_timeout(500)
            pc.capture(page, args.out)


if __name__ == "__main__":
    main()
