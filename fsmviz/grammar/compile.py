"""``compile_grammar``: grammar text in, a checked ``Grammar`` out, or a ``GrammarError``.

Reading is the easy part (``gbnf``, ``lark``); the checks are what make a grammar safe to
run, each answered with the line and column of the rule at fault:

* every name used is defined (``valu`` for ``value``: the hint names the closest rule);
* the start rule (``root`` in GBNF, ``start`` in Lark) exists;
* every rule the start can reach can also *finish*: ``a ::= "x" a`` derives no finite
  text, so a generation inside it could never end (found as the rules that are not
  *productive*, the least fixed point of "some choice uses only productive pieces");
* Lark terminals use only terminals, and none refers to itself (a terminal is a regex);
* each ``/regex/`` compiles with fsmviz's own ``compile_regex``.

Left recursion (``expr ::= expr "+" term``) is allowed: the Earley recognizer and
llguidance (an Earley parser too) both handle it; llama.cpp would refuse it, which
``left_recursive`` lets the doctor say. Rules the start never reaches are no error either;
``unreachable`` lists them.

Everything is bounded before any work: at most ``MAX_GRAMMAR_CHARS`` characters and
``MAX_RULES`` rules, repeats up to 1,000; and what the grammar can force is counted, never
spelled out (``fsmviz.grammar.limits``): every rule must be able to finish within 100,000
characters, groups nest at most 100 deep, and the repeats written out stay under 250,000
symbols. ``root ::= (("a"{1000}){1000}){1000}`` (a billion characters) is refused in
microseconds.

>>> compile_grammar('root ::= "a" valu')
Traceback (most recent call last):
...
fsmviz.grammar.errors.GrammarError: the rule 'valu' is used but never defined (line 1, \
column 14). Hint: define it: valu ::= ...
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

from fsmviz.automaton.dfa import compile_regex
from fsmviz.automaton.syntax import RegexError
from fsmviz.cache import BoundedCache
from fsmviz.errors import FsmvizError
from fsmviz.grammar.as_regex import node_regex
from fsmviz.grammar.errors import GrammarError
from fsmviz.grammar.gbnf import parse_gbnf
from fsmviz.grammar.lark import parse_lark
from fsmviz.grammar.limits import check_nesting, check_size, check_text
from fsmviz.grammar.tree import (
    Alt,
    CharSet,
    Grammar,
    Literal,
    Node,
    RegexTerm,
    Repeat,
    RuleRef,
    Seq,
    children,
    refs,
)

__all__ = [
    "MAX_GRAMMAR_CHARS",
    "MAX_RULES",
    "compile_grammar",
    "detect_format",
    "left_recursive",
    "nullable_rules",
    "productive_rules",
    "unreachable",
]

MAX_GRAMMAR_CHARS = 50_000
MAX_RULES = 1_000

_CACHE: BoundedCache[Grammar] = BoundedCache(maxsize=32)
_GBNF_RULE = re.compile(r"^[ \t]*[A-Za-z0-9_-]+[ \t]*::=", re.MULTILINE)


def compile_grammar(text: str, format: str | None = None) -> Grammar:
    """Read and check a grammar written in llguidance's Lark dialect (``format="lark"``)
    or llama.cpp's GBNF (``"gbnf"``); ``None`` (or ``"auto"``, the page's word) tells them
    apart (a line ``name ::=`` is GBNF). Compiled grammars are cached by (text, format).

    >>> g = compile_grammar('start: "(" start ")" | "x"')
    >>> g.format, g.start, g.accepts("((x))")
    ('lark', 'start', True)
    """
    if not isinstance(text, str):
        raise GrammarError("the grammar must be text", None, None, None)
    if format == "auto":
        format = None
    if format not in (None, "gbnf", "lark"):
        raise GrammarError(
            f"unknown grammar format {format!r}", None, None, 'use "gbnf", "lark" or "auto"'
        )
    if len(text) > MAX_GRAMMAR_CHARS:
        raise GrammarError(
            f"the grammar is too long ({len(text):,} characters; the limit is "
            f"{MAX_GRAMMAR_CHARS:,})",
            None,
            None,
            "shorten it",
        )
    kind = format or detect_format(text)
    try:
        return _CACHE.get_or_build((text, kind), lambda: _compile(text, kind))
    except GrammarError as error:
        looks = detect_format(text)
        if format is None or looks == format or error.hint is not None and "format" in error.hint:
            raise
        # A Lark grammar read as GBNF fails at its first rule ("expected ::="): say why.
        hint = (
            f"this looks like a {FORMAT_NAMES[looks]} grammar, not {FORMAT_NAMES[format]}: "
            f"its rules read {RULE_SHAPES[looks]}, not {RULE_SHAPES[format]}. "
            f'Set the format to "{looks}", or to "auto" so that fsmviz recognises it'
        )
        raise GrammarError(error.message, error.line, error.column, hint) from None


FORMAT_NAMES = {"gbnf": "GBNF (llama.cpp)", "lark": "Lark (llguidance)"}
RULE_SHAPES = {"gbnf": '"name ::= ..."', "lark": '"name: ..."'}
"""How a rule is written in each format: what tells a reader which one a grammar is."""


def detect_format(text: str) -> str:
    """``"gbnf"`` when some line defines a rule with ``::=``, else ``"lark"``.

    >>> detect_format('root ::= "a"'), detect_format('start: "a"')
    ('gbnf', 'lark')
    """
    return "gbnf" if _GBNF_RULE.search(text) else "lark"


def _compile(text: str, kind: str) -> Grammar:
    grammar = parse_gbnf(text) if kind == "gbnf" else parse_lark(text)
    if len(grammar.rules) > MAX_RULES:
        raise GrammarError(
            f"the grammar has {len(grammar.rules):,} rules; the limit is {MAX_RULES:,}",
            None,
            None,
            "split it, or inline small rules",
        )
    check_nesting(grammar)  # before any walk of the tree recurses
    check_text(grammar)
    _check(grammar)
    check_size(grammar)  # what it can force, counted (fsmviz.grammar.limits)
    return grammar


def _check(grammar: Grammar) -> None:
    names = grammar.names
    if grammar.start not in names:
        first = grammar.rules[0]
        raise GrammarError(
            f"there is no {grammar.start!r} rule to start from",
            first.line,
            first.column,
            f"add one: {grammar.start}{' ::=' if grammar.format == 'gbnf' else ':'} {first.name}",
        )
    terminal = {rule.name: rule.terminal for rule in grammar.rules}
    for rule in grammar.rules:
        for ref in refs(rule.body):
            if ref.name not in names:
                same = [n for n in sorted(names) if n.lower() == ref.name.lower()]
                close = same or difflib.get_close_matches(ref.name, sorted(names), n=1)
                if close:
                    hint = f"did you mean {close[0]!r}?"
                else:
                    hint = f"define it: {ref.name}" + (
                        " ::= ..." if grammar.format == "gbnf" else ": ..."
                    )
                raise GrammarError(
                    f"the rule {ref.name!r} is used but never defined",
                    ref.line,
                    ref.column,
                    hint,
                )
            if rule.terminal and not terminal[ref.name]:
                raise GrammarError(
                    f"the terminal {rule.name} uses the rule {ref.name}; a terminal may use "
                    "only terminals",
                    ref.line,
                    ref.column,
                    f"make {rule.name} a rule (lowercase) or {ref.name} a terminal (UPPERCASE)",
                )
        _check_regexes(rule.body, rule)
    _check_terminal_cycles(grammar)
    reachable = _reachable(grammar)
    productive = productive_rules(grammar)
    stuck = [r for r in grammar.rules if r.name in reachable and r.name not in productive]
    # Name a rule that needs itself first (the cause), not the rules that merely use it.
    stuck.sort(key=lambda r: r.name not in {ref.name for ref in refs(r.body)})
    if stuck:
        rule = stuck[0]
        raise GrammarError(
            f"no text can finish the rule {rule.name!r}: every choice needs "
            f"{rule.name!r} again (or another rule that never finishes)",
            rule.line,
            rule.column,
            f"give {rule.name} a choice that ends without itself",
        )


def _check_regexes(node: Node, rule) -> None:
    if isinstance(node, RegexTerm):
        try:
            compile_regex(node_regex(node) or "")
        except RegexError as error:
            raise GrammarError(
                f"the regex /{node.pattern}/ in {rule.name!r} cannot be used: {error.message}",
                rule.line,
                rule.column,
                error.hint,
            ) from None
        except FsmvizError as error:
            raise GrammarError(
                f"the regex /{node.pattern}/ in {rule.name!r} cannot be used: {error}",
                rule.line,
                rule.column,
                None,
            ) from None
    for child in children(node):
        _check_regexes(child, rule)


def _check_terminal_cycles(grammar: Grammar) -> None:
    bodies = {rule.name: rule for rule in grammar.rules if rule.terminal}
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            rule = bodies[name]
            raise GrammarError(
                f"the terminal {name} refers to itself ({' -> '.join([*path, name])}); "
                "a terminal must be regular",
                rule.line,
                rule.column,
                f"make {name.lower()} a rule (lowercase): rules may recurse",
            )
        if name in done:
            return
        for ref in refs(bodies[name].body):
            if ref.name in bodies:
                visit(ref.name, [*path, name])
        done.add(name)

    for name in bodies:
        visit(name, [])


def _reachable(grammar: Grammar) -> set[str]:
    bodies = {rule.name: rule.body for rule in grammar.rules}
    seen, todo = set(), [grammar.start]
    for piece in grammar.ignore:
        todo += [ref.name for ref in refs(piece)]
    while todo:
        name = todo.pop()
        if name in seen or name not in bodies:
            continue
        seen.add(name)
        todo += [ref.name for ref in refs(bodies[name])]
    return seen


def unreachable(grammar: Grammar) -> list[str]:
    """Rules the start rule never uses, in the order written.

    >>> unreachable(compile_grammar('root ::= "a"\\nb ::= "b"'))
    ['b']
    """
    reached = _reachable(grammar)
    return [rule.name for rule in grammar.rules if rule.name not in reached]


def productive_rules(grammar: Grammar) -> set[str]:
    """Rules that derive at least one finite text (the least fixed point)."""
    return _least_fixed_point(grammar, _finishes)


def _least_fixed_point(grammar: Grammar, holds: Callable[[Node, set[str]], bool]) -> set[str]:
    """The rules for which ``holds(body, found)`` becomes true, adding rules to ``found``
    until nothing changes. ``a: b "x"`` is productive once ``b`` is: a rule waits for the
    rules it calls, so the loop runs until no rule is added."""
    bodies = {rule.name: rule.body for rule in grammar.rules}
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, body in bodies.items():
            if name not in found and holds(body, found):
                found.add(name)
                changed = True
    return found


def _finishes(node: Node, done: set[str]) -> bool:
    """Whether ``node`` derives some finite text, the rules in ``done`` known to."""
    return _derives(node, done, _reads_something)


def _reads_something(leaf: Node) -> bool:
    if isinstance(leaf, (Literal, RegexTerm)):
        return True
    if isinstance(leaf, CharSet):
        return bool(leaf.positive())
    raise TypeError(leaf)


def nullable_rules(grammar: Grammar) -> set[str]:
    """Rules that can derive the empty text."""
    return _least_fixed_point(grammar, _nullable)


def _nullable(node: Node, done: set[str]) -> bool:
    """Whether ``node`` derives the empty text, the rules in ``done`` known to."""
    return _derives(node, done, _reads_empty)


def _reads_empty(leaf: Node) -> bool:
    if isinstance(leaf, Literal):
        return leaf.text == ""
    if isinstance(leaf, RegexTerm):
        return compile_regex(node_regex(leaf) or "").accepts("")
    if isinstance(leaf, CharSet):
        return False
    raise TypeError(leaf)


def _derives(node: Node, done: set[str], leaf: Callable[[Node], bool]) -> bool:
    """Whether ``node`` derives a text of the kind ``leaf`` says its terminals can read,
    the rules in ``done`` being known to: a sequence when all its items do, a choice when
    one option does, a repeat when it may be taken no times or its item does.

    >>> from fsmviz.grammar.tree import Seq
    >>> _derives(Seq((RuleRef("a"), Literal(""))), {"a"}, _reads_empty)
    True
    """
    if isinstance(node, RuleRef):
        return node.name in done
    if isinstance(node, Seq):
        return all(_derives(item, done, leaf) for item in node.items)
    if isinstance(node, Alt):
        return any(_derives(option, done, leaf) for option in node.options)
    if isinstance(node, Repeat):
        return node.min == 0 or _derives(node.item, done, leaf)
    return leaf(node)


def left_recursive(grammar: Grammar) -> list[str]:
    """Rules that can reach themselves before reading any text (``e ::= e "+" t``).
    llama.cpp refuses these; Earley parsers (fsmviz's recognizer, llguidance) do not.

    >>> left_recursive(compile_grammar('root ::= e\\ne ::= e "+" "1" | "1"'))
    ['e']
    """
    nullable = nullable_rules(grammar)
    first: dict[str, set[str]] = {
        rule.name: _leading(rule.body, nullable) for rule in grammar.rules
    }
    found = []
    for rule in grammar.rules:
        seen, todo = set(), list(first[rule.name])
        while todo:
            name = todo.pop()
            if name == rule.name:
                found.append(rule.name)
                break
            if name in seen or name not in first:
                continue
            seen.add(name)
            todo += first[name]
    return found


def _leading(node: Node, nullable: set[str]) -> set[str]:
    """Rules that may be used before any text is read in ``node``."""
    if isinstance(node, RuleRef):
        return {node.name}
    if isinstance(node, Seq):
        out: set[str] = set()
        for item in node.items:
            out |= _leading(item, nullable)
            if not _nullable(item, nullable):
                break
        return out
    if isinstance(node, Alt):
        return set().union(*(_leading(option, nullable) for option in node.options))
    if isinstance(node, Repeat):
        return _leading(node.item, nullable)
    return set()
