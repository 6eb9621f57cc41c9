"""Speed only: the same answers as the plain walk of ``fsmviz.tokens.index``, faster.

A newcomer can skip this folder: every function here returns exactly what a plain
per-state walk of the vocabulary trie returns, and the tests hold each to that walk or to the
naive oracle.

* ``rowwalk`` one state's row, whole subtrees of the trie taken at once (numpy arrays;
  tested against the plain walk in ``tests/test_index_rows.py``); ``classwalk`` the same
  row over the *class trie*, each byte replaced by its class, so tokens a pattern cannot
  tell apart share one path;
* ``packwalk`` a wide state's packed mask (``TokenIndex.bitmask``) without its row, from
  words packed once per vocabulary; the shortcuts over it: ``chains`` the tokens within
  the bytes a state's chain reads onwards, the few others walked below its frontier
  (``walkbelow``, some taken unwalked by ``safebytes``; ``tests/test_packed_masks.py``);
  ``closedsets`` states whose bytes lead back among themselves
  (``tests/test_ascii_closed.py``); ``searchwords`` a search's merged blocks
  (``tests/test_search_words.py``); ``firstbytes`` a state few tokens begin from
  (``tests/test_few_first.py``); ``knownloops`` a state that reads at least what a JSON
  string's loop or ``.*`` reads, from that loop's mask, made once per vocabulary, and the
  few tokens it leaves out walked (``tests/test_knownloops.py``);
* ``quotient`` a byte DFA's states merged where no token tells them apart (a search's
  needle states read as one loop), walked by ``rowwalk.Merged`` (``tests/test_quotient.py``);
* ``successors`` where a state's tokens can lead, without listing the tokens, by byte
  classes (``tests/test_index_classes.py``, ``tests/test_index_oracle.py``); ``readwalk``
  the same pairs where a pattern reads few bytes (IPv6: hex digits and ``:``), every
  start at once down the trie's branches of readable bytes (``tests/test_read_walk.py``);
* ``dawg`` the vocabulary as a minimal automaton, for successor sets of wide states
  (``tests/test_dawg.py``);
* ``derivatives`` the first allowed set without building the whole DFA, by regex
  derivatives (``tests/test_derivatives.py``: equal to ``build_index(...).allowed_tokens(0)``),
  over ``regex_terms``: a pattern's regexes, each made once, read lazily from its syntax tree;
  and ``counted_rows``: a counted repeat's copies (``[^\n]{1,20}``) lead alike, so their
  rows are written from one plan, not derived one by one;
  ``levelwalk`` the walk of the first allowed set, the trie read level by level (every
  node's state from its parent's; ``tests/test_levelwalk.py``).

May import: ``fsmviz.tokens``, ``fsmviz.automaton`` and the shared modules.
"""
