"""Drafts (``draft_tokens``): guess the next tokens from the text so far, check them in one pass.

Generated text repeats itself: JSON keys, indentation, a name from the prompt. *Prompt
lookup* finds the latest earlier place where the last two or three tokens occurred and
guesses that what followed them there follows again (``lookup``). The step loop
(``fsmviz.generation.generate``) feeds the guesses in the same forward pass as the token
before them, so the model gives its logits at every guessed position at once; sampling
then runs at each position in turn, and a draft is kept while the sample equals it
(``fsmviz.generation.samplers.sample`` keeps it exactly as often as it would have drawn it,
so the output's distribution does not change). One pass can so write several tokens.

A draft the pattern forbids could never be kept, so ``draft_chain`` cuts the guesses at
the first one the index rejects, and at EOS.
"""

from __future__ import annotations

import numpy as np

from fsmviz.tokens.index import TokenIndex

__all__ = ["draft_chain", "lookup"]


def lookup(context: list[int], count: int, longest: int = 3, shortest: int = 2) -> list[int]:
    """Prompt-lookup drafting: find the latest earlier place where the last ``n`` tokens
    of ``context`` occurred (``n`` from ``longest`` down to ``shortest``) and return up to
    ``count`` tokens that followed it there. Repeated structure (JSON keys, indentation,
    a name from the prompt) is guessed right; elsewhere there is no match and no draft.

    >>> lookup([1, 2, 3, 9, 8, 1, 2, 3], 4)   # after the trigram 1 2 3 came 9 8 1 2
    [9, 8, 1, 2]
    >>> lookup([1, 2, 3, 4], 3)               # nothing repeats: no draft
    []
    """
    tokens = np.asarray(context)
    for n in range(longest, shortest - 1, -1):
        if len(tokens) <= n:
            continue
        tail = tokens[-n:]
        windows = np.lib.stride_tricks.sliding_window_view(tokens[:-1], n)
        hits = np.flatnonzero((windows == tail).all(axis=1))
        if len(hits):
            start = int(hits[-1]) + n
            return tokens[start : start + count].tolist()
    return []


def draft_chain(
    context: list[int], state: int, count: int, eos: int, index: TokenIndex | None
) -> list[int]:
    """Up to ``count`` tokens guessed after ``context`` (``lookup``), cut before EOS and
    before the first token the pattern forbids from ``state`` (``index`` None: no pattern).

    >>> from fsmviz import Vocabulary, build_index
    >>> vocab = Vocabulary.from_strings(["a", "b", "c"], eos_token="</s>")
    >>> index = build_index("(ab)+", vocab)
    >>> draft_chain([0, 1, 0, 1, 0], 1, 4, vocab.eos_token_id, index)  # "a b a" came before
    [1, 0]
    >>> draft_chain([0, 2, 0], 1, 4, vocab.eos_token_id, index)  # "c" is never allowed
    []
    """
    drafts = []
    for token in lookup(context, count):
        if token == eos:
            break
        if index is not None:
            state = index.next_state(state, token)
            if state is None:
                break
        drafts.append(token)
    return drafts
