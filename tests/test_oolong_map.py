"""OOLONG-style aggregation with ms.llm_map: the reference policy's programs (read every item,
label each with llm_map, aggregate in Python) and the RuleMapper that answers the item calls
from the item's wording (never from labels), through `scroll bench run` / the runner with the
real loop and the sandboxed kernel. A cell asking llm_map for 10**6 items is refused up front:
tests/test_llm_map.py::test_budgets_refuse_up_front_and_bound_retries (client) and
::test_through_agent_run_in_the_sandboxed_kernel (a cell in the kernel)."""
from __future__ import annotations

import json
import resource
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from scroll.bench.oolong import LABELS, generate_window, write_oolong
from scroll.operators.llm_map import item_messages
from scroll.policies.mapper import RuleMapper, classify, instance_of
from scroll.policies.oolong_programs import Ask, instruction, match_oolong, parse_query
from scroll.policies.reference import ReferencePolicy

SCHEMA = {"type": "object", "properties": {"label": {"enum": list(LABELS)}}, "required": ["label"]}


def _task(w, q) -> str:
    return f"{w.instructions}\n\n{q.question}"


def test_the_rule_labels_every_generated_item_from_its_wording():
    """100 % on generated windows; the mapper sees the plain line (no label) and nothing else."""
    mapper = RuleMapper()
    for seed in range(3):
        w, _ = generate_window(seed, 3000, window_id=seed)
        assert all(classify(i.text) == i.label for i in w.items)
        for item in w.items[:300]:
            assert "Label" not in item.line
            reply = mapper.complete(item_messages(instruction(tuple(LABELS)), item.line, SCHEMA))
            assert json.loads(reply.text) == {"label": item.label} and reply.backend == "rule-mapper"
    assert mapper.calls == 900 and mapper.describe()["backend"] == "rule-mapper"


def test_the_mapper_answers_in_the_schemas_spelling_or_fails_the_item():
    m = RuleMapper()
    line = "Date: Jun 16, 2024 || User: 98779 || Instance: What does NATO stand for ?"
    assert instance_of(line) == "What does NATO stand for ?"
    short = {"enum": ["ABBR", "HUM", "LOC", "NUM", "DESC", "ENTY"]}
    assert m.reply(item_messages("Label it.", line, short)) == '"ABBR"'
    assert m.reply(item_messages("Label it.", "Who wrote Hamlet ?", None)) == "human being"
    # a label set without the rule's label: "unknown", which fails the schema (the item's error)
    assert m.reply(item_messages("Label it.", line, {"enum": ["spam", "ham"]})) == "unknown"
    with pytest.raises(ValueError, match="not an llm_map call"):
        m.reply([{"role": "user", "content": "hello"}])


def test_the_reference_policy_routes_map_calls_to_the_mapper():
    pol = ReferencePolicy()
    c = pol.complete(item_messages("Label it.", "Where is Lyon ?", SCHEMA))
    assert (c.backend, json.loads(c.text)) == ("rule-mapper", {"label": "location"}) and pol.calls == 0


def test_every_generated_question_parses_into_a_program_of_its_kind():
    seen = set()
    for seed in range(4):
        w, qs = generate_window(seed, 500, window_id=seed)
        for q in qs:
            prog = match_oolong(_task(w, q))
            assert prog is not None, q.question
            seen.add(prog.query.ask)
            cell = prog.cell("solve")
            compile(cell, "<cell>", "exec")
            assert "ms.llm_map(" in cell and "user_turns()" in cell and prog.cell("scan") == cell
    assert seen == set(Ask)
    assert parse_query("How many items carry the label 'x'?") is None            # no label set named
    assert parse_query("... one of: a, b.\n\nIn the data, how many items carry the label 'c'?") is None


def _cli(*args):
    from scroll.cli import app

    return CliRunner().invoke(app, ["bench", "run", *map(str, args)])


def _map_calls(db: str, session: str) -> int:
    from scroll.events import EventLog

    with EventLog(db) as lg:
        return sum(1 for e in lg.events(session=session) if e.kind == "map_call")


@pytest.mark.sandbox
def test_bench_run_with_the_reference_policy_answers_every_question_type_exactly(tmp_path):
    """`scroll bench run --data <oolong> --format oolong --manager scroll --teacher reference`
    on a generated 500-item window: every question (all nine kinds) gets the exact answer,
    each from one llm_map call per item."""
    from scroll.runner import load_records

    data = write_oolong(tmp_path / "oolong.json", seed=0, n_items=500)
    r = _cli("--data", data, "--format", "oolong", "--manager", "scroll", "--teacher", "reference",
             "--out", tmp_path / "out", "--concurrency", "2", "--json")
    assert r.exit_code == 0, r.output[-3000:]
    s = json.loads(r.stdout)
    assert (s["tasks"], s["correct"], s["mean_score"], s["judges"]) == (19, 19, 1.0, ["numeric_partial"])
    recs = load_records(tmp_path / "out")
    assert all(r.score == 1.0 and r.steps == 2 and r.reason == "final" for r in recs)
    assert {match_oolong(r.question).query.ask for r in recs} == set(Ask)
    assert all(_map_calls(r.db, r.session) == 500 for r in recs)


@pytest.mark.slow
@pytest.mark.sandbox
def test_ten_thousand_items_exact_within_the_model_call_budget_and_memory(tmp_path):
    """10,000 items: exact answers on one question of each kind, each with exactly 10,000 model
    calls under a budget of 10,000 per task, in a kernel held to 1 GiB of data memory; one
    call fewer in the budget and the map is refused up front (no call made, no answer)."""
    from scroll.bench.datasets import prepare
    from scroll.config import LoopConfig
    from scroll.runner import run_tasks

    data = write_oolong(tmp_path / "oolong.json", seed=3, n_items=10_000)
    refs = prepare(data, tmp_path / "hist").refs
    one_each: dict[Ask, object] = {}
    for ref in refs:
        one_each.setdefault(match_oolong(ref.task.question).query.ask, ref)
    assert set(one_each) == set(Ask)
    cfg = replace(LoopConfig.load(), model_calls_budget=10_000, memory_limit="1G", cell_timeout=120)
    recs = run_tasks(list(one_each.values()), ReferencePolicy, cfg, tmp_path / "out", concurrency=1, label="ref",
                     progress=False)
    assert [(r.score, r.reason) for r in recs] == [(1.0, "final")] * len(Ask), [(r.question, r.answer) for r in recs]
    assert all(_map_calls(r.db, r.session) == 10_000 for r in recs)
    host_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert host_mib < 2048, f"host peak RSS {host_mib:.0f} MiB"
    tight = replace(cfg, model_calls_budget=9_999)
    [r] = run_tasks(list(one_each.values())[:1], ReferencePolicy, tight, tmp_path / "tight", concurrency=1,
                    label="tight", progress=False)
    assert r.score != 1.0 and r.answer == "unknown" and _map_calls(r.db, r.session) == 0
