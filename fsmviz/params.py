"""Every parameter a caller can set, checked in one place: its type, its range, and a
refusal that names the parameter, the value (shortened) and what is allowed.

The page, the API (``/trace``, ``/dfa``, ``/diagnose``, ``/schema``), the MCP tools, the
command line and ``GenerationOptions`` all check through here, so they agree with each other
and with the docs. It sits with the shared modules (``errors``, ``cache``) rather than in
``generation/`` because not every parameter is a generation's: the regex is the automaton's,
the whitespace the schema's, and every layer from ``generation`` up reads them.

What a value from JSON or a form may be, and what it may not:

* Whole numbers (``max_tokens``, ``seed``) are integers; ``64.0`` is 64, but ``1.5``,
  ``true``, ``"64"``, ``NaN``, ``Infinity`` and ``1e309`` (which JSON reads as infinity)
  are refused.
* Real numbers (``temperature``, ``top_p``, ``prob_limit``) are finite numbers in range;
  a bool is not a number.
* Flags (``chat``) are ``true`` or ``false`` only: ``"0"`` and ``1`` are refused, not
  guessed at.
* Texts (``prompt``, ``regex``) are strings. ``null`` as the regex is refused on every
  endpoint: an unconstrained run is the library's ``generate(model, None, prompt)``, never
  a missing argument.

>>> check_generation(max_tokens=64.0, temperature=0, chat=True)
{'max_tokens': 64, 'temperature': 0.0, 'chat': True}
>>> check_generation(max_tokens=True)
Traceback (most recent call last):
fsmviz.params.ParameterError: max_tokens must be a whole number from 1 to 1024; got true
>>> print(ParameterError("stop", "x" * 1_000_000, "eos or first"))
stop must be eos or first; got 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… (1,000,000 characters)
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from fsmviz.errors import FsmvizError, InputError

__all__ = [
    "GENERATION",
    "MAX_PROMPT_CHARS",
    "MAX_SEED",
    "MAX_TEMPERATURE",
    "MAX_TOKENS_LIMIT",
    "MAX_TOP_K",
    "Param",
    "ParameterError",
    "UnknownOptionError",
    "check_generation",
    "check_grammar_options",
    "choice",
    "flag",
    "integer",
    "number",
    "pattern",
    "shorten",
    "text",
]

MAX_TOKENS_LIMIT = 1024
"""The most tokens one generation may write: a few seconds on a CPU, and a trace the page
can draw step by step."""
MAX_TEMPERATURE = 2.0
"""Above 2 the bundled model's distribution is near uniform: noise, not a setting."""
MAX_SEED = 2**31 - 1
"""Seeds are 0 to 2**31 - 1: what a page's number box and every JSON reader hold exactly."""
MAX_TOP_K = 100_000
"""``top_k`` beyond the vocabulary is the same as off (0); the bound only refuses nonsense."""
MAX_PROMPT_CHARS = 4_000
"""The longest prompt, in characters: enough for a worked example or two."""
SHOWN = 40
"""Characters of a refused value a message shows."""


class ParameterError(InputError):
    """A parameter with the wrong type or out of range (an ``InputError``: an ``FsmvizError``
    and a ``ValueError``): ``.name``, ``.value`` (as given) and ``.allowed`` (what may be
    written instead, in words)."""

    def __init__(self, name: str, value: object, allowed: str, problem: str | None = None):
        self.name = name
        self.value = value
        self.allowed = allowed
        why = f", which {problem}" if problem else ""
        self.message = f"{name} must be {allowed}; got {shorten(value)}{why}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class UnknownOptionError(FsmvizError, TypeError):
    """An option no one knows (``check_generation(bogus=1)``): a ``TypeError``, as an
    unknown keyword argument is, and an ``FsmvizError`` like every error fsmviz raises."""


_REPR = reprlib.Repr()
_REPR.maxlevel = 2
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 4
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = SHOWN * 2


def shorten(value: object, limit: int = SHOWN) -> str:
    """``value`` as a message shows it: JSON's words for ``None``, bools and non-finite
    floats, a repr cut to about ``limit`` characters (its length said when it was cut).
    Never slow and never recursive, whatever the value: a list nested 100,000 deep is fine.

    >>> shorten(None), shorten(float("nan")), shorten(float("inf")), shorten([1, [2, [3]]])
    ('null', 'NaN', 'Infinity', '[1, [2, [...]]]')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}"[:-1] + f"… ({len(value):,} characters)"
    try:
        shown = _REPR.repr(value)
    except Exception:  # a value whose repr fails: its type is enough
        shown = f"<{type(value).__name__}>"
    return shown if len(shown) <= limit else shown[:limit] + "…"


def integer(name: str, value: object, lo: int, hi: int) -> int:
    """A whole number from ``lo`` to ``hi``; a float that is whole (``64.0``, as JSON and
    sliders may send) is taken as that integer.

    >>> integer("seed", 7.0, 0, 9)
    7
    >>> integer("seed", "7", 0, 9)
    Traceback (most recent call last):
    fsmviz.params.ParameterError: seed must be a whole number from 0 to 9; got '7'
    """
    allowed = f"a whole number from {lo} to {hi}"
    if isinstance(value, bool):
        raise ParameterError(name, value, allowed)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or not lo <= value <= hi:
        raise ParameterError(name, value, allowed)
    return value


def number(name: str, value: object, lo: float, hi: float, *, above: bool = False) -> float:
    """A finite number from ``lo`` to ``hi`` (with ``above``, greater than ``lo``).

    >>> number("top_p", 0, 0, 1, above=True)
    Traceback (most recent call last):
    fsmviz.params.ParameterError: top_p must be a number greater than 0 and at most 1; got 0
    """
    low = f"greater than {_num(lo)} and at most" if above else f"from {_num(lo)} to"
    allowed = f"a number {low} {_num(hi)}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParameterError(name, value, allowed)
    real = float(value) if isinstance(value, float) or abs(value) < 2**53 else math.inf
    if not math.isfinite(real) or real > hi or real < lo or (above and real == lo):
        raise ParameterError(name, value, allowed)
    return real


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def flag(name: str, value: object) -> bool:
    """``True`` or ``False``, nothing that merely looks like one (``"0"``, ``1``, ``null``).

    >>> flag("chat", "0")
    Traceback (most recent call last):
    fsmviz.params.ParameterError: chat must be true or false; got '0'
    """
    if not isinstance(value, bool):
        raise ParameterError(name, value, "true or false")
    return value


def choice(name: str, value: object, options: Iterable[str]) -> str:
    """One of ``options``.

    >>> choice("stop", "first", ("eos", "first"))
    'first'
    """
    options = tuple(options)
    if not isinstance(value, str) or value not in options:
        raise ParameterError(name, value, f"one of {', '.join(options)}")
    return value


def text(name: str, value: object, limit: int) -> str:
    """A string of at most ``limit`` characters that UTF-8 can write (no lone surrogate,
    ``"\\ud800"``, which JSON can carry but no tokenizer can encode).

    >>> try:
    ...     text("prompt", "x" * 5, 4)
    ... except ParameterError as error:
    ...     print(error)
    prompt must be text of at most 4 characters; got 'xxxxx', which is too long
    """
    allowed = f"text of at most {limit:,} characters"
    if not isinstance(value, str):
        raise ParameterError(name, value, allowed)
    if len(value) > limit:
        raise ParameterError(name, value, allowed, "is too long")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ParameterError(
            name,
            value,
            f"{allowed} (U+{ord(value[error.start]):04X} at position {error.start} is half "
            "of a surrogate pair, not a character)",
        ) from None
    return value


def pattern(value: object, name: str = "regex") -> str:
    """A regular expression, as text. ``null`` is refused here, on every endpoint alike:
    the API's regex is never optional (the library's ``pattern=None`` is how to run
    unconstrained). Its length and syntax are ``compile_regex``'s to check.

    >>> pattern(None)
    Traceback (most recent call last):
    fsmviz.params.ParameterError: regex must be a regular expression as text; got null
    """
    if not isinstance(value, str):
        raise ParameterError(name, value, "a regular expression as text")
    return value


@dataclass(frozen=True)
class Param:
    """One generation option: how it is checked, and why its bound is what it is (the
    README's "Limits" lists these)."""

    name: str
    check: Callable[[object], object]
    why: str


def _optional(check: Callable[[object], object]) -> Callable[[object], object]:
    return lambda value: None if value is None else check(value)


GENERATION: Mapping[str, Param] = {
    p.name: p
    for p in (
        Param(
            "max_tokens",
            lambda v: integer("max_tokens", v, 1, MAX_TOKENS_LIMIT),
            "a few seconds of CPU per run",
        ),
        Param(
            "temperature",
            lambda v: number("temperature", v, 0.0, MAX_TEMPERATURE),
            "0 is greedy; above 2 the distribution is noise",
        ),
        Param(
            "top_p",
            lambda v: number("top_p", v, 0.0, 1.0, above=True),
            "a probability mass, and an empty one samples nothing",
        ),
        Param("top_k", lambda v: integer("top_k", v, 0, MAX_TOP_K), "0 is off"),
        Param("seed", lambda v: integer("seed", v, 0, MAX_SEED), "held exactly by JSON"),
        Param("chat", lambda v: flag("chat", v), "a flag"),
        Param(
            "prob_limit",
            _optional(lambda v: number("prob_limit", v, 0.0, 1.0)),
            "a probability; null is off",
        ),
        Param("stop", lambda v: choice("stop", v, ("eos", "first")), "the two rules"),
        Param("overshoot", lambda v: flag("overshoot", v), "a flag"),
        Param("fast_forward", lambda v: flag("fast_forward", v), "a flag"),
        Param("safe_end", lambda v: flag("safe_end", v), "a flag"),
    )
}
"""The generation options this module checks, by name (``GenerationOptions`` checks each of
its fields named here)."""


def check_generation(**values: object) -> dict[str, object]:
    """The given generation options, each checked (``GENERATION``) and normalised
    (``64.0`` -> ``64``, ``0`` -> ``0.0`` for a real). An option not in ``GENERATION`` is a
    ``TypeError`` (``UnknownOptionError``), as an unknown keyword would be."""
    unknown = sorted(set(values) - set(GENERATION))
    if unknown:
        known = ", ".join(GENERATION)
        raise UnknownOptionError(
            f"unknown generation option(s): {', '.join(unknown)}; the options are {known}"
        )
    return {name: GENERATION[name].check(value) for name, value in values.items()}


def check_grammar_options(overshoot: bool) -> None:
    """A grammar run takes every generation option but ``overshoot``: that one reads a
    regex's automaton (which tokens run past a match), and a grammar run has none.

    >>> try:
    ...     check_grammar_options(overshoot=True)
    ... except ParameterError as error:
    ...     print(error.name, "must be", error.allowed)
    overshoot must be off for a grammar
    """
    if overshoot:
        raise ParameterError(
            "overshoot",
            True,
            "off for a grammar",
            "reads a regex's automaton (which tokens run past a match), and a grammar run has none",
        )
