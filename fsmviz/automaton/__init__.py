"""Layer 1, the automata: a regular expression becomes a DFA over characters, then over bytes.

Read in this order:

* ``syntax``  which patterns are regular, and a clear error (where, what to write) for the rest;
* ``dfa``     pattern -> minimal character DFA, the one that is drawn;
* ``bytedfa`` the same DFA read one UTF-8 byte at a time (tokens are bytes, not characters);
* ``graph``   backward breadth-first search: how far each state is from a match.

May import: the shared modules beside the folders (``fsmviz.errors``, ``cache``,
``printable``, ``arrays``). Nothing here knows of tokens or models.
"""
