"""Each shortcut of the build agrees with the general way it stands in for.

Two steps choose between two ways of computing the same thing, by size alone:

* the subset construction asks every class in turn when there are few classes, and
  otherwise splits the classes by the positions that may come next (``dfa.FEW_CLASSES``);
* the node-set walk tells a depth's equal node sets apart by their bytes when they are
  few, and by a hash checked node by node when they are many (``successors.FEW_GROUPS``).

Forcing each step all one way and then all the other must give the same result, to the
state numbering: a wrong group or a group out of order would change it. A hash that collides must
fall back to the bytes and still give the same result.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fsmviz import dfa, successors
from fsmviz.bytedfa import to_bytes
from fsmviz.dfa import compile_regex, compile_stages
from fsmviz.schema import regex_from_schema
from fsmviz.trie import trie_of

CASES = Path(__file__).parent / "cases"
EXTRA = [
    '"([^"\\\\]|\\\\["\\\\/bfnrt])*"',  # a JSON string: two positions, every class
    "(?i)straße|[a-zé]{2,4}",
    "[一-龥]{1,3}(,[一-龥]+)*",
    "(0|1(01*0)*1)*",
    "(ab|a)(bc|c)",
    "a[^\\s\\S]b|c",  # a position that accepts nothing (pruning has work)
    "((25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1?\\d?\\d)",
]


def patterns() -> list[str]:
    seeds = json.loads((CASES / "seed_regexes.json").read_text())["regexes"]
    return [*seeds.values(), *EXTRA]


def schema_pattern() -> str:
    return regex_from_schema((CASES / "schema_22_fields.json").read_text())


@pytest.mark.parametrize("pattern", [*patterns(), "schema"])
def test_asking_each_class_and_splitting_by_positions_build_the_same_dfa(pattern, monkeypatch):
    pattern = schema_pattern() if pattern == "schema" else pattern
    built = {}
    for few in (0, 10**9):  # always split by positions / always ask each class
        monkeypatch.setattr(dfa, "FEW_CLASSES", few)
        st = compile_stages(pattern)
        built[few] = (st.subsets, st.subset_rows, st.pruned_rows, st.merged_into,
                      st.dfa.transitions, st.dfa.accepting)  # fmt: skip
    assert built[0] == built[10**9]


@pytest.mark.parametrize("pattern", ["schema", EXTRA[0], EXTRA[2]])
def test_node_sets_told_apart_by_bytes_or_by_hash_alike(pattern, bundled_vocab, monkeypatch):
    pattern = schema_pattern() if pattern == "schema" else pattern
    table = to_bytes(compile_regex(pattern)).table
    trie, starts = trie_of(bundled_vocab), list(range(len(table)))

    def walk() -> tuple[list[int], list[int]]:
        origin, target = successors.successor_pairs(trie, table, starts)
        return origin.tolist(), target.tolist()

    monkeypatch.setattr(successors, "FEW_GROUPS", 10**9)  # always bytes
    by_bytes = walk()
    monkeypatch.setattr(successors, "FEW_GROUPS", 0)  # always the hash
    assert walk() == by_bytes
    # A hash that tells only sizes apart: groups of one size all collide, and the check
    # node by node must catch it and fall back to the bytes.
    monkeypatch.setattr(successors, "_MIX", np.uint64(0))
    assert walk() == by_bytes
    assert len(by_bytes[0]) > len(starts)  # every start has successors, some several
