"""Tokenization shared by indexing and querying, identical to `bm25s.tokenize`.

Same steps as bm25s 0.3.x with `stopwords="en"` and a PyStemmer English stemmer:
lower-case, split on `(?u)\\b\\w\\w+\\b`, drop English stopwords, stem. Identical tokens
are what make our scores equal to a single bm25s index built over the same documents.
Large texts are tokenized in chunks cut at whitespace, so a 100 MB event does not need
a 100 MB list of strings.
"""
from __future__ import annotations

import re
from collections import Counter

from .vocab import SHARDS, ShardedDict

_MASK = SHARDS - 1
from .words import STOPWORDS_EN, TOKEN_PATTERN  # noqa: F401 - re-exported
from .words import split as _split

# Question words dropped from QUERIES (not documents): "when did I adopt Rocket" should not
# rank events by "when" and "did". Measured in issue 2 (bm25s feature tuning); kept by `scroll bench tune` (issue 13).
QUESTION_WORDS = frozenset(("what when where who which why how did does do is was has have would could "
                            "kind much many long").split())
_CHUNK = 1 << 20  # characters per chunk for big texts
_STEM_CACHE_MAX = 2_000_000
_SHARD_MAX = _STEM_CACHE_MAX // SHARDS


class Tokenizer:
    """Lower-case, split, drop stopwords, stem; a per-process stem cache keeps it fast."""

    spec = {"pattern": TOKEN_PATTERN, "lower": True, "stopwords": "bm25s-en", "stemmer": "english"}

    def __init__(self) -> None:
        import Stemmer  # PyStemmer

        # no PyStemmer cache: ours is below, and PyStemmer's keeps a [stem, counter] list per word,
        # 10 k objects the garbage collector walks in every full collection (single appends stalled)
        self._stemmer = Stemmer.Stemmer("english", 0)
        self._stop = frozenset(STOPWORDS_EN)
        self._stems = ShardedDict()

    def _stem_all(self, words) -> dict[str, str]:
        """word -> stem for each of `words` (stems of earlier calls cached, at most
        _STEM_CACHE_MAX, in shards: a full shard is emptied, never the whole cache at once)."""
        shards = self._stems.shards()
        out: dict[str, str] = {}
        missing = []
        for w in words:               # the shard by hand: no method call per word on the append path
            s = shards[hash(w) & _MASK].get(w)
            if s is None:
                missing.append(w)
            else:
                out[w] = s
        if missing:
            for w, s in zip(missing, self._stemmer.stemWords(missing)):
                out[w] = s
                shard = shards[hash(w) & _MASK]
                if len(shard) >= _SHARD_MAX:
                    shard.clear()
                shard[w] = s
        return out

    def terms(self, text: str, drop: frozenset[str] = frozenset()) -> list[str]:
        """The query's terms in order, duplicates kept (bm25s counts them); `drop` = extra stopwords."""
        words = [w for w in _split(text.lower()) if w not in self._stop and w not in drop]
        stems = self._stem_all(set(words))
        return [stems[w] for w in words]

    def counts(self, text: str) -> tuple[Counter, int]:
        """Term frequencies of a document and its length in tokens (after stopwords)."""
        raw: Counter = Counter()
        for chunk in _chunks(text):
            raw.update(_split(chunk.lower()))
        for w in self._stop.intersection(raw):
            del raw[w]
        out: Counter = Counter()
        get = out.get                 # not `out[s] += c`: a new key would call Counter.__missing__
        shards, missing = self._stems.shards(), []
        for w, c in raw.items():      # cached stems counted in the same pass (the append path)
            s = shards[hash(w) & _MASK].get(w)
            if s is None:
                missing.append(w)
            else:
                out[s] = get(s, 0) + c
        if missing:
            stems = self._stem_all(missing)
            for w in missing:
                s = stems[w]
                out[s] = get(s, 0) + raw[w]
        return out, sum(raw.values())


def _chunks(text: str):
    if len(text) <= _CHUNK:
        yield text
        return
    start, n = 0, len(text)
    while start < n:
        end = min(start + _CHUNK, n)
        if end < n:
            cut = text.rfind(" ", start, end)
            if cut <= start:  # no space: cut at any whitespace, else hard cut
                m = re.search(r"\s", text[end:end + _CHUNK])
                cut = end + m.start() if m else n
            end = cut
        yield text[start:end]
        start = end
