"""Early stops: a match that is already complete where the writer meant it to go on.

With ``(hot|cold|hotel)`` the text ``hot`` is a complete match, so a model may stop there
instead of writing ``hotel`` (``prefix_alternative``, seed 003); with ``[0-9]{1,3}(\\.[0-9]
{1,2})?`` it may stop before the optional decimals (``optional_tail``). For each accepting
state we take its example text and a longer match through each way out of it, and ask the
``regex`` module which alternation chose differently for the two, or which optional part
only the longer one used.
"""

from __future__ import annotations

import regex

from fsmviz.diagnose.case import Case
from fsmviz.diagnose.examples import readable_edges, representative
from fsmviz.diagnose.finding import Finding
from fsmviz.diagnose.fragments import PatternNode, fullmatch, instrument
from fsmviz.diagnose.text import cap, frag, show

# (state, short match, longer match, the short one's option, the longer one's option,
# where the short one's option ends in it, where the longer one's option ends in it)
_Hit = tuple[int, str, str, str, str, int, int]


def early_stops(case: Case) -> list[Finding]:
    """Where a match can stop before the text the pattern was written for: an accepting
    state with a longer match going on from it, explained by the alternative whose option
    is a prefix of another (``prefix_alternative``) or by an optional tail
    (``optional_tail``). One finding per alternative or optional, lighting every state
    where it happens."""
    candidates = _candidates(case)
    if not candidates:
        return []
    alts = [n for n in case.nodes if n.kind == "alt"]
    optionals = [n for n in case.nodes if n.kind == "repeat" and n.lo == 0 and n.hi]
    found = []
    for (what, i), hits in _explained(case, candidates, alts, optionals).items():
        node = alts[i] if what == "alt" else optionals[i]
        found.append(case.locate(_early_stop(case, what, node, hits), node))
    return found


def _candidates(case: Case) -> dict[int, list[tuple[str, str]]]:
    """For each accepting state reached by a non-empty text: (that short match, a longer
    match through one of its edges) pairs, leaving out the edges that only go round the
    same loop again (``unbounded_repeat``'s business)."""
    dfa = case.dfa
    candidates: dict[int, list[tuple[str, str]]] = {}
    for s in sorted(dfa.accepting):
        comp = case.char_cycles.get(s)
        short = case.prefixes[s]
        if not short:
            continue  # the empty match is accepts_empty's business
        for k, t in readable_edges(dfa, s):
            if comp is not None and case.char_cycles.get(t) == comp:
                continue  # more of the same loop: that is unbounded_repeat's business
            longer = short + representative(dfa, k) + case.completion(t)
            candidates.setdefault(s, []).append((short, longer))
    return candidates


def _explained(
    case: Case,
    candidates: dict[int, list[tuple[str, str]]],
    alts: list[PatternNode],
    optionals: list[PatternNode],
) -> dict[tuple[str, int], list[_Hit]]:
    """The candidates explained by the pattern: both texts matched against the pattern
    with every alternative's options and every optional in a named group, grouped by the
    alternative (``("alt", i)``) or optional (``("opt", i)``) that tells them apart; the
    first explained pair of each state."""
    spans = [
        (o.start, o.end, f"fsmvizA{a}o{j}")
        for a, alt in enumerate(alts)
        for j, o in enumerate(alt.children)
    ]
    spans += [(n.start, n.end, f"fsmvizQ{q}") for q, n in enumerate(optionals)]
    instrumented = instrument(case.pattern, spans) if spans else case.pattern
    groups: dict[tuple[str, int], list[_Hit]] = {}
    for s, pairs in candidates.items():
        for short, longer in pairs:
            m_short, m_long = fullmatch(instrumented, short), fullmatch(instrumented, longer)
            if m_short is None or m_long is None:
                continue
            hit = _explain(case, alts, len(optionals), m_short, m_long)
            if hit is not None:
                what, i, options = hit
                groups.setdefault((what, i), []).append((s, short, longer, *options))
                break
    return groups


def _early_stop(case: Case, what: str, node: PatternNode, hits: list[_Hit]) -> Finding:
    """The finding for one alternative (``what == "alt"``) or optional ``node``, told
    with its first hit and lighting the states of all of them."""
    states = tuple(sorted({h[0] for h in hits}))
    s, short, longer = hits[0][:3]
    if what == "alt":
        return Finding(
            "prefix_alternative",
            "warning",
            _prefix_message(case, node, hits[0]),
            states=states,
        )
    return Finding(
        "optional_tail",
        "info",
        f"{cap(case.where(s))} the text `{show(short)}` is already a "
        f"complete match, so the model may stop before the optional "
        f"`{frag(case.text(node))}` (as in `{show(longer)}`).",
        states=states,
    )


def _prefix_message(case: Case, node: PatternNode, hit: _Hit) -> str:
    """The prefix finding's words. Where the rest of the pattern follows the choice, the
    two example texts are split where their options end, so a reader sees how the short
    option lets the rest read what the longer option would have written:

    ``http://www.ai`` is ``http://``, then the rest reads ``www.ai`` (a site named
    ``www``), where the model meant ``http://www.``, then ``aia.ai``."""
    s, short, longer, shorter_option, longer_option, cut_short, cut_long = hit
    stop = f"`{show(short)}` (state {s}) is already a complete match"
    meant = f"`{show(longer)}`"
    mark = "after the choice"
    if cut_short < len(short):  # the rest of the pattern follows the choice
        stop += (
            f": `{show(short[:cut_short])}`, then the rest of the pattern reads "
            f"`{show(short[cut_short:])}`"
        )
        meant += f" (`{show(longer[:cut_long])}`, then `{show(longer[cut_long:])}`)"
        mark = "at the end of the pattern"
    return (
        f"In `{frag(case.text(node))}` the option `{frag(shorter_option)}` matches the "
        f"start of `{frag(longer_option)}`: {stop}, so the model may stop there instead "
        f"of writing {meant}. To let it finish, put something {mark} that marks its end "
        f"(a space, a period, a closing quote), so that `{show(short)}` alone no longer "
        "matches. Listing the longer option first helps only tools that take the first "
        "option that matches, such as Python's re.search; it does not change where the "
        "model may stop, so it is not offered as a fix."
    )


def _explain(
    case: Case, alts: list[PatternNode], optionals: int, m_short: regex.Match, m_long: regex.Match
) -> tuple[str, int, tuple[str, str, int, int]] | None:
    """Which alternation (different options chosen) or optional part (empty in the short
    match, used in the longer one) lets the match stop at the short text: ("alt", which,
    (short option, longer option, where each one's match ends in its text)) or ("opt",
    which, ("", "", 0, 0))."""
    for a, alt in enumerate(alts):
        chosen = []
        for m in (m_short, m_long):
            picked = [j for j in range(len(alt.children)) if m.spans(f"fsmvizA{a}o{j}")]
            chosen.append(picked[-1] if picked else None)
        j0, j1 = chosen
        if j0 is not None and j1 is not None and j0 != j1:
            ends = m_short.spans(f"fsmvizA{a}o{j0}")[-1][1], m_long.spans(f"fsmvizA{a}o{j1}")[-1][1]
            return "alt", a, (case.text(alt.children[j0]), case.text(alt.children[j1]), *ends)
    for q in range(optionals):
        in_short = any(e > b for b, e in m_short.spans(f"fsmvizQ{q}"))
        in_long = any(e > b for b, e in m_long.spans(f"fsmvizQ{q}"))
        if in_long and not in_short:
            return "opt", q, ("", "", 0, 0)
    return None
