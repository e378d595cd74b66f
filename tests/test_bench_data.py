"""`scroll bench run --data FILE`: the four public formats (files GENERATED in their exact shape)
become runner work items, one log per history, labels only in the sidecar; each format's
judge is wired; runs resume; old records still load; malformed files are one clear error."""
from __future__ import annotations

import dataclasses
import json
import os

import pytest
from typer.testing import CliRunner

from scroll.bench.beam import write_beam
from scroll.bench.data_judges import FormatJudge, exact_or_contains, rubric_overlap
from scroll.bench.data_task import DataTask
from scroll.bench.datasets import prepare
from scroll.bench.judges import LLMJudge
from scroll.bench.oolong import write_oolong
from scroll.cli import app
from scroll.events import EventLog
from scroll.labels import LabelStore, sidecar_path
from scroll.llm.scripted import ScriptedLLM
from scroll.runner import load_records, run_tasks
from scroll.tasks import build_history
from scroll.tasks.formats import write_locomo, write_longmemeval


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    h = build_history(seed=2, target_tokens=5000)
    lme = json.loads(write_longmemeval(h, d / "lme.json").read_text())
    lme[-1]["question_id"] += "_abs"   # an abstention question
    (d / "lme.json").write_text(json.dumps(lme))
    write_locomo(h, d / "locomo.json")
    (d / "beam").mkdir()
    write_beam(d / "beam" / "chat.json", d / "beam" / "probing_questions.json", seed=0)
    write_oolong(d / "oolong.json", seed=0, n_items=[40, 60])
    return {"longmemeval": d / "lme.json", "locomo": d / "locomo.json", "beam": d / "beam" / "chat.json",
            "oolong": d / "oolong.json", "hist": h}


def _dump(db) -> str:
    with EventLog(db, readonly=True) as log:
        return "\n".join(json.dumps([e.session, e.role, e.kind, e.text, e.meta], default=str)
                         for e in log.events())


@pytest.mark.parametrize("fmt,n_hist,kinds", [
    ("longmemeval", 1, {"knowledge-update", "multi-session", "temporal-reasoning"}),  # 7 questions, one haystack
    ("locomo", 1, {"single-hop", "multi-hop", "temporal"}),
    ("beam", 1, {"abstention", "contradiction_resolution", "temporal_reasoning"}),
    ("oolong", 2, {"numeric_one_class", "most_freq"}),
])
def test_formats_become_work_items_with_labels_only_in_the_sidecar(files, tmp_path, fmt, n_hist, kinds):
    prep = prepare(files[fmt], tmp_path / "h")
    assert prep.format == fmt and prep.histories == n_hist and prep.imported == n_hist
    assert len(prep.refs) == prep.questions_in_file and kinds <= {r.task.kind for r in prep.refs}
    assert len({r.task_id for r in prep.refs}) == len(prep.refs)
    # the work item carries no answer: only where its label lives
    assert [f.name for f in dataclasses.fields(DataTask)] == ["question_id", "question", "kind", "family",
                                                              "labels_db", "label_key", "judger", "history"]
    for db in {r.db for r in prep.refs}:
        assert os.stat(sidecar_path(db)).st_mode & 0o777 == 0o600
        dump = _dump(db)
        assert "has_answer" not in dump and "evidence" not in dump and "rubric" not in dump
        with EventLog(db, readonly=True) as log:
            assert {tuple(sorted(e.meta)) for e in log.events()} <= {("date", "turn"), ("date", "item")}
            assert str(next(iter(log.events())).origin) == "history"
            snap = tmp_path / "snap" / f"{db.name}"
            log.snapshot(snap)   # what the runner hands an agent: no sidecar comes with it
        assert LabelStore(snap).all() == {} and not sidecar_path(snap).exists()
    for r in prep.refs:
        lab = r.task.label()
        assert r.task.question.split("\n")[0] in (lab.get("question") or "") + r.task.question
        gold = lab.get("answer")
        if fmt == "longmemeval" and lab["abstention"]:
            continue
        if fmt != "beam":   # the gold scores full marks with the format's own judge
            v = r.task.judge(gold if not isinstance(gold, list) else str(gold[0]))
            assert v.score == 1.0 and v.correct, (r.task_id, gold, v)
        with EventLog(r.db, readonly=True) as log:   # neither the question's id nor its key is in any event
            assert r.task.label_key not in _dump(r.db) and log.max_seq() > 0
        assert set(r.sessions) <= {f"s{i:03d}" for i in range(1, 200)}
    # resumable: a second prepare imports nothing; --limit takes the first N
    again = prepare(files[fmt], tmp_path / "h", limit=3)
    assert again.imported == 0 and [r.task_id for r in again.refs] == [r.task_id for r in prep.refs[:3]]


def test_judges_per_format(files, tmp_path):
    lme = prepare(files["longmemeval"], tmp_path / "lme").refs
    update = next(r for r in lme if r.task.kind == "knowledge-update")
    gold = update.task.label()["answer"]
    v = update.task.judge(f"You live in {gold} now.")
    assert (v.score, v.judge) == (1.0, "exact_or_contains")
    assert update.task.judge("Paris, France").score == 0.0
    abs_q = next(r for r in lme if r.task.question_id.endswith("_abs"))
    assert abs_q.task.judge("I don't know: that is not mentioned.").judge == "abstention_phrase"
    assert abs_q.task.judge("I don't know.").correct and not abs_q.task.judge(str(gold)).correct
    # with a judge model: LongMemEval's yes/no judge, the abstention rule for _abs ids
    seen = []
    judge = LLMJudge(ScriptedLLM(lambda m: seen.append(m[-1]["content"]) or "Yes."))
    lme2 = prepare(files["longmemeval"], tmp_path / "lme2", llm_judge=judge).refs
    v = lme2[-1].task.judge("no idea")
    assert (v.judge, v.correct, v.detail["abstention"]) == ("longmemeval_llm", True, True)
    assert "unanswerable" in seen[-1]
    # LoCoMo: F1 partial credit; correct from F1 >= 0.5
    loc = prepare(files["locomo"], tmp_path / "loc").refs
    single = next(r for r in loc if r.task.kind == "single-hop")
    gold = single.task.label()["answer"]
    v = single.task.judge(f"{gold} or maybe somewhere else entirely")
    assert v.judge == "locomo" and 0 < v.score < 1 and v.correct == (v.score >= 0.5)
    # OOLONG: 0.75 ** |diff|
    oo = prepare(files["oolong"], tmp_path / "oo").refs
    num = next(r for r in oo if r.task.kind == "numeric_one_class")
    n = num.task.label()["answer"][0]
    assert num.task.judge(f"Answer: {n + 1}").score == pytest.approx(0.75)
    assert num.task.judge(f"Answer: {n}").correct
    # BEAM: the rubric judge model, else the documented deterministic proxy
    beam = prepare(files["beam"], tmp_path / "beam").refs
    info = next(r for r in beam if r.task.kind == "information_extraction")
    lab = info.task.label()
    v = info.task.judge(f"Your sprint ends on {lab['answer']}.")
    assert (v.judge, v.score) == ("beam_rubric_overlap", 1.0)
    assert info.task.judge("No clue.").score == 0.0
    scored = prepare(files["beam"], tmp_path / "beam2",
                     llm_judge=LLMJudge(ScriptedLLM(lambda m: "SCORE: 0.5\nREASON: partly"))).refs
    v = next(r for r in scored if r.task.kind == "information_extraction").task.judge("x")
    assert (v.judge, v.score, v.correct) == ("beam_rubric_llm", 0.5, False)
    assert exact_or_contains("the answer is 42 apples", "42 apples").score == 1.0
    assert exact_or_contains("4200 apples", "42 apples").score == 0.0
    assert rubric_overlap(["LLM response should state: March 3"], "It is March 3.").score == 1.0
    with pytest.raises(ValueError):
        FormatJudge("squad")


def test_runner_records_scores_and_resumes_with_a_manager(files, tmp_path):
    """The truncate manager on a scripted backbone: records carry score + judge; a rerun skips."""
    from scroll.managers import make_manager
    from scroll.managers.base import Budget
    from scroll.config import LoopConfig

    prep = prepare(files["oolong"], tmp_path / "h", limit=3)
    budget = Budget(context_window=2048, max_new_tokens=32)
    make = lambda: ScriptedLLM(lambda m: "Answer: 3")  # noqa: E731
    recs = run_tasks(prep.refs, make, LoopConfig.load(), tmp_path / "out", concurrency=1, label="t",
                     progress=False, manager=make_manager("truncate"), budget=budget)
    assert len(recs) == 3 and all(r.judge == "numeric_partial" and r.score is not None for r in recs)
    assert all(r.kind and r.split == "oolong" and r.reason != "runner_error" for r in recs)
    assert all(abs(r.score - 0.75 ** abs(r.judge_detail["gold"] - 3)) < 1e-9 for r in recs)
    again = run_tasks(prep.refs, make, LoopConfig.load(), tmp_path / "out", concurrency=1, label="t",
                      progress=False, manager=make_manager("truncate"), budget=budget)
    assert [r.started for r in again] == [r.started for r in recs]   # nothing re-ran
    assert len(load_records(tmp_path / "out")) == 3


def test_old_records_still_load_and_report(tmp_path):
    from scroll.bench.table import build_table, to_markdown

    old = {"task_id": "t1", "split": "s", "kind": "count", "family": "f", "label": "x", "backend": {}, "model": "m",
           "answer": "3", "correct": True, "reason": "final", "steps": 1, "code_cells": 1, "executable_cells": 1,
           "executable_cell_rate": 1.0, "exposure_tokens": 0, "prompt_tokens": 5, "completion_tokens": 1,
           "wall_s": 0.1, "db": "x.db", "session": "run-1", "manager": "rag"}
    (tmp_path / "runs.jsonl").write_text(json.dumps(old) + "\n")
    (r,) = load_records(tmp_path)
    assert (r.score, r.judge, r.judge_detail, r.correct) == (None, "check", None, True)
    rep = build_table([tmp_path])
    assert rep["scored"] is False and "mean score" not in to_markdown(rep)


def _cli(*args):
    return CliRunner().invoke(app, ["bench", "run", *map(str, args)])


@pytest.mark.sandbox
def test_cli_runs_a_file_with_the_reference_policy_resumes_and_reports(files, tmp_path):
    out = tmp_path / "o"
    args = ["--data", files["longmemeval"], "--manager", "scroll", "--teacher", "reference", "--window", "4096",
            "--loop-config", "smollm2", "--limit", "3", "--out", out, "--json"]
    r = _cli(*args)
    assert r.exit_code == 0, r.output[-3000:]
    s = json.loads(r.stdout)
    assert (s["format"], s["judges"], s["tasks"]) == ("longmemeval", ["exact_or_contains"], 3)
    recs = load_records(out)
    assert len(recs) == 3 and all(x.score is not None and x.reason != "runner_error" for x in recs)
    assert s["correct"] >= 2 and s["mean_score"] == sum(x.score for x in recs) / 3
    assert all(str(out / "logs") in x.db and LabelStore(x.db).all() == {} for x in recs)
    r2 = _cli(*args)
    assert r2.exit_code == 0 and json.loads((out / "runs.meta.json").read_text())["invocations"][-1]["ran"] == 0
    rep = CliRunner().invoke(app, ["bench", "report", str(out), "--out", str(tmp_path / "t.json"),
                                   "--md", str(tmp_path / "t.md")])
    assert rep.exit_code == 0, rep.output
    md = (tmp_path / "t.md").read_text()
    assert "mean score" in md and "exact_or_contains" in md and "knowledge-update" in md


@pytest.mark.parametrize("content,expect", [
    ("{not json", "invalid JSON"),
    ('{"hello": 1}', "cannot tell the format"),
    ('[{"question_id": "q1", "haystack_sessions": [], "question_type": "multi-session"}]', "question"),
    ('[{"sample_id": "c", "conversation": {"session_1": []}, "qa": [{"question": "q?", "category": 9}]}]',
     "category"),
    ('{"abstention": [{"question": "q", "rubric": []}]}', "probing"),
    ('[{"batch_number": 1, "turns": []}]', "no BEAM probing questions"),
])
def test_malformed_files_are_one_clear_error(tmp_path, content, expect):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    r = _cli("--data", bad, "--manager", "truncate", "--model-url", "http://127.0.0.1:9/v1", "--out", tmp_path / "o")
    assert r.exit_code == 1 and expect in r.output and "Traceback" not in r.output, r.output


def test_cli_flag_errors(files, tmp_path):
    r = _cli("--manager", "rag", "--teacher", "reference", "--out", tmp_path / "o")
    assert r.exit_code == 1 and "--taskset DIR" in r.output
    r = _cli("--data", files["locomo"], "--taskset", tmp_path, "--split", "x", "--manager", "rag", "--out", tmp_path)
    assert r.exit_code == 1 and "one of them" in r.output
    r = _cli("--data", files["locomo"], "--split", "x", "--manager", "truncate", "--model-url", "http://x/v1",
             "--out", tmp_path / "o")
    assert r.exit_code == 1 and "--split goes with --taskset" in r.output
    r = _cli("--data", files["locomo"], "--format", "squad", "--manager", "truncate", "--model-url", "http://x/v1",
             "--out", tmp_path / "o")
    assert r.exit_code == 1 and "unknown format" in r.output
    # an out dir that holds another file's histories is refused
    ok = _cli("--data", files["locomo"], "--manager", "truncate", "--model-url", "http://127.0.0.1:9/v1",
              "--out", tmp_path / "o2", "--limit", "1", "--json")
    assert json.loads(ok.stdout)["tasks"] == 1   # (a runner error: nothing listens there)
    r = _cli("--data", files["oolong"], "--manager", "truncate", "--model-url", "http://127.0.0.1:9/v1",
             "--out", tmp_path / "o2")
    assert r.exit_code == 1 and "another data file" in r.output
    help_ = CliRunner().invoke(app, ["bench", "run", "--help"])
    assert "--data" in help_.output and "--judge-url" in help_.output
