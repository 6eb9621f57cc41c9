"""A row walked over the class trie (``fsmviz.tokens.fast.classwalk``: tokens spelled by
their bytes' classes, one pass a level) is the row of the plain pair walk, token for token
and target for target, for every state: wide ones (strings, names, ``.*``) and the narrow
ones the index walks otherwise, whole levels and sparse ones, short rows and long."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index
from fsmviz.tokens.fast.classwalk import ClassTable, ClassTrie, class_row
from tests.test_index_rows import plain_row

PATTERNS = (
    r'[a-z_]{1,12}="[^"\n]{0,20}"(, [a-z_]{1,12}="[^"\n]{0,20}"){0,2}',  # 17 classes
    r".*(error|warning): [A-Za-z ]+",  # every state reads every byte
    r"([^,\n]{1,20},){3}[^,\n]{1,20}",
    r'\{"name": "[^"\\]*", "age": (0|[1-9][0-9]*)\}',  # keys tell letters apart
    "(東京|大阪)[0-9]{2}",  # states inside a character
    # past MERGED_CLASSES byte classes: the byte trie read by class, unmerged
    r'\{"abcdefgh": "[^"\\]*", "ijklmnop": [0-9]+, "qrstuvwx": "[^"\\]*", "yzABCDEF": [0-9]+\}',
)
STATES_CHECKED = 40


def _class_walk(index):
    columns = index.byte_dfa.columns
    classes = ClassTrie.of(index.trie, columns.byte_class, len(index.vocab))
    return classes, ClassTable.of(index.byte_dfa.table, columns)


def assert_class_rows_plain(index, classes, table, states: int = STATES_CHECKED) -> int:
    """Each of the first ``states`` states' class row is its plain row: int32 tokens and
    targets, and a long row's packed words hold the same tokens. Returns how many short
    rows (spelt from their nodes' tokens, no words) held more than one token."""
    short = 0
    for state in range(min(index.byte_dfa.num_states, states)):
        tokens, targets, words = class_row(classes, table, state)
        expected_tokens, expected_targets = plain_row(index, state)
        assert tokens.dtype == np.int32 and targets.dtype == np.int32
        assert np.array_equal(tokens, expected_tokens), state
        assert np.array_equal(targets, expected_targets), state
        if words is None:
            short += len(tokens) > 1
        else:  # a long row comes packed as well
            bits = np.unpackbits(words.view(np.uint8), bitorder="little")
            assert np.array_equal(np.flatnonzero(bits), tokens), state
    return short


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS)
def test_class_rows_match_the_plain_walk(bundled_vocab, pattern):
    index = build_index(pattern, bundled_vocab)
    classes, table = _class_walk(index)
    assert classes.size <= len(index.trie.byte)  # tokens alike share nodes (if merged)
    assert_class_rows_plain(index, classes, table)


@pytest.mark.slow
def test_the_first_bitmask_of_every_state_is_its_allowed_set(bundled_vocab):
    """Asked first (nothing walked before), ``bitmask`` holds exactly ``allowed_tokens``."""
    pattern = r'[a-z_]{1,12}="[^"\n]{0,20}"(; [a-z_]{1,12}="[^"\n]{0,20}"){0,1}'
    index = build_index(pattern, bundled_vocab)
    fresh = build_index(pattern + "()", bundled_vocab)
    for state in range(index.byte_dfa.num_states):
        bits = np.unpackbits(fresh.bitmask(state).view(np.uint8), bitorder="little")
        assert np.array_equal(np.flatnonzero(bits), index.allowed_tokens(state)), state


def test_tokens_alike_share_a_class_node():
    vocab = Vocabulary.from_strings(["1", "2", "12", "a1", "b2", "x"], eos_token="</s>")
    index = build_index("[0-9]+", vocab)
    classes, table = _class_walk(index)
    # root; (digit), (other); (digit, digit), (other, digit)
    assert classes.size == 5
    assert classes.token_node[0] == classes.token_node[1]  # "1" and "2"
    assert classes.token_node[3] == classes.token_node[4]  # "a1" and "b2"
    tokens, targets, _ = class_row(classes, table, 0)
    assert tokens.tolist() == [0, 1, 2] and targets.tolist() == [1, 1, 1]


@pytest.mark.slow
def test_the_byte_level_class_trie_reads_rows_as_the_merged_one(bundled_vocab):
    """Past ``MERGED_CLASSES`` classes an index reads its rows off the vocabulary's byte-level
    class trie (``byte_classes``, built once per trie) with a table over all 256 bytes: the
    same rows as the plain walk, and as the per-pattern class trie, for every state."""
    from fsmviz.tokens.fast.classwalk import MERGED_CLASSES, byte_classes

    index = build_index(PATTERNS[-1], bundled_vocab)
    assert len(index.byte_dfa.columns.smallest) > MERGED_CLASSES
    shared = byte_classes(index.trie, len(bundled_vocab))
    assert shared is byte_classes(index.trie, len(bundled_vocab))  # built once
    assert_class_rows_plain(index, shared, ClassTable.of(index.byte_dfa.table, None))
    index.row(0)  # the index's walker reads the shared trie
    assert index._walker.classes()[0] is shared


def _plain_class_trie(trie, byte_class, num_ids):
    """The class trie by its definition, level by level with ``np.unique``: a node of level
    ``k + 1`` is a distinct (class node of its parent, class of its byte); nodes of a level
    in that order. Returns the level starts, each level's (parents, classes, child starts),
    each byte node's class node and each token's (the node count where not in the trie)."""
    parent = np.zeros(len(trie.byte), dtype=np.intp)
    parent[1:] = np.repeat(np.arange(len(trie.byte)), trie.num_children)
    position = np.zeros(len(trie.byte), dtype=np.intp)
    width, starts, levels = len(byte_class), [0, 1], []
    for depth in range(1, int(trie.depth.max()) + 1):
        nodes = np.flatnonzero(trie.depth == depth)
        keys = position[parent[nodes]] * width + byte_class[trie.byte[nodes]]
        unique, position[nodes] = np.unique(keys, return_inverse=True)
        above = np.arange(starts[-1] - starts[-2] + 1)
        levels.append((unique // width, unique % width, np.searchsorted(unique // width, above)))
        starts.append(starts[-1] + len(unique))
    node_class = position + np.array(starts)[trie.depth]
    token_node = np.full(num_ids, starts[-1], dtype=np.intp)
    token_node[trie.token_ids] = np.repeat(node_class, np.diff(trie.token_start))
    return starts, levels, node_class, token_node


def _assert_built_as_defined(trie, byte_class, num_ids):
    from fsmviz.tokens.fast.classwalk import _merged, _tail_of

    classes, node_class = _merged(trie, byte_class, num_ids)
    starts, levels, plain_nodes, plain_tokens = _plain_class_trie(trie, byte_class, num_ids)
    assert classes.level_starts.tolist() == starts
    assert len(classes.levels) == len(levels)
    for built, plain in zip(classes.levels, levels, strict=True):
        assert all(np.array_equal(a, b) for a, b in zip(built, plain, strict=True))
    assert np.array_equal(node_class, plain_nodes)
    assert np.array_equal(classes.token_node, plain_tokens)
    counts = np.bincount(plain_tokens, minlength=starts[-1] + 1)
    assert np.array_equal(classes.node_start, np.concatenate([[0], np.cumsum(counts)]))
    assert (classes.deep, classes.tail_parent, classes.tail_kind) == _tail_of(levels)
    assert np.array_equal(classes.node_tokens, np.argsort(plain_tokens, kind="stable"))


def test_a_small_class_trie_is_built_as_defined():
    """Every level of a small vocabulary is narrow: built in Python (``_merged_tail``), past
    the first; token 6 ("</s>") and ids past the vocabulary's are in no node."""
    vocab = Vocabulary.from_strings(
        ["1", "2", "12", "a1", "b2", "x", "123", "a12", "ab1", "9x9"], eos_token="</s>"
    )
    index = build_index("[0-9]+x?", vocab)
    byte_class = index.byte_dfa.columns.byte_class
    _assert_built_as_defined(index.trie, byte_class, len(vocab))
    _assert_built_as_defined(index.trie, byte_class, len(vocab) + 3)
    _assert_built_as_defined(index.trie, np.arange(256) % 3, len(vocab))


@pytest.mark.slow
def test_class_tries_are_built_as_defined(bundled_vocab):
    """The bundled vocabulary's class trie, wide levels in numpy and the narrow deepest ones
    in Python, equals the definition for the byte classes of the mask benchmark's patterns
    and a sample of the held-out pool's (``bench.heldout``), and a few of no pattern."""
    from bench.heldout import corpus_patterns
    from bench.mask_patterns import PATTERNS as MASKED
    from fsmviz.automaton.bytedfa import ByteColumns, to_bytes
    from fsmviz.automaton.dfa import compile_regex
    from fsmviz.tokens.trie import trie_of

    pool = corpus_patterns()
    patterns = [pattern for pattern, _ in MASKED.values()] + pool[:: max(1, len(pool) // 40)]
    tried = set()
    rng = np.random.default_rng(7)
    extra = [rng.integers(0, width, 256) for width in (2, 9, 31)]
    for pattern in patterns:
        try:
            byte_class = ByteColumns.of(to_bytes(compile_regex(pattern)).table).byte_class
        except Exception:  # noqa: BLE001  (a pool pattern this engine does not compile)
            continue
        if len(np.unique(byte_class)) <= 32 and byte_class.tobytes() not in tried:
            tried.add(byte_class.tobytes())
            extra.append(byte_class)
    assert len(extra) > 20
    for byte_class in extra:
        _assert_built_as_defined(trie_of(bundled_vocab), np.asarray(byte_class), len(bundled_vocab))


def _plain_states(classes, table, state):
    """Every class node's state by the definition: each level's from its parents' states
    and its classes, every node computed (the sink's row leads back to the sink)."""
    rows = table.flat.reshape(-1, table.width) // table.width  # by state, then class
    states = [np.array([state])]
    for parents, kinds, _ in classes.levels:
        states.append(rows[states[-1][parents], kinds])
    return np.concatenate(states)


FEW_LIVE_PATTERNS = (
    r"(?:[^a-df-zA-DF-Z\s]+(?:[umUM][sS]|[dhmsDHMS])\s?)+",  # ~30 of 3,000 nodes live
    r"[^@]+@[^@]+",
    PATTERNS[0],
    PATTERNS[-1],  # the byte-level class trie
)


@pytest.mark.slow
def test_class_states_of_few_live_nodes_are_the_plain_ones(bundled_vocab, monkeypatch):
    """``class_states`` walks a level of few live nodes in Python (``_python_level``) and the
    tail below few of them too (``_tail_walk`` answering None), else whole levels and the
    tail in numpy and ``_tail``: every node's state as the definition has it, for every
    state, and both routes taken."""
    from fsmviz.tokens.fast import classwalk

    routes = {"python": 0, "python tail": 0}

    def counted(name, real):
        def call(*args):
            found = real(*args)
            routes[name] += found is None if name == "python tail" else 1
            return found

        return call

    for name, real in (("python", "_python_level"), ("python tail", "_tail_walk")):
        monkeypatch.setattr(classwalk, real, counted(name, getattr(classwalk, real)))
    for pattern in FEW_LIVE_PATTERNS:
        index = build_index(pattern, bundled_vocab)
        classes, table = index._walker.classes()
        for state in range(min(index.byte_dfa.num_states, STATES_CHECKED)):
            found = classwalk.class_states(classes, table, state)
            assert np.array_equal(found, _plain_states(classes, table, state)), (pattern, state)
    assert routes["python"] and routes["python tail"], routes


@pytest.mark.slow
def test_levels_are_listed_as_the_walk_reaches_them(bundled_vocab):
    """``ClassTrie.lists`` lists a level when a walk of few live nodes first reaches it
    (a URL's walk needs 8 of its 16 levels walked in numpy), and each listed level, and
    the tail, names every node's children and their classes as the levels' arrays do."""
    from fsmviz.tokens.fast import classwalk

    index = build_index(r"https?://.+\.ya?ml", bundled_vocab)
    classes, table = index._walker.classes()
    classes.__dict__.pop("lists", None)  # kept with the class trie: list afresh
    for state in range(min(index.byte_dfa.num_states, STATES_CHECKED)):
        classwalk.class_states(classes, table, state)
    lists = classes.lists
    listed = {depth for depth in range(classes.deep) if lists.made[depth]}
    assert listed and len(listed) < classes.deep, listed
    for depth in range(classes.deep):
        if not lists.made[depth]:
            lists.fill(depth)
    lists.fill_tail()
    starts = classes.level_starts.tolist()
    for depth, (parents, kinds, _) in enumerate(classes.levels):
        for at in range(starts[depth + 1] - starts[depth]):
            node = starts[depth] + at
            children = list(range(lists.first[node], lists.first[node + 1]))
            want = np.flatnonzero(parents == at)
            assert children == (want + starts[depth + 1]).tolist(), (depth, node)
            assert [lists.kind[child] for child in children] == kinds[want].tolist()


def test_levels_and_class_tries_read_one_trie_layout(bundled_vocab):
    """``classwalk.trie_layout``: the level walk's ``TrieLevels`` and the class tries'
    ``_Shape`` hold the same arrays, each as defined: a node's parent is the node whose
    children run holds it, a level begins at its first node that deep, and a token ends at
    the node that holds it."""
    from fsmviz.tokens.fast import classwalk
    from fsmviz.tokens.fast.levelwalk import levels_of
    from fsmviz.tokens.trie import trie_of

    trie = trie_of(bundled_vocab)
    levels, shape = levels_of(trie), classwalk._shape_of(trie)
    for name in ("parent", "bounds", "node_of"):
        assert getattr(levels, name) is getattr(shape, name), name
    nodes = len(trie.byte)
    for node in range(nodes):
        first, count = int(trie.first_child[node]), int(trie.num_children[node])
        assert (levels.parent[first : first + count] == node).all()
    depths = trie.depth.tolist()
    for depth, first in enumerate(levels.bounds.tolist()):
        assert first == nodes or depths[first] == depth
        assert first == 0 or depths[first - 1] == depth - 1
    assert len(levels.node_of) == int(trie.token_ids.max()) + 1
    ends = np.full(len(levels.node_of), nodes)
    for node in range(nodes):
        for at in range(int(trie.token_start[node]), int(trie.token_start[node + 1])):
            ends[trie.token_ids[at]] = node
    assert (levels.node_of == ends).all()
