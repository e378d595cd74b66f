"""SearchIndex: exact global BM25 across segments + tail, filters, freshness, rebuild."""
from __future__ import annotations

import random

import numpy as np
import pytest

from scroll import EventLog
from scroll.search import IndexDoc
from scroll.search.documents import PREV_CHARS, document_text, identifier_parts
from scroll.search.tokens import QUESTION_WORDS

WORDS = ("apple banana cherry delta echo falcon garden harbor island jungle kettle lemon meadow "
         "nickel orange pepper quartz river saddle timber umbrella violet walnut xenon yellow zephyr "
         "running runner runs ran bicycle bicycles paris london tokyo berlin coffee tea doctor "
         "appointment birthday concert salary promotion marathon recipe").split()


def _corpus(n, seed=0):
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        length = rng.randint(3, 40)
        # Zipf-ish word choice so df varies a lot
        text = " ".join(WORDS[min(int(rng.paretovariate(1.2)) - 1, len(WORDS) - 1)] if rng.random() < 0.5
                        else rng.choice(WORDS) for _ in range(length))
        rows.append({"session": f"s{rng.randint(0, 9)}", "role": rng.choice(["user", "assistant", "Ann"]),
                     "text": text, "kind": rng.choice(["message", "tool_result"]),
                     "origin": rng.choice(["history", "history", "agent", "system"]),
                     "time": f"2023-05-{1 + i % 28:02d}T10:00:00Z"})
    return rows


def _reference_top(texts, seqs, query, k, k1, b):
    import bm25s
    import Stemmer

    stem = Stemmer.Stemmer("english")
    ret = bm25s.BM25(k1=k1, b=b, method="lucene")
    ret.index(bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False), show_progress=False)
    tokens = bm25s.tokenize([query], stopwords=list(bm25s.stopwords.STOPWORDS_EN) + sorted(QUESTION_WORDS),
                            stemmer=stem, return_ids=False, show_progress=False)[0]
    tokens = [t for t in tokens if t in ret.vocab_dict]
    if not tokens:
        return []
    scores = ret.get_scores(tokens)
    order = sorted(range(len(texts)), key=lambda i: (-scores[i], -seqs[i]))
    return [seqs[i] for i in order[:k] if scores[i] > 0]


@pytest.mark.parametrize("flush_docs,max_segments", [(37, 3), (100000, 8)])
def test_exact_global_bm25_matches_single_bm25s_index(tmp_path, flush_docs, max_segments):
    from scroll.search.documents import DocModel

    rows = _corpus(600)
    plain = DocModel()          # the default's weights, every field in the one BM25F sum (bm25s's reference;
                                # separate fields are checked against their formula below)
    log = EventLog(tmp_path / "s.db", index_options={"flush_docs": flush_docs, "max_segments": max_segments,
                                                     "doc_model": plain})
    log.search("warm")  # create the index so appends keep it up to date
    for r in rows[:300]:
        log.append(**r)
    log.append_many(rows[300:])
    idx = log.index
    if flush_docs == 37:
        assert len(idx.segments) <= 3 and idx.n_tail > 0, "expected merged segments plus a live tail"
    texts, last = [], {}
    model = idx.doc_model
    for e in log.expand(1, 600):  # the documents as defined, each field repeated by its weight (BM25F)
        doc = IndexDoc(e.seq, e.session, e.kind, e.role, e.time, e.text, last.get(e.session, ""))
        texts.append("\n".join(document_text(doc, (f,)) for f, w in model.weights for _ in range(w)))
        last[e.session] = e.text[:PREV_CHARS]
    assert idx.fields == ("text", "role", "date", "parts")
    seqs = list(range(1, 601))
    rng = random.Random(5)
    overlaps = []
    for _ in range(60):
        query = " ".join(rng.sample(WORDS + ["what", "when", "did", "May"], rng.randint(1, 4)))
        ours = [h.seq for h in log.search(query, k=10)]
        ref = _reference_top(texts, seqs, query, 10, idx.k1 * model.scale, idx.b)
        overlaps.append(len(set(ours) & set(ref)) / len(ref) if ref else float(not ours))
    assert np.mean(overlaps) >= 0.99, np.mean(overlaps)


@pytest.mark.parametrize("flush_docs", [41, 100000])
def test_bm25f_weights_match_bm25s_over_fields_repeated_by_weight(tmp_path, flush_docs):
    """BM25F with integer weights w/scale == one bm25s index over documents that repeat each field
    w times, with k1 * scale; the previous turn only for events of <= prev_max_tokens own tokens."""
    from scroll.search.documents import DocModel, field_value
    from scroll.search.tokens import Tokenizer

    model = DocModel((("text", 4), ("role", 1), ("date", 2), ("prev", 1)), scale=4, prev_max_tokens=12)
    rows = _corpus(500, seed=3)
    log = EventLog(tmp_path / "f.db", index_options={"flush_docs": flush_docs, "doc_model": model})
    log.append_many(rows[:250])
    log.search("warm")
    for r in rows[250:]:
        log.append(**r)
    idx, tok = log.index, Tokenizer()
    assert idx.doc_model == model and idx.fields == ("text", "role", "date", "prev")
    texts, last, with_prev = [], {}, 0
    for e in log.expand(1, 500):
        doc = IndexDoc(e.seq, e.session, e.kind, e.role, e.time, e.text, last.get(e.session, ""))
        parts = []
        for f, w in model.weights:
            if f == "prev" and tok.counts(e.text)[1] > model.prev_max_tokens:
                continue
            with_prev += f == "prev" and bool(doc.prev)
            parts += [field_value(doc, f)] * w
        texts.append("\n".join(parts))
        last[e.session] = e.text[:PREV_CHARS]
    assert 50 < with_prev < 450   # the rule really splits the corpus
    rng = random.Random(9)
    for _ in range(60):
        query = " ".join(rng.sample(WORDS + ["May", "Ann"], rng.randint(1, 4)))
        ours = [h.seq for h in log.search(query, k=10)]
        ref = _reference_top(texts, list(range(1, 501)), query, 10, idx.k1 * model.scale, idx.b)
        assert ours == ref, query


def _separate_model():
    from scroll.search.documents import DocModel
    return DocModel.of({"text": 4, "role": 2, "date": 3, "parts": 4}, scale=4, separate=("role", "date"))


def _reference_separate(rows, query, model, k1, b):
    """Scores by the formula, term by term: BM25F over text + parts (weights w / scale, one
    saturation, the document's weighted length), plus each separate field on its own: weight
    w_f / scale, raw tf, tf / (tf + k1), its own df."""
    import math
    from collections import Counter

    from scroll.search.documents import field_value
    from scroll.search.tokens import QUESTION_WORDS, Tokenizer
    tok, w = Tokenizer(), dict(model.weights)
    docs = [IndexDoc(i + 1, r["session"], "message", r["role"], r.get("time") or "", r["text"]) for i, r in enumerate(rows)]
    bm, sep, dls = [], [], []
    for d in docs:
        c, length = Counter(), 0
        for f in ("text", "parts"):
            fc, n = tok.counts(field_value(d, f))
            for t, x in fc.items():
                c[t] += w[f] * x
            length += w[f] * n
        bm.append(c)
        dls.append(max(length, 1))
        sep.append({f: tok.counts(field_value(d, f))[0] for f in model.separate})
    n, avgdl = len(docs), sum(dls) / len(dls)
    q = Counter(tok.terms(query, QUESTION_WORDS))
    q.update(tok.terms(identifier_parts(query), QUESTION_WORDS))

    def idf(df):
        return math.log(1 + (n - df + 0.5) / (df + 0.5))
    scores = [0.0] * n
    for t, qtf in q.items():
        df = sum(1 for c in bm if c[t])
        for i, c in enumerate(bm):
            if c[t]:
                scores[i] += qtf * idf(df) * c[t] / (c[t] + k1 * model.scale * (1 - b + b * dls[i] / avgdl))
        for f in model.separate:
            df = sum(1 for s in sep if s[f][t])
            for i, s in enumerate(sep):
                tf = s[f][t]
                if tf:
                    scores[i] += qtf * (w[f] / model.scale) * idf(df) * tf / (tf + k1)
    return {i + 1: x for i, x in enumerate(scores) if x > 0}


@pytest.mark.parametrize("flush_docs", [10**6, 90])
def test_separate_fields_score_by_the_formula(tmp_path, flush_docs):
    from scroll.search import topk

    model = _separate_model()
    rows = _corpus(400, seed=21)
    rng = random.Random(4)
    for r in rows:
        r["role"] = rng.choice(["Ann", "Bob Stone", "user", "Cy"])
        r["time"] = f"2023-{rng.randint(1, 12):02d}-0{rng.randint(1, 9)}T10:00:00"
    log = EventLog(tmp_path / "sep.db", index_options={"flush_docs": flush_docs, "doc_model": model})
    log.append_many(rows[:200])
    log.search("warm")
    for r in rows[200:]:
        log.append(**r)
    idx = log.index
    for i in range(40):
        query = " ".join(rng.sample(WORDS[:20] + ["Ann", "Stone", "May", "2023", "Cy"], rng.randint(1, 4)))
        want = _reference_separate(rows, query, model, idx.k1, idx.b)
        got = dict(idx.search(query, k=400, exhaustive=True))
        assert got.keys() == want.keys(), query
        assert all(abs(got[s] - want[s]) < 1e-9 for s in want), query
        old = topk.EXHAUSTIVE_POSTINGS, topk.EXHAUSTIVE_PER_DOC
        topk.EXHAUSTIVE_POSTINGS = topk.EXHAUSTIVE_PER_DOC = 0
        try:
            assert idx.search(query, k=10) == idx.search(query, k=10, exhaustive=True), query
        finally:
            topk.EXHAUSTIVE_POSTINGS, topk.EXHAUSTIVE_PER_DOC = old


def test_a_separate_speaker_match_does_not_shrink_with_the_turn(tmp_path):
    """BM25F damps a speaker match by the length of the turn; a separate field does not."""
    from scroll.search.documents import DocModel

    rows = [{"session": "c", "role": "Hugo", "text": "shellfish " + "filler words here " * 40},
            {"session": "c", "role": "Hugo", "text": "shellfish today"}]
    rows += [{"session": "c", "role": f"P{i}", "text": f"chatter {i}"} for i in range(30)]
    for sep, name in (((), "plain"), (("role",), "apart")):
        model = DocModel.of({"text": 4, "role": 2}, scale=4, separate=sep)
        with EventLog(tmp_path / f"{name}.db", index_options={"doc_model": model}) as log:
            log.append_many(rows)
            speaker_only = {h.seq: h.score for h in log.search("Hugo", k=5)}
            if sep:
                assert speaker_only[1] == pytest.approx(speaker_only[2], rel=1e-12)
            else:
                assert speaker_only[1] < 0.5 * speaker_only[2]


def test_doc_model_rejects_bad_weights(tmp_path):
    from scroll.search.documents import DocModel

    for bad in [dict(weights=(("txt", 1),)), dict(weights=(("text", 0),)), dict(weights=(("text", 1.5),)),
                dict(weights=(("text", 1), ("text", 2))), dict(scale=0), dict(prev_max_tokens=-1),
                dict(separate=("text",)), dict(weights=(("text", 1),), separate=("role",)),
                dict(separate=("role", "role"))]:
        with pytest.raises(ValueError):
            DocModel(**bad)
    log = EventLog(tmp_path / "bad.db", index_options={"doc_model": ("text",)})
    log.append(session="s", role="u", text="apple")
    with pytest.raises(TypeError, match="DocModel"):
        log.search("apple")


def test_tokenization_identical_to_bm25s():
    import bm25s
    import Stemmer

    from scroll.search.tokens import STOPWORDS_EN, Tokenizer

    assert tuple(bm25s.stopwords.STOPWORDS_EN) == STOPWORDS_EN
    text = "The runners were Running to the bicycles' garden in Paris, 2023! foo_bar x y café"
    ref = bm25s.tokenize([text], stopwords="en", stemmer=Stemmer.Stemmer("english"), return_ids=False,
                         show_progress=False)[0]
    assert Tokenizer().terms(text) == ref
    counts, length = Tokenizer().counts(text)
    assert length == len(ref) and sorted(counts.elements()) == sorted(ref)


def test_ranking_deterministic_ties_newest_first(log):
    for i in range(5):  # separate sessions: same document (no previous turn)
        log.append(session=f"s{i}", role="user", text="identical words here", time="2023-01-01T00:00:00")
    hits = log.search("identical words", k=10)
    assert [h.seq for h in hits] == [5, 4, 3, 2, 1]
    assert len({round(h.score, 12) for h in hits}) == 1


def test_no_zero_score_hits_and_empty_results(log):
    log.append(session="s", role="user", text="alpha beta")
    assert log.search("gamma delta", k=10) == []
    assert log.search("", k=10) == []
    assert log.search("the and of", k=10) == []  # stopwords only
    assert log.search("what did", k=10) == []  # question words are dropped from queries
    assert all(h.score > 0 for h in log.search("alpha", k=50))
    assert len(log.search("alpha", k=50)) == 1


def test_filters(log):
    rows = _corpus(300, seed=3)
    log.append_many(rows)
    q = "apple banana cherry"
    for kw, check in [
        ({"sessions": {"s3"}}, lambda e: e.session == "s3"),
        ({"sessions": {"s3", "s5"}}, lambda e: e.session in ("s3", "s5")),
        ({"origins": {"agent"}}, lambda e: e.origin == "agent"),
        ({"origins": {"history", "system"}, "kind": "message"}, lambda e: e.origin != "agent" and e.kind == "message"),
        ({"kind": "tool_result"}, lambda e: e.kind == "tool_result"),
        ({"role": "Ann"}, lambda e: e.role == "Ann"),
        ({"seq_range": (50, 120)}, lambda e: 50 <= e.seq <= 120),
        ({"since": "2023-05-10"}, lambda e: e.time >= "2023-05-10"),
        ({"until": "2023-05-03"}, lambda e: e.time[:10] <= "2023-05-03"),
        ({"sessions": {"s1"}, "role": "user", "since": "2023-05-05", "until": "2023-05-20"},
         lambda e: e.session == "s1" and e.role == "user" and "2023-05-05" <= e.time[:10] <= "2023-05-20"),
    ]:
        hits = log.search(q, k=20, **kw)
        assert hits, kw
        assert all(check(h) for h in hits), kw
        # the filtered top-k equals the unfiltered ranking restricted by the filter
        full = [h.seq for h in log.search(q, k=1000) if check(h)]
        assert [h.seq for h in hits] == full[:20], kw
    assert log.search(q, sessions={"no-such-session"}) == []
    assert log.search(q, sessions=set()) == []
    assert log.search(q, origins=set()) == []
    with pytest.raises(TypeError, match="not a string"):
        log.search(q, sessions="s1")  # a bare string is not a set of sessions


def test_searchable_right_after_append_from_another_log(tmp_path):
    a = EventLog(tmp_path / "x.db")
    b = EventLog(tmp_path / "x.db")
    a.append(session="s", role="user", text="first event")
    assert [h.seq for h in b.search("first")] == [1]
    for i in range(50):
        seq = a.append(session="s", role="user", text=f"needle{i} in the stack")
        assert [h.seq for h in b.search(f"needle{i}")] == [seq]
        seq = b.append(session="s", role="user", text=f"pin{i} in the cushion")
        assert [h.seq for h in a.search(f"pin{i}")] == [seq]


def test_index_persisted_and_rebuilt_when_missing_or_stale(tmp_path):
    import shutil

    path = tmp_path / "p.db"
    with EventLog(path, index_options={"flush_docs": 50}) as log:
        log.append_many(_corpus(230))
        before = [(h.seq, h.score) for h in log.search("apple river", k=10)]
    with EventLog(path, index_options={"flush_docs": 50}) as log:
        assert log.index.segments, "segments should load from disk"
        assert [(h.seq, h.score) for h in log.search("apple river", k=10)] == before
    shutil.rmtree(str(path) + ".index")
    with EventLog(path, index_options={"flush_docs": 50}) as log:
        assert [(h.seq, round(h.score, 9)) for h in log.search("apple river", k=10)] == \
               [(s, round(x, 9)) for s, x in before]
    # a corrupt manifest, or an index from another log, is rebuilt from the log
    (tmp_path / "p.db.index" / "manifest.json").write_text("{not json")
    with EventLog(path, index_options={"flush_docs": 50}) as log:
        assert [h.seq for h in log.search("apple river", k=10)] == [s for s, _ in before]
    other = tmp_path / "other.db"
    with EventLog(other) as o:
        o.append(session="s", role="u", text="apple")
    shutil.rmtree(str(other) + ".index", ignore_errors=True)
    shutil.copytree(str(path) + ".index", str(other) + ".index")
    with EventLog(other) as o:
        assert [h.seq for h in o.search("apple river")] == [1]


def test_big_event_needle_found_and_text_exact(log):
    rng = random.Random(1)
    filler = " ".join(rng.choice(WORDS) for _ in range(700_000))  # ~4 MB
    text = filler[: len(filler) // 2] + " xylophonist " + filler[len(filler) // 2:]
    assert len(text) > 4_000_000
    seq = log.append(session="s", role="tool", kind="tool_result", text=text)
    log.append(session="s", role="user", text="small apple")
    hits = log.search("xylophonist")
    assert [h.seq for h in hits] == [seq]
    ev = log.expand(seq)
    assert ev.payload and ev.text == text
    assert log.payloads.get(ev.payload) == text.encode()


def test_an_older_index_format_is_rebuilt_with_origins(tmp_path):
    import json

    path = tmp_path / "fmt.db"
    with EventLog(path, index_options={"flush_docs": 5}) as log:
        for i in range(12):
            log.append(session="s", role="u", text=f"apple {i}", origin="agent" if i % 3 == 0 else "history")
        log.search("apple")
    manifest = tmp_path / "fmt.db.index" / "manifest.json"
    m = json.loads(manifest.read_text())
    assert m["format"] == 4
    m["format"] = 1  # what a previous Scroll wrote: no origin column (2: no BM25F doc model)
    manifest.write_text(json.dumps(m))
    with EventLog(path, index_options={"flush_docs": 5}) as log:
        assert sorted(h.seq for h in log.search("apple", k=20, origins={"agent"})) == [1, 4, 7, 10]
    assert json.loads(manifest.read_text())["format"] == 4


def test_identifier_parts_field_finds_tool_output_by_plain_words(tmp_path):
    from scroll.search.documents import DocModel, identifier_parts

    assert identifier_parts("metrics_exporter on :9464, computeInvoiceTotal()") == "metrics exporter compute Invoice Total"
    assert identifier_parts("plain words, kebab-case and __init__") == ""
    rows = [{"session": f"s{i}", "role": "tool", "text": t} for i, t in enumerate(
        ["metrics_exporter listening on 0.0.0.0:9464", "the exporter of metrics is slow", "unrelated log line"])]
    with_parts = EventLog(tmp_path / "p.db", index_options={"doc_model": DocModel.of({"text": 1, "parts": 1})})
    text_only = EventLog(tmp_path / "t.db", index_options={"doc_model": DocModel.of({"text": 1})})
    for log in (with_parts, text_only):
        log.append_many(rows)
    assert 1 in [h.seq for h in with_parts.search("which port does the metrics exporter listen on")]
    assert 1 not in [h.seq for h in text_only.search("metrics exporter")]
    # a query that names the identifier matches the identifier token and its words
    assert [h.seq for h in with_parts.search("metrics_exporter", k=1)] == [1]


def test_columns_follow_every_append_flush_and_merge(tmp_path):
    """The per-doc columns (lengths, seqs, times, filter codes) are kept in a buffer that only
    the new rows are copied into; after every append, flush and merge they equal the columns
    built from scratch."""
    import numpy as np

    log = EventLog(tmp_path / "c.db", index_options={"flush_docs": 23, "max_segments": 2})
    log.search("warm")
    idx = log.index
    rng = random.Random(8)
    for i in range(120):
        log.append(session=f"s{rng.randint(0, 4)}", role=rng.choice(["user", "Ann"]), text=f"apple{i} pear",
                   time=f"2023-{1 + i % 12:02d}-0{1 + i % 9}T10:00:00" + "." + "7" * rng.randint(1, 9))
        if i % 7 == 0:
            idx._install(wait=True)
        log.search("pear", k=3)
        for name in ("dl", "seqs", "times", "sess", "role", "kind", "origin"):
            parts = ([idx._static[name]] if idx._static else []) + [t.column(name) for _, t in idx._tails()]
            assert np.array_equal(idx._column(name), np.concatenate(parts)), (i, name)
    assert len(idx.segments) >= 1
    since = [h.seq for h in log.search("pear", k=200, since="2023-12")]
    assert since and all(log.expand(s).time >= "2023-12" for s in since)


def test_identifier_parts_prefilter_never_skips_a_core():
    """words._may_hold_core lets identifier_parts skip the regex scan of plain prose: on random
    strings of letters (ASCII and not), digits, underscores and separators it is False only where
    the regex finds no identifier core, so the parts are those of the full scan."""
    import random

    from scroll.search import words as W
    rng = random.Random(0)
    alphabet = "aZ_9 xY\u00e9\u0130\u00c9b_B1\n\t-.\ud800"
    for _ in range(100_000):
        t = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert W._may_hold_core(t) or not W._CORE.search(t), repr(t)
    assert W.identifier_parts("call computeInvoiceTotal and metrics_exporter") == \
        "compute Invoice Total metrics exporter"
    assert W.identifier_parts("Plain prose. With Capitals, digits 42 and no identifiers.") == ""
