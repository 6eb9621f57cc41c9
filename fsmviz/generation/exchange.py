"""The HTTP exchange of a vLLM run: what ``ServerRun`` asks the server, and what it reads.

Two requests to ``/v1/completions``. The run itself (``complete``), streamed: the prompt
as token ids, the constraint in vLLM's ``structured_outputs``, ``logprobs`` for the
written token's logprob after the server's mask and the candidates it shows. Then the
scoring request (``score``): the prompt and the written tokens as one prompt, with
``prompt_logprobs``, for each written token's unconstrained logprob. The transport
(a request, server-sent events, ``ServerError``) is ``fsmviz.generation.wire``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fsmviz.generation.replay import TOP
from fsmviz.generation.trace import GenerationOptions
from fsmviz.generation.wire import ServerError, _events


@dataclass(frozen=True)
class Completion:
    """What the streamed run gave: the ``written`` token ids, each one's logprob after
    the server's mask (``constrained``; None where not given) and its top candidates
    (``candidates``), the server's ``text`` and ``finish_reason``, and how the stream
    broke off after some tokens, if it did (``dropped``: they are kept)."""

    written: list[int]
    constrained: list[float | None]
    candidates: list[dict[int, float]]
    text: str
    finish_reason: str | None
    dropped: str | None = None


def complete(
    model: Any, opts: GenerationOptions, constraint: dict | None, prompt_ids: list[int]
) -> Completion:
    """The constrained run on ``model`` (a ``ServerModel``), streamed."""
    body: dict[str, Any] = {
        "model": model.served,
        "prompt": prompt_ids,
        "max_tokens": opts.max_tokens,
        "temperature": opts.temperature,
        "top_p": opts.top_p,
        "seed": opts.seed,
        "logprobs": TOP,  # its top candidates after its mask: the engine check
        "return_tokens_as_token_ids": True,
    }
    if opts.top_k:
        body["top_k"] = opts.top_k
    if constraint is not None:
        body["structured_outputs"] = constraint
    written: list[int] = []
    constrained: list[float | None] = []
    candidates: list[dict[int, float]] = []
    text: list[str] = []
    finish: str | None = None
    try:
        for event in _events(model.url + "/completions", body, model.api_key, model.timeout):
            for choice in event.get("choices") or []:
                ids = _token_ids(choice, model.url)
                written += ids
                given = choice.get("logprobs") or {}
                logprobs = given.get("token_logprobs") or []
                constrained += [*logprobs, *[None] * (len(ids) - len(logprobs))][: len(ids)]
                tops = [_candidates(top) for top in given.get("top_logprobs") or []]
                candidates += [*tops, *[{}] * (len(ids) - len(tops))][: len(ids)]
                text.append(str(choice.get("text") or ""))
                finish = choice.get("finish_reason") or finish
    except ServerError as error:
        if not written:
            raise
        return Completion(written, constrained, candidates, "".join(text), None, str(error))
    return Completion(written, constrained, candidates, "".join(text), finish)


def score(model: Any, prompt_ids: list[int], written: list[int]) -> list[dict[int, float]]:
    """The unconstrained logprobs at each written token's step: the scoring request's
    ``prompt_logprobs`` over the prompt and the written tokens (the top ``TOP`` and the
    written token itself, per position), one mapping per written token."""
    body = {
        "model": model.served,
        "prompt": [*prompt_ids, *written],
        "max_tokens": 1,
        "temperature": 0.0,
        "prompt_logprobs": TOP,
    }
    choice = _first_choice(model.post("/completions", body), model.url)
    return scored_positions(
        choice, len(prompt_ids) + len(written), len(prompt_ids), model.url,
        "the prompt (no prompt_logprobs in its answer): fsmviz needs them for the valid "
        "mass; is it vLLM?",
    )  # fmt: skip


def scored_positions(
    choice: dict[str, Any], count: int, start: int, server: str, missing: str
) -> list[dict[int, float]]:
    """A scoring answer's ``prompt_logprobs`` (``count`` positions) from position
    ``start`` on, each as ``{token id: logprob}``; where they are missing, a
    ``ServerError`` saying the server ``server`` did not score ``missing``."""
    positions = choice.get("prompt_logprobs")
    if not isinstance(positions, list) or len(positions) != count:
        raise ServerError(f"the server at {server} did not score {missing}")
    return [
        {int(token): float(entry["logprob"]) for token, entry in (position or {}).items()}
        for position in positions[start:]
    ]


def _first_choice(answer: dict[str, Any], server: str) -> dict[str, Any]:
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ServerError(f"the server at {server} answered without a completion: {answer!r:.300}")
    return choices[0]


def _token_ids(choice: dict[str, Any], server: str) -> list[int]:
    """The token ids of a completion (or a streamed piece of one): vLLM's ``token_ids``, or
    its logprobs' ``token_id:N`` (``return_tokens_as_token_ids``); none in a piece that
    only says how the run finished."""
    ids = choice.get("token_ids")
    if isinstance(ids, list) and all(isinstance(t, int) for t in ids):
        return list(ids)
    tokens = (choice.get("logprobs") or {}).get("tokens")
    if tokens is None and not choice.get("text"):
        return []
    if not isinstance(tokens, list):
        raise ServerError(
            f"the server at {server} gave no token ids (no logprobs in its answer): fsmviz "
            "needs them to replay the run"
        )
    try:
        return [int(str(token).rpartition("token_id:")[2]) for token in tokens]
    except ValueError as error:
        raise ServerError(
            f"the server at {server} gave tokens as text, not ids ({tokens[:3]!r}…): fsmviz "
            "asks for return_tokens_as_token_ids (vLLM)"
        ) from error


def _candidates(top: object) -> dict[int, float]:
    """A step's top logprobs (``{"token_id:N": logprob}``) by token id.

    >>> _candidates({"token_id:7": -0.5, "x": -1.0})
    {7: -0.5}
    """
    if not isinstance(top, dict):
        return {}
    found = {}
    for key, value in top.items():
        try:
            found[int(str(key).rpartition("token_id:")[2])] = float(value)
        except (TypeError, ValueError):
            continue  # a token given as text: not comparable
    return found
