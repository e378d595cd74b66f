"""Self-improvement (STaR-style rejection sampling) around the distillation pipeline:
`scroll collect --samples K` (resumable, one label per sample), `scroll distill export` over
several run folders (union, dedup, per-source counts, a checker that raises is an error),
the report and its rounds plot, the CLI's validation errors, scripts/distill_cpu.py's
resumable steps."""
from __future__ import annotations

import importlib.util
import json
import sys
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scroll.cli import app
from scroll.config import LoopConfig
from scroll.policies.reference import ReferencePolicy
from scroll.runner import (
    RUNNER_ERROR,
    JsonlAppender,
    RunRecord,
    load_records,
    run_tasks,
)
from scroll.stats import wilson
from tests.test_runner import make_refs

ROOT = Path(__file__).resolve().parents[1]
CFG = LoopConfig(max_steps=6, cell_timeout=20, temperature=0.7)


# ---------------------------------------------------------------------------- a sampled "model"
class Sampler(ReferencePolicy):
    """A scripted sampler (NOT a model): per (seed, question) it answers wrong, writes exactly
    the teacher's program, or the teacher's program with a different reply text; records the
    temperature every call was made with."""

    backend = "scripted-sampler"
    made: list = []  # noqa: RUF012 - every instance, for the tests to inspect

    def __init__(self, seed):
        super().__init__()
        self.seed = seed
        self.temperatures = []
        Sampler.made.append(self)

    @staticmethod
    def mode(seed, question: str) -> str:
        return ("wrong", "same", "variant", "variant")[(zlib.crc32(question.encode()) + (seed or 0)) % 4]

    def complete(self, messages, *, temperature=None, **kw):
        self.temperatures.append(temperature)
        question = self._question(messages) or ""
        mode = self.mode(self.seed, question)
        c = super().complete(messages, temperature=temperature, **kw)
        if mode == "wrong":
            c.text = "```python\nfinal('Atlantis')\n```"
        elif mode == "variant":
            c.text += f"\n(sampled with seed {self.seed})"
        return c

    def describe(self):
        return {"backend": self.backend, "model": f"sampler-{self.seed}", "version": 0}


@pytest.fixture
def sampler_backend(monkeypatch):
    """`--model-url` / `--llm` give a Sampler with the per-sample seed (the real factory is
    tested on its own below)."""
    from scroll.cli import distill_cmds

    Sampler.made = []
    real = distill_cmds._backend_factory

    def fake(teacher, model_url, llm, model, seed=None):
        if teacher is not None:
            return real(teacher, model_url, llm, model, seed=seed)
        return (lambda: Sampler(seed)), "model"

    monkeypatch.setattr(distill_cmds, "_backend_factory", fake)
    return Sampler


@pytest.fixture(scope="module")
def taskset(tmp_path_factory):
    from scroll.tasks.splits import TaskSetSpec, build_taskset

    root = tmp_path_factory.mktemp("taskset")
    build_taskset(TaskSetSpec.load("distill-ci"), root)
    return root


def _lines(path: Path) -> list[str]:
    return [x for x in path.read_text().splitlines() if x.strip()]


def _collect(taskset, out, *extra):
    return CliRunner().invoke(app, ["collect", "--taskset", str(taskset), "--split", "train", "--limit", "3",
                                    "--model-url", "http://127.0.0.1:9/v1", "--pack", "generated",
                                    "--out", str(out), "--concurrency", "2", "--json", *extra])


# ---------------------------------------------------------------------------- collect --samples
def test_collect_samples_one_label_each_and_resumable(taskset, tmp_path, sampler_backend):
    out = tmp_path / "samples"
    args = ("--samples", "3", "--temperature", "0.7", "--seed", "40", "--label", "student-r0")
    res = _collect(taskset, out, *args)
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    recs = load_records(out)
    assert s["samples"] == 3 and s["tasks"] == 3 and s["records"] == 9 == len(recs)
    assert s["labels"] == ["student-r0-s0", "student-r0-s1", "student-r0-s2"] and s["seeds"] == [40, 41, 42]
    assert s["temperature"] == 0.7 and s["pack"] == "generated"
    assert sorted({r.label for r in recs}) == s["labels"]
    # each sample: its own seed, the loop's temperature on every call, its own snapshots and sessions
    assert sorted({m.seed for m in Sampler.made}) == [40, 41, 42]
    assert {t for m in Sampler.made for t in m.temperatures} == {0.7}
    assert len({r.db for r in recs}) == 9 and len({r.session for r in recs}) == 9
    assert all(Path(r.db).parent == (out / "logs" / f"s{r.label[-1]}").resolve() for r in recs)
    # the checker decided: accepted = the sampler's non-wrong modes
    expect = sum(Sampler.mode(40 + int(r.label[-1]), r.question) != "wrong" for r in recs)
    assert s["correct"] == expect == sum(r.correct for r in recs) and 0 < expect < 9
    assert s["rejected"] == 9 - expect and s["runner_errors"] == s["check_errors"] == 0
    meta = json.loads((out / "runs.meta.json").read_text())
    samples = [inv["sample"] for inv in meta["invocations"]]
    assert [(x["index"], x["seed"], x["temperature"]) for x in samples] == [(0, 40, 0.7), (1, 41, 0.7), (2, 42, 0.7)]

    # a rerun: nothing to do, no backend made, the file unchanged
    before = _lines(out / "runs.jsonl")
    Sampler.made = []
    res = _collect(taskset, out, *args)
    assert res.exit_code == 0 and json.loads(res.stdout)["records"] == 9
    assert Sampler.made == [] and _lines(out / "runs.jsonl") == before

    # killed mid-sample: the last two records lost, a torn line; the restart runs exactly those
    lost = [json.loads(x) for x in before[-2:]]
    (out / "runs.jsonl").write_text("\n".join(before[:-2]) + "\n" + before[-2][:40])
    res = _collect(taskset, out, *args)
    assert res.exit_code == 0, res.output
    again = load_records(out)
    assert len(again) == 9 and len({(r.label, r.task_id) for r in again}) == 9
    ran = sum(len(m.temperatures) > 0 for m in Sampler.made)
    assert ran >= 1 and {(d["label"], d["task_id"]) for d in lost} <= {(r.label, r.task_id) for r in again}
    assert len(_lines(out / "runs.jsonl")) == 7 + 1 + 2   # kept + the torn line (skipped) + the two reruns
    # more samples later: only the new one runs
    res = _collect(taskset, out, "--samples", "4", *args[2:])
    assert res.exit_code == 0 and json.loads(res.stdout)["records"] == 12 and len(load_records(out)) == 12


@pytest.mark.parametrize("extra,needle", [
    (["--samples", "2"], "--temperature > 0"),                        # the loop config's temperature is 0
    (["--samples", "2", "--temperature", "0"], "--temperature > 0"),
    (["--samples", "2", "--temperature", "0.7", "--teacher", "reference"], "deterministic"),
    (["--teacher", "oracle"], "reference, writer"),
    (["--pack", "nope"], "nope"),
])
def test_collect_validation_errors(taskset, tmp_path, extra, needle):
    args = ["collect", "--taskset", str(taskset), "--out", str(tmp_path / "x"), "--json", *extra]
    if "--teacher" not in extra:
        args += ["--model-url", "http://127.0.0.1:9/v1"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1, res.output
    assert needle in json.loads(res.stdout)["error"]
    assert not (tmp_path / "x" / "runs.jsonl").exists()   # refused before any task ran


def test_cli_usage_errors(taskset, tmp_path):
    for extra in (["--samples", "0"], ["--temperature", "-1"]):
        res = CliRunner().invoke(app, ["collect", "--taskset", str(taskset), "--model-url", "http://127.0.0.1:9/v1",
                                       "--out", str(tmp_path / "x"), *extra])
        assert res.exit_code == 2, res.output
    res = CliRunner().invoke(app, ["distill", "eval", "--taskset", str(taskset), "--questions", str(tmp_path / "q"),
                                   "--split", "test_unseen", "--label", "untrained", "--teacher", "reference",
                                   "--out", str(tmp_path / "x"), "--json"])
    assert res.exit_code == 1 and "drop --split" in json.loads(res.stdout)["error"]


def test_backend_factory_passes_the_seed():
    from scroll.cli.distill_cmds import _backend_factory

    make, label = _backend_factory(None, "http://127.0.0.1:9/v1", None, None, seed=7)
    llm = make()
    assert label == "model" and llm.cfg.seed == 7 and llm.cfg.base_urls == ["http://127.0.0.1:9/v1"]
    make, _ = _backend_factory(None, "http://127.0.0.1:9/v1", None, None)
    assert make().cfg.seed is None            # the preset's own (openai.yaml: none)
    make, label = _backend_factory("reference", None, None, None, seed=7)
    assert label == "teacher" and make().describe()["backend"] == "reference-policy"


def test_collect_and_eval_with_both_teachers_and_a_pack(taskset, tmp_path):
    pytest.importorskip("scroll.policies.writer")
    for teacher, label, backend in (("reference", "teacher", "reference-policy"), ("writer", "writer", "program-writer")):
        res = CliRunner().invoke(app, ["collect", "--taskset", str(taskset), "--split", "train", "--limit", "2",
                                       "--teacher", teacher, "--out", str(tmp_path / teacher), "--json"])
        assert res.exit_code == 0, res.output
        s = json.loads(res.stdout)
        assert s["label"] == label and s["backend"]["backend"] == backend and s["tasks"] == 2
    res = CliRunner().invoke(app, ["distill", "eval", "--taskset", str(taskset), "--split", "test_unseen",
                                   "--limit", "1", "--label", "teacher", "--teacher", "reference", "--pack",
                                   "generated", "--out", str(tmp_path / "ev"), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["pack"] == "generated"
    assert json.loads((tmp_path / "ev" / "runs.meta.json").read_text())["loop_config"]["pack"] == "generated"


def test_eval_natural_questions(taskset, tmp_path, monkeypatch):
    """--questions: the refs come from scroll.tasks.natural.natural_refs (a stub here, over the CI
    task set's test_unseen histories), split `natural`."""
    from scroll.tasks import natural
    from scroll.tasks.splits import TaskRef, TaskSet

    seen = {}

    def stub(taskset_dir, questions_file, split=None):
        seen["args"] = (Path(taskset_dir), Path(questions_file))
        base = TaskSet.load(taskset_dir).splits["test_unseen"][:3]
        return [TaskRef(task_id=f"nat-{i}", split="natural", db=r.db, task=r.task, sessions=r.sessions)
                for i, r in enumerate(base)]

    monkeypatch.setattr(natural, "natural_refs", stub)
    q = tmp_path / "q.jsonl"
    q.write_text("{}\n")
    res = CliRunner().invoke(app, ["distill", "eval", "--taskset", str(taskset), "--questions", str(q), "--limit", "2",
                                   "--label", "teacher", "--teacher", "reference", "--out", str(tmp_path / "nat"),
                                   "--json"])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    assert seen["args"] == (taskset, q) and list(s["splits"]) == ["natural"] and s["tasks"] == 2
    assert sorted(r.task_id for r in load_records(tmp_path / "nat")) == ["nat-0", "nat-1"]


# ---------------------------------------------------------------------------- export: the union
class _RaisingCheck:
    """A task whose checker cannot run."""

    def __init__(self, task):
        self._task = task

    def __getattr__(self, name):
        return getattr(self._task, name)

    def check(self, answer):
        raise RuntimeError("checker broke")


def test_export_union_counts_dedup_and_a_checker_error(tmp_path):
    from distill.export import export_runs

    refs = make_refs(tmp_path, seeds=(0,), tokens=10_000)[:6]
    teacher = tmp_path / "teacher"
    run_tasks(refs[:5], ReferencePolicy, CFG, teacher, concurrency=2, label="teacher", progress=False)
    # round 1's samples: 4 per task over 6 tasks, each task's 4 samples one wrong, one the
    # teacher's exact program, two distinct variants; the sixth task's checker raises
    from scroll.tasks.splits import TaskRef

    broken = TaskRef(task_id=refs[5].task_id, split=refs[5].split, db=refs[5].db, task=_RaisingCheck(refs[5].task),
                     sessions=refs[5].sessions)
    samples = tmp_path / "samples-r1"
    recs = []
    for k in range(4):
        recs += run_tasks(refs[:5] + [broken], lambda k=k: Sampler(k), CFG, samples, concurrency=2,
                          label=f"student-r0-s{k}", progress=False, logs_dir=samples / "logs" / f"s{k}",
                          meta={"sample": {"index": k, "seed": k, "temperature": 0.7}})
    errs = [r for r in recs if r.task_id == broken.task_id]
    assert len(errs) == 4 and all(r.reason == RUNNER_ERROR and not r.correct for r in errs)
    assert all(r.error.startswith("judge failed: RuntimeError: checker broke") for r in errs)
    judged = [r for r in recs if r.task_id != broken.task_id]
    modes = {(r.label, r.task_id): Sampler.mode(int(r.label[-1]), r.question) for r in judged}
    accepted = sum(m != "wrong" for m in modes.values())
    same = sum(m == "same" for m in modes.values())
    variant = sum(m == "variant" for m in modes.values())
    assert accepted == sum(r.correct for r in judged) == 15 and same == 5 and variant == 10  # the checker agrees

    out = tmp_path / "sft-r1"
    rep = export_runs([teacher, samples, teacher], out, dedup_trajectories=True, notebooks=False)
    t, s = rep["source_runs"][0], rep["source_runs"][1]
    assert t["name"] == "teacher" and t["records"] == 5 and t["accepted"] == 5 and t["exported_trajectories"] == 5
    assert rep["source_runs"][2]["records"] == 0      # the same folder twice counts once
    assert s["records"] == 24 and s["labels"] == [f"student-r0-s{k}" for k in range(4)]
    assert s["accepted"] == accepted and s["rejected"] == 20 - accepted
    assert s["check_errors"] == 4 and s["runner_errors"] == 0     # an error, never a success
    assert s["duplicates"] == same                    # the teacher's exact program: kept once (the teacher's)
    assert s["exported_trajectories"] == variant and rep["exported_trajectories"] == 5 + variant
    assert s["samples"]["student-r0-s1"]["seed"] == 1
    assert {e["task_id"] for e in rep["check_errors"]} == {broken.task_id}
    assert all(e["error"].startswith("judge failed") and e["source"] == "samples-r1" for e in rep["check_errors"])
    by = {f["name"]: f for f in rep["filters"]}
    assert by["runner_ok"]["dropped"] == 4 and by["dedup_trajectories"]["dropped"] == same
    meta = [json.loads(x) for f in out.glob("*.meta.jsonl") for x in f.read_text().splitlines()]
    assert not any(m["task_id"] == broken.task_id for m in meta)
    assert {m["source"] for m in meta} == {"teacher", "samples-r1"}
    assert json.loads((out / "filters.json").read_text())["source_runs"][1]["check_errors"] == 4
    # --seen: the teacher's folder only dedups (a later round's data holds the new samples alone)
    new = export_runs([samples], tmp_path / "new", dedup_trajectories=True, seen=[teacher], notebooks=False)
    assert new["source_runs"][0]["name"] == "teacher" and new["source_runs"][0]["exported_trajectories"] == 0
    assert new["source_runs"][1]["duplicates"] == same and new["exported_trajectories"] == variant
    assert {json.loads(x)["source"] for x in (tmp_path / "new" / "train.meta.jsonl").read_text().splitlines()} == \
        {"samples-r1"}
    with pytest.raises(ValueError, match="seen folders only serve dedup_trajectories"):
        export_runs([samples], tmp_path / "x", seen=[teacher], notebooks=False)
    # --all keeps wrong answers, never a checker error
    every = export_runs([teacher, samples], tmp_path / "all", success_only=False, notebooks=False)
    assert every["exported_trajectories"] == 5 + 20
    # at most one trajectory per task from each folder
    capped = export_runs([teacher, samples], tmp_path / "cap", dedup_trajectories=True, max_per_task=1,
                         notebooks=False)
    per_task = {}
    for r in load_records(samples):
        if r.correct and modes.get((r.label, r.task_id)) == "variant":
            per_task[r.task_id] = per_task.get(r.task_id, 0) + 1
    assert capped["source_runs"][1]["capped"] == sum(n - 1 for n in per_task.values()) == 5
    assert capped["source_runs"][1]["exported_trajectories"] == len(per_task)

    # the CLI: several --runs, the counts printed and in --json
    res = CliRunner().invoke(app, ["distill", "export", "--runs", str(teacher), "--runs", str(samples),
                                   "--dedup-trajectories", "--out", str(tmp_path / "cli"), "--no-notebooks"])
    assert res.exit_code == 0, res.output
    assert "samples-r1: 24 records, checker accepted 15 / rejected 5, check errors 4" in res.stdout
    assert "whose checker raised" in res.stdout


def test_collect_summary_counts_a_checker_error(tmp_path):
    from scroll.cli.distill_cmds import _summary

    refs = make_refs(tmp_path, seeds=(0,), tokens=10_000)[:2]
    from scroll.tasks.splits import TaskRef

    refs[1] = TaskRef(task_id=refs[1].task_id, split="train", db=refs[1].db, task=_RaisingCheck(refs[1].task),
                      sessions=refs[1].sessions)
    recs = run_tasks(refs, ReferencePolicy, CFG, tmp_path / "r", concurrency=1, label="teacher", progress=False)
    s = _summary(recs, "teacher", tmp_path / "r", 1.0)
    assert s["correct"] == 1 and s["check_errors"] == 1 and s["runner_errors"] == 1
    assert s["splits"]["train"]["check_errors"] == 1


# ---------------------------------------------------------------------------- report + plot
SPLITS = ("test_unseen", "test_paraphrase", "test_heldout_kind", "natural")


def _rec(task_id, split, label, correct, backend="openai", error=None):
    desc = {"backend": backend, "model": backend, **({"pack": "generated"} if backend == "reference-policy" else {})}
    return RunRecord(task_id=task_id, split=split, kind="count", family="count_yoga", label=label,
                     backend=desc, model=backend, answer="x",
                     correct=correct, reason=RUNNER_ERROR if error else "final", steps=2, code_cells=2,
                     executable_cells=2, executable_cell_rate=1.0, exposure_tokens=100, prompt_tokens=1000,
                     completion_tokens=100, wall_s=1.0, db="/x.db", session="run-1", error=error)


def _write(folder: Path, recs, pack=None):
    app_ = JsonlAppender(folder / "runs.jsonl")
    for r in recs:
        app_.append(r.to_dict())
    (folder / "runs.meta.json").write_text(json.dumps({"label": recs[0].label, "git_sha": "abc",
                                                       "loop_config": {"pack": pack}}))


# success per (label, split) out of 20 tasks
RATES = {"teacher": (19, 4, 18, 6), "writer": (17, 15, 16, 12), "untrained": (0, 0, 1, 0),
         "trained-r0": (15, 3, 2, 4), "trained-r1": (17, 5, 3, 6), "trained-r2": (18, 7, 3, 8)}


@pytest.fixture
def synthetic(tmp_path):
    dirs = []
    for lab, ks in RATES.items():
        backend = {"teacher": "reference-policy", "writer": "program-writer"}.get(lab, "openai")
        recs = [_rec(f"{split}-{i}", split, lab, i < k, backend) for split, k in zip(SPLITS, ks) for i in range(20)]
        if lab == "trained-r2":   # a checker that raised: an error, counted as not correct
            recs.append(_rec("natural-99", "natural", lab, False, error="judge failed: RuntimeError: x"))
        d = tmp_path / f"eval-{lab}"
        # the regex teacher's pack comes from its backend (its loop config names none), the students' from theirs
        _write(d, recs, pack=None if lab in ("writer", "teacher") else "generated")
        dirs.append(d)
    costs = {"rows": [{"row": "setup", "steps": {"setup": {"wall_s": 5.0, "cpu_s": 4.0}}},
                      {"row": "round 0", "round": 0, "steps": {"collect": {"wall_s": 65.0, "cpu_s": 100.0},
                                                                "export": {"wall_s": 5.0, "cpu_s": 5.0},
                                                                "sft": {"wall_s": 2306.0, "cpu_s": 4500.0},
                                                                "eval": {"wall_s": 171.0, "cpu_s": 30.0,
                                                                         "server_cpu_s": 300.0}}},
                      {"row": "round 1", "round": 1, "steps": {"sample": {"wall_s": 950.0, "cpu_s": 100.0,
                                                                          "server_cpu_s": 1800.0}}}],
             "note": "test"}
    return dirs, costs


def test_report_rounds_wilson_costs_and_plot(synthetic, tmp_path):
    from distill.report import to_markdown, write_report

    dirs, costs = synthetic
    out = tmp_path / "rep" / "r.json"
    rep = write_report(dirs, out, md=tmp_path / "rep" / "r.md", costs=costs)
    assert rep["labels"] == ["teacher", "writer", "untrained", "trained-r0", "trained-r1", "trained-r2"]
    assert list(rep["splits"]) == list(SPLITS)
    for split, i in zip(SPLITS, range(4)):
        for lab, ks in RATES.items():
            st = rep["splits"][split]["labels"][lab]
            n = 21 if (lab, split) == ("trained-r2", "natural") else 20
            assert st["tasks"] == n and st["correct"] == ks[i]
            assert st["ci95"] == pytest.approx(list(wilson(ks[i], n)))    # scroll.stats' Wilson
    nat = rep["splits"]["natural"]["labels"]["trained-r2"]
    assert nat["runner_errors"] == 1 and nat["check_errors"] == 1
    assert rep["rounds"]["labels"] == {"0": "trained-r0", "1": "trained-r1", "2": "trained-r2"}
    u = rep["rounds"]["by_split"]["test_unseen"]
    assert u["rounds"]["2"]["success_rate"] == pytest.approx(18 / 20)
    assert u["references"]["writer"]["success_rate"] == pytest.approx(17 / 20)
    assert rep["packs"]["teacher"] == ["generated"] and rep["packs"]["writer"] == [None]
    assert rep["splits"]["test_unseen"]["gap_closed"]["trained-r1"]["gap_closed"] == pytest.approx(17 / 19)
    png = Path(rep["plot"])
    assert png == out.with_name("r-rounds.png") and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (tmp_path / "rep" / "r.md").read_text()
    assert md == to_markdown(rep)
    for split in SPLITS:
        assert f"## {split}" in md
    assert "| writer | 20 | 85.0 (64.0–94.8)" in md and "| trained-r2 | 20 | 90.0" in md
    assert "- **writer**: program-writer / program-writer (deterministic program writer, NOT a model) · pack none" in md
    assert "- **teacher**: reference-policy / reference-policy (deterministic program writer, NOT a model) · pack generated" in md
    assert "## Cost per round" in md and "| row | collect | sample | export | sft | eval | setup | total |" in md
    assert "| round 0 | 65 s (100 s CPU) | - | 5 s (5 s CPU) | 38.4 min (75.0 min CPU) | 2.9 min (5.5 min CPU) | - |" in md
    assert "| round 1 | - | 15.8 min (31.7 min CPU) |" in md
    assert "![accuracy per round](r-rounds.png)" in md
    assert "the checker raised (runner errors, never a success): **trained-r2** 1" in md


def test_report_cli_with_costs_and_without_plot(synthetic, tmp_path):
    dirs, costs = synthetic
    (tmp_path / "costs.json").write_text(json.dumps(costs))
    args = ["distill", "report", *[x for d in dirs for x in ("--runs", str(d))], "--costs", str(tmp_path / "costs.json"),
            "--out", str(tmp_path / "r.json"), "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["costs"] == costs and Path(rep["plot"]).is_file()
    res = CliRunner().invoke(app, args[:-3] + ["--out", str(tmp_path / "p.json"), "--no-plot", "--json"])
    assert res.exit_code == 0 and "plot" not in json.loads(res.stdout)
    assert not (tmp_path / "p-rounds.png").exists()


def test_plot_rounds_draws_what_it_has(tmp_path):
    from distill.plots import plot_rounds

    # one round, one split, no writer row: still a PNG
    rep = {"rounds": {"by_split": {"test_unseen": {"rounds": {"0": {"success_rate": 0.5, "ci95": [0.3, 0.7], "tasks": 10}},
                                                   "references": {"teacher": {"success_rate": 0.9}, "writer": None,
                                                                  "untrained": {"success_rate": 0.0}}}}}}
    assert plot_rounds(rep, tmp_path / "x.png").read_bytes()[:4] == b"\x89PNG"
    assert plot_rounds({"rounds": {"by_split": {}}}, tmp_path / "y.png").is_file()


# ---------------------------------------------------------------------------- the script's steps
def _script():
    spec = importlib.util.spec_from_file_location("distill_cpu", ROOT / "scripts" / "distill_cpu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_script_docstring_starts_with_the_make_command():
    makefile = (ROOT / "Makefile").read_text()
    doc = _script().__doc__
    assert doc.startswith("python scripts/distill_cpu.py --name smollm2-135m-cpu")
    assert "$(PY) scripts/distill_cpu.py --name smollm2-135m-cpu\n" in makefile
    assert "--rounds" in makefile.split("distill-ci:")[1].split("\n\n")[0]


def test_script_steps_skip_resume_and_move_stale_outputs(tmp_path, monkeypatch):
    mod = _script()
    calls = []

    def fake_sh(step, args, log_dir):
        calls.append(step)
        if args == ["boom"]:
            raise SystemExit("failed")
        return {"step": step}

    monkeypatch.setattr(mod.distill_steps, "sh", fake_sh)
    work = tmp_path / "w"
    out = work / "eval-x"
    out.mkdir(parents=True)
    (out / "runs.jsonl").write_text("{}\n")
    steps = mod.Steps(work)
    assert steps.run("eval_x", ["a"], key={"model": "m1"}, outputs=(out / "runs.jsonl",), stale=out,
                     round=1, kind="eval") == {"step": "eval_x"}
    # a rerun in a new process: skipped, its cost kept
    steps = mod.Steps(work)
    assert steps.run("eval_x", ["a"], key={"model": "m1"}, outputs=(out / "runs.jsonl",), stale=out) == {"step": "eval_x"}
    assert calls == ["eval_x"] and steps.cost("eval_x")["attempts"] == 1
    # other arguments (more tasks): run again, resumed in place, time summed
    steps.run("eval_x", ["a", "b"], key={"model": "m1"}, outputs=(out / "runs.jsonl",), stale=out)
    assert calls == ["eval_x"] * 2 and steps.cost("eval_x")["attempts"] == 2 and out.exists()
    # another model: the old records are moved aside, the count starts again
    steps.run("eval_x", ["a", "b"], key={"model": "m2"}, outputs=(out / "runs.jsonl",), stale=out)
    assert (work / "eval-x.stale-1" / "runs.jsonl").exists() and not out.exists()
    assert steps.cost("eval_x")["attempts"] == 1
    # a failed step is recorded as not done (its time kept), and runs again next time
    with pytest.raises(SystemExit):
        steps.run("bad", ["boom"])
    st = json.loads((work / "steps.json").read_text())["bad"]
    assert st["done"] is False and st["attempts"] == 1
    assert not mod.Steps(work).done("bad", ["boom"])


def test_script_cost_rows(tmp_path):
    mod = _script()
    steps = mod.Steps(tmp_path)
    c = {"wall_s": 10.0, "cpu_s": 5.0, "server_cpu_s": 1.0, "attempts": 1, "done": True}
    steps.state = {n: dict(c) for n in ("models", "tasks", "collect", "export_r0", "sft_r0", "eval_teacher",
                                         "eval_untrained", "serve_untrained", "eval_trained-r0", "eval_trained-r0_natural",
                                         "serve_trained-r0", "sample_r1", "export_r1", "sft_r1", "eval_trained-r1")}
    costs = mod.cost_rows(steps, 1)
    rows = {r["row"]: r["steps"] for r in costs["rows"]}
    assert rows["setup"]["setup"]["wall_s"] == 20.0
    assert rows["reference rows (teachers, untrained)"]["eval"]["wall_s"] == 30.0
    assert set(rows["round 0"]) == {"collect", "export", "sft", "eval"} and rows["round 0"]["eval"]["wall_s"] == 30.0
    assert set(rows["round 1"]) == {"sample", "export", "sft", "eval"} and rows["round 1"]["eval"]["server_cpu_s"] == 1.0


# ---------------------------------------------------------------------------- a real (tiny) model samples
@pytest.mark.model
@pytest.mark.timeout(120)
def test_tiny_model_samples_differ_and_repeat_with_their_seed(taskset, tmp_path, tiny_model_dir):
    def run(out, samples):
        res = CliRunner().invoke(app, ["collect", "--taskset", str(taskset), "--split", "train", "--limit", "1",
                                       "--llm", "tiny-transformers", "--model", str(tiny_model_dir),
                                       "--loop-config", "smollm2", "--samples", str(samples), "--temperature", "1.0",
                                       "--seed", "3", "--out", str(out), "--concurrency", "1", "--json"])
        assert res.exit_code == 0, res.output
        return res

    def replies(out):
        from scroll.events import EventLog

        got = {}
        for r in load_records(out):
            with EventLog(r.db, readonly=True) as log:
                got[r.label] = [e.text for e in log.events(session=r.session)
                                if e.kind == "message" and e.role == "assistant"]
        return got

    run(tmp_path / "a", 2)
    a = replies(tmp_path / "a")
    assert set(a) == {"model-s0", "model-s1"} and a["model-s0"] and a["model-s1"]
    assert a["model-s0"] != a["model-s1"]                   # two samples, two seeds: different replies
    run(tmp_path / "b", 2)
    assert replies(tmp_path / "b") == a                      # the same seeds: the same samples


def _fake_scroll(calls: list, no_new: set[str], trained: list | None = None):
    """A stand-in for `scroll` in scripts/distill_cpu.py: each command writes the files the script
    reads next (no model, no server); an export whose --out is in `no_new` finds nothing new;
    `trained` gets (step, data folder, train rows) of each SFT."""
    trained = [] if trained is None else trained

    def fake_sh(step, args, log_dir):
        calls.append((step, args))
        out = Path(args[args.index("--out") + 1]) if "--out" in args else None
        if args[:2] == ["models", "smollm2"]:
            Path(args[2]).mkdir(parents=True, exist_ok=True)
            (Path(args[2]) / "config.json").write_text('{"base": 1}')
        elif args[:2] == ["tasks", "build"]:
            out.mkdir(parents=True, exist_ok=True)
            (out / "taskset.json").write_text("{}")
            return {"splits": {}}
        elif args[0] == "collect" or args[:2] == ["distill", "eval"]:
            out.mkdir(parents=True, exist_ok=True)
            (out / "runs.jsonl").write_text(json.dumps({"step": step}) + "\n")
            return {"tasks": 3, "correct": 3}
        elif args[:2] == ["distill", "export"]:
            out.mkdir(parents=True, exist_ok=True)
            (out / "filters.json").write_text("{}")
            if out.name not in no_new:   # one row per source, named after it
                srcs = [args[i + 1] for i, x in enumerate(args) if x == "--runs"]
                (out / "train.jsonl").write_text("".join(json.dumps({"row": Path(x).name}) + "\n" for x in srcs))
            if out.name == "sft-data-r0":   # the teacher's collection has a dev split; the samples do not
                (out / "dev.jsonl").write_text("{}\n")
            return {"exported_trajectories": 0 if out.name in no_new else 2}
        elif args[:2] == ["distill", "sft"]:
            data = Path(args[args.index("--data") + 1])
            trained.append((step, data.name, (data / "train.jsonl").read_text()))
            assert (data / "dev.jsonl").is_file(), f"{data}: sft needs a dev split"  # as `scroll distill sft` does
            (out / "merged").mkdir(parents=True, exist_ok=True)
            (out / "merged" / "config.json").write_text(json.dumps({"trained": str(out)}))
            (out / "result.json").write_text("{}")
            return {"steps": 1}
        elif args[:2] == ["distill", "report"]:
            Path(args[args.index("--out") + 1]).write_text("{}")
            Path(args[args.index("--md") + 1]).write_text("# report\n")
        return {}
    return fake_sh


def exp_rounds(tmp_path: Path) -> list:
    return json.loads((tmp_path / "res" / "sim.json").read_text())["experiment"]["rounds"]


def exp_retrain(tmp_path: Path) -> str:
    return json.loads((tmp_path / "res" / "sim.json").read_text())["experiment"]["self_improvement"]["retrain"]


@pytest.mark.parametrize("from_base", [False, True])
def test_script_rounds_continue_the_student_or_start_from_base(tmp_path, monkeypatch, from_base):
    """The script's control flow with a fake `scroll`: round 1 finds no new sample (its student is
    round 0's), round 2 trains on its new samples from round 1's student, or, --from-base, every
    round trains the base student on the union (--seen never used)."""
    mod = _script()
    calls, trained = [], []
    no_new = set() if from_base else {"sft-data-r1"}
    monkeypatch.setattr(mod.distill_steps, "sh", _fake_scroll(calls, no_new, trained))
    student, work = tmp_path / "student", tmp_path / "work"
    argv = ["distill_cpu.py", "--name", "sim", "--rounds", "2", "--work", str(work), "--student", str(student),
            "--tasksets", str(tmp_path / "tasksets"), "--results", str(tmp_path / "res"),
            *(["--from-base"] if from_base else [])]
    monkeypatch.setattr(sys, "argv", argv)
    mod.main()
    built = [Path(a[a.index("--out") + 1]) for s, a in calls if a[:2] == ["tasks", "build"]]
    assert built and all(tmp_path in p.parents for p in built)   # nothing written into the checkout's var/
    w = work / "sim"
    exports = {s: a for s, a in calls if s.startswith("export_r")}
    bases = {s: Path(a[a.index("--model") + 1]) for s, a in calls if s.startswith("sft_r")}
    served = {s: Path(a[a.index("--model") + 1]) for s, a in calls if s.startswith("serve_")}
    assert all("--trajectories" in a and "--dedup-trajectories" in a for a in exports.values())
    if from_base:
        assert set(bases) == {"sft_r0", "sft_r1", "sft_r2"} and set(bases.values()) == {student}
        assert not any("--seen" in a for a in exports.values())
        assert exports["export_r2"].count("--runs") == 3          # teacher + samples-r1 + samples-r2
    else:
        assert bases == {"sft_r0": student, "sft_r2": w / "sft-r0" / "merged"}   # r1: nothing new, no SFT
        assert served["serve_trained-r1"] == served["serve_trained-r0"] == w / "sft-r0" / "merged"
        assert served["serve_trained-r2"] == w / "sft-r2" / "merged"
        # round 2 continues on its new row plus as many replayed rows of the earlier rounds (round 0's)
        assert trained[-1][:2] == ("sft_r2", "sft-mix-r2")
        assert [json.loads(x)["row"] for x in trained[-1][2].splitlines()] == ["samples-r2", "teacher-train"]
        mix = json.loads((w / "sft-mix-r2" / "mix.json").read_text())
        assert (mix["new"], mix["replayed"], mix["drawn_from"]) == (1, 1, 1)
        assert exp_rounds(tmp_path)[2]["replay"] == mix and "replayed" in exp_retrain(tmp_path)
        r2 = exports["export_r2"]
        assert [r2[i + 1] for i, x in enumerate(r2) if x == "--runs"] == [str(w / "samples-r2")]
        assert [r2[i + 1] for i, x in enumerate(r2) if x == "--seen"] == [str(w / "teacher-train"),
                                                                         str(w / "samples-r1")]
    samples = [a for s, a in calls if s.startswith("sample_r")]
    assert len(samples) == 2 and all(a[a.index("--limit") + 1] == "60" and a[a.index("--samples") + 1] == "4"
                                     for a in samples)
    untrained = [a for s, a in calls if s.startswith("eval_untrained")]
    assert untrained and all(a[a.index("--limit") + 1] == "32" for a in untrained)
    exp = json.loads((tmp_path / "res" / "sim.json").read_text())["experiment"]
    assert exp["untrained_tasks_per_split"] == 32 and [r["round"] for r in exp["rounds"]] == [0, 1, 2]
    assert ("from the base" in exp["self_improvement"]["retrain"]) == from_base


def test_script_redoes_runs_when_a_teacher_or_the_kernel_helpers_change(tmp_path, monkeypatch):
    """Resuming reuses a finished collect or eval step only while the code that decides its programs
    (CODE_FILES: the teachers, the packs, the prompt, the kernel prelude) is the same."""
    mod = _script()
    code = tmp_path / "toolkit.py"
    code.write_text("v1")
    monkeypatch.setattr(mod, "CODE_FILES", [code])
    argv = ["distill_cpu.py", "--name", "sim", "--teachers-only", "--work", str(tmp_path / "work"),
            "--tasksets", str(tmp_path / "tasksets"), "--results", str(tmp_path / "res")]
    monkeypatch.setattr(sys, "argv", argv)

    def evals() -> list[str]:
        calls: list = []
        monkeypatch.setattr(mod.distill_steps, "sh", _fake_scroll(calls, set()))
        mod.main()
        return sorted(s for s, _ in calls if s.startswith("eval_"))

    first = evals()
    assert first == ["eval_teacher", "eval_teacher_natural", "eval_writer", "eval_writer_natural"]
    assert evals() == []                     # resumed: nothing to redo
    code.write_text("v2")
    assert evals() == first                  # the writer or the helpers changed: every run again


def test_script_trains_on_hand_written_questions_of_a_train_role_set_only(tmp_path, monkeypatch):
    """--train-questions natural-dev: one more round-0 collect over natural-dev's questions (the spec's
    held-out kinds skipped), its runs exported with the teacher's; the natural TEST set is refused."""
    mod = _script()
    calls = []
    monkeypatch.setattr(mod.distill_steps, "sh", _fake_scroll(calls, set()))
    base = ["distill_cpu.py", "--name", "sim", "--rounds", "0", "--work", str(tmp_path / "work"),
            "--student", str(tmp_path / "student"), "--tasksets", str(tmp_path / "tasksets"),
            "--results", str(tmp_path / "res")]
    monkeypatch.setattr(sys, "argv", base + ["--train-questions", "natural-dev"])
    mod.main()
    steps = dict(calls)
    q = steps["collect_questions"]
    assert q[q.index("--questions") + 1].endswith("configs/tasks/natural-dev.questions.jsonl")
    assert q[q.index("--skip-kind") + 1] == "sum" and q[q.index("--taskset") + 1].endswith("natural-dev")
    runs = [Path(x).name for i, x in enumerate(steps["export_r0"]) if steps["export_r0"][i - 1] == "--runs"]
    assert runs == ["teacher-train", "teacher-questions"]
    exp = json.loads((tmp_path / "res" / "sim.json").read_text())["experiment"]
    assert exp["train_questions"]["spec"] == "natural-dev" and exp["train_questions"]["skipped_kinds"] == ["sum"]
    monkeypatch.setattr(sys, "argv", base + ["--train-questions", "natural-v1"])
    with pytest.raises(SystemExit, match="TEST set"):
        mod.main()
