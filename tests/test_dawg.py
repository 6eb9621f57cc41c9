"""The vocabulary's DAWG reads exactly its tokens: every token's bytes lead from the root to
a final node, and the DAWG reads nothing else (counting its paths gives the number of
distinct token byte strings)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from fsmviz.automaton.bytedfa import to_bytes
from fsmviz.automaton.dfa import compile_regex
from fsmviz.tokens.fast.dawg import dawg_of, dawg_successor_pairs
from fsmviz.tokens.trie import trie_of


def test_the_dawg_reads_exactly_the_tokens(bundled_vocab):
    dawg = dawg_of(bundled_vocab)
    assert dawg.num_nodes < len(trie_of(bundled_vocab).byte) / 2  # merging pays
    edges = {
        d: {
            int(dawg.edge_byte[e]): int(dawg.edge_target[e])
            for e in range(dawg.first_edge[d], dawg.first_edge[d] + dawg.num_edges[d])
        }
        for d in range(dawg.num_nodes)
    }
    eos = bundled_vocab.eos_token_id
    tokens = {data for i, data in enumerate(bundled_vocab.all_token_bytes) if data and i != eos}
    for data in tokens:
        node = dawg.root
        for byte in data:
            node = edges[node][byte]
        assert dawg.final[node], data

    @cache
    def strings(node: int) -> int:  # strings read from ``node`` to a final node
        return int(dawg.final[node]) + sum(strings(child) for child in edges[node].values())

    assert strings(dawg.root) == len(tokens)


def test_walks_on_kept_work_arrays_answer_as_on_fresh_ones(bundled_vocab):
    """The walk's work arrays are kept between walks (``dawg._Scratch``): each walk must
    clear what it set, whatever came before, including a walk stopped half way."""
    dawg = dawg_of(bundled_vocab)
    walks = {
        pattern: to_bytes(compile_regex(pattern)).table
        for pattern in (r'"[^"]+", "[^"]+"', r"[a-z0-9]+(-[a-z0-9]+)*@[a-z]+\.com", r"[0-9]{1,4}")
    }

    def walk(table: np.ndarray) -> list[tuple[int, int]]:
        origin, target = dawg_successor_pairs(dawg, table, list(range(min(len(table), 64))))
        return list(zip(origin.tolist(), target.tolist(), strict=True))

    fresh = {}
    for pattern, table in walks.items():
        dawg.scratch._kept = None  # a fresh pair of arrays
        fresh[pattern] = walk(table)
    rounds = []

    def stop_in_the_third_round() -> None:
        rounds.append(1)
        if len(rounds) == 3:
            raise TimeoutError

    first = next(iter(walks.values()))
    with pytest.raises(TimeoutError):
        dawg_successor_pairs(dawg, first, list(range(len(first))), check=stop_in_the_third_round)
    for _ in range(2):  # every walk after every other, on the arrays they hand back
        for pattern, table in walks.items():
            assert walk(table) == fresh[pattern], pattern
    assert dawg.scratch._kept is not None  # the arrays were kept, so the test tested them


@pytest.mark.parametrize(
    "pattern",
    [
        r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+[a-zA-Z0-9]",  # ends in the tail
        r'\{"name": "[^"]{0,20}", "age": [0-9]{1,3}\}',
        r"(-{3,}|={2,}) ?[a-z ]{0,12}",  # long runs of dashes: the longest tokens
        r".*\.[jJ][sS][oO][nN]",  # a run of dots loops in the state after a dot
        r"\s*\d+\s*",
        r"[^:]+:[^:]+:[^:]+",  # each state's own leaving bytes, read when the tail meets it
        r"[^:]+://[^:/]+(:[0-9]+)?(/[^?#/]+)*(\?[^=#&]+=[^=#&]+)?",  # the first 64 of 117 states
    ],
)
def test_the_walk_answers_the_same_in_numpy_rounds_and_in_the_python_tail(
    bundled_vocab, pattern, monkeypatch
):
    """The walk goes on in Python (``_walk_tail``) once few tokens are left below its
    pairs; the rounds and the tail follow the same rules, so where the switch falls does
    not change the answer: all rounds, the default, or the tail right past the widest
    depth. (Checked: a tail that records no token's end fails here, and one that ends a
    run of looping bytes in the state before it.)"""
    import fsmviz.tokens.fast.dawg as dawg_module

    dawg = dawg_of(bundled_vocab)
    table = to_bytes(compile_regex(pattern)).table
    starts = list(range(min(len(table), 64)))
    answers = []
    for tail in (0, dawg_module.TAIL, 10**9):
        monkeypatch.setattr(dawg_module, "TAIL", tail)
        origin, target = dawg_successor_pairs(dawg, table, starts)
        answers.append(sorted(zip(origin.tolist(), target.tolist(), strict=True)))
    assert answers[0] == answers[1] == answers[2]
    assert len(answers[0]) > len(starts)  # the pattern's states do lead on


@pytest.mark.parametrize(
    "pattern",
    [".*a", ".*(error|warning): [A-Za-z ]+", ".*[0-9]{3}", "(?s).*ab", "[^\\n]*é", "[a-z]{0,3}"],
)
def test_a_start_that_reached_every_state_it_can_stops_walking(bundled_vocab, pattern, monkeypatch):
    """A start whose tokens have reached every state bytes can lead it to is walked no
    further (``dawg.byte_reach``): the answer is the full walk's, in fewer rounds where
    every start gets there (``.*a``: three bytes, not the vocabulary's longest token)."""
    import fsmviz.tokens.fast.dawg as dawg_module

    dawg = dawg_of(bundled_vocab)
    table = to_bytes(compile_regex(pattern)).table
    starts = list(range(min(len(table), 64)))
    answers, rounds = [], []
    monkeypatch.setattr(dawg_module, "IDLE_STATES", 0)  # the bound alone (``_Idle`` would end it)
    for cells in (0, dawg_module.MAX_BOUND_CELLS):
        monkeypatch.setattr(dawg_module, "MAX_BOUND_CELLS", cells)
        rounds.append(0)

        def count() -> None:
            rounds[-1] += 1

        origin, target = dawg_successor_pairs(dawg, table, starts, check=count)
        answers.append(sorted(zip(origin.tolist(), target.tolist(), strict=True)))
    assert answers[0] == answers[1], pattern
    if pattern == ".*a":
        assert rounds[1] < rounds[0] / 2, rounds


@pytest.mark.parametrize(
    "pattern",
    [
        r"[a-z0-9]+(-[a-z0-9]+)*",  # ends in one round: no token spells "a-" from the start
        r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+[a-zA-Z0-9]",
        r"\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?",
        r"([a-z]+ )*[a-z]+-[0-9]",
        r".*(error|warning): [A-Za-z ]+",  # stops testing once a round finds none
    ],
)
def test_a_pair_that_stays_stops_once_its_starts_reached_its_state(bundled_vocab, pattern):
    """A pair whose bytes below all loop back or kill the path ends every living token
    below in its state; once its starts reached that state, it is walked no further
    (``_PairWalk._settle``). The answer is the trie walk's, token by token; the slug's walk
    ends in its first round. (Checked: never dropping them fails here; dropping them
    without the reached test fails the next test.)"""
    from fsmviz.tokens.fast.successors import distinct_pairs
    from fsmviz.tokens.index import _walk

    dawg = dawg_of(bundled_vocab)
    table = to_bytes(compile_regex(pattern)).table
    starts = list(range(min(len(table), 64)))
    rounds = []
    origin, target = dawg_successor_pairs(dawg, table, starts, check=lambda: rounds.append(1))
    (walked, _, ends), _ = _walk(trie_of(bundled_vocab), table, starts)
    expected = distinct_pairs(walked, ends, len(table))
    assert [origin.tolist(), target.tolist()] == [a.tolist() for a in expected]
    if pattern == r"[a-z0-9]+(-[a-z0-9]+)*":
        assert len(rounds) == 1, rounds


def test_a_pair_that_stays_walks_on_while_its_starts_lack_its_state():
    """``bc`` is no token, and below it ``!`` kills the path in ``[c-z]+`` while ``d``
    loops: the pair (bc, in the loop) stays, but its start has not reached the loop yet,
    so it walks on and finds ``bcd``. (Checked: dropping it without the test fails.)"""
    from fsmviz import Vocabulary

    vocab = Vocabulary.from_strings(["a", "b", "bcd", "bc!"], eos_token="</s>")
    table = to_bytes(compile_regex("b[c-z]+")).table
    origin, target = dawg_successor_pairs(dawg_of(vocab), table, [0])
    assert sorted(zip(origin.tolist(), target.tolist(), strict=True)) == [(0, 1), (0, 2)]


_STRING = r'(?:[^"\\\x00-\x1F\x7F-\x9F]|\\["\\/bfnrt])*'  # a JSON string's character, any number


@pytest.mark.parametrize(
    "pattern",
    [
        _STRING + r"(?:[0-9a-fA-F][02468aceACE](:[0-9a-fA-F]{2}){5})" + _STRING,  # a MAC address
        _STRING + r"(?:[0-9]{2}:[0-9]{2})" + _STRING,
        _STRING + r"(?:[nN][oO][nN][eE])" + _STRING,
        _STRING + r"(?:v[0-9]+\.[0-9]+)" + _STRING,
        r".*\.[jJ][sS][oO][nN]",
        r"[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\.[a-zA-Z0-9-.]+[a-zA-Z0-9]",
        r"[^:]+:[^:]+:[^:]+",
        r"\s*\d+\s*",
    ],
)
def test_idle_pairs_dropped_from_the_first_round_leave_the_answer_unchanged(
    bundled_vocab, pattern, monkeypatch
):
    """A pair whose bytes below lead its state only into states its starts reached is
    walked no further (``dawg._Idle``). Tested from the first round on, as by default,
    the walk answers as the trie walk does, token by token; and the MAC address searched
    in a JSON string ends in its third round by default, where it took 12. (Checked: the
    groups' bits left out of a pair's key fail here (7), and so do the rest's bytes left
    out of the closures (4).)"""
    import fsmviz.tokens.fast.dawg as dawg_module
    from fsmviz.tokens.fast.successors import distinct_pairs
    from fsmviz.tokens.index import _walk

    dawg = dawg_of(bundled_vocab)
    table = to_bytes(compile_regex(pattern)).table
    starts = list(range(len(table)))
    assert len(table) <= dawg_module.IDLE_STATES  # the test is made
    (walked, _, ends), _ = _walk(trie_of(bundled_vocab), table, starts)
    expected = [a.tolist() for a in distinct_pairs(walked, ends, len(table))]
    rounds = []
    origin, target = dawg_successor_pairs(dawg, table, starts, check=lambda: rounds.append(1))
    assert [origin.tolist(), target.tolist()] == expected
    if "02468" in pattern:
        assert len(rounds) == 3, rounds
    for name, value in (("IDLE_ROUND", 1), ("IDLE_TOKENS", 0)):
        monkeypatch.setattr(dawg_module, name, value)
    origin, target = dawg_successor_pairs(dawg, table, starts)
    assert [origin.tolist(), target.tolist()] == expected


def test_a_pair_with_a_rare_byte_below_walks_on_to_the_state_it_leads_to(monkeypatch):
    """After the first round the start reached only its loop; below ``a`` lies ``:b``,
    and the colon leads out of it: the pair walks on and finds ``a:b``. Below ``b`` lies
    nothing: that pair is idle. (Checked: with the group bits left out of the pairs'
    keys, ``a:b`` is lost.)"""
    import fsmviz.tokens.fast.dawg as dawg_module
    from fsmviz import Vocabulary

    for name, value in (("IDLE_ROUND", 1), ("IDLE_TOKENS", 0)):
        monkeypatch.setattr(dawg_module, name, value)
    vocab = Vocabulary.from_strings(["a", "b", "a:b"], eos_token="</s>")
    table = to_bytes(compile_regex("[ab]*:b")).table
    origin, target = dawg_successor_pairs(dawg_of(vocab), table, [0])
    assert sorted(zip(origin.tolist(), target.tolist(), strict=True)) == [(0, 0), (0, 2)]
