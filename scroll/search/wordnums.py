"""Numbering the words of many texts at once: bulk indexing's split, vectorised with numpy.

    wn = WordNumbers()
    nums, per_text, new = wn.number(["Running late", "late again"])
    # nums: the number of every word, text after text, in order ([0, 1, 1, 2]); per_text: [2, 2];
    # new: the words this call numbered first, in number order (["Running", "late", "again"])

The words are exactly what `words.split` (the regex `\\b\\w\\w+\\b`) finds in each text, in order:
the maximal runs of two or more word characters, as written. Splitting with the regex and
looking every word up in a dict costs ~0.5 us a word in Python (two objects a word); a 10 M-word
import spent ~5 s of CPU there. Here:

- an ASCII text (`str.isascii()`, O(1)) is split with numpy: its bytes are classified by a table
  (for ASCII, `\\w` is [A-Za-z0-9_]), runs of word bytes are found from the class changes, and a
  word of up to 16 bytes becomes its own exact key, two little-endian uint64 of its bytes (zero
  padded; word bytes are never 0). The keys live in an open-addressing hash table of numpy
  arrays (linear probing, at most half full, hash multipliers drawn at random per table) that
  stores both halves of every key and compares them, so a number is never given to another
  word: the hash only picks where to look.
- a word of over 16 bytes, and every word of a text that is not ASCII (split by the regex, the
  reference path), is numbered through a dict.

One word may thus hold two numbers (one from the table, one from the dict); each number's
word is analysed in its own row, so both give the same terms. Numbers are 0, 1, 2, ... in the
order the words were first seen (within a call: the table's words, then the dict's), whatever
the random hash; a caller appends a row per new word in that order.

Standard library and numpy only: the splitter's helper process loads this file by path, next to
`words.py`, so the parent and the helper number words with the very same code.
"""
from __future__ import annotations

import re
import secrets

import numpy as np

_SPLIT = re.compile(r"(?u)\b\w\w+\b").findall    # words.TOKEN_PATTERN (the helper loads this file alone)
_IS_WORD = np.array([i < 128 and (chr(i).isalnum() or i == 95) for i in range(256)], dtype=bool)
_MASK = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)  # n low bytes
_KEY_BYTES = 16


class _KeyTable:
    """(a, b) uint64 keys -> numbers, open addressing with linear probing, at most half full.
    Its hash multipliers are drawn at random per table (odd, 64-bit): text that was crafted to
    pile its words into one probe chain cannot know them. Exactness never depends on them."""

    def __init__(self, bits: int = 16):
        self.c1, self.c2 = (np.uint64(secrets.randbits(64) | 1) for _ in range(2))
        self.entries = 0
        self._alloc(bits)

    def _alloc(self, bits: int) -> None:
        self.bits = bits
        size = 1 << bits
        self.a = np.zeros(size, dtype=np.uint64)
        self.b = np.zeros(size, dtype=np.uint64)
        self.num = np.full(size, -1, dtype=np.int64)
        self._claim = np.full(size, -1, dtype=np.int64)

    def _slots(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return ((a * self.c1 + b * self.c2) >> np.uint64(64 - self.bits)).astype(np.int64)

    def _grow(self) -> None:
        used = self.num >= 0
        a, b, num = self.a[used], self.b[used], self.num[used]
        self._alloc(self.bits + 1)
        self.entries = 0
        self._probe(a, b, 0, fixed=num)

    def get_or_add(self, a: np.ndarray, b: np.ndarray, base: int) -> tuple[np.ndarray, np.ndarray]:
        """The number of every key; the keys not in the table are added with the numbers base,
        base + 1, ... in the order of their first occurrence. Returns (numbers, the index of each
        new number's first occurrence, in number order)."""
        out, _ = self._probe(a, b, base)
        at = np.flatnonzero(out >= base)                 # the occurrences of new keys
        if not len(at):
            return out, at
        rel = out[at] - base
        first = np.full(int(rel.max()) + 1, len(out), dtype=np.int64)
        np.minimum.at(first, rel, at)
        order = np.argsort(first, kind="stable")       # new numbers in first-seen order
        renumber = np.empty(len(order), dtype=np.int64)
        renumber[order] = base + np.arange(len(order))
        out[at] = renumber[rel]
        new = self.num >= base
        self.num[new] = renumber[self.num[new] - base]
        return out, first[order]

    def _probe(self, a: np.ndarray, b: np.ndarray, base: int,
               fixed: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        """The number of every key; a key not in the table is added with the next number from
        `base` on, in no set order (or with its `fixed[i]`). Returns (numbers, how many added)."""
        out = np.full(len(a), -1, dtype=np.int64)
        todo = np.arange(len(a))
        slot = self._slots(a, b)
        n_new = 0
        while len(todo):
            mask = (1 << self.bits) - 1
            num = self.num[slot]
            taken = num >= 0
            hit = taken & (self.a[slot] == a[todo]) & (self.b[slot] == b[todo])
            out[todo[hit]] = num[hit]
            free = ~taken
            keys_f, slot_f = todo[free], slot[free]
            self._claim[slot_f] = keys_f          # one key per free slot wins (any of them)
            won = self._claim[slot_f] == keys_f
            w, slot_w = keys_f[won], slot_f[won]
            nums = fixed[w] if fixed is not None else base + n_new + np.arange(len(w))
            self.a[slot_w], self.b[slot_w], self.num[slot_w] = a[w], b[w], nums
            out[w] = nums
            n_new += len(w)
            self.entries += len(w)
            step = taken & ~hit                   # another key lives there: look one further
            todo = np.concatenate([todo[step], keys_f[~won]])      # the claim's losers look again
            slot = np.concatenate([(slot[step] + 1) & mask, slot_f[~won]])
            if 2 * self.entries > len(self.num):
                self._grow()
                slot = self._slots(a[todo], b[todo])
        return out, n_new


class WordNumbers:
    """Every distinct word seen so far -> its number (see the module docstring)."""

    def __init__(self) -> None:
        self.count = 0
        self._table = _KeyTable()
        self._dict: dict[str, int] = {}

    def number(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """(the number of every word of `texts`, text after text, int64; words per text, int64;
        the words numbered first by this call, in number order)."""
        ascii_ = [t.isascii() for t in texts]
        if all(ascii_):
            return self._ascii(texts)
        if not any(ascii_):
            return self._regex(texts)
        at_a = [i for i, x in enumerate(ascii_) if x]
        at_u = [i for i, x in enumerate(ascii_) if not x]
        nums_a, per_a, new_a = self._ascii([texts[i] for i in at_a])
        nums_u, per_u, new_u = self._regex([texts[i] for i in at_u])
        per = np.zeros(len(texts), dtype=np.int64)
        per[at_a], per[at_u] = per_a, per_u
        start = np.cumsum(per) - per
        nums = np.empty(int(per.sum()), dtype=np.int64)
        nums[_positions(start[at_a], per_a)] = nums_a
        nums[_positions(start[at_u], per_u)] = nums_u
        return nums, per, new_a + new_u

    def _dict_numbers(self, words: list[str], new: list[str]) -> list[int]:
        d, out = self._dict, []
        for w in words:
            n = d.get(w)
            if n is None:
                n = d[w] = self.count
                self.count += 1
                new.append(w)
            out.append(n)
        return out

    def _regex(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        per_text = [_SPLIT(t) for t in texts]
        new: list[str] = []
        nums = self._dict_numbers([w for ws in per_text for w in ws], new)
        return (np.asarray(nums, dtype=np.int64), np.fromiter(map(len, per_text), np.int64, len(texts)), new)

    def _ascii(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        if not texts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), []
        enc = [t.encode("ascii") for t in texts]
        buf = b" ".join(enc) + bytes(_KEY_BYTES)            # separators and padding are not word bytes
        cls = _IS_WORD[np.frombuffer(buf, dtype=np.uint8)].view(np.int8)
        edge = np.diff(cls, prepend=np.int8(0))
        starts = np.flatnonzero(edge == 1)
        lens = np.flatnonzero(edge == -1) - starts          # every run ends inside the padding at the latest
        keep = lens >= 2
        starts, lens = starts[keep], lens[keep]
        text_lens = np.fromiter(map(len, enc), dtype=np.int64, count=len(enc))
        bounds = np.concatenate([[0], np.cumsum(text_lens + 1)])
        per_text = np.diff(np.searchsorted(starts, bounds))
        nums = np.empty(len(starts), dtype=np.int64)
        short = lens <= _KEY_BYTES
        s, n = starts[short], lens[short]
        u64 = np.ndarray(shape=(len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))   # 8 bytes from any offset
        a = u64[s] & _MASK[np.minimum(n, 8)]
        b = u64[s + 8] & _MASK[np.clip(n - 8, 0, 8)]
        got, first = self._table.get_or_add(a, b, self.count)
        nums[short] = got
        self.count += len(first)
        new = [buf[i:i + k].decode("ascii") for i, k in zip(s[first].tolist(), n[first].tolist())]
        if not short.all():
            long_at = np.flatnonzero(~short)
            words = [buf[i:i + k].decode("ascii") for i, k in zip(starts[long_at].tolist(), lens[long_at].tolist())]
            nums[long_at] = self._dict_numbers(words, new)
        return nums, per_text, new


def _positions(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """The concatenated ranges [starts[i], starts[i] + lens[i])."""
    total = int(lens.sum())
    return np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(total)


__all__ = ["WordNumbers"]
