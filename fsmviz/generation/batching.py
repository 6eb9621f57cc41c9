"""Forward passes of one model, shared by concurrent generations: one thread, one batch.

Each generation (``generate.stream``) owns a ``Sequence``: a handle on its KV cache. It
asks for logits with ``sequence.forward(ids, last, drop)`` (``drop``: first forget that many
tokens, its rejected speculative drafts) and does everything else (masking, statistics,
sampling) itself, in numpy. On a CPU every forward pass runs on the model's
own thread, for two reasons measured on a 2-core machine with SmolLM2-135M:

* **One OpenMP team.** Torch spreads a pass over all cores with OpenMP, and each thread
  that calls torch gets its own team of helper threads. Once a process holds more such
  threads than cores, libgomp stops busy-waiting between the many small parallel
  regions of a decode step, and every step gets ~30% slower (19 → 13 tokens/s). A
  Gradio server runs each visitor in a different thread; here only one thread ever
  calls torch.
* **Batching.** A one-token step of a small model is bound by reading the weights, not
  by arithmetic: sixteen sequences advance in one pass for about three times the cost of
  one. So the thread keeps the waiting sequences in a *group*: one KV cache with a row per
  sequence, left-padded to a common width, plus a 0/1 attention mask saying which columns
  of a row are real. Every group step adds one column to every row (k columns when some
  sequence feeds k tokens at once, e.g. a fast-forward); a row with nothing to feed gets a
  masked pad, and dropped tokens become masked columns too. Positions are per row, so
  each sequence sees exactly its own tokens at their own positions, and its logits equal
  a solo pass up to float rounding (~1e-5).

Prompts that arrive together go through one left-padded pass (pad positions masked), a
lone prompt through a pass of its own; then their sequences join the group. A sequence
leaves when its generation ends (``close``), or, kept intact, when it stops asking for a
while (its consumer paused). Only models with plain growing caches (``DynamicLayer``, as
Llama/SmolLM2) are grouped; others, and GPUs, run every pass alone. GPUs run it in the
caller's thread, in turns: ZeroGPU attaches the GPU only inside the decorated call.

**Fork.** A forked child has only the thread that forked: the model's thread stays behind
in the parent, and a pass the child queued for it would wait forever. So each
``ForwardPasses`` signs in to a weak set, and the child (``os.register_at_fork``) starts
from an empty queue, a fresh lock and group, and no thread: its first pass starts its own.
The sequences the parent had open stay the parent's; the child opens its own.
"""

from __future__ import annotations

import copy
import inspect
import os
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakSet

import numpy as np
import torch

from fsmviz.cache import bounded
from fsmviz.errors import FsmvizError

__all__ = [
    "ClientGone",
    "ForwardPassError",
    "ForwardPasses",
    "Sequence",
    "left_padded",
    "stop_when",
]

GATHER_SECONDS = 0.04
"""How long a group step may wait for every row of the group to ask. Between two steps
each generation does its statistics in numpy, 1–2 ms, mostly one at a time (the GIL): with
16 rows a shorter wait splits the group into several smaller, costlier passes (16 threads
on two cores: 73 tokens/s in all with 10 ms, 103 with 40 ms). A lone sequence never waits."""
IDLE_SECONDS = 1.0
"""A sequence that has not asked for this long since its last answer leaves the group (its
cache kept). Counted from the answer, not from the asking: sixteen prompts' pass takes
about a second on a busy 2-core CPU, and counted from the asking, a 1.04-s pass made every
row leave the moment it was answered, then come back one solo pass at a time (16 users'
tokens/s fell from 72 to 54)."""
MIN_PREFIX = 8
"""Tokens a prompt must share with the last prompt passed alone before its pass starts
from that prompt's cache (``ForwardPasses._shared_prefix``): a chat template's system
prompt is most of a short question's (24 of SmolLM2's 38 tokens)."""

PREFIX_TOKENS = 256
"""The most first tokens of the last prompt kept for the next (a system prompt's)."""


class ForwardPassError(FsmvizError, RuntimeError):
    """A forward pass failed (out of memory, most often); the message says what to do."""


class ClientGone(FsmvizError):
    """The run's client left (it closed its stream): the run stops at its next forward
    pass and its row leaves the batch. Nobody is left to read this message; it ends the
    run the way any error does (the stream's ``finally`` frees the cache)."""


_GONE: ContextVar[Callable[[], bool] | None] = ContextVar("fsmviz_client_gone", default=None)
"""Whether the client of the run in this thread has left (``stop_when``)."""


@contextmanager
def stop_when(gone: Callable[[], bool]) -> Iterator[None]:
    """Runs started in this block stop once ``gone()`` is true: every forward pass they
    ask for first asks ``gone`` (a dictionary look-up: the server's record of the
    client's request), and a pass already queued for the model's thread is dropped
    there. The app wraps each API call in this (``fsmviz.app.leaving``); the library
    never needs it (a reader that stops reading a ``stream`` closes it).

    >>> with stop_when(lambda: True):
    ...     _check_client()
    Traceback (most recent call last):
    ...
    fsmviz.generation.batching.ClientGone: the client left, so its run was stopped
    """
    token = _GONE.set(gone)
    try:
        yield
    finally:
        _GONE.reset(token)


def _check_client() -> Callable[[], bool] | None:
    """This thread's ``gone`` check (``stop_when``), after raising ``ClientGone`` when
    the client has already left."""
    gone = _GONE.get()
    if gone is not None and gone():
        raise ClientGone("the client left, so its run was stopped")
    return gone


def _explain(error: BaseException, tokens: int, generations: int) -> ForwardPassError | ClientGone:
    if isinstance(error, ForwardPassError | ClientGone):
        return error
    what = f"{type(error).__name__}: {error}"
    if isinstance(error, MemoryError) or "out of memory" in str(error).lower():
        return ForwardPassError(
            f"the model ran out of memory ({tokens:,} tokens in context, {generations} generations "
            "in the batch): ask for fewer tokens or a shorter prompt, or try again when "
            f"fewer people are generating ({what})"
        )
    return ForwardPassError(f"the model failed during a forward pass: {what}")


class Sequence:
    """One generation's KV cache, held where the model runs. Fields are touched only by
    the model's thread (or under its lock on a GPU)."""

    def __init__(self, passes: ForwardPasses):
        self._passes = passes
        self.cache: Any = None  # its own cache while alone; None while in the group
        self.row: int | None = None  # its row in the group
        self.length = 0  # tokens seen: the position of the next one
        self.answered = time.monotonic()  # when its last pass ended (``IDLE_SECONDS``)
        self.broken: BaseException | None = None

    def forward(self, ids: list[int], last: int, drop: int = 0) -> np.ndarray:
        """Forget the last ``drop`` tokens (rejected drafts), then feed ``ids``, extending
        the cache; float32 logits of the last ``last`` of them."""
        return self._passes.forward(self, ids, last, drop)

    def close(self) -> None:
        """Free the cache (the generation is over)."""
        self._passes.close(self)


@dataclass(eq=False)
class _Job:
    sequence: Sequence
    ids: list[int]  # empty: close the sequence
    last: int = 0
    drop: int = 0  # tokens to forget first
    gone: Callable[[], bool] | None = None  # whether its client left (``stop_when``)
    done: threading.Event = field(default_factory=threading.Event)
    logits: np.ndarray | None = None
    error: BaseException | None = None


class ForwardPasses:
    """Runs every forward pass of ``net``; see the module docstring."""

    def __init__(self, net: Any, device: torch.device, threaded: bool | None = None):
        self.net = net
        self.device = device
        self.threaded = device.type == "cpu" if threaded is None else threaded
        """On its own thread, batching; else each pass in the caller's thread, in turns."""
        self.batch_sizes: Counter[int] = Counter()
        """How many sequences each group step advanced (for tests and benchmarks)."""
        self._groups: bool | None = None  # whether this model's caches can be grouped
        self._fresh()
        _ALL_PASSES.add(self)

    def _fresh(self) -> None:
        """No thread, nothing queued, nobody in the group: at the start, and in a forked
        child (the parent's thread, queue and lock stay the parent's)."""
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._group = _Group()
        self._prefix: tuple[list[int], Any] | None = None  # the last prompt passed alone,
        # and a copy of its cache (``_shared_prefix``)

    def open(self) -> Sequence:
        return Sequence(self)

    @property
    def sharing(self) -> bool:
        """Whether several sequences share the passes now. Then extra tokens in one pass
        (speculative drafts) cost every row a column, so generations stop drafting."""
        return len(self._group.rows) > 1

    def forward(self, sequence: Sequence, ids: list[int], last: int, drop: int = 0) -> np.ndarray:
        gone = _check_client()  # a run whose client left stops here (``stop_when``)
        job = _Job(sequence, list(ids), last, drop, gone=gone)
        if self.threaded:
            self._start()
            self._jobs.put(job)
            job.done.wait()
        else:
            with self._lock:
                try:
                    self._alone(job)
                except Exception as error:  # noqa: BLE001 - explained below
                    job.error = error
        if job.error is not None:
            raise _explain(job.error, sequence.length + len(ids), len(self._group.rows) or 1)
        assert job.logits is not None
        return job.logits

    def close(self, sequence: Sequence) -> None:
        if self.threaded and self._thread is not None:
            self._jobs.put(_Job(sequence, []))  # the thread frees its row; nobody waits
        else:
            sequence.cache = None

    # --- the model's thread ---------------------------------------------------------------

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="fsmviz-model", daemon=True
                )
                self._thread.start()

    def _serve(self) -> None:
        while True:
            jobs = _gather(self._jobs, len(self._group.rows))
            try:
                self._run(jobs)
            except BaseException as error:  # noqa: BLE001 - a group step failed: every
                self._fail(jobs, error)  # waiter must hear of it
            for job in jobs:
                job.done.set()

    @torch.inference_mode()
    def _run(self, jobs: list[_Job]) -> None:
        group = self._group
        for job in jobs:
            if job.ids and job.gone is not None and job.gone():
                # queued work of a client that left: dropped, and the row leaves the group
                job.error = ClientGone("the client left, so its run was stopped")
                group.leave(job.sequence, keep=False)
                job.ids = []
            elif not job.ids:
                group.leave(job.sequence, keep=False)
        jobs = [job for job in jobs if job.error is None]
        stepping = [job for job in jobs if job.ids and job.sequence.row is not None]
        outside = [job for job in jobs if job.ids and job.sequence.row is None]
        prompts = [job for job in outside if job.sequence.length == 0]
        if len(prompts) > 1 and self._groups:
            if self._all_prefixed(prompts):
                stepping += self._join_from_prefix(prompts)
            else:
                self._prompts_together(prompts)
            outside = [job for job in outside if job not in prompts]
        for job in outside:
            try:
                self._alone(job)
            except Exception as error:  # noqa: BLE001 - this caller's failure only
                job.error = error
                continue
            self._groups = _groupable(job.sequence.cache)
            if self._groups:
                group.join([job.sequence], job.sequence.cache)
        if stepping:
            group.step(self.net, stepping)
            self.batch_sizes[len(stepping)] += 1
        now = time.monotonic()
        for job in jobs:
            job.sequence.answered = now  # idle from here, until it asks again
        for sequence in list(group.rows):
            if now - sequence.answered > IDLE_SECONDS:
                group.leave(sequence, keep=True)

    def _alone(self, job: _Job) -> None:
        """One sequence's pass with its own cache (its prompt; everything on a GPU)."""
        sequence = job.sequence
        if sequence.broken is not None:
            raise sequence.broken
        if job.drop:
            sequence.length -= job.drop
            sequence.cache.crop(-job.drop)
        ids, prompt = job.ids, sequence.cache is None and sequence.length == 0
        if prompt:
            shared, sequence.cache = self._shared_prefix(ids, job.last)
            ids, sequence.length = ids[shared:], shared
        input_ids = torch.tensor([ids], device=self.device)
        with torch.inference_mode():
            out, sequence.cache = _net_pass(
                self.net, sequence.cache, input_ids=input_ids, logits_to_keep=job.last
            )
        sequence.length += len(ids)
        job.logits = _numpy(out.logits[0, -job.last :])
        if prompt and _groupable(sequence.cache):
            kept = copy.deepcopy(sequence.cache)
            if sequence.length > PREFIX_TOKENS:
                kept.crop(PREFIX_TOKENS - sequence.length)
            self._prefix = (list(job.ids[:PREFIX_TOKENS]), kept)

    def _shared_prefix(self, ids: list[int], last: int) -> tuple[int, Any]:
        """How many first tokens of the prompt ``ids`` the last prompt passed alone had
        (at least ``MIN_PREFIX``, else 0), and a copy of its cache cut to them (None): the
        prompt's pass then reads only the rest. Visitors' prompts share their chat
        template's system prompt, and a 38-token pass costs about three 14-token ones.
        Its logits equal a whole pass's up to float rounding, as a group step's do."""
        shared = self._shared_length(ids, last)
        if shared == 0:
            return 0, None
        assert self._prefix is not None
        cache = copy.deepcopy(self._prefix[1])
        if cache.get_seq_length() > shared:
            cache.crop(shared - cache.get_seq_length())  # (a positive length is refused)
        return shared, cache

    def _shared_length(self, ids: list[int], last: int) -> int:
        if self._prefix is None:
            return 0
        known = self._prefix[0]
        most = max(min(len(known), len(ids) - last), 0)
        shared = next((i for i in range(most) if known[i] != ids[i]), most)
        return shared if shared >= MIN_PREFIX else 0

    def _all_prefixed(self, jobs: list[_Job]) -> bool:
        """Whether every prompt of ``jobs`` shares a prefix with the last prompt passed
        alone (``_join_from_prefix``)."""
        return all(self._shared_length(job.ids, job.last) for job in jobs)

    def _join_from_prefix(self, jobs: list[_Job]) -> list[_Job]:
        """Prompts that arrive together, each sharing a prefix with the last prompt passed
        alone: each joins the group with a copy of that prompt's cache cut to what they
        share, and the jobs, left to feed the rest, step with the group (a group step
        feeds rows different numbers of tokens). Sixteen visitors' 38-token prompts then
        cost one pass over 16 x 14 tokens, not 16 x 38."""
        for job in jobs:
            shared, cache = self._shared_prefix(job.ids, job.last)
            job.sequence.length = shared
            self._group.join([job.sequence], cache)
            job.ids = job.ids[shared:]
        return jobs

    def _prompts_together(self, jobs: list[_Job]) -> None:
        """Several prompts in one pass, left-padded to a common width (pad positions are
        masked and get position 0), then into the group as new rows."""
        input_ids, mask, positions = (
            torch.as_tensor(a, device=self.device) for a in left_padded([job.ids for job in jobs])
        )
        out, cache = _net_pass(
            self.net,
            None,
            input_ids=input_ids,
            attention_mask=mask,
            position_ids=positions,
            logits_to_keep=max(job.last for job in jobs),
        )
        for r, job in enumerate(jobs):
            job.logits = _numpy(out.logits[r, out.logits.shape[1] - job.last :])
            job.sequence.length = len(job.ids)
        self._group.join([job.sequence for job in jobs], cache, mask)
        self.batch_sizes[len(jobs)] += 1

    def _fail(self, jobs: list[_Job], error: BaseException) -> None:
        """A pass failed (out of memory, say): its jobs report it, and the group's caches
        are gone, so each of its sequences reports it when it next asks."""
        for job in jobs:
            if job.logits is None and job.ids:
                job.error = error
        for sequence in self._group.rows:
            sequence.broken = error
            sequence.row = None
        self._group = _Group()


_ALL_PASSES: WeakSet[ForwardPasses] = WeakSet()


def _after_fork_in_child() -> None:
    for passes in list(_ALL_PASSES):
        passes._fresh()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _Group:
    """The KV caches of the grouped sequences, as one batch (see the module docstring)."""

    def __init__(self) -> None:
        self.rows: list[Sequence] = []
        """The grouped sequences, by row: ``rows[i]`` is row ``i`` of the batch (its
        ``Sequence.row``). In this module a *row* is always one sequence's line of the
        batch: of the cache, the mask, the input ids and the logits."""
        self.cache: Any = None  # a DynamicCache with one row per sequence
        self.mask: torch.Tensor | None = None  # (rows, columns): 1 where a row's token is

    def join(self, sequences: list[Sequence], cache: Any, mask: torch.Tensor | None = None) -> None:
        """Add ``sequences`` as rows, their caches being the rows of ``cache`` (real
        columns where ``mask`` is 1; all of them without a mask)."""
        if mask is None:
            mask = torch.ones((1, cache.get_seq_length()), dtype=torch.long, device=_device(cache))
        if not self.rows:
            self.cache, self.mask = cache, mask
        else:
            assert self.mask is not None
            width, length = self.mask.shape[1], mask.shape[1]
            if length > width:
                self._widen(length - width)
                width = length
            pad = width - length
            for layer, mine in zip(self.cache.layers, cache.layers, strict=True):
                layer.keys = torch.cat([layer.keys, _pad_left(mine.keys, pad)])
                layer.values = torch.cat([layer.values, _pad_left(mine.values, pad)])
            self.mask = torch.cat([self.mask, torch.nn.functional.pad(mask, (pad, 0))])
        for sequence in sequences:
            sequence.row = len(self.rows)
            sequence.cache = None
            self.rows.append(sequence)

    def leave(self, sequence: Sequence, keep: bool) -> None:
        """Take ``sequence`` out; with ``keep``, its real columns become its own cache."""
        if sequence.row is None:
            if not keep:
                sequence.cache = None
            return
        assert self.mask is not None
        index = sequence.row
        if keep:
            from transformers import DynamicCache

            columns = self.mask[index].nonzero().squeeze(1)
            sequence.cache = DynamicCache(
                ddp_cache_data=[
                    (
                        layer.keys[index : index + 1, :, columns],
                        layer.values[index : index + 1, :, columns],
                    )
                    for layer in self.cache.layers
                ]
            )
        sequence.row = None
        del self.rows[index]
        for position, member in enumerate(self.rows):
            member.row = position
        if not self.rows:
            self.cache = self.mask = None
            return
        others = torch.tensor(
            [i for i in range(self.mask.shape[0]) if i != index], device=self.mask.device
        )
        self.mask = self.mask[others]
        dead = int((self.mask.sum(0) == 0).long().cumprod(0).sum())  # columns nobody uses
        self.mask = self.mask[:, dead:]
        for layer in self.cache.layers:
            layer.keys = layer.keys[others, :, dead:]
            layer.values = layer.values[others, :, dead:]

    def step(self, net: Any, jobs: list[_Job]) -> None:
        """Advance every row by ``k`` columns, ``k`` the most tokens any job feeds."""
        assert self.mask is not None
        rows, k = len(self.rows), max(len(job.ids) for job in jobs)
        device = self.mask.device
        input_ids = torch.zeros((rows, k), dtype=torch.long, device=device)
        new = torch.zeros((rows, k), dtype=torch.long, device=device)
        positions = torch.tensor([[s.length] * k for s in self.rows], device=device)
        for job in jobs:
            sequence, n = job.sequence, len(job.ids)
            r = sequence.row
            if job.drop:
                self._forget(sequence, job.drop)
            input_ids[r, :n] = torch.tensor(job.ids, device=device)
            new[r, :n] = 1
            positions[r, :n] = torch.arange(sequence.length, sequence.length + n)
        self.mask = torch.cat([self.mask, new], dim=1)
        out, self.cache = _net_pass(
            net,
            self.cache,
            input_ids=input_ids,
            attention_mask=None if bool(self.mask.all()) else self.mask,
            position_ids=positions,
            logits_to_keep=k,
        )
        for job in jobs:
            sequence, n = job.sequence, len(job.ids)
            job.logits = _numpy(out.logits[sequence.row, n - job.last : n])
            sequence.length += n

    def _forget(self, sequence: Sequence, tokens: int) -> None:
        """Drop the last ``tokens`` of ``sequence`` (rejected drafts)."""
        assert self.mask is not None
        if len(self.rows) == 1:  # its last columns are the cache's: cut them off
            self.cache.crop(-tokens)
            self.mask = self.mask[:, :-tokens]
        else:  # the row's last real columns become padding
            real = self.mask[sequence.row].nonzero().squeeze(1)
            self.mask[sequence.row, real[-tokens:]] = 0
        sequence.length -= tokens

    def _widen(self, extra: int) -> None:
        """``extra`` padding columns on the left of every row."""
        assert self.mask is not None
        for layer in self.cache.layers:
            layer.keys = _pad_left(layer.keys, extra)
            layer.values = _pad_left(layer.values, extra)
        zeros = torch.zeros((self.mask.shape[0], extra), dtype=torch.long, device=self.mask.device)
        self.mask = torch.cat([zeros, self.mask], dim=1)


def _net_pass(net: Any, cache: Any, **inputs: Any) -> tuple[Any, Any]:
    """One pass of ``net`` over ``inputs`` after the key-value ``cache`` (None: none yet):
    its output and the cache after it. transformers 5.24 named the cache ``cache``, as
    an argument and in the output (``past_key_values`` is accepted until 5.40, with a
    warning); earlier releases know only ``past_key_values``."""
    name = _cache_name(type(net))
    out = net(**inputs, **{name: cache}, use_cache=True)
    return out, getattr(out, name)


@bounded(maxsize=8)
def _cache_name(kind: type) -> str:
    return "cache" if "cache" in inspect.signature(kind.forward).parameters else "past_key_values"


def left_padded(sequences: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token ids, attention mask and positions of ``sequences`` as one batch: a row per
    sequence, each ending at the right edge, so the next token of every row lands in the
    same column. Pads are masked (0) and get id 0 and position 0; real tokens count their
    positions from 0, as if each row were alone.

    >>> ids, mask, positions = left_padded([[5, 6, 7], [8]])
    >>> ids.tolist(), mask.tolist(), positions.tolist()
    ([[5, 6, 7], [0, 0, 8]], [[1, 1, 1], [0, 0, 1]], [[0, 1, 2], [0, 0, 0]])
    """
    width = max(len(ids) for ids in sequences)
    ids = np.zeros((len(sequences), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    positions = np.zeros_like(ids)
    for row, tokens in enumerate(sequences):
        start = width - len(tokens)
        ids[row, start:] = tokens
        mask[row, start:] = 1
        positions[row, start:] = np.arange(len(tokens))
    return ids, mask, positions


def _gather(waiting: queue.SimpleQueue[_Job], group_size: int) -> list[_Job]:
    """The next job, and those that arrive while the group's rows catch up: wait (at most
    ``GATHER_SECONDS``) until each of the ``group_size`` rows asked, then take whatever
    else is already there."""
    jobs = [waiting.get()]
    deadline = time.monotonic() + GATHER_SECONDS
    while _group_steps(jobs) < group_size:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            jobs.append(waiting.get(timeout=remaining))
        except queue.Empty:
            break
    while True:
        try:
            jobs.append(waiting.get_nowait())
        except queue.Empty:
            return jobs


def _group_steps(jobs: list[_Job]) -> int:
    """How many of ``jobs`` ask for a step of a sequence in the group."""
    return sum(job.sequence.row is not None and bool(job.ids) for job in jobs)


def _groupable(cache: Any) -> bool:
    """A plain growing cache (no sliding window, no quantisation) can share a batch."""
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    return type(cache) is DynamicCache and all(type(x) is DynamicLayer for x in cache.layers)


def _pad_left(tensor: torch.Tensor, columns: int) -> torch.Tensor:
    """Zeros before the sequence axis (dim 2) of a (batch, heads, seq, dim) tensor."""
    if columns == 0:
        return tensor
    return torch.nn.functional.pad(tensor, (0, 0, columns, 0))


def _device(cache: Any) -> torch.device:
    return cache.layers[0].keys.device


def _numpy(logits: torch.Tensor) -> np.ndarray:
    return logits.float().cpu().numpy()
