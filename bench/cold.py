"""Cold measurements without private names: fresh pattern strings.

A pattern string no cache has seen yet makes every per-pattern cache miss (the index, the
compiled DFA, the drawing): ``()`` matches the empty string, so ``pattern + "()" * n`` is
the same language under a new string. (Deliberately no cache reset: per-vocabulary work,
such as the vocabulary trie, is set-up, and stays warm as the peers' tokenizers do.)
"""

from __future__ import annotations

from itertools import count


class Fresh:
    """``fresh()`` returns the pattern with ``()`` appended 1, 2, 3... times."""

    def __init__(self, pattern: str) -> None:
        self.pattern, self.counter = pattern, count(1)

    def __call__(self) -> str:
        return self.pattern + "()" * next(self.counter)
