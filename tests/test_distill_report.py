"""distill.report: Wilson intervals, gap_closed and its null rule, recomputed from runs.jsonl."""
from __future__ import annotations

import json

import pytest

from distill.report import build_report, gap_closed, to_markdown, wilson, write_report
from scroll.runner import JsonlAppender, RunRecord


def test_wilson_against_hand_computed_values():
    # 8/10, z = 1.96: center = (0.8 + 0.19208) / 1.38416 = 0.716737,
    # half = 1.96 * sqrt(0.016 + 0.009604) / 1.38416 = 0.226581
    lo, hi = wilson(8, 10)
    assert lo == pytest.approx(0.490156, abs=2e-4) and hi == pytest.approx(0.943318, abs=2e-4)
    # 0/10: [0, z^2/n / (1 + z^2/n)] = [0, 0.38416 / 1.38416]
    lo, hi = wilson(0, 10)
    assert lo == 0 and hi == pytest.approx(0.277540, abs=2e-4)
    lo, hi = wilson(10, 10)
    assert hi == 1 and lo == pytest.approx(1 - 0.277540, abs=2e-4)
    # 50/100: center 0.5, half = 1.96 * sqrt(0.0025 + 0.00009604) / 1.038416 = 0.096170
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.403830, abs=2e-4) and hi == pytest.approx(0.596170, abs=2e-4)
    assert wilson(0, 0) is None
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_gap_closed_and_its_null_rule():
    assert gap_closed(0.5, 0.2, 0.8)[0] == pytest.approx(0.5)
    assert gap_closed(0.2, 0.2, 0.8)[0] == 0
    assert gap_closed(0.9, 0.2, 0.8)[0] == pytest.approx(7 / 6)  # above the teacher: > 1, not clipped
    assert gap_closed(0.3, 0.2, 0.3)[0] == pytest.approx(1.0)    # exactly 10 points: defined
    value, why = gap_closed(0.5, 0.45, 0.5)                       # 5 points: noise
    assert value is None and "5.0 points < 10" in why
    value, why = gap_closed(0.5, 0.6, 0.5)                        # the student beats the teacher
    assert value is None
    assert gap_closed(0.5, None, 0.8)[0] is None


def _rec(task_id, split, label, correct, *, steps=3, exe=3, exposure=100, wall=1.0, backend="scripted"):
    return RunRecord(task_id=task_id, split=split, kind="count", family="count_yoga", label=label,
                     backend={"backend": backend, "model": backend}, model=backend, answer="x",
                     correct=correct, reason="final", steps=steps, code_cells=steps, executable_cells=exe,
                     executable_cell_rate=exe / steps, exposure_tokens=exposure, prompt_tokens=1000,
                     completion_tokens=200, wall_s=wall, db="/x.db", session="run-1")


def _write(dir_, recs):
    app = JsonlAppender(dir_ / "runs.jsonl")
    for r in recs:
        app.append(r.to_dict())


def test_report_recomputes_everything_from_the_records(tmp_path):
    # test_unseen: teacher 8/10, untrained 2/10, trained 5/10 -> gap closed 0.5
    # test_paraphrase: teacher 5/10, untrained 5/10 -> null
    teacher, untrained, trained = tmp_path / "t", tmp_path / "u", tmp_path / "tr"
    _write(teacher, [_rec(f"u{i}", "test_unseen", "teacher", i < 8, backend="reference-policy") for i in range(10)]
           + [_rec(f"p{i}", "test_paraphrase", "teacher", i < 5, backend="reference-policy") for i in range(10)])
    _write(untrained, [_rec(f"u{i}", "test_unseen", "untrained", i < 2, steps=4, exe=1, wall=2.0) for i in range(10)]
           + [_rec(f"p{i}", "test_paraphrase", "untrained", i < 5) for i in range(10)])
    # a rerun's later record replaces the earlier one for the same (label, task_id)
    _write(trained, [_rec("u0", "test_unseen", "trained", False)]
           + [_rec(f"u{i}", "test_unseen", "trained", i < 5) for i in range(10)]
           + [_rec(f"p{i}", "test_paraphrase", "trained", i < 6) for i in range(10)])
    rep = write_report([teacher, untrained, trained], tmp_path / "r.json", md=tmp_path / "r.md")
    assert json.loads((tmp_path / "r.json").read_text())["splits"] == json.loads(json.dumps(rep["splits"]))
    assert list(rep["splits"]) == ["test_unseen", "test_paraphrase"]  # the documented order
    assert rep["labels"] == ["teacher", "untrained", "trained"] and rep["duplicates_replaced"] == 0
    u = rep["splits"]["test_unseen"]
    assert u["labels"]["teacher"]["success_rate"] == pytest.approx(0.8)
    assert u["labels"]["teacher"]["ci95"] == pytest.approx([0.490156, 0.943318], abs=2e-4)
    assert u["labels"]["trained"]["tasks"] == 10 and u["labels"]["trained"]["correct"] == 5
    assert u["gap_closed"]["trained"]["gap_closed"] == pytest.approx(0.5)
    un = u["labels"]["untrained"]
    assert un["executable_cell_rate"] == pytest.approx(10 / 40) and un["mean_steps"] == 4
    assert un["mean_wall_s"] == 2.0 and un["total_wall_s"] == pytest.approx(20.0)
    assert un["mean_exposure_tokens"] == 100 and un["mean_prompt_tokens"] == 1000
    p = rep["splits"]["test_paraphrase"]["gap_closed"]["trained"]
    assert p["gap_closed"] is None and "points < 10" in p["null_because"]
    assert rep["machine"]["cores"] and rep["machine"]["cpu"] is not None and rep["git_sha"]
    assert "trl" in rep["versions"] and "torch" in rep["versions"]
    md = (tmp_path / "r.md").read_text()
    assert "## test_unseen" in md and "| teacher | 10 | 80.0 (49.0–94.3)" in md
    assert "gap closed by **trained**: 0.500" in md and "NOT a model" in md
    assert to_markdown(rep) == md


def test_report_needs_runs(tmp_path):
    with pytest.raises(FileNotFoundError):
        build_report([tmp_path])
    with pytest.raises(ValueError):
        build_report([])


def test_cli_report(tmp_path):
    from typer.testing import CliRunner

    from scroll.cli import app

    _write(tmp_path / "t", [_rec(f"u{i}", "test_unseen", "teacher", i < 9) for i in range(10)])
    _write(tmp_path / "u", [_rec(f"u{i}", "test_unseen", "untrained", i < 1) for i in range(10)])
    _write(tmp_path / "tr", [_rec(f"u{i}", "test_unseen", "trained:ckpt-1", i < 5) for i in range(10)])
    args = ["distill", "report", "--runs", str(tmp_path / "t"), "--runs", str(tmp_path / "u"),
            "--runs", str(tmp_path / "tr"), "--out", str(tmp_path / "r.json"), "--md", str(tmp_path / "r.md")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "gap closed by **trained:ckpt-1**: 0.500" in res.stdout
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["splits"]["test_unseen"]["gap_closed"]["trained:ckpt-1"]["gap_closed"] == pytest.approx(0.5)
    assert (tmp_path / "r.md").read_text() == res.stdout
