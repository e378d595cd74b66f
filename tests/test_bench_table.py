"""`scroll bench report`: the managers' table recomputed from records (hand-checked numbers)."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from scroll.bench.table import build_table, to_markdown
from scroll.cli import app
from scroll.runner import JsonlAppender, RunRecord


def _rec(manager, task_id, kind, correct, model="smollm2-135m", prompt=100, completion=10, wall=2.0):
    return RunRecord(task_id=task_id, split="test", kind=kind, family=kind, label=manager,
                     backend={"backend": "openai", "model": model}, model=model, answer="x", correct=correct,
                     reason="final", steps=2, code_cells=0, executable_cells=0, executable_cell_rate=None,
                     exposure_tokens=0, prompt_tokens=prompt, completion_tokens=completion, wall_s=wall, db="d",
                     session="s", manager=manager)


def _write(d, recs):
    app_ = JsonlAppender(d / "runs.jsonl")
    for r in recs:
        app_.append(r.to_dict())
    return d


def test_table_numbers_are_recomputed_from_records(tmp_path):
    a = _write(tmp_path / "rag", [_rec("rag", "t1", "count", True), _rec("rag", "t2", "count", False),
                                  _rec("rag", "t3", "date", True, prompt=300, completion=30, wall=4.0)])
    b = _write(tmp_path / "scroll", [_rec("scroll", "t1", "count", True), _rec("scroll", "t2", "count", True),
                                     _rec("scroll", "t3", "date", False)])
    rep = build_table([a, b])
    assert [r["manager"] for r in rep["rows"]] == ["scroll", "rag"]  # the fixed order, not the argument order
    rag = rep["rows"][1]
    assert rag["n"] == 3 and rag["correct"] == 2 and rag["accuracy"] == pytest.approx(2 / 3)
    # categories: count -> aggregation, date -> temporal (scroll.tasks.families.category_of)
    assert rep["kinds"] == ["aggregation", "temporal"]
    assert rag["by_kind"]["aggregation"]["accuracy"] == 0.5 and rag["by_kind"]["temporal"]["accuracy"] == 1.0
    assert rag["tokens_per_question"] == pytest.approx((110 + 110 + 330) / 3)   # 183.33
    assert rag["wall_s_per_question"] == pytest.approx(8 / 3)
    lo, hi = rag["ci95"]
    assert lo == pytest.approx(0.20766, abs=1e-4) and hi == pytest.approx(0.93851, abs=1e-4)  # Wilson 2/3, z=1.96
    md = to_markdown(rep)
    assert "| rag | rag | 3 | 66.7 (" in md and "| 50.0 | 100.0 | 183 |" in md


def test_the_table_orders_every_manager():
    from scroll.bench.table import ORDER
    from scroll.managers import MANAGERS

    assert sorted(ORDER) == sorted(MANAGERS)


def test_mixed_backbones_are_refused(tmp_path):
    a = _write(tmp_path / "a", [_rec("rag", "t1", "count", True, model="m1")])
    b = _write(tmp_path / "b", [_rec("scroll", "t1", "count", True, model="m2")])
    with pytest.raises(ValueError, match="several backbones"):
        build_table([a, b])


def test_cli_report_writes_json_md_png(tmp_path):
    a = _write(tmp_path / "rag", [_rec("rag", "t1", "count", True), _rec("rag", "t2", "date", False)])
    r = CliRunner().invoke(app, ["bench", "report", str(a), "--out", str(tmp_path / "t.json"),
                                 "--md", str(tmp_path / "t.md"), "--png", str(tmp_path / "t.png"), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["rows"][0]["n"] == 2
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG" and "| rag |" in (tmp_path / "t.md").read_text()
    r = CliRunner().invoke(app, ["bench", "report", str(tmp_path / "nothing"), "--out", str(tmp_path / "x.json")])
    assert r.exit_code != 0 and "no records" in r.output
