"""The seeds' demos as the seeds wrote them: the page's examples, the Moby Dick ZipModel
in Learn, and seed 001's transition table over token ids."""

from __future__ import annotations

import pytest
import regex

from fsmviz import Vocabulary, build_index, compile_regex
from fsmviz.app.examples import examples
from fsmviz.learn.token_table import token_table
from fsmviz.learn.toy import MOBY_DICK, TOY_EXAMPLES, ZIP_VOCABULARY, ZipModel, toy_view

MOBY = "seed 000: Moby Dick on the ZipModel"


def test_pink_floyd_runs_with_seed_000s_prompt_and_format_example() -> None:
    floyd = examples()["pink_floyd_json"]
    assert floyd.prompt.startswith("What were Pink Floyd's two most popular singles.")
    assert '"title": "Octopus\'s Garden"' in floyd.prompt and floyd.prompt.endswith("]")


def test_the_new_demos_are_examples_that_compile() -> None:
    found = examples()
    assert found["url"].prompt == "Where can I listen to pink floyd songs"
    assert "20g protein" in found["protein_20g"].prompt and not found["protein_20g"].chat
    assert "not allowed to use the letter e" in found["no_letter_e"].prompt
    for name in ("protein_20g", "no_letter_e", "stop_string"):
        compile_regex(found[name].pattern)
    assert not regex.fullmatch(found["no_letter_e"].pattern, "the sea")
    assert regex.fullmatch(found["stop_string"].pattern, "The sea is wide.")
    assert not regex.fullmatch(found["stop_string"].pattern, "The sea. Is wide.")


def test_moby_dick_uses_the_seeds_45_character_vocabulary_and_a_bundled_passage() -> None:
    moby = TOY_EXAMPLES[MOBY]
    vocab = moby.vocabulary()
    assert len(ZIP_VOCABULARY) == 45 and len(vocab) == 46 and vocab.eos_token_id == 45
    assert vocab.token_text(44) == " " and vocab.token_text(42) == "\\"
    assert MOBY_DICK.startswith("call me ishmael.") and "moby dick" in MOBY_DICK
    assert moby.model == "ZipModel" and moby.prompt == "ahab is seeking vengeance against"


def test_the_zip_model_answers_the_seeds_question_with_a_match() -> None:
    moby = TOY_EXAMPLES[MOBY]
    vocab, model, history = moby.vocabulary(), ZipModel(moby.training, prompt=moby.prompt), []
    for _ in range(12):
        view = toy_view(moby.pattern, vocab, history, model=model)
        if view.finished:
            break
        history.append(max(view.allowed, key=lambda t: view.probs[t]))
    assert view.finished and regex.fullmatch(moby.pattern, view.text)


def test_the_token_table_is_the_index_row_by_row() -> None:
    vocab = Vocabulary.from_strings(["a", "1", "12", ".", ".5", "5."])
    pattern = r"[0-9]+\.[0-9]"
    table = token_table(pattern, vocab)
    index = build_index(pattern, vocab)
    assert set(table.states) == set(index.states)
    for state, cells in zip(table.states, table.cells, strict=True):
        for token, cell in zip(table.tokens, cells, strict=True):
            assert cell == index.next_state(state, token)
    assert "a" not in table.texts  # no state lets "a" move


@pytest.mark.slow
def test_seed_001s_table_over_the_real_vocabulary(bundled_vocab) -> None:
    table = token_table("[0-9]{2}", bundled_vocab)
    assert sorted(table.texts) == list("0123456789")  # SmolLM2 spells numbers digit by digit
    assert len(table.states) == 3 and table.accepting == (False, False, True)
