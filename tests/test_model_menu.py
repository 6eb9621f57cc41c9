"""The page chooses the model (issue 43, Build point 3): ``app.py --model A --model B`` offers
local models beside the app's own and the configured servers, in the one ``backend`` menu
(``fsmviz.app.local_models``); a model is loaded when a visitor first picks it, at most
``KEPT`` held; the run, its allowed sets, the doctor and the downloads follow the pick.

The models are two families' tiny random-weight models (``tests/vocabs.py``: Llama 2's 32k
SentencePiece and GPT-2's 50k byte-level BPE) saved as model folders, so the app loads them
by its own path (``load_model``), through the Generate tab's handlers. The browser check of
the menu is test_page.py's (no page load of its own)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import regex

from fsmviz.app import local_models
from fsmviz.app.backend import BUNDLED, choices, configure_servers, restore_backend
from fsmviz.app.local_models import configure_models, parse_models, split_models
from fsmviz.errors import InputError

ROOT = Path(__file__).resolve().parent.parent


def test_the_first_model_is_the_apps_and_the_others_are_offered_by_name() -> None:
    assert split_models(["a", "llama=/m/llama3", "org/q"], "env") == (
        "a",
        ["llama=/m/llama3", "org/q"],
    )
    assert split_models(None, "a, org/q") == ("a", ["org/q"])
    assert split_models(["q=org/q"], None) == (None, ["q=org/q"])  # the bundled one stays
    assert parse_models(["llama=/m/llama3", "org/q"]) == {"llama": "/m/llama3", "org/q": "org/q"}
    for entry, words in (("=/m", "is not NAME=SOURCE"), ("a=", "is not NAME=SOURCE")):
        with pytest.raises(InputError, match=words):
            parse_models([entry])
    with pytest.raises(InputError, match="the name 'prod' is taken"):
        parse_models(["prod=/m"], taken=[BUNDLED, "prod"])


def test_the_app_refuses_a_model_named_as_a_server_at_once_with_status_2() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "app.py"), "--server", "prod=http://127.0.0.1:8000",
         "--model", "main", "--model", "prod=/models/x"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "app.py: error: --model 'prod=/models/x': the name 'prod' is taken" in done.stderr


def test_one_menu_lists_the_apps_model_the_offered_ones_and_the_servers() -> None:
    try:
        configure_models({"spm": "/nowhere/spm", "gpt2": "/nowhere/gpt2"})
        configure_servers({"prod": "http://127.0.0.1:1"})
        assert choices() == [BUNDLED, "spm", "gpt2", "prod"]
        assert len(local_models._HELD) == 0  # offered, not loaded: nothing picked yet
        link = SimpleNamespace(query_params={"backend": "gpt2"})
        assert restore_backend(link) == "gpt2"  # a permalink names an offered model too
        from fsmviz.app.handlers import written_by  # Apply & run's "before": whose run
        from fsmviz.generation.trace import Trace

        on_spm, ours = (Trace("a", (), "accepted", True, model=m) for m in ("/nowhere/spm", "x"))
        assert [written_by(on_spm, c) for c in ("spm", "gpt2", BUNDLED)] == [True, False, False]
        assert [written_by(ours, c) for c in ("spm", "gpt2", BUNDLED)] == [False, False, True]
    finally:
        configure_models({})
        configure_servers({})


# --- two families' tiny models, picked on the page ------------------------------------------

FAMILIES = {"spm": "llama-spm", "gpt2": "gpt-2"}
PATTERN = r"[a-z]{2,5}( [0-9]{1,2})?"


@pytest.fixture(scope="module")
def offered(tmp_path_factory):
    import vocabs

    why = vocabs.missing()
    if why:
        pytest.skip(why)
    root = tmp_path_factory.mktemp("models")
    folders = {name: str(vocabs.model_folder(f, root / name)) for name, f in FAMILIES.items()}
    configure_models(folders, "cpu")
    yield folders
    configure_models({})


def page():
    from fsmviz.app import handlers as h

    return h.Page(*(f"c{i}" for i in range(22)))


def run_on(choice: str, app_model=None):
    """A Generate click with the menu on ``choice``: the run's trace and its updates."""
    from fsmviz.app import handlers as h

    shown = page()
    run = h.RunInputs(PATTERN, "Word:", 8, 1.0, 0, False, 0.0, backend=choice)
    updates = list(h.on_run(shown, app_model, run))
    traces = [u[shown.trace] for u in updates if u.get(shown.trace) is not None]
    assert traces, [u.get(shown.error) or u.get(shown.status) for u in updates]
    return traces[-1], updates, shown


@pytest.mark.slow
def test_a_picked_model_runs_in_its_own_tokens_with_its_allowed_sets_and_downloads(offered):
    from fsmviz import first_allowed_tokens
    from fsmviz.app.backend import run_source

    counts = {}
    for choice, size in (("spm", 32000), ("gpt2", 50257)):
        trace, updates, shown = run_on(choice, app_model=None)  # never the app's model
        model = run_source(None, choice).get()
        vocab = model.vocab
        assert len(vocab) == size and model.name == offered[choice]
        assert b"".join(vocab.token_bytes(s.token_id) for s in trace.steps if not s.cut) == (
            trace.text.encode()
        )
        accepted = regex.fullmatch(PATTERN, trace.text) is not None
        assert trace.matched == accepted and (trace.stop_reason == "accepted") == accepted
        first = first_allowed_tokens(PATTERN, vocab)
        assert trace.steps[0].allowed_count == len(first)
        assert trace.steps[0].token_id in set(first.tolist())
        counts[choice] = len(first)
        said = [u[shown.status] for u in updates if isinstance(u.get(shown.status), str)]
        assert any(s.startswith(f"Done on {choice}: ") for s in said), said  # whose tokens
        files = next(u[shown.downloads] for u in updates if shown.downloads in u)
        saved = json.loads(Path(next(f for f in files if f.endswith("trace.json"))).read_text())
        assert [s["token_id"] for s in saved["steps"]] == [s.token_id for s in trace.steps]
    assert counts["spm"] != counts["gpt2"]  # the allowed sets are each model's own


@pytest.mark.slow
def test_a_run_whose_shadow_run_is_skipped_still_names_the_picked_model(offered):
    """Stop during the shadow run keeps the constrained run's status, "Done on spm: ..."
    (it said "Done: ..." there once: CI's browser test skipped the shadow run in time); the
    Grammar tab's runs name the picked model too."""
    from fsmviz.app import handlers as h

    shown, mark = page(), h.StopMark()
    run = h.RunInputs(PATTERN, "Word:", 8, 1.0, 0, False, 0.0, backend="spm")
    said = []
    for update in h.on_run(shown, None, run, mark):
        if update.get(shown.trace) is not None:
            mark.stop()  # the constrained run is over: Stop lands on the shadow run
        said.append(update.get(shown.status))
    assert said[-1].startswith("Done on spm: ") and said[-1].endswith("skipped."), said
    from fsmviz.app.grammar_page import GrammarRunInputs, GrammarTab, on_run  # the Grammar tab

    tab, mark = GrammarTab(shown, "place", "terminal"), h.StopMark()
    asked = GrammarRunInputs('root ::= "ab" [0-9]', "auto", "A:", 4, 0.0, 0, True, "spm")
    said = [u.get(shown.status) for u in on_run(tab, None, asked, mark)]
    assert any(isinstance(s, str) and s.startswith("Done on spm: ") for s in said), said


@pytest.mark.slow
def test_the_doctor_reads_the_picked_models_vocabulary(offered, bundled_vocab):
    """``\\x04`` has no token in the bundled SmolLM2 vocabulary (a dead end, named), while
    SentencePiece's byte fallback writes it (``<0x04>``): the same pattern, two verdicts, on
    the Generate tab and on the Grammar tab (its own menu, the same choices)."""
    from fsmviz.app import handlers as h

    app_model = SimpleNamespace(vocabulary=lambda: bundled_vocab)
    shown, pattern = page(), "a\x04b"
    said = {}
    for choice in (BUNDLED, "spm"):
        drawn = h.Drawn(pattern, backend=choice)
        said[choice] = h.on_pattern_edit(shown, app_model, None, drawn)[shown.diagnosis]
    assert "x04" in said[BUNDLED] and "SmolLM2" in said[BUNDLED]
    assert "x04" not in said["spm"]
    from fsmviz.app.grammar_page import (  # the Grammar tab's too
        GrammarEdit,
        GrammarTab,
        on_grammar_edit,
    )

    tab, grammar = GrammarTab(shown, "place", "terminal"), 'root ::= "a" [\x04] "b"'
    for choice in (BUNDLED, "spm"):
        updates = on_grammar_edit(tab, app_model, GrammarEdit(grammar, "auto", 16, None, choice))
        said[choice] = updates[shown.diagnosis]
    assert "unspellable_terminal" in said[BUNDLED] and "SmolLM2" in said[BUNDLED]
    assert "unspellable_terminal" not in said["spm"]


# --- the schema part's doctor, /diagnose and the grammar masks follow the pick -------------

CONTROL_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"a": {"type": "string", "pattern": "^x\u0004$"}},
        "required": ["a"],
    }
)
"""A field only ``\\x04`` completes: no SmolLM2 token writes it (a dead end, named), Llama 2's
byte fallback (``<0x04>``) does."""


def kinds(findings) -> set[str]:
    return {f.kind for f in findings}


@pytest.mark.slow
def test_the_schema_parts_doctor_reads_the_picked_models_vocabulary(offered, bundled_vocab):
    """Use this schema and the menu's change: the findings in the chosen model's tokens."""
    from fsmviz.app.schema_page import on_model_change, on_use

    app_model = SimpleNamespace(vocabulary=lambda: bundled_vocab)
    found = {}
    for choice in (BUNDLED, "spm"):
        regex_, chosen, findings, shown, error, _ = on_use(
            app_model, CONTROL_SCHEMA, "none", 64, choice
        )
        assert not error and chosen.regex == regex_
        found[choice] = kinds(findings)
        again, again_html = on_model_change(app_model, chosen, regex_, 64, choice)
        assert kinds(again) == found[choice] and again_html == shown
    assert "dead_end" in found[BUNDLED] and "dead_end" not in found["spm"]
    # the menu changed with no schema in use (the Regex box edited since): nothing redone
    import gradio as gr

    assert on_model_change(app_model, chosen, "other", 64, "spm") == (gr.skip(), gr.skip())


@pytest.mark.slow
def test_a_links_model_is_the_one_its_findings_read(offered, bundled_vocab):
    """A permalink with ``backend=NAME``: the pattern's and the schema's findings drawn at
    load in that model's tokens (the menu is set by the link too: ``restore_backend``)."""
    from fsmviz.app.handlers import on_load

    app_model = SimpleNamespace(vocabulary=lambda: bundled_vocab, status="Model: x", ready=True)
    for backend, dead in ((None, True), ("spm", False)):
        asked = {"regex": "a\x04b", **({"backend": backend} if backend else {})}
        values = on_load(app_model, SimpleNamespace(query_params=asked))
        assert ("x04" in values[8]) is dead, values[8]  # the doctor's findings
        asked = {"schema": CONTROL_SCHEMA, **({"backend": backend} if backend else {})}
        values = on_load(app_model, SimpleNamespace(query_params=asked))
        assert ("dead_end" in kinds(values[15])) is dead  # the schema part's findings


@pytest.mark.slow
def test_diagnose_endpoint_reads_the_named_models_vocabulary(offered, bundled_vocab):
    import gradio as gr

    from fsmviz.app.api.regex import diagnose_endpoint

    tool = diagnose_endpoint(SimpleNamespace(vocabulary=lambda: bundled_vocab))
    default, spm = tool("a\x04b", 16), tool("a\x04b", 16, backend="spm")
    assert default["vocabulary"] == bundled_vocab.name != spm["vocabulary"]
    assert spm["vocabulary"] == offered["spm"]  # the offered model's own name
    assert "dead_end" in {f["kind"] for f in default["findings"]}
    assert "dead_end" not in {f["kind"] for f in spm["findings"]}
    assert tool("a", 16, backend=BUNDLED)["vocabulary"] == bundled_vocab.name
    with pytest.raises(gr.Error, match="no server named 'nope' is offered here.*'spm'"):
        tool("a", 16, backend="nope")


@pytest.mark.slow
def test_the_grammar_mask_comparison_reads_the_picked_models_vocabulary(offered, bundled_vocab):
    from fsmviz.app.backend import vocabulary_for
    from fsmviz.app.grammar_page import on_compare
    from fsmviz.grammar import compile_grammar
    from fsmviz.learn.grammar import compare_masks

    app_model = SimpleNamespace(vocabulary=lambda: bundled_vocab)
    grammar, prefix = 'root ::= "a" [0-9]+ " " [a-z]+', "a1"
    counts = {}
    for choice in (BUNDLED, "spm"):
        vocab = vocabulary_for(app_model, choice)
        exact = len(compare_masks(compile_grammar(grammar), vocab, prefix).exact)
        said = on_compare(app_model, grammar, "auto", prefix, choice)
        assert f"<b>{exact:,}</b> tokens are allowed by the definition" in said, said
        counts[choice] = exact
    assert counts[BUNDLED] != counts["spm"]


@pytest.mark.slow
def test_models_load_when_picked_and_at_most_kept_are_held(offered, monkeypatch):
    from fsmviz.app.backend import run_source

    monkeypatch.setattr(local_models._HELD, "maxsize", 1)
    local_models._HELD.clear()
    spm = run_source(None, "spm")
    assert len(local_models._HELD) == 1 and run_source(None, "spm") is spm
    run_source(None, "gpt2").get(timeout=120)
    assert len(local_models._HELD) == 1  # spm let go
    assert run_source(None, "spm") is not spm
