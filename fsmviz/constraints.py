"""The one place a constraint is built: ``fsmviz.constraint(regex=|schema=|grammar=, vocab=)``.

A page action (Generate, a grammar run, a schema run) or a script builds its constraint
here, once, and hands the result down to everything that reads it: the drawing, the
doctor, ``stream`` and every step's allowed set. What comes back:

* ``regex=``: a ``RegexConstraint`` (``fsmviz.Constraint``): the pattern's DFA and its
  token index over ``vocab``, each compiled once;
* ``schema=``: the schema compiled once (``compile_schema``); on the regex path, its
  regex's ``RegexConstraint`` (built from the schema's own DFA: nothing compiled twice);
  on the grammar path the ``SchemaGrammar`` itself, whose run (``generation_run``) steers
  by llguidance, one ``GrammarCursor`` (a ``Constraint``) per run;
* ``grammar=``: the ``Grammar`` compiled once (``compile_grammar``), run the same way.

Everything it returns is what ``stream``, ``generate`` and ``diagnose`` take.

>>> from fsmviz import Vocabulary
>>> vocab = Vocabulary.from_strings(["1", "2", "."], eos_token="</s>")
>>> c = constraint(regex=r"[0-9]\\.[0-9]", vocab=vocab)
>>> c.text, c.shortest_completion(c.initial_state), isinstance(c, Constraint)
('[0-9]\\\\.[0-9]', 3, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsmviz.errors import InputError
from fsmviz.generation.constraint import Constraint, RegexConstraint, regex_constraint
from fsmviz.grammar import Grammar, compile_grammar
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["Constraint", "RegexConstraint", "constraint"]


def constraint(
    regex: str | None = None,
    *,
    schema: str | Mapping[str, Any] | type | bool | None = None,
    grammar: str | Grammar | None = None,
    vocab: Vocabulary | None = None,
    whitespace: str | None = None,
) -> Any:
    """Exactly one of ``regex``, ``schema`` or ``grammar``, compiled once (see the module's
    docstring); ``vocab`` (the model's vocabulary) is needed by a regex and a regex-path
    schema, whose index is over it; ``whitespace`` is ``compile_schema``'s. Raises what the
    compilers raise (``RegexError``, ``SchemaError``, ``GrammarError``) and ``InputError``
    for a call that gives none or more than one."""
    given = [name for name, v in (("regex", regex), ("schema", schema), ("grammar", grammar))
             if v is not None]  # fmt: skip
    if len(given) != 1:
        raise InputError(
            "give exactly one of regex=, schema= or grammar= "
            f"({'none' if not given else ' and '.join(given)} given)"
        )
    if grammar is not None:
        return grammar if isinstance(grammar, Grammar) else compile_grammar(grammar)
    if schema is not None:
        from fsmviz.schema.convert import compile_schema  # outlines-core loads with it

        compiled = compile_schema(schema, whitespace)
        if not isinstance(getattr(compiled, "regex", None), str):
            return compiled  # the grammar path: it brings its own run
        return regex_constraint(compiled.dfa or compiled.regex, _vocab(vocab))
    return regex if isinstance(regex, RegexConstraint) else regex_constraint(regex, _vocab(vocab))


def _vocab(vocab: Vocabulary | None) -> Vocabulary:
    if vocab is None:
        raise InputError(
            "a regex constraint is built over a vocabulary: pass vocab= (the model's, "
            "model.vocab, or Vocabulary.bundled())"
        )
    return vocab
