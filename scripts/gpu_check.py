"""``make gpu-check``: the engine on a CUDA GPU, in bfloat16, as the page would use it.

Runs, on the model's device, what the page does through the engine's API (no gradio, no
plotly), and prints one table:

* a regex run and an unconstrained run of the same length: tokens/s each, and their ratio;
* a JSON Schema run (its regex; fast-forward writes the constant parts), a grammar run
  when ``fsmviz.grammar`` exists;
* the mask per step: ``TokenIndex.bitmask`` (a kept state's lookup), ``apply_bitmask`` on
  the device (unpack the words, one ``masked_fill``), and transformers' own ``generate``
  with ``RegexLogitsProcessor`` against without it;
* first-token latency (``stream`` to its first step, the index warm);
* sixteen concurrent users through the forward passes (``model.passes``): tokens/s in all
  against one user alone (the timed run and the crowd are ``bench/users.py``'s, as in
  ``bench/crowd_bench.py``);
* the ZeroGPU stand-in: a fresh process forks a worker that loads the model onto the GPU
  and streams a run back, every step pickled (``fsmviz.app.zerogpu.on_gpu`` with the fork
  of ``fsmviz.app.fork_gpu``, the stand-in ``tests/test_zerogpu.py`` uses), as ``spaces.GPU`` does;
* GPU memory: the most allocated, and reserved.

**Weights.** A folder with weights (``--model DIR``, or the bundled model when it is
installed) loads them. A folder with only ``config.json`` and the tokenizer (what
``--export`` writes: the GPU machine cannot download weights, and 540 MB cannot be
carried) builds the same architecture (``LlamaConfig``) with random weights, in bfloat16:
the same shapes and kernels time as the real model does, but the texts are noise, and the
table says so.

Without CUDA it says so and exits 0. ``--device cpu`` runs the whole check on the CPU
(small counts: ``--tokens 8 --users 4``) to try the script where there is no GPU.

On the GPU machine (torch, transformers, numpy, regex and tokenizers installed; no
gradio, plotly, interegular, outlines-core): first, here, ``python scripts/gpu_check.py
--export .tmp/gpu-check`` writes the model's config and tokenizer, the schema's regex
(outlines-core makes it here) and a copy of ``interegular`` (pure Python, which the
engine's regex parser needs); carry ``.tmp/gpu-check`` and run ``make gpu-check`` (or
``python scripts/gpu_check.py --model .tmp/gpu-check/model``) there.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

# Ask NVML, not the CUDA driver, whether there is a GPU: a process that initialised CUDA
# cannot fork a worker that uses it (the ZeroGPU stand-in forks).
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
EXPORT = ROOT / ".tmp" / "gpu-check"
sys.path.insert(0, str(ROOT))
if (EXPORT / "site").is_dir():
    sys.path.insert(0, str(EXPORT / "site"))  # the carried interegular

from bench.users import at_once, timed_stream  # noqa: E402 - after the path is set

REGEX = r"[a-z ]{400,}"
"""Never finishes within a run, so every run writes all its tokens; a counted repeat, so
every step is a state never met before (its row walked, its mask packed: the worst case;
``bench/load_bench.py``'s kind)."""
LOOP = r"[a-z ,.]+"
"""A loop: after the first step every mask is the kept one (the usual case)."""
PROMPT = "Describe the sea in a few sentences."
DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer"},
        "email": {"type": "string", "maxLength": 30},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 10}, "maxItems": 3},
    },
    "required": ["name", "age", "email", "tags"],
}
GRAMMAR = 'start: "(" expr ")"\nexpr: NUMBER ("+" NUMBER)*\nNUMBER: /[0-9]+/\n'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--model", type=Path, default=None, help="a model folder")
    parser.add_argument("--tokens", type=int, default=64, help="tokens a run writes")
    parser.add_argument("--users", type=int, default=16, help="concurrent users")
    parser.add_argument("--export", type=Path, default=None, help="write what to carry")
    parser.add_argument("--zerogpu-part", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.export is not None:
        return export(args.export)
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"gpu-check: no CUDA GPU here (torch {torch.__version__}): nothing to check.")
        print("  (--device cpu runs the same check on the CPU.)")
        return 0
    folder = args.model or default_folder()
    if args.zerogpu_part:
        return zerogpu_part(folder, args.device, args.tokens)
    return check(folder, args.device, args.tokens, args.users)


# --- the model --------------------------------------------------------------------------


def default_folder() -> Path:
    if (EXPORT / "model" / "config.json").is_file():
        return EXPORT / "model"
    from fsmviz.bundled import bundled_model_dir

    return bundled_model_dir()


def has_weights(folder: Path) -> bool:
    return any(folder.glob("*.safetensors")) or any(folder.glob("*.bin"))


def build_model(folder: Path, device: str, threaded: bool | None = None):
    """The model of ``folder`` on ``device`` (bfloat16 on CUDA): its weights when the
    folder has them, else random weights in the same architecture (seeded)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from fsmviz.generation.models import Model
    from fsmviz.tokens.vocab import Vocabulary

    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    if has_weights(folder):
        net = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype)
    else:
        config = AutoConfig.from_pretrained(str(folder))
        torch.manual_seed(0)
        net = AutoModelForCausalLM.from_config(config, dtype=dtype)
    net.to(device).eval()
    net.requires_grad_(False)
    name = folder.name if has_weights(folder) else f"{folder.name} (random weights)"
    vocab = Vocabulary.from_tokenizer(tokenizer, name=name)
    return Model(name, net, tokenizer, vocab, torch.device(device), threaded=threaded)


# --- the check ----------------------------------------------------------------------------


def check(folder: Path, device: str, tokens: int, users: int) -> int:
    import torch

    rows: list[tuple[str, str, str]] = []
    random = not has_weights(folder)
    print(f"gpu-check on {device_name(device)}, model {folder}")
    if random:
        print(
            "  RANDOM WEIGHTS: the folder has no weights (none can be downloaded here), so the "
            "same architecture is built from its config.json; it times like the real model, "
            "but its texts are noise."
        )
    # ZeroGPU first, in a fresh process, before this one touches CUDA.
    rows += zerogpu(folder, device, tokens)
    start = time.perf_counter()
    model = build_model(folder, device)
    rows.append(("load model", f"{time.perf_counter() - start:.2f} s", dtype_of(model)))
    rows += runs(model, tokens)
    rows += masks(model)
    rows += processor(model, tokens)
    rows += crowd(model, tokens, users)
    if device == "cuda":  # the batching thread on the GPU too (the app runs it on CPUs only)
        rows += crowd(batched(model), tokens, users)
    if device == "cuda":
        rows.append(
            (
                "GPU memory, most allocated",
                f"{torch.cuda.max_memory_allocated() / 2**20:.0f} MiB",
                "",
            )
        )
        rows.append(("GPU memory, reserved", f"{torch.cuda.memory_reserved() / 2**20:.0f} MiB", ""))
    else:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rows.append(("memory (CPU run: peak RSS)", f"{peak:.0f} MiB", ""))
    title = f"gpu-check: {device_name(device)}, {tokens} tokens a run"
    if random:
        title += ", random weights (same architecture)"
    print_table(title, rows)
    return 0


def device_name(device: str) -> str:
    import torch

    if device == "cuda":
        return f"{torch.cuda.get_device_name(0)} (torch {torch.__version__})"
    return f"CPU (torch {torch.__version__})"


def batched(model):
    """The same weights with every forward pass on one thread, concurrent runs batched."""
    from fsmviz.generation.models import Model

    return Model(model.name, model.model, model.tokenizer, model.vocab, model.device, threaded=True)


def dtype_of(model) -> str:
    return str(next(model.model.parameters()).dtype).removeprefix("torch.")


def runs(model, tokens: int) -> list[tuple[str, str, str]]:
    from fsmviz.tokens.index import build_index

    rows = []
    build_index(REGEX, model.vocab)
    timed_stream(model, REGEX, PROMPT, 4)  # warm: kernels, the index's first rows
    timed_stream(model, None, PROMPT, 4)
    free = best(lambda: timed_stream(model, None, PROMPT, tokens, temperature=0.8))
    masked = best(lambda: timed_stream(model, REGEX, PROMPT, tokens, temperature=0.8))
    ratio = masked.rate / free.rate
    rows.append(("tokens/s, unconstrained", f"{free.rate:.1f}", f"{free.tokens} tokens"))
    rows.append(("tokens/s, regex " + REGEX, f"{masked.rate:.1f}", f"{masked.tokens} tokens"))
    rows.append(("  / unconstrained", f"{ratio:.3f}", "a new state each step; wanted >= 0.95"))
    timed_stream(model, LOOP, PROMPT, 4)
    loop = best(lambda: timed_stream(model, LOOP, PROMPT, tokens, temperature=0.8))
    ratio = loop.rate / free.rate
    rows.append(
        ("tokens/s, regex " + LOOP, f"{loop.rate:.1f}", f"{loop.tokens} tokens, {loop.stop_reason}")
    )
    rows.append(("  / unconstrained", f"{ratio:.3f}", "masks kept; wanted >= 0.95"))
    rows.append(("first token, regex (warm)", f"{masked.first * 1e3:.0f} ms", "wanted <= 200 ms"))
    date = timed_stream(model, DATE, PROMPT, 16)
    rows.append(
        ("regex " + DATE, f"{date.tokens} tokens, {date.stop_reason}", f"{date.total:.2f} s")
    )
    rows.append(schema_row(model, tokens))
    rows.append(grammar_row(model, tokens))
    return rows


def best(run, times: int = 2):
    """The fastest of ``times`` runs (by total seconds)."""
    return min((run() for _ in range(times)), key=lambda r: r.total)


def schema_regex() -> tuple[str, str]:
    """The schema's regex: made here (outlines-core), else the one ``--export`` carried."""
    try:
        from fsmviz.schema.convert import regex_from_schema

        return regex_from_schema(json.dumps(SCHEMA)), "outlines-core"
    except ImportError:
        carried = EXPORT / "schema.regex"
        return carried.read_text(), f"carried ({carried.name})"


def schema_row(model, tokens: int) -> tuple[str, str, str]:
    pattern, made = schema_regex()
    run = timed_stream(model, pattern, PROMPT, max(tokens, 96))
    return (
        "schema (4 fields)",
        f"{run.rate:.1f} tokens/s",
        f"{run.tokens} tokens, {run.stop_reason}; regex {made}",
    )


def grammar_row(model, tokens: int) -> tuple[str, str, str]:
    import importlib.util

    if importlib.util.find_spec("fsmviz.grammar") is None:
        return ("grammar", "skipped", "no fsmviz.grammar in this tree")
    try:
        import fsmviz

        compile_grammar = getattr(fsmviz, "compile_grammar", None)
        if compile_grammar is None:
            from fsmviz.grammar import compile_grammar
        grammar = compile_grammar(GRAMMAR)
        run = timed_stream(model, grammar, PROMPT, tokens)
    except Exception as error:  # noqa: BLE001 - reported in the table, the check goes on
        return ("grammar", "FAILED", f"{type(error).__name__}: {error}"[:120])
    return ("grammar (Lark)", f"{run.rate:.1f} tokens/s", f"{run.tokens} tokens, {run.stop_reason}")


def masks(model) -> list[tuple[str, str, str]]:
    """The mask of one step: the kept bitmask's lookup, and applying it on the device."""
    import numpy as np
    import torch

    from fsmviz.generation.masks import apply_bitmask
    from fsmviz.tokens.index import build_index

    index = build_index(REGEX, model.vocab)
    state = index.initial_state
    index.bitmask(state)
    lookups = []
    for _ in range(1000):
        start = time.perf_counter()
        index.bitmask(state)
        lookups.append(time.perf_counter() - start)
    device = model.device
    logits = torch.randn((1, model.logits_size), device=device, dtype=torch.float32)

    def apply() -> None:
        words = torch.from_numpy(index.bitmask(state).copy()).to(device, non_blocking=True)
        apply_bitmask(logits, words[None])

    applied = []
    for _ in range(200):
        sync(device)
        start = time.perf_counter()
        apply()
        sync(device)
        applied.append(time.perf_counter() - start)
    return [
        ("mask per step: bitmask(state), kept", f"{np.median(lookups) * 1e6:.1f} µs", "lookup"),
        (
            "mask per step: to device + apply",
            f"{np.median(applied) * 1e6:.1f} µs",
            "unpack + masked_fill",
        ),
    ]


def sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize()


def processor(model, tokens: int) -> list[tuple[str, str, str]]:
    """transformers' ``generate`` with the mask on the device, against without it."""
    from fsmviz.generation.processor import RegexLogitsProcessor
    from fsmviz.tokens.index import build_index

    index = build_index(REGEX, model.vocab)
    inputs = model.tokenizer(PROMPT, return_tensors="pt").to(model.device)

    def run(masked: bool) -> float:
        extra = {"logits_processor": [RegexLogitsProcessor(index, inputs)]} if masked else {}
        sync(model.device)
        start = time.perf_counter()
        model.model.generate(
            **inputs, max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False,
            pad_token_id=model.vocab.eos_token_id, **extra,
        )  # fmt: skip
        sync(model.device)
        return tokens / (time.perf_counter() - start)

    run(True), run(False)  # warm
    masked, free = max(run(True) for _ in range(2)), max(run(False) for _ in range(2))
    return [
        ("model.generate + RegexLogitsProcessor", f"{masked:.1f} tokens/s", f"without: {free:.1f}"),
        ("  processor / without", f"{masked / free:.3f}", "the mask on the device"),
    ]


def crowd(model, tokens: int, users: int) -> list[tuple[str, str, str]]:
    """``users`` threads generating at once through the model's passes, against one."""
    alone = best(lambda: timed_stream(model, REGEX, PROMPT, tokens, temperature=0.8))
    results, wall = at_once(
        users, lambda k: timed_stream(model, REGEX, PROMPT, tokens, temperature=0.8, seed=k)
    )
    written = sum(r.tokens for r in results)
    firsts = sorted(r.first for r in results)
    how = "batched on the model's thread" if model.passes.threaded else "in turns"
    note = f"1 alone: {alone.rate:.1f}; {how}"
    return [
        (f"{users} users at once, tokens/s in all", f"{written / wall:.1f}", note),
        (f"  {users} users / 1", f"{written / wall / alone.rate:.2f}", "wanted >= 6"),
        (f"  first token, median of {users}", f"{firsts[len(firsts) // 2] * 1e3:.0f} ms", ""),
    ]  # fmt: skip


# --- ZeroGPU -------------------------------------------------------------------------------


def zerogpu(folder: Path, device: str, tokens: int) -> list[tuple[str, str, str]]:
    """The stand-in in a fresh process (which has not touched CUDA, as on a Space)."""
    command = [sys.executable, __file__, "--zerogpu-part", "--device", device,
               "--model", str(folder), "--tokens", str(tokens)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["?"]
        return [("ZeroGPU stand-in", "FAILED", tail[0][:120])]
    return [tuple(row) for row in json.loads(done.stdout.strip().splitlines()[-1])]


def zerogpu_part(folder: Path, device: str, tokens: int) -> int:
    """Fork a worker as ``spaces.GPU`` does; it loads the model onto the device (the
    model's passes in its own thread: the fork has no batching thread) and streams a run
    back, each step pickled."""
    from fsmviz.app.fork_gpu import fork_gpu
    from fsmviz.app.zerogpu import gpu_seconds, on_gpu

    def task(pattern: str, prompt: str, max_tokens: int):
        from fsmviz.generation.generate import stream

        model = build_model(folder, device, threaded=False)
        run = stream(model, pattern, prompt, max_tokens=max_tokens)
        yield from run
        yield run.trace()

    calls: list[int] = []
    start = time.perf_counter()
    frames = list(
        on_gpu(task, lambda *a: gpu_seconds(tokens, runs=1), fork_gpu(calls))(REGEX, PROMPT, tokens)
    )
    total = time.perf_counter() - start
    trace = frames[-1]
    ok = trace.stop_reason in ("max_tokens", "accepted") and len(trace.steps) == tokens
    rows = [
        ("ZeroGPU stand-in (fork, pickled steps)", "ok" if ok else "WRONG",
         f"{len(frames) - 1} steps in {total:.1f} s with loading; duration asked {calls[0]} s"),
    ]  # fmt: skip
    print(json.dumps(rows))
    return 0


# --- export and output ---------------------------------------------------------------------


def export(where: Path) -> int:
    """Write what the GPU machine needs and cannot get: the model's config and tokenizer
    (no weights), the schema's regex, and interegular's source."""
    import interegular

    from fsmviz.bundled import bundled_model_dir
    from fsmviz.schema.convert import regex_from_schema

    source = bundled_model_dir()
    model = where / "model"
    if model.exists():
        shutil.rmtree(model)
    model.mkdir(parents=True)
    for path in source.iterdir():
        if path.is_file() and not has_weights_file(path):
            shutil.copy2(path, model / path.name)
    site = where / "site"
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(Path(interegular.__file__).parent, site / "interegular",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    (where / "schema.regex").write_text(regex_from_schema(json.dumps(SCHEMA)))
    size = sum(p.stat().st_size for p in where.rglob("*") if p.is_file())
    print(f"wrote {where} ({size / 2**20:.1f} MiB): carry it, then run `make gpu-check`")
    return 0


def has_weights_file(path: Path) -> bool:
    return path.suffix in (".safetensors", ".bin", ".gguf", ".pt")


def print_table(title: str, rows: list[tuple[str, str, str]]) -> None:
    widths = [max(len(str(row[i])) for row in rows) for i in range(3)]
    print(f"\n{title}")
    for name, value, note in rows:
        print(f"  {name.ljust(widths[0])}  {str(value).rjust(widths[1])}  {note}")


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # Straight out: the model's daemon thread and torch's pools abort a normal interpreter
    # teardown now and then ("terminate called without an active exception").
    os._exit(code)
