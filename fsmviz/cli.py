"""The command line, ``python -m fsmviz``: the engine without the page.

    python -m fsmviz dfa '[0-9]+(\\.[0-9]+)?'            the DFA as a table (--dot, --json, --svg F)
    python -m fsmviz diagnose '(a|b)*c' --max-tokens 8   the stall doctor's findings (--engines)
    python -m fsmviz first '[0-9]+(\\.[0-9]+)?'          the tokens the first step may take
    python -m fsmviz generate '[0-9]{4}' 'Year of the moon landing?'   stream a guided answer
    python -m fsmviz grammar json.gbnf 'A shop as JSON.'   stream text under a grammar
    python -m fsmviz audit --regex '[0-9]{4}' prompts.jsonl --out audit/   many prompts, one report
    python -m fsmviz serve --port 7860                   the web page

Arguments are parsed before anything heavy is imported, so ``--help`` answers at once;
torch loads only when a subcommand needs the model. A pattern fsmviz cannot use prints its
message with a caret line on stderr and exits with status 2 (argparse's status for bad
arguments), and nothing else.

A subcommand is one function registered with ``@command(name, help, *arguments)``; the
parser is built from the registry (``COMMANDS``), so adding one touches nothing else (see
``_schema`` below: ``python -m fsmviz schema person.json ["Describe Ada."]``).
"""

from __future__ import annotations

import argparse
import codecs
import difflib
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fsmviz.errors import InputError

__all__ = [
    "COMMANDS",
    "Arg",
    "Command",
    "arg",
    "build_parser",
    "command",
    "main",
    "suggestion_lines",
]

BAD_INPUT = 2
"""Exit status for input fsmviz refuses (as argparse uses for bad arguments)."""
FINDINGS_ERROR = 1
"""Exit status of ``diagnose`` when a finding has severity ``error``, and of ``generate``
and ``schema`` when the output does not match."""
MAX_FILE_BYTES = 4 * 1024 * 1024
"""The most a file argument may hold (``read_capped``): four times the largest schema the
page takes, and ``/dev/zero`` or a 20 GB log is refused after reading this much."""
SHOWN_SENTENCE = 2_000
"""Characters of a grammar's shortest sentence ``grammar FILE`` prints (then its length)."""
SHOWN_SUGGESTION = 100
"""A rewrite longer than this is printed as what it changes first, then whole on a line of
its own (``suggestion_lines``): a 580-character JSON pattern read in full hides its fix."""
CHANGE_CONTEXT = 6
"""Characters of the pattern shown before each change of a long rewrite."""
PATH_ARGUMENTS = frozenset({"file", "svg", "model"})
"""Arguments that name files: a Linux file name may be any bytes, so these alone may hold
what is not UTF-8 (every other argument is text and is refused when it is not)."""


@dataclass(frozen=True)
class Arg:
    """One ``add_argument`` call: its flags (or name) and its options."""

    flags: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)


def arg(*flags: str, **options: Any) -> Arg:
    return Arg(flags, options)


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    arguments: tuple[Arg, ...]
    run: Callable[[argparse.Namespace], int]


COMMANDS: dict[str, Command] = {}
"""The subcommands, by name, in the order registered (the order ``--help`` lists them)."""


def command(name: str, help: str, *arguments: Arg) -> Callable:
    """Register the decorated ``run(args) -> exit status`` as subcommand ``name``."""

    def register(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        COMMANDS[name] = Command(name, help, arguments, run)
        return run

    return register


class _ShowDefaults(argparse.HelpFormatter):
    """Help that names each option's default, where it has one worth naming."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if action.option_strings and not (
            default is None or default is False or default == argparse.SUPPRESS
        ):
            text += " (default: %(default)s)"
        return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m fsmviz",
        description="See and debug regex-guided generation with language models.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for cmd in COMMANDS.values():
        sub = subparsers.add_parser(
            cmd.name,
            help=cmd.help,
            description=cmd.help,
            formatter_class=_ShowDefaults,
        )
        for a in cmd.arguments:
            sub.add_argument(*a.flags, **a.options)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the subcommand, return its status."""
    args = build_parser().parse_args(argv)
    from fsmviz.automaton.syntax import RegexError
    from fsmviz.errors import FsmvizError

    try:
        _check_text_arguments(args)
        return COMMANDS[args.command].run(args)
    except RegexError as error:
        pattern = getattr(args, "regex", "")
        print(f"error: {error}", file=sys.stderr)
        if error.position is not None:
            print(error.pointer(pattern), file=sys.stderr)
        return BAD_INPUT
    except (ValueError, FsmvizError) as error:  # an option, a file, a model, an index
        print(f"error: {error}", file=sys.stderr)
        return BAD_INPUT
    except RecursionError:
        print("error: the input is nested too deeply to read: flatten it", file=sys.stderr)
        return BAD_INPUT
    except BrokenPipeError:  # `… | head`: the reader left; nothing more to say
        import os  # no flush at exit into the closed pipe (Python's own advice)

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as error:  # a file or device the command could not read or write
        where = f" {error.filename}" if error.filename else ""
        print(f"error: cannot use{where}: {error.strerror or error}", file=sys.stderr)
        return BAD_INPUT
    except KeyboardInterrupt:
        return 130


def _check_text_arguments(args: argparse.Namespace) -> None:
    """Refuse an argument that is not UTF-8 (Python hands such bytes over as lone
    surrogates, which would be taken silently and printed raw)."""
    for name, value in vars(args).items():
        if name in PATH_ARGUMENTS or not isinstance(value, str):
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            byte = ord(value[error.start]) & 0xFF
            raise InputError(
                f"the {name} argument is not valid UTF-8 (byte 0x{byte:02X} at position "
                f"{error.start}): write it as UTF-8 text"
            ) from None


def check_model_path(model: str | None) -> None:
    """A ``--model`` written as a path (``/``, ``./``, ``../``, ``~``) must be a folder: say
    so plainly rather than let the hub refuse it as a malformed repository id."""
    import os

    if model and model.startswith(("/", "./", "../", "~")):
        folder = os.path.expanduser(model)
        if not os.path.isdir(folder):
            what = "is not a folder" if os.path.exists(folder) else "does not exist"
            raise InputError(
                f"--model {model} {what}: give a model folder (with config.json) or a hub id "
                "such as HuggingFaceTB/SmolLM2-135M-Instruct"
            )


def read_capped(file: str, limit: int = MAX_FILE_BYTES) -> str:
    """The text of ``file`` (``-``: standard input), UTF-8, refused when it holds more than
    ``limit`` bytes (a device such as ``/dev/zero`` is read only that far), is a folder, or
    is not UTF-8. Raises ``ValueError`` with a message that names the file."""
    try:
        if file == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(file, "rb") as source:
                data = source.read(limit + 1)
    except OSError as error:
        raise InputError(f"cannot read {file}: {error.strerror or error}") from None
    if len(data) > limit:
        raise InputError(f"{file} holds more than {limit:,} bytes, the most a file may hold")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{file} is not UTF-8 text (byte 0x{data[error.start]:02X} at {error.start})"
        ) from None


REGEX = arg("regex", help="the regular expression (quote it for the shell)")
MODEL = arg("--model", default=None, help="a hub id or local folder (default: the bundled model)")
AS_JSON = arg("--json", action="store_true", help="print the whole trace as JSON at the end")
SERVER = (
    arg("--server", default=None, metavar="URL",
        help="run on an OpenAI-compatible server (vLLM) at URL and replay its tokens through "
        "fsmviz's exact automaton, with the engine check per step (instead of --model)"),
    arg("--server-model", default=None, metavar="NAME",
        help="the model's name on the server (default: the first it serves)"),
)  # fmt: skip
"""``--server URL`` and ``--server-model NAME``: what ``generate``, ``schema`` and
``grammar`` take to run on a server (``run_model``)."""


def sampling(max_tokens: int) -> tuple[Arg, ...]:
    """``--max-tokens`` (default ``max_tokens``), ``--temperature`` and ``--seed``: what
    every generating subcommand takes, before its ``DECODING`` flags."""
    return (
        arg("--max-tokens", type=int, default=max_tokens, help="the most tokens to generate"),
        arg("--temperature", type=float, default=0.0, help="0 is greedy"),
        arg("--seed", type=int, default=0, help="the sampling seed"),
    )


DECODING = (
    arg("--top-p", type=float, default=1.0, help="nucleus sampling on the allowed tokens (1: off)"),
    arg("--top-k", type=int, default=0, help="sample among the k likeliest allowed (0: off)"),
    arg("--prob-limit", type=float, default=None,
        help="stop at a match once the allowed tokens hold less than this probability"),
    arg("--stop", choices=("eos", "first"), default="eos",
        help="eos: until the model ends or nothing may follow; first: at the first full match"),
    arg("--overshoot", action="store_true",
        help="also take a token whose start completes a match; the output is cut there"),
)  # fmt: skip
"""The decoding options every generating subcommand takes (``decoding_options``)."""


def decoding_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``DECODING`` flags as ``GenerationOptions`` keywords."""
    return {
        "top_p": args.top_p,
        "top_k": args.top_k,
        "prob_limit": args.prob_limit,
        "stop": args.stop,
        "overshoot": args.overshoot,
    }


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_model(model: str | None, server: str | None, server_model: str | None) -> Any:
    """The model a generating subcommand runs on: the server at ``server`` (``--server``,
    ``fsmviz.connect``), else ``--model`` loaded here (the bundled model by default)."""
    if server:
        if model:
            raise InputError("give --model or --server, not both: the server runs its own model")
        from fsmviz.generation.server import connect

        _progress(f"connecting to {server}…")
        return connect(server, server_model)
    if server_model:
        raise InputError("--server-model names a model on a server: give --server URL too")
    check_model_path(model)
    from fsmviz.generation.models import load_model

    _progress(f"loading {model or 'the bundled model'} (~10 s)…")
    return load_model(model)


def print_engine_check(steps: Any, err: Any = None) -> None:
    """After a server run (``steps``, the finished ``Stream``): the run's notes (the
    engine check's summary, the valid mass, the server's time and fsmviz's), then the
    engine check step by step, on ``err``; nothing after a local run."""
    run = getattr(steps, "_run", None)
    verdicts = getattr(run, "verdicts", None)
    if verdicts is None:
        return
    err = err or sys.stderr
    for note in steps.trace().notes:
        print(note, file=err)
    rows = verdicts(steps.steps)
    print(f"engine check, {len(rows)} steps: the server's mask against fsmviz's exact one",
          file=err)  # fmt: skip
    print(f"{'step':>5}  {'token':<14} {'allowed':>8} {'visible':>8}  verdict", file=err)
    for row in rows:
        token = f"`{row.token}`" if len(row.token) <= 12 else f"`{row.token[:11]}…`"
        print(f"{row.step:>5}  {token:<14} {row.allowed:>8,} {row.visible:>8}  {row.verdict}",
              file=err)  # fmt: skip


# --- dfa ----------------------------------------------------------------------------------


@command(
    "dfa",
    "the pattern's minimal DFA: a transition table, or DOT, JSON or an SVG drawing",
    REGEX,
    arg("--svg", metavar="FILE", help="write the drawing to FILE (needs graphviz's dot)"),
    arg("--dot", action="store_true", help="print the DOT source"),
    arg("--json", action="store_true", help="print states and transitions as JSON"),
)
def _dfa(args: argparse.Namespace) -> int:
    from fsmviz.automaton.dfa import compile_regex

    if sum(map(bool, (args.svg, args.dot, args.json))) > 1:
        raise InputError("choose one of --svg, --dot and --json")
    dfa = compile_regex(args.regex)
    if args.json:
        print(json.dumps(dfa.to_dict(), ensure_ascii=False, indent=1))
    elif args.dot or args.svg:
        from fsmviz.drawing.render import to_dot, to_svg

        if args.dot:
            print(to_dot(dfa, title=args.regex), end="")
        else:
            drawing = to_svg(dfa, title=args.regex)
            try:  # a folder, a missing folder, /dev/full, /proc/version: a message
                with open(args.svg, "w", encoding="utf-8") as out:
                    out.write(drawing)
            except OSError as error:
                raise InputError(f"cannot write {args.svg}: {error.strerror or error}") from None
            _progress(f"wrote {args.svg}")
    else:
        print(dfa_table(dfa))
    return 0


def dfa_table(dfa: Any) -> str:
    """The DFA as plain text: one line per state, ``*`` marking accepting states.

    >>> from fsmviz import compile_regex
    >>> print(dfa_table(compile_regex("ab?")))
    3 states, 2 accepting (*), start 0
      0   a -> 1
    * 1   b -> 2
    * 2
    """
    edges: dict[int, list[str]] = {s: [] for s in dfa.states}
    for edge in dfa.edges():
        edges[edge.source].append(f"{edge.label} -> {edge.target}")
    lines = [
        f"{dfa.num_states} state{'s' if dfa.num_states != 1 else ''}, "
        f"{len(dfa.accepting)} accepting (*), start {dfa.initial}"
    ]
    for s in dfa.states:
        mark = "*" if dfa.is_accepting(s) else " "
        lines.append(f"{mark} {s:<3} {'   '.join(edges[s])}".rstrip())
    return "\n".join(lines)


# --- diagnose -----------------------------------------------------------------------------


@command(
    "diagnose",
    "why the pattern may stall, loop or truncate with the bundled model's vocabulary; "
    "exits with 1 when a finding is an error",
    REGEX,
    arg("--max-tokens", type=int, default=None, help="the token budget to check against"),
    arg(
        "--engines",
        action="store_true",
        help="also compare with the installed engines of vLLM, SGLang and TGI "
        "(outlines-core, llguidance, xgrammar)",
    ),
)
def _diagnose(args: argparse.Namespace) -> int:
    from fsmviz.automaton.dfa import compile_regex
    from fsmviz.diagnose import diagnose
    from fsmviz.params import check_generation
    from fsmviz.tokens.vocab import Vocabulary

    compile_regex(args.regex)  # a bad pattern: the message and caret line, status 2
    if args.max_tokens is not None:
        check_generation(max_tokens=args.max_tokens)
    vocab = Vocabulary.bundled()
    findings = diagnose(args.regex, vocab, max_tokens=args.max_tokens, engines=args.engines)
    for f in findings:
        print(f"{f.severity}: {f.kind}: {f.message}")
        if f.suggestion:
            print(*suggestion_lines(args.regex, f.suggestion), sep="\n")
    if not findings:
        print("no findings: the pattern should generate well")
    return FINDINGS_ERROR if any(f.severity == "error" for f in findings) else 0


def suggestion_lines(pattern: str, suggestion: str, limit: int = SHOWN_SUGGESTION) -> list[str]:
    """How ``diagnose`` prints a rewritten pattern: whole when it is short; when long, what
    it changes (each change once, with a few characters before its first place, and how
    many places),
    then the whole rewrite alone on its line, to copy.

    >>> suggestion_lines("(a|b)*c", "(a|b){0,8}c")
    ['  try: (a|b){0,8}c']
    >>> print("\\n".join(suggestion_lines('"[^"]+" "[^"]+"', '"[^"]{1,32}" "[^"]{1,32}"', 20)))
      try: change `"[^"]+` to `"[^"]{1,32}` (2 places, the first at character 6)
      whole: "[^"]{1,32}" "[^"]{1,32}"
    """
    if len(suggestion) <= limit:
        return [f"  try: {suggestion}"]
    changes: dict[tuple[str, str], list[int]] = {}  # (old, new) -> where, from 1
    matcher = difflib.SequenceMatcher(None, pattern, suggestion, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changes.setdefault((pattern[i1:i2], suggestion[j1:j2]), []).append(i1 + 1)
    said = []
    for (old, new), places in list(changes.items())[:3]:
        before = pattern[max(places[0] - 1 - CHANGE_CONTEXT, 0) : places[0] - 1]
        old, new = before + old, before + new
        where = f"character {places[0]}"
        if len(places) > 1:
            where = f"{len(places)} places, the first at {where}"
        said.append(f"change `{old}` to `{new}` ({where})")
    more = f"; and {len(changes) - 3} more changes" if len(changes) > 3 else ""
    return [f"  try: {'; '.join(said)}{more}", f"  whole: {suggestion}"]


# --- first --------------------------------------------------------------------------------


@command(
    "first",
    "the tokens the first step may take with the bundled model's vocabulary (found "
    "without building the DFA: ``fsmviz.tokens.fast.derivatives``)",
    REGEX,
    arg("--limit", type=int, default=40, help="how many tokens to print"),
)
def _first(args: argparse.Namespace) -> int:
    from fsmviz.tokens.fast.derivatives import first_allowed_tokens
    from fsmviz.tokens.trie import trie_of
    from fsmviz.tokens.vocab import Vocabulary

    vocab = Vocabulary.bundled()
    trie_of(vocab)  # the vocabulary's set-up, once per process: not the pattern's time
    start = time.perf_counter()
    tokens = first_allowed_tokens(args.regex, vocab).tolist()
    took = (time.perf_counter() - start) * 1e3
    print(f"{len(tokens):,} of {len(vocab):,} tokens may come first ({took:.1f} ms)")
    for token in tokens[: max(args.limit, 0)]:
        print(f"{token:>6}  {vocab.token_text(token)!r}")
    if len(tokens) > args.limit:
        print(f"   … and {len(tokens) - args.limit:,} more (--limit)")
    return 0


# --- generate -----------------------------------------------------------------------------


@command(
    "generate",
    "generate text that fully matches the pattern, streamed token by token",
    REGEX,
    arg("prompt", help="what to ask the model"),
    *sampling(max_tokens=64),
    *DECODING,
    MODEL,
    AS_JSON,
    *SERVER,
)
def _generate(args: argparse.Namespace) -> int:
    from fsmviz.automaton.dfa import compile_regex
    from fsmviz.params import check_generation

    compile_regex(args.regex)  # refuse a bad pattern and bad options before loading the model
    options = {"max_tokens": args.max_tokens, "temperature": args.temperature, "seed": args.seed}
    options = check_generation(**options, **decoding_options(args))  # before torch loads
    started = time.perf_counter()
    from fsmviz.generation.generate import stream  # torch: ~3 s

    model = run_model(args.model, args.server, args.server_model)
    _progress(f"model ready in {time.perf_counter() - started:.1f} s")
    steps = stream(model, args.regex, args.prompt, **options)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for step in steps:
        if not args.json:
            print(decoder.decode(step.token_bytes), end="", flush=True)
    trace = steps.trace()
    if args.json:
        print(trace.to_json())
    else:
        print(decoder.decode(b"", final=True))
        verdict = "matches" if trace.matched else "does not match"
        cut = trace.steps[-1].cut if trace.steps else ""
        cut_note = f"; {cut!r} cut off" if cut else ""
        _progress(
            f"[{trace.stop_reason}; {len(trace.steps)} tokens; the output {verdict}{cut_note}]"
        )
    print_engine_check(steps)
    return 0 if trace.matched else FINDINGS_ERROR


# --- schema -------------------------------------------------------------------------------


@command(
    "schema",
    "a JSON Schema as a regex, or JSON generated for it when a prompt is given",
    arg("file", help="the schema, a JSON file (- reads standard input)"),
    arg("prompt", nargs="?", default=None, help="generate JSON for this prompt"),
    arg(
        "--whitespace",
        choices=("none", "space", "flexible"),
        default=None,
        help="whitespace between JSON tokens (default: outlines-core's, a single optional space)",
    ),
    *sampling(max_tokens=256),
    *DECODING,
    arg(
        "--engines",
        action="store_true",
        help="which engine gets this schema right: fsmviz, outlines-core, llguidance and "
        "xgrammar on instances made from it (fsmviz.peers.schema)",
    ),
    *SERVER,
)
def _schema(args: argparse.Namespace) -> int:
    if args.engines:
        return engines_command(args.file)
    return schema_command(
        args.file,
        args.prompt,
        whitespace=args.whitespace,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        seed=args.seed,
        server=(args.server, args.server_model),
        **decoding_options(args),
    )


def engines_command(file: str, *, out: Any = None, err: Any = None) -> int:
    """``python -m fsmviz schema --engines FILE``: the engine-verdict table for a schema
    (``fsmviz.peers.schema``). Returns 0, or 2 for a file or schema fsmviz cannot read."""
    from fsmviz.peers.schema import engine_verdicts, verdicts_text
    from fsmviz.schema.convert import SchemaError
    from fsmviz.schema.limits import MAX_SCHEMA_BYTES

    out, err = out or sys.stdout, err or sys.stderr
    try:
        stream = sys.stdin if file == "-" else open(file, encoding="utf-8")  # noqa: SIM115
        with stream:
            text = stream.read(MAX_SCHEMA_BYTES + 1)
        print(verdicts_text(engine_verdicts(text)), file=out)
    except OSError as error:
        print(f"fsmviz schema: cannot read {file}: {error.strerror}", file=err)
        return 2
    except (SchemaError, UnicodeDecodeError) as error:
        print(f"fsmviz schema: {file}: {error}", file=err)
        return 2
    return 0


def schema_command(
    file: str,
    prompt: str | None = None,
    *,
    whitespace: str | None = None,
    max_tokens: int = 256,
    temperature: float = 0.0,
    seed: int = 0,
    model: object = None,
    out: Any = None,
    err: Any = None,
    server: tuple[str | None, str | None] = (None, None),
    **decoding: Any,
) -> int:
    """``python -m fsmviz schema FILE [PROMPT]``: print the schema's regex, or, given a
    prompt, generate JSON for it with the bundled model (``model`` overrides) and print it,
    with whether it validates on stderr. ``FILE`` ``-`` reads stdin. Returns the exit
    status: 0, 1 when the output does not validate, 2 for a bad file or schema.
    ``decoding``: the further ``GenerationOptions`` (``top_k``, ``stop``, ``overshoot``...).
    ``server``: (``--server``, ``--server-model``): run on that server (``run_model``), the
    schema sent as the server's ``json`` constraint, and print the engine check."""
    out = out or sys.stdout
    err = err or sys.stderr
    from fsmviz.params import check_generation
    from fsmviz.schema.convert import (  # outlines-core and jsonschema load only here
        SchemaError,
        check_json,
        compile_schema,
    )
    from fsmviz.schema.limits import MAX_SCHEMA_BYTES

    try:
        opts = check_generation(
            max_tokens=max_tokens, temperature=temperature, seed=seed, **decoding
        )
        compiled = compile_schema(read_capped(file, MAX_SCHEMA_BYTES), whitespace)
    except SchemaError as error:
        print(f"fsmviz schema: {file}: {error}", file=err)
        return 2
    except ValueError as error:  # a file that cannot be read, an option out of range
        print(f"fsmviz schema: {error}", file=err)
        return 2
    except RecursionError:
        print(f"fsmviz schema: {file}: nested too deeply to read: flatten it", file=err)
        return 2
    for where, keyword in compiled.unenforced:
        print(f"fsmviz schema: not enforced: {keyword} at {where or '/'}", file=err)
    for where, rule in compiled.stricter:
        print(f"fsmviz schema: stricter than the schema: {rule} at {where or '/'}", file=err)
    on_grammar = compiled.path == "grammar"
    if on_grammar:
        print(f"fsmviz schema: the grammar path (llguidance): {compiled.reason}", file=err)
    if prompt is None:
        print(compiled.grammar if on_grammar else compiled.regex, file=out)
        return 0
    from fsmviz.generation.generate import stream

    if model is None:
        model = run_model(None, *server)
    steps = stream(model, compiled, prompt, **opts)  # either path (a server: as its json)
    for _ in steps:
        pass
    trace = steps.trace()
    print(trace.text, file=out)
    status = _validates(trace, check_json(trace.text, compiled.schema), err)
    print_engine_check(steps, err)
    return status


def _validates(trace: Any, check: Any, err: Any) -> int:
    """Say on ``err`` whether the generated JSON validates (``check``, from
    ``check_json``): exit status 0 when it does, 1 with where it does not."""
    if check.valid:
        print(
            f"valid JSON for the schema ({trace.stop_reason}, {len(trace.steps)} tokens)", file=err
        )
        return 0
    where = f" at {check.path or '/'}" if check.path is not None else ""
    print(f"not valid: {check.error}{where} ({trace.stop_reason})", file=err)
    return FINDINGS_ERROR


# --- grammar ------------------------------------------------------------------------------


@command(
    "grammar",
    "a context-free grammar (GBNF or Lark) checked, or text generated under it given a prompt",
    arg("file", help="the grammar file, GBNF or llguidance's Lark (- reads standard input)"),
    arg("prompt", nargs="?", default=None, help="generate text for this prompt"),
    arg("--format", choices=("gbnf", "lark"), default=None, help="default: told apart"),
    *sampling(max_tokens=64),
    *DECODING,
    MODEL,
    AS_JSON,
    *SERVER,
)
def _grammar(args: argparse.Namespace) -> int:
    return grammar_command(
        args.file,
        args.prompt,
        format=args.format,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        seed=args.seed,
        decoding=decoding_options(args),
        model_name=args.model,
        as_json=args.json,
        server=(args.server, args.server_model),
    )


def grammar_command(
    file: str,
    prompt: str | None = None,
    *,
    format: str | None = None,
    max_tokens: int = 64,
    temperature: float = 0.0,
    seed: int = 0,
    decoding: dict[str, Any] | None = None,
    model_name: str | None = None,
    as_json: bool = False,
    model: object = None,
    out: Any = None,
    err: Any = None,
    server: tuple[str | None, str | None] = (None, None),
) -> int:
    """``python -m fsmviz grammar FILE [PROMPT]``: check the grammar and print its rules
    and a shortest sentence; given a prompt, stream text generated under it (the bundled
    model, or ``model``) and say on stderr whether it is a sentence of the grammar.
    ``decoding``: the ``DECODING`` flags' keywords (``top_p``, ``stop``...). A bad grammar
    prints ``FILE:line:column: message`` and its hint, and returns 2. ``server``:
    (``--server``, ``--server-model``), the grammar sent as the server's ``grammar``."""
    out = out or sys.stdout
    err = err or sys.stderr
    from fsmviz.grammar import GrammarError, compile_grammar
    from fsmviz.params import check_generation, check_grammar_options

    try:
        options = check_generation(
            max_tokens=max_tokens, temperature=temperature, seed=seed, **(decoding or {})
        )
        check_grammar_options(bool(options.get("overshoot")))  # before the model loads
        grammar = compile_grammar(read_capped(file), format)
    except GrammarError as error:
        print(f"fsmviz grammar: {file}:{error.location()}: {error.message}", file=err)
        if error.hint:
            print(f"hint: {error.hint}", file=err)
        return BAD_INPUT
    except ValueError as error:  # an unreadable file, a bad option
        print(f"fsmviz grammar: {error}", file=err)
        return BAD_INPUT
    if prompt is None:
        _describe_grammar(grammar, out)
        return 0
    from fsmviz.generation.generate import stream  # torch: ~3 s

    if model is None:
        model = run_model(model_name, *server)
    steps = stream(model, grammar, prompt, **options)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for step in steps:
        if not as_json:
            print(decoder.decode(step.token_bytes), end="", flush=True, file=out)
    trace = steps.trace()
    if as_json:
        print(trace.to_json(), file=out)
    else:
        print(decoder.decode(b"", final=True), file=out)
        verdict = "is a sentence of the grammar" if trace.matched else "is not a sentence"
        print(f"[{trace.stop_reason}; {len(trace.steps)} tokens; the output {verdict}]", file=err)
        if not server[0]:  # a server run's notes come with its engine check
            for note in trace.notes:  # why it stopped where the engine gave up, in its words
                print(note, file=err)
    print_engine_check(steps, err)
    return 0 if trace.matched else FINDINGS_ERROR


def _describe_grammar(grammar: Any, out: Any) -> None:
    """Print a checked grammar's rules (line, column, kind, name), the notes on rules the
    start never uses and on left recursion, and a shortest sentence."""
    from fsmviz.grammar.compile import left_recursive, unreachable

    print(f"{grammar.format}: {len(grammar.rules)} rules, start {grammar.start!r}", file=out)
    for rule in grammar.rules:
        kind = "terminal" if rule.terminal else "rule"
        print(f"  {rule.line:>4}:{rule.column:<3} {kind:8} {rule.name}", file=out)
    for name in unreachable(grammar):
        print(f"note: the start never uses {name!r}", file=out)
    for name in left_recursive(grammar):
        print(f"note: {name!r} is left-recursive (fine here; llama.cpp refuses it)", file=out)
    from fsmviz.grammar.earley import recognizer

    chart = recognizer(grammar)  # the sentence is counted first, then spelled in part
    length = chart.completion_length([chart.first])
    shown = chart.completion([chart.first], SHOWN_SENTENCE)
    more = f"… ({length:,} characters in all)" if length > len(shown) else ""
    print(f"a shortest sentence: {shown!r}{more}", file=out)


# --- audit --------------------------------------------------------------------------------


@command(
    "audit",
    "run one constraint over a file of prompts (a server's or the bundled model) and report "
    "how often and where runs stall (fsmviz.audit)",
    arg("prompts", help="the prompts: JSON Lines ({\"prompt\": ..., \"id\": ...}) or plain lines"),
    arg("--regex", default=None, help="the constraint as a regular expression"),
    arg("--schema", default=None, help="the constraint as a JSON Schema file"),
    arg("--whitespace", choices=("none", "space", "flexible"), default=None,
        help="a schema's whitespace between JSON tokens (default: a single optional space; "
        "flexible: any, as vLLM's JSON engine writes it)"),
    arg("--grammar", default=None, help="the constraint as a grammar file (GBNF or Lark)"),
    arg("--server", default=None, help="an OpenAI-compatible server's URL (vLLM) to run on"),
    arg("--server-model", default=None, help="the model's name on the server (default: its first)"),
    arg("--concurrency", type=int, default=None,
        help="runs at once (default: 8 on a server, 4 on a local model)"),
    arg("--retries", type=int, default=2, help="further tries of a request the server failed"),
    arg("--out", default=None,
        help="a folder for a trace per prompt, runs.csv and report.html; a second call with "
        "the same folder skips the prompts whose trace is there (refused when the folder "
        "was made with another constraint, model or options)"),
    arg("--fresh", action="store_true",
        help="delete the --out folder's earlier runs first, and start over"),
    *sampling(max_tokens=64),
    *DECODING,
    MODEL,
)  # fmt: skip
def _audit(args: argparse.Namespace) -> int:
    from fsmviz.audit.prompts import PromptsError, count_prompts, read_prompts
    from fsmviz.params import check_generation

    given = [name for name in ("regex", "schema", "grammar") if getattr(args, name) is not None]
    if len(given) != 1:
        raise InputError("give the constraint as one of --regex PATTERN, --schema FILE or "
                         "--grammar FILE")  # fmt: skip
    options = {"max_tokens": args.max_tokens, "temperature": args.temperature, "seed": args.seed}
    options = check_generation(**options, **decoding_options(args))
    constraint: Any = args.regex
    if args.schema is not None:
        from fsmviz.schema.convert import compile_schema
        from fsmviz.schema.limits import MAX_SCHEMA_BYTES

        constraint = compile_schema(read_capped(args.schema, MAX_SCHEMA_BYTES), args.whitespace)
    elif args.grammar is not None:
        from fsmviz.grammar import GrammarError, compile_grammar

        try:
            constraint = compile_grammar(read_capped(args.grammar))
        except GrammarError as error:
            raise InputError(f"{args.grammar}:{error.location()}: {error.message}") from None
    else:
        from fsmviz.automaton.dfa import compile_regex

        compile_regex(args.regex)
    total = count_prompts(args.prompts)  # every line checked before any request
    if total == 0:
        raise PromptsError(f"{args.prompts} holds no prompts: one per line, or JSON Lines")
    check_model_path(args.model)
    from fsmviz.audit import audit
    from fsmviz.audit.progress import progress_bar

    if args.server:
        from fsmviz.generation.server import connect

        _progress(f"connecting to {args.server}…")
        model: Any = connect(args.server, args.server_model)
    else:
        from fsmviz.generation.models import load_model

        _progress(f"loading {args.model or 'the bundled model'} (~10 s)…")
        model = load_model(args.model)
    show, close = progress_bar(total, sys.stderr)
    try:
        report = audit(model, constraint, read_prompts(args.prompts), out=args.out,
                       concurrency=args.concurrency, retries=args.retries, total=total,
                       progress=show, fresh=args.fresh, **options)  # fmt: skip
    finally:
        close()
    print(report.summary())
    for place in report.places[:5]:
        where = f"{place.place} ({place.note})" if place.note else place.place
        print(f"  {where}: {place.stalled} not matched there, {place.runs} runs stall there")
    share = report.analysis_share
    took = f"{report.wall_seconds:.1f} s" + (f", fsmviz's analysis {share:.1%}" if share else "")
    _progress(f"[{took}{f'; written to {args.out}' if args.out else ''}]")
    return 0


# --- serve --------------------------------------------------------------------------------


@command(
    "serve",
    "the web page (fsmviz.app.server)",
    arg("--host", default="127.0.0.1", help="the address to listen on"),
    arg("--port", type=int, default=7860, help="the port"),
    arg("--model", action="append", default=None, metavar="[NAME=]MODEL",
        help="a hub id or local folder (default: the bundled model); repeatable: the "
        "first is the app's, the others offered in the page's model menu by NAME"),
    arg("--server", action="append", default=None, metavar="NAME=URL",
        help="offer an OpenAI-compatible server (vLLM) on the page by NAME (repeatable)"),
)  # fmt: skip
def _serve(args: argparse.Namespace) -> int:
    from fsmviz.app.server import main as serve  # gradio loads only here

    argv = ["--host", args.host, "--port", str(args.port)]
    for entry in args.model or ():
        argv += ["--model", entry]
    for entry in args.server or ():
        argv += ["--server", entry]
    return serve(argv) or 0
