"""Apply & run: a doctor's fix put into the page's inputs, and the run it is compared with.

A finding may carry a fix the page can apply as it is: a rewritten pattern
(``Finding.suggestion``), settings (``Finding.settings``, e.g. the chat template on), or
both. Its "Apply & run" button holds the fix as JSON (``fix_json``); a click hands that
text to the server, which reads it back checking every value, since it came from the
browser (``read_fix``), puts it into the inputs (``Fix.applied``) and runs. The last run is
the "before" when it ran the inputs on the page (``same_run``); otherwise those are run
first, so that the two runs differ only by the fix.

>>> fix = Fix(pattern="[a-z]{1,20}")
>>> read_fix(fix_json(fix)) == fix
True
>>> fix.applied(Inputs("[a-z]+", "Name a colour", 12, 0.0, 0, False, 0.0)).pattern
'[a-z]{1,20}'
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from fsmviz.automaton.syntax import MAX_PATTERN_LENGTH
from fsmviz.diagnose import Finding
from fsmviz.diagnose.checks import fix_key, needs_check
from fsmviz.generation.trace import GenerationOptions, Trace

__all__ = [
    "Fix", "Inputs", "check_html", "fix_json", "fix_of", "offered", "read_fix", "same_run",
]  # fmt: skip


@dataclass(frozen=True)
class Inputs:
    """The Generate tab's inputs for one run, as the page holds them."""

    pattern: str
    prompt: str
    max_tokens: int
    temperature: float
    seed: int
    chat: bool
    prob_limit: float
    top_k: int = 0
    top_p: float = 1.0
    stop: str = "eos"
    overshoot: bool = False
    """The decoding box's options (``decoding_controls``), defaults as it starts."""


@dataclass(frozen=True)
class Fix:
    """What Apply & run changes: the pattern, the chat template, or both (None: unchanged).
    The chat template is the one setting findings suggest and the page has an input for."""

    pattern: str | None = None
    chat: bool | None = None

    def applied(self, inputs: Inputs) -> Inputs:
        """``inputs`` with this fix put in."""
        return replace(
            inputs,
            pattern=inputs.pattern if self.pattern is None else self.pattern,
            chat=inputs.chat if self.chat is None else self.chat,
        )


def fix_of(finding: Finding) -> Fix | None:
    """The fix a finding offers, or None when it has nothing the page can apply."""
    chat = dict(finding.settings).get("chat")
    fix = Fix(finding.suggestion, chat if isinstance(chat, bool) else None)
    return None if fix == Fix() else fix


def offered(finding: Finding, among: Sequence[Finding] = ()) -> Fix | None:
    """The fix the page offers (an "Apply & run" button): a finding's fix, except that a
    fix for what a run did is offered only once it has been re-run on the same prompt and
    seed and made the finding smaller (``Finding.check``, ``fsmviz.diagnose.checks``).
    The same holds for a pattern's finding that shares its fix with such a run finding
    ``among`` the others (the run's loop and the repeat it rode carry one bound).

    >>> from fsmviz.diagnose.finding import FixCheck
    >>> loop = Finding("loop", "error", "…", suggestion="a{1,9}")
    >>> offered(loop) is None                     # not checked yet
    True
    >>> offered(replace(loop, check=FixCheck("steps going round a loop", 40, 0, True)))
    Fix(pattern='a{1,9}', chat=None)
    >>> offered(replace(loop, check=FixCheck("steps going round a loop", 40, 40, False))) is None
    True
    """
    fix = fix_of(finding)
    if fix is None or finding.check is not None:
        return fix if finding.check is None or finding.check.helps else None
    key = fix_key(finding)
    waits = needs_check(finding) or any(needs_check(f) and fix_key(f) == key for f in among)
    return None if waits else fix


def check_html(finding: Finding, fix_html: str | None = None) -> str:
    """What the page says of a run fix's check. With ``fix_html`` (the fix as shown), for a
    fix not offered: not checked yet, or checked and no better (with the numbers). Without,
    for an offered fix: the numbers that earned it its button ("" for a pattern's fix,
    which needs no run).

    >>> from fsmviz.diagnose.finding import FixCheck
    >>> loop = Finding("loop", "error", "…", suggestion="a{1,9}")
    >>> check_html(loop, "<code>a{1,9}</code>")[:40]
    'Not yet checked: <code>a{1,9}</code>. A '
    >>> check_html(replace(loop, check=FixCheck("steps in a loop", 40, 0, True)))[21:]
    'Checked on the same prompt and seed: steps in a loop: 40 → 0.</div>'
    """
    check = finding.check
    if fix_html is None:
        if check is None:
            return ""
        return (
            '<div class="checked">Checked on the same prompt and seed: '
            f"{html.escape(check.said)}.</div>"
        )
    if check is None:
        return (
            f"Not yet checked: {fix_html}. A fix for what a run did is offered once the doctor "
            "has re-run it on the same prompt and seed and seen it help (after the run)."
        )
    return (
        f"Checked, no better: {fix_html} on the same prompt and seed gave "
        f"{html.escape(check.said)}, so it is not offered."
    )


def fix_json(fix: Fix) -> str:
    """The fix as the button carries it: ``{"regex": …, "chat": …}``, unchanged parts left out."""
    data = {"regex": fix.pattern, "chat": fix.chat}
    return json.dumps({k: v for k, v in data.items() if v is not None}, ensure_ascii=False)


def read_fix(text: str) -> Fix | None:
    """A fix back from the browser (``fix_json``'s form; other keys, such as the click's
    ``"n"`` that makes each click a change, are ignored); None for anything else.

    >>> read_fix('{"chat": true, "n": 17}')
    Fix(pattern=None, chat=True)
    >>> read_fix('{"regex": 3}') is None
    True
    """
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pattern, chat = data.get("regex"), data.get("chat")
    fits = isinstance(pattern, str) and 0 < len(pattern) <= MAX_PATTERN_LENGTH
    if pattern is not None and not fits:
        return None
    if chat is not None and not isinstance(chat, bool):
        return None
    fix = Fix(pattern, chat)
    return None if fix == Fix() else fix


PAGE_OPTIONS = (
    "max_tokens", "temperature", "seed", "chat", "prob_limit",
    "top_k", "top_p", "stop", "overshoot",
)  # fmt: skip
"""The generation options the page sets (the others are the page's fixed choices)."""


def same_run(trace: Trace | None, pattern: str, prompt: str, options: GenerationOptions) -> bool:
    """Whether ``trace`` is a run of these inputs: the pattern, the prompt and every option
    the page sets are the same."""
    if trace is None or trace.options is None:
        return False
    return (
        trace.pattern == pattern
        and trace.prompt == prompt
        and all(trace.options[name] == options[name] for name in PAGE_OPTIONS)
    )
