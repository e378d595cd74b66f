"""The benchmark's memory categories (scroll/tasks/families_memory.py): what each family
plants, the two new checkers (`set` for contradictions, `abstain`), the three new kernel
helpers, and the reference policy answering every family through `Agent.run` in the real
sandboxed kernel."""
from __future__ import annotations

import pytest

from scroll.tasks.catalog import CATEGORIES, FAMILIES, KINDS, category_of
from scroll.tasks.check import check_answer
from scroll.tasks.families_memory import ABSENT_FRIENDS, ABSENT_PETS, ABSENT_RELATIVES, MEMORY_FAMILIES
from scroll.tasks.history import build_history
from scroll.tasks.pools import ALL

NEW_KINDS = {"recall", "temporal", "contradiction", "abstention", "preference"}


@pytest.fixture(scope="module")
def hist():
    return build_history(seed=7, target_tokens=40_000, families=sorted(MEMORY_FAMILIES), pool="all", min_sessions=30)


def test_every_family_has_a_kind_and_the_categories_cover_the_issue():
    assert set(KINDS) == set(FAMILIES)
    cats = {category_of(k) for k in KINDS.values()}
    assert cats == {"knowledge_update", "aggregation", "temporal", "recall", "contradiction", "abstention",
                    "preference"}
    assert CATEGORIES["sum"] == CATEGORIES["count"] == "aggregation"


def test_tasks_carry_evidence_except_abstention(hist):
    rows = hist.rows
    for t in hist.tasks:
        assert t.kind == KINDS[t.family]
        if t.kind == "abstention":
            assert t.evidence_idx == [] and t.value == "unknown" and t.value_type == "abstain"
            # the subject IS in the history (near misses), never with the asked relation
            subject = t.params["subject"]
            assert any(subject in r["text"] for r in rows if r["role"] == "user")
        else:
            assert t.evidence_idx, t.family
            for i in t.evidence_idx:
                assert rows[i]["role"] == "user"
        if t.kind == "contradiction":
            a, b = t.value
            assert a != b and any(a in rows[i]["text"] for i in t.evidence_idx) \
                and any(b in rows[i]["text"] for i in t.evidence_idx)


def test_abstention_subjects_never_come_from_the_entity_pools():
    assert not (set(ABSENT_RELATIVES) | set(ABSENT_FRIENDS) | set(ABSENT_PETS)) & ALL.entities()


def test_temporal_answers_follow_the_dates(hist):
    by = {t.family: t for t in hist.tasks}
    gap = by["trip_gap"]
    (a, da), (b, db) = gap.params["trips"]
    assert gap.value == (__import__("datetime").date.fromisoformat(db)
                         - __import__("datetime").date.fromisoformat(da)).days >= 2
    order = by["holiday_order"]
    assert order.value == order.params["order"][0] and order.params["order"][1] in order.question


@pytest.mark.parametrize("text,ok", [
    ("Ines; Rosa", True), ("You told me two things: Rosa and Ines.", True), ("Ines", False),
    ("Ines or Rosa, or Maya", False), ("", False)])
def test_set_checker(text, ok):
    assert check_answer(text, ["Ines", "Rosa"], "set", ["Maya"]) is ok


@pytest.mark.parametrize("text,ok", [
    ("unknown", True), ("You never mentioned where your godmother lives.", True),
    ("I don't know.", True), ("That is not in our conversations.", True),
    ("Oslo", False), ("Probably Oslo, but you never said.", False), ("", False),
    ("I don't know, maybe 2026-03-01", False), ("not sure, 3 times?", False), ("Lisbon", False)])
def test_abstain_checker(text, ok):
    assert check_answer(text, "unknown", "abstain", ["Oslo"]) is ok


def test_abstain_is_the_only_type_where_unknown_passes():
    assert not check_answer("unknown", "Oslo", "entity", [])
    assert not check_answer("unknown", ["A", "B"], "set", [])


@pytest.mark.sandbox
def test_reference_policy_answers_every_new_family_through_agent_run_in_the_sandbox(tmp_path):
    """The path the benchmark takes: Agent.run, the real sandboxed kernel (the toolkit from the
    prelude), the task's own checker."""
    from scroll.agent import Agent
    from scroll.config import LoopConfig
    from scroll.policies.reference import ReferencePolicy
    from scroll.tasks import build_demo_log

    log, tasks = build_demo_log(tmp_path / "mem.db", seed=8, target_tokens=30_000,
                                families=sorted(MEMORY_FAMILIES), pool="all", min_sessions=30)
    cfg = LoopConfig(max_steps=5, cell_timeout=30, max_output_chars=2000, soft_budget=3000, hard_budget=6000)
    wrong = []
    with log:
        with Agent.open(log, ReferencePolicy(), cfg, session="mem") as agent:
            for t in tasks:
                res = agent.run(t.question)
                if not t.check(res.answer):
                    wrong.append((t.family, t.question, res.answer, t.answer))
    assert not wrong, wrong
    assert {t.kind for t in tasks} >= NEW_KINDS
