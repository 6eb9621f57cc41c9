"""A counted repeat's rows from one plan: each copy of ``X{a,m}T`` leads like the next.

``derivatives._Rows`` derives a state's row by derivatives, one per group of bytes
alike (a *layout*: ``derivatives._layout_of``). A counted repeat ``X{a,m}T`` (``X`` a set,
``m`` a bound) needs none of them for its copies: a character ``c`` derives
``X{a,m}T`` to ``X{a-1,m-1}T`` where ``c`` is in ``X``, or ``|`` ``d(T, c)`` where ``a``
is 0, and ``d(T, c)`` does not depend on the count. So every copy's row is one
*plan* (``CountedPlan``) with the next copy put in: under ``[^\\n]{1,20}``

    copy k (between characters):  "a" -> copy k-1    "\\xc3" -> copy k-1, 1 byte left
    copy 0:                        nothing (the end of the pattern)

and where every state a copy leads to is new, the copy's rows, its own and those inside a
character, are written in one go from a template (``Block``: 8 rows a copy, numbered in
the order a derivation would meet them). Every row is exactly the one the derivatives
give (``tests/test_derivatives.py``).

This module reads the regexes and the table through ``Rows`` (what ``derivatives._Rows`` offers),
and imports nothing of ``derivatives``, which imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from fsmviz.cache import bounded
from fsmviz.tokens.fast.regex_terms import CAT, EPS, NONE, REP, SEQ, SET, TreeTerms

CHAR, ENDS, ENTER, STAY = range(4)
"""How a group of bytes of a layout (``derivatives._layout_of``) leads: to a state between
characters; likewise unless the derivative is ``∅``; into a character every completion of
which derives alike; to the same regex, a byte further inside a character."""


class Layout(Protocol):
    """What a plan reads of a layout (``derivatives._Layout``): its groups ``(bits, kind,
    signature, code, extra)`` and each byte's group's position (``len(groups)``: none)."""

    groups: tuple[tuple[int, int, int, int, object], ...]
    group_of: np.ndarray


class Derives(Protocol):
    """What a plan reads of the pattern's regexes (``derivatives._Regexes``)."""

    nodes: list[tuple]

    def head(self, node: tuple) -> tuple[int, int]: ...
    def heads(self, regex: int) -> tuple[int, ...]: ...
    def derive(self, regex: int, code: int) -> int: ...
    def contains(self, charset: int, code: int) -> bool: ...
    def alt(self, options: list[int]) -> int: ...


class Rows(Protocol):
    """What a plan reads and writes of the table of states (``derivatives._Rows``):
    ``state`` numbers a state, ``new_states`` numbers many at once (None: one is known),
    ``_layout`` the groups of a regex's heads, ``plan`` a copy's plan (kept per kind of
    copy); ``table`` holds the rows, ``made`` marks those written."""

    regexes: Derives
    table: np.ndarray
    made: np.ndarray

    def state(self, regex: int, partial: object) -> int: ...
    def new_states(self, keys: list[tuple[int, object]]) -> int | None: ...
    def _layout(self, heads: tuple[int, ...], partial: bytes) -> Layout: ...
    def plan(self, regex: int, partial: bytes) -> CountedPlan: ...


def counted(regexes: TreeTerms, regex: int) -> tuple[int, int, int, int] | None:
    """``(X, a, m, T)`` where ``regex`` is ``X{a,m}T`` (``T`` may be ``ε``) with ``X`` a
    set and ``m`` a bound: a counted repeat's copy (``CountedPlan``);
    else None.

    >>> r = TreeTerms()
    >>> x, y = r.charset(((97, 122),)), r.charset(((48, 57),))
    >>> counted(r, r.cat(r.rep(x, 0, 5), y)) == (x, 0, 5, y), counted(r, r.rep(x, 2, 3))
    (True, (2, 2, 3, 1))
    >>> counted(r, r.rep(x, 0, None)), counted(r, r.cat(y, x))
    (None, None)
    """
    nodes = regexes.nodes
    node = nodes[regex]
    kind = node[0]
    if kind == CAT:
        first, rest = node[1], node[2]
    elif kind == SEQ:
        first, rest = regexes.head(node)
    else:
        first, rest = regex, EPS
    repeat = nodes[first]
    if repeat[0] != REP or repeat[3] is None or nodes[repeat[1]][0] != SET:
        return None
    return repeat[1], repeat[2], repeat[3], rest


_ON, _BOTH, _FIXED, _SAME, _DEAD = range(5)
"""Where a group of a counted copy's row leads (``CountedPlan``): the next copy; the
next copy or ``d(T)``; ``d(T)`` alone; the same copy, a byte further inside a character
(``STAY``); nowhere."""


@dataclass(frozen=True, eq=False)
class CountedPlan:
    """How the row of a state ``(X{a,m}T, partial)`` leads, the same for every ``m`` and
    every ``a`` > 0 (or every ``a`` = 0): by ``_Regexes.derive``, a character ``c``
    derives ``X{a,m}T`` to ``[c in X] X{a-1,m-1}T | [a = 0] d(T, c)`` (``X{0,0}T`` is
    ``T``), where ``d(T, c)`` does not depend on the count and neither do the heads, so
    neither do the groups (``_layout_of``). So each count's copy of ``[^\\n]{1,20}`` leads
    alike to the next, and its row needs no derivative (``derivatives._Rows.make_row``).

    ``steps`` holds, for each group of ``layout``, ``(how, regex, extra)``: how it leads
    (``_ON`` and the rest), with ``d(T, c)`` where it counts, and the target's
    ``partial``; ``fixed`` the state of each ``_FIXED`` step (else -1); ``alike`` where
    ``T`` reads nothing (it matches the empty text at most: the end of the pattern), so
    that copies with ``a`` > 0 and ``a`` = 0 share the plan (the start of
    ``[^\\n]{1,20}`` and the rest). ``block`` (None where a group leads to
    ``_BOTH``) writes a copy's rows at once (``Block``)."""

    layout: Layout
    steps: tuple[tuple[int, int, object], ...]
    fixed: tuple[int, ...]
    alike: bool
    block: Block | None

    @staticmethod
    def of(near: Rows, regex: int, rest: int, partial: bytes) -> CountedPlan:
        """The plan of ``regex``'s copies (``counted``: ``X{a,m}rest``), ``partial`` read."""
        regexes = near.regexes
        base, least = counted(regexes, regex)[:2]
        layout = near._layout(regexes.heads(regex), partial)
        steps = []
        for _, kind, _, code, extra in layout.groups:
            if kind == STAY:
                steps.append((_SAME, NONE, extra))
                continue
            tail = regexes.derive(rest, code) if least == 0 else NONE
            if regexes.contains(base, code):
                steps.append((_ON if tail == NONE else _BOTH, tail, extra))
            else:
                dead = kind == ENDS and tail == NONE
                steps.append((_DEAD if dead else _FIXED, tail, extra))
        fixed = tuple(near.state(t, e) if how == _FIXED else -1 for how, t, e in steps)
        alike = not regexes.heads(rest)  # then ``d(T, c)`` is ∅ and the heads are X's
        plan = CountedPlan(layout, tuple(steps), fixed, alike, None)
        if partial or any(how == _BOTH for how, *_ in steps):
            return plan
        return CountedPlan(layout, plan.steps, fixed, alike, Block.of(near, regex, plan))

    def targets(self, near: Rows, regex: int, after: int) -> list[int]:
        """Each group's target from the copy ``regex``, whose next copy is ``after``
        (``X{a-1,m-1}T``), in the order ``derivatives._Rows._derived_targets`` meets them."""
        found = []
        for how, tail, extra in self.steps:
            if how == _ON:
                found.append(near.state(after, extra))
            elif how == _SAME:
                found.append(near.state(regex, extra))
            elif how == _DEAD:
                found.append(-1)
            else:
                target = near.regexes.alt([after, tail]) if how == _BOTH else tail
                found.append(near.state(target, extra))
        return found


@dataclass(frozen=True, eq=False)
class Block:
    """A counted copy's row (``CountedPlan``, between characters) where each state it
    leads to is fixed (``d(T, c)``) or new: the next copy's, inside a character or not,
    and this copy's a byte inside one (``STAY``). The new ones take the next numbers in
    the order the row meets them, so the row is a template with the first new number
    added where it leads to one; and so are the rows of the new states inside a
    character, whose targets are new states of the same block (the next copy's bytes
    left; this copy's ``\\xed``, the next copy's after it). One copy of
    ``[^\\n]{1,20}`` is 8 rows, made in one write where one row was derived at a time
    (``Block.write``). A copy whose new states are known already (rare) is
    written target by target (``CountedPlan.targets``).

    ``fresh`` holds ``(how, extra)`` of each new state (``_ON``: the next copy,
    ``_SAME``: this one); ``inner`` the positions in ``fresh`` of those whose rows come
    with the block. ``rows`` (the copy's first, then ``inner``'s) hold a new state's
    position in ``fresh`` where ``new`` is 1, else a fixed state or -1; ``next_at`` the
    position in ``fresh`` of the next copy between characters (-1: none, as under a set
    of characters of two bytes or more, and then ``write`` writes one copy at a time)."""

    fresh: tuple[tuple[int, object], ...]
    inner: np.ndarray
    rows: np.ndarray
    new: np.ndarray
    next_at: int

    @staticmethod
    def of(near: Rows, regex: int, plan: CountedPlan) -> Block:
        """The block of the copy ``regex``'s ``plan`` (none of its steps ``_BOTH``)."""
        fresh: dict[tuple[int, object], int] = {}
        made = [_template(plan.layout, plan.steps, plan.fixed, fresh)]
        inner = [0]  # the copy's own row, then the new states' (positions in ``fresh``)
        for (how, extra), at in list(fresh.items()):
            if isinstance(extra, tuple):  # the next copy, bytes left of a character
                one = _interval_template(extra, fresh)
            elif how == _SAME:  # this copy, a byte further inside a character
                sub = near.plan(regex, extra)
                both = any(step[0] == _BOTH for step in sub.steps)
                one = None if both else _template(sub.layout, sub.steps, sub.fixed, fresh, False)
            else:
                continue
            if one is not None:
                made.append(one)
                inner.append(at)
        rows, new = _stacked(tuple(made))
        next_at = fresh.get((_ON, b""), -1)
        return Block(tuple(fresh), np.array(inner, dtype=np.intp), rows, new, next_at)

    def write(self, near: Rows, s: int, copies: list[int]) -> bool:
        """Write the rows of the counted copies ``copies[:-1]`` (each one's next copy the
        one after it; the first is state ``s``) and of each one's ``inner``, where the
        states they lead to outside the fixed ones are all new; False (nothing written)
        where one is known. The copies' new states are numbered together, a block of
        ``len(fresh)`` each, so that each copy's state is the one before's next copy
        (``next_at``): one write for all their rows (the longer tokens' walk,
        ``levelwalk.walk_long``, meets them all: ``derivatives._Rows.ahead``)."""
        fresh = self.fresh
        if self.next_at < 0 or len(copies) == 2:  # one copy: its rows, as one write
            regex, after = copies[:2]
            first = near.new_states([(after if how == _ON else regex, e) for how, e in fresh])
            if first is None:
                return False
            rows = self.inner + first
            rows[0] = s
            near.table[rows] = self.rows + first * self.new
            near.made[rows] = True
            return True
        keys = [
            (after if how == _ON else regex, e)
            for regex, after in zip(copies[:-1], copies[1:], strict=True)
            for how, e in fresh
        ]
        first = near.new_states(keys)
        if first is None:
            return False
        offsets = np.arange(first, first + len(keys), len(fresh), dtype=np.int32)  # as the table
        rows = self.inner + offsets[:, None]
        rows[0, 0] = s
        rows[1:, 0] = offsets[:-1] + self.next_at
        rows = rows.ravel()
        near.table[rows] = (self.rows + offsets[:, None, None] * self.new).reshape(-1, 256)
        near.made[rows] = True
        return True


_Template = tuple
"""A ``Block`` row's recipe (``_stacked``)."""


@bounded(maxsize=256)
def _stacked(recipes: tuple[tuple, ...]) -> tuple[np.ndarray, np.ndarray]:
    """A ``Block``'s ``rows`` and ``new`` (read-only) from its rows' recipes: ``(lo, hi,
    target)``, an interval leading to a new state; or ``(layout, codes, news)``, each
    group's code and new flag (the bytes in none last). Kept: every pattern that counts
    ``[^\\n]`` has the same (0.1 ms of numpy a pattern)."""
    rows = np.full((len(recipes), 256), -1, dtype=np.int32)
    new = np.zeros((len(recipes), 256), dtype=np.int32)
    for k, recipe in enumerate(recipes):
        if len(recipe) == 3 and isinstance(recipe[0], int):
            lo, hi, target = recipe
            rows[k, lo : hi + 1], new[k, lo : hi + 1] = target, 1
        else:
            layout, codes, news = recipe
            rows[k] = np.array(codes, dtype=np.int32)[layout.group_of]
            new[k] = np.array(news, dtype=np.int32)[layout.group_of]
    rows.flags.writeable = new.flags.writeable = False
    return rows, new


def _interval_template(partial: tuple[int, int, int], fresh: dict) -> _Template | None:
    """The ``Block`` row of the next copy with ``partial`` (bytes left, the next one's
    range: ``_Partial``) read, as ``derivatives._Rows.make_row`` writes it: the range leads to
    the state with a byte fewer left, which must be in ``fresh`` (else None)."""
    left, lo, hi = partial
    target = fresh.get((_ON, b"" if left == 1 else (left - 1, 0x80, 0xBF)))
    if target is None:
        return None
    return lo, hi, target


def _template(
    layout: Layout, steps: tuple, fixed: tuple[int, ...], fresh: dict, grow: bool = True
) -> _Template | None:
    """A ``Block`` row's recipe from a plan's ``steps`` over ``layout``; a new state not in
    ``fresh`` is added to it (None where ``grow`` is False)."""
    codes, news = [], []
    for (how, _, extra), target in zip(steps, fixed, strict=True):
        if how in (_ON, _SAME):
            at = fresh.get((how, extra))
            if at is None:
                if not grow:
                    return None
                at = fresh[how, extra] = len(fresh)
            codes.append(at)
            news.append(1)
        else:  # ``_FIXED``'s state, or -1 (``_DEAD``)
            codes.append(target)
            news.append(0)
    codes.append(-1)
    news.append(0)
    return layout, tuple(codes), tuple(news)
