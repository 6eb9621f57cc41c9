"""A state's packed mask made from its chain (``chains``: the tokens within the bytes the
chain reads onwards from packed words, the others walked below the frontier) is the plain
pair walk's row packed, bit for bit, on the real 49k vocabulary; and ``next_state``, which
then walks one token's bytes instead of making the row, agrees with the row."""

from __future__ import annotations

import numpy as np
import pytest

from fsmviz import build_index
from fsmviz.tokens.fast.closedsets import _leads_alike, closed_words
from fsmviz.tokens.fast.packwalk import packed_vocab
from fsmviz.tokens.index import packed
from tests.test_index_rows import plain_mask, plain_row

JSON_CHARS = r'([^"\\\x00-\x1F\x7F-\x9F]|\\["\\/bfnrt])*'
JSON_STRINGS = rf'\{{"a": "{JSON_CHARS}", "b": "{JSON_CHARS}"\}}'
PATTERNS = (
    r'[a-z_]+="[^"]*"(, [a-z_]+="[^"]*")*',  # a loop over every byte but the quote
    r"([^,\n]{1,20},){3}[^,\n]{1,20}",  # chains that end, with non-ASCII characters
    r"(([A-Z][a-z]{1,10} ){1,4}[a-z]{1,8}\. ){1,3}",  # chains that end, then a space
    r"SELECT [a-z_]+(, [a-z_]+)* FROM [a-z_]+;",
    r'\{"a": "([^"\\\x00-\x1f]|\\["\\/bfnrt])*"\}',  # a JSON string's loop and escapes
    JSON_STRINGS,  # two loops of UTF-8 without its C1 controls, as regex_from_schema writes
    r"[a-z0-9]+(-[a-z0-9]+)*",
    r".*(error|warning): [A-Za-z ]+",  # states alike that read every byte: a closed set
    r".*a",
    r".*[0-9]{3}",
)
FALLING_BACK = ()
STATES = 24


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS + FALLING_BACK)
def test_packed_masks_are_the_plain_rows(bundled_vocab, pattern):
    index = build_index(pattern + "()" * 7, bundled_vocab)  # fresh: no row made yet
    wide = np.flatnonzero((index.byte_dfa.table >= 0).sum(axis=1) >= 16)
    states = sorted(set(wide[:STATES].tolist()) | set(range(min(8, index.byte_dfa.num_states))))
    unrowed = 0
    for state in states:
        words = index.bitmask(state)
        assert np.array_equal(words, plain_mask(index, state)), (pattern, state)
        unrowed += state not in index._rows
    assert unrowed or pattern in FALLING_BACK, "no state's mask came from its chain"


NARROW = (
    r'\{"id": [0-9a-f]{4}, "n": (0|-?[1-9][0-9]{0,5}), "ok": (true|false), '
    r'"tag": [A-Za-z_][A-Za-z0-9_]{0,6}, "c": [a-z0-9]{2}\}'
)  # keys (1 byte), digits (11), hex digits (16), 36 bytes, a name (53, 64)


def test_narrow_masks_are_the_plain_rows(bundled_vocab):
    """The masks of narrow states (a schema's keys, digits, hex digits, the bytes of a name),
    walked in plain Python over their targets read one by one (``rowwalk._steps_of``) and
    packed into a buffer (``rowwalk._packed_ids``), are the plain pair walk's rows packed,
    bit for bit, at every state: a fresh index, no row made."""
    index = build_index(NARROW + "()" * 9, bundled_vocab)
    reads = (index.byte_dfa.table >= 0).sum(axis=1)
    assert {1, 11, 16, 36, 53} <= set(reads.tolist())  # each kind of narrow state is met
    for state in range(index.byte_dfa.num_states):
        assert np.array_equal(index.bitmask(state), plain_mask(index, state)), state
    assert not index._rows  # none of them made a row: each came from the walks for masks


@pytest.mark.slow
def test_next_state_without_a_row_is_the_rows_target(bundled_vocab):
    index = build_index(PATTERNS[0] + "()" * 8, bundled_vocab)
    rng = np.random.default_rng(48)
    for state in range(min(12, index.byte_dfa.num_states)):
        tokens, targets = plain_row(index, state)
        probes = rng.integers(0, len(bundled_vocab), 40).tolist() + tokens[:40].tolist()
        lookup = dict(zip(tokens.tolist(), targets.tolist(), strict=True))
        for token in probes:
            if token != bundled_vocab.eos_token_id:
                assert index.next_state(state, token) == lookup.get(token), (state, token)
    assert not index._rows


def test_the_packed_vocabulary_on_a_toy_one():
    from fsmviz import Vocabulary

    vocab = Vocabulary.from_strings(["ab", "b", "ba", "é"], eos_token="</s>")
    index = build_index("[ab]+", vocab)
    words = packed_vocab(index.trie, len(vocab))
    ab = sum(1 << b for b in b"ab")
    assert words.inside(ab).tolist() == [0b111]  # "ab", "b", "ba"; not "é", not EOS
    assert words.inside(1 << ord("b")).tolist() == [0b10]
    assert np.array_equal(index.bitmask(0), packed(np.array([0, 1, 2]), len(vocab)))


@pytest.mark.parametrize("seed", range(4))
def test_walk_entries_is_a_walk_token_by_token(bundled_vocab, seed):
    """``walkbelow.walk_entries`` (longest first, one numpy round a byte, the dead kept dead
    by their sign, the last few walked on in Python) keeps exactly the tokens a plain
    walk of their bytes past ``skip`` keeps alive, from states some of them die in at
    once: random tokens of the real vocabulary, long ones among them, some dying late
    (runs of dashes past a counted repeat's end)."""
    from fsmviz.tokens.fast.walkbelow import walk_entries

    index = build_index(r"([^,\n]{1,20},){3}[^,\n]{1,20}|[a-z #=-]{3,60}\.", bundled_vocab)
    table, trie = index.byte_dfa.table, index.trie
    vocab = packed_vocab(trie, len(bundled_vocab))
    rng = np.random.default_rng(seed)
    longest = np.argsort(vocab.lengths)[-40:]  # 20-65 bytes: past the Python tail's start
    entries = np.concatenate([rng.integers(0, len(vocab.lengths), 3_000), longest])
    skip = np.minimum(rng.integers(0, 3, len(entries)), vocab.lengths[entries])
    states = rng.integers(0, len(table), len(entries))
    letters = int(table[table[index.initial_state, ord("a")], ord("b")])  # 58 more at most
    states[-len(longest) :: 2] = letters  # runs of "-", "#", "=": alive, or dead past 58
    expected = []
    for entry, start, state in zip(entries.tolist(), skip.tolist(), states.tolist(), strict=True):
        for byte in trie.sorted_bytes[entry][start:]:
            state = int(table[state, byte])
            if state < 0:
                break
        expected.append(state >= 0)
    found = walk_entries(vocab, table, entries, states, skip)
    assert sorted(found.tolist()) == sorted(entries[expected].tolist())
    assert 0 < len(found) < len(entries)


UTF8_TOKENS = (
    *"abcdefghijklmnopqrstuvwxyz",
    '"', 'a"', 'a",', '"b', "é", 'é"', "ab é", "\u00a0", "\u0085", "\u20ac", "😀", "a😀b",
)  # fmt: skip
UTF8_BYTES = (
    b"\xc3",  # a character cut after its first byte: allowed, inside it
    b"\xe2\x82",  # cut after two
    b"a\xc3",
    b"\xa9",  # a stray continuation byte
    b"\xc0\x80",  # an overlong form
    b"\xed\xa0\x80",  # a surrogate
    b'\xc3"',  # a quote inside a character
    b"\xf4\x90\x80\x80",  # past U+10FFFF
    b"\xc2\x85a",  # a C1 control, then a letter
)


BUT_ONE = ('"[^"é]*"', '"[^"\u20ac]*"', '"[^"\U0001f600]*"')  # any character but one


def test_utf8_loops_on_a_toy_vocabulary(monkeypatch, no_loop_masks):
    """A loop reading any character (``[^"]``) or any but the C1 controls (a JSON string's)
    takes its tokens as UTF-8 (``closedsets.utf8_loop``): every bit as the plain walk's, on
    cut, stray, overlong, surrogate and C1 bytes; a loop of some non-ASCII characters
    (``[a-zé]``) or of any character but one (``[^"é]``: a state inside a character that
    reads fewer bytes than UTF-8's) is not taken so and still agrees."""
    from fsmviz import Vocabulary
    from fsmviz.tokens.fast import closedsets, firstbytes

    for module in (firstbytes, closedsets):  # a toy's first bytes are all few
        monkeypatch.setattr(module, "FIRST_BYTES", 257)
    # (``no_loop_masks``: a string's states read as ``ANY*``'s, answered by the loop masks first)
    singles = (bytes([b]) for b in range(1, 256) if b not in b'"abcdefghijklmnopqrstuvwxyz')
    table = (*(t.encode() for t in UTF8_TOKENS), *UTF8_BYTES, *singles, b"")
    vocab = Vocabulary("toy", table, len(table) - 1, {len(table) - 1: "<eos>"})
    kinds = {}
    for pattern in ('"[^"]*"', JSON_STRINGS, '[a-z]+="[^"\n]*"', '"[a-zé ]*"', *BUT_ONE):
        index = build_index(pattern, vocab)
        for state in range(index.byte_dfa.num_states):
            words = index.bitmask(state)
            assert np.array_equal(words, plain_mask(index, state)), (pattern, state)
        kinds[pattern] = sorted(set(index._walker._utf8.values()))
        assert index._live is None and not index._rows, pattern  # no row made: no pruning
    assert kinds == {
        '"[^"]*"': [1],
        JSON_STRINGS: [2],
        '[a-z]+="[^"\n]*"': [0, 1],  # the name's loop reads no UTF-8: 0
        '"[a-zé ]*"': [0],
        **dict.fromkeys(BUT_ONE, [0]),  # after a lead byte, fewer continuation bytes read
    }


def test_inside_by_blocks_is_inside_by_bytes():
    """``PackedVocab.inside`` ORs whole blocks of 8, 32 and 128 bytes where a set leaves them
    out: the same tokens as testing each token's bytes, for classes of ranges and of random
    bytes, with and without the first byte."""
    from fsmviz import Vocabulary

    singles = (bytes([b]) for b in range(1, 256) if b not in b'"abcdefghijklmnopqrstuvwxyz')
    table = (*(t.encode() for t in UTF8_TOKENS), *UTF8_BYTES, *singles, b"AZ", b"a\x00", b"")
    vocab = Vocabulary("toy", table, len(table) - 1, {len(table) - 1: "<eos>"})
    words = packed_vocab(build_index("a", vocab).trie, len(vocab))
    rng = np.random.default_rng(48)
    ranges = [(0x20, 0x7F), (ord("a"), ord("z") + 1), (0, 0x80), (0x80, 0x100), (0x41, 0xC0)]
    classes = [sum(1 << b for b in range(lo, hi)) for lo, hi in ranges]
    classes += [int(rng.integers(0, 2**63)) << int(rng.integers(0, 190)) for _ in range(20)]
    for allowed in classes:
        for tail in (False, True):
            ids = [
                i
                for i, data in enumerate(table)
                if data and all(allowed >> b & 1 for b in data[1 if tail else 0 :])
            ]
            want = packed(np.array(ids, dtype=np.int64), len(vocab)).view(np.uint32)
            assert np.array_equal(words.inside(allowed, tail), want), (hex(allowed), tail)


def test_closed_sets_on_a_toy_vocabulary():
    """States that read the same ASCII bytes into each other and UTF-8 back among them
    (``closedsets.closed_words``: ``.*``-led patterns) allow the same tokens: every bit as the
    plain walk's, with cut, stray and C1 UTF-8 tokens; a set that reads no byte from 0x80 or
    every byte; a state whose bytes lead to one reading others is not taken, and with the
    bytes each state reads given, such a state is refused at once, the others answered
    alike."""
    from fsmviz import Vocabulary

    singles = (bytes([b]) for b in range(1, 256) if b not in b'"abcdefghijklmnopqrstuvwxyz')
    table = (*(t.encode() for t in UTF8_TOKENS), *UTF8_BYTES, *singles, b"a\nb", b"")
    vocab = Vocabulary("toy", table, len(table) - 1, {len(table) - 1: "<eos>"})
    closed = {}
    escape = r"([ -~]|[^\x00-\x7fé]|é[0-9])*"  # every character but é loops back
    for pattern in (
        ".*a",
        r".*(ab|é): [a-z ]+",
        "[ -~]*x[ -~]*",
        "(.|\n)*a\n",
        "[a-z]*x[0-9]+",
        escape,
    ):
        index = build_index(pattern, vocab)
        words = packed_vocab(index.trie, len(vocab))
        closed[pattern] = []
        for state in range(index.byte_dfa.num_states):
            assert np.array_equal(index.bitmask(state), plain_mask(index, state)), (pattern, state)
            found = closed_words(words, index.byte_dfa.table, state)
            refused = closed_words(words, index.byte_dfa.table, state, index._walker.reads_of)
            assert (found is None) == (refused is None), (pattern, state)  # refused at once
            if found is not None:
                assert found[0] == refused[0] and np.array_equal(found[1], refused[1])
                assert state in found[0]
                tokens, _ = plain_row(index, state)
                want = packed(tokens, len(vocab)).view(np.uint32)
                assert np.array_equal(found[1], want), (pattern, state)
                closed[pattern].append(state)
        assert index._live is None, pattern
    assert closed[".*a"] == [0, 1] and len(closed[r".*(ab|é): [a-z ]+"]) >= 5, closed
    assert closed["[ -~]*x[ -~]*"] and closed["(.|\n)*a\n"], closed
    assert 0 not in closed["[a-z]*x[0-9]+"], closed  # after x: digits too
    index = build_index("[a-z]*x[0-9]+", vocab)
    assert not _leads_alike(index.byte_dfa.table, 0, index._walker.reads_of)  # refused at once
    assert 0 not in closed[escape], closed  # after é: digits only


WORDS_TOKENS = (
    *"ABCTabcehtz .",
    "The", "Cat", "Th", "Thé", " ", " T", " Th", " The", " Cat", " C", " c", " ca", " cat",
    " cat.", " the", " th", "e ", "he ", "The ", "at.", "t.", ". ", ". T", ". The", ".T", "  ",
    " Ab", " A", " Zz", " z", " é", "Ab c", "A b", " Tha. ", "aB", " ab.", " T ", " TaB ",
    " 1", " 12", " 1a", " ab", " abc", " h", " hz 1",
)  # fmt: skip


TWO_LEVELS = (
    r"(([A-Z][a-z]{1,10} ){1,4}[a-z]{1,8}\. ){1,3}",  # a capital, then a chain; a space
    r"[A-Z][a-z]{1,10}",
    r"( [A-Z][a-z]{0,6}| [a-z]{1,5}\.)+",  # a space, then a capital or a letter
    r"\.( [A-Z][a-z]+)+",
    r"( [A-Z][a-z]+[A-Z]?)+",  # the chain of the letters reads a capital too ("TaB")
    r"( [a-h][a-z]+| [0-9]+)+",  # after a space, no chain (10 digits, 8 letters): split
)


@pytest.mark.parametrize("few", [16, 0])
@pytest.mark.parametrize("candidates", [12_000, 0])
def test_two_level_chains_on_a_toy_vocabulary(monkeypatch, no_loop_masks, candidates, few):
    """A state whose chain starts past its first byte or two (a capital then lowercase
    letters; a space then a capital) takes those tokens as words below a ``Prefix``
    (``chains._groups``: every group counts as large here): every bit as the plain walk's,
    with the tokens of the split nodes themselves, tokens leaving the chain two and three
    bytes deep, and non-ASCII bytes below a prefix. With no frontier found
    (``CANDIDATES`` 0), a narrow state is split from the root and the rest walked below.
    ``FEW_NODES`` 16 reads the toy's frontiers and groups in plain Python, 0 by numpy."""
    from fsmviz import Vocabulary
    from fsmviz.tokens.fast import chains, closedsets, firstbytes, packwalk, walkbelow

    for module in (chains, walkbelow):  # the groups', and the walk below's
        monkeypatch.setattr(module, "TOKEN_WALK", 0)
    monkeypatch.setattr(packwalk, "CANDIDATES", candidates)
    monkeypatch.setattr(chains, "FEW_NODES", few)
    for module in (firstbytes, closedsets):  # a toy's first bytes are all few
        monkeypatch.setattr(module, "FIRST_BYTES", 257)
    # (``no_loop_masks``: a string's states read as ``ANY*``'s, answered by the loop masks first)
    table = (*(t.encode() for t in WORDS_TOKENS), b"")
    vocab = Vocabulary("toy", table, len(table) - 1, {len(table) - 1: "<eos>"})
    packed_vocab(build_index("a", vocab).trie, len(vocab)).forget()  # frontiers kept before
    grouped, split = set(), set()
    real_groups, real_children = chains._groups, chains._children

    def groups(*args):
        found = real_groups(*args)
        grouped.update(prefix.depth for prefix, *_ in found[0])
        return found

    def children(trie, root_child, table, prefix, state):
        split.add(0 if prefix is None else prefix.depth)
        return real_children(trie, root_child, table, prefix, state)

    monkeypatch.setattr(chains, "_groups", groups)
    monkeypatch.setattr(chains, "_children", children)
    for pattern in TWO_LEVELS:
        fresh = (2 if candidates else 3) + (0 if few else 2)
        index = build_index(pattern + "()" * fresh, vocab)
        for state in range(index.byte_dfa.num_states):
            assert np.array_equal(index.bitmask(state), plain_mask(index, state)), (pattern, state)
        assert index._live is None, pattern
    if candidates:
        assert grouped == {1, 2} and 1 in split, (grouped, split)
    else:
        assert 0 in split, split


def test_a_few_ids_pack_as_many_do_and_keep_nothing_for_the_collector():
    """``rowwalk._packed_ids``: a few ids (set word by word in Python) pack as many do
    (through ``np.packbits``), bit 31 of a word included, into read-only int32 words whose
    chain of bases holds nothing the garbage collector tracks (a ``np.frombuffer`` of a
    bytearray kept a memoryview and its buffer with every such mask)."""
    import gc

    from fsmviz.tokens.fast.rowwalk import _packed_ids

    rng = np.random.default_rng(5)
    for count in (0, 1, 5, 31, 40):
        tokens = sorted({31, 63, *rng.choice(1000, count, replace=False).tolist()})
        words = _packed_ids(tokens, 1000)
        assert words.dtype == np.int32 and len(words) == 32 and not words.flags.writeable
        bits = np.unpackbits(words.view(np.uint8), bitorder="little")
        assert np.flatnonzero(bits).tolist() == tokens
        base = words
        while base is not None:
            assert not gc.is_tracked(base), type(base)
            base = getattr(base, "base", None)
