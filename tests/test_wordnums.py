"""WordNumbers: the vectorised split gives the token regex's words, and a number never names two words."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scroll.search import wordnums
from scroll.search.wordnums import WordNumbers
from scroll.search.words import split

# ASCII word bytes and separators, non-ASCII word characters (a text holding one takes the regex
# path), and letters that make long words
_ALPHABET = st.sampled_from(list("aAbBzZ09_") + list(" \t\n.,-'\"()[]{}/\\:;!?") + ["é", "İ", "ß", "日", "\u00a0"])
_TEXT = st.lists(st.one_of(_ALPHABET, st.sampled_from(["x" * 8, "y" * 9, "Z" * 16, "q" * 17, "w" * 40])),
                 max_size=40).map("".join)


def _check(wn: WordNumbers, texts: list[str], named: dict[int, str]) -> None:
    """One call: its numbers name the regex's words of each text, in order, and a number given
    out earlier still names the same word."""
    before = wn.count
    nums, per_text, new = wn.number(texts)
    assert list(range(before, wn.count)) == list(range(before, before + len(new)))
    named.update(zip(range(before, wn.count), new))
    assert per_text.tolist() == [len(split(t)) for t in texts]
    assert [named[n] for n in nums.tolist()] == [w for t in texts for w in split(t)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_TEXT, max_size=12), min_size=1, max_size=4))
def test_numbers_name_the_regex_words_across_calls(batches):
    wn, named = WordNumbers(), {}
    for texts in batches:
        _check(wn, texts, named)


def test_a_word_is_numbered_once_per_path():
    wn = WordNumbers()
    nums, _, new = wn.number(["alpha beta alpha", "beta gamma"])
    assert new == ["alpha", "beta", "gamma"] and nums.tolist() == [0, 1, 0, 1, 2]
    nums, _, new = wn.number(["gamma alpha delta"])
    assert new == ["delta"] and nums.tolist() == [2, 0, 3]
    # a text that is not ASCII goes through the dict: its words get numbers of their own
    nums, _, new = wn.number(["alpha café"])
    assert new == ["alpha", "café"] and nums.tolist() == [4, 5]


@pytest.mark.parametrize("one_slot", [False, True])
def test_words_that_share_their_first_8_or_16_bytes_stay_apart(one_slot):
    wn = WordNumbers()
    if one_slot:            # every key hashed to one slot: only the stored key tells them apart
        wn._table.c1 = wn._table.c2 = np.uint64(0)
    words = ["interest", "interests", "interestingly", "interestingness", "interestingnessA", "interestingnessB",
             "interestingnessAB", "interestingnessAC", "Interest"]
    _check(wn, [" ".join(words), " ".join(reversed(words))], {})


def test_numbers_follow_first_sight_whatever_the_hash():
    """The same texts get the same numbers under any hash multipliers (and so the same term ids
    downstream): new words are numbered in the order they first occur."""
    rng = np.random.default_rng(5)
    vocab = ["".join(rng.choice(list("abcdefghij"), rng.integers(2, 12))) for _ in range(500)]
    texts = [" ".join(rng.choice(vocab, 40)) for _ in range(60)]
    runs = []
    for c in (None, 0, 3):
        wn = WordNumbers()
        if c is not None:
            wn._table.c1 = wn._table.c2 = np.uint64(c)
        got = [wn.number(texts[i:i + 20]) for i in range(0, 60, 20)]
        runs.append([(n.tolist(), new) for n, _, new in got])
    assert runs[0] == runs[1] == runs[2]
    seen = list(dict.fromkeys(w for t in texts for w in t.split()))
    assert [w for _, new in runs[0] for w in new] == seen


def test_growth_and_long_probe_chains_stay_exact():
    """Many distinct words through a table that starts at 2 slots, then with every key hashed to
    the same slot (the hash only chooses where to look; the stored key decides)."""
    rng = np.random.default_rng(3)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"))
    vocab = ["".join(rng.choice(letters, rng.integers(2, 20))) for _ in range(3000)]
    texts = [" ".join(rng.choice(vocab, 50)) for _ in range(200)]
    wn, named = WordNumbers(), {}
    wn._table = wordnums._KeyTable(bits=1)
    for i in range(0, len(texts), 50):
        _check(wn, texts[i:i + 50], named)
    assert wn._table.entries == len({w for w in vocab if len(w) <= 16 and any(w in t.split() for t in texts)})
    assert 2 * wn._table.entries <= len(wn._table.num)

    wn, named = WordNumbers(), {}
    wn._table.c1 = wn._table.c2 = np.uint64(0)      # every key hashed to one slot
    _check(wn, texts[:20], named)
    _check(wn, texts[20:40], named)


@pytest.mark.parametrize("texts", [[], [""], ["", "  "], ["a b c"], ["\x00ab\x00"], ["x" * 5_000_000]])
def test_edge_texts(texts):
    _check(WordNumbers(), texts, {})


def test_ascii_word_characters_are_the_regex_ones():
    """For ASCII, `\\w` is [A-Za-z0-9_]: the byte table the vectorised split uses."""
    regex = re.compile(r"(?u)\w")
    assert [bool(regex.match(chr(i))) for i in range(128)] == wordnums._IS_WORD[:128].tolist()
