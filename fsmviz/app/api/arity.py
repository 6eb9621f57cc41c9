"""How many values an API call gives: the endpoint's own words when they do not fit.

Gradio checks only that a call gives *enough* values, and says so in its own terms: "An
event handler (trace) didn't receive enough input values (needed: 11, got: 5) ... Wanted
inputs: [<gradio.components.api_component.Api object at 0x7f...>, ...]", object addresses
and all. A call with *more* values than the endpoint takes runs with the extra ones
silently dropped. ``check_arity(blocks, signatures)`` replaces that check for the API
endpoints fsmviz registers:

* fewer values, every missing one optional: the defaults are filled in (a raw REST
  caller may send ``[regex, prompt]`` as ``gradio_client`` does for them);
* fewer values, a required one missing: "/trace takes regex, prompt (required) and ...;
  it was given 1 value";
* more values: "/trace takes 11 values (regex, prompt, ...); it was given 14: remove the
  last 3".

Every other event (the page's own) keeps Gradio's check.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Parameter", "check_arity", "check_values", "signature_of"]

Parameter = tuple[str, bool, Any]
"""(name, required, default)."""


def signature_of(fn: Callable[..., Any]) -> tuple[Parameter, ...]:
    """``fn``'s parameters as (name, required, default), as Gradio's ``gr.api`` reads them
    (through ``functools.wraps`` to the function itself).

    >>> def f(regex: str, prompt: str, max_tokens: int = 64): ...
    >>> signature_of(f)
    (('regex', True, None), ('prompt', True, None), ('max_tokens', False, 64))
    """
    out = []
    for p in inspect.signature(fn).parameters.values():
        required = p.default is inspect.Parameter.empty
        out.append((p.name, required, None if required else p.default))
    return tuple(out)


def check_values(endpoint: str, parameters: tuple[Parameter, ...], values: list[Any]) -> None:
    """Make ``values`` fit ``parameters`` in place (the missing optional ones filled with
    their defaults) or raise ``ValueError`` saying what the endpoint takes.

    >>> params = (("regex", True, None), ("prompt", True, None), ("max_tokens", False, 64))
    >>> values = ["[0-9]+", "a number"]
    >>> check_values("trace", params, values); values
    ['[0-9]+', 'a number', 64]
    >>> check_values("trace", params, [1, 2, 3, 4, 5])
    Traceback (most recent call last):
    ...
    ValueError: /trace takes 3 values (regex, prompt, max_tokens), in that order; it was \
given 5: remove the last 2
    """
    names = ", ".join(name for name, _, _ in parameters)
    if len(values) > len(parameters):
        extra = len(values) - len(parameters)
        takes = f"{len(parameters)} value" + ("" if len(parameters) == 1 else "s")
        raise ValueError(
            f"/{endpoint} takes {takes} ({names}), in that order; it was given "
            f"{len(values)}: remove the last {extra}"
        )
    missing = parameters[len(values) :]
    required = [name for name, needed, _ in missing if needed]
    if required:
        need = [name for name, needed, _ in parameters if needed]
        given = f"{len(values)} value" + ("" if len(values) == 1 else "s")
        raise ValueError(
            f"/{endpoint} needs {', '.join(need)} (then, optional: "
            f"{', '.join(n for n, needed, _ in parameters if not needed) or 'nothing'}), in "
            f"that order; it was given {given}, so {', '.join(required)} "
            f"{'is' if len(required) == 1 else 'are'} missing"
        )
    values.extend(default for _, _, default in missing)


def check_arity(blocks: Any, signatures: Mapping[str, tuple[Parameter, ...]]) -> None:
    """Have ``blocks`` (a ``gr.Blocks``) check the API endpoints named in ``signatures``
    with ``check_values`` instead of its own count check (see the module's docstring)."""
    import gradio as gr

    own = blocks.validate_inputs

    def validate_inputs(block_fn: Any, inputs: list[Any]) -> None:
        name = getattr(block_fn, "api_name", None)
        if name in signatures and len(block_fn.inputs) == len(signatures[name]):
            try:
                check_values(name, signatures[name], inputs)
            except ValueError as error:
                raise gr.Error(str(error)) from None
            return
        own(block_fn, inputs)

    blocks.validate_inputs = validate_inputs
