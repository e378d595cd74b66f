"""Distill on your own data: `scroll collect --data` / `scroll distill eval --data` over a data
file's histories, split by history (scroll.bench.data_parts), a user's own questions over an
imported chat log (jsonl-qa), bad input refused before any model call with nothing written,
a killed collect resumed without duplicates or losses, and the whole path end to end with a
tiny model: import -> collect -> export -> sft -> eval, no manual step."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scroll.bench import data_parts
from scroll.bench.qa_file import read_qa
from scroll.cli import app
from scroll.importers import BadInputError
from tests.test_import_formats import chat_file

ROOT = Path(__file__).resolve().parents[1]
DEAD_URL = "http://127.0.0.1:9/v1"   # nothing listens: a test that reaches a model call fails loudly


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _lme(tmp_path: Path, histories: int = 3, questions: int = 4, tokens: str = "3000") -> Path:
    f = tmp_path / "lme.json"
    r = _run("tasks", "write", f, "--tokens", tokens, "--histories", histories, "--questions", questions, "--json")
    assert r.exit_code == 0, r.output
    return f


def _records(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines() if x.strip()]


# ---------------------------------------------------------------------------- parts by history
def test_parts_are_disjoint_by_history_stable_and_keep_one_held_out():
    hs = [f"h{i}" for i in range(20)]
    of = data_parts.assign(hs)
    assert of == data_parts.assign(list(reversed(hs)))          # not file order: the key's hash
    counts = {p: sum(v == p for v in of.values()) for p in data_parts.PARTS}
    assert counts == {"train": 14, "dev": 2, "held_out": 4}
    assert data_parts.assign(["a", "b"]) in ({"a": "held_out", "b": "train"}, {"a": "train", "b": "held_out"})
    assert set(data_parts.assign(["a", "b", "c"]).values()) == {"held_out", "dev", "train"}
    assert data_parts.assign(["only"]) == {"only": "train"}


def test_questions_of_one_history_stay_together(tmp_path):
    from scroll.bench.datasets import prepare

    prep = prepare(_lme(tmp_path, histories=5, questions=3), tmp_path / "h")
    assert prep.histories == 5 and len(prep.refs) == 15 and prep.imported == 5   # one log per haystack
    by_hist: dict[str, set] = {}
    for part in data_parts.PARTS:
        refs, chosen = data_parts.split(prep.refs, [part])
        assert {r.split for r in refs} == {part} and chosen["counts"][part]["questions"] == len(refs)
        for r in refs:
            by_hist.setdefault(r.task.history, set()).add(part)
            assert r.db.name == f"{r.task.history}.db"
    assert len(by_hist) == 5 and all(len(v) == 1 for v in by_hist.values())


def test_jsonl_qa_groups_questions_that_share_sessions(tmp_path):
    q = tmp_path / "qa.jsonl"
    q.write_text("\n".join(json.dumps(x) for x in [
        {"question": "a?", "answer": "x", "sessions": ["s1", "s2"]},
        {"question": "b?", "answer": ["y", "z"], "sessions": ["s2", "s3"], "id": "b"},
        {"question": "c?", "answer": "w", "sessions": ["s9"]}]) + "\n")
    from scroll.bench.qa_file import _histories

    qs = read_qa(q)
    assert [x["id"] for x in qs] == ["line-1", "b", "line-3"]
    h = _histories(qs)
    assert h[0] == h[1] != h[2]
    q.write_text(json.dumps({"question": "a?", "sessions": ["s1"]}) + "\n")
    with pytest.raises(BadInputError, match=":1: 'answer': missing"):
        read_qa(q)


# ---------------------------------------------------------------------------- bad input
def _collect_fails(tmp_path: Path, *args) -> str:
    out = tmp_path / "out"
    r = _run("collect", *args, "--model-url", DEAD_URL, "--out", out, "--json")
    assert r.exit_code == 1, r.output
    assert not out.exists(), "nothing may be written for bad input"
    return json.loads(r.stdout)["error"]


def test_bad_data_is_refused_before_any_model_call_and_nothing_is_written(tmp_path):
    good = json.loads(_lme(tmp_path, histories=2, questions=2).read_text())
    no_answers = tmp_path / "no-answers.json"
    no_answers.write_text(json.dumps([{k: v for k, v in x.items() if k != "answer"} for x in good]))
    assert "[0].answer: missing" in _collect_fails(tmp_path, "--data", no_answers)
    truncated = tmp_path / "truncated.json"
    truncated.write_bytes(json.dumps(good).encode()[:5000])
    assert "invalid JSON" in _collect_fails(tmp_path, "--data", truncated)
    assert "unknown format 'yaml'" in _collect_fails(tmp_path, "--data", no_answers, "--format", "yaml")
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps([{"prompt": "p", "completion": "c"}]))
    assert "cannot tell the format" in _collect_fails(tmp_path, "--data", odd)
    # a user's questions over sessions the log does not have
    db = tmp_path / "chat.db"
    assert _run("import", chat_file(tmp_path / "chat.jsonl"), "--db", db).exit_code == 0
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"question": "Where did I move?", "answer": "Lisbon", "sessions": ["nope"]}) + "\n")
    assert "session(s) ['nope'] are not in" in _collect_fails(tmp_path, "--data", qa, "--db", db)
    assert "give it with --db" in _collect_fails(tmp_path, "--data", qa)
    # --data and --taskset, or --split with --data: refused
    assert "one of them" in _collect_fails(tmp_path, "--data", qa, "--taskset", tmp_path)
    assert "--data takes --part" in _collect_fails(tmp_path, "--data", qa, "--db", db, "--split", "train")
    assert "unknown part" in _collect_fails(tmp_path, "--data", _lme(tmp_path), "--part", "test")


# ---------------------------------------------------------------------------- resumable
@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_killed_collect_resumes_without_duplicates_or_losses(tmp_path):
    data = _lme(tmp_path, histories=4, questions=5)
    out = tmp_path / "out"
    cmd = [str(Path(sys.executable).parent / "scroll"), "collect", "--data", str(data), "--teacher", "writer",
           "--out", str(out), "--concurrency", "1", "--json"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    runs = out / "runs.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline and (not runs.exists() or len(runs.read_text().splitlines()) < 3):
        time.sleep(0.2)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    done_before = len(_records(out))
    assert 3 <= done_before, "the collect was killed before it had written 3 records"
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
    assert r.returncode == 0, r.stderr[-2000:]
    recs = _records(out)
    ids = [x["task_id"] for x in recs]
    summary = json.loads(r.stdout)
    expected = sum(c["questions"] for p_, c in summary["data"]["counts"].items() if p_ in ("train", "dev"))
    assert len(ids) == len(set(ids)) == expected > done_before   # nothing twice, nothing lost
    assert {x["split"] for x in recs} <= {"train", "dev"}


# ---------------------------------------------------------------------------- end to end
CHATS = [("move", "I just moved to Lisbon for the new job.", "Where did I move to?", "Lisbon"),
         ("dog", "I adopted a dog called Pixel last week.", "What is my dog called?", "Pixel"),
         ("car", "I finally bought a car, a blue Volvo.", "What car did I buy?", "Volvo"),
         ("gym", "I joined a gym called Ironworks yesterday.", "Which gym did I join?", "Ironworks")]


def _chat_and_questions(tmp_path: Path) -> tuple[Path, Path]:
    chats = tmp_path / "chats.jsonl"
    chats.write_text("\n".join(json.dumps({"id": f"conv-{k}", "created": 1714550400 + i * 86400, "messages": [
        {"role": "user", "content": said}, {"role": "assistant", "content": "Good to know."}]})
        for i, (k, said, _, _) in enumerate(CHATS)) + "\n")
    qa = tmp_path / "qa.jsonl"
    qa.write_text("\n".join(json.dumps({"id": k, "question": q, "answer": a, "sessions": [f"conv-{k}"]})
                            for k, _, q, a in CHATS) + "\n")
    return chats, qa


@pytest.mark.sandbox
@pytest.mark.model
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_own_data_end_to_end_with_a_tiny_model(tmp_path, tiny_model_dir):
    # 1. a LongMemEval-format file (scroll tasks write) and an OpenAI messages file (imported)
    lme = _lme(tmp_path, histories=3, questions=4)
    chats, qa = _chat_and_questions(tmp_path)
    db = tmp_path / "chats.db"
    r = _run("import", chats, "--db", db, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["format"] == "chat-jsonl", r.output
    # 2. collect: the wording-robust teacher on the train and dev histories of each
    for name, extra in (("lme", ["--data", lme]), ("chat", ["--data", qa, "--db", db])):
        r = _run("collect", *extra, "--teacher", "writer", "--out", tmp_path / f"runs-{name}", "--json")
        assert r.exit_code == 0, r.output
        s = json.loads(r.stdout)
        assert set(s["splits"]) <= {"train", "dev"} and s["data"]["counts"]["held_out"]["histories"] >= 1
        assert s["correct"] >= 1, f"{name}: the teacher solved nothing"
    # 3. export as it is (train.jsonl + dev.jsonl: no renaming), 4. sft the tiny model
    sft = tmp_path / "sft"
    r = _run("distill", "export", "--runs", tmp_path / "runs-lme", "--runs", tmp_path / "runs-chat", "--out", sft,
             "--trajectories", "--json")
    assert r.exit_code == 0, r.output
    assert (sft / "train.jsonl").is_file() and (sft / "dev.jsonl").is_file()
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text((ROOT / "configs/distill/tiny-ci.yaml").read_text()
                   .replace("model: tiny-qwen3", f"model: {tiny_model_dir}").replace("max_length: 1024",
                                                                                   "max_length: 8192"))
    r = _run("distill", "sft", "--config", cfg, "--data", sft, "--out", tmp_path / "student", "--max-steps", "2",
             "--json")
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert res["steps"] == 2 and res["tokens_trained"] > 0
    merged = tmp_path / "student" / "merged"
    # 5. eval on the held-out histories only: none of them gave a training row
    trained_on = {json.loads(x)["task_id"] for f in ("train", "dev")
                  for x in (sft / f"{f}.meta.jsonl").read_text().splitlines()}
    for name, extra in (("lme", ["--data", lme, "--import-dir", tmp_path / "runs-lme" / "histories"]),
                        ("chat", ["--data", qa, "--db", db])):
        out = tmp_path / f"eval-{name}"
        r = _run("distill", "eval", *extra, "--llm", "tiny-transformers", "--model", merged, "--label", "trained",
                 "--loop-config", "smollm2", "--limit", "2", "--out", out, "--json")
        assert r.exit_code == 0, r.output
        recs = _records(out)
        assert recs and {x["split"] for x in recs} == {"held_out"} and not trained_on & {x["task_id"] for x in recs}
        assert all(x["label"] == "trained" and x["reason"] != "runner_error" for x in recs)
