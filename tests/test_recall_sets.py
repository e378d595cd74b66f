"""Recall on evaluation sets: the FTS5 peers, the four systems side by side, the tuning grid."""
from __future__ import annotations

import pytest

from scroll.bench import recall_sets
from scroll.bench.corpus import generate
from scroll.bench.fts5 import Fts5Config, Fts5Log
from scroll.search.documents import DocModel

MODEL = DocModel((("text", 4), ("role", 1), ("date", 1), ("prev", 2)), scale=4, prev_max_tokens=40)


def test_fts5_fields_peer_indexes_speaker_date_and_short_turns_previous_turn(tmp_path):
    cfg = Fts5Config.like(MODEL)
    assert dict(cfg.weights) == {"text": 1.0, "role": 0.25, "date": 0.25, "prev": 0.5} and cfg.clean_query
    with Fts5Log(tmp_path / "f.db", config=cfg) as log:
        a = log.append("s1", "Melanie", "I adopted a puppy named Rocket", time="2023-05-17T10:00:00")
        b = log.append("s1", "Caroline", "wow congratulations", time="2023-05-17T10:01:00")
        long_text = "planning " * 60
        log.append("s1", "Caroline", long_text, time="2023-05-17T10:02:00")
        c = log.append("s2", "Bob", "unrelated words here", time="2024-01-02T10:00:00")
        assert [h.seq for h in log.search("Melanie")] == [a]                 # speaker column
        assert c in [h.seq for h in log.search("January 2024")]                # month/year column
        assert set(h.seq for h in log.search("Rocket puppy")) == {a, b}       # b holds its previous turn
        assert [h.seq for h in log.search("what did")] == []                   # question words dropped
        got = log.search("congratulations", k=5)
        assert [h.seq for h in got][:1] == [b]
        # the long turn is indexed without its previous turn (prev_max_tokens)
        assert len(log.search("congratulations", k=5)) == 1
    with Fts5Log(tmp_path / "raw.db") as raw:
        raw.append("s1", "Melanie", "I adopted a puppy", time="2023-05-17T10:00:00")
        assert raw.search("Melanie") == [] and len(raw.search("what puppy")) == 1


def test_four_systems_side_by_side_on_one_corpus():
    corpus = generate(20_000, seed=3)
    res = recall_sets.evaluate(corpus, MODEL)
    assert set(res) == set(recall_sets.SYSTEMS)
    for v in res.values():
        assert 0.0 <= v["recall"] <= 1.0 and v["n"] == sum(1 for q in corpus.questions if q.evidence)
    # a different model changes ours (the model really reaches the index) but not the raw peers
    other = recall_sets.evaluate(corpus, DocModel((("text", 1),), scale=1), systems=("ours", "fts5", "bm25s"))
    assert other["fts5"]["recall"] == res["fts5"]["recall"] and other["bm25s"]["recall"] == res["bm25s"]["recall"]
    assert other["ours"]["recall"] != res["ours"]["recall"]


def test_candidates_vary_one_field_and_are_unique():
    cands = recall_sets.candidates(MODEL)
    assert cands[0] == MODEL and len({repr(c.spec()) for c in cands}) == len(cands)
    base = dict(MODEL.weights)
    for c in cands[1:]:
        w = dict(c.weights)
        diff = [f for f in set(w) | set(base) if w.get(f, 0) != base.get(f, 0)]
        # one decision each: a weight, the cap, or which fields are scored apart (a weight set to 0
        # also drops its field from `separate`: the same decision)
        assert len(diff) + (c.prev_max_tokens != MODEL.prev_max_tokens) + (c.separate != MODEL.separate
                                                                            and not diff) == 1
    assert any(dict(c.weights).get("parts") for c in cands)     # a field the base lacks is tried too
    assert {c.separate for c in cands} == {(), ("role",), ("date",), ("role", "date")}
    from scroll.search.documents import DEFAULT_MODEL
    for c in recall_sets.candidates(DEFAULT_MODEL):
        assert set(c.separate) <= set(c.fields)                  # never a field that is not indexed


def test_markdown_is_recomputed_from_rows():
    row = {"shape": "long", "seed": 7, "words": 1000, "events": 5, "questions": 3,
           "systems": {s: {"recall": r, "n": 3} for s, r in zip(recall_sets.SYSTEMS, (0.5, 0.4, 0.6, 0.3))},
           "ours_minus_best_peer_points": -10.0, "ours_minus_fts5_points": 10.0}
    res = {"k": 10, "split": "report", "doc_model": MODEL.spec(), "systems": dict.fromkeys(recall_sets.SYSTEMS, "x"),
           "rows": [row], "ours_at_least_best_peer_everywhere": False}
    md = recall_sets.to_markdown(res)
    assert "| long seed 7 |" in md and "**0.600**" in md and "-10.0" in md and "BELOW" in md


@pytest.mark.parametrize("args,flag", [(["--shapes", "nope"], "--shapes"), (["--split", "dev"], "--split"),
                                       (["--sets", "/nonexistent.yaml"], "nonexistent")])
def test_recall_cli_rejects_bad_input(args, flag):
    from typer.testing import CliRunner

    from scroll.cli import app
    r = CliRunner().invoke(app, ["bench", "recall", *args])
    assert r.exit_code != 0 and flag in (r.output + str(r.exception))


def test_doc_model_specs_round_trip_and_compare_picks_by_the_tune_rule():
    from scroll.search.documents import DEFAULT_MODEL

    for m in (DEFAULT_MODEL, MODEL, DocModel((("text", 1),), scale=1)):
        assert DocModel.from_spec(m.spec()) == m
    with pytest.raises(ValueError):
        DocModel.from_spec({"weights": [["text", 1]], "colour": 1})
    sets = {"shapes": {"chat": {"words": 6000, "tune": [3], "report": [4]},
                       "tool": {"words": 6000, "tune": [3], "report": [4]}}}
    text_only = DocModel((("text", 4),), scale=4)
    res = recall_sets.compare(sets, [DEFAULT_MODEL, text_only])
    assert [r["doc_model"] for r in res["tried"]] == [DEFAULT_MODEL.spec(), text_only.spec()]
    for r in res["tried"]:
        assert len(r["sets"]) == 2 and r["worst_margin"] == min(s["margin"] for s in r["sets"])
    assert res["best"] == max(res["tried"], key=lambda r: (r["worst_margin"], r["mean_ours"]))


def test_paired_difference_counts_and_interval():
    from scroll.bench.recall import paired_difference
    a = [1.0] * 95 + [0.0] * 5
    b = [1.0] * 90 + [0.0] * 10
    p = paired_difference(a, b)
    assert p["diff_points"] == 5.0 and p["better"] == 5 and p["worse"] == 0 and p["n"] == 100
    lo, hi = p["ci95_points"]
    assert 0 < lo <= 5.0 <= hi < 12                     # all the differing questions favour a
    same = paired_difference(b, b)
    assert same["ci95_points"] == [0.0, 0.0] and same["better"] == same["worse"] == 0
    mixed = paired_difference([1.0, 0.0] * 50, [0.0, 1.0] * 50)    # 50 each way: no difference
    assert mixed["diff_points"] == 0.0 and mixed["ci95_points"][0] < 0 < mixed["ci95_points"][1]
    assert paired_difference(a, b) == p                  # a fixed seed: the same interval every run
    for x, y in (([1.0], [1.0, 0.0]), ([1.0, 0.0], [1.0, 0.0, 1.0]), ([], [])):
        with pytest.raises(ValueError, match="paired_difference"):
            paired_difference(x, y)


def test_report_rows_carry_the_paired_comparison_and_no_per_question_lists():
    sets = {"shapes": {"chat": {"words": 6000, "tune": [3], "report": [4]}}}
    res = recall_sets.run(sets, split="report")
    (row,) = res["rows"]
    p = row["versus_best_peer"]
    assert p["peer"] in recall_sets.PEERS and p["n"] == row["questions"]
    assert row["systems"][p["peer"]]["recall"] == max(row["systems"][s]["recall"] for s in recall_sets.PEERS)
    assert abs(p["diff_points"] - row["ours_minus_best_peer_points"]) < 0.01
    assert all("per_question" not in v for v in row["systems"].values())
    md = recall_sets.to_markdown(res)
    lo, hi = p["ci95_points"]
    assert f"[{lo:+.2f}, {hi:+.2f}] | {p['better']} / {p['worse']}" in md
