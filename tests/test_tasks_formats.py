"""The generated history written as LongMemEval / LoCoMo JSON reads back through the
project's own loaders with the same turns and evidence, and the policy still answers."""
from __future__ import annotations

import pytest

from scroll.tasks import build_history
from scroll.tasks.formats import write_locomo, write_longmemeval


@pytest.fixture(scope="module")
def hist():
    return build_history(seed=2, target_tokens=50_000)


def test_longmemeval_roundtrip_and_policy(hist, tmp_path):
    from scroll.events import EventLog
    from scroll.importers import import_rows, parse_file
    from scroll.policies.reference import ReferencePolicy
    from scroll.policies.harness import SimKernel, run_episode

    path = write_longmemeval(hist, tmp_path / "lme.json")
    for task in hist.tasks:
        parsed = parse_file(path, "longmemeval", instance=task.question_id)
        (lab,) = parsed.labels.values()
        assert lab["question"] == task.question and lab["answer"] == task.answer
        assert [r["text"] for r in parsed.rows] == [r["text"] for r in hist.rows]
        marked = lab["evidence_rows"]
        assert marked == task.evidence_idx
    # the imported haystack (session-level times) still answers every question
    parsed = parse_file(path, "longmemeval", instance=hist.tasks[0].question_id)
    with EventLog(tmp_path / "lme.db", durability="normal") as log:
        import_rows(log, parsed.rows)
        for task in hist.tasks:
            ep = run_episode(ReferencePolicy(), log, task.question, kernel=SimKernel(log, pack="generated", record=False))
            assert task.check(ep.answer), (task.question, ep.answer, task.answer)


def test_locomo_roundtrip(hist, tmp_path):
    from scroll.bench.locomo import load

    events, questions = load(write_locomo(hist, tmp_path / "locomo.json"))
    assert [e["text"] for e in events] == [r["text"] for r in hist.rows]
    assert [e["role"] for e in events] == [r["role"] for r in hist.rows]
    assert [e["time"][:16] for e in events][:1] == [hist.rows[0]["time"][:16]]
    assert [q.text for q in questions] == [t.question for t in hist.tasks]
    assert [q.evidence for q in questions] == [t.evidence_idx for t in hist.tasks]
