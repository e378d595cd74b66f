"""Benchmark and retrieval-evaluation pieces, on small sizes (fast)."""
from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from scroll.bench import corpus as C
from scroll.bench import recall as R
from scroll.bench.fts5 import Fts5Log, or_query

ROOT = Path(__file__).resolve().parents[1]


def test_fill_alternatives_and_slots():
    rng = random.Random(0)
    assert C.fill("{a|a} {x}!", {"x": "hi"}, rng) == "a hi!"
    assert C.fill("{When} we", {"when": "last week"}, rng) == "Last week we"
    assert C.fill("x{| y}", {}, random.Random(1)) in ("x", "x y")
    with pytest.raises(KeyError):
        C.fill("{nope}", {}, rng)


def test_corpus_is_seeded_and_consistent():
    a = C.generate(20_000, seed=3)
    b = C.generate(20_000, seed=3)
    c = C.generate(20_000, seed=4)
    assert a.events == b.events and [q.text for q in a.questions] == [q.text for q in b.questions]
    assert a.events != c.events
    assert a.n_words >= 20_000
    assert a.questions
    for q in a.questions:
        assert 1 <= len(q.evidence) <= 3
        for i in q.evidence:
            ev = a.events[i]
            assert ev["session"] == q.session
            assert q.text.lower() not in ev["text"].lower()   # paraphrased, not copied
    for e in a.events[:50]:
        assert set(e) >= {"session", "role", "text", "time", "meta"}
        assert re.match(r"\d{4}-\d\d-\d\dT", e["time"]) and e["meta"]["date"]
    cats = {q.category for q in a.questions}
    assert {"single", "temporal"} <= cats


def test_long_passages_reach_the_size():
    c = C.generate(50_000, seed=1, long_share=0.3)
    assert c.n_words >= 50_000
    lens = sorted(len(e["text"].split()) for e in c.events)
    assert lens[-1] > 100 and lens[len(lens) // 2] < 60
    qs = C.queries(c, 40, seed=1)
    assert len(qs) == 40
    assert all(3 <= len(q["query"].split()) <= 8 and q["session"].startswith("conv-") for q in qs)


def test_fts5_peer_search_and_filters(tmp_path):
    with Fts5Log(tmp_path / "f.db") as log:
        s1 = log.append(session="a", role="Ann", text="We adopted a puppy named Luna", time="2023-05-01T10:00:00")
        s2 = log.append(session="b", role="Bob", text="The puppies at the shelter", time="2023-06-01T10:00:00")
        log.append_many([{"session": "a", "role": "Bob", "text": "unrelated words here"}])
        assert [h.seq for h in log.search("puppy")] and {h.seq for h in log.search("puppy")} == {s1, s2}
        assert [h.seq for h in log.search("puppy", session="b")] == [s2]
        assert [h.seq for h in log.search("puppy", role="Ann")] == [s1]
        assert [h.seq for h in log.search("puppy", since="2023-05-15")] == [s2]
        assert [h.seq for h in log.search("puppy", until="2023-05-15")] == [s1]
        assert [h.seq for h in log.search("puppy", seq_range=(s2, s2))] == [s2]
        assert log.search("") == [] and log.search("zzzz") == []
        assert log.search('luna" OR NEAR( ^*') and log.search("LUNA")[0].seq == s1  # no syntax errors
        assert log.disk_bytes() > 0 and log.file_bytes() > 0
    assert or_query('a "b" a') == '"a" OR """b"""'.replace('"""b"""', '"b"')


def test_recall_at_k():
    events = [{"session": "s", "role": "x", "text": t} for t in ("alpha beta", "gamma", "beta delta")]
    qs = [C.Question("q1", "s", "beta", [0, 2], "single"), C.Question("q2", "s", "gamma", [1], "single"),
          C.Question("q3", "s", "none", [], "single")]
    r = R.recall_at_k(events, qs, lambda text, session: [0, 1], k=10)
    assert r["n"] == 2 and r["recall"] == pytest.approx((0.5 + 1.0) / 2)
    bm = R.Bm25Searcher(events, R.Bm25Config(speaker=True))
    assert set(bm("beta", "s")) == {0, 2} and bm("beta", "other") == []


def test_speaker_and_question_words_improve_generated_recall(tmp_path):
    c = C.generate(20_000, seed=5)
    plain = R.recall_at_k(c.events, c.questions, R.Bm25Searcher(c.events))["recall"]
    better = R.recall_at_k(c.events, c.questions,
                           R.Bm25Searcher(c.events, R.Bm25Config(speaker=True, query_stop="qwords")))["recall"]
    fts = R.recall_at_k(c.events, c.questions, R.fts5_searcher(c.events, tmp_path / "f.db"))["recall"]
    assert 0.2 < plain < 0.8 and 0.2 < fts < 0.8
    assert better > plain + 0.05


LOCOMO_FIXTURE = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ada", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ada", "dia_id": "D1:1", "text": "I joined a choir last week!"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice! What do you sing?",
             "img_url": ["http://example.invalid/x.jpg"], "blip_caption": "a photo of sheet music"},
        ],
        "session_2_date_time": "10:01 am on 20 June, 2023",
        "session_2": [{"speaker": "Ada", "dia_id": "D2:1", "text": "Our first concert went well."}],
    },
    "qa": [
        {"question": "What did Ada join?", "answer": "a choir", "evidence": ["D1:1"], "category": 4},
        {"question": "What did Ada do?", "answer": "x", "evidence": ["D1:1; D2:1"], "category": 1},
        {"question": "Unanswerable?", "adversarial_answer": "y", "evidence": [], "category": 5},
    ],
}]


def test_locomo_loader(tmp_path):
    from scroll.bench import locomo
    p = tmp_path / "locomo.json"
    p.write_text(json.dumps(LOCOMO_FIXTURE))
    events, qs = locomo.load(p)
    assert [e["role"] for e in events] == ["Ada", "Ben", "Ada"]
    assert {e["session"] for e in events} == {"conv-x"}
    assert events[0]["time"] == "2023-05-08T13:56:00" and events[2]["meta"]["date"].startswith("10:01 am")
    assert events[1]["text"].endswith("[image: a photo of sheet music]")
    assert [q.evidence for q in qs] == [[0], [0, 2], []]
    assert qs[0].category == "single-hop" and qs[0].session == "conv-x"
    events2, _ = locomo.load(p, captions=False)
    assert events2[1]["text"] == "Nice! What do you sing?"


def test_search_bench_end_to_end(tmp_path):
    from scroll.bench import report
    from scroll.bench.search_bench import BenchConfig, run

    p = tmp_path / "locomo.json"
    p.write_text(json.dumps(LOCOMO_FIXTURE))
    cfg = BenchConfig(sizes=[20_000], queries=20, tail=400, every=100, quality_words=8_000,
                      locomo=str(p), workdir=str(tmp_path / "w"), flush_docs=100)  # flushes during the appends
    res = run(cfg)
    run0 = res["runs"][0]
    assert run0["words"] >= 20_000
    for name in ("ours", "fts5"):
        r = run0["systems"][name]
        assert "error" not in r, r
        tail = run0["events_tail"]
        assert tail >= 100
        assert r["fresh_found"] == r["fresh_total"] == tail // 100 == r["interleaved"]["n"]
        assert r["search"]["n"] == 20 and r["append"]["n"] == tail and r["search_reopened"]["n"] == 20
        assert r["settle_s"] >= 0 and res["config"]["settle"] is True
        assert r["rss"]["vmhwm_bytes"] > 0 and r["index_bytes"] > 0
        slow = r["append_slowest"]      # the slowest appends, slowest first, with what they waited for
        assert len(slow) == 5 and slow[0]["ms"] == r["append"]["max_ms"]
        assert [s["ms"] for s in slow] == sorted((s["ms"] for s in slow), reverse=True)
        assert all(1 <= s["append"] <= tail and 0 <= s["cpu_ms"] for s in slow)
        assert all(s["background"] is None for s in slow) == (name == "fts5")
        assert r["stall_probe"]["wakeups"] > 0 and r["stall_probe"]["fsyncs"] > 0
        quiet = r["append_machine_quiet"]   # the appends the probe saw no machine stall during
        assert quiet["n"] + quiet["left_out"] == tail and quiet["max_ms"] <= r["append"]["max_ms"]
        during = r.get("append_during_background")   # the appends while our flush or merge ran
        assert (during is None) == (name == "fts5")
        if during is not None:
            assert r["index_flushes_during_appends"] >= 1
            assert 0 < during["n"] <= tail and during["max_ms"] <= r["append"]["max_ms"]
            assert during["n"] >= sum(1 for s in slow if s["background"])
    f = run0["systems"]["fts5-fields"]
    assert "error" not in f and f["fresh_found"] == f["fresh_total"]
    st = run0["systems"]["bm25s"]
    assert "error" not in st and st["search"]["n"] == 20 and st["ingest_s"] > 0 and "append" not in st
    for key in ("quality", "quality_locomo"):
        assert {"ours", "fts5"} <= set(res[key]["systems"])
    assert res["versions"]["python"] and res["machine"]["cores"]
    probe = res["calibration"]["fsync_probe"]
    assert probe["n"] == 2000 and 0 < probe["p50_ms"] <= probe["max_ms"]
    report.table(res)
    report.quality_table(res["quality"])
    json.dumps(res)


def test_cli_and_script(tmp_path):
    from typer.testing import CliRunner

    from scroll.cli.bench_cmds import bench_app

    doc = (ROOT / "scripts" / "bench_search.py").read_text()
    assert doc.startswith('"""python scripts/bench_search.py --sizes 1e6,10e6,18e6')
    out = tmp_path / "r.json"
    res = CliRunner().invoke(bench_app, ["search", "--sizes", "1e4", "--queries", "10", "--tail", "200",
                                         "--every", "100", "--no-quality", "--systems", "fts5",
                                         "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["runs"][0]["systems"]["fts5"]["fresh_found"] == 2
    assert json.loads(res.output)["runs"][0]["words"] >= 10_000


def test_cli_recall_with_locomo(tmp_path):
    from typer.testing import CliRunner

    from scroll.cli.bench_cmds import bench_app

    p = tmp_path / "locomo.json"
    p.write_text(json.dumps(LOCOMO_FIXTURE))
    out = tmp_path / "recall.json"
    sets = tmp_path / "sets.yaml"           # the repo's sets, cut to two tune seeds a shape
    sets.write_text("shapes:\n" + "".join(f"  {s}:\n    words: 1000000\n    tune: [11, 12]\n    report: [1011]\n"
                                          for s in ("chat", "long", "tool")))
    res = CliRunner().invoke(bench_app, ["recall", "--sets", str(sets), "--words", "6000", "--shapes", "chat,tool",
                                         "--split", "tune", "--locomo", str(p), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert [(r["shape"], r["seed"]) for r in data["rows"]] == [("chat", 11), ("chat", 12), ("tool", 11), ("tool", 12)]
    for r in data["rows"]:
        assert set(r["systems"]) == {"ours", "fts5", "fts5-fields", "bm25s"} and r["questions"] > 0
    assert set(data["locomo"]["systems"]) == {"ours", "fts5", "fts5-fields", "bm25s"}
    assert data["locomo"]["systems"]["ours"]["n"] == 2
    assert data["git_sha"] and data["machine"]["cores"]
    md = out.with_suffix(".md").read_text()
    assert "| chat seed 11 |" in md and "LoCoMo" in md


def test_recommended_config_is_append_compatible():
    # the recommended setup may only look back (previous turn), never at later events
    assert R.RECOMMENDED.context in ("none", "concat_prev", "score_prev")
    events = [{"session": "s", "role": "Ann", "text": "how was the trip"},
              {"session": "s", "role": "Bob", "text": "great, saw whales"}]
    bm = R.Bm25Searcher(events, R.RECOMMENDED)
    assert bm("What did Bob see on the trip?", "s")[0] == 1


def test_ab_script_runs_both_versions_side_by_side(tmp_path):
    """scripts/bench_search_ab.py on a tiny corpus: a worktree of the base, both workers, ratios."""
    import subprocess
    import sys
    out = tmp_path / "ab.json"
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_search_ab.py"), "--base", "HEAD",
                        "--sizes", "2e5:chat", "--rounds", "1", "--tail", "1000", "--out", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(out.read_text())
    from scroll.bench.search_tables import ab_label, ab_table
    rows = {ab_label(r): r for r in res["corpora"][0]["rows"]}
    assert rows["search p50 ms"]["base"] > 0 and rows["search p50 ms"]["head"] > 0
    assert rows["ingest s"]["stat"] is None and "| append max ms |" in ab_table(res)
    assert len(res["corpora"][0]["runs"]["base"]) == len(res["corpora"][0]["runs"]["head"]) == 1
    listed = subprocess.run(["git", "worktree", "list"], cwd=ROOT, capture_output=True, text=True).stdout
    assert "scroll-ab-" not in listed                     # its worktree is removed again


def test_ingest_rounds_script_takes_turns_and_reports_medians(tmp_path):
    """scripts/bench_ingest.py on a tiny corpus: every system imports the same bulk part each
    round, in its own process; medians, ratios and the README table come from those times."""
    import subprocess
    import sys
    out = tmp_path / "ingest.json"
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_ingest.py"), "--sizes", "1e5:chat",
                        "--rounds", "2", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(out.read_text())
    c = res["corpora"][0]
    assert set(c["ingest_s"]) == {"ours", "fts5", "fts5-fields"}
    assert all(len(v) == 2 and all(x > 0 for x in v) for v in c["ingest_s"].values())
    assert c["ours_over_peer"]["fts5"] == pytest.approx(c["median_s"]["ours"] / c["median_s"]["fts5"])
    from scroll.bench.search_tables import ingest_table
    table = ingest_table(res)
    assert f"{c['events_bulk']:,}" in table and "ours / fts5-fields" in table
