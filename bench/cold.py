"""Cold measurements without private names: fresh pattern strings.

A pattern string no cache has seen yet makes every per-pattern cache miss (the index, the
compiled DFA, the drawing): ``()`` matches the empty string, so ``pattern + "()" * n`` is
the same language under a new string. (Deliberately no cache reset: per-vocabulary work,
such as the vocabulary trie, is set-up, and stays warm as the peers' tokenizers do.)
"""

from __future__ import annotations


class Fresh:
    """``fresh(engine)`` returns the pattern with ``()`` appended 1, 2, 3... times, counted
    for each engine apart. An engine's caches only ever see its own strings, so a string
    need only be new to that engine; one count shared by four engines' runs grew the
    suffix to 35 empty groups, and timed the parsers on them more than on the pattern.

    >>> fresh = Fresh("a+")
    >>> fresh("x"), fresh("x"), fresh("y")
    ('a+()', 'a+()()', 'a+()')
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._counts: dict[str, int] = {}

    def __call__(self, engine: str = "") -> str:
        n = self._counts[engine] = self._counts.get(engine, 0) + 1
        return self.pattern + "()" * n
