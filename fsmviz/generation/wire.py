"""The wire to a served model: one request, one stream of server-sent events, and what
comes back read into numbers. Shared by the two engines fsmviz talks to, vLLM
(``fsmviz.generation.server``) and llama.cpp's server (``fsmviz.generation.llamacpp``).

The HTTP is the standard library's (``http.client``): a server that is down, refuses, or
does not answer in time is a ``ServerError`` naming it and quoting what it said, within
the timeouts; a stream that breaks off is one too, raised where it broke (the caller keeps
what came before).
"""

from __future__ import annotations

import http.client
import json
import math
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from fsmviz.errors import FsmvizError, InputError
from fsmviz.printable import printable

__all__ = ["BOUND_SLACK", "CONNECT_TIMEOUT", "READ_TIMEOUT", "ServerError"]

CONNECT_TIMEOUT = 10.0
"""Seconds to open a connection: a server that is down (or a host that drops packets)
is named within this."""
READ_TIMEOUT = 60.0
"""Seconds to wait for each part of an answer: a streamed token, or a whole scoring answer."""
BOUND_SLACK = 1e-4
"""How far the two-number valid mass may stray outside the top-5 bounds (the two requests
run the same positions in different batches; float32 differs in the last digits)."""


class ServerError(FsmvizError, RuntimeError):
    """A server could not be used: down, too slow, refusing the request, or answering in a
    way fsmviz cannot read. The message names the server and quotes what it said."""

    status: int | None = None
    """The HTTP status where the server answered with an error (4xx, 5xx)."""


def _api_base(base_url: str) -> str:
    """``http://host:port`` or ``.../v1`` as the API's base, ending in ``/v1``."""
    parts = urllib.parse.urlsplit(str(base_url).strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(
            f"the server's address must be an http:// or https:// URL such as "
            f"http://127.0.0.1:8000, not {printable(str(base_url))}"
        )
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _request(
    url: str, body: dict[str, Any] | None, api_key: str | None, timeout: float
) -> dict[str, Any]:
    """GET (``body`` None) or POST ``url``; the JSON answer, or a ``ServerError`` that names
    the server and quotes it."""
    with _exchange(url, body, api_key, timeout) as (server, response):
        answer = response.read()
    return _json_object(answer, server)


def _events(
    url: str,
    body: dict[str, Any],
    api_key: str | None,
    timeout: float,
    last: Callable[[dict[str, Any]], bool] | None = None,
) -> Iterator[dict[str, Any]]:
    """POST ``body`` with ``stream: true``; each server-sent event's JSON as it comes
    (``data: {...}`` lines, until ``data: [DONE]``, or until an event ``last`` says ends
    the stream: llama.cpp's sends no ``[DONE]``). A ``ServerError`` where the stream
    breaks off, stalls past ``timeout`` or carries an error."""
    with _exchange(url, {**body, "stream": True}, api_key, timeout) as (server, response):
        for line in response:
            if not line.startswith(b"data:"):
                continue  # blank separators, comments
            payload = line[5:].strip()
            if payload == b"[DONE]":
                return
            event = _json_object(payload, server)
            if "error" in event or event.get("object") == "error":
                raise ServerError(f"the server at {server} stopped with: {_quoted(payload)}")
            yield event
            if last is not None and last(event):
                return
        raise ServerError(f"the server at {server} ended its stream without finishing it")


@contextmanager
def _exchange(
    url: str, body: dict[str, Any] | None, api_key: str | None, timeout: float
) -> Iterator[tuple[str, http.client.HTTPResponse]]:
    """One request: (the server's name, its response once the status is 2xx). Every way
    it can fail, while opening or while the answer is read inside the ``with``, becomes a
    ``ServerError`` that names the server: opening may take ``CONNECT_TIMEOUT`` s, each
    read ``timeout`` s."""
    parts = urllib.parse.urlsplit(url)
    server = f"{parts.scheme}://{parts.netloc}"
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname, parts.port, timeout=CONNECT_TIMEOUT)
    headers = {"Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    try:
        connection.connect()
        connection.sock.settimeout(timeout)
        connection.request("POST" if body is not None else "GET", parts.path, data, headers)
        response = connection.getresponse()
        if response.status >= 400:
            answer = response.read()
            refused = ServerError(
                f"the server at {server} answered {response.status}: {_quoted(answer)}"
            )
            refused.status = response.status
            raise refused
        yield server, response
    except ConnectionRefusedError as error:
        raise ServerError(
            f"nothing answers at {server}: the connection was refused. Is the server "
            "running, and on this port?"
        ) from error
    except TimeoutError as error:
        raise ServerError(
            f"the server at {server} did not answer within {timeout:g} s (or could not be "
            f"reached within {CONNECT_TIMEOUT:.0f} s)"
        ) from error
    except http.client.HTTPException as error:
        raise ServerError(
            f"the server at {server} broke off its answer ({error or 'no reply'})"
        ) from error
    except OSError as error:
        raise ServerError(
            f"could not reach the server at {server}: {error.strerror or error}"
        ) from error
    finally:
        connection.close()


def _json_object(answer: bytes, server: str) -> dict[str, Any]:
    try:
        parsed = json.loads(answer)
    except ValueError as error:
        raise ServerError(
            f"the server at {server} answered something that is not JSON: {_quoted(answer)}"
        ) from error
    if not isinstance(parsed, dict):
        raise ServerError(f"the server at {server} answered {_quoted(answer)}, not an object")
    return parsed


def _quoted(answer: bytes, limit: int = 300) -> str:
    """What a server said, briefly: its error message where it gives one (OpenAI's
    ``{"error": {"message": ...}}``, vLLM's ``{"message": ...}``), else its first bytes."""
    text = answer.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else error or data.get("message")
        if message:
            text = str(message)
    text = " ".join(text.split())
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


# --- the numbers ------------------------------------------------------------------------------


def _members(allowed: np.ndarray, tokens: list[int]) -> np.ndarray:
    """Which of ``tokens`` are in the sorted array ``allowed``."""
    ids = np.asarray(tokens, dtype=np.int64)
    at = np.searchsorted(allowed, ids)
    return (at < len(allowed)) & (allowed[np.minimum(at, len(allowed) - 1)] == ids)


def _fill_row(row: np.ndarray, known: dict[int, float]) -> None:
    """``row`` as log probabilities: ``known``'s where it names them, the rest of the
    probability shared evenly by the other tokens."""
    ids = np.array([t for t in known if 0 <= t < len(row)], dtype=np.int64)
    seen = sum(math.exp(known[int(t)]) for t in ids)
    unseen = len(row) - len(ids)
    row[:] = math.log(max(1.0 - seen, 1e-12) / max(unseen, 1))
    if len(ids):
        row[ids] = [known[int(t)] for t in ids]
