"""Bulk indexing: a batch of documents to segment postings with numpy, not per-term Python.

    bulk = BulkTokens(Tokenizer())
    batch = bulk.postings(docs, model, vocab)      # terms, docs, tfs, dls for write_segment

Same tokens as `Tokenizer` (and so as `bm25s.tokenize`): the same regex, the same stopwords,
the same stemmer. What changes is the bookkeeping. Each distinct word *as written* is analysed
once per process (`_Words`): its term ids (lower-cased, re-split, stopwords dropped, stemmed,
usually one id or none) and the term ids of its identifier words (`documents.identifier_parts`
of that one token). A batch's texts are split once, their words become one int array of word
numbers, and every field's term ids are gathered from the word table with numpy; the (doc,
term) counts of all fields, weighted by the document model, come from one sort.

Why splitting the text as written and lower-casing per word gives bm25s's tokens exactly: no
character that is not `\\w` lower-cases to a `\\w` character (checked over all of Unicode), so
the boundaries of the lower-cased text are those of the original; inside a word, lower-casing
can only split it (U+0130 becomes "i" + a combining dot, which is not `\\w`), which the per-word
re-split reproduces. An identifier core lies inside one word, so identifier_parts of a text is
the concatenation of identifier_parts of its words (tests check both on every benchmark event).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from itertools import chain

import numpy as np

from .documents import DocModel, IndexDoc, field_term, field_value
from .splitter import Job, Splitter, SplitterError
from .tokens import Tokenizer, _chunks
from .vocab import Vocabulary
from .wordnums import WordNumbers
from .words import analyse


logger = logging.getLogger(__name__)


@dataclass
class BatchPostings:
    terms: np.ndarray   # int64, sorted by (term, doc)
    docs: np.ndarray    # int64, local doc numbers 0..n-1
    tfs: np.ndarray     # int64, BM25F-weighted term frequencies
    dls: np.ndarray     # int64, weighted document lengths (an empty document counts 1)


@dataclass
class BulkBatch:
    """A batch ready to be written as a segment: its per-doc columns (`segment.write_segment`'s
    meta), its postings, and each session's latest text after it (the `prev` field's state)."""

    meta: dict
    postings: BatchPostings
    last_text: dict[str, str]


class _Ragged:
    """Rows of term ids, one row per word number; grown a batch at a time."""

    def __init__(self) -> None:
        self.lens = np.zeros(0, dtype=np.int64)
        self.starts = np.zeros(0, dtype=np.int64)
        self.flat = np.zeros(0, dtype=np.int64)

    def extend(self, lens, ids: np.ndarray) -> None:
        lens = np.asarray(lens, dtype=np.int64)
        self.starts = np.concatenate([self.starts, len(self.flat) + np.cumsum(lens) - lens])
        self.lens = np.concatenate([self.lens, lens])
        self.flat = np.concatenate([self.flat, ids])

    def gather(self, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the rows of `words` concatenated, each word's row length)."""
        lens = self.lens[words]
        total = int(lens.sum())
        if total == 0:
            return np.zeros(0, dtype=np.int64), lens
        first = np.repeat(self.starts[words] - (np.cumsum(lens) - lens), lens)
        return self.flat[first + np.arange(total)], lens


class _Words:
    """Every distinct word (as written) numbered so far -> per number the term ids of the word
    (`text`) and of its identifier words (`parts`). Local numbering (`number`) keeps its own
    WordNumbers, made on first use; with the splitter, the helper numbers and `add_analysed` gets
    its words' analyses in its order."""

    def __init__(self, tok: Tokenizer, vocab: Vocabulary):
        self.tok, self.vocab = tok, vocab
        self._numbering: WordNumbers | None = None     # the splitter's table never numbers here
        self.text, self.parts = _Ragged(), _Ragged()

    def add_analysed(self, analysed: tuple[list[str], list[int], list[str], list[int]]) -> None:
        """Rows for the next words, from `words.analyse` (their terms become term ids here)."""
        terms, lens, part_terms, part_lens = analysed
        ids = self.vocab.ids(terms + part_terms)
        self.text.extend(lens, ids[:len(terms)])
        self.parts.extend(part_lens, ids[len(terms):])

    def number(self, pieces: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(the word number of every word of the pieces, words per piece); new words are analysed."""
        if self._numbering is None:
            self._numbering = WordNumbers()
        nums, per_piece, new = self._numbering.number(pieces)
        if new:
            self.add_analysed(analyse(new, self.tok._stemmer.stemWords))
        return nums, per_piece


@dataclass
class _Presplit:
    """A batch whose first `sent` texts went to the splitter ahead of indexing (`presplit`)."""

    texts: list[str]
    sent: int
    pieces: np.ndarray     # pieces sent per text (a text over 1 MiB goes as its chunks)
    job: Job
    cursor: int = 0        # where the next slice of the batch is expected


class BulkTokens:
    """Words are numbered in two tables: `_local` (here) and `_remote` (by the splitter process,
    for the share of a presplit batch sent to it). `presplit` sends the first `share` of a batch
    to the helper; `postings` splits the rest here meanwhile, then takes the helper's answer.
    `share` follows the measured balance (down when this process waited for the helper, up when
    it did not), so both cores finish about together. A failing splitter is closed, and from
    then on everything is split here."""

    SHARE_MIN, SHARE_MAX, SHARE_STEP, WAIT_S = 0.2, 0.95, 0.05, 0.02

    def __init__(self, tok: Tokenizer):
        self.tok = tok
        self._vocab: Vocabulary | None = None
        self._local: _Words | None = None
        self._remote: _Words | None = None
        self._splitter: Splitter | None = None
        self._pre: _Presplit | None = None
        self._remote_ok = True
        self.share = 0.7

    def _table(self, vocab: Vocabulary) -> _Words:
        if self._vocab is not vocab:      # a reloaded index has another vocabulary: new tables
            self.close()
            self._vocab, self._local = vocab, _Words(self.tok, vocab)
        return self._local

    def close(self) -> None:
        self._pre, self._remote = None, None
        if self._splitter is not None:
            self._splitter.close()
            self._splitter = None

    def presplit(self, texts: list[str], vocab: Vocabulary) -> None:
        """Start splitting the first `share` of a batch that is about to be indexed, in the
        helper process, while the caller does other work (the commit); `postings` over docs
        holding these very text objects, or a contiguous run of them, then uses the answer."""
        self._table(vocab)
        if not self._remote_ok:
            return
        if self._splitter is None:
            self._remote = _Words(self.tok, vocab)
            self._splitter = Splitter(on_new=self._remote.add_analysed)
        sent = max(1, round(self.share * len(texts)))
        pieces, per = _pieces(texts[:sent])
        try:
            self._pre = _Presplit(texts, sent, per, self._splitter.submit(pieces))
        except SplitterError as e:
            self._give_up(e)

    def _give_up(self, e: Exception) -> None:
        logger.warning("bulk indexing: the splitter process failed (%s); splitting in process from now on", e)
        self._remote_ok = False
        self.close()

    def _presplit_run(self, texts: list[str]) -> tuple[_Presplit, int] | None:
        """(the presplit batch, where `texts` starts in it) if `texts` is a contiguous run of it."""
        pre = self._pre
        if pre is None or not texts:
            return None
        first = texts[0]
        at = next((i for i in range(pre.cursor, len(pre.texts)) if pre.texts[i] is first), None)
        if at is None or at + len(texts) > len(pre.texts) or any(
                a is not b for a, b in zip(pre.texts[at:at + len(texts)], texts)):
            return None
        pre.cursor = at + len(texts)
        return pre, at

    def _answer(self, pre: _Presplit, at: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Word numbers and words per text of pre.texts[at:at + n] (all sent) from the helper;
        the wait, if any, moves `share`."""
        t0 = time.perf_counter()
        _, nums, lens = pre.job.result()
        waited = time.perf_counter() - t0
        if pre.cursor >= pre.sent:        # the batch's answer is used up: rebalance once per batch
            step = -self.SHARE_STEP if waited > self.WAIT_S else self.SHARE_STEP
            self.share = min(self.SHARE_MAX, max(self.SHARE_MIN, self.share + step))
        piece_end = np.concatenate([[0], np.cumsum(pre.pieces)])
        words_end = np.concatenate([[0], np.cumsum(np.frombuffer(lens, dtype=np.int64))])
        lo, hi = words_end[piece_end[at]], words_end[piece_end[at + n]]
        per_piece = np.diff(words_end[piece_end[at]:piece_end[at + n] + 1])
        per_text = np.add.reduceat(per_piece, piece_end[at:at + n] - piece_end[at])
        return np.frombuffer(nums, dtype=np.int32)[lo:hi].astype(np.int64), per_text.astype(np.int64)

    def _split_here(self, texts: list[str]) -> tuple[_Words, np.ndarray, np.ndarray]:
        pieces, per = _pieces(texts)
        nums, per_piece = self._local.number(pieces)
        if len(pieces) == len(texts):
            return self._local, nums, per_piece
        return self._local, nums, np.add.reduceat(per_piece, np.cumsum(per) - per)

    def _split(self, texts: list[str], vocab: Vocabulary) -> list[tuple[_Words, np.ndarray, np.ndarray]]:
        """Consecutive runs of `texts` as (word table, word numbers of their words, words per text)."""
        self._table(vocab)
        run = self._presplit_run(texts)
        if run is None:
            return [self._split_here(texts)]
        pre, at = run
        k = max(0, min(len(texts), pre.sent - at))          # how many of `texts` the helper has
        here = [self._split_here(texts[k:])] if k < len(texts) else []   # ours first, while it works
        if not k:
            return here
        try:
            nums, lens = self._answer(pre, at, k)
            return [(self._remote, nums, lens)] + here
        except SplitterError as e:
            self._give_up(e)
            return [self._split_here(texts[:k])] + here

    def _ids(self, texts: list[str], vocab: Vocabulary) -> tuple[np.ndarray, np.ndarray]:
        """(term ids of the texts' words, ids per text)."""
        ids, per_text = _gather(self._split(texts, vocab), "text")
        return ids, per_text

    def _field_term_ids(self, docs: list[IndexDoc], field: str, vocab: Vocabulary) -> tuple[np.ndarray, np.ndarray]:
        """(ids, doc numbers) of a separate field's terms (`documents.field_term`); its values are
        few (speakers, months), each tokenized once."""
        values = [field_value(d, field) for d in docs]
        rows = {v: [vocab.id(field_term(field, t)) for t in self.tok.terms(v)] for v in dict.fromkeys(values)}
        per = [rows[v] for v in values]
        lens = np.fromiter(map(len, per), dtype=np.int64, count=len(per))
        return (np.fromiter(chain.from_iterable(per), dtype=np.int64, count=int(lens.sum())),
                np.repeat(np.arange(len(docs)), lens))

    def _field_ids(self, docs: list[IndexDoc], field: str, use: np.ndarray, vocab: Vocabulary,
                   text: tuple[np.ndarray, np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, doc numbers) of one field over the docs in `use`. The previous turn is the
        previous document's text whenever that was not cut (<= PREV_CHARS): its ids are copied
        from the text field's instead of tokenizing the same words again."""
        if field == "prev" and text is not None:
            t_ids, t_lens, t_off = text
            src = np.full(len(docs), -1, dtype=np.int64)
            last: Vocabulary = {}
            for i, d in enumerate(docs):
                j = last.get(d.session)
                if j is not None and d.prev and (d.prev is docs[j].text or d.prev == docs[j].text):
                    src[i] = j
                last[d.session] = i
            reuse = use[src[use] >= 0]
            fresh = use[src[use] < 0]
            f_ids, f_lens = self._ids([docs[i].prev for i in fresh], vocab)
            r_lens = t_lens[src[reuse]]
            starts = np.repeat(t_off[src[reuse]] - np.cumsum(r_lens) + r_lens, r_lens)
            r_ids = t_ids[starts + np.arange(int(r_lens.sum()))]
            return (np.concatenate([f_ids, r_ids]),
                    np.concatenate([np.repeat(fresh, f_lens), np.repeat(reuse, r_lens)]))
        if field in ("role", "date"):         # few distinct values: tokenize each once
            values = [field_value(docs[i], field) for i in use]
            distinct = list(dict.fromkeys(values))
            d_ids, d_lens = self._ids(distinct, vocab)
            d_off = np.concatenate([[0], np.cumsum(d_lens)])
            which = np.fromiter(map({v: k for k, v in enumerate(distinct)}.__getitem__, values), np.int64, len(values))
            lens = d_lens[which]
            starts = np.repeat(d_off[which] - np.cumsum(lens) + lens, lens)
            return d_ids[starts + np.arange(int(lens.sum()))], np.repeat(use, lens)
        ids, lens = self._ids([field_value(docs[i], field) for i in use], vocab)
        return ids, np.repeat(use, lens)

    def postings(self, docs: list[IndexDoc], model: DocModel, vocab: Vocabulary) -> BatchPostings:
        """The batch's (doc, term, weighted tf) triples and weighted lengths; `docs[i].prev` must
        already hold the previous turn (the caller knows the sessions)."""
        n = len(docs)
        everyone = np.arange(n)
        runs = self._split([d.text for d in docs], vocab)         # text first: prev and parts reuse it
        t_ids, t_lens = _gather(runs, "text")
        text = (t_ids, t_lens, np.cumsum(t_lens) - t_lens)
        t_doc = np.repeat(everyone, t_lens)
        all_ids, all_docs, all_w = [], [], []
        dls = np.zeros(n, dtype=np.int64)
        for f, w in model.weights:
            if not w:
                continue
            if f == "text":
                ids, doc_of = t_ids, t_doc
            elif f == "parts":
                ids, per_text = _gather(runs, "parts")
                doc_of = np.repeat(everyone, per_text)
            elif f in model.separate:       # field terms: raw tf, nothing added to the length
                ids, doc_of = self._field_term_ids(docs, f, vocab)
                all_ids.append(ids)
                all_docs.append(doc_of)
                all_w.append(np.ones(len(ids), dtype=np.int64))
                continue
            else:
                use = everyone
                if f == "prev" and model.prev_max_tokens:
                    use = np.flatnonzero(t_lens <= model.prev_max_tokens)
                ids, doc_of = self._field_ids(docs, f, use, vocab, text)
            dls += w * np.bincount(doc_of, minlength=n)
            all_ids.append(ids)
            all_docs.append(doc_of)
            all_w.append(np.full(len(ids), w, dtype=np.int64))
        dls[dls == 0] = 1          # bm25s keeps an empty document as one empty token
        ids = np.concatenate(all_ids)
        doc_of = np.concatenate(all_docs)
        wts = np.concatenate(all_w)
        # one sort by (term, doc): the segment's posting order, so write_segment's stable sort by
        # term meets sorted input
        width = max(n, 1)
        keys, tfs = _summed(ids * width + doc_of, wts)
        return BatchPostings(keys // width, keys % width, tfs, dls)


def _summed(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys in ascending order and the sum of the weights of each. The weights
    (small, >= 1) ride in the low bits of the keys through one value sort: numpy sorts plain
    int64 values with SIMD, 4x faster here than np.unique's argsort + inverse (1.5 M keys)."""
    if not len(keys):
        return keys, weights.astype(np.int64)
    bits = int(weights.max()).bit_length()
    if int(keys.max()) >= (1 << (62 - bits)):       # would not fit: the general way
        uniq, inv = np.unique(keys, return_inverse=True)
        return uniq, np.bincount(inv, weights=weights, minlength=len(uniq)).astype(np.int64)
    packed = np.sort((keys << bits) | weights)
    only = packed >> bits
    starts = np.flatnonzero(np.concatenate(([True], only[1:] != only[:-1])))
    return only[starts], np.add.reduceat(packed & ((1 << bits) - 1), starts)


def _pieces(texts: list[str]) -> tuple[list[str], np.ndarray]:
    """The texts as the splitter gets them (one over 1 MiB as its `_chunks`), and pieces per text."""
    if all(len(t) <= (1 << 20) for t in texts):
        return texts, np.ones(len(texts), dtype=np.int64)
    pieces, per = [], []
    for t in texts:
        chunks = [t] if len(t) <= (1 << 20) else list(_chunks(t))
        pieces.extend(chunks)
        per.append(len(chunks))
    return pieces, np.asarray(per, dtype=np.int64)


def _gather(runs: list[tuple[_Words, np.ndarray, np.ndarray]], rows: str) -> tuple[np.ndarray, np.ndarray]:
    """The term ids (`rows`: "text" or "parts") of every word of the runs, and ids per text."""
    ids, per_text = [], []
    for table, nums, words in runs:
        got, per_word = getattr(table, rows).gather(nums)
        ids.append(got)
        per_text.append(_per_text(per_word, words))
    if not ids:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(ids), np.concatenate(per_text)


def _per_text(per_word: np.ndarray, words: np.ndarray) -> np.ndarray:
    """Sum of per-word counts within each text (`words` = words per text)."""
    if len(per_word) == 0:
        return np.zeros(len(words), dtype=np.int64)
    ends = np.cumsum(words)
    sums = np.concatenate([[0], np.cumsum(per_word)])
    return sums[ends] - sums[ends - words]


__all__ = ["BulkTokens", "BatchPostings", "BulkBatch"]
