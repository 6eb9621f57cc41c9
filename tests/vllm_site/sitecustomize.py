"""Run by every Python process of the test vLLM server (``VllmServer`` puts this folder on
its ``PYTHONPATH``): its API server, its engine core and its model worker.

vLLM on CPU always runs the model in a worker process of its own, and the engine core and
the worker pass every step through a shared-memory queue whose reader spins
(``os.sched_yield`` in a loop) for ``busy_loop_s`` = 1 s after each message before it
sleeps on a socket (``shm_broadcast.SpinCondition``). The engine core so spins through
every forward pass of the worker, and the worker for a second after every step; on two
cores shared with the test workers each spinner takes its share of a core. With
``busy_loop_s`` 0 a reader sleeps on the socket at once and the writer's notification
(sent with every message) wakes it: the same messages, the same order, the same tokens.

The patch is made when vLLM imports the module (nothing is imported here: the resource
tracker, a Python process of the server too, never loads vLLM), and fails loudly if the
module no longer has what it changes.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

MODULE = "vllm.distributed.device_communicators.shm_broadcast"
SPIN_SECONDS = 0.0
"""A reader's spin after a message (vLLM's own: 1.0)."""


def _no_spin(module: ModuleType) -> None:
    init = module.SpinCondition.__init__
    names = init.__code__.co_varnames[: init.__code__.co_argcount]
    if names[-1] != "busy_loop_s" or init.__defaults__ != (1,):
        raise RuntimeError(f"{MODULE}.SpinCondition changed: {names} {init.__defaults__}")
    init.__defaults__ = (SPIN_SECONDS,)


class _Patcher(importlib.abc.MetaPathFinder):
    """Finds ``MODULE`` as Python would, and patches it right after it runs."""

    def find_spec(self, name, path, target=None):  # noqa: ANN001  (the finder protocol)
        if name != MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _no_spin(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _Patcher())
