"""The paper's ablations as loop switches, through Agent.run and the real sandboxed kernel:
no_kernel (no resident variables), no_index (no headline index), no_log (no `ms` over the
history; the newest history that fits is in the view). Each is also replayed exactly by the
trajectory export (the prompts rebuilt from the log hash to what the model saw)."""
from __future__ import annotations

import pytest

from scroll.agent import Agent, step_prompts
from scroll.config import LoopConfig
from scroll.llm.scripted import ScriptedLLM
from scroll.managers import make_manager
from scroll.managers.base import Budget

pytestmark = pytest.mark.sandbox


def _cfg(**kw):
    base = dict(max_steps=6, cell_timeout=20, max_output_chars=2000, soft_budget=3000, hard_budget=4000)
    return LoopConfig(**{**base, **kw})


def _run(log, replies, cfg, session):
    exposures: list[str] = []
    llm = ScriptedLLM([f"```python\n{r}\n```" for r in replies])
    with Agent.open(log, llm, cfg, session=session, on_step=lambda rec, reply, exp: exposures.append(exp)) as agent:
        res = agent.run("What did I say about Quimper?")
    assert all(s.matches for s in step_prompts(log, session)), "the export must rebuild every prompt exactly"
    return res, exposures, llm


@pytest.fixture
def hist(log):
    for i in range(40):
        log.append(session=f"h{i // 10}", role="user", text=f"note {i}: the weather in Quimper was fine",
                   time=f"2026-01-{1 + i // 2:02d}T10:00:00")
    return log


def test_no_kernel_forgets_variables_but_keeps_ms_and_the_helpers(hist):
    cells = ["x = 41\nprint('set')", "print(x + 1)", "print(len(ms.search('Quimper', k=5)), callable(latest_of))",
             "final('done')"]
    res, exp, _ = _run(hist, cells, _cfg(), "persistent")
    assert "42" in exp[1]
    res, exp, _ = _run(hist, cells, _cfg(persistent_kernel=False), "stateless")
    assert "NameError" in exp[1] and "5 True" in exp[2] and res.answer == "done"


def test_no_index_evicts_without_a_headline_index(hist):
    big = "print('y' * 3000)"   # ~750 tokens each: the view must evict
    cells = [big, big, big, big, "print(len(ms.headlines()))", "final('done')"]
    cfg = dict(soft_budget=1500, hard_budget=2500, max_output_chars=4000)
    res, exp, llm = _run(hist, cells, _cfg(**cfg), "indexed")
    assert res.evictions > 0 and int(exp[4].split()[0]) > 0
    assert llm.calls[-1]["messages"][2]["role"] == "user"  # the headline index message, after the task
    res, exp, llm = _run(hist, cells, _cfg(headline_index=False, **cfg), "unindexed")
    assert res.evictions > 0 and exp[4].split()[0] == "0"
    # the prompt holds system, task, then steps only: no index message
    last = llm.calls[-1]["messages"]
    assert last[1]["content"].startswith("Task: ") and last[2]["role"] == "assistant"
    headlines = [e for e in hist.events(session="unindexed") if e.kind == "headline"]
    assert headlines  # evictions are still logged (the export replays them)


def test_no_log_has_no_ms_over_history_and_sees_only_the_newest(hist):
    cells = ["print(len(ms.search('Quimper', k=100)))", "final('done')"]
    res, exp, llm = _run(hist, cells, _cfg(), "withlog")
    assert exp[0].strip() == "40"
    res, exp, llm = _run(hist, cells, _cfg(history_access=False, soft_budget=1200, hard_budget=4000), "nolog")
    assert exp[0].strip() == "0"
    first = llm.calls[0]["messages"]
    assert first[1]["content"].startswith("History (the most recent part") and first[2]["content"].startswith("Task:")
    shown = first[1]["content"]
    assert "note 39:" in shown and "note 0:" not in shown  # the newest that fit; the oldest are gone


def test_ablation_managers_switch_one_part_each():
    b = Budget(context_window=8192, max_new_tokens=200)
    cfgs = {n: make_manager(n).config(b) for n in ("scroll", "no_log", "no_kernel", "no_index")}
    flags = {n: (c.history_access, c.persistent_kernel, c.headline_index) for n, c in cfgs.items()}
    assert flags == {"scroll": (True, True, True), "no_log": (False, True, True),
                     "no_kernel": (True, False, True), "no_index": (True, True, False)}
    assert len({(c.hard_budget, c.soft_budget, c.max_new_tokens) for c in cfgs.values()}) == 1
