"""The level walk (``fsmviz.tokens.fast.levelwalk``) of ``first_allowed_tokens``: every
trie node's state computed from its parent's, none tested, rows read as the walk meets
their states. Held to the whole index with each of its ways forced (every level whole,
every level sparse, the Python tail from the root or never), on the bundled vocabulary,
and from the root on a toy one (a few ms each)."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import Vocabulary, build_index, first_allowed_tokens
from fsmviz.tokens import index as index_module
from fsmviz.tokens.fast import derivatives, levelwalk
from fsmviz.tokens.fast.derivatives import _spelt_loop as spelt_loop  # before the fixture
from fsmviz.tokens.fast.levelwalk import (
    byte_partition,
    levels_of,
    walk_bytes,
    walk_classes,
)
from fsmviz.tokens.fast.regex_terms import loop_led
from fsmviz.tokens.trie import trie_of

PATTERNS = [
    r"[^\n]{1,20}",  # counts of characters, partial states inside them
    r"([^,\n]{1,20},){3}[^,\n]{1,20}",
    r".*(error|warning): [A-Za-z ]+",
    r"[a-z]+ [0-9]{2}\n",  # tokens die within a few bytes: sparse levels
    r"[\u4e00-\u9fff]{1,5}",
    r'\{"name": "[^"]{0,12}", "age": [0-9]{1,3}\}',
]


@pytest.fixture(autouse=True)
def walk_as_written(monkeypatch):
    """The walk of each pattern as it is written: not of the loop it begins with, which
    ``loop_led`` and ``loop_tokens`` answer without a walk (``.*a``, ``[^\\n]+x``,
    ``[A-Za-z_][A-Za-z0-9_]*``), nor in Python where the start reads a few bytes
    (``_NearStart._small_row``)."""
    monkeypatch.setattr(derivatives, "loop_led", lambda _, regex: regex)
    monkeypatch.setattr(derivatives, "_spelt_loop", lambda *_: None)
    monkeypatch.setattr(derivatives._NearStart, "_small_row", lambda *_: None)


def forget_walks() -> None:
    """Drop the kept token indexes, else the first set is read from one (``clear_caches()``
    also dropped the vocabulary's trie and its levels, 1 CPU-s per test to build again,
    which these tests do not need cold)."""
    index_module._INDEXES.clear()  # looks inside on purpose


WAYS = {  # each of the walk's choices forced, or left to its bounds
    "as is": {},
    "every level whole": {"SPARSE_LEVEL": 10**9},
    "every level sparse": {"SPARSE_LEVEL": 0},
    "no Python tail": {"DEEP_NODES": -1, "TAIL_TOKENS": -1},
    "Python tail early": {"DEEP_NODES": 40_000, "TAIL_TOKENS": 4_000},
}


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_level_walk_gives_the_index_s_first_set(pattern, way, bundled_vocab, monkeypatch):
    """Whichever way each level is walked (whole, sparse, the tokens in Python), rows read
    only as a node reaches them (``UNREAD_ROW``), the first set is the index's."""
    for name, value in WAYS[way].items():
        monkeypatch.setattr(levelwalk, name, value)
    monkeypatch.setattr(levelwalk, "_LEVELS", levelwalk.OwnedCache(maxsize=4))  # ``deep``
    monkeypatch.setattr(derivatives, "walk_root", lambda *_: None)  # the bytes, always
    forget_walks()
    ours = first_allowed_tokens(pattern, bundled_vocab)
    index = build_index(pattern, bundled_vocab)
    np.testing.assert_array_equal(ours, index.allowed_tokens(index.initial_state))


@pytest.mark.parametrize("way", ["as is", "every level whole", "Python tail early"])
@pytest.mark.parametrize("pattern", PATTERNS[:3])
def test_the_live_flags_are_the_nodes_reached(pattern, way, bundled_vocab, monkeypatch):
    """``_Walk.alive``, flagged as whole levels count their live nodes, is every node's
    ``reached >= 0`` by the time the tokens are read off."""
    for name, value in WAYS[way].items():
        monkeypatch.setattr(levelwalk, name, value)
    monkeypatch.setattr(derivatives, "walk_root", lambda *_: None)
    checked: list[int] = []
    real = levelwalk._Walk.tokens

    def checking(walk, walked):
        if walk.reached is not None:
            np.testing.assert_array_equal(walk.alive, walk.reached >= 0)
            checked.append(int(walk.alive.sum()))
        return real(walk, walked)

    monkeypatch.setattr(levelwalk._Walk, "tokens", checking)
    forget_walks()
    first_allowed_tokens(pattern, bundled_vocab)
    assert checked and checked[-1] > 0


def test_counted_copies_made_ahead_are_read_with_the_row_asked_for(bundled_vocab, monkeypatch):
    """Under ``words`` each level meets a new count of ``[A-Za-z]{1,12}``: its copies are
    written together (``derivatives._Rows.ahead``) and read as they are made
    (``made_ahead``), so the levels below find their rows read and count their states
    (``_Walk.read_ahead``) twice, not once a level (9 times); the first set is the
    index's."""
    pattern = r"([A-Za-z]{1,12} ){2,10}[A-Za-z]{1,12}\."
    monkeypatch.setattr(derivatives, "walk_root", lambda *_: None)
    counts: list[int] = []
    real = levelwalk._Walk.read_ahead
    monkeypatch.setattr(
        levelwalk._Walk, "read_ahead", lambda walk, *a: counts.append(1) or real(walk, *a)
    )
    forget_walks()
    ours = first_allowed_tokens(pattern, bundled_vocab)
    index = build_index(pattern, bundled_vocab)
    np.testing.assert_array_equal(ours, index.allowed_tokens(index.initial_state))
    assert 0 < len(counts) <= 3, counts


def test_rows_are_read_once_and_only_where_a_node_reaches_them(bundled_vocab, monkeypatch):
    """Each state's row is read once, and under ``[a-z]+ [0-9]{2}\\n`` the walk (whose
    tokens die within a few bytes) reads no row beyond the states tokens reach."""
    read: list[int] = []
    real = levelwalk._Rows.read_rows
    monkeypatch.setattr(
        levelwalk._Rows,
        "read_rows",
        lambda rows, todo: read.extend(todo.tolist()) or real(rows, todo),
    )
    trie = trie_of(bundled_vocab)
    for pattern in PATTERNS:
        read.clear()
        try:
            regexes, start = derivatives._Regexes.of(pattern, trie.single_byte_tokens)
        except derivatives.Unsure:
            continue
        near = derivatives._NearStart(regexes, start)
        walk_bytes(trie, near.rows)
        assert len(read) == len(set(read)) and read[0] == 0, pattern
        assert set(read) <= set(np.flatnonzero(near.made).tolist()), pattern


@pytest.mark.parametrize("pattern", ["([^,\\n]{1,20},){3}[^,\\n]{1,20}", "[^;]{2,30};[a-z]"])
def test_rows_read_ahead_spare_computing_a_level_twice(pattern, bundled_vocab, monkeypatch):
    """Where the rows read last lead to states not read, a whole level's parents' rows are
    read before it is computed (``_Walk.read_ahead``): far fewer nodes computed again
    (``_Walk.again``) than with nothing read ahead, and the same first set as the index."""
    again: list[int] = []
    real = levelwalk._Walk.again
    monkeypatch.setattr(
        levelwalk._Walk,
        "again",
        lambda walk, above, data: again.append(len(above)) or real(walk, above, data),
    )
    monkeypatch.setattr(derivatives, "walk_root", lambda *_: None)
    index = build_index(pattern, bundled_vocab)
    counts = []
    for ahead in (True, False):
        if not ahead:
            monkeypatch.setattr(levelwalk._Walk, "read_ahead", lambda *_: None)
        again.clear()
        forget_walks()
        ours = first_allowed_tokens(pattern, bundled_vocab)
        np.testing.assert_array_equal(ours, index.allowed_tokens(index.initial_state))
        counts.append(sum(again))
    assert counts[0] * 10 < counts[1], counts


def test_the_walk_from_the_root_is_the_plain_walk():
    toy = Vocabulary.from_strings(["a", "b", "ab", "ba", "abc", "c", "ca"], "</s>")
    trie = trie_of(toy)
    assert levels_of(trie) is levels_of(trie)  # built once per trie
    for pattern in ["a(b|c)*", "[ab]{1,2}", "[abc]*", "(ab|ba)+c", "c{2}"]:
        regexes, start = derivatives._Regexes.of(pattern, trie.single_byte_tokens)
        near = derivatives._NearStart(regexes, start)
        ours = walk_bytes(trie, near.rows)
        index = build_index(pattern, toy)
        expected = [t for t in index.allowed_tokens(index.initial_state) if t != toy.eos_token_id]
        assert ours.tolist() == sorted(int(t) for t in expected), pattern


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_class_walk_gives_the_byte_walk_s_tokens(pattern, bundled_vocab):
    """``walk_classes`` from the root, with the classes of every row the byte walk made,
    against ``walk_bytes``; and with a guess too coarse (one class for every byte but
    the first row's) it refuses rather than answers wrong."""
    trie = trie_of(bundled_vocab)
    try:
        regexes, start = derivatives._Regexes.of(pattern, trie.single_byte_tokens)
    except derivatives.Unsure:
        pytest.skip("answered by the whole index")
    near = derivatives._NearStart(regexes, start)
    root = np.zeros(1, np.int32)
    expected = walk_bytes(trie, near.rows)
    classes = byte_partition(near.rows(np.zeros(0, np.int32)))
    ours = walk_classes(trie, root, root, near.rows, classes)
    if ours is not None:  # None: more classes than a class trie is worth
        np.testing.assert_array_equal(ours, expected)
    fresh = derivatives._NearStart(regexes, start)
    coarse = byte_partition(fresh.rows(root)[:1])
    found = walk_classes(trie, root, root, fresh.rows, coarse)
    assert found is None or np.array_equal(found, expected)


def test_byte_partition_keeps_utf8_apart():
    table = np.full((1, 256), -1, dtype=np.int32)
    classes = byte_partition(table)
    assert classes[0x41] == classes[0x00] != classes[0x80]
    assert classes[0x8F] != classes[0x90] != classes[0xA0] == classes[0xBF]
    assert len({int(classes[b]) for b in (0xC2, 0xE0, 0xE1, 0xED, 0xF0, 0xF4, 0xF5)}) == 7


ROOT_PATTERNS = [
    r"[^\n]{1,20}",
    r"[^\n]+",
    r".{0,5}",
    r"[^\n]{2,3}\n",
    r"[^\n][0-9]",  # the start row tells [^\n]'s bytes apart, the next tells digits apart
    r"[^\n]{1,4}é",
]


def answers_of(monkeypatch, module, name: str) -> list[bool]:
    """``module.name`` (a shortcut that answers None where it does not apply) wrapped for
    the test: each call's answer recorded, True where it answered, in order."""
    answered: list[bool] = []
    real = getattr(module, name)

    def counting(*args):
        found = real(*args)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(module, name, counting)
    return answered


def counted_root_walks(monkeypatch) -> list[bool]:
    """Each ``walk_root`` call of ``first_allowed_tokens``: True where it answered."""
    return answers_of(monkeypatch, derivatives, "walk_root")


@pytest.mark.parametrize("narrow", [0, 64])
@pytest.mark.parametrize("pattern", ROOT_PATTERNS)
def test_a_wide_start_walks_the_class_trie_from_the_root(
    pattern, narrow, bundled_vocab, monkeypatch
):
    """With ``[^\\n]``'s classes learnt (``warm``), a first set whose start row tells the
    same bytes apart walks the class trie from the root, and answers as the index does;
    where a deeper row tells more apart, it answers None and the bytes are walked. With
    ``NARROW`` 0 the class trie has no Python tail; with 64, SmolLM2's 495 class nodes
    are all tail (``classwalk.class_states``' split; the level walk walks every level in
    numpy either way)."""
    from fsmviz.tokens.fast import classwalk, successors

    trie = trie_of(bundled_vocab)
    successors.warm_classes(trie)
    learnt = byte_partition(successors.to_bytes(successors.compile_regex(r"[^\n]")).table)
    monkeypatch.setattr(classwalk, "NARROW", narrow)
    built = classwalk._merged(trie, learnt, levels_of(trie).num_ids)
    assert (built[0].deep == len(built[0].levels)) == (narrow == 0)
    real = levelwalk.class_trie

    def class_trie(tree, byte_class, num_ids):
        same = tree is trie and np.array_equal(byte_class, learnt)
        return built if same else real(tree, byte_class, num_ids)

    monkeypatch.setattr(levelwalk, "class_trie", class_trie)
    answered = counted_root_walks(monkeypatch)
    fresh = pattern + "()" * (5 if narrow else 6)  # no index built for it yet
    ours = first_allowed_tokens(fresh, bundled_vocab)
    index = build_index(pattern, bundled_vocab)
    np.testing.assert_array_equal(ours, index.allowed_tokens(index.initial_state))
    assert answered == [pattern not in (r"[^\n][0-9]", r"[^\n]{1,4}é")]


def test_a_root_walk_that_does_not_hold_marks_nothing(bundled_vocab, monkeypatch):
    """``[^\\n][0-9]``'s start row has ``[^\\n]``'s classes, its next row does not: its
    root walk gives up, and the next ``[^\\n]`` pattern still walks the class trie."""
    from fsmviz.tokens.fast import successors

    successors.warm_classes(trie_of(bundled_vocab))
    answered = counted_root_walks(monkeypatch)
    for pattern in [r"[^\n][0-9]" + "()" * 7, r"[^\n]{1,7}" + "()" * 7, r"[^\n][0-9]" + "()" * 8]:
        ours = first_allowed_tokens(pattern, bundled_vocab)
        index = build_index(pattern, bundled_vocab)
        np.testing.assert_array_equal(ours, index.allowed_tokens(index.initial_state))
    assert answered == [False, True, False]


def test_a_class_walk_reads_each_state_s_row_once(bundled_vocab, monkeypatch):
    """The class walk looks each level's states up in ``_Cut.known`` before it gathers
    the level, and reads (makes and cuts) only those not read yet: no state twice, and the
    answer is the byte walk's."""
    from fsmviz.tokens.fast import successors

    trie = trie_of(bundled_vocab)
    successors.warm_classes(trie)
    read = []
    real = levelwalk._Cut.read
    monkeypatch.setattr(
        levelwalk._Cut, "read", lambda cut, todo: read.extend(todo.tolist()) or real(cut, todo)
    )
    for pattern in [r"[^\n]{1,20}", r"[^\n]{2,3}\n", r".{0,5}"]:
        read.clear()
        regexes, start = derivatives._Regexes.of(pattern, trie.single_byte_tokens)
        ours = levelwalk.walk_root(trie, derivatives._NearStart(regexes, start).rows)
        assert ours is not None and read, pattern  # walked the class trie from the root
        assert len(read) == len(set(read)), pattern
        expected = walk_bytes(trie, derivatives._NearStart(regexes, start).rows)
        np.testing.assert_array_equal(ours, expected)


@pytest.mark.parametrize(
    ("pattern", "walked"),
    [
        (r"[\s\S]{1,3}", True),
        (r"[\x00-\x7f]{2}", True),
        (r".*a\n?", False),
        (r"[^\n]+x\n?", False),
    ],
)
def test_a_start_row_alike_on_the_learnt_classes_walks_their_class_trie(
    pattern, walked, bundled_vocab, monkeypatch
):
    """``walk_root`` walks the learnt classes' trie where the start row leads each class's
    bytes alike, coarser rows too (``[\\s\\S]`` tells no ASCII byte apart), and answers as
    the index; a start row that tells a class's bytes apart (``a`` from the rest), or a
    deeper row that does (``x``), is left to the bytes (where a newline, no text of
    ``[^\n]*``, keeps the first set from being ``[^\n]*``'s)."""
    from fsmviz.tokens.fast import successors

    successors.warm_classes(trie_of(bundled_vocab))
    answered = counted_root_walks(monkeypatch)
    forget_walks()
    ours = first_allowed_tokens(pattern + "()" * 3, bundled_vocab)
    index = build_index(pattern, bundled_vocab)
    np.testing.assert_array_equal(ours, index.allowed_tokens(index.initial_state))
    assert answered == [walked]


LOOPED = [
    r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}",
    r"[a-z0-9]+(-[a-z0-9]+)*",
    r"[A-Za-z_][A-Za-z0-9_]*",
    r"[a-z]+[A-Z]?",  # the loop's own bytes only: a capital leaves it (camelCase tokens)
]


@pytest.mark.parametrize("way", ["as is", "every level whole", "every level sparse"])
@pytest.mark.parametrize("pattern", LOOPED)
def test_subtrees_in_a_state_s_own_loop_are_taken_whole(pattern, way, bundled_vocab, monkeypatch):
    """A node whose subtree's bytes its state reads back into itself has all its tokens
    allowed and is walked no further (``_Loops``): some are taken under each pattern
    (none where every level is walked whole: taking there spares nothing), and the first
    set is the index's."""
    for name, value in WAYS[way].items():
        monkeypatch.setattr(levelwalk, name, value)
    monkeypatch.setattr(derivatives, "walk_root", lambda *_: None)
    taken: list[int] = []
    real = levelwalk._Loops.taken

    def counting(loops, nodes, states, level):
        found = real(loops, nodes, states, level)
        taken.append(0 if found is None else int(found.sum()))
        return found

    monkeypatch.setattr(levelwalk._Loops, "taken", counting)
    forget_walks()
    ours = first_allowed_tokens(pattern, bundled_vocab)
    index = build_index(pattern, bundled_vocab)
    np.testing.assert_array_equal(ours, index.allowed_tokens(index.initial_state))
    assert (sum(taken) > 0) == (way != "every level whole")


@pytest.mark.parametrize("pattern", [*LOOPED, r"([^,\n]{1,20},){3}[^,\n]{1,20}", r"[^,]+,[a-z]+"])
def test_a_level_is_taken_from_only_where_it_then_stays_sparse(pattern, bundled_vocab, monkeypatch):
    """Subtrees are taken from a sparse level only where the nodes left are few enough
    for the level to stay sparse (a level walked whole computes every node anyway): at
    csv_row's level 1, 53 of 169 nodes could be taken and 116 would be walked whole, so
    none is. The first set is the index's either way."""
    monkeypatch.setattr(derivatives, "walk_root", lambda *_: None)
    levels = levels_of(trie_of(bundled_vocab))
    sizes = np.diff(levels.bounds)
    left: list[tuple[int, int]] = []  # (nodes left, their level's size) after each taking
    real = levelwalk._Loops.taken

    def checking(loops, nodes, states, level):
        found = real(loops, nodes, states, level)
        if found is not None:
            depth = int(np.searchsorted(levels.bounds, nodes[0], side="right")) - 1
            left.append((len(nodes) - int(found.sum()), int(sizes[depth])))
        return found

    monkeypatch.setattr(levelwalk._Loops, "taken", checking)
    forget_walks()
    ours = first_allowed_tokens(pattern, bundled_vocab)
    index = build_index(pattern, bundled_vocab)
    np.testing.assert_array_equal(ours, index.allowed_tokens(index.initial_state))
    assert all(nodes * levelwalk.SPARSE_LEVEL < size for nodes, size in left), left


LOOPS = [r"[a-z]*", r"[^\n]*", r"(?s).*", r"[^ \t\n\v\f\r]*", r"[\x00-\x7f]*", r"[^=]*", r"[.\-_]*"]
LOOPS += [  # a set inside the loop's first: only the first character is the set's
    r"[A-Za-z_][A-Za-z0-9_]*",
    r"[1-9][0-9]*",
    r"[^a\n].*",
    r"[ -~][^\n]*",
    r"|[a-z][a-z.]*",  # the empty option allows no token
    r"[a-c][a-c]*b{2}",  # its rest allows what [a-c]* does (``loop_led``)
]
UTF8_PIECES = [  # overlong forms, surrogates, past U+10FFFF, cut characters, lone bytes
    b"\xe0", b"\xe0\x80", b"\xe0\x80\x80", b"\xe0\xa0", b"\xe0\xa0\x80", b"\x80", b"\xc1\x81",
    b"\xed\xa0\x80", b"\xed\x9f\xbf", b"\xf0\x80\x80\x80", b"\xf0\x90\x80\x80", b"a\xf4",
    b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xc2\xa0", b"a", b"b=", b"\n", b"ab\xc3\xa9",
    b"\xff", b"A.-", b"\xf3\xbf", b"\x7f\xc2",
]  # fmt: skip


@pytest.mark.parametrize("pattern", LOOPS)
def test_a_loop_s_tokens_are_read_off_as_its_walk_finds_them(pattern, bundled_vocab, monkeypatch):
    """``loop_tokens`` (``derivatives._spelt_loop``: ``B*`` or ``SB*``, where ``B`` holds
    every character past ASCII or none, after ``regex_terms.loop_led``) gives the tokens
    the level walk of the pattern as written gives, on the bundled vocabulary and on
    pieces of broken and cut UTF-8."""
    monkeypatch.setattr(derivatives, "loop_led", loop_led)  # as ``walk_as_written`` found it
    toy = Vocabulary("toy-loops", (*UTF8_PIECES, b""), len(UTF8_PIECES), {len(UTF8_PIECES): "</s>"})
    for vocab in (bundled_vocab, toy):
        trie = trie_of(vocab)
        regexes, start = derivatives._Regexes.of(pattern, np.ones(256, dtype=bool))
        ours = spelt_loop(regexes, loop_led(regexes, start), trie)
        assert ours is not None
        walked = walk_bytes(trie, derivatives._NearStart(regexes, start).rows)
        np.testing.assert_array_equal(ours, walked)


@pytest.mark.parametrize(
    "pattern",
    [r"[^é]*", r"[a-zé]*", r"[a-z]+", r"(ab)*", r"[a-z]*b", r"[0-9][a-z]*", r"é[^\n]*", r"a|b*"],
)
def test_a_loop_over_some_characters_past_ascii_is_walked(pattern):
    """Only a set holding every character past ASCII, or none, is read off per token, and
    a set before the loop only where it lies inside the loop's set."""
    regexes, start = derivatives._Regexes.of(pattern, np.ones(256, dtype=bool))
    toy = Vocabulary.from_strings(["a", "é"], eos_token="</s>")
    assert spelt_loop(regexes, start, trie_of(toy)) is None
