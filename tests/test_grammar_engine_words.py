"""Issue 50, points 2 and 3: what a grammar run does when llguidance refuses to go on, and
with a literal that spells a special token.

* **An engine's refusal is a message.** llguidance gives up on grammars too complex for its
  parser ("Current row has 3000 items; max is 2000"). The run then stops with the stop
  reason ``engine_error`` and llguidance's words in ``Trace.notes``; it never falls into a
  regex-only path (``AttributeError: 'GrammarCursor' object has no attribute 'trie'``).
* **Grammar literals are text.** ``root ::= "<|im_end|>"`` is written with ordinary tokens
  (``<``, ``|``, ``im``, …), as a prompt's ``<|im_end|>`` is read, never as the end-of-
  sequence token (which ended the run with text "" and "accepted" before).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

import pytest

from fsmviz import compile_grammar
from fsmviz.generation.generate import generate
from fsmviz.generation.trace import StopReason, Trace
from fsmviz.grammar.errors import GrammarError
from fsmviz.grammar.matcher import GrammarMatcher
from fsmviz.grammar.run import GrammarRun


@dataclass(frozen=True)
class TightGrammar:
    """A grammar compiled by llguidance with a parser limit set low (``max_items_in_row``),
    so that llguidance refuses at the first token whatever fsmviz's own bounds allow."""

    grammar: str
    text: str = 'start: "w0x" | "w1x" | "w2x" | "w3x" | "w4x"'

    def limits(self) -> Any:
        import llguidance

        return llguidance.LLParserLimits(max_items_in_row=3)

    def accepts(self, text: str) -> bool:
        return text in {f"w{i}x" for i in range(5)}

    def generation_run(self, model: Any, options: Any) -> GrammarRun:
        return GrammarRun(model, self, options)


def tight() -> TightGrammar:
    import llguidance

    return TightGrammar(llguidance.grammar_from("lark", TightGrammar.text))


@pytest.mark.parametrize("fast_forward", [True, False])
@pytest.mark.parametrize("safe_end", [True, False])
def test_an_engine_refusal_stops_the_run_with_the_engines_words(tiny, fast_forward, safe_end):
    trace = generate(tiny, tight(), "Say w0x.", fast_forward=fast_forward, safe_end=safe_end)
    assert trace.stop_reason == "engine_error"
    assert not trace.matched and trace.text == ""
    (note,) = trace.notes
    assert "llguidance" in note and "max is 3" in note
    assert "<state>" not in note and "Parser Error" not in note  # its words, not its dump


def test_three_thousand_alternatives_end_in_a_message_not_a_crash(tiny) -> None:
    """The issue's grammar: refused up front by fsmviz's own bounds, or stopped with
    llguidance's words; never an AttributeError."""
    text = "root ::= " + " | ".join(f'"w{i}x"' for i in range(3000))
    try:
        grammar = compile_grammar(text)
    except GrammarError as error:  # bounded before any run: also a message
        assert error.message
        return
    trace = generate(tiny, grammar, "Say something.", max_tokens=8)
    assert trace.stop_reason == "engine_error" and not trace.matched
    assert any("3000 items" in note for note in trace.notes), trace.notes


def test_the_command_line_and_the_api_pass_the_engines_words_on(tiny, tmp_path) -> None:
    import io

    from fsmviz.cli import grammar_command
    from fsmviz.grammar.answer import grammar_answer

    text = "root ::= " + " | ".join(f'"w{i}x"' for i in range(3000))
    try:
        compile_grammar(text)
    except GrammarError:  # refused up front by fsmviz's bounds: a message, also fine
        return
    file = tmp_path / "many.gbnf"
    file.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    status = grammar_command(str(file), "Say one.", max_tokens=8, model=tiny, out=out, err=err)
    assert status != 0 and "[engine_error; 0 tokens" in err.getvalue()
    assert "3000 items" in err.getvalue() and "Traceback" not in err.getvalue()
    result = grammar_answer(text, "Say one.", 8, model=tiny)
    assert result["stop_reason"] == "engine_error" and not result["matched"]
    assert any("3000 items" in note for note in result["notes"])


SPECIAL_LITERALS = [
    ('root ::= "<|im_end|>"', "<|im_end|>"),
    ('start: "<|im_start|>system"', "<|im_start|>system"),
    ('root ::= "say " "<|endoftext|>" "!"', "say <|endoftext|>!"),
]


@pytest.mark.parametrize(("text", "sentence"), SPECIAL_LITERALS)
@pytest.mark.parametrize("fast_forward", [True, False])
def test_a_literal_spelling_a_special_token_is_written_as_text(
    tiny, text: str, sentence: str, fast_forward: bool
) -> None:
    grammar = compile_grammar(text)
    for max_tokens, temperature in ((64, 0.0), (12, 1.0)):
        trace = generate(
            tiny, grammar, "Go.", fast_forward=fast_forward, max_tokens=max_tokens,
            temperature=temperature,
        )  # fmt: skip
        assert trace.text == sentence and trace.matched, trace.text
        assert trace.stop_reason == "accepted"
        written = [s for s in trace.steps if not s.is_eos]
        assert len(written) > 1  # several ordinary tokens, not one control token
        assert all(tiny.vocab.token_bytes(s.token_id) for s in written)


def test_the_matcher_never_offers_a_control_token_for_literal_text(tiny) -> None:
    """Even with a tokenizer that reads ``<|im_end|>`` as the control token (the plain
    ``encode`` the page's step masks use), llguidance's forced text is spelled with
    ordinary tokens: the tokens it is given must spell the bytes it asked for."""
    tokenizer = tiny.tokenizer

    def raw(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False))

    assert raw("<|im_end|>") == [tiny.vocab.eos_token_id]  # the trap
    matcher = GrammarMatcher(compile_grammar('root ::= "<|im_end|>"'), tiny.vocab, raw)
    written = b""
    while not matcher.is_accepting():
        allowed = matcher.allowed_tokens()
        assert tiny.vocab.eos_token_id not in allowed
        token = int(allowed[0])
        assert matcher.consume(token), matcher.error()
        written += tiny.vocab.token_bytes(token)
    assert written == b"<|im_end|>"


def test_a_regex_fast_forwards_special_token_text_as_text(tiny) -> None:
    trace = generate(tiny, r"<\|im_end\|>[0-9]", "Go.", max_tokens=16)
    assert trace.text.startswith("<|im_end|>") and trace.matched
    assert trace.steps[0].forced and len([s for s in trace.steps if s.forced]) > 1


def test_every_stop_reason_has_words_on_the_pages() -> None:
    from fsmviz.app.grammar_live import WHY, grammar_status
    from fsmviz.html.comparison import STOPPED

    reasons = set(get_args(StopReason))
    assert {"engine_error", "not_accepted"} <= reasons
    assert set(WHY) == reasons and set(STOPPED) == reasons
    from fsmviz.app.live import done_status

    status = grammar_status(Trace("", (), "engine_error", False, notes=("It said no.",)))
    assert "gave up" in status and "It said no." in status
    for reason in reasons:
        assert "stopped because" in done_status(Trace("", (), reason, False))
