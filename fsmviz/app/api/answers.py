"""Every failure of an API call is a message: no endpoint answers ``{"error": null}``.

Gradio shows a ``gr.Error``'s text to the caller, with its title and duration; any other
exception's text only when the app runs with ``show_error=True`` (it does, for Gradio's own
refusals), and then as whatever Python said. ``answered`` wraps each API function (and so
each MCP tool) so that whatever it raises leaves as a ``gr.Error`` saying what went wrong:
the refusal itself for bad input (``FsmvizError``, ``ValueError``), and plain words for what
Python raises on hostile shapes (a structure nested thousands deep, a value too large for
memory) or for a failure of the server's own. No traceback is ever sent.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import gradio as gr

from fsmviz.errors import FsmvizError
from fsmviz.params import shorten

__all__ = ["answered", "message_for"]

F = TypeVar("F", bound=Callable[..., Any])
LOG = logging.getLogger(__name__)

NESTED = (
    "the input is nested too deeply to read (Python's recursion limit): flatten it, "
    "or write fewer levels of brackets or parentheses"
)


def message_for(error: BaseException) -> str:
    """What the caller is told about ``error``: never empty, never a traceback.

    >>> message_for(ValueError("max_tokens must be a whole number from 1 to 1024; got 'x'"))
    "max_tokens must be a whole number from 1 to 1024; got 'x'"
    >>> message_for(RecursionError("maximum recursion depth exceeded"))[:38]
    'the input is nested too deeply to read'
    """
    if isinstance(error, RecursionError):
        return NESTED
    if isinstance(error, MemoryError):
        return "the input needs more memory than this server has: make it smaller"
    if isinstance(error, FsmvizError | ValueError | TypeError) and str(error):
        return str(error)
    return f"the server could not answer ({type(error).__name__}: {shorten(str(error), 120)})"


def answered(fn: F) -> F:
    """``fn`` with every exception it raises turned into a ``gr.Error`` with a message
    (``message_for``); its name, docstring, signature and hints are kept, which Gradio reads
    for the endpoint's schema and the MCP tool's description."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as error:
            if not isinstance(error, FsmvizError | ValueError | RecursionError):
                LOG.exception("API call %s failed", getattr(fn, "__name__", fn))
            raise gr.Error(message_for(error)) from None

    return call  # type: ignore[return-value]
