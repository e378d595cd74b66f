"""Natural-question test set (issue #27 item 4): configs/tasks/natural-*.questions.jsonl,
checked against the labels of the histories they ask about (scroll.tasks.natural)."""
from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from scroll.tasks.check import check_answer, normalize_text
from scroll.tasks.natural import NaturalError, history_facts, load_questions, natural_refs
from scroll.tasks.splits import TaskSetSpec, build_taskset
from scroll.tasks.wordings import WORDINGS, template_regex

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "configs" / "tasks"
FAMILIES = ["update_city", "update_employer", "relative_city", "count_dentist", "count_yoga", "count_haircut",
            "meet_friend", "date_adopt", "date_race", "sum_bike", "sum_taxi", "sum_groceries", "holiday_order",
            "trip_gap", "date_lesson"]
# question types the generator asks (in its own words); every other qtype is new
GENERATOR_QTYPES = {"current", "count", "date", "sum", "order", "gap"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = {}
    for name in ("natural-v1", "natural-dev"):
        d = tmp_path_factory.mktemp(name)
        build_taskset(TaskSetSpec.load(TASKS / f"{name}.yaml"), d)
        out[name] = d
    return out


def _records(name):
    return load_questions(TASKS / f"{name}.questions.jsonl")


def test_specs():
    v1 = TaskSetSpec.load(TASKS / "natural-v1.yaml")
    (split,) = v1.splits.values()
    assert (split.pool, split.wording, split.role, split.histories) == ("test", "paraphrase", "test", 8)
    assert (v1.history_tokens, v1.min_sessions, v1.exchanges, v1.heldout_kinds) == (36000, 24, [5, 14], [])
    dev = TaskSetSpec.load(TASKS / "natural-dev.yaml")
    (dsplit,) = dev.splits.values()
    assert (dsplit.pool, dsplit.wording, dsplit.histories) == ("train", "train", 6)
    assert sorted(split.families) == sorted(dsplit.families) == sorted(FAMILIES)


@pytest.mark.parametrize("name,minimum", [("natural-v1", 200), ("natural-dev", 30)])
def test_records_parse(name, minimum):
    recs = _records(name)
    assert len(recs) >= minimum
    assert len({r["id"] for r in recs}) == len(recs)
    assert len({normalize_text(r["question"]) for r in recs}) == len(recs)  # every question written once
    for r in recs:
        assert set(r["families"]) <= set(FAMILIES), r["id"]
        if r["value_type"] == "yesno":
            assert r["value"] in ("yes", "no")
        if r["value_type"] == "abstain":
            assert r["value"] == "unknown"
        if r["derive"]["op"] == "literal":
            assert r["value_type"] == "abstain" and r["derive"].get("why"), r["id"]


def test_coverage_v1():
    recs = _records("natural-v1")
    fams = Counter(f for r in recs for f in r["families"])
    assert all(fams[f] >= 8 for f in FAMILIES), fams
    qtypes = Counter(r["qtype"] for r in recs)
    new = {q: n for q, n in qtypes.items() if q not in GENERATOR_QTYPES}
    assert sum(n >= 15 for n in new.values()) >= 4, qtypes
    vtypes = Counter(r["value_type"] for r in recs)
    assert {"entity", "number", "date", "set", "abstain", "yesno"} <= set(vtypes)
    assert vtypes["abstain"] >= 8
    histories = Counter(r["history"] for r in recs)
    assert sorted(histories) == list(range(8)) and min(histories.values()) >= 20


def _expansions(template: str) -> list[str]:
    """Every sentence a question template can be (grammar frames hold `[a|b]` groups)."""
    if "[" not in template:
        return [template]
    from scroll.tasks.grammars import expansions

    return expansions(template)


@pytest.mark.parametrize("name", ["natural-v1", "natural-dev"])
def test_derive_matches_labels_and_checker(built, name):
    """Every answer follows from its history's labels; the checker takes the canonical answer
    and rejects wrong ones (a distractor named, a different number / date / yes-no)."""
    refs = natural_refs(built[name], TASKS / f"{name}.questions.jsonl")
    recs = {r["id"]: r for r in _records(name)}
    assert [r.task_id for r in refs] == list(recs)
    facts = history_facts(built[name])
    templates = [re.compile(template_regex(e).pattern, re.I) for w in WORDINGS.values()
                 for key, ts in w.items() if key.endswith("_q") for t in ts for e in _expansions(t)]
    for ref in refs:
        t, rec = ref.task, recs[ref.task_id]
        assert ref.split == "natural" and t.family == "natural:" + rec["qtype"] and t.kind == rec["qtype"]
        assert ref.db == facts[rec["history"]].db and ref.sessions == facts[rec["history"]].sessions
        assert not any(p.fullmatch(t.question) for p in templates), t.question  # never the generator's wording
        assert t.check(t.answer), (ref.task_id, t.answer)
        label_text = facts[rec["history"]].text()
        for d in t.distractors:  # distractors come from the labels / history
            assert re.search(rf"(?<!\w){re.escape(d)}(?!\w)", label_text, re.I), (ref.task_id, d)
            if t.value_type in ("entity", "set", "abstain"):
                assert not t.check(f"{t.answer} Also {d}."), (ref.task_id, d)
        if t.value_type == "entity":
            assert not any(t.check(d) for d in t.distractors)
        elif t.value_type == "number":
            assert not t.check(str(t.value + 1)) and not t.check(f"{t.value} or {t.value + 2}")
        elif t.value_type == "date":
            other = dt.date.fromisoformat(t.value) + dt.timedelta(days=1)
            assert not t.check(other.isoformat())
        elif t.value_type == "yesno":
            assert not t.check("No." if t.value == "yes" else "Yes.")
        elif t.value_type == "set":
            assert not t.check(t.value[0])  # naming only some of them is not enough
        elif t.value_type == "abstain":
            assert not t.check("42") and not t.check("unknown, maybe 2026-01-20")


def test_check_yesno():
    assert check_answer("Yes, you did.", "yes", "yesno")
    assert check_answer("yep", "yes", "yesno") and check_answer("Nope, never.", "no", "yesno")
    assert check_answer("No. You interviewed there but never joined.", "no", "yesno")
    assert not check_answer("No.", "yes", "yesno") and not check_answer("Yes.", "no", "yesno")
    assert not check_answer("Yes and no.", "yes", "yesno")          # both said
    assert not check_answer("You did.", "yes", "yesno")             # neither said
    assert not check_answer("", "yes", "yesno") and not check_answer(None, "no", "yesno")
    assert not check_answer("Yes, in Lyon.", "yes", "yesno", ["Lyon"])
    assert check_answer("yes", True, "yesno") and check_answer("no", False, "yesno")
    assert not check_answer("yesterday", "yes", "yesno")           # whole words only
    with pytest.raises(ValueError):
        check_answer("yes", "maybe", "yesno")
    # the other types are unchanged
    assert check_answer("five times", 5, "number") and not check_answer("unknown", "Oslo", "entity", [])


def _write(tmp_path, lines) -> Path:
    p = tmp_path / "q.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def _rec(**kw) -> str:
    rec = {"id": "x-1", "history": 0, "question": "Where do I live now?", "qtype": "current",
           "families": ["update_city"], "value_type": "entity", "value": "Helsinki", "distractors": [],
           "answer": "Helsinki", "derive": {"op": "value", "family": "update_city"}}
    rec.update(kw)
    return json.dumps(rec)


def test_errors(built, tmp_path):
    ts = built["natural-v1"]
    with pytest.raises(NaturalError, match=r"q.jsonl:2: not valid JSON"):
        natural_refs(ts, _write(tmp_path, [_rec(), "{oops"]))
    with pytest.raises(NaturalError, match=r"q.jsonl:1: missing keys \['derive'\]"):
        natural_refs(ts, _write(tmp_path, [json.dumps({k: v for k, v in json.loads(_rec()).items() if k != "derive"})]))
    with pytest.raises(NaturalError, match=r":3: id 'x-1' already used on line 1"):
        natural_refs(ts, _write(tmp_path, [_rec(), "", _rec()]))
    with pytest.raises(NaturalError, match=r"value_type must be one of"):
        natural_refs(ts, _write(tmp_path, [_rec(value_type="colour")]))
    with pytest.raises(NaturalError, match=r"no history 99 .* \(has 0\.\.7\)"):
        natural_refs(ts, _write(tmp_path, [_rec(history=99)]))
    with pytest.raises(NaturalError, match=r":1 \(x-1\): derive gives 'Helsinki', the record says 'Oslo'"):
        natural_refs(ts, _write(tmp_path, [_rec(value="Oslo", answer="Oslo")]))
    with pytest.raises(NaturalError, match=r"does not name 'Lyon'"):
        natural_refs(ts, _write(tmp_path, [_rec(derive={"op": "value", "family": "update_city", "about": ["Lyon"]})]))
    with pytest.raises(NaturalError, match=r"literal. is for abstain"):
        natural_refs(ts, _write(tmp_path, [_rec(derive={"op": "literal", "value": "Helsinki"})]))
    with pytest.raises(NaturalError, match=r"'Helsinki' occurs in"):
        natural_refs(ts, _write(tmp_path, [_rec(value_type="abstain", value="unknown", answer="not mentioned",
                                                derive={"op": "absent", "terms": ["Helsinki"]})]))
    with pytest.raises(NaturalError, match=r"unknown derive op 'guess'"):
        natural_refs(ts, _write(tmp_path, [_rec(derive={"op": "guess"})]))
    with pytest.raises(NaturalError, match=r"family 'recall_born' is not planted"):
        natural_refs(ts, _write(tmp_path, [_rec(derive={"op": "value", "family": "recall_born"})]))
    refs = natural_refs(ts, _write(tmp_path, ["# a comment", _rec()]))
    assert len(refs) == 1 and refs[0].task.check("You live in Helsinki.")
    with pytest.raises(NaturalError, match=r"no questions file 'natural-v9'"):
        natural_refs(ts, "natural-v9")
    by_name = natural_refs(built["natural-dev"], "natural-dev")  # found on the config search path
    assert [r.task_id for r in by_name] == [r["id"] for r in _records("natural-dev")]


def test_collect_trains_on_a_train_role_sets_questions_never_the_test_sets(built, tmp_path):
    """`scroll collect --questions`: natural-dev's questions become split `train` records (the writer's
    trajectories through the loop), --skip-kind leaves out those that touch a held-out kind's families,
    and the test set's questions (natural-v1, test-role histories) are refused before any run."""
    from typer.testing import CliRunner

    from scroll.cli import app

    out = tmp_path / "q"
    r = CliRunner().invoke(app, ["collect", "--taskset", str(built["natural-dev"]), "--questions", "natural-dev",
                                 "--skip-kind", "sum", "--teacher", "writer", "--loop-config", "smollm2-compact",
                                 "--out", str(out), "--limit", "12", "--json"])
    assert r.exit_code == 0, r.output
    recs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    by_id = {rec["id"]: rec for rec in _records("natural-dev")}
    assert len(recs) == 12 and {rec["split"] for rec in recs} == {"train"}
    assert not any(f.startswith("sum_") for rec in recs for f in by_id[rec["task_id"]]["families"])
    assert sum(rec["correct"] for rec in recs) >= 9
    bad = CliRunner().invoke(app, ["collect", "--taskset", str(built["natural-v1"]), "--questions", "natural-v1",
                                   "--teacher", "writer", "--out", str(tmp_path / "no")])
    assert bad.exit_code != 0 and "evaluation only" in bad.output and not (tmp_path / "no" / "runs.jsonl").exists()
    bad = CliRunner().invoke(app, ["collect", "--taskset", str(built["natural-dev"]), "--questions", "natural-dev",
                                   "--skip-kind", "summ", "--teacher", "writer", "--out", str(tmp_path / "no")])
    assert bad.exit_code != 0 and "unknown kind" in bad.output
