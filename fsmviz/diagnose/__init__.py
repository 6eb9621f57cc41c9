"""The stall doctor: why a regex-guided generation loops, truncates or stalls, in plain words.

Constrained generation fails in a handful of recurring ways, and each leaves a trace in
either the pattern, the vocabulary, or the run itself:

* **The vocabulary cannot spell it.** The DFA allows a character that no token of this
  vocabulary can write (SmolLM2 has no token containing ``\\x04``). If every route to a match
  needs such a character, no generation can ever finish (``dead_end``).
* **The pattern never has to end.** A cycle in the DFA (``[a-zA-Z0-9-.]+``, flexible
  whitespace ``[ \\n]*``) lets a model that does not choose to stop ride it forever. Seed 002's
  ``ian.swannack@gmail.com.au.I.I.I.I`` is exactly this: the model meant ``.`` as the end of
  its sentence, the pattern read it as another domain label (``unbounded_repeat``, ``loop``).
* **The output stops too early**, at the shorter option of ``hot|hotel`` (``prefix_alternative``).
* **The budget is too small**: the fewest tokens from the start to a match exceed
  ``max_tokens`` (``budget``), or a run was cut off before it matched (``truncation``).
* **The model is being dragged.** The *valid mass*, the model's own probability of all
  allowed tokens, collapses: the pattern forces text the model did not want
  (``valid_mass_collapse``).

``diagnose(pattern, vocab, trace=None)`` returns ``Finding`` records, errors first. Static
findings need only the pattern and the vocabulary; a ``Trace`` adds the dynamic ones. With
``vocab=None`` (no tokenizer at hand) only the pattern-level checks run, and a finding says
which token-level checks were skipped.

Where the pitfalls come from: seed 002 (summed valid mass, the ``.I.I.I`` email, digits
without end), seed 001 (truncation at the token limit and the safe end), seed 003 (``hot``
vs ``hotel`` needs an end marker), and the trackers: endless whitespace in JSON (outlines
#484, #839; xgrammar #345, #412; llama.cpp bounds it as ``[ \\t]{0,20}`` in #7866), ASCII
``\\d \\w \\s`` in interegular/outlines, and the leading-space problem that token healing
addresses (outlines #161).

Read the modules in this order: ``finding`` (the record), ``case`` (the facts shared by all
findings), ``static`` (with ``spelling``, ``stops`` and ``style``) and ``dynamic`` (the
findings), then what they build on: ``examples`` (readable texts for states),
``fragments`` (the pattern's text in pieces), ``loops`` (cycles named by the pattern's
repeats), ``rewrites`` (checked suggestions), ``held`` (a suggestion kept only if the doctor,
run on it, no longer reports its finding there), ``checks`` (a run's fix re-run on the same prompt
and seed before it is offered: no fix without a measured improvement) and ``text``
(wording). Beside the regex
doctor: ``grammar`` (the grammar doctor, by rule), ``schema`` (findings named by JSON
pointer) and ``engines`` (how the engines of vLLM, SGLang and TGI treat the pattern).

Everything here is a pure function of (pattern, vocabulary, trace); the only state kept
between calls is in bounded caches.
"""

from __future__ import annotations

from fsmviz.automaton.syntax import RegexError
from fsmviz.diagnose.case import Case
from fsmviz.diagnose.dynamic import dynamic_findings
from fsmviz.diagnose.examples import example_prefixes
from fsmviz.diagnose.finding import KINDS, RANK, Finding, Severity
from fsmviz.diagnose.static import index_too_large, regex_error, static_findings
from fsmviz.errors import InputError
from fsmviz.generation.constraint import RegexConstraint
from fsmviz.generation.trace import Trace
from fsmviz.grammar.tree import Grammar
from fsmviz.tokens.index import IndexTooLarge, build_index
from fsmviz.tokens.vocab import Vocabulary

__all__ = [
    "KINDS",
    "TOKEN_KINDS",
    "Finding",
    "Severity",
    "diagnose",
    "example_prefixes",
]


TOKEN_KINDS = ("dead_end", "unreachable_char", "budget", "index_size")
"""Finding kinds that count tokens of a real vocabulary: skipped without one."""


def diagnose(
    pattern: str | Grammar | RegexConstraint,
    vocab: Vocabulary | None,
    trace: Trace | None = None,
    *,
    max_tokens: int | None = None,
    collapse_threshold: float = 0.05,
    engines: bool = False,
) -> list[Finding]:
    r"""Why ``pattern`` may stall with ``vocab`` (and, given a ``trace``, why that run did).

    Never raises for a bad pattern: it becomes a single ``regex_error`` finding. When
    ``max_tokens`` is not given it is taken from ``trace.options`` if present. The trace
    must come from this pattern and vocabulary (its states are the index's states);
    ``InputError`` (a ``ValueError``) otherwise. ``collapse_threshold`` is the valid mass
    below which a step counts as a collapse. ``vocab=None``: the pattern-level checks
    only. ``engines`` adds how the engines of vLLM, SGLang and TGI treat the pattern
    (``fsmviz.diagnose.engines``; a second or two). A ``Grammar`` (``compile_grammar``)
    gets the grammar doctor (``fsmviz.diagnose.grammar``): rules that cannot finish or be
    reached, loops, overlaps, terminals no token spells, and a run's collapses named by
    rule and position. A ``RegexConstraint`` (``fsmviz.constraint(regex=...)``) is
    diagnosed with the index it already holds (over its own vocabulary), built once.

    A pattern that needs a character no token can write is a dead end; a repeat with no
    bound is a loop the model may never leave (the finding's ``suggestion`` bounds it):

    >>> from fsmviz import Vocabulary
    >>> vocab = Vocabulary.from_strings(["a", "b", "1", "2", "."], eos_token="<eos>")
    >>> [(f.kind, f.severity, f.states) for f in diagnose("(a|b)*c", vocab)]
    [('dead_end', 'error', (0,))]
    >>> loops = [f for f in diagnose(r"[0-9]+\.[0-9]+", vocab) if f.kind == "unbounded_repeat"]
    >>> [f.suggestion for f in loops]
    ['[0-9]{1,12}\\.[0-9]+', '[0-9]+\\.[0-9]{1,12}']
    """
    if trace is not None and not isinstance(trace, Trace):
        raise InputError(
            f"trace must be a Trace (what generate returns), not {type(trace).__name__}"
        )
    if isinstance(pattern, Grammar):
        return _grammar_findings(pattern, vocab, trace, max_tokens, collapse_threshold)
    built = pattern if isinstance(pattern, RegexConstraint) else None
    if built is not None:
        pattern = built.pattern
        if vocab is not None and built.vocab.fingerprint != vocab.fingerprint:
            built = None  # built over another vocabulary: its index does not answer here
    if vocab is None:
        return _pattern_only(pattern, max_tokens)
    try:
        index = built.index if built is not None else build_index(pattern, vocab)
    except RegexError as error:
        return [regex_error(pattern, error)]
    except IndexTooLarge as error:  # the pattern is fine; no token-level check can run
        return [index_too_large(error)]
    if trace is not None:
        _check_states(trace, index.byte_dfa.num_states)
    if max_tokens is None and trace is not None:
        max_tokens = trace.options.max_tokens if trace.options else None
    case = Case(pattern, index, vocab)
    found: list[Finding] = []
    if trace is not None:
        try:
            found += dynamic_findings(case, trace, collapse_threshold, max_tokens)
        except IndexTooLarge as error:
            found.append(index_too_large(error))
    found += [f for f in static_findings(case, max_tokens) if f not in found]
    if engines:  # outlines-core, llguidance, xgrammar: see fsmviz.peers.regex
        from fsmviz.diagnose.engines import engine_findings

        found += engine_findings(pattern, vocab)
    return sorted(found, key=lambda f: RANK[f.severity])


def _check_states(trace: Trace, known: int) -> None:
    """Refuse a trace whose states are not among the index's ``known`` states: it is the
    run of another pattern, and its steps would point at the wrong places."""
    if any(not 0 <= s < known for st in trace.steps for s in (st.state_before, st.state_after)):
        raise InputError(
            "the trace's states do not belong to this pattern's index: pass the trace "
            "of a run of this same pattern"
        )


def _pattern_only(pattern: str, max_tokens: int | None) -> list[Finding]:
    """The checks that need no tokenizer, run over single bytes; the rest named as skipped."""
    table = (*(bytes([b]) for b in range(256)), b"")
    found = diagnose(pattern, Vocabulary("bytes", table, 256, {256: "<eos>"}), None)
    if any(f.kind == "regex_error" for f in found):
        return found
    skipped = Finding(
        "no_tokenizer",
        "info",
        "No tokenizer is loaded, so only the pattern-level checks ran; skipped: whether the "
        "vocabulary can spell every character (dead_end, unreachable_char) and the fewest "
        "tokens to a match (budget). Load a model or its tokenizer to run them.",
    )
    return [f for f in found if f.kind not in TOKEN_KINDS] + [skipped]


def _grammar_findings(
    grammar: Grammar,
    vocab: Vocabulary | None,
    trace: Trace | None,
    max_tokens: int | None,
    collapse_threshold: float,
) -> list[Finding]:
    from fsmviz.diagnose.grammar import diagnose_grammar, grammar_collapses

    if max_tokens is None and trace is not None and trace.options:
        max_tokens = trace.options.max_tokens
    found = diagnose_grammar(grammar, vocab, max_tokens=max_tokens)
    if trace is not None:
        found += grammar_collapses(grammar, trace, collapse_threshold)
    return found
