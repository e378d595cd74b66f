"""Context managers without the agent loop: truncation, BM25 RAG, the LCM context; one contract."""
from __future__ import annotations

import re

import pytest

from scroll.lcm import LcmConfig
from scroll.lcm.history import format_event, history_events
from scroll.llm.base import LLMError, approx_count
from scroll.llm.scripted import ScriptedLLM
from scroll.managers import LOOPED, MANAGERS, ONE_CALL, make_manager
from scroll.managers.base import Answer, Budget, Manager
from scroll.managers.lcm_context import LcmContextManager
from scroll.managers.rag import RagManager
from scroll.managers.truncate import TruncateManager
from tests.test_lcm_dag import CFG, SECRET_AGENT, SECRET_OTHER, responder
from tests.test_lcm_dag import GRANTED as LCM_GRANTED
from tests.test_lcm_dag import add_history as lcm_add_history

FILLER = ("the weather was fine and we talked about many ordinary things like groceries work traffic and weekend "
          "plans without anything special").split()
GRANTED = ["s001", "s002", "s003"]


def add_history(log):
    rows = []
    for k, s in enumerate(GRANTED):
        for t in range(8):
            text = f"{s} turn {t}: " + " ".join(FILLER[(t + i) % len(FILLER)] for i in range(25))
            if (k, t) == (1, 2):
                text += " I ran my first marathon in Lisbon last spring."
            rows.append({"session": s, "role": "user" if t % 2 == 0 else "assistant", "text": text,
                         "meta": {"turn": t, "date": f"2023/0{k + 1}/15 (Sun) 09:00"}})
        if k == 0:
            rows.append({"session": "x001", "role": "user", "text": "my marathon marathon was in Oslo marathon"})
            rows.append({"session": "run-1", "role": "user", "text": "Where was my marathon marathon?",
                         "origin": "agent"})
    log.append_many(rows)


@pytest.fixture
def hist(log):
    add_history(log)
    return log


def answer_llm():
    return ScriptedLLM(lambda m: "Lisbon" if not m[0]["content"].startswith(("Summarize", "Compress")) else
                       "Summary: " + " ".join(m[-1]["content"].split()[:6]))


def shown_seqs(llm):
    """Seqs in the last (answer) call's prompt, in the order shown."""
    return [int(x) for x in re.findall(r"\[seq (\d+) \|", llm.calls[-1]["messages"][-1]["content"])]


def history_seqs(log, sessions=GRANTED):
    return [e.seq for e in history_events(log, sessions)]


QUESTION = "Where did I run my first marathon?"


# ------------------------------------------------------------------- contract
def test_budget_and_registry():
    b = Budget(context_window=1000, max_new_tokens=100)
    assert b.prompt_tokens == 900
    with pytest.raises(ValueError):
        Budget(context_window=100, max_new_tokens=90)
    with pytest.raises(ValueError):
        Budget(context_window=1000, max_new_tokens=0)
    assert sorted(MANAGERS) == sorted(ONE_CALL + LOOPED)
    for name in MANAGERS:
        assert isinstance(make_manager(name), Manager)
    assert make_manager("rag", k=7).k == 7
    with pytest.raises(ValueError, match="unknown context manager"):
        make_manager("nope")
    with pytest.raises(ValueError, match="come from the budget"):
        LcmContextManager(options={"window": 5})


# ------------------------------------------------------------------- truncate
@pytest.mark.parametrize("window", [400, 700, 1500])
def test_truncate_keeps_the_newest_whole_turns_under_the_budget(hist, window):
    llm, budget = answer_llm(), Budget(context_window=window, max_new_tokens=64)
    ans = TruncateManager().answer(hist, QUESTION, sessions=GRANTED, llm=llm, budget=budget)
    assert isinstance(ans, Answer) and ans.text == "Lisbon" and ans.calls == 1 and len(llm.calls) == 1
    call = llm.calls[0]
    assert approx_count(call["messages"]) <= budget.prompt_tokens and call["max_tokens"] == 64
    seqs = shown_seqs(llm)
    all_seqs = history_seqs(hist)
    assert seqs and seqs == all_seqs[-len(seqs):]          # the newest turns, in log order
    prompt = call["messages"][-1]["content"]
    for seq in seqs:                                        # whole turns, with session/date/role
        assert format_event(hist.expand(seq)) in prompt
    used = sum(approx_count(format_event(hist.expand(s))) + 1 for s in seqs)
    assert used <= ans.detail["context_room"]
    if len(seqs) < len(all_seqs):                           # the next older turn would not have fit
        older = hist.expand(all_seqs[-len(seqs) - 1])
        assert used + approx_count(format_event(older)) + 1 > ans.detail["context_room"]
    assert ans.detail["seqs"] == seqs and ans.prompt_tokens == approx_count(call["messages"])


def test_truncate_with_room_for_everything_shows_only_granted_history(hist):
    llm = answer_llm()
    TruncateManager().answer(hist, QUESTION, sessions=["s001", "s003"], llm=llm, budget=Budget(20_000, 64))
    assert shown_seqs(llm) == history_seqs(hist, ["s001", "s003"])
    prompt = llm.calls[0]["messages"][-1]["content"]
    assert "Oslo" not in prompt and "marathon marathon?" not in prompt and "s002" not in prompt


def test_truncate_cuts_a_single_turn_too_long_for_the_budget(log):
    log.append("s001", "user", "BEGINNING " + "word " * 3000 + "the very end")
    llm = answer_llm()
    budget = Budget(context_window=300, max_new_tokens=32)
    ans = TruncateManager().answer(log, "what?", sessions=None, llm=llm, budget=budget)
    prompt = llm.calls[0]["messages"][-1]["content"]
    assert approx_count(llm.calls[0]["messages"]) <= budget.prompt_tokens
    assert ans.detail["cut_turn"] and "[seq 1 | s001" in prompt and "the very end" in prompt and "BEGINNING" not in prompt


def test_empty_history_still_answers(log):
    llm = answer_llm()
    ans = TruncateManager().answer(log, QUESTION, sessions=[], llm=llm, budget=Budget(500, 32))
    assert ans.calls == 1 and "nothing from the history" in llm.calls[0]["messages"][-1]["content"]


# ------------------------------------------------------------------------ rag
def test_rag_retrieves_the_evidence_in_time_order_within_granted_history(hist):
    llm = answer_llm()
    ans = RagManager(k=5).answer(hist, QUESTION, sessions=GRANTED, llm=llm, budget=Budget(2000, 64))
    seqs = shown_seqs(llm)
    evidence = next(e.seq for e in history_events(hist, GRANTED) if "Lisbon" in e.text)
    assert evidence in seqs and seqs == sorted(seqs) and set(seqs) <= set(history_seqs(hist))
    assert ans.detail["seqs"] == seqs and len(seqs) == len(set(seqs)) <= 5
    prompt = llm.calls[0]["messages"][-1]["content"]
    assert "Oslo" not in prompt and "marathon marathon?" not in prompt   # other session, agent origin
    assert ans.calls == 1 and ans.text == "Lisbon"


def test_rag_stuffs_hits_until_the_budget(hist):
    for window in (300, 450, 800):
        llm = answer_llm()
        budget = Budget(window, 64)
        ans = RagManager(k=50).answer(hist, "weather groceries traffic weekend plans", sessions=GRANTED, llm=llm,
                                      budget=budget)
        assert approx_count(llm.calls[0]["messages"]) <= budget.prompt_tokens
        assert 0 < ans.detail["shown_events"] < ans.detail["hits"]
        assert shown_seqs(llm) == sorted(shown_seqs(llm))


def test_rag_with_no_match_or_no_session(hist):
    llm = answer_llm()
    ans = RagManager().answer(hist, "xylophone", sessions=GRANTED, llm=llm, budget=Budget(1000, 32))
    assert ans.detail["hits"] == 0 and "nothing from the history" in llm.calls[0]["messages"][-1]["content"]
    ans = RagManager().answer(hist, QUESTION, sessions=[], llm=answer_llm(), budget=Budget(1000, 32))
    assert ans.detail["hits"] == 0


# ---------------------------------------------------------------- lcm-context
def test_lcm_context_answers_from_summaries_and_recent_turns_under_budget(hist):
    llm = answer_llm()
    budget = Budget(context_window=1400, max_new_tokens=64)
    mgr = LcmContextManager(options=dict(leaf_chunk_tokens=300, leaf_target=60, condensed_target=80,
                                         truncate_tokens=40, fresh_tail=3))
    ans = mgr.answer(hist, QUESTION, sessions=GRANTED, llm=llm, budget=budget)
    build = ans.detail["build"]
    assert build["created"] > 0 and ans.calls == build["usage"]["calls"] + 1 == len(llm.calls)
    assert all(approx_count(c["messages"]) + c["max_tokens"] <= budget.context_window for c in llm.calls)
    assert approx_count(llm.calls[-1]["messages"]) <= budget.prompt_tokens
    prompt = llm.calls[-1]["messages"][-1]["content"]
    assert "[summary sum_" in prompt and ans.detail["shown_nodes"] and ans.detail["dropped_items"] == 0
    raw = ans.detail["shown_seqs"]
    assert raw and raw == history_seqs(hist)[-len(raw):]            # the newest turns stay raw
    sent = " ".join(m["content"] for c in llm.calls for m in c["messages"])
    assert "Oslo" not in sent and "marathon marathon?" not in sent
    # a second question over the same history reuses the DAG: one call only
    llm2 = answer_llm()
    again = mgr.answer(hist, "Where did I run?", sessions=GRANTED, llm=llm2, budget=budget)
    assert again.calls == 1 and again.detail["dag_usage"]["calls"] > 0


# ------------------------------------------------------------ shared guarantees
@pytest.mark.parametrize("name", ONE_CALL)  # the looped ones write their own agent session (tested apart)
def test_no_manager_writes_the_event_log(hist, name):
    head, n = hist.verify()["head_hash"], hist.stats()["events"]
    make_manager(name).answer(hist, QUESTION, sessions=GRANTED, llm=answer_llm(), budget=Budget(2000, 64))
    assert hist.verify()["head_hash"] == head and hist.stats()["events"] == n


@pytest.mark.parametrize("name", sorted(MANAGERS))
def test_a_failing_backend_raises(hist, name):  # looped managers too (their loop records, then they raise)
    def down(messages):
        raise LLMError("down")

    with pytest.raises(LLMError):
        make_manager(name).answer(hist, QUESTION, sessions=GRANTED, llm=ScriptedLLM(down), budget=Budget(2000, 64))


def test_answer_strips_reasoning_and_reports_time(hist):
    llm = ScriptedLLM(["<think>let me see</think>\nLisbon"])
    ans = TruncateManager().answer(hist, QUESTION, sessions=GRANTED, llm=llm, budget=Budget(800, 64))
    assert ans.text == "Lisbon" and ans.wall_s >= 0 and ans.manager == "truncate"
    assert set(ans.to_dict()) >= {"text", "prompt_tokens", "completion_tokens", "calls", "wall_s", "detail"}


# ------------------------------------------- LCM as an agent loop: the toolbox
@pytest.fixture
def lcm_hist(log):
    lcm_add_history(log)
    return log


def test_parse_cell_allows_only_literal_tool_calls():
    from scroll.lcm.toolbox import parse_cell

    assert parse_cell('grep("a|b")\nprint(describe("sum_1"))\nfinal("x")') == [
        ("grep", ("a|b",)), ("describe", ("sum_1",)), ("final", ("x",))]
    for bad, why in [("import os", "only calls"), ("x = grep('a')", "only calls"), ("open('f')", "only calls"),
                     ("grep(pattern='a')", "by position"), ("grep('a' + b)", "literals"), ("grep(", "SyntaxError"),
                     ("", "no tool call"), ("grep('a')\n" * 9, "at most 8"), ("__import__('os')", "only calls"),
                     ("describe(*ids)", "literals")]:
        with pytest.raises(ValueError, match=re.escape(why)):
            parse_cell(bad)


def test_toolbox_runs_cells_and_logs_them_in_the_agents_session(lcm_hist):
    from scroll.lcm.toolbox import LcmToolbox

    llm = ScriptedLLM(responder)
    box = LcmToolbox(lcm_hist, "run-lcm", llm, config=LcmConfig(**CFG), token_cap=60)
    box.capability.set_scope(LCM_GRANTED)
    prompt = box.system_prompt()
    assert "grep(" in prompt and "[summary sum_" in prompt and "[seq " in prompt
    built_calls = box.usage.calls
    assert built_calls > 0 and SECRET_AGENT not in prompt and SECRET_OTHER not in prompt
    nid = next(it.ref for it in box.dag.items if it.kind == "node")
    r = box.execute(f'grep("s001 turn 3")\ndescribe("{nid}")\nexpand_query("{nid}", "which fruit?")\nfinal("apple")')
    assert r.error is None and r.final == "apple" and len(r.seqs) == 2
    assert "1 turn(s)" in r.stdout and f"{nid}: condensed" in r.stdout and "[cited seqs:" in r.stdout
    assert box.usage.calls > built_calls  # the sub-call is counted
    code, out = lcm_hist.expand(r.seqs[0]), lcm_hist.expand(r.seqs[1])
    assert (code.kind, code.session, code.origin.value) == ("code", "run-lcm", "agent")
    assert (out.kind, out.role, out.origin.value, out.meta["code_seq"]) == ("output", "kernel", "agent", r.seqs[0])
    bad = box.execute("import os")
    assert bad.error and "only calls" in bad.error and bad.final is None
    assert "no summary node" in box.execute('describe("sum_nope")').stdout
    box.close()


def test_toolbox_drives_the_real_agent_loop(lcm_hist):
    from scroll.agent import Agent
    from scroll.config import LoopConfig
    from scroll.lcm.toolbox import LcmToolbox

    replies = iter(['```python\ngrep("s002 turn 4")\n```', '```python\nfinal("walnut")\n```'])
    llm = ScriptedLLM(lambda m: responder(m) if m[0]["content"].startswith(("Summarize", "Compress"))
                      else next(replies))
    box = LcmToolbox(lcm_hist, "run-agent", llm, config=LcmConfig(**CFG))
    with Agent.open(lcm_hist, llm, LoopConfig(max_steps=4), session="run-agent", kernel=box) as agent:
        result = agent.run("Which word follows 'timber'?", sessions=LCM_GRANTED)
    assert result.answer == "walnut" and result.reason == "final" and len(result.steps) == 2
    assert "1 turn(s)" in lcm_hist.expand(result.steps[0].last_seq).text
