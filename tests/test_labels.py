"""Label hygiene: what an evaluation scores against lives in the label sidecar, never in
the events that `ms` (scroll.capability) can return. The sidecar store itself, the
LongMemEval import (real-data-shaped and generated), and the order of writes."""
from __future__ import annotations

import json
import os
import stat

import pytest
from typer.testing import CliRunner

from scroll.capability import Capability
from scroll.cli import app
from scroll.events import EventLog
from scroll.labels import LabelError, LabelStore, sidecar_path

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


# ----------------------------------------------------------------- store
def test_label_store_roundtrip_atomic_0600(tmp_path):
    db = tmp_path / "x.db"
    store = LabelStore(db)
    assert store.path == sidecar_path(db) == tmp_path / "x.db.labels.json"
    assert store.all() == {} and store.get("k") is None
    store.put("longmemeval/q1", {"answer": "Globex", "evidence_seqs": [3]})
    store.put_many({"a": 1, "b": [1, 2]})
    assert LabelStore(db).all() == {"longmemeval/q1": {"answer": "Globex", "evidence_seqs": [3]}, "a": 1, "b": [1, 2]}
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["x.db.labels.json"]  # no temp file left
    store.put("a", 2)
    assert store.get("a") == 2 and store.get("b") == [1, 2]


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"version": 99, "labels": {}}', '{"version": 1}'])
def test_label_store_refuses_what_it_cannot_read(tmp_path, content):
    (tmp_path / "x.db.labels.json").write_text(content)
    with pytest.raises(LabelError):
        LabelStore(tmp_path / "x.db").all()


# ------------------------------------------------ LongMemEval import
def _lme(qid="gpt4_2f8be40d"):
    """Shaped like longmemeval_s: evidence sessions named `answer_...`, has_answer on evidence turns,
    haystack not in date order in the file."""
    return {
        "question_id": qid, "question_type": "knowledge-update",
        "question": "Which company do I work for now?", "answer": "Globex Corporation",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": ["answer_e7b0637e_1", "sharegpt_3kXN2x_0", "answer_e7b0637e_2"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/02 (Tue) 11:00", "2023/05/28 (Sun) 14:05"],
        "haystack_sessions": [
            [{"role": "user", "content": "I started at Initech today.", "has_answer": True},
             {"role": "assistant", "content": "Congrats on the new job!"}],
            [{"role": "user", "content": "Give me a pancake recipe."},
             {"role": "assistant", "content": "Flour, eggs, milk, a pinch of salt."}],
            [{"role": "user", "content": "I moved to Globex Corporation as a data engineer.", "has_answer": True},
             {"role": "assistant", "content": "Nice move."}],
        ],
        "answer_session_ids": ["answer_e7b0637e_1", "answer_e7b0637e_2"],
    }


LABEL_WORDS = ("answer_", "sharegpt", "has_answer", "gpt4_2f8be40d", "knowledge-update", "question",
               "Which company do I work for now", "evidence")


def _import(tmp_path, instances, qid=None):
    f = tmp_path / "lme.json"
    f.write_text(json.dumps(instances))
    db = tmp_path / "l.db"
    args = ["import", f, "--db", db, "--json"] + (["--instance", qid] if qid else [])
    r = _run(*args)
    return db, r


def test_longmemeval_events_carry_no_labels_and_the_sidecar_has_them(tmp_path):
    db, r = _import(tmp_path, [_lme()])
    assert r.exit_code == 0, r.output
    for word in ("Globex Corporation", "answer_e7b0637e"):
        assert word not in r.stdout
    with EventLog(db, readonly=True) as log:
        events = log.expand(1, log.max_seq())
        # neutral names in date order: 05/02 -> s001, 05/20 -> s002, 05/28 -> s003; seqs follow dates
        assert [e.session for e in events] == ["s001", "s001", "s002", "s002", "s003", "s003"]
        assert [e.time[:10] for e in events] == ["2023-05-02"] * 2 + ["2023-05-20"] * 2 + ["2023-05-28"] * 2
        assert all(set(e.meta) == {"turn", "date"} for e in events)
        assert all(str(e.origin) == "history" for e in events)
        # everything ms can hand to model code is free of label data
        cap = Capability(log)
        seen = [cap.sessions(), cap.recent(100), cap.expand(1, 6),
                cap.search("which company do I work for now Globex", k=10, origin="*")]
        blob = json.dumps(seen)
        for word in LABEL_WORDS:
            assert word not in blob, word
        hits = cap.search("Globex", k=1)
        assert hits[0]["session"] == "s003" and hits[0]["meta"] == {"turn": 0, "date": "2023/05/28 (Sun) 14:05"}
    lab = LabelStore(db).get("longmemeval/gpt4_2f8be40d")
    assert lab["question"] == "Which company do I work for now?" and lab["answer"] == "Globex Corporation"
    assert lab["question_type"] == "knowledge-update" and lab["question_date"] == "2023/06/01 (Thu) 10:00"
    assert lab["answer_session_ids"] == ["answer_e7b0637e_1", "answer_e7b0637e_2"]
    assert lab["answer_sessions"] == ["s002", "s003"]
    assert lab["sessions"] == {"s001": "sharegpt_3kXN2x_0", "s002": "answer_e7b0637e_1", "s003": "answer_e7b0637e_2"}
    assert lab["evidence_seqs"] == [3, 5] and lab["abstention"] is False
    with EventLog(db, readonly=True) as log:  # the evidence seqs point at the has_answer turns
        assert [log.expand(s).text for s in lab["evidence_seqs"]] == [
            "I started at Initech today.", "I moved to Globex Corporation as a data engineer."]
    assert stat.S_IMODE(os.stat(sidecar_path(db)).st_mode) == 0o600


def test_second_instance_into_the_same_log_is_refused_its_own_log_works(tmp_path):
    """LongMemEval instances share the neutral session names (s001, ...): a second one into the same
    log would merge two haystacks, so it is refused, with nothing written; each goes into its own log."""
    db, r = _import(tmp_path, [_lme("q1"), _lme("q2_abs")], "q1")
    assert r.exit_code == 0, r.output
    before = LabelStore(db).all()
    db, r = _import(tmp_path, [_lme("q1"), _lme("q2_abs")], "q2_abs")
    assert r.exit_code == 1 and "already in" in r.output
    assert LabelStore(db).all() == before and sorted(before) == ["longmemeval/q1"]
    assert before["longmemeval/q1"]["evidence_seqs"] == [3, 5]
    other = tmp_path / "q2.db"
    r = _run("import", tmp_path / "lme.json", "--db", other, "--instance", "q2_abs")
    assert r.exit_code == 0, r.output
    lab = LabelStore(other).get("longmemeval/q2_abs")
    assert lab["evidence_seqs"] == [3, 5] and lab["abstention"]


def test_no_sidecar_when_the_import_fails(tmp_path, monkeypatch):
    inst = _lme()
    inst["answer"] = float("nan")  # json.dumps writes NaN: refused before anything is written
    f = tmp_path / "lme.json"
    f.write_text(json.dumps([inst]))
    r = _run("import", f, "--db", tmp_path / "l.db")
    assert r.exit_code == 1 and ":1: NaN is not allowed" in r.output
    assert os.listdir(tmp_path) == ["lme.json"]

    def boom(self, rows):
        list(rows)
        raise ValueError("append failed")

    monkeypatch.setattr(EventLog, "append_many", boom)  # labels are written only after the commit
    db, r = _import(tmp_path, [_lme()])
    assert r.exit_code == 1 and "append failed" in r.output
    assert not db.exists() and not sidecar_path(db).exists()


def test_jsonl_meta_is_the_users_own(tmp_path):
    f = tmp_path / "ev.jsonl"
    f.write_text(json.dumps({"session": "chat-7", "role": "user", "text": "hi", "meta": {"source": "mine"}}) + "\n")
    db = tmp_path / "j.db"
    r = _run("import", f, "--db", db, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["labels"] is None and not sidecar_path(db).exists()
    with EventLog(db, readonly=True) as log:
        e = log.expand(1)
        assert e.session == "chat-7" and e.meta == {"source": "mine"} and str(e.origin) == "history"


def test_generated_tasks_written_as_longmemeval_import_with_labels_in_the_sidecar(tmp_path):
    from scroll.tasks import build_history
    from scroll.tasks.formats import to_longmemeval, write_longmemeval

    h = build_history(seed=3, target_tokens=8_000)
    path = write_longmemeval(h, tmp_path / "gen.json")
    doc = json.loads(path.read_text())
    assert doc == to_longmemeval(h)  # the public format, exactly: has_answer stays in the FILE
    task = h.tasks[0]
    inst = next(x for x in doc if x["question_id"] == task.question_id)
    assert sum(t.get("has_answer") is True for s in inst["haystack_sessions"] for t in s) == len(task.evidence_idx)
    db = tmp_path / "g.db"
    r = _run("import", path, "--db", db, "--instance", task.question_id, "--json")
    assert r.exit_code == 0, r.output
    lab = LabelStore(db).get(f"longmemeval/{task.question_id}")
    assert lab["answer"] == task.answer and lab["question"] == task.question
    with EventLog(db, readonly=True) as log:
        assert [log.expand(s).text for s in lab["evidence_seqs"]] == [h.rows[i]["text"] for i in task.evidence_idx]
        blob = json.dumps([e.to_dict() for e in log.events()], default=str)
    assert "has_answer" not in blob and task.question_id not in blob
