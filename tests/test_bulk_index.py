"""Bulk indexing: the same tokens as bm25s, and the same index as one-by-one appends."""
from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from scroll import EventLog
from scroll.search import IndexDoc
from scroll.search.bulk import BulkTokens
from scroll.search.documents import DocModel
from scroll.search.index import BULK_MIN_DOCS
from scroll.search.tokens import Tokenizer
from scroll.search.vocab import Vocabulary


def _corpora():
    from scroll.bench.corpus import generate
    out = {"chat+long passages": generate(30_000, seed=5, long_share=0.3).events}
    try:
        from scroll.bench.shapes import SHAPES, generate_shape
        for shape in SHAPES:
            out[shape] = generate_shape(shape, 30_000, seed=5).events
    except ImportError:  # pragma: no cover - the shapes module is part of the package
        pass
    out["odd text"] = [{"session": "z", "role": "u", "text": t} for t in
                       ["", "   ", "ÉCOLE école Straße naïve café_au_lait x y z", "foo_bar FOO_BAR foo-bar 3.14 2023",
                        "the and of", "日本語 テキスト", "a" * 3000 + " tail", "\u00a0nbsp\u2003em space"]]
    return out


@pytest.mark.parametrize("name", sorted(_corpora()))
def test_bulk_tokens_equal_bm25s_tokenize_on_every_event(name):
    import bm25s
    import Stemmer

    events = _corpora()[name]
    texts = [e["text"] for e in events]
    vocab = Vocabulary()
    docs = [IndexDoc(i + 1, e["session"], "message", e.get("role", ""), "", e["text"]) for i, e in enumerate(events)]
    bp = BulkTokens(Tokenizer()).postings(docs, DocModel((("text", 1),), scale=1), vocab)
    terms = dict(enumerate(vocab.terms))
    ours = [Counter() for _ in texts]
    for d, t, tf in zip(bp.docs.tolist(), bp.terms.tolist(), bp.tfs.tolist()):
        ours[d][terms[t]] += tf
    ref = bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), return_ids=False,
                         show_progress=False)
    for i, r in enumerate(ref):
        assert ours[i] == Counter(r), (name, texts[i][:80])
        assert bp.dls[i] == max(1, len(r))


@pytest.mark.parametrize("name", sorted(_corpora()))
def test_bulk_fields_equal_the_tail_path_on_every_event(name):
    """Every field of the default document model (text, speaker, month/year, identifier words),
    weighted: the bulk word table gives each event the counts and length DocModel.counts gives
    it one event at a time (which calls identifier_parts on the whole text)."""
    from scroll.search.documents import DEFAULT_MODEL

    events = _corpora()[name]
    rng = random.Random(7)
    docs = [IndexDoc(i + 1, e["session"], "message", e.get("role", ""),
                     e.get("time") or f"2023-{rng.randint(1, 12):02d}-03T10:00:00", e["text"])
            for i, e in enumerate(events)]
    docs += [IndexDoc(len(docs) + 1, "z", "tool_result", "tool", "", t) for t in
             ("parseHTTPResponse() raised in http_client.py: user_id=None, retryCount 3, XMLHttpRequest",
              "İstanbul_Office camelCase_with_snake ID_42 a_b _x_ x__y ÀbcDef")]
    separate = DocModel.of({"text": 4, "role": 2, "date": 2, "parts": 4}, scale=4, separate=("role", "date"))
    for model in (DEFAULT_MODEL, separate):
        vocab = Vocabulary()
        bp = BulkTokens(Tokenizer()).postings(docs, model, vocab)
        terms = dict(enumerate(vocab.terms))
        ours = [Counter() for _ in docs]
        for d, t, tf in zip(bp.docs.tolist(), bp.terms.tolist(), bp.tfs.tolist()):
            ours[d][terms[t]] += tf
        tok = Tokenizer()
        for i, d in enumerate(docs):
            want, length = model.counts(d, tok.counts)
            assert ours[i] == +want, (name, model, d.text[:80])
            assert bp.dls[i] == max(1, length)


MODEL = DocModel((("text", 4), ("role", 1), ("date", 2), ("prev", 1)), scale=4, prev_max_tokens=15)


def _rows(n, seed):
    rng = random.Random(seed)
    words = "apple banana cherry delta echo river saddle timber violet walnut run running ran bicycles".split()
    return [{"session": f"s{rng.randint(0, 12)}", "role": rng.choice(["user", "assistant", "Ann"]),
             "text": " ".join(rng.choice(words) for _ in range(rng.randint(0, 40))),
             "time": f"2023-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00"} for i in range(n)]


def test_bulk_index_equals_one_by_one_index(tmp_path):
    rows = _rows(3 * BULK_MIN_DOCS, seed=1)
    bulk = EventLog(tmp_path / "b.db", index_options={"doc_model": MODEL})
    bulk.search("warm")
    bulk.append_many(rows[:200])                          # the tail first, then bulk batches
    bulk.append_many(rows[200:200 + BULK_MIN_DOCS])
    bulk.append_many(rows[200 + BULK_MIN_DOCS:])
    assert len(bulk.index.segments) >= 2 and bulk.index.n_tail == 0
    one = EventLog(tmp_path / "o.db", index_options={"doc_model": MODEL, "flush_docs": 10 ** 6})
    one.search("warm")
    for r in rows:
        one.append(**r)
    assert one.index.n_tail == len(rows) and not one.index.segments
    rng = random.Random(2)
    for _ in range(80):
        q = " ".join(rng.sample("apple banana cherry delta echo river Ann user January May run".split(),
                                rng.randint(1, 4)))
        a, b = bulk.search(q, k=20), one.search(q, k=20)
        assert [h.seq for h in a] == [h.seq for h in b], q
        assert np.allclose([h.score for h in a], [h.score for h in b], rtol=1e-12, atol=0), q


def test_a_rebuilt_index_equals_the_live_one(tmp_path):
    rows = _rows(2500, seed=3)
    log = EventLog(tmp_path / "r.db", index_options={"doc_model": MODEL})
    log.search("warm")
    log.append_many(rows)
    before = [[(h.seq, h.score) for h in log.search(q, k=15)] for q in ("apple", "river run", "Ann cherry")]
    log.index.rebuild()
    after = [[(h.seq, h.score) for h in log.search(q, k=15)] for q in ("apple", "river run", "Ann cherry")]
    assert before == after and before[0]


def test_a_failed_bulk_write_falls_back_to_the_tail(tmp_path, monkeypatch):
    from scroll.search import index as index_mod
    log = EventLog(tmp_path / "f.db", index_options={"doc_model": MODEL})
    log.search("warm")

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(index_mod, "write_segment", boom)
    rows = _rows(BULK_MIN_DOCS + 10, seed=4)
    seqs = log.append_many(rows)
    assert log.index.n_tail == len(rows)
    hits = log.search(rows[-1]["text"].split()[0] if rows[-1]["text"] else "apple", k=5000)
    assert hits and all(h.seq in seqs for h in hits)


def test_one_huge_append_many_becomes_segments_of_flush_docs(tmp_path):
    rows = _rows(3 * BULK_MIN_DOCS + 500, seed=6)
    log = EventLog(tmp_path / "h.db", index_options={"doc_model": MODEL, "flush_docs": BULK_MIN_DOCS,
                                                      "max_segments": 50})
    log.search("warm")
    log.append_many(rows)                      # one transaction, as `scroll import` does
    idx = log.index
    assert [s.n_docs for s in idx.segments] == [BULK_MIN_DOCS] * 3 and idx.n_tail == 500
    assert idx.n_docs == len(rows)


def _postings_by_term(bp, vocab):
    out: dict = {}
    for d, t, tf in zip(bp.docs.tolist(), bp.terms.tolist(), bp.tfs.tolist()):
        out[(d, vocab.terms[t])] = tf
    return out, bp.dls.tolist()


def _docs(events):
    return [IndexDoc(i + 1, e["session"], "message", e.get("role", ""), e.get("time") or "2023-05-01T10:00:00",
                     e["text"]) for i, e in enumerate(events)]


@pytest.mark.parametrize("name", sorted(_corpora()))
def test_the_splitter_process_gives_the_local_postings(name):
    from scroll.search.documents import DEFAULT_MODEL

    docs = _docs(_corpora()[name])
    local_vocab = Vocabulary()
    want = _postings_by_term(BulkTokens(Tokenizer()).postings(docs, DEFAULT_MODEL, local_vocab), local_vocab)
    bulk, vocab = BulkTokens(Tokenizer()), Vocabulary()
    try:
        bulk.presplit([d.text for d in docs], vocab)                 # what append_many does before its commit
        got = _postings_by_term(bulk.postings(docs, DEFAULT_MODEL, vocab), vocab)
        assert bulk._splitter is not None and not bulk._splitter.failed
        assert got == want
        half = len(docs) // 2                                       # slices of a presplit batch, then others
        bulk.presplit([d.text for d in docs], vocab)
        a = bulk.postings(docs[half:], DEFAULT_MODEL, vocab)         # found after the batch's cursor
        b = bulk.postings(docs[:half], DEFAULT_MODEL, vocab)         # not: asked for again
        ref_vocab = Vocabulary()
        ref = BulkTokens(Tokenizer())
        assert (_postings_by_term(a, vocab) == _postings_by_term(ref.postings(docs[half:], DEFAULT_MODEL, ref_vocab), ref_vocab)
                and _postings_by_term(b, vocab) == _postings_by_term(ref.postings(docs[:half], DEFAULT_MODEL, ref_vocab), ref_vocab))
    finally:
        bulk.close()


def test_a_dead_splitter_falls_back_to_splitting_in_process(caplog):
    from scroll.search.documents import DEFAULT_MODEL

    docs = _docs(_corpora()["tool"])
    ref_vocab = Vocabulary()
    want = _postings_by_term(BulkTokens(Tokenizer()).postings(docs, DEFAULT_MODEL, ref_vocab), ref_vocab)
    bulk, vocab = BulkTokens(Tokenizer()), Vocabulary()
    bulk.presplit([d.text for d in docs[:50]], vocab)
    bulk.postings(docs[:50], DEFAULT_MODEL, vocab)                   # the helper numbered some words
    bulk.presplit([d.text for d in docs], vocab)
    bulk._splitter._proc.kill()                                     # it dies with a request in flight
    got = _postings_by_term(bulk.postings(docs, DEFAULT_MODEL, vocab), vocab)
    assert got == want and bulk._splitter is None and not bulk._remote_ok
    assert "splitter process failed" in caplog.text
    bulk.presplit([d.text for d in docs], vocab)                     # stays in process from now on
    assert bulk._splitter is None
    assert _postings_by_term(bulk.postings(docs, DEFAULT_MODEL, vocab), vocab) == want


def test_append_many_splits_big_batches_in_the_helper(tmp_path):
    rows = _rows(2 * BULK_MIN_DOCS, seed=4)
    with EventLog(tmp_path / "h.db", index_options={"doc_model": MODEL}) as log:
        log.search("warm")
        log.append_many(rows)
        splitter = log.index._bulk._splitter
        assert splitter is not None and not splitter.failed and splitter._proc.poll() is None
        proc = splitter._proc
        assert [h.seq for h in log.search("apple river", k=5)]
    assert proc.poll() is not None                                   # closed with the log


def test_a_silent_splitter_times_out_and_indexing_goes_on(monkeypatch):
    import signal

    from scroll.search import splitter as S
    from scroll.search.documents import DEFAULT_MODEL

    docs = _docs(_corpora()["chat+long passages"][:300])
    ref_vocab = Vocabulary()
    want = _postings_by_term(BulkTokens(Tokenizer()).postings(docs, DEFAULT_MODEL, ref_vocab), ref_vocab)
    monkeypatch.setattr(S, "ANSWER_TIMEOUT_S", 0.5)
    bulk, vocab = BulkTokens(Tokenizer()), Vocabulary()
    bulk.presplit([d.text for d in docs], vocab)
    proc = bulk._splitter._proc
    proc.send_signal(signal.SIGSTOP)                             # alive, but never answers
    try:
        assert _postings_by_term(bulk.postings(docs, DEFAULT_MODEL, vocab), vocab) == want
        assert bulk._splitter is None and not bulk._remote_ok
    finally:
        proc.send_signal(signal.SIGCONT)
    assert proc.wait(timeout=10) is not None                     # closed and reaped


def test_summed_equals_unique_and_bincount_also_past_the_packing_limit():
    from scroll.search.bulk import _summed

    rng = np.random.default_rng(3)
    for hi in (50, 10**6, 1 << 60):                  # 1 << 60: too wide to pack, the general way
        keys = rng.integers(0, hi, 20_000, dtype=np.int64)
        wts = rng.integers(1, 9, 20_000, dtype=np.int64)
        uniq, inv = np.unique(keys, return_inverse=True)
        got_keys, got_sums = _summed(keys, wts)
        assert np.array_equal(got_keys, uniq)
        assert np.array_equal(got_sums, np.bincount(inv, weights=wts).astype(np.int64))
    empty = np.zeros(0, dtype=np.int64)
    assert [len(a) for a in _summed(empty, empty)] == [0, 0]
