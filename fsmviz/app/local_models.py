"""The local models a Space offers beside its own: ``python app.py --model A --model B``.

The first ``--model`` (or the first name of ``FSMVIZ_MODEL="A,B"``) is the app's model, the
menu's first entry (``backend.BUNDLED``), loaded at start as always, unless it is named
(``NAME=SOURCE``): then the app keeps its default (bundled) model. Each other one is
*offered*: listed in the same ``backend`` menu as the configured servers, by its name
(``NAME=SOURCE`` names it; a bare hub id or folder is its own name), and loaded only when a
visitor first picks it, in the background, as the app's own model is (the page says
"Loading ..." meanwhile, and the doctor reads the model's tokenizer alone until then).

Memory is bounded: at most ``KEPT`` offered models are held at once; picking a third lets
the least recently picked one go (``load_model``'s own cache keeps two as well), so a
Space offering six models holds the app's model and two more, never seven. A run that
holds a model it was given finishes on it.

Once picked, a model is the run's in everything: its tokens are the ones allowed and drawn,
the doctor reads its vocabulary, the trace and the downloads are in its token ids.

    --model smollm --model llama=/models/llama3 --model Qwen/Qwen2-0.5B-Instruct
      -> the app's model: smollm;  offered: 'llama' (/models/llama3), 'Qwen/Qwen2-0.5B-Instruct'
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from fsmviz.cache import BoundedCache
from fsmviz.errors import InputError

__all__ = [
    "KEPT",
    "configure_models",
    "is_offered",
    "offered_names",
    "offered_source",
    "offered_written",
    "parse_models",
    "split_models",
]

KEPT = 2
"""Offered models held at once (each a ``BackgroundModel``: its weights and vocabulary)."""

_OFFERED: dict[str, str] = {}
"""Menu name -> hub id or folder, set once at start-up (``configure_models``)."""
_WHERE: dict[str, Any] = {"device": None, "threaded": None}
_HELD: BoundedCache[Any] = BoundedCache(maxsize=KEPT)
_LOCK = threading.Lock()


def split_models(given: Iterable[str] | None, env: str | None) -> tuple[str | None, list[str]]:
    """The app's model and the offered ones' entries, from ``--model`` (repeatable; wins)
    or ``FSMVIZ_MODEL`` (names split at commas). A first entry without a name is the app's
    model (as a lone ``--model`` always was); a named one (``NAME=SOURCE``) is offered, and
    the app keeps its default model (the bundled one).

    >>> split_models(["a", "b=hub/b"], "ignored")
    ('a', ['b=hub/b'])
    >>> split_models(None, "org/x, y")
    ('org/x', ['y'])
    >>> split_models(["llama=org/llama", "qwen=org/qwen"], None)
    (None, ['llama=org/llama', 'qwen=org/qwen'])
    >>> split_models(None, None)
    (None, [])
    """
    entries = list(given) if given else (env or "").split(",")
    names = [entry.strip() for entry in entries if entry.strip()]
    if not names or "=" in names[0]:  # all named: the default model stays the app's
        return None, names
    return names[0], names[1:]


def parse_models(entries: Iterable[str], taken: Iterable[str] = ()) -> dict[str, str]:
    """``NAME=SOURCE`` or ``SOURCE`` entries as menu name -> source; ``InputError`` naming
    an entry whose name is empty or already ``taken`` (the bundled entry, a server).

    >>> parse_models(["llama=/models/llama3", "Qwen/Qwen2-0.5B"])
    {'llama': '/models/llama3', 'Qwen/Qwen2-0.5B': 'Qwen/Qwen2-0.5B'}
    """
    models: dict[str, str] = {}
    used = set(taken)
    for entry in entries:
        name, equals, source = (part.strip() for part in str(entry).partition("="))
        if not equals:
            name = source = name
        if not name or not source:
            raise InputError(
                f"--model {entry!r} is not NAME=SOURCE: write it as llama=/models/llama3, "
                "or give the hub id or folder alone"
            )
        if name in used or name in models:
            raise InputError(f"--model {entry!r}: the name {name!r} is taken; choose another")
        models[name] = source
    return models


def configure_models(
    models: Mapping[str, str], device: str | None = None, threaded: bool | None = None
) -> Mapping[str, str]:
    """Offer ``models`` (name -> source) on ``device`` from now on; nothing is loaded yet."""
    with _LOCK:
        _OFFERED.clear()
        _OFFERED.update(models)
        _WHERE.update(device=device, threaded=threaded)
        _HELD.clear()
    return models


def offered_names() -> list[str]:
    """The offered models' names, in the operator's order."""
    return list(_OFFERED)


def offered_written(name: str | None) -> str | None:
    """The name a run on the offered model ``name`` records (``Trace.model``: the model's
    own name, its hub id or folder), or None when ``name`` is not offered."""
    return _OFFERED.get(name) if isinstance(name, str) else None


def is_offered(name: object) -> bool:
    return isinstance(name, str) and name in _OFFERED


def offered_source(name: str) -> Any:
    """The ``BackgroundModel`` of the offered model ``name`` (``get``, ``vocabulary``,
    ``status``, ``ready``, as the app's own): made, and its loading started, on first use;
    kept among the ``KEPT`` most recently used."""
    from fsmviz.generation.models import BackgroundModel

    source = _OFFERED[name]
    where = dict(_WHERE)
    return _HELD.get_or_build(
        (name, source),
        lambda: BackgroundModel(source, where["device"], threaded=where["threaded"]),
    )
