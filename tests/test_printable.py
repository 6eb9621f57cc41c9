"""The one escaper: every place that shows a character agrees on how (fsmviz.printable)."""

from __future__ import annotations

from fsmviz.automaton.dfa import compile_regex, show_char
from fsmviz.diagnose.text import frag, show
from fsmviz.drawing.render import label_text
from fsmviz.html.text import shown

NASTY = "a\x04\u202e\U000f0000\n"


def test_every_view_escapes_the_same_code_points_the_same_way():
    escaped = "\\x04\\u202e\\U000f0000"  # an astral escape is never \\u plus a fifth digit
    assert label_text(NASTY) == f"a{escaped}\\n"
    assert shown(NASTY) == f"a{escaped}↵"
    assert show(NASTY) == f"a{escaped}\\n"
    assert frag(NASTY) == f"a{escaped}\\n"
    assert "".join(show_char(c) for c in NASTY) == f"a{escaped}\\n"


def test_each_view_names_its_own_characters():
    assert show_char(" ") == "␣" and shown(" ") == "␣"
    assert label_text(" ") == " " and show(" ") == " "
    assert show("a\\b") == "a\\\\b" and frag("a\\b") == "a\\b"  # messages double it
    assert compile_regex("[\\x04 ]").edges()[0].label == "\\x04 ␣"


def test_a_messages_lone_byte_is_one_escape_like_every_other_view(bundled_vocab):
    # A token ending inside a character (byte C3 of "é") reads "\xc3" from token_text
    # (backslashreplace); messages showed "\\xc3", a real backslash by their own rule.
    vocab = bundled_vocab
    half = next(i for i, b in enumerate(vocab.all_token_bytes) if b == b"\xc3")
    text = vocab.token_text(half)
    assert show(text) == "\\xc3" == shown(text)
    assert show("\\" + text) == "\\\\\\xc3"  # a real backslash before it is still doubled
