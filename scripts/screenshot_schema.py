"""Take the README's schema screenshot from a running app: a review schema used in the
main run.

    python app.py --port 7860 &
    python scripts/screenshot_schema.py --url http://127.0.0.1:7860 --out static/schema.png

(``--start`` starts the app itself.) The picture: a review schema whose ``reason`` has no
``maxLength``, typed into the JSON Schema part and used ("Use this schema"): its regex in
the Regex box, the run on the real model with the DFA lit to the accepting state, the output
as JSON that parses and validates, and the schema's findings (``/properties/reason``) with
their one-click fix. The page from its top to the end of the schema part, 1440 px wide.
The capture steps are scripts/pagecapture.py's.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts import pagecapture as pc  # noqa: E402  (the shared capture steps)

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
    parser = pc.parser(__doc__, "schema.png")
    parser.add_argument("--max-tokens", type=int, default=24)
    args = parser.parse_args()

    with pc.captured_page(args, ready=pc.LOADED_WITH_REGEX) as page:
        page.get_by_text("Or a JSON Schema").first.click()
        page.fill("#schema textarea", json.dumps(SCHEMA, indent=1))
        page.click("#schema-use")
        page.wait_for_function(  # the schema's regex in the Regex box
            "() => (document.querySelector('#regex textarea')?.value || '').includes('sentiment')"
        )
        page.fill("#prompt textarea", PROMPT)
        pc.set_max_tokens(page, args.max_tokens)
        started = time.monotonic()
        page.click("#run")
        status = pc.wait_run_over(page, args.skip_shadow)
        print(f"run: {time.monotonic() - started:.1f} s; {status!r}")
        pc.settle(page)
        page.evaluate("window.scrollTo(0, 0)")
        findings = pc.box(page, "#schema-findings")
        pc.capture(page, args.out, pc.clip(page, 0, findings["y"] + findings["height"] + 24))


if __name__ == "__main__":
    main()
