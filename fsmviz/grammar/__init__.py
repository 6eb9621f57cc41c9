"""Context-free grammars in (placeholder of the rules branch: the grammar branch's own
``__init__`` replaces it on merge)."""
