"""``clear_pattern_caches()``: ``fsmviz.clear_caches()`` short of the vocabularies and models;
``forget_indexes()``: the kept token indexes alone.

A test that needs a cold start for a pattern, a schema or a grammar (a DFA built afresh, a
parse counted, a budget spent again) need not drop what was read from a vocabulary or a
model: ``clear_caches()`` also dropped the bundled vocabulary's trie (~1 CPU-s to build
again) and the loaded models (seconds each), paid by whichever test next used them on that
worker. Everything else is emptied as ``clear_caches()`` empties it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from fsmviz import cache
from fsmviz.generation import models
from fsmviz.tokens import encoding, index, trie, vocab
from fsmviz.tokens.fast import classwalk, dawg, levelwalk, packwalk

KEPT = {  # module: its caches of what was read from a vocabulary, a tokenizer or a model
    index: ["_CHILD_BYTES"],
    trie: ["_TRIES"],
    dawg: ["_DAWGS"],
    packwalk: ["_PACKED"],
    classwalk: ["_CLASS_TRIES", "_LAYOUTS", "_SHAPES", "_BYTE_CLASSES"],
    levelwalk: ["_LEVELS"],
    vocab: ["_FROM_TOKENIZER", "_bundled_vocabulary", "_byte_decoder", "_byte_translation"],
    encoding: ["_TOKENIZERS", "byte_tokenizer"],
    models: ["_MODELS"],
}
"""A name the engine no longer has is skipped: its cache is then emptied, as by
``clear_caches()`` (a test may pay more, never see a warm cache it did not expect)."""


def _kept_caches() -> Iterator[object]:
    """The kept caches and memoized functions (an ``OwnedCache``'s inner cache) the engine
    still has."""
    for module, names in KEPT.items():
        for name in names:
            found = getattr(module, name, None)
            if found is not None:
                yield getattr(found, "_cache", found)


def _kept() -> set[int]:
    """The ids of ``_kept_caches()``."""
    return {id(found) for found in _kept_caches()}


def clear_pattern_caches() -> None:
    """Empty every cache ``clear_caches()`` empties but those of vocabularies and models."""
    kept = _kept()
    for built in list(cache._ALL):
        if id(built) not in kept:
            built.clear()
    for function in list(cache._FUNCTIONS):
        if id(function) not in kept:
            function.cache_clear()


@contextlib.contextmanager
def kept_through_clear() -> Iterator[None]:
    """Put back, after the block, what the kept caches (``KEPT``) held before it (their
    memoized functions' results cannot be): a test of ``clear_caches()`` itself need not
    leave the next test on its worker to read the model and the vocabulary's trie again
    (~1.2 CPU-s for the model alone)."""
    held = [
        (found, list(found._items.items()))  # looks inside on purpose
        for found in _kept_caches()
        if isinstance(found, cache.BoundedCache)
    ]
    try:
        yield
    finally:
        for built, items in held:
            for key, value in items:
                built._keep(key, value)


def forget_indexes() -> None:
    """Drop the kept token indexes, and only them: the next ``build_index`` builds afresh,
    and ``built_index`` tells whether something built one since."""
    index._INDEXES.clear()  # looks inside on purpose (as test_package.py does)
