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

import json
from dataclasses import dataclass, replace

from fsmviz.automaton.syntax import MAX_PATTERN_LENGTH
from fsmviz.diagnose import Finding
from fsmviz.generation.trace import GenerationOptions, Trace

__all__ = ["Fix", "Inputs", "fix_json", "fix_of", "read_fix", "same_run"]


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
