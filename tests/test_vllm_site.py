"""``tests/vllm_site/sitecustomize.py``, the test vLLM server's patch (see vllmserver.py): it
sets a shared-memory reader's spin to 0 s, and refuses a vLLM whose reader changed. On
stand-ins for vLLM's module (vLLM is not in this venv; the real one is patched at every
start of the server, which fails to start if the patch refuses it)."""

from __future__ import annotations

import importlib.util
import sys
import types

import pytest
from vllmserver import SITE


@pytest.fixture
def site(monkeypatch):
    """The sitecustomize module, loaded here; the finder it installs is taken out after."""
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    spec = importlib.util.spec_from_file_location("vllm_site_test", SITE / "sitecustomize.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert isinstance(sys.meta_path[0], module._Patcher)
    return module


def shm_module(defaults: tuple) -> types.ModuleType:
    class SpinCondition:
        def __init__(self, is_reader, context, notify_address, busy_loop_s=1):
            self.busy_loop_s = busy_loop_s

    SpinCondition.__init__.__defaults__ = defaults
    return types.SimpleNamespace(SpinCondition=SpinCondition)


def test_a_reader_no_longer_spins_and_a_changed_reader_is_refused(site) -> None:
    shm = shm_module((1,))
    site._no_spin(shm)
    assert shm.SpinCondition(True, None, "ipc://x").busy_loop_s == 0.0
    with pytest.raises(RuntimeError, match="SpinCondition changed"):
        site._no_spin(shm_module((2,)))  # vLLM's default is no longer the 1 s measured
    assert site._Patcher().find_spec("json", None) is None  # other modules: untouched
