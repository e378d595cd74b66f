"""`scroll bench retrieval`: recall@k per category and history length, no model; the reference
policy (a test double) through Agent.run in the sandboxed kernel, with its exposure ratio."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from scroll.bench.retrieval import _recall, summarize, to_markdown
from scroll.cli import app


def test_recall_is_the_share_of_evidence_in_the_hits():
    hits = [{"seq": 3}, {"seq": 9}, {"seq": 12}]
    assert _recall(hits, [3, 4]) == 0.5 and _recall(hits, [9, 12, 3]) == 1.0 and _recall([], [1]) == 0.0


def test_summary_skips_abstention_for_recall_but_counts_it_for_accuracy():
    length = {"tokens": 1000, "rows": [
        {"category": "recall", "evidence": 2, "recall_question": 0.5, "recall_program": 1.0, "policy_correct": True,
         "exposure_tokens": 10},
        {"category": "abstention", "evidence": 0, "policy_correct": False, "exposure_tokens": 30}]}
    s = summarize(length)
    assert s["recall"] == {"n": 1, "n_with_evidence": 1, "recall_question": 0.5, "recall_program": 1.0,
                           "policy_accuracy": 1.0, "exposure_ratio": 0.01}
    assert s["abstention"]["recall_question"] is None and s["abstention"]["policy_accuracy"] == 0.0


@pytest.mark.sandbox
def test_cli_measures_two_lengths_end_to_end(tmp_path):
    out, png = tmp_path / "r.json", tmp_path / "r.png"
    r = CliRunner().invoke(app, ["bench", "retrieval", "--sizes", "1e4,3e4", "--work", str(tmp_path / "w"),
                                 "--out", str(out), "--png", str(png), "--md", str(tmp_path / "r.md")])
    assert r.exit_code == 0, r.output
    res = json.loads(out.read_text())
    assert [length["target_tokens"] for length in res["lengths"]] == [10_000, 30_000]
    small, big = res["lengths"]
    assert small["tokens"] < big["tokens"]
    cats = set(small["by_category"])
    assert cats == {"knowledge_update", "aggregation", "temporal", "recall", "contradiction", "abstention",
                    "preference"}
    for length in res["lengths"]:
        for c, s in length["by_category"].items():
            assert s["policy_accuracy"] == 1.0, (length["tokens"], c)     # the reference solves every family
            assert 0 < s["exposure_ratio"] < 0.05
            if c != "abstention":
                assert 0 <= s["recall_question"] <= 1 and 0 <= s["recall_program"] <= 1
    assert png.stat().st_size > 10_000 and "| history tokens |" in (tmp_path / "r.md").read_text()
    assert res["machine"] and res["git_sha"] and res["policy"].startswith("reference policy")
    assert to_markdown(res).count("\n") == 2 + 14
