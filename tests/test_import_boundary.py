"""The engine boundary: ``import fsmviz`` and an index over a vocabulary load no torch,
gradio, plotly or transformers. Checked in a fresh interpreter, where nothing is imported yet."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["torch", "gradio", "plotly", "transformers"]

SCRIPT = """
import json, sys
import fsmviz
vocab = fsmviz.Vocabulary.from_strings(["a", "b", "ab", "1"], eos_token="<eos>")
index = fsmviz.build_index("(ab)+1?", vocab)
assert index.allowed_tokens(index.initial_state).tolist()
fsmviz.diagnose("[a-z]+", vocab)
try:
    fsmviz.compile_regex("a(?=b)")
except fsmviz.RegexError:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in %r)))
"""


def test_the_engine_imports_no_heavy_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT % (HEAVY,)], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.splitlines()[-1]) == []
