"""Fast-forward (seed 002): where the pattern leaves one way to go on, write it unasked.

In ``\\{"title": "[^"]*"\\}`` every run starts with the constant ``{"title": "``: the model
has no choice to make, so asking it token by token only costs time. The step loop
(``fsmviz.generation.generate``) asks ``forced_chain`` for the tokens of that constant
text, feeds all of them through the model in one forward pass, and records them as
``forced`` steps (their statistics still come from the model's logits).

Two things make the chain shorter than the constant text:

* **a token that could cross the boundary.** ``"\\n"`` then indentation is often one
  token (``"\\n\\t"``). Where an allowed token reaches past the constant text, how to
  cross it is the model's choice, so the chain stops before it.
* **the safe end.** The caller's ``fits`` says whether a forced token still leaves time to
  finish a match; the chain stops before one that does not.

With a toy vocabulary a state can also have a single allowed token without any constant
*character* ahead (the only token is longer than one character); that token is forced too.
"""

from __future__ import annotations

from collections.abc import Callable

from fsmviz.automaton.dfa import SURROGATES
from fsmviz.tokens.index import TokenIndex
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["forced_chain", "forced_text"]


def forced_text(index: TokenIndex, state: int) -> str:
    """The constant text ahead of ``state``: follow the DFA while exactly one character is
    possible and the text so far is not yet a match. It stops before a lone surrogate
    (``\\ud800`` in a pattern): no UTF-8 text, and so no tokenizer, can write one.

    >>> from fsmviz import Vocabulary, build_index
    >>> vocab = Vocabulary.from_strings(['{"', 'a', '":', '1', '}'], eos_token="</s>")
    >>> forced_text(build_index(r'\\{"a":[0-9]\\}', vocab), 0)
    '{"a":'
    """
    if not index.is_char_state(state):
        return ""
    dfa = index.dfa
    chars = []
    while not dfa.is_accepting(state) and len(dfa.transitions[state]) == 1:
        ((k, target),) = dfa.transitions[state].items()
        cls = dfa.classes[k]
        if cls.others or len(cls.chars) != 1:
            break
        char = next(iter(cls.chars))
        if SURROGATES[0] <= ord(char) <= SURROGATES[1]:
            break
        chars.append(char)
        state = target
    return "".join(chars)


def forced_chain(
    index: TokenIndex,
    vocab: Vocabulary,
    encode: Callable[[str], list[int]],
    state: int,
    budget: int,
    fits: Callable[[int, int, int], bool],
    accepting: Callable[[int], bool],
) -> list[tuple[int, int]]:
    """The tokens of the only possible continuation from ``state``, as (token, state
    after) pairs, at most ``budget`` of them; empty when the model has a choice to make.

    ``encode`` is the tokenizer (the constant text is tokenized as the model would write
    it); ``fits(before, after, left)`` says whether a token from ``before`` to ``after``
    still leaves a match finishable in the ``left`` tokens after it (the safe end; always
    True without one); ``accepting`` is the run's own test of a state.

    >>> from fsmviz import Vocabulary, build_index
    >>> vocab = Vocabulary.from_strings(['{"', 'a', '":', '1', '2', '}'], eos_token="</s>")
    >>> index = build_index(r'\\{"a":[0-9]\\}', vocab)
    >>> encode = {'{"a":': [0, 1, 2]}.get          # what a tokenizer would say
    >>> chain = forced_chain(index, vocab, encode, 0, 8, lambda *_: True, index.is_accepting)
    >>> [vocab.token_text(token) for token, _ in chain]   # then a digit: the model's choice
    ['{"', 'a', '":']
    """
    text = forced_text(index, state)
    ids = encode(text) if text else []
    chain: list[tuple[int, int]] = []
    left = len(text.encode())  # bytes of constant text still ahead
    for token in ids[:budget]:
        after = index.next_state(state, token)
        if after is None or not fits(state, after, budget - len(chain) - 1):
            return chain
        if any(len(vocab.token_bytes(t)) > left for t in index.row(state).tokens):
            # A token here reaches past the constant text (``"\n"`` + indentation as
            # one token ``"\n\t"``): how to cross the boundary is the model's choice.
            # Forcing the short token would split text the model writes as one token.
            return chain
        chain.append((token, after))
        left -= len(vocab.token_bytes(token))
        state = after
    while len(chain) < budget and not accepting(state):
        row = index.row(state)  # a single allowed token is forced too (toy vocabs)
        if len(row.tokens) != 1:
            break
        chain.append((int(row.tokens[0]), int(row.targets[0])))
        state = int(row.targets[0])
    return chain
