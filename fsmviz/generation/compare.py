"""Ways to get text that matches a pattern, run side by side on one prompt and seed.

The seeds argue for masking against the alternatives, and contrast masking rules among
themselves. Here each is one run of ``generate`` with the same prompt, seed and budget:

* ``constrained`` — today's masking: every token keeps the text a prefix of a match, the
  run ends with EOS where the pattern accepts (or where nothing may follow);
* ``overshoot`` — seed 002's smarter selection: a token whose start completes a match may
  be taken, and the output is cut there (``GenerationOptions.overshoot``);
* ``first`` — ReLLM's rule: stop at the first full match (``stop="first"``);
* ``extract`` — seed 000's "parse the chatty answer": the model writes freely, then
  ``regex.search`` takes the first match out of its text;
* ``retries`` — the guardrails loop: write freely, keep the answer if the whole (stripped)
  text fully matches, else ask again, up to ``retries`` more times (from the second try on
  with the next seed and, if the run was greedy, temperature ``RETRY_TEMPERATURE``, or every
  try would be the same).

Each gives a ``Decoding``: what the caller gets back, whether it fully matches, the
tokens and seconds it cost (all tries together), and the steps for the valid-mass curve.

>>> [way.name for way in WAYS]
['constrained', 'overshoot', 'first', 'extract', 'retries']
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

import regex

from fsmviz.generation.generate import full_match, generate
from fsmviz.generation.models import Model
from fsmviz.generation.trace import GenerationOptions, Step, Trace

__all__ = ["WAYS", "Decoding", "Way", "compare", "extract"]

RETRY_TEMPERATURE = 0.7
MAX_RETRIES = 8
SEARCH_TIMEOUT = 0.25


@dataclass(frozen=True)
class Way:
    name: str
    label: str
    masked: bool


WAYS = (
    Way("constrained", "constrained (masking, EOS where it accepts)", True),
    Way("overshoot", "overshoot and cut (seed 002)", True),
    Way("first", "first full match (ReLLM)", True),
    Way("extract", "unconstrained, then re.search", False),
    Way("retries", "unconstrained, ask again until it matches", False),
)
_BY_NAME = {way.name: way for way in WAYS}


@dataclass(frozen=True)
class Decoding:
    """One way's result. ``output`` is what the caller gets (the extracted match for
    ``extract``; "" when nothing could be extracted); ``raw`` what the model wrote (the
    last try's, for ``retries``); ``matched`` whether ``output`` fully matches;
    ``steps`` the masked run's steps (empty for the free runs: their valid mass is not
    the pattern's)."""

    way: Way
    output: str
    matched: bool
    tokens: int
    seconds: float
    stop_reason: str
    raw: str
    attempts: int = 1
    steps: tuple[Step, ...] = ()
    note: str = ""


def extract(pattern: str, text: str) -> str | None:
    """The first match of ``pattern`` in ``text`` (``regex.search`` with ASCII classes, as
    the engine reads ``\\d``), or None.

    >>> extract(r"[0-9]+\\.[0-9]+", "The first digits of pi are 3.1415926535.")
    '3.1415926535'
    """
    try:
        found = regex.search(pattern, text, flags=regex.ASCII, timeout=SEARCH_TIMEOUT)
    except (TimeoutError, regex.error):
        return None
    return found.group() if found else None


def compare(
    model: Model,
    pattern: str,
    prompt: str,
    options: GenerationOptions | None = None,
    *,
    ways: Iterable[str] = tuple(_BY_NAME),
    retries: int = 3,
) -> Iterator[Decoding]:
    """Run ``prompt`` under each of ``ways`` (names from ``WAYS``) with the same
    ``options`` (their ``stop`` and ``overshoot`` are set per way), yielding each
    ``Decoding`` as it is done. The free run is shared by ``extract`` and the first try
    of ``retries``. Raises ``ValueError`` for an unknown way or too many retries."""
    opts = options or GenerationOptions()
    chosen = [_way(name) for name in ways]
    if not 0 <= retries <= MAX_RETRIES:
        raise ValueError(f"retries must be between 0 and {MAX_RETRIES}")
    free: tuple[Trace, float] | None = None
    for way in chosen:
        if way.masked:
            yield _masked(model, pattern, prompt, opts, way)
            continue
        if free is None:
            started = time.perf_counter()
            trace = generate(model, None, prompt, replace(opts, stop="eos", overshoot=False))
            free = (trace, time.perf_counter() - started)
        if way.name == "extract":
            yield _extracted(pattern, way, *free)
        else:
            yield _retried(model, pattern, prompt, opts, way, retries, *free)


def _way(name: str) -> Way:
    way = _BY_NAME.get(name)
    if way is None:
        raise ValueError(f"unknown decoding {name!r}: choose from {', '.join(_BY_NAME)}")
    return way


def _masked(model: Model, pattern: str, prompt: str, opts: GenerationOptions, way: Way):
    settings = {
        "constrained": {"stop": "eos", "overshoot": False},
        "overshoot": {"stop": "eos", "overshoot": True},
        "first": {"stop": "first", "overshoot": False},
    }[way.name]
    started = time.perf_counter()
    trace = generate(model, pattern, prompt, replace(opts, **settings))
    cut = trace.steps[-1].cut if trace.steps else ""
    return Decoding(
        way,
        trace.text,
        trace.matched,
        len(trace.steps),
        time.perf_counter() - started,
        trace.stop_reason,
        trace.text + cut,
        steps=trace.steps,
        note=f"cut {cut!r}" if cut else "",
    )


def _extracted(pattern: str, way: Way, trace: Trace, seconds: float) -> Decoding:
    found = extract(pattern, trace.text)
    return Decoding(
        way,
        found or "",
        found is not None and full_match(pattern, found, False),
        len(trace.steps),
        seconds,
        trace.stop_reason,
        trace.text,
        note="" if found is not None else "no match in the text",
    )


def _retried(
    model: Model,
    pattern: str,
    prompt: str,
    opts: GenerationOptions,
    way: Way,
    retries: int,
    first: Trace,
    seconds: float,
) -> Decoding:
    trace, tokens, attempts = first, len(first.steps), 1
    again = replace(opts, stop="eos", overshoot=False)
    if again.temperature == 0:
        again = replace(again, temperature=RETRY_TEMPERATURE)
    while not full_match(pattern, trace.text.strip(), False) and attempts <= retries:
        started = time.perf_counter()
        trace = generate(model, None, prompt, replace(again, seed=opts.seed + attempts))
        seconds += time.perf_counter() - started
        tokens += len(trace.steps)
        attempts += 1
    ok = full_match(pattern, trace.text.strip(), False)
    return Decoding(
        way,
        trace.text.strip() if ok else "",
        ok,
        tokens,
        seconds,
        trace.stop_reason,
        trace.text,
        attempts=attempts,
        note=f"{attempts} tries" + ("" if ok else ", none matched"),
    )
