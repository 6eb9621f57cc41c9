"""Findings from the pattern and the vocabulary alone, before anything is generated.

In the order they are looked for: can anything match at all (``empty_language``); can this
vocabulary spell it (``spelling``; when it cannot, nothing else matters much); may the
output be empty (``accepts_empty``); can the model go on forever (``unbounded_repeat``);
does the shortest match fit in ``max_tokens`` (``budget``); may the output stop too early
(``stops``); and pitfalls of how the pattern is written (``style``).
"""

from __future__ import annotations

from collections.abc import Callable

from fsmviz.automaton.graph import UNREACHABLE
from fsmviz.automaton.syntax import RegexError
from fsmviz.diagnose.case import Case
from fsmviz.diagnose.finding import Finding
from fsmviz.diagnose.fragments import WHITESPACE, atom_chars
from fsmviz.diagnose.held import held
from fsmviz.diagnose.loops import Loop, dot_reopens
from fsmviz.diagnose.spelling import spelling
from fsmviz.diagnose.stops import early_stops
from fsmviz.diagnose.style import style
from fsmviz.diagnose.text import cap, frag, plural, show, states_text
from fsmviz.tokens.index import IndexTooLarge


def regex_error(pattern: str, error: RegexError) -> Finding:
    """The one finding for a pattern that cannot be used, pointing at where it breaks."""
    where = f" at position {error.position}" if error.position is not None else ""
    hint = f" {cap(error.hint)}." if error.hint else ""
    span = None
    fragment = None
    if error.position is not None and isinstance(pattern, str) and pattern:
        start = min(error.position, len(pattern) - 1)
        span = (start, start + 1)
        fragment = pattern[start]
    return Finding(
        "regex_error",
        "error",
        f"The pattern cannot be used{where}: {error.message}.{hint}",
        fragment=fragment,
        span=span,
    )


def static_findings(case: Case, max_tokens: int | None, *, hold: bool = True) -> list[Finding]:
    """The findings above, in that order. With ``hold`` (the default) a suggestion is kept
    only if the doctor, run on it, no longer reports its finding there (``held``)."""
    found = _static(case, max_tokens)
    return held(case.pattern, found, _static) if hold else found


def _static(case: Case, max_tokens: int | None) -> list[Finding]:
    dfa = case.dfa
    if not dfa.accepting or not case.index.byte_dfa.live_states()[dfa.initial]:
        return [
            Finding(
                "empty_language",
                "error",
                "No text at all matches this pattern (its language is empty), so "
                "nothing can be generated.",
                states=(dfa.initial,),
            )
        ]
    skipped: list[IndexTooLarge] = []

    def checked(check: Callable[..., list[Finding]], *args: object) -> list[Finding]:
        """``check``'s findings; none when it needs the whole token index and that is
        too large to walk (said once, at the end)."""
        try:
            return check(case, *args)
        except IndexTooLarge as error:
            skipped.append(error)
            return []

    found = checked(spelling)
    if any(f.kind == "dead_end" for f in found):
        return found + style(case)
    found += _empty_match(case)
    found += checked(_unbounded)
    found += checked(_budget, max_tokens)
    found += checked(early_stops)
    found += style(case)
    return found + [index_too_large(skipped[0])] if skipped else found


def index_too_large(error: IndexTooLarge) -> Finding:
    """The token-level checks were skipped: the whole index is too large to walk."""
    return Finding(
        "index_size",
        "warning",
        f"Some token-level checks were skipped: {error.message}. A generation still works "
        f"(its states are walked as it visits them) but without a safe end. "
        f"{cap(error.hint or '')}.",
    )


def _empty_match(case: Case) -> list[Finding]:
    dfa = case.dfa
    if not dfa.is_accepting(dfa.initial):
        return []
    if not dfa.transitions[dfa.initial]:
        return [
            Finding(
                "accepts_empty",
                "error",
                "The pattern matches only the empty string: the model can write nothing "
                "but the end of text.",
                states=(dfa.initial,),
            )
        ]
    shortest = min(
        (case.prefixes[s] for s in dfa.accepting if s != dfa.initial),
        key=len,
        default="",
    )
    example = f" (the shortest non-empty match is `{show(shortest)}`)" if shortest else ""
    return [
        Finding(
            "accepts_empty",
            "warning",
            "The pattern matches the empty string, so the end of text is allowed at "
            f"step 0 and the output may be empty{example}. Make at least one part "
            "mandatory, e.g. + instead of *.",
            states=(dfa.initial,),
        )
    ]


# --- unbounded repeats --------------------------------------------------------------------


def _unbounded(case: Case) -> list[Finding]:
    """One warning per loop of the DFA, named by the pattern's repeat, with a bounded fix."""
    found = []
    for loop in case.loops:
        node = loop.node
        chars, others = _loop_chars(case, loop)
        if node is not None:
            what = f"`{frag(case.text(node))}`"
        else:
            labels = {
                case.dfa.class_label(k)
                for s in loop.states
                for k, t in case.dfa.transitions[s].items()
                if t in loop.states
            }
            what = f"`{frag(' '.join(sorted(labels)))}`"
        if not others and chars and chars <= WHITESPACE:
            flavour = (
                " Flexible whitespace is a classic trap: models pad it with endless "
                "spaces or newlines."
            )
        elif others and node is not None and node.children[0].kind == "atom":
            flavour = " It takes almost any character, so nothing in the text forces an end."
        elif dot_reopens(case.dfa, loop) and len(chars) > 1:
            flavour = (
                " Because `.` is in the loop, a model that ends its sentence with `.` "
                "cannot stop there and must write more (one run wrote "
                "`ian.swannack@gmail.com.au.I.I.I`)."
            )
        else:
            flavour = ""
        ending = (
            "The end of text is allowed in the loop, but nothing forces it."
            if loop.accepting
            else "It can only be left by writing what comes next; the end of text is not "
            "allowed inside it."
        )
        path = states_text(loop.path) if len(loop.path) <= 6 else f"{len(loop.path)} states"
        shown_lap = loop.lap[-1] + loop.lap[:-1]  # start the lap where the repeat starts
        example = show(shown_lap * 3 if len(shown_lap) < 8 else shown_lap, 30)
        fix = case.fixes[loop]
        why = f" Bounded: `{frag(fix.fragment)}` ({fix.why})." if fix else ""
        finding = Finding(
            "unbounded_repeat",
            "warning",
            f"{cap(case.where(loop.entry))} the pattern can loop on {what} "
            f"forever (through {path}, e.g. `{example}`…). {ending}{flavour}{why}",
            states=loop.states,
            suggestion=fix.pattern if fix else None,
        )
        found.append(case.locate(finding, node))
    return found


def _loop_chars(case: Case, loop: Loop) -> tuple[frozenset[str], bool]:
    """(characters, any unmentioned character too) the loop's repeat reads."""
    if loop.node is not None and loop.node.children[0].kind == "atom":
        charset = atom_chars(case.pattern[loop.node.start : loop.node.quant_start])
        if charset is not None:
            return charset
    dfa = case.dfa
    ks = {k for s in loop.states for k, t in dfa.transitions[s].items() if t in loop.states}
    chars = frozenset().union(*(dfa.classes[k].chars for k in ks))
    return chars, any(dfa.classes[k].others for k in ks)


# --- the token budget ---------------------------------------------------------------------


def _budget(case: Case, max_tokens: int | None) -> list[Finding]:
    """An error when even the shortest match needs more than ``max_tokens``, a warning when
    it needs most of them, a note when the longest (finite) matches do not fit."""
    if max_tokens is None:
        return []
    start = case.index.initial_state
    need = case.tokens_needed(start)
    if need == UNREACHABLE:
        return []
    example = case.completion(case.dfa.initial)
    shown = f" (e.g. `{show(example)}`, {plural(len(example), 'character')})"
    if need > max_tokens:
        return [
            Finding(
                "budget",
                "error",
                f"Even the shortest match needs {plural(need, 'token')}{shown}, but "
                f"max_tokens is {max_tokens}: every run will be cut off. Raise max_tokens "
                f"to at least {need}.",
                states=(start,),
            )
        ]
    if need > 0.75 * max_tokens:
        return [
            Finding(
                "budget",
                "warning",
                f"The shortest match already needs {plural(need, 'token')}{shown} of "
                f"max_tokens={max_tokens}: little room for the model's own choices.",
                states=(start,),
            )
        ]
    longest = _longest_match(case)
    if longest is not None and longest > max_tokens:
        return [
            Finding(
                "budget",
                "info",
                f"A match takes {need} to {longest} tokens (the most when the model spells "
                f"it a character at a time); max_tokens={max_tokens} can cut the longest "
                "ones short.",
                states=(start,),
            )
        ]
    return []


def _longest_match(case: Case) -> int | None:
    """Most tokens any match can take (None if unbounded)."""
    if case.token_cycles:
        return None
    longest: dict[int, int] = {}
    for comp in case.token_sccs:  # reverse topological order: successors come first
        s = comp[0]
        best = 0 if case.index.is_accepting(s) else -1
        for t in case.token_successors[s]:
            if longest.get(t, -1) >= 0:
                best = max(best, longest[t] + 1)
        longest[s] = best
    return longest.get(case.index.initial_state)
