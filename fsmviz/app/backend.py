"""The page's model choice: the bundled model, another local model the operator offers
(``fsmviz.app.local_models``: ``--model A --model B``), or a server the operator configured.

``python app.py --server NAME=URL`` (repeatable) or ``FSMVIZ_SERVERS="NAME=URL,..."`` offers
an OpenAI-compatible server (vLLM) beside the bundled model; the ``backend`` menu (shown
only when a server is configured) picks one per run. A run on a server goes through
``fsmviz.connect``'s ``ServerModel``: the server writes under its own engine's mask, fsmviz
replays every token through its exact automaton, and everything downstream (the lit DFA,
the steps, the chart, the doctor, every step's allowed set) reads the same ``Step``
records as a local run. The ``engine-check`` panel shows the per-step verdict: the
server's visible mask against the exact one.

A visitor only ever *chooses a name*: the page never takes a URL from a visitor (a public
Space that called what a visitor typed would be a server-side request forgery), and what
the page shows and links (permalinks: ``?backend=NAME``) names the server, never its URL.
The engine work is ``fsmviz.generation.server``; this module is the page's glue.
"""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any

from fsmviz.app.local_models import is_offered, offered_names, offered_source
from fsmviz.errors import InputError
from fsmviz.html.engine_check import ENGINE_CHECK_LATER, engine_check_html
from fsmviz.html.text import esc

__all__ = [
    "BUNDLED",
    "ENGINE_CHECK_LATER",
    "RecordedServer",
    "ServerSource",
    "checked_after",
    "configure_servers",
    "engine_check_html",
    "model_for",
    "named_done",
    "named_status",
    "named_statuses",
    "parse_servers",
    "restore_backend",
    "restore_on_load",
    "run_source",
    "server_ways",
    "vocabulary_asked",
    "vocabulary_for",
]


BUNDLED = "bundled model"
"""The menu's name for the model the app runs itself."""
ENV = "FSMVIZ_SERVERS"
"""``NAME=URL,NAME=URL``: servers offered when ``--server`` is not given."""
_SERVERS: dict[str, str] = {}
"""The servers this app offers, by name (``configure_servers``, once at start-up)."""
_CONNECTED: dict[str, Any] = {}
_LOCK = threading.Lock()


def parse_servers(entries: Iterable[str]) -> dict[str, str]:
    """``NAME=URL`` entries (``--server``, or ``FSMVIZ_SERVERS`` split at commas) as a
    mapping; ``InputError`` naming the entry that is not one.

    >>> parse_servers(["prod=http://10.0.0.5:8000", "local=http://127.0.0.1:8000/v1"])
    {'prod': 'http://10.0.0.5:8000', 'local': 'http://127.0.0.1:8000/v1'}
    """
    servers: dict[str, str] = {}
    for entry in entries:
        name, equals, url = (part.strip() for part in str(entry).partition("="))
        if not entry.strip():
            continue
        parts = urllib.parse.urlsplit(url)
        if not equals or not name or parts.scheme not in ("http", "https") or not parts.hostname:
            raise InputError(
                f"--server {entry!r} is not NAME=URL: write it as vllm=http://127.0.0.1:8000"
            )
        if name == BUNDLED or name in servers:
            raise InputError(f"--server {entry!r}: the name {name!r} is taken; choose another")
        servers[name] = url
    return servers


def configure_servers(servers: Mapping[str, str]) -> Mapping[str, str]:
    """Offer ``servers`` (name to URL) on the page from now on; returns them."""
    with _LOCK:
        _SERVERS.clear()
        _SERVERS.update(servers)
        _CONNECTED.clear()
    return servers


def server_names() -> list[str]:
    return list(_SERVERS)


def choices() -> list[str]:
    """The menu: the bundled model first, then each offered local model
    (``local_models``: ``--model A --model B``), then each configured server, by name."""
    return [BUNDLED, *offered_names(), *_SERVERS]


def restore_backend(request: Any) -> Any:
    """A permalink's ``backend=NAME``: that choice when it names a configured server, else
    the menu as it is (a link never carries a URL, and an unknown name is ignored)."""
    import gradio as gr

    q = dict(request.query_params) if request else {}
    name = q.get("backend")
    return name if name in _SERVERS or is_offered(name) else gr.skip()


def restore_on_load(demo: Any, menu: Any) -> None:
    """Wire ``restore_backend`` to the page's load (the link's ``backend=NAME``)."""
    import gradio as gr

    def restore(request: gr.Request) -> Any:
        return restore_backend(request)

    restore.__annotations__["request"] = gr.Request  # how Gradio finds the request
    demo.load(restore, None, menu, show_progress="hidden", api_visibility="private")


def run_source(models: Any, choice: str | None) -> Any:
    """What a run asks for its model: ``models`` (the page's ``BackgroundModel``) for the
    bundled model, else a ``ServerSource`` for the server chosen by name."""
    if not choice or choice == BUNDLED:
        return models
    if is_offered(choice):  # a local model the operator offers: loaded when first picked
        return offered_source(choice)
    return ServerSource(choice)


def vocabulary_for(models: Any, choice: str | None) -> Any:
    """The vocabulary the drawing and the doctor read for the menu's ``choice``, never
    waiting for weights: an offered local model's (its tokenizer alone while it loads), a
    server's once connected (a run connects), else the app's model's."""
    if is_offered(choice):
        return offered_source(choice).vocabulary()
    with _LOCK:
        server = _CONNECTED.get(choice) if choice else None
    return server.vocab if server is not None else models.vocabulary()


def vocabulary_asked(models: Any, backend: str | None) -> Any:
    """The vocabulary an API call (``/diagnose``) reads for ``backend``: the app's model's
    for none (or the bundled model's name), an offered local model's (its tokenizer alone
    while its weights load), a configured server's (connected first, as a run connects).
    A URL, or a name not offered here, is refused as ``model_for`` refuses it."""
    return run_source(models, backend or None).vocabulary()


def model_for(models: Any, backend: str | None, timeout: float) -> Any:
    """The model an API call runs on: ``models``' (the bundled one) for no ``backend``
    (or the bundled model's name), else the configured server of that *name*. A URL, or a
    name not configured here, is refused (``ModelLoadError`` listing the names): an API
    caller, as a visitor, never makes the app call an address it chose.

    >>> model_for(None, "http://10.0.0.1:8000", 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fsmviz.generation.models.ModelLoadError: no server named 'http://10.0.0.1:8000' is ...
    """
    source = run_source(models, backend)
    return source.get(timeout=timeout)


class ServerSource:
    """A configured server as a run's model source (``get`` as ``BackgroundModel.get``):
    connected on first use and kept; each ``get`` a ``RecordedServer`` that keeps the
    runs made through it (the engine check reads them). Failures are ``ModelLoadError``
    messages that name the server by its name, never its URL."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.recorded: RecordedServer | None = None

    def get(self, timeout: float | None = None) -> RecordedServer:
        from fsmviz.generation.models import ModelLoadError
        from fsmviz.generation.server import ServerError, connect

        url = _SERVERS.get(self.name)
        if url is None:
            raise ModelLoadError(
                f"no server named {self.name!r} is offered here; choose one of "
                + ", ".join(map(repr, choices()))
            )
        with _LOCK:
            model = _CONNECTED.get(self.name)
        if model is None:
            try:
                model = connect(url)
            except ServerError as error:
                raise ModelLoadError(named(str(error), url, self.name)) from None
            with _LOCK:
                _CONNECTED[self.name] = model
        self.recorded = RecordedServer(model, self.name)
        return self.recorded

    def vocabulary(self) -> Any:
        return self.get().vocab

    @property
    def runs(self) -> list[Any]:
        return self.recorded.runs if self.recorded is not None else []


def named(message: str, url: str, name: str) -> str:
    """``message`` with the server's address (and its API base) replaced by its name."""
    parts = urllib.parse.urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}"
    for address in sorted({url.rstrip("/"), base + "/v1", base}, key=len, reverse=True):
        message = message.replace(f"the server at {address}", f"the server {name!r}")
        message = message.replace(address, f"server {name!r}")
    return message


class RecordedServer:
    """A ``ServerModel`` for one page run: the same model (every attribute passes
    through), keeping each run's ``ServerRun`` in ``runs`` (the constrained run first,
    then the shadow run), with the server's URL in its notes and errors told by name."""

    def __init__(self, model: Any, name: str) -> None:
        self._model = model
        self.name = name
        self.runs: list[Any] = []

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._model, attribute)

    def server_run(self, pattern: object, options: Any) -> Any:
        run = self._model.server_run(pattern, options)
        self.runs.append(run)
        steps = run.steps
        run.steps = lambda prompt_ids: self._named(run, steps(prompt_ids))
        return run

    def _named(self, run: Any, steps: Iterator[Any]) -> Iterator[Any]:
        """``steps`` with the server named, not addressed, in what the page shows."""
        from fsmviz.generation.server import ServerError

        url = self._model.url
        try:
            for step in steps:
                run.notes[:] = [named(note, url, self.name) for note in run.notes]
                yield step
        except ServerError as error:
            raise ServerError(named(str(error), url, self.name)) from None
        finally:
            run.notes[:] = [named(note, url, self.name) for note in run.notes]


def engine_checked(
    updates: Callable[[Any], dict], component: Any, source: Any
) -> Callable[[Any], dict]:
    """``updates`` (a frame's updates) with the ``engine-check`` panel set once the run's
    trace is there (``component`` None: the page has no panel, nothing added)."""
    if component is None:
        return updates

    def with_check(frame: Any) -> dict:
        out = updates(frame)
        if frame.trace is not None:
            out[component] = engine_check_html(source, frame.trace.steps)
        return out

    return with_check


def named_done(updates: Callable[[Any], dict], status: Any, choice: str | None) -> Callable:
    """``updates`` (a frame's updates) with a finished run's status naming the offered
    local model the menu chose (``named_status``).

    >>> from fsmviz.app.local_models import configure_models
    >>> _ = configure_models({"llama": "/models/llama"})
    >>> said = named_done(lambda frame: {"status": frame}, "status", "llama")
    >>> said("Done: 3 tokens in 0.1 s")["status"], said("Generating…")["status"]
    ('Done on llama: 3 tokens in 0.1 s', 'Generating…')
    >>> named_done(dict, "status", "vllm") is dict  # a server, or the app's own model
    True
    >>> _ = configure_models({})
    """
    if not is_offered(choice):
        return updates

    def named(frame: Any) -> dict:
        out = updates(frame)
        if status in out:
            out[status] = named_status(out[status], choice)
        return out

    return named


def named_statuses(status: Callable[[Any], str], choice: str | None) -> Callable[[Any], str]:
    """``status`` (a finished run's status line, made from its trace) naming the offered
    local model the menu chose (``named_status``): what ``page.follow`` says when Stop
    skips the shadow run, which no frame's updates carry."""
    if not is_offered(choice):
        return status
    return lambda trace: named_status(status(trace), choice)


def named_status(said: Any, choice: str | None) -> Any:
    """A finished run's status, ``said``, naming the offered local model the menu chose
    ("Done on llama: 8 tokens ..."): the page says whose tokens these are. The app's own
    model's runs say "Done: ..." as always, and so do a server's (the engine-check panel
    names the server); any other status (or update) is ``said`` as it is."""
    if is_offered(choice) and isinstance(said, str) and said.startswith("Done:"):
        return f"Done on {esc(choice)}:{said.removeprefix('Done:')}"
    return said


SERVER_CANNOT: dict[str, str] = {
    "overshoot": "the server cannot cut a token it wrote (overshoot and cut needs that)",
    "first": "the server stops at EOS only, not at the first full match",
}
"""Compare's ways of decoding a server cannot run, and why (``ServerRun`` refuses them)."""


def server_ways(source: Any, ways: list[Any], prob_limit: float | None) -> tuple[list[Any], str]:
    """Compare's ``ways`` (``fsmviz.generation.compare.Way``) that ``source`` can run, and a
    paragraph saying which it cannot and why ("" for the bundled model, or when it runs
    all of them). A server runs the masked way and both free ways; a prob limit it cannot
    stop on, so the ways run without it (said too).

    >>> from fsmviz.generation.compare import WAYS
    >>> kept, said = server_ways(ServerSource("vllm"), list(WAYS), None)
    >>> [way.name for way in kept]
    ['constrained', 'extract', 'retries']
    """
    if not isinstance(source, ServerSource):
        return ways, ""
    kept = [way for way in ways if way.name not in SERVER_CANNOT]
    why = [f"{way.label}: {SERVER_CANNOT[way.name]}" for way in ways if way not in kept]
    if prob_limit:
        why.append("the prob limit: the server cannot stop on it (the ways ran without it)")
    if not why:
        return kept, ""
    items = "".join(f"<li>{esc(line)}</li>" for line in why)
    return kept, (
        f'<div class="compare-server"><p>On the server <b>{esc(source.name)}</b>, not '
        "available:</p>"
        f"<ul>{items}</ul></div>"
    )


def checked_after(component: Any, source: Any, trace: Any) -> dict:
    """The ``engine-check`` panel's update once a run (``trace``, None if it failed) has
    ended: its check, or nothing where the page has no panel or no run ended."""
    if component is None or trace is None:
        return {}
    return {component: engine_check_html(source, trace.steps)}


def backend_menu(servers: Collection[str], elem_id: str = "backend") -> Any:
    """The ``backend`` menu (shown only when servers are configured; ``servers``: their
    names); ``elem_id`` ``backend`` on the Generate tab, its own on the other tabs."""
    import gradio as gr

    return gr.Dropdown(
        choices(),
        value=BUNDLED,
        label="Model: the bundled one, another the operator offers, or a configured server",
        elem_id=elem_id,
        visible=bool(servers) or bool(offered_names()),
        interactive=True,
    )


def engine_check_panel(servers: Mapping[str, str]) -> Any:
    """The ``engine-check`` panel (shown only when servers are configured)."""
    import gradio as gr

    return gr.HTML(engine_check_html(None, ()), elem_id="engine-check", visible=bool(servers))
