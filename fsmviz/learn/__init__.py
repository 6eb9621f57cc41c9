"""Learn: every intermediate object of fsmviz, small enough to read.

The main page shows regex-guided generation on a real model. This package serves the
teaching view beside it, one idea per module, all pure functions over the engine:

* ``construction`` — regex → Glushkov positions → subset DFA → dead states pruned →
  minimal DFA, as a list of frames to step through (``construction_frames``);
* ``walk`` — a string read one character at a time (``walk_string``), the transition table
  (``transition_table``) and regex101-style test strings (``check_tests``), each held
  against Python's ``regex.fullmatch``;
* ``toy`` — the seeds' toy vocabularies stepped token by token (``toy_view``), with
  user-set logits or seed 000's gzip "language model" (``ZipModel``);
* ``typed`` — what a learner types, read and checked (a toy vocabulary as a JSON list,
  logits, tokens as hex bytes) and the toy walk it gives (``toy_state``);
* ``naive`` — the seeds' naive method (one partial match per token) timed against the
  index on the real vocabulary (``naive_vs_index``);
* ``bytes`` — a token that splits a character walking the byte-level DFA (``byte_walk``);
* ``token_table`` — seed 001's transition table: states by token ids, each cell the state
  that token moves to;
* ``grammar`` — from regex to grammar: why balanced brackets need a stack, in numbers and
  pictures (``brackets_regex``).

Nothing here imports gradio, plotly or torch.
"""

from fsmviz.learn.bytes import ByteStep, byte_drawing, byte_walk
from fsmviz.learn.construction import ConstructionFrame, Drawing, construction_frames
from fsmviz.learn.naive import NaiveStep, naive_vs_index
from fsmviz.learn.toy import TOY_EXAMPLES, ToyExample, ToyView, ZipModel, toy_view
from fsmviz.learn.typed import parse_hex_tokens, parse_logits, parse_tokens, toy_state
from fsmviz.learn.walk import (
    TableRow,
    TestResult,
    TransitionTable,
    Walk,
    check_tests,
    transition_table,
    walk_string,
)

__all__ = [
    "TOY_EXAMPLES",
    "ByteStep",
    "Drawing",
    "ConstructionFrame",
    "NaiveStep",
    "TableRow",
    "TestResult",
    "ToyExample",
    "ToyView",
    "TransitionTable",
    "Walk",
    "ZipModel",
    "byte_drawing",
    "byte_walk",
    "check_tests",
    "construction_frames",
    "naive_vs_index",
    "parse_hex_tokens",
    "parse_logits",
    "parse_tokens",
    "toy_state",
    "toy_view",
    "transition_table",
    "walk_string",
]
