"""Every tokenizer people deploy, on llama.cpp's own vocabulary files (``tests/vocabs.py``,
fetched by ``make vocabs``): Llama 2 and Phi-3 (SentencePiece, ``▁``, ``<0x0A>`` byte
fallback), Llama 3, Qwen2 and GPT-2 (byte-level BPE).

Per family: the tokenizer built from the GGUF is the real one (it encodes llama.cpp's test
texts to llama.cpp's ids), every token's bytes are right, the regex index is exact against
the naive oracle along walks, and regex, schema and grammar runs on a tiny random model of
that vocabulary stop only where the text is accepted. The two 32k SentencePiece families
are tested fully; the 128k-152k ones more lightly (a vocabulary of theirs costs seconds).
"""

from __future__ import annotations

import json
import os
import random

import pytest
import regex
import vocabs
from oracle import walk_against_oracle

from fsmviz import build_index, compile_grammar, compile_schema
from fsmviz.generation.generate import encode_text, generate
from fsmviz.grammar.matcher import GrammarMatcher

pytestmark = pytest.mark.slow

FAMILIES = vocabs.FAMILIES
SENTENCEPIECE = vocabs.SENTENCEPIECE
BIG = ("llama-bpe", "qwen2")


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


@pytest.mark.parametrize("family", FAMILIES)
def test_the_tokenizer_encodes_llama_cpps_cases_to_llama_cpps_ids(family) -> None:
    tokenizer, vocab = vocabs.tokenizer(family), vocabs.vocabulary(family)
    cases = vocabs.llama_cpp_cases(family)
    assert len(cases) > 40
    wrong = {}
    for case in cases:
        ids = tuple(tokenizer.encode(case.text, add_special_tokens=False))
        if ids != case.ids:
            wrong[(family, case.text)] = ids
            assert spelled(vocab, ids) == spelled(vocab, case.ids), (case, ids)
    known = {key for key in KNOWN_SPLITS if key[0] == family}
    assert set(wrong) == known, f"{len(wrong)} of {len(cases)} differ from llama.cpp: {wrong}"


@pytest.mark.parametrize("family", FAMILIES)
def test_llama_cpps_ids_spell_its_texts_in_fsmvizs_bytes(family) -> None:
    """Byte fallback (``<0xF0>`` ``<0x9F>`` ... for an emoji), ``▁``, ``Ġ``: the bytes of
    llama.cpp's ids are the text (SentencePiece writes a ``▁`` before it)."""
    vocab = vocabs.vocabulary(family)
    lead = b" " if family in SENTENCEPIECE else b""
    for case in vocabs.llama_cpp_cases(family):
        if case.text:
            assert spelled(vocab, case.ids) == lead + case.text.encode(), case


@pytest.mark.parametrize("family", FAMILIES)
def test_sampled_tokens_bytes_are_what_the_tokenizer_decodes_them_to(family) -> None:
    """Each sampled token after a word, decoded by the tokenizer itself: the text it adds is
    fsmviz's bytes for it (tokens that are part of a UTF-8 character are checked in pairs
    with llama.cpp's cases above)."""
    tokenizer, vocab = vocabs.tokenizer(family), vocabs.vocabulary(family)
    context = tokenizer.encode("word", add_special_tokens=False)
    before = tokenizer.decode(context)
    ids = random.Random(0).sample(range(len(vocab)), 600 if family in BIG else 2000)
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


def test_control_tokens_the_tokenizer_adds_as_text_are_not_text() -> None:
    """Phi-3's ``</s>`` is an added token not called special, its ``[PAD32011]``... are
    ordinary pieces of the GGUF: none of them may be written under ``[^\\n]*``."""
    vocab = vocabs.vocabulary("phi-3")
    tokenizer = vocabs.tokenizer("phi-3")
    slash_s = tokenizer.convert_tokens_to_ids("</s>")
    pads = [i for i in range(len(vocab)) if vocab.special_tokens.get(i, "").startswith("[PAD")]
    assert len(pads) == 53
    allowed = set(build_index(r"[^\n]*", vocab).allowed_tokens(0).tolist())
    assert slash_s not in allowed and not allowed & set(pads)
    assert vocab.token_bytes(slash_s) == b"" and vocab.is_special(slash_s)


def test_qwen2s_padding_slots_are_not_text_and_its_text_tokens_are() -> None:
    vocab = vocabs.vocabulary("qwen2")
    tokenizer = vocabs.tokenizer("qwen2")
    pads = [i for i, token in tokenizer.added_tokens_decoder.items() if "PAD" in token.content]
    assert len(pads) == 290
    assert all(vocab.is_special(i) and vocab.token_bytes(i) == b"" for i in pads)
    allowed = set(build_index(r"[^\n]{1,20}", vocab).allowed_tokens(0).tolist())
    assert not allowed & set(pads)


def test_an_added_token_spelled_as_text_stays_text() -> None:
    """``<tool_call>`` (Qwen2.5 adds it, not special) is text its model writes; ``[PAD7]``
    and ``<|tool_call>`` (Gemma 4) are control tokens however they were added."""
    from transformers import AutoTokenizer

    from fsmviz import Vocabulary

    tokenizer = AutoTokenizer.from_pretrained(str(vocabs.convert("gpt-2")))  # a fresh copy
    tokenizer.add_tokens(["<tool_call>", "[PAD7]", "<|tool_call>"])
    vocab = Vocabulary.from_tokenizer(tokenizer)
    text, pad, control = tokenizer.convert_tokens_to_ids(["<tool_call>", "[PAD7]", "<|tool_call>"])
    assert vocab.token_bytes(text) == b"<tool_call>"
    assert vocab.is_special(pad) and vocab.is_special(control)
    assert vocab.token_bytes(pad) == vocab.token_bytes(control) == b""


# --- the index is exact ---------------------------------------------------------------------

WALKS = [r"[a-z]+ [0-9]{2}\n", r'\{"name": "[^"]{0,6}", "city": "(Köln|München)"\}', r"日本.{2}"]


@pytest.mark.parametrize("family", FAMILIES)
def test_the_index_is_exact_against_the_naive_oracle_along_walks(family) -> None:
    vocab = vocabs.vocabulary(family)
    patterns, steps = (WALKS[1:2], 3) if family in BIG else (WALKS, 6)
    compared = 0
    for pattern in patterns:
        index = build_index(pattern, vocab)
        pick = random.Random(pattern).choice
        compared += walk_against_oracle(index, vocab, pattern, pick, steps)[2]
    assert compared >= len(patterns) * 2


# --- SentencePiece: forced text without the word boundary -----------------------------------

CITY = compile_grammar('root ::= "Die Stadt " ("München" | "Köln")')


@pytest.mark.parametrize("family", SENTENCEPIECE)
def test_text_ahead_is_tokenized_as_written_mid_text(family) -> None:
    """``Die Stadt `` after other text: ``Die ▁Stadt ▁``, not ``▁Die ▁Stadt ▁`` (a space the
    text does not have), for fast-forward and for llguidance's forced text alike."""
    model = vocabs.tiny_model(family)
    tokenizer, vocab = model.tokenizer, model.vocab
    plain = tokenizer.encode("Die Stadt ", add_special_tokens=False)
    assert spelled(vocab, plain) == b" Die Stadt "  # what SentencePiece does at a start
    for text in ("Die Stadt ", " Köln", "\n  x", "München"):
        assert spelled(vocab, encode_text(tokenizer, text, vocab)) == text.encode()
    matcher = GrammarMatcher(CITY, vocab, lambda text: encode_text(tokenizer, text, vocab))
    assert [vocab.token_bytes(t) for t in matcher.allowed_tokens()] == [b"Die"]
    assert spelled(vocab, matcher.forced()) == b"Die Stadt"  # the space: " München"/" Köln"


@pytest.mark.parametrize("family", SENTENCEPIECE)
def test_a_grammar_run_writes_forced_text_on_sentencepiece(family) -> None:
    model = vocabs.tiny_model(family)
    for seed in range(3):
        trace = generate(model, CITY, "Where?", max_tokens=12, temperature=1.0, seed=seed)
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


def honest(trace, judge) -> None:
    """A run stops as accepted exactly when its text is accepted, and never stalls."""
    assert trace.stop_reason in ("accepted", "max_tokens"), (trace.stop_reason, trace.notes)
    assert trace.matched == judge(trace.text), trace.text
    assert (trace.stop_reason == "accepted") == trace.matched, (trace.stop_reason, trace.text)


@pytest.mark.parametrize("family", FAMILIES)
def test_regex_schema_and_grammar_runs_stop_only_where_the_text_is_accepted(family) -> None:
    model = vocabs.tiny_model(family)
    seeds = range(4) if family in SENTENCEPIECE else range(1)
    regex_schema, tree = compile_schema(SCHEMA), compile_schema(TREE)
    assert (regex_schema.path, tree.path) == ("regex", "grammar")
    accepted = 0
    for seed in seeds:
        options = {"temperature": 1.0, "seed": seed}
        pattern = r"[A-Z][a-z]{1,6}, [0-9]{1,2}( years)?"
        trace = generate(model, pattern, "Name, age:", max_tokens=16, **options)
        honest(trace, lambda text, p=pattern: regex.fullmatch(p, text) is not None)
        trace = generate(model, regex_schema, "A person:", max_tokens=40, **options)
        honest(trace, regex_schema.accepts)
        if trace.matched:
            assert set(json.loads(trace.text)) == {"name", "age"}
        trace = generate(model, tree, "A tree:", max_tokens=60, **options)
        honest(trace, tree.accepts)
        trace = generate(model, LIST, "A list:", max_tokens=24, **options)
        honest(trace, LIST.accepts)
        accepted += trace.matched
    assert accepted  # the grammar's safe end finishes the list in time
