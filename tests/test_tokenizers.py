"""Every tokenizer people deploy, on llama.cpp's own vocabulary files (``tests/vocabs.py``,
fetched by ``make vocabs``): Llama 2 and Phi-3 (SentencePiece, ``▁``, ``<0x0A>`` byte
fallback), Gemma 4 (SentencePiece without the leading ``▁``, 262k tokens), Llama 3, Qwen2
and GPT-2 (byte-level BPE).

Per family: the tokenizer built from the GGUF is the real one (it encodes llama.cpp's test
texts to llama.cpp's ids), sampled tokens' bytes are right, the regex index is exact against
the naive oracle along a walk, and regex, schema and grammar runs on a tiny random model of
that vocabulary stop only where the text is accepted. Each family's tokenizer, vocabulary,
DAWG, llguidance tokenizer and model are built once per session (``tests/vocabs.py``) and
shared by its tests; most of this file's time is those, seconds per 128k-262k vocabulary.
So a family's tests are one xdist group (``by_family``), run on one worker, one after
another: dealt alone, a family's tests met both workers, and each worker built its
tokenizer, vocabulary and trie again (Gemma 4's: ~5 CPU-s, then ~3 for its trie).
The whole-family sweeps (three walks of six steps, 2,000 sampled tokens, every family) are
``bench/family_bench.py``'s, with the costs by family (``make bench BENCH=families``).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterable
from typing import Any

import pytest
import regex
import vocabs
from oracle import walk_against_oracle

from fsmviz import build_index, compile_grammar, compile_schema, first_allowed_tokens
from fsmviz.generation.generate import encode_text, generate
from fsmviz.grammar.matcher import GrammarMatcher

pytestmark = pytest.mark.slow

FAMILIES = vocabs.FAMILIES
SENTENCEPIECE = vocabs.SENTENCEPIECE


def family_group(family: str) -> pytest.MarkDecorator:
    """The xdist group of ``family``'s tests (``make test`` deals groups whole)."""
    return pytest.mark.xdist_group(f"test_tokenizers.py:{family}")


def by_family(families: Iterable[str]) -> list[Any]:
    """``families`` as parameters, each in its family's group."""
    return [pytest.param(family, marks=family_group(family)) for family in families]


@pytest.fixture(scope="session", autouse=True)
def real_vocabularies() -> None:
    why = vocabs.missing()
    if why:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def spelled(vocab, ids) -> bytes:
    return b"".join(vocab.token_bytes(i) for i in ids)


# --- the tokenizer is the real one, and fsmviz reads its bytes right ----------------------


KNOWN_SPLITS = {("llama-bpe", "Cửa Việt")}
"""llama.cpp cases that transformers' conversion of the GGUF tokenizes otherwise: Llama 3's
``" Việt"`` as three tokens (``" Vi"``, ``"ệ"``, ``"t"``) where llama.cpp writes one (id
101,798). The same bytes, split otherwise: a merge the conversion does not apply."""


@pytest.mark.parametrize("family", by_family(FAMILIES))
def test_the_tokenizer_is_llama_cpps_and_its_ids_spell_the_text_in_fsmvizs_bytes(family) -> None:
    """The tokenizer encodes llama.cpp's test texts to llama.cpp's ids; and the bytes fsmviz
    reads for those ids are the text: byte fallback (``<0xF0>`` ``<0x9F>`` ... for an
    emoji), ``▁``, ``Ġ`` (Llama 2 and Phi-3 write a ``▁`` before a text; Gemma 4 does not)."""
    tokenizer, vocab = vocabs.tokenizer(family), vocabs.vocabulary(family)
    cases = vocabs.llama_cpp_cases(family)
    assert len(cases) > 40
    lead = b" " if family in SENTENCEPIECE else b""
    wrong = {}
    for case in cases:
        if case.text:
            assert spelled(vocab, case.ids) == lead + case.text.encode(), case
        ids = tuple(tokenizer.encode(case.text, add_special_tokens=False))
        if ids != case.ids:
            wrong[(family, case.text)] = ids
            assert spelled(vocab, ids) == spelled(vocab, case.ids), (case, ids)
    known = {key for key in KNOWN_SPLITS if key[0] == family}
    assert set(wrong) == known, f"{len(wrong)} of {len(cases)} differ from llama.cpp: {wrong}"


@pytest.mark.parametrize("family", by_family(FAMILIES))
def test_sampled_tokens_bytes_are_what_the_tokenizer_decodes_them_to(family) -> None:
    """Each sampled token after a word, decoded by the tokenizer itself: the text it adds is
    fsmviz's bytes for it (tokens that are part of a UTF-8 character are checked in pairs
    with llama.cpp's cases above)."""
    tokenizer, vocab = vocabs.tokenizer(family), vocabs.vocabulary(family)
    context = tokenizer.encode("word", add_special_tokens=False)
    before = tokenizer.decode(context)
    ids = random.Random(0).sample(range(len(vocab)), 2000)
    checked = 0
    for i in ids:
        data = vocab.token_bytes(i)
        if vocab.is_special(i):
            assert data == b""
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert tokenizer.decode([*context, i]) == before + text, (i, data)
        checked += 1
    assert checked > len(ids) * 0.8


CONTROL = {  # family: (control tokens by name, how many of the ``[PAD...]`` slots)
    "phi-3": (("</s>", "<|assistant|>", "<|end|>"), 53),
    "qwen2": (("<|im_end|>", "<|endoftext|>"), 290),
    "gemma-4": (("<|tool_call>", "<tool_call|>", "<|turn>", "<turn|>", '<|"|>', "<eos>"), 0),
}


@pytest.mark.parametrize("family", by_family(CONTROL))
def test_control_tokens_are_never_text(family) -> None:
    """Phi-3's ``</s>`` (an added token not called special) and its ``[PAD32011]``... (ordinary
    pieces of the GGUF), Qwen2's 290 ``[PADnnn]`` slots, Gemma 4's ``<|tool_call>``: control
    tokens, spelled ``b""``; none of them may be written under ``[^\\n]{1,20}``, while the
    text tokens that spell their names' characters may."""
    vocab, tokenizer = vocabs.vocabulary(family), vocabs.tokenizer(family)
    names, pads = CONTROL[family]
    control = set(tokenizer.convert_tokens_to_ids(list(names)))
    slots = {i for i, name in vocab.special_tokens.items() if name.startswith("[PAD")}
    assert len(control) == len(names) and len(slots) == pads
    assert all(vocab.is_special(i) and vocab.token_bytes(i) == b"" for i in control | slots)
    allowed = set(first_allowed_tokens(r"[^\n]{1,20}", vocab).tolist())
    assert not allowed & (control | slots)
    assert {vocab.token_bytes(i) for i in allowed} >= {b"<", b"|", b">"}


@family_group("llama-spm")
def test_an_added_token_spelled_as_text_stays_text() -> None:
    """``<tool_call>`` (Qwen2.5 adds it, not special) is text its model writes; ``[PAD7]``
    and ``<|tool_call>`` (Gemma 4) are control tokens however they were added."""
    from transformers import AutoTokenizer

    from fsmviz import Vocabulary

    tokenizer = AutoTokenizer.from_pretrained(str(vocabs.convert("llama-spm")))  # a copy
    tokenizer.add_tokens(["<tool_call>", "[PAD7]", "<|tool_call>"])
    vocab = Vocabulary.from_tokenizer(tokenizer)
    text, pad, control = tokenizer.convert_tokens_to_ids(["<tool_call>", "[PAD7]", "<|tool_call>"])
    assert vocab.token_bytes(text) == b"<tool_call>"
    assert vocab.is_special(pad) and vocab.is_special(control)
    assert vocab.token_bytes(pad) == vocab.token_bytes(control) == b""


# --- the index is exact ---------------------------------------------------------------------

WALK = r'\{"name": "[^"]{0,6}", "city": "(Köln|München)"\}'


@pytest.mark.parametrize("family", by_family(FAMILIES))
def test_the_index_is_exact_against_the_naive_oracle_along_a_walk(family) -> None:
    """One walk of a pattern with quotes, braces and non-ASCII letters (``ö``, ``ü``: whole
    tokens in some vocabularies, byte pieces in others), three steps (the naive oracle asks
    ``regex`` about every token: ~1 s a state at 32k). The other walks, six steps each, are
    ``bench/family_bench.py``'s sweep."""
    vocab = vocabs.vocabulary(family)
    index = build_index(WALK, vocab)
    compared = walk_against_oracle(index, vocab, WALK, random.Random(WALK).choice, 3)[2]
    assert compared == 4


# --- SentencePiece: forced text without the word boundary -----------------------------------

CITY = compile_grammar('root ::= "Die Stadt " ("München" | "Köln")')


@pytest.mark.parametrize("family", by_family(SENTENCEPIECE))
def test_text_ahead_is_tokenized_as_written_mid_text(family) -> None:
    """``Die Stadt `` after other text: ``Die ▁Stadt ▁``, not ``▁Die ▁Stadt ▁`` (a space the
    text does not have), for fast-forward and for llguidance's forced text alike."""
    tokenizer, vocab = vocabs.tokenizer(family), vocabs.vocabulary(family)
    plain = tokenizer.encode("Die Stadt ", add_special_tokens=False)
    assert spelled(vocab, plain) == b" Die Stadt "  # what SentencePiece does at a start
    for text in ("Die Stadt ", " Köln", "\n  x", "München"):
        assert spelled(vocab, encode_text(tokenizer, text, vocab)) == text.encode()
    matcher = GrammarMatcher(CITY, vocab, lambda text: encode_text(tokenizer, text, vocab))
    assert [vocab.token_bytes(t) for t in matcher.allowed_tokens()] == [b"Die"]
    assert spelled(vocab, matcher.forced()) == b"Die Stadt"  # the space: " München"/" Köln"


@pytest.mark.parametrize("family", by_family(SENTENCEPIECE))
def test_a_grammar_run_writes_forced_text_on_sentencepiece(family) -> None:
    model = vocabs.tiny_model(family)
    trace = generate(model, CITY, "Where?", max_tokens=12, temperature=1.0)
    assert trace.text in ("Die Stadt München", "Die Stadt Köln"), trace.text
    assert trace.matched and trace.stop_reason == "accepted"
    assert trace.steps[0].forced
    run = generate(model, r"Die Stadt (München|Köln)", "Where?", max_tokens=12)
    assert run.matched and run.steps[0].forced
    assert run.steps[0].text == "Die"


# --- every mode generates, and stops only where the text is accepted ------------------------

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 6}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
TREE = {  # recursive: the grammar path
    "type": "object",
    "properties": {
        "label": {"type": "string", "maxLength": 4},
        "kids": {"type": "array", "items": {"$ref": "#"}, "maxItems": 1},
    },
    "required": ["label"],
    "additionalProperties": False,
}
LIST = compile_grammar('root ::= "[" item ("," item)* "]"\nitem ::= [a-z]{1,4} | [0-9]{1,3}')


def honest(trace, judge, model=None, constraint=None) -> None:
    """A run stops as accepted exactly when its text is accepted, and never stalls; with
    ``model`` and ``constraint``, it replays exactly (``replays``)."""
    assert trace.stop_reason in ("accepted", "max_tokens"), (trace.stop_reason, trace.notes)
    assert trace.matched == judge(trace.text), trace.text
    assert (trace.stop_reason == "accepted") == trace.matched, (trace.stop_reason, trace.text)
    if model is not None:
        replays(trace, model, constraint)


def replays(trace, model, constraint) -> None:
    """The run's tokens fed again to a fresh copy of its constraint: each was allowed where
    it was written, among as many allowed tokens as the run reported, and (a regex's index)
    leads to the state the run recorded; the end token only where the text is accepted.
    ``constraint``: a regex, or a ``Grammar`` or grammar-path schema (llguidance's masks
    replayed along the tokens, ``StepMasks``)."""
    from fsmviz.grammar.replay import StepMasks, model_encoder

    vocab, tokens = model.vocab, [step.token_id for step in trace.steps]
    if isinstance(constraint, str):
        index = build_index(constraint, vocab)
        state = index.initial_state
        for step in trace.steps:
            allowed = index.allowed_tokens(state)
            assert step.state_before == state and step.token_id in set(allowed.tolist())
            assert step.allowed_count == len(allowed), (step.index, step.allowed_count)
            if step.token_id == vocab.eos_token_id:
                assert index.is_accepting(state) and step is trace.steps[-1]
                continue
            state = index.next_state(state, step.token_id)
            assert state == step.state_after
        return
    masks = StepMasks(constraint, vocab, tokens, model_encoder(model))
    for i, step in enumerate(trace.steps):
        allowed = masks.allowed_tokens(i)
        assert step.token_id in set(allowed.tolist()), (i, step.text)
        assert step.allowed_count == len(allowed), (i, step.allowed_count, len(allowed))


@pytest.mark.parametrize("family", by_family(FAMILIES))
def test_regex_schema_and_grammar_runs_stop_only_where_the_text_is_accepted(family) -> None:
    model = vocabs.tiny_model(family)
    if family == "llama-bpe":  # the conversion adds <|endoftext|> past the model's logits
        assert len(model.vocab) == model.logits_size + 1
    seeds = range(2) if family in SENTENCEPIECE else range(1)
    regex_schema, tree = compile_schema(SCHEMA), compile_schema(TREE)
    assert (regex_schema.path, tree.path) == ("regex", "grammar")
    accepted = 0
    for seed in seeds:
        options = {"temperature": 1.0, "seed": seed}
        pattern = r"[A-Z][a-z]{1,6}, [0-9]{1,2}( years)?"
        trace = generate(model, pattern, "Name, age:", max_tokens=16, **options)
        honest(trace, lambda text, p=pattern: regex.fullmatch(p, text) is not None, model, pattern)
        trace = generate(model, regex_schema, "A person:", max_tokens=40, **options)
        honest(trace, regex_schema.accepts, model, regex_schema.regex)
        if trace.matched:
            assert set(json.loads(trace.text)) == {"name", "age"}
        trace = generate(model, tree, "A tree:", max_tokens=60, **options)
        honest(trace, tree.accepts, model, tree)
        trace = generate(model, LIST, "A list:", max_tokens=24, **options)
        honest(trace, LIST.accepts, model, LIST)
        accepted += trace.matched
    assert accepted  # the grammar's safe end finishes the list in time


TURN_ENDS = {  # family: (the token that ends a turn in its chat template, the tokenizer's EOS)
    "phi-3": ("<|end|>", "<|endoftext|>"),
    "qwen2": ("<|im_end|>", "<|endoftext|>"),
    "gemma-4": ("<turn|>", "<eos>"),
}


@pytest.mark.parametrize("family", by_family(TURN_ENDS))
def test_a_run_ends_with_the_token_that_ends_a_turn_not_the_tokenizer_s_eos(family) -> None:
    """The generation config lists both ends (as Phi-3's, Qwen2's and Gemma's do); the chat
    template writes only the end of a turn, so ``load_model``'s vocabulary ends runs with
    it: the only end an accepting state allows, the one a finished run wrote."""
    from transformers import GenerationConfig

    from fsmviz import Vocabulary
    from fsmviz.generation.models import Model, turn_end_id

    tokenizer, (turn, eos) = vocabs.tokenizer(family), TURN_ENDS[family]
    turn_id, eos_id = tokenizer.convert_tokens_to_ids([turn, eos])
    assert tokenizer.eos_token_id == eos_id != turn_id
    config = GenerationConfig(eos_token_id=[eos_id, turn_id])
    assert turn_end_id(tokenizer, config) == turn_id
    assert turn_end_id(tokenizer, GenerationConfig(eos_token_id=eos_id)) is None
    vocab = Vocabulary.from_tokenizer(
        tokenizer, name=family, eos_token_id=turn_end_id(tokenizer, config)
    )
    index = build_index("a?", vocab)  # the start accepts: its one end is the turn's
    ends = set(index.allowed_tokens(index.initial_state).tolist())
    assert turn_id in ends and eos_id not in ends
    if family != "phi-3":
        return  # one run is enough: the tiny model on the 32k vocabulary
    tiny = vocabs.tiny_model(family)
    model = Model(tiny.name, tiny.model, tokenizer, vocab, tiny.device)
    for chat in (True, False):  # without the template too: the vocabulary has one end
        trace = generate(model, "[a-z]{1,3}", "Word:", max_tokens=8, temperature=1.0, chat=chat)
        honest(trace, lambda text: regex.fullmatch("[a-z]{1,3}", text) is not None)
        assert eos_id not in [step.token_id for step in trace.steps]
        if trace.stop_reason == "accepted":
            assert trace.steps[-1].token_id == turn_id or len(trace.text) == 3


LLAMA3_TEMPLATE = (  # Meta-Llama-3-8B-Instruct's own chat template (its GGUF here has none)
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
    "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] "
    "| trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content "
    "%}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)


@family_group("llama-bpe")
def test_llama_3_ends_a_turn_with_eot_id_and_its_extra_token_is_never_written() -> None:
    """Llama 3 instruct: the tokenizer's EOS is ``<|end_of_text|>``, the generation config
    stops on it and on ``<|eot_id|>``, and the template writes ``<|eot_id|>`` after a reply:
    runs end with ``<|eot_id|>``. The GGUF conversion's ``<|endoftext|>`` (id 128,256, past
    the model's 128,256 logits) is a control token, so the vocabulary is served; as an end
    token, it is refused by name."""
    from dataclasses import replace

    from transformers import AutoTokenizer, GenerationConfig

    from fsmviz.generation.models import ModelLoadError, check_logits, turn_end_id

    tokenizer = AutoTokenizer.from_pretrained(str(vocabs.convert("llama-bpe")))  # a copy
    eot, end = tokenizer.convert_tokens_to_ids(["<|eot_id|>", "<|end_of_text|>"])
    config = GenerationConfig(eos_token_id=[end, eot])
    assert tokenizer.eos_token_id == end and turn_end_id(tokenizer, config) is None
    tokenizer.chat_template = LLAMA3_TEMPLATE
    assert turn_end_id(tokenizer, config) == eot == 128009
    vocab, model = vocabs.vocabulary("llama-bpe"), vocabs.tiny_model("llama-bpe")
    check_logits(vocab, model.logits_size)  # 128,257 tokens: the last one never text
    past = vocab.special_tokens[model.logits_size]
    with pytest.raises(ModelLoadError, match=r"end token '<\|endoftext\|>' \(id 128,256\)"):
        check_logits(replace(vocab, eos_token_id=model.logits_size), model.logits_size)
    assert past == "<|endoftext|>"


@pytest.mark.parametrize("family", by_family(["gemma-4", "llama-spm"]))
def test_a_first_set_walked_from_the_root_of_the_class_trie_is_the_index_s(
    family, monkeypatch
) -> None:
    """Once ``[^\\n]``'s classes are learnt (``warm``), a first set whose start row tells
    those bytes apart walks the class trie from the root (``levelwalk.walk_root``: Gemma
    4's 262k tokens are 22k class nodes); each answers as the whole index does, special
    tokens (spelled ``b""``, in no node) left out; ``[^\\n][0-9]``, whose next row tells
    digits apart, gives up there and walks the bytes."""
    from test_levelwalk import counted_root_walks

    from fsmviz.tokens.fast import successors
    from fsmviz.tokens.trie import trie_of

    vocab = vocabs.vocabulary(family)
    successors.warm_classes(trie_of(vocab))
    answered = counted_root_walks(monkeypatch)
    # ``{1,12}``: a bound below llama-spm's ``TrieLevels.long`` (14), else the repeat is
    # let go and its loop read off, no walk (``regex_terms.TreeTerms.relax_from``)
    for pattern in [r"[^\n]{1,12}", r".{0,3}", r"[^\n]{2,3}\n", r"[^\n][0-9]"]:
        ours = first_allowed_tokens(pattern + "()" * 9, vocab)  # no index built for it yet
        index = build_index(pattern, vocab)
        assert ours.tolist() == index.allowed_tokens(index.initial_state).tolist(), pattern
    assert answered == [True, True, True, False]
