"""Bulk indexing: a batch of documents to segment postings with numpy, not per-term Python.

    bulk = BulkTokens(Tokenizer())
    batch = bulk.postings(docs, model, vocab)      # terms, docs, tfs, dls for write_segment

Same tokens as `Tokenizer` (and so as `bm25s.tokenize`): the same regex on the lower-cased
text, the same stopwords, the same stemmer. What changes is the bookkeeping: each distinct
lower-cased word is looked up once per process (word -> term id, or -1 for a stopword; new
words are stemmed in one call per batch), a batch's tokens become one int array, and the
(doc, term) counts of all fields, weighted by the document model, come from one sort.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, compress, repeat

import numpy as np

from .documents import DocModel, IndexDoc, field_value
from .tokens import Tokenizer, _chunks, _split


@dataclass
class BatchPostings:
    terms: np.ndarray   # int64, sorted by (doc, term)
    docs: np.ndarray    # int64, local doc numbers 0..n-1
    tfs: np.ndarray     # int64, BM25F-weighted term frequencies
    dls: np.ndarray     # int64, weighted document lengths (an empty document counts 1)


class BulkTokens:
    def __init__(self, tok: Tokenizer):
        self.tok = tok
        self._word_tid: dict[str, int] = {}
        self._vocab_ref: dict | None = None

    def _words(self, text: str) -> list[str]:
        if len(text) <= (1 << 20):
            return _split(text.lower())
        return list(chain.from_iterable(_split(c.lower()) for c in _chunks(text)))

    def _ids(self, texts: list[str], vocab: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        """(term ids of every token, -1 for stopwords; tokens per text)."""
        if vocab is not self._vocab_ref:      # a reloaded index has another vocabulary
            self._word_tid, self._vocab_ref = {}, vocab
        per = [self._words(t) for t in texts]
        lens = np.fromiter(map(len, per), dtype=np.int64, count=len(per))
        flat = list(chain.from_iterable(per))
        cache = self._word_tid
        ids = np.fromiter(map(cache.get, flat, repeat(-2)), dtype=np.int64, count=len(flat))
        is_new = ids == -2
        if is_new.any():                      # words never seen by this process: stem them once
            mask = is_new.tolist()
            new = list(dict.fromkeys(compress(flat, mask)))
            stop = self.tok._stop
            keep = [w for w in new if w not in stop]
            for w in new:
                if w in stop:
                    cache[w] = -1
            for w, stem in zip(keep, self.tok._stemmer.stemWords(keep)):
                tid = vocab.get(stem)
                if tid is None:
                    tid = vocab[stem] = len(vocab)
                cache[w] = tid
            ids[is_new] = np.fromiter(map(cache.__getitem__, compress(flat, mask)), dtype=np.int64,
                                      count=int(is_new.sum()))
        return ids, lens

    def _field_ids(self, docs: list[IndexDoc], field: str, use: np.ndarray, vocab: dict[str, int],
                   text: tuple[np.ndarray, np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, doc numbers) of one field over the docs in `use`. The previous turn is the
        previous document's text whenever that was not cut (<= PREV_CHARS): its ids are copied
        from the text field's instead of tokenizing the same words again."""
        if field == "prev" and text is not None:
            t_ids, t_lens, t_off = text
            src = np.full(len(docs), -1, dtype=np.int64)
            last: dict[str, int] = {}
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

    def postings(self, docs: list[IndexDoc], model: DocModel, vocab: dict[str, int]) -> BatchPostings:
        """The batch's (doc, term, weighted tf) triples and weighted lengths; `docs[i].prev` must
        already hold the previous turn (the caller knows the sessions)."""
        n = len(docs)
        everyone = np.arange(n)
        t_ids, t_lens = self._ids([d.text for d in docs], vocab)       # text first: prev reuses it
        text = (t_ids, t_lens, np.cumsum(t_lens) - t_lens)
        t_doc = np.repeat(everyone, t_lens)
        own_len = np.bincount(t_doc[t_ids >= 0], minlength=n)
        all_ids, all_docs, all_w = [], [], []
        dls = np.zeros(n, dtype=np.int64)
        for f, w in model.weights:
            if not w:
                continue
            if f == "text":
                ids, doc_of = t_ids, t_doc
            else:
                use = everyone
                if f == "prev" and model.prev_max_tokens:
                    use = np.flatnonzero(own_len <= model.prev_max_tokens)
                ids, doc_of = self._field_ids(docs, f, use, vocab, text)
            ok = ids >= 0
            ids, doc_of = ids[ok], doc_of[ok]
            dls += w * np.bincount(doc_of, minlength=n)
            all_ids.append(ids)
            all_docs.append(doc_of)
            all_w.append(np.full(len(ids), w, dtype=np.int64))
        dls[dls == 0] = 1          # bm25s keeps an empty document as one empty token
        ids = np.concatenate(all_ids)
        doc_of = np.concatenate(all_docs)
        wts = np.concatenate(all_w)
        width = max(len(vocab), 1)
        keys, inv = np.unique(doc_of * width + ids, return_inverse=True)
        tfs = np.bincount(inv, weights=wts, minlength=len(keys)).astype(np.int64)
        return BatchPostings(keys % width, keys // width, tfs, dls)


__all__ = ["BulkTokens", "BatchPostings"]
