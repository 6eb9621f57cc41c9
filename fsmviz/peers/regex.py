"""Will this pattern work in vLLM, SGLang or TGI? Asked of their real engines.

Those servers constrain generation with one of three libraries, and the three do not agree
with each other or with Python on every pattern:

* **outlines-core** (Rust ``regex`` semantics): ``\\d`` is Unicode, alternation is
  leftmost-first (``a|ab``), and 0.2.14 drops valid tokens after a complete match;
* **llguidance** (a lazy lexer): answers in about a millisecond whatever the pattern;
* **xgrammar** (precomputed masks; needs ``apache-tvm-ffi``): refuses ``(?i)``.

For a pattern, ``compare_engines`` asks each installed engine whether it accepts the
pattern, then walks a few sampled paths over the real vocabulary and compares the engine's
allowed set with fsmviz's at every step. Each difference is judged by the naive definition
(a token is allowed after the text ``P`` iff ``regex.fullmatch(pattern, P + token,
partial=True)``, with fsmviz's documented ASCII ``\\d \\w \\s``), so the report says which
side is right. Engines not installed are named, not failed: they are optional
(``pip install outlines-core llguidance xgrammar apache-tvm-ffi``).

    walk:  step 0 ──token──▶ step 1 ──token──▶ …     (a token both sides allow, at random)
    each step:  fsmviz allowed ⊕ engine allowed  ──naive oracle──▶  Difference(right=…)
"""

from __future__ import annotations

import importlib.metadata
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import regex

from fsmviz.automaton.syntax import greedy_quantifiers, strip_anchors
from fsmviz.errors import InputError
from fsmviz.tokens.encoding import lltokenizer
from fsmviz.tokens.index import TokenIndex, build_index
from fsmviz.tokens.vocab import Vocabulary

__all__ = ["ENGINES", "Difference", "EngineReport", "compare_engines", "naive_allows"]

ENGINES: dict[str, str] = {
    "outlines-core": "outlines_core",
    "llguidance": "llguidance",
    "xgrammar": "xgrammar",
}
"""Engine name (as on PyPI) -> the module that provides it."""
MAX_DIFFERENCES = 20
"""Differences kept per engine (the first ones found)."""
PER_STEP = 5
"""Differences judged per step (tokens that are whole characters first)."""
ORACLE_SECONDS = 0.2


@dataclass(frozen=True)
class Difference:
    """A token one side allows and the other does not, at one step of a walk."""

    step: int
    prefix: str  # the text generated before the step
    token_id: int
    token: str  # printable
    engine_allows: bool  # True: the engine allows it and fsmviz does not
    right: str  # "fsmviz", the engine's name, or "unknown" (the naive check could not tell)


@dataclass(frozen=True)
class EngineReport:
    """One engine's answer for one pattern."""

    engine: str
    version: str | None  # None: not installed
    accepted: bool  # whether the engine compiled the pattern
    error: str | None  # why it refused the pattern, or is missing
    steps: int  # steps compared
    differences: tuple[Difference, ...] = ()

    @property
    def installed(self) -> bool:
        return self.version is not None


def naive_allows(pattern: str, prefix: bytes, token: bytes | None) -> bool | None:
    """Whether ``token`` may follow ``prefix`` by the naive definition (``None``: the end of
        text). A token ending inside a UTF-8 character is allowed when some character it starts
    fits; ``None`` when that cannot be told (more than 4,096 characters to try).

        >>> naive_allows("a|ab", b"a", b"b"), naive_allows("a|ab", b"a", None)
        (True, True)
        >>> naive_allows("[0-9]+", b"1", "٣".encode()), naive_allows("[0-9]+", b"", None)
        (False, False)
        >>> naive_allows("日本", b"", "日".encode()[:2])  # half a character: could it be 日?
        True
    """
    core = greedy_quantifiers(strip_anchors(pattern))  # regex's partial match errs on +?
    flags = regex.ASCII
    if token is None:
        text = prefix.decode("utf-8", errors="replace")
        return regex.fullmatch(core, text, flags=flags, timeout=ORACLE_SECONDS) is not None
    data = prefix + token
    try:
        texts = [data.decode("utf-8")]
    except UnicodeDecodeError as error:
        if error.reason != "unexpected end of data":
            return False
        texts = _completions(
            data[: error.start].decode("utf-8", errors="replace"), data[error.start :]
        )
        if texts is None:
            return None
    return any(
        regex.fullmatch(core, text, flags=flags, partial=True, timeout=ORACLE_SECONDS)
        for text in texts
    )


def _completions(text: str, unfinished: bytes) -> list[str] | None:
    """``text`` followed by every character whose UTF-8 form starts with ``unfinished``;
    None when there are more than 4,096 (a lone 4-byte lead)."""
    lead = unfinished[0]
    length = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    missing = length - len(unfinished)
    if missing > 2:
        return None
    out = []
    for tail in range(64**missing):
        more = bytes(0x80 | (tail >> (6 * k)) & 0x3F for k in reversed(range(missing)))
        try:
            out.append(text + (unfinished + more).decode("utf-8"))
        except UnicodeDecodeError:
            continue  # overlong forms and surrogates are no characters
    return out


# --- the engines, each behind the same small walker -----------------------------------------


class _Walker:
    """One engine's matcher for one walk: ``allowed()`` token ids, ``consume(token)``."""

    def allowed(self) -> set[int]:
        raise NotImplementedError

    def consume(self, token: int) -> None:
        raise NotImplementedError


def _token_bytes(vocab: Vocabulary) -> list[bytes]:
    return [vocab.token_bytes(i) for i in range(len(vocab))]


def _outlines_core(pattern: str, vocab: Vocabulary) -> Callable[[], _Walker]:
    import outlines_core

    by_bytes: dict[bytes, list[int]] = {}
    for i, data in enumerate(_token_bytes(vocab)):
        if data and i != vocab.eos_token_id:
            by_bytes.setdefault(data, []).append(i)
    index = outlines_core.Index(
        strip_anchors(pattern), outlines_core.Vocabulary(vocab.eos_token_id, by_bytes)
    )

    class Walker(_Walker):
        def __init__(self) -> None:
            self.state: int | None = index.get_initial_state()

        def allowed(self) -> set[int]:
            if self.state is None:
                return set()
            return set(index.get_allowed_tokens(self.state) or [])

        def consume(self, token: int) -> None:
            self.state = None if self.state is None else index.get_next_state(self.state, token)

    return Walker


def _llguidance(pattern: str, vocab: Vocabulary) -> Callable[[], _Walker]:
    import llguidance
    import llguidance.numpy

    tokenizer = lltokenizer(vocab)  # the one adaptor (fsmviz.tokens.encoding)
    grammar = llguidance.LLMatcher.grammar_from_regex(strip_anchors(pattern))
    problem = llguidance.LLMatcher.validate_grammar(grammar, tokenizer)
    if problem:
        raise InputError(problem)
    size = len(vocab)

    class Walker(_Walker):
        def __init__(self) -> None:
            self.matcher = llguidance.LLMatcher(tokenizer, grammar, log_level=0)

        def allowed(self) -> set[int]:
            if self.matcher.is_error():
                return set()
            bits = llguidance.numpy.allocate_token_bitmask(1, tokenizer.vocab_size)
            llguidance.numpy.fill_next_token_bitmask(self.matcher, bits)
            return _ids_from_bitmask(bits[0], size)

        def consume(self, token: int) -> None:
            self.matcher.consume_token(token)

    return Walker


def _xgrammar(pattern: str, vocab: Vocabulary) -> Callable[[], _Walker]:
    import xgrammar

    info = xgrammar.TokenizerInfo(
        _token_bytes(vocab),
        vocab_type=xgrammar.VocabType.RAW,
        stop_token_ids=[vocab.eos_token_id],
    )
    compiled = xgrammar.GrammarCompiler(info).compile_regex(strip_anchors(pattern))
    size = len(vocab)

    class Walker(_Walker):
        def __init__(self) -> None:
            self.matcher = xgrammar.GrammarMatcher(compiled)

        def allowed(self) -> set[int]:
            if self.matcher.is_terminated():
                return set()
            bits = xgrammar.allocate_token_bitmask(1, size)
            self.matcher.fill_next_token_bitmask(bits)
            return _ids_from_bitmask(bits[0].numpy(), size)

        def consume(self, token: int) -> None:
            self.matcher.accept_token(token)

    return Walker


_BUILDERS: dict[str, Callable[[str, Vocabulary], Callable[[], _Walker]]] = {
    "outlines-core": _outlines_core,
    "llguidance": _llguidance,
    "xgrammar": _xgrammar,
}


def _ids_from_bitmask(words: np.ndarray, size: int) -> set[int]:
    """Token ids whose bit is set in a 32-bit-word bitmask (bit ``i % 32`` of word ``i // 32``)."""
    bits = np.unpackbits(np.ascontiguousarray(words, dtype="<i4").view(np.uint8), bitorder="little")
    return set(np.flatnonzero(bits[:size]).tolist())


def _whole(vocab: Vocabulary, token: int) -> bool:
    """Whether the token is whole UTF-8 characters (``٣``, not half of it)."""
    try:
        vocab.token_bytes(token).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _first_line(error: Exception) -> str:
    """An engine's error message without its log prefix (``[12:02:23] /project/x.cc:83: ``)."""
    lines = str(error).strip().splitlines()
    return _LOG_PREFIX.sub("", lines[0]).rstrip(".") if lines else type(error).__name__


_LOG_PREFIX = regex.compile(r"^\[[0-9:]+\] \S+: ")


def _version(engine: str) -> str | None:
    try:
        return importlib.metadata.version(engine)
    except importlib.metadata.PackageNotFoundError:
        return None


# --- the comparison -----------------------------------------------------------------------


def compare_engines(
    pattern: str,
    vocab: Vocabulary,
    *,
    engines: Sequence[str] = tuple(ENGINES),
    walks: int = 3,
    steps: int = 12,
    seed: int = 0,
) -> list[EngineReport]:
    """Each engine's verdict on ``pattern`` and where its allowed sets differ from fsmviz's
    on ``walks`` sampled walks of up to ``steps`` tokens. Raises ``RegexError`` when
    fsmviz itself refuses the pattern (there is nothing to compare)."""
    index = build_index(pattern, vocab)
    reports = []
    for engine in engines:
        version = _version(engine)
        if version is None:
            reports.append(EngineReport(engine, None, False, "not installed", 0))
            continue
        try:
            walker = _BUILDERS[engine](pattern, vocab)
            walker().allowed()  # some engines refuse only when first asked
        except Exception as error:  # noqa: BLE001 - any refusal is the engine's answer
            reports.append(EngineReport(engine, version, False, _first_line(error), 0))
            continue
        compared, differences = _walk(pattern, index, vocab, walker, engine, walks, steps, seed)
        reports.append(EngineReport(engine, version, True, None, compared, differences))
    return reports


def _walk(
    pattern: str,
    index: TokenIndex,
    vocab: Vocabulary,
    walker: Callable[[], _Walker],
    name: str,
    walks: int,
    steps: int,
    seed: int,
) -> tuple[int, tuple[Difference, ...]]:
    rng = random.Random(seed)
    eos = vocab.eos_token_id
    found: dict[tuple[str, int], Difference] = {}
    compared = 0
    for _ in range(walks):
        engine, state, prefix = walker(), index.initial_state, b""
        for step in range(steps):
            ours = set(index.allowed_tokens(state).tolist())
            theirs = engine.allowed()
            compared += 1
            differing = sorted(ours ^ theirs, key=lambda t: (not _whole(vocab, t), t))
            for token in differing[:PER_STEP]:
                if len(found) >= MAX_DIFFERENCES:
                    break
                text = prefix.decode("utf-8", errors="replace")
                if (text, token) in found:
                    continue
                data = None if token == eos else vocab.token_bytes(token)
                if data == b"":
                    continue  # a special token other than EOS: neither side writes text
                verdict = naive_allows(pattern, prefix, data)
                fsmviz_allows = token in ours
                right = "unknown" if verdict is None else "fsmviz"
                if verdict is not None and verdict != fsmviz_allows:
                    right = name
                found[(text, token)] = Difference(
                    step, text, token, vocab.token_text(token), not fsmviz_allows, right
                )
            both = sorted((ours & theirs) - {eos})
            if not both:
                break
            token = rng.choice(both)
            engine.consume(token)
            state = index.next_state(state, token)
            prefix += vocab.token_bytes(token)
            if state is None:
                break
    return compared, tuple(found.values())
