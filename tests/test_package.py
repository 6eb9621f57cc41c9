"""The package's own surface: lazy generation names, options as a record."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import caches
import pytest

from fsmviz import GenerationOptions, Trace

ROOT = Path(__file__).resolve().parent.parent


def run_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_import_fsmviz_loads_no_torch_and_the_generation_names_load_on_first_use():
    """One fresh interpreter (torch's import is ~3.5 CPU-s, paid once): ``import fsmviz``
    loads no torch; a generation name loads it on first use; ``fsmviz.generate`` is still
    the function once the submodule of that name is imported."""
    code = (
        "import sys, fsmviz\n"
        "heavy = [m for m in ('torch', 'gradio', 'plotly') if m in sys.modules]\n"
        "fsmviz.load_model\n"
        "first_use = 'torch' in sys.modules\n"
        # imports the submodule `generate`
        "from fsmviz.generation.generate import MAX_PROMPT_CHARS\n"
        "from fsmviz import generate\n"
        "print(heavy, first_use, callable(generate), generate.__module__)"
    )
    assert run_python(code) == "[] True True fsmviz.generation.generate"


def test_a_trace_holds_its_options_as_a_record_and_still_reads_them_by_name():
    trace = Trace("", (), "accepted", True, options={"max_tokens": 8, "safe_end": False})
    assert trace.options == GenerationOptions(max_tokens=8, safe_end=False)
    assert trace.options["safe_end"] is False and trace.options.max_tokens == 8
    assert trace.to_dict()["options"]["max_tokens"] == 8
    assert Trace("", (), "accepted", True).options is None
    with pytest.raises(KeyError):
        trace.options["nope"]


def test_stream_takes_a_record_and_keywords_and_refuses_a_long_prompt(tiny):
    from fsmviz.generation.generate import MAX_PROMPT_CHARS, generate, stream

    trace = generate(tiny, "[a-z]{3}", "x", GenerationOptions(max_tokens=5, seed=2), seed=1)
    assert trace.options == GenerationOptions(max_tokens=5, seed=1)  # the keyword wins
    assert generate(tiny, "[a-z]{3}", "x", max_tokens=5, seed=1).text == trace.text
    with pytest.raises(ValueError, match="too long"):
        stream(tiny, None, "x" * (MAX_PROMPT_CHARS + 1))
    with pytest.raises(ValueError, match="max_tokens"):
        stream(tiny, None, "x", GenerationOptions(), max_tokens=0)


def test_clear_caches_empties_the_engines_caches(bundled_vocab):
    from fsmviz import build_index, clear_caches
    from fsmviz.tokens.index import _INDEXES  # looks inside on purpose

    build_index("[0-9]+", bundled_vocab)
    assert len(_INDEXES) > 0
    with caches.kept_through_clear():  # the model and the trie stay for the next test
        clear_caches()
        assert len(_INDEXES) == 0
