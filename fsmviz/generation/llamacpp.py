"""llama.cpp's server (``llama-server``) as a model: the second engine ``fsmviz.connect``
talks to, beside vLLM (``fsmviz.generation.server``).

llama.cpp's server is told apart by its ``/props`` (vLLM has none), which names the GGUF
it serves (its tokenizer, read by transformers) and its context. A run is one streamed
request to its own ``/completion``::

    fsmviz                                            llama-server
    ──────                                            ────────────
    prompt ─chat template─▶ ids ────────────────────▶ POST /completion
                                                        prompt: ids, grammar (GBNF) or
                                                        json_schema, n_probs: 40,
                                                        return_tokens, stream
    per token: its id, its probability and the ◀──────
    40 likeliest, all BEFORE the grammar
    replay: state ─token─▶ index.next_state(state, token) ─▶ Step, ..., Trace

**The constraint in llama.cpp's own fields.** A regex goes as ``grammar``: fsmviz's own
DFA of it written as GBNF, one rule per state (``regex_gbnf``: the very automaton the
replay walks, so the two cannot read the pattern differently); a JSON Schema as
``json_schema`` (llama.cpp compiles it with its own converter, as a deployment does); a
GBNF grammar as ``grammar``, its text as written (a Lark grammar is refused: llama.cpp
reads GBNF only).

**The valid mass, from the top 40.** llama.cpp's ``n_probs`` are a softmax of the
model's raw logits, taken before its grammar (``get_token_probabilities`` in its
``server-common.cpp``): the unconstrained distribution, with no second request. The
allowed among the 40 sum to the valid mass exactly where every allowed token is among
them (or the 40 leave less than ``BOUND_SLACK`` unseen); elsewhere that sum is a lower
bound, and the run says at which steps (``ServerRun.bounds``).

**The engine check.** Every token llama.cpp wrote must be allowed by the exact automaton
(else the replay stops there and names it, as for vLLM). Its mask itself is not visible:
its candidates are taken before the grammar, so none of them says what the grammar
masked, and the run says so.

**The tokenizer.** The GGUF that ``/props`` names, read by transformers, checked at
``connect`` against the server's own ``/tokenize`` (``check_vocabulary``: each token's
bytes, on a probe text with CJK and an emoji). A token that ends inside a character is
sent by llama.cpp's stream without its id and scores (``_Stream`` reads them back); that,
not the vocabulary, is where ids and text seemed to disagree.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fsmviz.automaton.dfa import Dfa, compile_regex
from fsmviz.errors import InputError
from fsmviz.generation.wire import (
    BOUND_SLACK,
    ServerError,
    _events,
    _fill_row,
    _members,
    _request,
)
from fsmviz.printable import printable

__all__ = [
    "N_PROBS",
    "PROBE",
    "LlamaCppEngine",
    "LlamaCppPasses",
    "check_vocabulary",
    "llama_constraint",
    "props",
    "regex_gbnf",
]

N_PROBS = 40
"""The likeliest tokens llama.cpp gives per step (its ``n_probs``), before its grammar:
the valid mass is exact where the allowed set lies within them."""


def props(base: str, api_key: str | None, timeout: float) -> dict[str, Any] | None:
    """llama.cpp's ``/props`` under the server's root (``base`` is the API's ``.../v1``):
    its answer where the server is llama.cpp's, else None (vLLM answers 404)."""
    root = base.removesuffix("/v1")
    try:
        answer = _request(root + "/props", None, api_key, timeout)
    except ServerError:
        return None
    return answer if "default_generation_settings" in answer else None


PROBE = 'Grüße, 日本! 🙂 {"n": [1, 22]}\n\tend'
"""The text the server is asked to tokenize at ``connect``: ASCII, accented Latin, CJK, an
emoji (byte-fallback pieces in some vocabularies), JSON punctuation, whitespace."""


def check_vocabulary(
    base: str, vocab: Any, source: str, api_key: str | None, timeout: float
) -> None:
    """Ask llama.cpp's ``/tokenize`` to spell ``PROBE`` (with its pieces' bytes) and hold
    each token to fsmviz's vocabulary read from ``source``: the same bytes per token id,
    and together the probe itself. A ``ServerError`` names the first token that differs."""
    root = base.removesuffix("/v1")
    body = {"content": PROBE, "with_pieces": True}
    tokens = _request(root + "/tokenize", body, api_key, timeout).get("tokens")
    if not isinstance(tokens, list) or not tokens:
        raise ServerError(f"the llama.cpp server at {root} tokenized nothing of a probe text")
    spelled = b""
    for entry in tokens:
        token = int(entry["id"] if isinstance(entry, dict) else entry)
        piece = entry.get("piece") if isinstance(entry, dict) else None
        theirs = bytes(piece) if isinstance(piece, list) else str(piece or "").encode()
        ours = vocab.token_bytes(token) if 0 <= token < len(vocab) else None
        if ours is None or piece is not None and ours != theirs:
            here = "is not in it" if ours is None else f"is `{_shown(ours)}` there"
            raise ServerError(
                f"the llama.cpp server at {root} and fsmviz's vocabulary (from {source}) "
                f"disagree: the server's token {token} is `{_shown(theirs)}`, and {here}. "
                "Pass tokenizer= the tokenizer of the model the server runs (a folder or hub "
                "id)"
            )
        spelled += ours
    if spelled != PROBE.encode("utf-8"):
        raise ServerError(
            f"the llama.cpp server at {root} spells a probe text with tokens that fsmviz's "
            f"vocabulary (from {source}) reads as `{_shown(spelled)}`: pass tokenizer= "
            "the tokenizer of the model the server runs (a folder or hub id)"
        )


def _shown(text: bytes) -> str:
    """Bytes as readable text, a byte that is no whole character as ``\\xNN``."""
    return printable(text.decode("utf-8", "backslashreplace"))


def regex_gbnf(pattern: str | Dfa) -> str:
    """``pattern``'s DFA (``compile_regex``) as a GBNF grammar: a rule per state, an
    alternative per edge (its characters as a GBNF class), an empty alternative where the
    state accepts. States from which no match can be reached are left out.

    >>> print(regex_gbnf("ab?"))
    root ::= s0
    s0 ::= [a] s1
    s1 ::= "" | [b] s2
    s2 ::= ""
    """
    dfa = pattern if isinstance(pattern, Dfa) else compile_regex(pattern)
    live = _live_states(dfa)
    lines = [f"root ::= s{dfa.initial}"]
    for state in sorted(live):
        alternatives = ['""'] if dfa.is_accepting(state) else []
        for target, classes in sorted(dfa.moves[state].items()):
            if target not in live:
                continue
            ranges = sorted(
                r
                for k, cls in enumerate(dfa.classes)
                if classes >> k & 1
                for r in cls.ranges(dfa.mentioned)
            )
            alternatives.append(f"{_gbnf_class(ranges)} s{target}")
        lines.append(f"s{state} ::= " + " | ".join(alternatives))
    return "\n".join(lines)


def _live_states(dfa: Dfa) -> set[int]:
    """The states reachable from the start from which an accepting state can be reached."""
    reached, todo = {dfa.initial}, [dfa.initial]
    while todo:
        for target in dfa.moves[todo.pop()]:
            if target not in reached:
                reached.add(target)
                todo.append(target)
    live = {s for s in reached if dfa.is_accepting(s)}
    grew = True
    while grew:
        grew = False
        for state in reached - live:
            if any(target in live for target in dfa.moves[state]):
                live.add(state)
                grew = True
    return live


def _gbnf_class(ranges: Sequence[tuple[int, int]]) -> str:
    """Code-point ranges as a GBNF character class; every character that is not a letter
    or digit written as a hex escape (GBNF has no escape for ``-`` or ``^``).

    >>> _gbnf_class([(48, 57), (45, 45), (0x4E00, 0x9FA5)])
    '[\\\\x2D0-9\\\\u4E00-\\\\u9FA5]'
    """
    merged: list[list[int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    parts = [_gbnf_char(a) if a == b else f"{_gbnf_char(a)}-{_gbnf_char(b)}" for a, b in merged]
    return "[" + "".join(parts) + "]"


def _gbnf_char(point: int) -> str:
    char = chr(point)
    if char.isascii() and char.isalnum():
        return char
    if point < 0x80:
        return f"\\x{point:02X}"
    return f"\\u{point:04X}" if point <= 0xFFFF else f"\\U{point:08X}"


def llama_constraint(pattern: object) -> dict[str, Any] | None:
    """What a run asks of llama.cpp's grammar engine, in its own fields: a regex as
    ``grammar`` (``regex_gbnf``); a compiled JSON Schema (either path) as ``json_schema``;
    a GBNF grammar as ``grammar``. None: unconstrained.

    >>> llama_constraint("[0-9]")
    {'grammar': 'root ::= s0\\ns0 ::= [0-9] s1\\ns1 ::= ""'}
    """
    if pattern is None:
        return None
    if isinstance(pattern, str):
        return {"grammar": regex_gbnf(pattern)}
    schema = getattr(pattern, "schema", None)
    if isinstance(schema, dict):
        return {"json_schema": schema}
    text = getattr(pattern, "text", None)
    if isinstance(text, str) and hasattr(pattern, "generation_run"):
        if getattr(pattern, "format", "gbnf") != "gbnf":
            raise InputError(
                "llama.cpp's server reads grammars in GBNF only, and this one is in Lark: "
                "write it in GBNF (rules as name ::= ...) to run it there"
            )
        return {"grammar": text}
    raise InputError(
        f"a server run takes a regex, a JSON Schema (fsmviz.compile_schema) or a grammar "
        f"(fsmviz.compile_grammar), not a {type(pattern).__name__}"
    )


def _sampling(opts: Any) -> dict[str, Any]:
    """llama.cpp's sampling fields for fsmviz's options: only top-k, top-p and
    temperature, in that order (its defaults add min-p 0.05 and top-k 40)."""
    return {
        "temperature": opts.temperature,
        "top_p": opts.top_p,
        "top_k": opts.top_k or 0,
        "min_p": 0.0,
        "seed": opts.seed,
        "samplers": ["top_k", "top_p", "temperature"],
    }


class LlamaCppEngine:
    """How a run is asked of llama.cpp's server and read back: ``ServerRun`` (the replay,
    ``fsmviz.generation.server``) calls these where a vLLM run has its own: the request to
    ``/completion`` in llama.cpp's fields, the valid mass from its ``n_probs`` (taken
    before its grammar, so no scoring request), and the engine check's note."""

    kind = "llama.cpp"
    shown = N_PROBS

    @staticmethod
    def constraint(pattern: object) -> dict[str, Any] | None:
        return llama_constraint(pattern)

    def complete(self, run: Any, prompt_ids: list[int]) -> tuple[list[int], list[dict]]:
        """The streamed run: the written token ids, and per token its own and the 40
        likeliest tokens' unconstrained logprobs; ``run.finish_reason``,
        ``run.server_text`` and, where the stream broke off after some tokens (they are
        kept), ``run.dropped`` set as the vLLM run sets them. A token whose scores the
        stream left out (``_Stream``) is scored by one more request for its position."""
        body: dict[str, Any] = {
            "prompt": prompt_ids,
            "n_predict": run.opts.max_tokens,
            "n_probs": N_PROBS,
            "return_tokens": True,
            **_sampling(run.opts),
            **(run.constraint or {}),
        }
        model = run.model
        stream = _Stream(model.vocab, model.url)
        try:
            for event in _events(
                stream.root + "/completion", body, model.api_key, model.timeout, last=_stopped
            ):
                stream.read(event)
                if event.get("stop"):
                    run.finish_reason = _FINISH.get(str(event.get("stop_type")), "stop")
        except ServerError as error:
            if not stream.written:
                raise
            run.dropped = str(error)
            run.finish_reason = None
        run.server_text = "".join(stream.text)
        run.unsent = stream.unsent
        written, scores = stream.written, stream.scores
        for number, known in enumerate(scores):
            if known is None:  # held back by llama.cpp (a character cut by the token's end)
                scores[number] = _next_scores(model, prompt_ids + written[:number])
        return written, scores

    @staticmethod
    def mass(logprobs: dict[int, float], allowed: Any) -> tuple[float, bool]:
        """The allowed among the shown, summed: exact where every allowed token is shown,
        or where what the shown leave unseen is below ``BOUND_SLACK``.

        >>> import math
        >>> shown = {3: math.log(0.5), 5: math.log(0.3), 7: math.log(0.1)}
        >>> LlamaCppEngine.mass(shown, np.array([3, 7]))      # both allowed are shown
        (0.6, True)
        >>> LlamaCppEngine.mass(shown, np.array([3, 7, 9]))   # 9 unseen: 0.1 left for it
        (0.6, False)
        """
        if allowed is None:
            return 1.0, True
        ids = list(logprobs)
        inside = _members(allowed, ids) if ids else np.zeros(0, dtype=bool)
        probs = [math.exp(logprobs[t]) for t in ids]
        mass = min(1.0, sum(p for p, ok in zip(probs, inside, strict=True) if ok))
        unseen = 1.0 - sum(probs)
        return round(mass, 12), int(inside.sum()) == len(allowed) or unseen < BOUND_SLACK

    @staticmethod
    def note(run: Any, count: int) -> str:
        wrong = [d.message for d in run.disagreements]
        verdict = "each is allowed by the exact automaton"
        if wrong:
            verdict = f"{len(wrong)} disagree: " + "; ".join(wrong[:3])
        unsent = ""
        if run.unsent:
            unsent = (
                f" It wrote {run.unsent} more at the end and never sent them: their text "
                "stops inside a character (max_tokens ran out there), so they are not replayed."
            )
        return (
            f"Engine check: llama.cpp's probabilities are taken before its grammar, so its "
            f"mask is not visible; of the {count} tokens it wrote, {verdict}.{unsent}"
        )

    @staticmethod
    def passes(model: Any) -> LlamaCppPasses:
        return LlamaCppPasses(model)


class _Stream:
    """llama.cpp's streamed pieces read into token ids, their scores and the text.

    llama.cpp holds back a token that ends inside a UTF-8 character (``日`` as the bytes
    ``e6 97`` then ``a5``) until the character is whole, then sends the character with
    the id and scores of the LAST token only: the held token's id and scores are left out
    of the stream (its ``tokens_predicted`` counts them). fsmviz's vocabulary is not at
    fault (the server's ``/tokenize`` gives the same pieces). The left-out ids are read
    back from the text: the piece's bytes before the sent tokens' own must be spelled by
    exactly that many tokens, in one way only, else the run stops there, saying why; their
    scores are asked for afterwards (``None`` here)."""

    def __init__(self, vocab: Any, url: str) -> None:
        self.vocab = vocab
        self.root = url.removesuffix("/v1")
        self.written: list[int] = []
        self.scores: list[dict[int, float] | None] = []
        self.text: list[str] = []
        self.unsent = 0  # tokens written at the very end whose text llama.cpp never sent

    def read(self, event: dict[str, Any]) -> None:
        ids = [int(t) for t in event.get("tokens") or []]
        probs = event.get("completion_probabilities") or []
        if "tokens" not in event or ids and not (probs and "top_logprobs" in probs[0]):
            raise ServerError(
                f"the llama.cpp server at {self.root} is too old for fsmviz: its streamed "
                "answers carry no token ids or no probabilities (return_tokens and n_probs "
                "came in llama.cpp's b4xxx builds, 2025): update llama-server"
            )
        held = self._held_back(event, ids)
        self.written += held + ids
        self.scores += [None] * len(held)
        for number, token in enumerate(ids):
            entry = probs[number] if number < len(probs) else {}
            top = entry.get("top_logprobs") or []
            known = {int(c["id"]): float(c["logprob"]) for c in top}
            if "logprob" in entry:
                known[token] = float(entry["logprob"])
            self.scores.append(known)
        self.text.append(str(event.get("content") or ""))

    def _held_back(self, event: dict[str, Any], ids: list[int]) -> list[int]:
        """The ids llama.cpp predicted before this piece's but did not send."""
        predicted = event.get("tokens_predicted")
        count = predicted - len(self.written) - len(ids) if isinstance(predicted, int) else 0
        if count <= 0:
            return []
        piece = str(event.get("content") or "").encode("utf-8")
        if not ids and not piece:  # the last piece: tokens whose text never came (a
            self.unsent = count  # character still cut when the run ended)
            return []
        sent = b"".join(self.vocab.token_bytes(t) for t in ids)
        spelled = _spellings(piece[: len(piece) - len(sent)], count, self.vocab)
        if not piece.endswith(sent) or len(spelled) != 1:
            how = "no way" if not spelled else "more than one way"
            raise ServerError(
                f"the llama.cpp server at {self.root} left the ids of {count} token(s) out of "
                f"its stream after token {len(self.written)} (it does so for tokens that end "
                f"inside a character), and fsmviz finds {how} to spell "
                f"`{printable(piece.decode('utf-8', 'replace'))}` with them in its vocabulary"
            )
        return spelled[0]


def _spellings(text: bytes, count: int, vocab: Any, most: int = 2) -> list[list[int]]:
    """Up to ``most`` ways to spell ``text`` with exactly ``count`` non-special tokens."""
    if count == 0:
        return [[]] if not text else []
    found: list[list[int]] = []
    table = _by_bytes(vocab)
    for end in range(1, len(text) - count + 2):
        for token in table.get(text[:end], ()):
            for rest in _spellings(text[end:], count - 1, vocab, most - len(found)):
                found.append([token, *rest])
                if len(found) >= most:
                    return found
    return found


@functools.lru_cache(maxsize=4)
def _by_bytes(vocab: Any) -> dict[bytes, tuple[int, ...]]:
    """Each token text of ``vocab`` (special tokens aside) and the ids that spell it."""
    table: dict[bytes, tuple[int, ...]] = {}
    for token in range(len(vocab)):
        if not vocab.is_special(token):
            spelled = vocab.token_bytes(token)
            table[spelled] = (*table.get(spelled, ()), token)
    return table


_FINISH = {"eos": "stop", "word": "stop", "limit": "length"}
"""llama.cpp's ``stop_type`` as an OpenAI ``finish_reason``."""


def _stopped(event: dict[str, Any]) -> bool:
    """The last event of llama.cpp's stream (it sends no ``[DONE]``)."""
    return bool(event.get("stop"))


class LlamaCppPasses:
    """``model.passes`` of a model on llama.cpp's server (the page's allowed sets after
    a run): ``forward(fed, count)`` asks ``/completion`` for one token after each of the
    last ``count`` prefixes (its prompt cache makes each one a token's work) and fills a
    row from the 40 likeliest, the rest of the probability shared evenly, as
    ``ScoringPasses`` does."""

    sharing = False

    def __init__(self, model: Any) -> None:
        self.model = model

    def open(self) -> LlamaCppSequence:
        return LlamaCppSequence(self.model)


class LlamaCppSequence:
    """One sequence of ``LlamaCppPasses``: the tokens fed so far."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.context: list[int] = []

    def forward(self, fed: Sequence[int], count: int) -> np.ndarray:
        self.context += [int(t) for t in fed]
        rows = np.empty((count, len(self.model.vocab)), dtype=np.float64)
        ends = range(len(self.context) - count + 1, len(self.context) + 1)
        for row, end in zip(rows, ends, strict=True):  # row j: the next token after end
            _fill_row(row, _next_scores(self.model, self.context[:end]))
        return rows

    def close(self) -> None:
        self.context = []


def _next_scores(model: Any, prefix: list[int]) -> dict[int, float]:
    """The 40 likeliest next tokens after ``prefix`` and their logprobs, before any
    grammar: one request (llama.cpp's prompt cache makes it one token's work). The one
    token it writes is made EOS (a bias, applied after the probabilities are taken): a
    token that ends inside a character would come back with no probabilities at all."""
    body = {
        "prompt": prefix,
        "n_predict": 1,
        "n_probs": N_PROBS,
        "temperature": 0.0,
        "samplers": [],
        "logit_bias": [[model.vocab.eos_token_id, 100.0]],
    }
    root = model.url.removesuffix("/v1")
    answer = _request(root + "/completion", body, model.api_key, model.timeout)
    probs = answer.get("completion_probabilities")
    if not isinstance(probs, list) or not probs:
        raise ServerError(
            f"the server at {root} gave no probabilities for the next token "
            "(no completion_probabilities in its answer)"
        )
    return {int(c["id"]): float(c["logprob"]) for c in probs[0].get("top_logprobs") or []}
