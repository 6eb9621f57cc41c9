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

from fsmviz import Vocabulary
from fsmviz.automaton import dfa
from fsmviz.automaton.bytedfa import to_bytes
from fsmviz.automaton.dfa import compile_regex, compile_stages
from fsmviz.schema.convert import regex_from_schema
from fsmviz.tokens.fast import successors
from fsmviz.tokens.trie import trie_of

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
        built[few] = (st.subsets, st.subset_moves, st.pruned_moves, st.merged_into,
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


WHOLE = {  # pattern -> whether some subtree is taken whole
    "schema": True,
    "[a-z]{2}[a-m]{2}!": False,  # the chain splits the letters at the third: walked as before
    r"([A-Za-z]{1,12} ){2,10}[A-Za-z]{1,12}\.": True,  # a chain that ends, then another
    "[a-z]+[0-9]{0,3}": True,  # a chain that loops
    '"[^"\\\\]{0,6}"': True,  # a JSON string at its longest reads only the quote
}


@pytest.mark.parametrize("pattern", WHOLE)
def test_subtrees_taken_whole_reach_what_walking_them_reaches(pattern, bundled_vocab, monkeypatch):
    """The node-set walk takes a subtree whole where its bytes all follow one chain
    (``successors._WholeSubtrees``); walking every node instead must find the same
    pairs, and taking subtrees at every depth (not only large ones) as well."""
    takes = WHOLE[pattern]
    pattern = schema_pattern() if pattern == "schema" else pattern
    table = to_bytes(compile_regex(pattern)).table
    trie, starts = trie_of(bundled_vocab), list(range(len(table)))
    taken = []
    take = successors._WholeSubtrees.take

    def counted(self, node, *args):
        left = take(self, node, *args)
        taken.append(len(node) - len(left[0]))
        return left

    monkeypatch.setattr(successors._WholeSubtrees, "take", counted)
    monkeypatch.setattr(successors, "TAIL_PAIRS", -1)  # node sets to the end, no pair tail
    found = {}
    for above in (10**9, 0):  # never, always
        monkeypatch.setattr(successors, "WHOLE_ABOVE", above)
        origin, target = successors.successor_pairs(trie, table, starts)
        found[above] = (origin.tolist(), target.tolist())
    assert found[0] == found[10**9]
    assert found[0][0]
    assert (sum(taken) > 0) == takes


def test_a_chain_that_splits_its_letters_is_walked_as_before(monkeypatch):
    """A toy vocabulary where the only way to a state is a token whose letters a chain
    would carry past a state that splits them: after ``q`` the chain along the letters
    reaches the third position, which reads only ``a-m``: ``qqa`` goes on, ``qqz`` dies.
    Taking ``q``'s subtree whole would lose ``qqa``; the walk must see the split."""
    vocab = Vocabulary.from_strings(["q", "qq", "qqa", "qqz"], eos_token="</s>")
    table = to_bytes(compile_regex("[a-z]{2}[a-m]")).table
    monkeypatch.setattr(successors, "WHOLE_ABOVE", 0)  # even a one-node depth
    origin, target = successors.successor_pairs(trie_of(vocab), table, [0])
    assert sorted(zip(origin.tolist(), target.tolist(), strict=True)) == [(0, 1), (0, 2), (0, 3)]
