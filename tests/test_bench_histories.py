"""`scroll bench run --histories N`: only the questions over the first N histories (for managers
whose cost grows per history, like lcm's summary DAG)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from scroll.cli import app
from scroll.cli.bench_cmds import first_histories


def test_first_histories_keeps_ref_order_and_sorts_histories():
    refs = [SimpleNamespace(db=f"h{h}.db", task_id=f"t{i}") for i, h in enumerate([2, 0, 1, 0, 2, 1])]
    assert [r.task_id for r in first_histories(refs, 1)] == ["t1", "t3"]
    assert [r.task_id for r in first_histories(refs, 2)] == ["t1", "t2", "t3", "t5"]
    assert first_histories(refs, None) == refs


@pytest.mark.sandbox
def test_cli_runs_only_the_first_history(tmp_path):
    from scroll.tasks.splits import TaskSet, TaskSetSpec, build_taskset

    spec = TaskSetSpec.load("bench-ci")
    spec.splits["test_unseen"].histories = 2
    ts = build_taskset(spec, tmp_path / "ts")
    first = sorted({str(r.db) for r in TaskSet.load(tmp_path / "ts").splits["test_unseen"]})[0]
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["bench", "run", "--taskset", str(tmp_path / "ts"), "--split", "test_unseen",
                                 "--manager", "scroll", "--teacher", "reference", "--histories", "1",
                                 "--window", "4096", "--loop-config", "smollm2", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    recs = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    want = [x.task_id for x in ts.splits["test_unseen"] if str(x.db) == first]
    assert sorted(x["task_id"] for x in recs) == sorted(want) and len(want) == 3
