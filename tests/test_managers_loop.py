"""The `scroll` manager: the agent loop behind the managers' contract, through Agent.run and
the real sandboxed kernel, on the Budget the baselines get."""
from __future__ import annotations

import pytest

from scroll.llm.scripted import ScriptedLLM
from scroll.managers import make_manager
from scroll.managers.base import Budget

pytestmark = pytest.mark.sandbox


def _hist(log):
    log.append(session="h1", role="user", text="I live in Porto.", time="2026-01-02T10:00:00")
    log.append(session="h2", role="user", text="Big news: I just moved to Vienna!", time="2026-02-02T10:00:00")
    log.append(session="h3", role="user", text="I just moved to Oslo, says my twin.", time="2026-03-02T10:00:00")


def test_scroll_manager_answers_through_the_loop_and_reports_its_cost(log):
    _hist(log)
    llm = ScriptedLLM(['```python\nhits = ms.search("moved live", k=None, role="user")\n'
                       'city = latest_of(hits, "live|move|moved", kind="place")\n```', "```python\nfinal(city)\n```"])
    ans = make_manager("scroll").answer(log, "Which city do I live in now?", sessions=["h1", "h2"], llm=llm,
                                        budget=Budget(context_window=4096, max_new_tokens=200))
    assert ans.text == "Vienna" and ans.manager == "scroll"  # h3 (Oslo) is not granted
    assert ans.calls == 2 and ans.prompt_tokens > 0 and ans.completion_tokens > 0
    assert ans.detail["reason"] == "final" and ans.detail["code_cells"] == 2 and ans.detail["cell_errors"] == 0
    # the loop's view fits the Budget: every prompt + max_new_tokens within the window
    assert all(c["max_tokens"] == 200 for c in llm.calls)
    assert max(llm.count_tokens(c["messages"]) for c in llm.calls) + 200 <= 4096


def test_scroll_manager_budget_mapping():
    m = make_manager("scroll")
    cfg = m.config(Budget(context_window=8192, max_new_tokens=256))
    assert cfg.hard_budget == 8192 - 256 - 200 and cfg.soft_budget == cfg.hard_budget * 3 // 4
    assert cfg.max_new_tokens == 256


def test_lcm_manager_runs_the_loop_over_lcms_tools(log):
    """`lcm`: the agent loop whose executor is LCM's toolbox; the DAG's context is in the
    system prompt, the tool cells are logged in the agent's session, the log's history is
    untouched."""
    _hist(log)
    head = log.verify()["head_hash"]
    n_hist = sum(1 for _ in log.events(session="h1")) + sum(1 for _ in log.events(session="h2"))
    llm = ScriptedLLM(['```python\ngrep("moved to")\n```', '```python\nfinal("Vienna")\n```'])
    ans = make_manager("lcm").answer(log, "Which city do I live in now?", sessions=["h1", "h2"], llm=llm,
                                     budget=Budget(context_window=4096, max_new_tokens=200))
    assert ans.text == "Vienna" and ans.manager == "lcm" and ans.detail["reason"] == "final"
    system = llm.calls[0]["messages"][0]["content"]
    assert "grep(" in system and "I live in Porto." in system and "Oslo" not in system  # h3 not granted
    out = [e for e in log.events(session=ans.detail["session"]) if e.kind == "output"]
    assert "Vienna" in out[0].text and out[0].meta["executor"] == "lcm"
    # history events unchanged: the same events, only the agent's session appended after them
    assert sum(1 for _ in log.events(session="h1")) + sum(1 for _ in log.events(session="h2")) == n_hist
    assert log.verify()["ok"] and head != log.verify()["head_hash"]
    task = next(e for e in log.events(session=ans.detail["session"]) if e.kind == "task")
    assert task.meta["system_prompt"] == system  # a custom prompt is logged with the task
    # the trajectory export rebuilds every step's prompt (custom system prompt included) exactly
    from scroll.agent import step_prompts

    steps = step_prompts(log, ans.detail["session"])
    assert len(steps) == 2 and all(s.matches for s in steps)
    assert steps[0].messages[0]["content"] == system
