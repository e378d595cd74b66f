"""Search budgets: a hostile query or filter must not blow up host memory or time.

* A query of one word repeated 20,000 times fetched and scored that word's postings
  20,000 times (gigabytes on a 20k-event log); now each distinct term is scored once,
  weighted by its count, with exactly the scores bm25s gives the repeated query.
* A 200 KB `until` widened the whole time column to 200 K characters per event
  (16 GB for 20k events); now the column is compared at its own width.
The memory checks run in a subprocess with a data-segment cap, so the old behaviour
fails with MemoryError instead of taking the machine down, and read peak RSS (VmHWM).
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from scroll import EventLog
from tests.test_search import WORDS, _reference_top

ROOT = Path(__file__).resolve().parents[1]

_MEMORY = r"""
import json, random, resource, sys
resource.setrlimit(resource.RLIMIT_DATA, (3 << 30, 3 << 30))  # the old code fails here, not the machine
from scroll import EventLog

def status_mb(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024

def reset_peak():
    # "5" resets the peak RSS (VmHWM) to the current RSS (Linux >= 4.0); else the peak so far counts
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    return status_mb("VmRSS")

def hwm_mb():
    return status_mb("VmHWM")

log = EventLog(sys.argv[1], durability="normal")
rng = random.Random(0)
words = sys.argv[2].split()
rows = [{"session": f"s{i % 50}", "role": "user", "time": f"2023-05-{1 + i % 28:02d}T10:00:00Z",
         "text": "you " + " ".join(rng.choice(words) for _ in range(15))} for i in range(20_000)]
for i in range(0, len(rows), 5000):
    log.append_many(rows[i:i + 5000])
ref = [(h.seq, h.score) for h in log.search("you apple", k=10)]
ref_until = [(h.seq, h.score) for h in log.search("you apple", k=10, until="2023-05-03T10:00:00Z")]
out = {"events": log.max_seq()}
base = reset_peak()
hits = log.search("you " * 20_000 + "apple", k=10)
out["repeat_mb"] = hwm_mb() - base
out["repeat_top"] = [h.seq for h in hits]
out["one_top"] = [s for s, _ in ref]
base = reset_peak()
hits = log.search("you apple", k=10, until="2023-05-03T10:00:00Z" + "9" * 200_000)
out["until_mb"] = hwm_mb() - base
out["until_top"] = [(h.seq, h.score) for h in hits]
out["until_ref"] = ref_until
base = reset_peak()
hits = log.search("you apple", k=10, since="2023-05-03T10:00:00Z" + "0" * 200_000)
out["since_mb"] = hwm_mb() - base
log.close()
print(json.dumps(out))
"""


def test_repeated_words_and_long_until_keep_memory_flat(tmp_path):
    out = subprocess.run([sys.executable, "-c", _MEMORY, str(tmp_path / "dos.db"), " ".join(WORDS)],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    r = json.loads(out.stdout)
    assert r["events"] == 20_000
    assert r["repeat_mb"] < 200, f"peak RSS grew {r['repeat_mb']:.0f} MB for a repeated-word query"
    assert r["until_mb"] < 200, f"peak RSS grew {r['until_mb']:.0f} MB for a 200 KB until"
    assert r["since_mb"] < 200, f"peak RSS grew {r['since_mb']:.0f} MB for a 200 KB since"
    # a 200 KB until that extends "2023-05-03T10:00:00Z" compares like that prefix (times are shorter)
    assert r["until_top"] == r["until_ref"]
    assert len(r["repeat_top"]) == 10


def test_repeated_query_terms_score_exactly_like_bm25s(tmp_path):
    """Each distinct term scored once, weighted by count: the same top-10 and scores as
    bm25s scoring every occurrence (and as the old loop over occurrences)."""
    rng = random.Random(7)
    log = EventLog(tmp_path / "rep.db", index_options={"flush_docs": 60, "max_segments": 3})
    log.search("warm")
    for i in range(200):  # separate sessions, one month (a field scored apart): the document is the text and the role
        log.append(session=f"s{i}", role="u", time="2023-05-01",
                   text=" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30))))
    idx = log.index
    assert idx.segments and idx.n_tail
    texts = [e.text + "\nu\nMay 2023" for e in log.events()]  # the month field is in the BM25F sum (x1)
    seqs = list(range(1, 201))
    import bm25s
    import Stemmer

    stem = Stemmer.Stemmer("english")
    ret = bm25s.BM25(k1=idx.k1, b=idx.b, method="lucene")
    ret.index(bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False), show_progress=False)
    for query in ("apple apple apple banana", "river " * 50 + "tea", "coffee tea coffee tea coffee",
                  "zephyr", "quartz quartz nonexistentword quartz"):
        ours = log.search(query, k=10)
        ref = _reference_top(texts, seqs, query, 10, idx.k1, idx.b)
        assert [h.seq for h in ours] == ref, query
        tokens = [t for t in bm25s.tokenize([query], stopwords="en", stemmer=stem, return_ids=False,
                                            show_progress=False)[0] if t in ret.vocab_dict]
        scores = ret.get_scores(tokens)
        for h in ours:
            assert h.score == pytest.approx(float(scores[h.seq - 1]), rel=1e-6), query


def test_until_and_since_of_any_length_filter_like_a_prefix_compare(log):
    times = ["2023-05-01T10:00:00Z", "2023-05-02", "2023-05-03T23:59:59.999999Z", "2023-06-01", "2023-05-02T00:00"]
    for i, t in enumerate(times):
        log.append(session=f"s{i}", role="u", text="common word", time=t)
    events = list(log.events())
    for until in ("2023", "2023-05-02", "2023-05-02T00:00", "2023-05-03T23:59:59.999999Z",
                  "2023-05-03T23:59:59.999999Z" + "9" * 5000, "2023-05-02" + "0" * 100, "", "zzzz"):
        want = sorted((e.seq for e in events if e.time[:len(until)] <= until), reverse=True)
        got = sorted((h.seq for h in log.search("common word", k=50, until=until)), reverse=True)
        assert got == want, until
    for since in ("2023-05-02", "2023-05-02" + "0" * 5000, "2023-06"):
        want = sorted((e.seq for e in events if e.time >= since), reverse=True)
        got = sorted((h.seq for h in log.search("common word", k=50, since=since)), reverse=True)
        assert got == want, since


def test_a_huge_time_string_is_refused_and_does_not_widen_the_time_column(log):
    with pytest.raises(ValueError, match="ISO 8601"):   # not a time: refused before any write (issue #30 item 9)
        log.append(session="s", role="u", text="alpha", time="2023-05-01" + "x" * 100_000)
    log.append(session="s", role="u", text="alpha", time="2023-05-01T10:00:00.123456789+02:00")
    log.append(session="s", role="u", text="alpha beta", time="2023-05-02")
    assert log.max_seq() == 2
    assert len(log.search("alpha", until="2023-05-01")) == 1
    assert log.index._column("times").dtype.itemsize <= 64 * 4
