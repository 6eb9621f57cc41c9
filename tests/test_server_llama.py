"""``fsmviz.connect`` on llama.cpp's server: a real ``llama-server`` (``make llama``, the
bundled SmolLM2 GGUF) writes under its own grammar engine, fsmviz replays each token
through its exact automaton. No mock stands in for the server: the session fixture
``llama_server`` (tests/conftest.py) starts one (``tests/llamaserver.py``, up in seconds);
``make test-llama`` runs this file (building the server is opt-in: ``make llama``).

The weights are the same on both sides: fsmviz's local model is the bundled GGUF's 4-bit
(Q4_1) weights dequantized to float32. The arithmetic is not: llama.cpp multiplies them by
activations it first rounds to 8 bits (Q8_1, a scale per block of 32 values) and keeps
K and V in float16. So its probabilities are the local model's only up to what that
rounding does, which ``arithmetic_spread`` measures on the very tokens of the run.
"""

from __future__ import annotations

import dataclasses
import functools
import http.server
import math
import threading
import time

import pytest
import regex
import torch
from test_server import (
    FAULT_SECONDS,
    PROMPTS,
    Relay,
    assert_replayed_exactly,
    local_masses,
)

import fsmviz
from fsmviz import build_index
from fsmviz.bundled import gguf_path
from fsmviz.errors import InputError
from fsmviz.generation.allowed import allowed_sets
from fsmviz.generation.generate import encode_prompt
from fsmviz.generation.llamacpp import (
    N_PROBS,
    PROBE,
    LlamaCppEngine,
    _Stream,
    check_vocabulary,
    regex_gbnf,
)
from fsmviz.generation.models import load_model
from fsmviz.generation.trace import GenerationOptions
from fsmviz.generation.wire import ServerError, _request
from fsmviz.tokens.vocab import Vocabulary

ROUNDING = 2.0
"""llama.cpp's log-probabilities may stray from the float32 model's by up to this many times
what 8-bit activations alone do to the float32 model on the same tokens (its float16 K
and V, its kernels' order of summation and the rounding of each block's scale are not
emulated; measured on the date run: llama.cpp 0.19 nats at most, 8-bit activations alone
0.17). A token read one position off, or a mass over the wrong set, is off by nats."""
DATE = r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"


@pytest.fixture(scope="module")
def served(llama_server):
    """The bundled model as llama.cpp serves it: every test asks for this one module
    fixture (conftest groups them on one worker: one server)."""
    return fsmviz.connect(llama_server)


_RUNS: dict[str, fsmviz.Stream] = {}


def date_run(served) -> fsmviz.Stream:
    """The seed's date pattern run on llama.cpp, once per module."""
    if "date" not in _RUNS:
        run = fsmviz.stream(served, DATE, PROMPTS["date"], max_tokens=24)
        for _ in run:
            pass
        _RUNS["date"] = run
    return _RUNS["date"]


def eight_bit(x: torch.Tensor, block: int = 32) -> torch.Tensor:
    """``x`` rounded as llama.cpp rounds a matrix product's activations for 4-bit weights
    (Q8_1): per block of 32 values a float16 scale (the block's largest magnitude / 127)
    and an integer in -127..127 each."""
    rows = x.reshape(-1, block)
    scale = (rows.abs().amax(dim=1, keepdim=True) / 127).half().float()
    return (torch.round(rows / scale.clamp_min(1e-30)) * scale).reshape(x.shape)


def arithmetic_spread(model, prompt_ids, steps, index, exact) -> tuple[list, float]:
    """The float32 model's (valid mass, probability) per step, and the largest change in
    their logs (nats) when every matrix product's input is rounded to 8 bits as llama.cpp
    rounds it (``eight_bit``): the scale of llama.cpp's own arithmetic on these tokens."""
    plain = local_masses(model, prompt_ids, steps, index)
    hooks = [
        layer.register_forward_pre_hook(lambda _, args: (eight_bit(args[0]),))
        for layer in model.model.modules()
        if isinstance(layer, torch.nn.Linear)
    ]
    try:
        rounded = local_masses(model, prompt_ids, steps, index)
    finally:
        for hook in hooks:
            hook.remove()
    spread = max(
        max(abs(math.log(a[1] / b[1])) for a, b in zip(plain, rounded, strict=True)),
        max(abs(math.log(plain[k][0] / rounded[k][0])) for k in exact),
    )
    return plain, spread


def test_connect_tells_llama_cpp_by_its_props_and_reads_its_gguf(served, llama_server):
    """``/props`` says llama.cpp; the tokenizer is the GGUF it names, the context its own."""
    assert served.kind == "llama.cpp" and served.name == gguf_path().name
    assert len(served.vocab) == 49_152 and served.vocab.eos_token_id == 2
    assert served.context and 512 <= served.context <= 2048
    assert served.url == llama_server + "/v1"
    replay = served.server_run(DATE, GenerationOptions())
    assert isinstance(replay.engine, LlamaCppEngine) and replay.shown == N_PROBS


@pytest.mark.slow  # the local model's forward pass (the server's run: ~1 s)
def test_a_regex_runs_on_llama_cpp_as_gbnf_and_replays_exactly(served):
    """The seed's date pattern goes to llama.cpp as GBNF written from fsmviz's own DFA;
    every token llama.cpp wrote is allowed by the exact automaton, the text is a match,
    and each step's valid mass (from its 40 likeliest tokens, taken before its grammar) is
    the local model's within ``CLOSE``, exact where the allowed set lies within them."""
    run = date_run(served)
    trace, replay = run.trace(), run._run
    assert replay.constraint == {"grammar": regex_gbnf(DATE)}
    assert trace.matched and trace.stop_reason == "accepted", trace.notes
    assert regex.fullmatch(DATE, trace.text) and trace.text == replay.server_text
    assert not replay.disagreements and trace.steps[-1].is_eos
    index = build_index(DATE, served.vocab)
    assert_replayed_exactly(trace.steps, index)
    assert any("taken before its grammar" in n and "each is allowed" in n for n in trace.notes)
    local = load_model()
    prompt_ids = encode_prompt(local, PROMPTS["date"], True)
    assert prompt_ids == encode_prompt(served, PROMPTS["date"], True)
    exact = [s.index for s in trace.steps if s.index not in replay.bounds]
    assert len(exact) >= len(trace.steps) // 2, replay.bounds  # digits: a small allowed set
    expected, spread = arithmetic_spread(local, prompt_ids, trace.steps, index, exact)
    bound = ROUNDING * spread
    assert 0 < spread < 0.5, spread  # the rounding moves the numbers, by less than 2/3
    worst = 0.0
    for step, (mass, prob) in zip(trace.steps, expected, strict=True):
        off = math.log(step.prob / prob)
        if step.index in exact:
            off = max(off, abs(math.log(step.valid_mass / mass)), key=abs)
        else:  # the allowed among the 40 likeliest: a lower bound
            assert math.log(step.valid_mass / mass) <= bound, (step.index, step.text)
        assert abs(off) <= bound, (step.index, step.text, off, bound)
        worst = max(worst, abs(off))
    print(  # the replay's share of the server's time is bench's to judge (wall time)
        f"llama.cpp date: {trace.text!r}, {len(trace.steps)} tokens in "
        f"{replay.server_seconds:.2f} s, replay {replay.replay_seconds * 1e3:.1f} ms; "
        f"{len(exact)} exact steps; worst |log(llama.cpp / local)| {worst:.3f} nats, "
        f"8-bit activations alone {spread:.3f}"
    )


def test_the_seeds_email_pattern_runs_on_llama_cpp_token_by_token(served, seed_cases):
    """The seed's e-mail pattern (its DFA as 7 GBNF rules): every token llama.cpp wrote,
    40 of them on this prompt, is allowed by the exact automaton; the text so far can still
    become a match."""
    pattern = seed_cases["regexes"]["email"]
    run = fsmviz.stream(served, pattern, PROMPTS["email"], max_tokens=40)
    steps = list(run)
    trace = run.trace()
    assert not run._run.disagreements and trace.text == run._run.server_text, trace.notes
    assert_replayed_exactly(steps, build_index(pattern, served.vocab))
    assert regex.fullmatch(pattern, trace.text, partial=True), trace.text
    assert len(steps) == 40 or trace.matched, trace.notes


def test_a_schema_and_a_gbnf_grammar_go_in_llama_cpps_own_fields(served):
    """A JSON Schema goes as ``json_schema`` (llama.cpp compiles it), a GBNF grammar as
    ``grammar``; both replayed, matched; a Lark grammar is refused before any request."""
    schema = fsmviz.compile_schema({"type": "string", "enum": ["yes", "no"]})
    run = fsmviz.stream(served, schema, "Is Paris in France? Answer yes or no.", max_tokens=8)
    steps = list(run)
    trace = run.trace()
    assert run._run.constraint == {"json_schema": {"type": "string", "enum": ["yes", "no"]}}
    assert trace.matched and trace.text in ('"yes"', '"no"'), (trace.text, trace.notes)
    assert steps and not run._run.disagreements
    grammar = fsmviz.compile_grammar('root ::= ("yes" | "no") "."')
    run = fsmviz.stream(served, grammar, "Is Paris in France?", max_tokens=8)
    list(run)
    assert run._run.constraint == {"grammar": grammar.text}
    assert run.trace().matched and run.trace().text in ("yes.", "no."), run.trace().notes
    lark = fsmviz.compile_grammar('start: "yes" | "no"', format="lark")
    with pytest.raises(InputError, match="GBNF only"):
        list(fsmviz.stream(served, lark, "Is Paris in France?", max_tokens=8))


def test_regex_gbnf_is_the_regex_on_llama_cpp_for_awkward_characters(served):
    """Characters GBNF writes only as escapes (``-``, ``^``, ``]``, ``\\``, a quote, a
    newline, CJK): llama.cpp's grammar engine, fed fsmviz's GBNF, writes a match of the
    regex, each token allowed by the exact automaton. ``日`` is written as two tokens, the
    first ending inside the character: llama.cpp's stream leaves that token's id and
    scores out (``_Stream``); the replay has it back, with its probabilities."""
    pattern = r'\^-\][a-c\\"]{2}\n?(日本|x)'
    run = fsmviz.stream(served, pattern, "Copy this: ^-]ab日本", max_tokens=16)
    steps = list(run)
    trace = run.trace()
    assert trace.matched and regex.fullmatch(pattern, trace.text), (trace.text, trace.notes)
    assert trace.text == run._run.server_text and not run._run.dropped
    assert_replayed_exactly(steps, build_index(pattern, served.vocab))
    cut = [s for s in steps if s.token_bytes and not _whole(s.token_bytes)]
    assert cut, [s.token_bytes for s in steps]  # the held-back token was met
    for step in cut:  # its own scores, asked for its position: it is among them
        assert 0 < step.prob <= step.top[0].prob and len(step.top) == 5, step
    # max_tokens ends the run on that token: llama.cpp never sends it, and the run says so
    short = fsmviz.stream(served, pattern, "Copy this: ^-]ab日本", max_tokens=cut[0].index + 1)
    kept = list(short)
    assert [s.token_id for s in kept] == [s.token_id for s in steps[: cut[0].index]]
    assert short.trace().stop_reason == "max_tokens"
    assert any("1 more at the end and never sent" in n for n in short.trace().notes)


def _whole(text: bytes) -> bool:
    """Whether ``text`` is whole UTF-8 characters."""
    try:
        text.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_the_pages_allowed_sets_come_from_llama_cpp(served):
    """``model.passes`` on llama.cpp (a token after each prefix, its 40 likeliest): every
    step's allowed set with the probabilities the run itself reported."""
    run = date_run(served)
    trace = run.trace()
    sets = allowed_sets(served, trace)
    assert len(sets) == len(trace.steps)
    for step, got in zip(trace.steps, sets, strict=True):
        assert got.total == step.allowed_count
        if step.index in run._run.bounds:  # the unseen allowed share the rest evenly
            assert got.mass >= step.valid_mass - 2e-3, step.index
        else:  # every allowed token among the 40: the run's own number
            assert got.mass == pytest.approx(step.valid_mass, abs=2e-3), step.index
    assert N_PROBS >= 5


def test_a_llama_cpp_stream_dropped_midway_keeps_what_was_written(served):
    """llama.cpp's stream cut by the network: the tokens that came are replayed and kept
    as a stopped run, the break named, in time."""
    relay = Relay(served.url, cut=6_000)
    try:
        started = time.monotonic()
        cut = dataclasses.replace(served, url=relay.url)
        run = fsmviz.stream(cut, DATE, PROMPTS["date"], max_tokens=24)
        steps = list(run)
        trace = run.trace()
    finally:
        relay.close()
    assert time.monotonic() - started < FAULT_SECONDS
    whole = date_run(served).steps
    assert 1 <= len(steps) < len(whole) and not steps[-1].is_eos
    assert [s.token_id for s in steps] == [s.token_id for s in whole[: len(steps)]]
    assert trace.stop_reason == "engine_error" and not trace.matched
    assert any("broke off after" in note and "kept" in note for note in trace.notes)


def test_connect_holds_llama_cpps_tokenizer_to_fsmviz_vocabulary(served, llama_server):
    """``connect`` asked llama.cpp's ``/tokenize`` to spell ``PROBE`` and found each token's
    bytes as fsmviz's vocabulary has them (``served`` exists); a vocabulary that reads the
    same ids otherwise is refused, naming the first token that differs."""
    body = {"content": PROBE, "with_pieces": True}
    ids = [t["id"] for t in _request(llama_server + "/tokenize", body, None, 30)["tokens"]]
    assert b"".join(served.vocab.token_bytes(t) for t in ids) == PROBE.encode()
    assert not all(_whole(served.vocab.token_bytes(t)) for t in ids)  # pieces of characters
    other = Vocabulary.from_strings([f"t{i}" for i in range(len(served.vocab))])
    with pytest.raises(ServerError, match=rf"token {ids[0]} is `\S+`, and is `t{ids[0]}` there"):
        check_vocabulary(served.url, other, "a test vocabulary", None, 30)


def test_an_address_that_is_no_model_server_is_named(tmp_path):
    """Python's own web server (an empty folder) has no ``/v1/models``: ``connect`` says it is
    not a model server; once it is closed, that nothing answers there. Both in seconds."""
    handler = functools.partial(_QuietFiles, directory=str(tmp_path))
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{web.server_port}"
    started = time.monotonic()
    try:
        with pytest.raises(ServerError, match=r"is not a model server fsmviz can use"):
            fsmviz.connect(url)
    finally:
        web.shutdown()
        web.server_close()
    with pytest.raises(ServerError, match="nothing answers at"):
        fsmviz.connect(url)
    assert time.monotonic() - started < FAULT_SECONDS


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # no line per request in the test's output
        pass


def test_a_llama_cpp_too_old_for_token_ids_is_named():
    """A piece of an older llama.cpp's stream (its probabilities as ``probs``/``tok_str``, no
    token ids) is refused in words: update llama-server."""
    old = {
        "content": "1",
        "stop": False,
        "completion_probabilities": [{"content": "1", "probs": [{"tok_str": "1", "prob": 0.9}]}],
    }
    with pytest.raises(ServerError, match="too old for fsmviz.*update llama-server"):
        _Stream(Vocabulary.bundled(), "http://127.0.0.1:1/v1").read(old)


def test_a_request_llama_cpp_refuses_is_named_with_its_words_in_seconds(served):
    """A prompt past the server's context (fsmviz's own check skipped: ``context=None``):
    llama.cpp answers 4xx, and the run raises a ``ServerError`` that names the server and
    quotes it, in seconds. Then the server still serves."""
    unchecked = dataclasses.replace(served, context=None)
    started = time.monotonic()
    with pytest.raises(
        ServerError, match=r"the server at http://127\.0\.0\.1:\d+ answered 4\d\d: '.*context"
    ):
        list(fsmviz.stream(unchecked, DATE, "Go on: " + "la " * 1200, max_tokens=4))
    assert time.monotonic() - started < FAULT_SECONDS
    assert fsmviz.generate(served, "[0-9]", PROMPTS["date"], max_tokens=2).matched
