"""Batched forward passes (``fsmviz.generation.batching``): a sequence in a group sees
exactly its own tokens, so its logits equal a solo pass; rows join, pause, leave; failures
reach callers.
The tiny random Llama stands in for the model here (its caches have the same structure)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import torch

from fsmviz.generation import batching
from fsmviz.generation.batching import ForwardPassError, ForwardPasses, _Group, _groupable, _Job
from fsmviz.generation.generate import generate, stream
from fsmviz.generation.models import load_model
from fsmviz.generation.trace import Trace

PROMPTS = [[1, 2, 3], list(range(40, 60)), [7] * 9]


def solo_logits(net, ids_per_pass: list[list[int]]) -> list[np.ndarray]:
    """Logits of the last token of each pass, one sequence alone."""
    passes = ForwardPasses(net, torch.device("cpu"), threaded=False)
    sequence = passes.open()
    return [sequence.forward(ids, 1)[-1] for ids in ids_per_pass]


@torch.inference_mode()
def grouped_logits(net, scripts: list[list[list[int]]]) -> list[list[np.ndarray]]:
    """The same, for several sequences at once: each prompt alone, then every later pass
    as one group step (longer and shorter feeds mixed, rows padded differently)."""
    passes = ForwardPasses(net, torch.device("cpu"), threaded=False)
    group = _Group()
    sequences = [passes.open() for _ in scripts]
    out: list[list[np.ndarray]] = [[] for _ in scripts]
    for sequence, script, got in zip(sequences, scripts, out, strict=True):
        job = _Job(sequence, script[0], 1)
        passes._alone(job)
        got.append(job.logits[-1])
        assert _groupable(sequence.cache)
        group.join([sequence], sequence.cache)
    for step in range(1, max(len(s) for s in scripts)):
        jobs = [
            _Job(sequence, script[step], 1)
            for sequence, script in zip(sequences, scripts, strict=True)
            if step < len(script)
        ]
        group.step(net, jobs)
        for job in jobs:
            out[sequences.index(job.sequence)].append(job.logits[-1])
    return out


def test_a_grouped_sequence_gets_the_logits_it_would_get_alone(tiny):
    scripts = [
        [PROMPTS[0], [5], [6, 7, 8], [9]],  # a three-token feed in a group step
        [PROMPTS[1], [11], [12], [13], [14]],
        [PROMPTS[2], [21]],  # stops early: later steps give it masked pads
    ]
    together = grouped_logits(tiny.model, scripts)
    for script, got in zip(scripts, together, strict=True):
        alone = solo_logits(tiny.model, script)
        assert len(got) == len(alone)
        for a, b in zip(alone, got, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-4)


@torch.inference_mode()
def test_a_sequence_that_leaves_the_group_goes_on_alone(tiny):
    passes = ForwardPasses(tiny.model, torch.device("cpu"), threaded=False)
    group = _Group()
    short, long_ = passes.open(), passes.open()
    for sequence, prompt in ((short, PROMPTS[0]), (long_, PROMPTS[1])):
        passes._alone(_Job(sequence, prompt, 1))
        group.join([sequence], sequence.cache)
    group.step(tiny.model, [_Job(long_, [30], 1)])  # the short one gets a pad column
    group.leave(short, keep=True)  # paused: its real columns become its own cache again
    assert short.row is None and long_.row == 0 and short.cache.get_seq_length() == 3
    assert group.mask.shape == (1, 21) and bool(group.mask.all())  # padding trimmed
    after = short.forward([5], 1)[-1]
    np.testing.assert_allclose(after, solo_logits(tiny.model, [PROMPTS[0], [5]])[-1], atol=1e-4)
    group.leave(long_, keep=False)
    assert group.rows == [] and group.cache is None


def test_idleness_counts_from_a_row_s_last_answer(tiny, monkeypatch):
    """A row just answered stays in the group however long its pass took; one that has
    not asked since leaves. (Counted from the asking, sixteen prompts' 1.04-s pass once
    made every row leave as it was answered, and come back one solo pass at a time.)"""
    monkeypatch.setattr(batching, "IDLE_SECONDS", 0.0)  # every pass is "too long"
    passes = ForwardPasses(tiny.model, torch.device("cpu"), threaded=False)
    asked, quiet = passes.open(), passes.open()
    passes._run([_Job(asked, PROMPTS[0], 1), _Job(quiet, PROMPTS[1], 1)])
    assert (asked.row, quiet.row) == (0, 1)
    passes._run([_Job(asked, [5], 1)])
    assert asked.row == 0 and quiet.row is None  # the quiet one paused: out, cache kept
    assert quiet.cache.get_seq_length() == len(PROMPTS[1])


def test_prompts_encoded_at_once_read_the_template_s_control_tokens(tiny):
    """Visitors' prompts are encoded in their own threads at once: each must get the ids
    it gets alone (a race once spelled ``<|im_start|>`` out as text in a batched run, so
    its first logits were another prompt's and the concurrent test below flaked)."""
    from fsmviz.generation.generate import encode_prompt

    prompts = [f"prompt {i}" * (i + 1) for i in range(8)]
    alone = [encode_prompt(tiny, prompt, True) for prompt in prompts]
    wrong: list[int] = []
    start = threading.Barrier(len(prompts))

    def work(i: int) -> None:
        start.wait()
        for _ in range(50):
            if encode_prompt(tiny, prompts[i], True) != alone[i]:
                wrong.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(prompts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


EMAIL = r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+[a-zA-Z0-9]"
AT_ONCE = {
    "tiny": [(r"[a-z]{12}", f"prompt {i}" * (i + 1)) for i in range(6)],
    "real": [
        (r"[0-9]{3}", "Count:"),
        (r"(yes|no)", "Is water wet?"),
        (EMAIL, "My name is Jerome Swannack, I work at coolcompany.com and my email address is"),
    ],
}


@pytest.mark.parametrize(
    "which",
    [
        "tiny",
        pytest.param("real", marks=pytest.mark.slow),
    ],
)
def test_concurrent_generations_share_forward_passes(tiny, which):
    """Threads generating at once are advanced together (batch sizes above one), and each
    gets what it gets alone (greedy, so any mix-up between rows would show), up to a
    near-tie (``same_unless_near_tie``): which rows share a pass follows timing, and a
    batched pass's logits differ from a solo one's by float rounding."""
    model = tiny if which == "tiny" else load_model()
    jobs = AT_ONCE[which]
    alone = [generate(model, p, q, max_tokens=12) for p, q in jobs]
    model.passes.batch_sizes.clear()
    together: dict[int, Trace] = {}
    start = threading.Barrier(len(jobs))

    def work(i: int) -> None:
        start.wait()
        together[i] = generate(model, jobs[i][0], jobs[i][1], max_tokens=12)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, solo in enumerate(alone):
        same_unless_near_tie(solo, together[i])
    assert max(model.passes.batch_sizes) > 1


NEAR_TIE = 1e-3
"""Relative difference of two probabilities that counts as a tie for greedy decoding:
batched and solo logits differ by float rounding, ~1e-5."""


def same_unless_near_tie(alone: Trace, together: Trace) -> None:
    """``together`` (a batched run) took the tokens ``alone`` (the solo run) took, step
    by step, up to a step where greedy faced a near-tie: there each took a token of
    (nearly) the same probability, and the runs may go on apart. A row given another
    row's logits takes a token of an unrelated probability at once, and fails here.

    >>> from fsmviz.generation.trace import Step
    >>> def run(*taken):
    ...     steps = tuple(Step(t, "", 0, 0, 1, 1.0, (), prob=p) for t, p in taken)
    ...     return Trace("", steps, "max_tokens", False)
    >>> same_unless_near_tie(run((1, 0.5), (2, 0.3)), run((1, 0.5), (3, 0.30001)))
    >>> same_unless_near_tie(run((1, 0.5), (2, 0.3)), run((1, 0.5), (3, 0.2)))
    Traceback (most recent call last):
    AssertionError: step 1: 2 (p=0.3) alone, 3 (p=0.2) batched: not a near-tie
    """
    for k, (a, b) in enumerate(zip(alone.steps, together.steps, strict=False)):
        if a.token_id != b.token_id:
            if abs(a.prob - b.prob) > NEAR_TIE * max(a.prob, b.prob):
                raise AssertionError(
                    f"step {k}: {a.token_id} (p={a.prob:.3g}) alone, "
                    f"{b.token_id} (p={b.prob:.3g}) batched: not a near-tie"
                )
            return
    assert together.text == alone.text


def test_an_abandoned_stream_leaves_the_group(tiny):
    run = stream(tiny, r"[a-z]{40}", "x", max_tokens=40)
    next(run)
    next(run)
    assert len(tiny.passes._group.rows) == 1
    run.close()  # the visitor went away mid-stream
    for _ in range(100):  # the model's thread frees the row as soon as it hears
        if not tiny.passes._group.rows:
            break
        time.sleep(0.01)
    assert tiny.passes._group.rows == []


class Exploding(torch.nn.Module):
    """A model whose passes fail, like one out of memory."""

    def forward(self, **_: object) -> None:
        raise RuntimeError("CUDA out of memory (simulated)")


def test_a_failed_pass_reaches_its_caller_and_the_thread_serves_on(tiny):
    passes = ForwardPasses(Exploding(), torch.device("cpu"))
    with pytest.raises(ForwardPassError, match="ran out of memory .* fewer tokens"):
        passes.open().forward([1, 2], 1)
    passes.net = tiny.model  # the same thread, now with a working model
    assert passes.open().forward([1, 2], 1).shape == (1, tiny.logits_size)


@pytest.mark.parametrize("rows", [1, 2])
@torch.inference_mode()
def test_rejected_drafts_are_forgotten_in_the_group_and_alone(tiny, rows):
    """A pass feeds [5, 6, 7]; 6 and 7 were wrong drafts, so the next pass drops them and
    feeds 8: the logits are those of prompt, 5, 8 fed one at a time."""
    expected = solo_logits(tiny.model, [PROMPTS[0], [5], [8]])[-1]
    passes = ForwardPasses(tiny.model, torch.device("cpu"), threaded=False)
    group = _Group()
    drafting, other = passes.open(), passes.open()
    for sequence, prompt in ((drafting, PROMPTS[0]), (other, PROMPTS[1]))[:rows]:
        passes._alone(_Job(sequence, prompt, 1))
        group.join([sequence], sequence.cache)
    group.step(tiny.model, [_Job(drafting, [5, 6, 7], 3), _Job(other, [30], 1)][:rows])
    job = _Job(drafting, [8], 1, drop=2)
    group.step(tiny.model, [job])
    np.testing.assert_allclose(job.logits[-1], expected, atol=1e-4)
    alone = passes.open()  # and the same without a group: the cache is cropped
    for ids, drop in ((PROMPTS[0], 0), ([5, 6, 7], 0), ([8], 2)):
        logits = alone.forward(ids, 1, drop)
    np.testing.assert_allclose(logits[-1], expected, atol=1e-4)


def test_a_page_run_left_mid_stream_frees_its_row(tiny):
    """The page's frames (``live_run``): when the visitor leaves, Gradio closes the frame
    generator, and the generation's row leaves the model's batch."""
    from fsmviz.app.live import pattern_view
    from fsmviz.app.regex_run import live_run
    from fsmviz.generation.generate import GenerationOptions

    view = pattern_view(r"[a-z ]{2000,}", tiny.vocab)  # 400 tokens: about a second
    frames = live_run(tiny, view, "x", GenerationOptions(max_tokens=400))
    next(frames)
    next(frames)
    assert len(tiny.passes._group.rows) == 1
    frames.close()
    for _ in range(100):
        if not tiny.passes._group.rows:
            break
        time.sleep(0.01)
    assert tiny.passes._group.rows == []


def test_one_callers_failure_leaves_the_others_in_its_batch_alone(tiny):
    passes = ForwardPasses(tiny.model, torch.device("cpu"), threaded=False)
    lost, fine = passes.open(), passes.open()
    lost.broken = RuntimeError("its cache was lost in an earlier failure")
    jobs = [_Job(lost, [1, 2], 1), _Job(fine, [1, 2], 1)]
    passes._run(jobs)
    assert isinstance(jobs[0].error, RuntimeError) and jobs[0].logits is None
    assert jobs[1].error is None and jobs[1].logits.shape == (1, tiny.logits_size)
    assert passes._group.rows == [fine]


@torch.inference_mode()
def test_prompts_that_arrive_together_share_a_pass(tiny):
    """Three prompts of different lengths in one left-padded pass, then a group step:
    every logit equals its solo pass (pad positions never leak into a real row)."""
    passes = ForwardPasses(tiny.model, torch.device("cpu"), threaded=False)
    sequences = [passes.open() for _ in PROMPTS]
    jobs = [_Job(s, prompt, 2) for s, prompt in zip(sequences, PROMPTS, strict=True)]
    passes._prompts_together(jobs)
    step = [_Job(s, [40 + i], 1) for i, s in enumerate(sequences)]
    passes._group.step(tiny.model, step)
    for i, prompt in enumerate(PROMPTS):
        alone = ForwardPasses(tiny.model, torch.device("cpu"), threaded=False).open()
        np.testing.assert_allclose(jobs[i].logits, alone.forward(prompt, 2), atol=1e-4)
        np.testing.assert_allclose(step[i].logits, alone.forward([40 + i], 1), atol=1e-4)
    assert [s.row for s in sequences] == [0, 1, 2]
    assert [s.length for s in sequences] == [len(p) + 1 for p in PROMPTS]


@torch.inference_mode()
def test_a_prompt_that_shares_the_last_prompt_s_start_reads_only_the_rest(tiny):
    """A prompt whose first tokens (a chat template's system prompt) the last prompt
    passed alone had starts from that prompt's cache: its pass reads only the rest, and
    its logits, and those of the steps after, equal a whole solo pass's. Prompts that all
    share it go alone rather than in one left-padded pass; a short overlap is not used."""
    system = list(range(100, 124))
    first, second, third = system + [5, 6, 7], system + [8, 9], system[:5] + [10, 11, 12]
    passes = ForwardPasses(tiny.model, torch.device("cpu"), threaded=False)
    passes.open().forward(first, 1)
    fed = []
    net_pass = passes.net.forward
    passes.net.forward = lambda **inputs: (
        fed.append(inputs["input_ids"].shape[1]) or net_pass(**inputs)
    )
    try:
        sequence = passes.open()
        got = [sequence.forward(second, 2), sequence.forward([40, 41], 1)]
    finally:
        passes.net.forward = net_pass
    assert fed == [2, 2]  # the prompt's own two tokens, not its 26
    assert sequence.length == len(second) + 2
    alone = ForwardPasses(tiny.model, torch.device("cpu"), threaded=False).open()
    np.testing.assert_allclose(got[0], alone.forward(second, 2), atol=1e-4)
    np.testing.assert_allclose(got[1], alone.forward([40, 41], 1), atol=1e-4)
    assert passes._shared_length(third, 1) == 0  # five shared tokens: below MIN_PREFIX
    jobs = [_Job(passes.open(), p, 1) for p in (system + [1], system + [2, 3])]
    assert passes._all_prefixed(jobs)
    assert not passes._all_prefixed(jobs + [_Job(passes.open(), third, 1)])


@torch.inference_mode()
def test_prompts_that_arrive_together_from_a_shared_start_step_with_the_group(tiny):
    """Prompts that arrive together, all sharing the last prompt's start, join the group
    from copies of its cache and feed only the rest in one group step, beside a row
    already there: every logit equals a whole solo pass's."""
    system = list(range(100, 124))
    passes = ForwardPasses(tiny.model, torch.device("cpu"), threaded=False)
    passes._run([_Job(passes.open(), system + [5, 6, 7], 1)])  # as the model's thread: the
    # first prompt alone, then into the group
    prompts = [system + [8, 9], system + [10, 11, 12, 13], system + [14]]
    jobs = [_Job(passes.open(), p, 1) for p in prompts]
    passes._run(jobs)
    assert [len(job.ids) for job in jobs] == [2, 4, 1]  # what each fed after the prefix
    assert [job.sequence.length for job in jobs] == [len(p) for p in prompts]
    step = [_Job(job.sequence, [40 + i], 1) for i, job in enumerate(jobs)]
    passes._run(step)
    for i, prompt in enumerate(prompts):
        alone = ForwardPasses(tiny.model, torch.device("cpu"), threaded=False).open()
        np.testing.assert_allclose(jobs[i].logits, alone.forward(prompt, 1), atol=1e-4)
        np.testing.assert_allclose(step[i].logits, alone.forward([40 + i], 1), atol=1e-4)


@torch.inference_mode()
def test_only_a_long_prompt_s_first_tokens_are_kept_for_the_next(tiny, monkeypatch):
    """A long prompt's cache is kept only up to ``PREFIX_TOKENS`` (a system prompt's
    length), and the next prompt still starts from it."""
    monkeypatch.setattr(batching, "PREFIX_TOKENS", 10)
    passes = ForwardPasses(tiny.model, torch.device("cpu"), threaded=False)
    passes.open().forward(list(range(100, 130)), 1)
    ids, cache = passes._prefix
    assert ids == list(range(100, 110)) and cache.get_seq_length() == 10
    prompt = list(range(100, 125)) + [7]
    sequence = passes.open()
    got = sequence.forward(prompt, 1)
    alone = ForwardPasses(tiny.model, torch.device("cpu"), threaded=False).open()
    np.testing.assert_allclose(got, alone.forward(prompt, 1), atol=1e-4)
