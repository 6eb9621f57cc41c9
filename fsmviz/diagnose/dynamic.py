"""Findings from a run: what the trace of one generation shows went wrong.

Three things are read off the recorded steps. Where the *valid mass* (the model's own
probability of all allowed tokens) collapsed, the pattern forced text the model did not
want: what did it want instead, and why was that forbidden (``valid_mass_collapse``)?
Where the run circled one cycle of the token graph writing the same few things, it was
riding an unbounded repeat (``loop``, seed 002's ``.I.I.I``). And how did it end: cut off by
``max_tokens`` (``truncation``), stopped by ``prob_limit``, or stuck (``dead_end``)?
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from fsmviz.automaton.graph import UNREACHABLE
from fsmviz.diagnose.case import Case
from fsmviz.diagnose.finding import Finding
from fsmviz.diagnose.text import frag, percent, plural, show
from fsmviz.generation.trace import Candidate, Step, Trace, drawn_path, pieces


def dynamic_findings(
    case: Case, trace: Trace, threshold: float, max_tokens: int | None
) -> list[Finding]:
    steps = list(trace.steps)
    texts = _texts(steps)
    loops = _loops(case, trace, steps, texts)
    chat = trace.options is not None and trace.options.chat
    return (
        _collapses(case, steps, texts, threshold, chat)
        + loops
        + _ending(case, trace, max_tokens, loops)
    )


def _texts(steps: list[Step]) -> list[str]:
    """The characters each step completes (``trace.pieces``: a token that splits a
    character adds nothing, the one that finishes it adds the whole character)."""
    if all(step.token_bytes or step.is_eos for step in steps):
        return pieces(steps)
    return ["" if step.is_eos else step.text for step in steps]  # a trace without bytes


def _token_words(steps: list[Step], texts: list[str], i: int) -> str:
    r"""How a message names the token step ``i`` wrote: its text in backquotes or, when the
    token is not whole UTF-8, its bytes and the characters it completes and begins (in the
    drawn DFA's characters, as the step table shows them).

    >>> steps = [Step(0, "", 0, 9, 1, 1.0, (), token_bytes=b) for b in (b"\xe5", b"\xa4", b"\xa7")]
    >>> [_token_words(steps, pieces(steps), i) for i in range(3)]
    ['bytes `e5` that begin `大`', 'bytes `a4` that continue `大`', 'bytes `a7` that complete `大`']
    """
    step = steps[i]
    if step.is_eos:
        return "the end of text"
    try:
        step.token_bytes.decode("utf-8")
    except UnicodeDecodeError:
        words = [f"bytes `{' '.join(f'{b:02x}' for b in step.token_bytes)}`"]
        if texts[i]:
            words.append(f"that complete `{show(texts[i], 20)}`")
        inside = _ends_inside(steps, texts, i)
        begun = next((t[0] for t in texts[i + 1 :] if t), "") if inside else ""
        if begun:  # a token of continuation bytes only is in the middle of its character
            verb = "continue" if step.token_bytes[0] & 0xC0 == 0x80 and not texts[i] else "begin"
            words.append(f"{'and' if texts[i] else 'that'} {verb} `{show(begun)}`")
        return " ".join(words)
    return f"`{show(texts[i], 20)}`" if texts[i] else "nothing"


def _ends_inside(steps: list[Step], texts: list[str], i: int) -> bool:
    """Step ``i`` leaves a character unfinished: the output so far has more bytes than the
    characters completed so far spell (the run's output is valid UTF-8)."""
    written = sum(len(step.token_bytes) for step in steps[: i + 1])
    return written > sum(len(text.encode()) for text in texts[: i + 1])


def _step_number(step: Step, position: int) -> int:
    return step.index if step.index else position


def _drawn_states(case: Case, steps: Iterable[Step]) -> list[int]:
    """The states before and after each step, leaving out those inside a character."""
    return [
        s
        for step in steps
        for s in (step.state_before, step.state_after)
        if 0 <= s < case.dfa.num_states
    ]


# --- valid mass collapses -----------------------------------------------------------------


def _collapses(
    case: Case, steps: list[Step], texts: list[str], threshold: float, chat: bool
) -> list[Finding]:
    """One warning per run of consecutive steps below ``threshold`` (the first five runs),
    and a note listing the rest. ``chat``: the run had the chat template on."""
    runs: list[list[int]] = []
    for i, s in enumerate(steps):
        if not s.is_eos and not math.isnan(s.valid_mass) and s.valid_mass < threshold:
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
    found = [_collapse(case, steps, texts, run, chat) for run in runs[:5]]
    rest = runs[5:]
    if rest:
        numbers = [_step_number(steps[i], i) for r in rest for i in r]
        found.append(
            Finding(
                "valid_mass_collapse",
                "info",
                f"The valid mass also fell below {percent(threshold)} at "
                f"{plural(len(numbers), 'more step')}: {', '.join(map(str, numbers[:12]))}"
                f"{'…' if len(numbers) > 12 else ''}.",
                steps=tuple(numbers),
            )
        )
    return found


CHAT_ON: tuple[tuple[str, bool]] = (("chat", True),)
"""The settings fix for a run in completion mode that stalls on its first token."""


def _collapse(
    case: Case, steps: list[Step], texts: list[str], run: list[int], chat: bool
) -> Finding:
    worst = min(run, key=lambda i: steps[i].valid_mass)
    step = steps[worst]
    numbers = [_step_number(steps[i], i) for i in run]
    blocked = [c for c in step.top if not c.allowed][:3]
    wanted = ", ".join(f"`{show(c.text, 20)}` ({percent(c.prob)})" for c in blocked)
    wrote = _token_words(steps, texts, worst)
    when = f"At step {numbers[0]}"
    if len(run) > 1:
        when = f"At steps {numbers[0]}–{numbers[-1]} (worst: step {numbers[run.index(worst)]})"
    before = "".join(texts[:worst])
    place = f"after `{show(before)}`" if before else "at the start"
    drawn = drawn_path(steps[: worst + 1], case.dfa)[worst][0]
    inside = " (inside a character)" if step.state_before != drawn else ""
    message = (
        f"{when} the allowed tokens held only {percent(step.valid_mass)} of the "
        f"model's probability ({place}, state {drawn}{inside}"
        f"{', forced' if step.forced else ''})."
    )
    if wanted:
        message += f" It wanted {wanted}, which the pattern forbids there; it wrote {wrote}."
    else:
        message += f" It wrote {wrote}."
    message += _why_blocked(case, step, blocked, worst, chat)
    message += _mismatch(blocked, worst)
    states = dict.fromkeys(_drawn_states(case, (steps[i] for i in run)))
    # A bound on a repeat helps only a run that is riding it (seed 002's `.I.I.I`): a
    # collapse where the loop is first entered is the prompt asking for something else.
    loop = case.loop_for([step.state_before])
    riding = loop is not None and any(s.state_before in loop.states for s in steps[:worst])
    fix = case.run_fixes[loop] if riding and loop is not None else None
    finding = Finding(
        "valid_mass_collapse",
        "warning",
        message,
        states=tuple(states),
        suggestion=fix.pattern if fix else None,
        steps=tuple(numbers),
        settings=CHAT_ON if not chat and _leading_space(case, blocked, worst) else (),
    )
    return case.locate(finding, loop.node if fix and loop else None)


def _kind(text: str) -> str | None:
    """What a token starts with, in a teacher's words (``" I"`` -> ``"a space"``)."""
    first = text[:1]
    if not first:
        return None
    if first.isspace():
        return "a space"
    if first.isupper():
        return "a capital letter"
    if first.isdigit():
        return "a digit"
    if first.islower():
        return "a lower-case letter"
    return None


def _mismatch(blocked: list[Candidate], i: int) -> str:
    """The prompt does not fit the pattern: most of the model's blocked favourites start
    with the same kind of character (capitals, digits, a space), and none of them may.
    Said at a run's first steps only, where what the model wants comes from the prompt."""
    kinds = Counter(k for k in (_kind(c.text) for c in blocked) if k)
    if i > 1 or not kinds:
        return ""
    kind, count = kinds.most_common(1)[0]
    if count < 2 or kind == "a space":  # a leading space has its own advice
        return ""
    return (
        f" Its favourites start with {kind}, which the pattern cannot write here: the "
        "prompt asks for something the pattern does not allow. Say in the prompt what to "
        "write, or let the pattern start the way the model wants."
    )


def _why_blocked(case: Case, step: Step, blocked: list[Candidate], i: int, chat: bool) -> str:
    """Why the model's favourites were forbidden: it wanted to end before a match, or its
    first token starts with a space the pattern does not allow (``_leading_space``)."""
    state = step.state_before
    notes = []
    if any(c.text == case.eos_text for c in blocked) and not case.index.is_accepting(state):
        if state < case.dfa.num_states:
            rest = case.completion(state)
            notes.append(
                f" The model wanted to end here, but the pattern needs at least "
                f"{plural(len(rest), 'more character')} (e.g. `{show(rest)}`)."
            )
        else:
            notes.append(" The model wanted to end here, but the pattern is not complete.")
    if _leading_space(case, blocked, i):
        notes.append(
            " Its favourite tokens start with a space, as words do after a prompt, "
            "but the pattern cannot start with one: "
            + ("allow" if chat else "use chat mode, or allow")
            + " `[ ]?` at the start and strip it."
        )
    return "".join(notes)


def _leading_space(case: Case, blocked: list[Candidate], i: int) -> bool:
    """The first step's blocked favourites start with a space, which the pattern cannot
    start with: in completion mode a prompt ending mid-sentence is continued with `` word``;
    in chat mode the reply starts afresh, without one."""
    starts_with_space = any(c.text.startswith(" ") for c in blocked)
    return i == 0 and starts_with_space and case.dfa.step(case.dfa.initial, " ") is None


# --- loops in the run ---------------------------------------------------------------------


def _loops(case: Case, trace: Trace, steps: list[Step], texts: list[str]) -> list[Finding]:
    """Stretches of the run that go round one cycle of the token graph again and again,
    writing little but the same few things (seed 002's ``.I.I.I``)."""
    cycles = case.token_cycles

    def inside(step: Step, comp: int) -> bool:
        return (
            not step.is_eos
            and cycles.get(step.state_before) == comp
            and cycles.get(step.state_after) == comp
        )

    found = []
    i = 0
    while i < len(steps):
        comp = cycles.get(steps[i].state_before)
        if comp is None or not inside(steps[i], comp):
            i += 1
            continue
        j = i
        while j + 1 < len(steps) and inside(steps[j + 1], comp):
            j += 1
        finding = _loop(case, trace, steps, texts, i, j)
        if finding is not None:
            found.append(finding)
        i = j + 1
    return found


def _loop(
    case: Case, trace: Trace, steps: list[Step], texts: list[str], first: int, last: int
) -> Finding | None:
    """The finding for steps ``first..last`` inside one cycle, if they circle: at least
    four laps, at most half of them different."""
    # A lap starts each time the run comes back to the state it visits most.
    befores = [steps[k].state_before for k in range(first, last + 1)]
    anchor = Counter(befores).most_common(1)[0][0]
    starts = [k for k in range(first, last + 1) if steps[k].state_before == anchor]
    laps = ["".join(texts[a:b]) for a, b in zip(starts, starts[1:], strict=False)]
    counts = Counter(laps)
    if len(laps) < 4 or len(counts) > len(laps) // 2:
        return None  # too short, or varied text: the model is writing, not circling
    ks = list(range(starts[0], last + 1))
    text = "".join(texts[ks[0] : ks[-1] + 1])
    periodic = _periodic_stretch(text)
    if periodic is not None and periodic[1] >= 2 * len(periodic[2]) + 2:
        repeated = f"; `{show(periodic[2])}` comes {periodic[1] // len(periodic[2])} times in a row"
    else:
        unit, times = counts.most_common(1)[0]
        repeated = f"; `{show(unit)}` alone makes {times} of the laps"
    numbers = tuple(_step_number(steps[k], k) for k in ks)
    states = tuple(sorted(set(_drawn_states(case, steps[ks[0] : ks[-1] + 1]))))
    could_stop = [k for k in ks if case.index.is_accepting(steps[k].state_before)]
    seen = [p for p in (_eos_prob(case, steps[k]) for k in could_stop) if p is not None]
    if not could_stop:
        ending = "The end of text is never allowed inside this loop."
    elif seen:
        ending = (
            "In the states where it could have stopped, the model gave the end of text "
            f"at most {percent(max(seen))}."
        )
    else:
        ending = (
            "In the states where it could have stopped, the end of text was never among "
            "the model's top choices."
        )
    loop = case.loop_for(states) or case.loop_for(states[:1])
    node = loop.node if loop is not None else None
    fix = case.run_fixes[loop] if loop is not None else None
    through = (
        f" The pattern allows this through `{frag(case.text(node))}`, which has no upper bound."
        if node is not None
        else ""
    )
    cut = trace.stop_reason == "max_tokens" and last == len(steps) - 1
    finding = Finding(
        "loop",
        "error" if cut else "warning",
        f"Steps {numbers[0]}–{numbers[-1]} looped through {case.states(states)} "
        f"{len(laps)} times with little variety ({plural(len(counts), 'different lap')}), "
        f"writing `{show(text)}`{repeated}. {ending}{through}"
        + (" The loop ran until max_tokens." if cut else ""),
        states=states,
        suggestion=fix.pattern if fix else None,
        steps=numbers,
    )
    return case.locate(finding, node)


def _eos_prob(case: Case, step: Step) -> float | None:
    """The model's probability of ending at ``step``, if it was among its top choices."""
    return next((c.prob for c in step.top if c.text == case.eos_text), None)


def _periodic_stretch(text: str, max_unit: int = 16) -> tuple[int, int, str] | None:
    """The longest stretch of ``text`` that repeats one short unit: (start, length, unit),
    the length a whole number of units; None when nothing repeats three times."""
    best: tuple[int, int, str] | None = None
    n = len(text)
    for p in range(1, min(max_unit, n // 3) + 1):
        k = 0
        while k + p < n:
            if text[k] != text[k + p]:
                k += 1
                continue
            j = k
            while j + p < n and text[j] == text[j + p]:
                j += 1
            length = (j - k + p) // p * p
            if length >= 3 * p and (best is None or length > best[1]):
                best = (k, length, text[k : k + p])
            k = j + 1
    return best


# --- how the run ended --------------------------------------------------------------------


def _ending(
    case: Case, trace: Trace, max_tokens: int | None, loops: list[Finding]
) -> list[Finding]:
    """Why the run stopped where it did, when that is worth saying: one finding per
    stop reason that needs one (``max_tokens``, ``prob_limit``, the decoding stops,
    ``dead_end``), none for a run the model ended itself."""
    steps = trace.steps
    final = steps[-1].state_after if steps else case.index.initial_state
    states = (final,) if final < case.dfa.num_states else ()
    last_step = (len(steps) - 1,) if steps else ()
    if trace.stop_reason == "max_tokens":
        loop_fix = next((f.suggestion for f in loops if f.suggestion), None)
        limit = max_tokens if max_tokens is not None else len(steps)
        return [_truncation(case, trace, final, limit, loop_fix, states, last_step)]
    if trace.stop_reason == "prob_limit":
        limit = trace.options.prob_limit if trace.options else None
        shown = f" ({percent(limit)})" if limit is not None else ""
        return [
            Finding(
                "prob_limit",
                "info",
                f"The run stopped after step {len(steps) - 1} because the allowed tokens' "
                f"share of the model's probability fell below prob_limit{shown}; the text "
                f"`{show(trace.text)}` was already a complete match.",
                states=states,
                steps=last_step,
            )
        ]
    if trace.stop_reason in ("overshoot", "first_match"):
        return [_decoding_stop(case, trace, states)]
    if trace.stop_reason == "dead_end":
        return [
            Finding(
                "dead_end",
                "error",
                f"The run got stuck {case.where(final)}: no token could follow "
                f"`{show(trace.text)}` and it was not a complete match.",
                states=states,
                steps=last_step,
            )
        ]
    return []


def _truncation(
    case: Case,
    trace: Trace,
    final: int,
    limit: int,
    loop_fix: str | None,
    states: tuple[int, ...],
    last_step: tuple[int, ...],
) -> Finding:
    """The run hit ``max_tokens`` (``limit``) in state ``final``: a note when the text
    happens to match anyway, else an error saying how much was still missing and what to
    change (more tokens, the safe end, the loop's bound ``loop_fix``). Both light the
    final ``states`` and the ``last_step``."""
    if trace.matched:
        return Finding(
            "truncation",
            "info",
            f"The run stopped at max_tokens={limit}. The text happens to match, "
            "but the model had not chosen to end it.",
            suggestion=loop_fix,
            states=states,
            steps=last_step,
        )
    need_tokens = case.tokens_needed(final)
    if final < case.dfa.num_states:
        rest = case.completion(final)
        tokens = f", {plural(need_tokens, 'token')}" if need_tokens != UNREACHABLE else ""
        missing = (
            f"it still needed at least {plural(len(rest), 'more character')} "
            f"(e.g. `{show(rest)}`{tokens})"
        )
    elif need_tokens != UNREACHABLE:
        missing = f"it still needed at least {plural(need_tokens, 'more token')}"
    else:
        missing = "it stopped inside a character"
    safe = trace.options.safe_end if trace.options else None
    advice = " Raise max_tokens"
    if safe is False:
        advice += ", turn safe_end on (it steers towards a match when tokens run out)"
    if loop_fix:
        advice += ", or bound the loop as suggested"
    return Finding(
        "truncation",
        "error",
        f"The run hit max_tokens={limit} without a complete match: after "
        f"`{show(trace.text)}` (state {final}) {missing}.{advice}.",
        suggestion=loop_fix,
        states=states,
        steps=last_step,
    )


def _decoding_stop(case: Case, trace: Trace, states: tuple[int, ...]) -> Finding:
    """Where a decoding option ended the run: overshoot (seed 002) or the first match."""
    last = trace.steps[-1]
    if trace.stop_reason == "overshoot":
        kept = last.token_bytes.decode("utf-8", errors="replace")
        return Finding(
            "overshoot",
            "info",
            f"Overshoot fired at step {last.index}: the model took `{show(last.text)}`; "
            f"`{show(kept)}` completes the match and `{show(last.cut)}` was cut, so the "
            f"output ends as `{show(trace.text)}`{f' (state {states[0]})' if states else ''}."
            " The masked run would have forbidden this token and made the model write "
            "something else.",
            states=states,
            steps=(last.index,),
        )
    more = bool(states) and len(case.index.row(last.state_after).tokens) > 0
    longer = " A longer match was still possible; stop='eos' lets the model go on." if more else ""
    return Finding(
        "first_match",
        "info",
        f"The run stopped after step {last.index} at its first full match, `{show(trace.text)}`,"
        f" as stop='first' asks (ReLLM's rule).{longer}",
        states=states,
        steps=(last.index,),
    )
