"""scripts/bench_managers.py: the managers run one after another and the table comes out
(here with the reference policy on scroll and two ablations: no model needed)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.sandbox


def test_script_runs_the_managers_and_writes_the_table(tmp_path):
    from scroll.tasks.splits import TaskSetSpec, build_taskset

    ts = tmp_path / "ts"
    build_taskset(TaskSetSpec.load("bench-ci"), ts)
    cmd = [sys.executable, str(ROOT / "scripts" / "bench_managers.py"), "--taskset", str(ts), "--split", "test_unseen",
           "--managers", "scroll,no_kernel,no_index", "--teacher", "reference", "--window", "4096",
           "--loop-config", "smollm2", "--name", "t", "--work", str(tmp_path / "w"), "--results", str(tmp_path / "r")]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    rep = json.loads((tmp_path / "r" / "t.json").read_text())
    assert [r["manager"] for r in rep["rows"]] == ["scroll", "no_kernel", "no_index"]
    assert all(r["n"] == 3 and r["runner_errors"] == 0 for r in rep["rows"])
    # the reference policy's two-step programs need no resident state between its cells
    assert rep["rows"][0]["accuracy"] == 1.0 and rep["backbone"] == ["reference-policy"]
    assert (tmp_path / "r" / "t.png").exists() and (tmp_path / "r" / "t.md").exists()
    bad = subprocess.run([*cmd[:2], "--taskset", str(ts), "--split", "x", "--managers", "nope", "--name", "t"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown managers" in bad.stderr
