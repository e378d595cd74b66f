"""ms.agent_map: the scope-reduction rule, the depth bound and the sub-session cap (units,
and an adversarial tree that always delegates as much as it may), then the path a model
takes: a cell in the sandboxed kernel starts sub-sessions, each with its own kernel."""
from __future__ import annotations

import pytest

from scroll.capability import BudgetExceeded, CapabilityError
from scroll.config import LoopConfig
from scroll.llm.scripted import ScriptedLLM
from scroll.operators import Delegation, ModelBudget, OperatorEngine, OperatorLimits, TaskTree, check_delegation


def _cfg(**kw):
    base = dict(max_steps=3, max_total_tokens=2000, cell_timeout=20, max_output_chars=1500, soft_budget=3000,
                hard_budget=4000, max_new_tokens=256)
    base.update(kw)
    return LoopConfig(**base)


def _root(max_depth=3, max_sessions=64):
    return Delegation(TaskTree(ModelBudget(10_000, 10 ** 9), max_depth, max_sessions))


def test_the_scope_reduction_rule():
    d = _root()
    assert check_delegation(d, 5, 1, "sum the counts", "count one item") == 5
    assert check_delegation(d, 5, 2, "sum the counts", "count two items") == 3
    with pytest.raises(CapabilityError, match="delegates the whole list"):
        check_delegation(d, 3, 3, "sum", "count")                      # the whole list to one sub-session
    with pytest.raises(CapabilityError, match="delegates the whole list"):
        check_delegation(d, 1, 1, "sum", "count")
    for retain in ("", "   ", None, 3):
        with pytest.raises(CapabilityError, match="`retain` must name the work"):
            check_delegation(d, 3, 1, retain, "count")
    with pytest.raises(CapabilityError, match="`delegate` must name the work"):
        check_delegation(d, 3, 1, "sum", "")
    with pytest.raises(CapabilityError, match="same work"):
        check_delegation(d, 3, 1, "Count the items", "count  the items")
    sub = d.child(holds=2)
    with pytest.raises(CapabilityError, match="holds 2 item\\(s\\) and may delegate at most that many, not 3"):
        check_delegation(sub, 3, 1, "sum", "count")
    assert check_delegation(sub, 2, 1, "sum", "count") == 2
    deepest = d.child(4).child(3).child(2)
    assert deepest.depth == 3
    with pytest.raises(CapabilityError, match="depth 4 exceeds the limit of 3"):
        check_delegation(deepest, 2, 1, "sum", "count")
    tree = TaskTree(ModelBudget(1, 1), max_sessions=64)
    tree.claim(60)
    with pytest.raises(BudgetExceeded, match="start 5 sub-session\\(s\\); this task has started 60 of its 64"):
        tree.claim(5)


def test_the_engine_refuses_before_anything_runs(log):
    llm = ScriptedLLM(["never called"])
    eng = OperatorEngine(log, "root", llm=llm, config=_cfg(), limits=OperatorLimits(agent_map_sessions=4),
                         sub_agent=GreedyAgent)
    with pytest.raises(CapabilityError, match="delegates the whole list"):
        eng.agent_map(n=2, nbytes=0, task="t", retain="merge", delegate="one part", chunk=2)
    with pytest.raises(CapabilityError, match="`retain` must name"):
        eng.agent_map(n=2, nbytes=0, task="t", retain=" ", delegate="one part")
    with pytest.raises(BudgetExceeded, match="start 5 sub-session"):
        eng.agent_map(n=5, nbytes=0, task="t", retain="merge", delegate="one part")
    small = OperatorEngine(log, "root2", llm=llm, config=_cfg(), limits=OperatorLimits(model_calls_budget=20),
                           sub_agent=GreedyAgent)
    with pytest.raises(BudgetExceeded, match="agent_map of 3 sub-session\\(s\\) needs up to 27 model calls"):
        small.agent_map(n=3, nbytes=0, task="t", retain="merge", delegate="one part")
    bare = OperatorEngine(log, "root3", llm=llm)                        # no loop config: no sub-sessions
    with pytest.raises(CapabilityError, match="no agent loop"):
        bare.agent_map(n=3, nbytes=0, task="t", retain="merge", delegate="one part")
    assert llm.calls == [] and not list(log.events(kind="agent_map"))


class GreedyAgent:
    """Stands in for Agent in sub-sessions: one (metered) model call, then it delegates as much
    as the rules allow (all it holds, chunks one smaller), recursively."""

    tree: list = []

    def __init__(self, log, llm, cfg, *, session, map_llm=None, delegation=None):
        self.log, self.llm, self.cfg, self.session, self.d = log, llm, cfg, session, delegation
        self.map_llm = map_llm

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def run(self, task, meta=None, *, sessions=None):
        from scroll.agent import RunResult

        self.llm.complete([{"role": "user", "content": task}], max_tokens=8)
        eng = OperatorEngine(self.log, self.session, llm=self.llm, config=self.cfg, map_llm=self.map_llm,
                             limits=OperatorLimits.from_config(self.cfg), delegation=self.d, sub_agent=GreedyAgent)
        n = self.d.holds
        try:
            st = eng.agent_map(n=n, nbytes=0, task="again", retain="merge", delegate="part", chunk=max(1, n - 1))
            eng.map_items(st["stage"], list(range(n)))
            job = eng.jobs[eng.map_start(st["stage"])["job"]]
            job.wait(60)
            answer = f"delegated: {[r.get('value') or r.get('error') for r in job.results]}"
        except CapabilityError as e:
            answer = f"refused: {e}"
        eng.close()
        GreedyAgent.tree.append((self.d.depth, n, answer))
        return RunResult(self.session, task, answer, "final")


@pytest.mark.parametrize("sessions,expect", [(64, 6), (3, 2)])
def test_an_always_delegating_tree_terminates_within_the_bounds(log, sessions, expect):
    GreedyAgent.tree = []
    llm = ScriptedLLM(lambda m: "ok")
    cfg = _cfg(agent_map_sessions=sessions)
    root = OperatorEngine(log, "root", llm=llm, config=cfg, limits=OperatorLimits.from_config(cfg),
                          sub_agent=GreedyAgent)
    st = root.agent_map(n=5, nbytes=0, task="count", retain="sum the counts", delegate="count a part", chunk=4)
    root.map_items(st["stage"], list(range(5)))
    job = root.jobs[root.map_start(st["stage"])["job"]]
    assert job.wait(120)
    assert root.delegation.tree.sessions == expect == len(GreedyAgent.tree) == len(llm.calls)
    depths = sorted(d for d, _, _ in GreedyAgent.tree)
    answers = " ".join(a for _, _, a in GreedyAgent.tree)
    if sessions == 64:   # the item measure and the depth cap end it: 4 -> 3 -> 2 items, depth 1..3
        assert depths == [1, 1, 2, 2, 3, 3]
        assert "depth 4 exceeds the limit of 3" in answers and "delegates the whole list" in answers
    else:                # the session cap ends it
        assert depths == [1, 1] and "this task has started 2 of its 3" in answers
    budget = root.delegation.tree.budget.to_dict()
    assert budget["calls_used"] == expect and budget["calls_free"] == 10_000 - expect  # reservations returned
    root.close()


@pytest.mark.sandbox
def test_through_agent_run_sub_sessions_with_their_own_kernels(log):
    from scroll.agent import Agent
    from scroll.prompts import SYSTEM_PROMPT

    root_cells = [
        'r = ms.agent_map(["apple", "pear"], "Upper-case the item.", retain="join the results", '
        'delegate="upper-case one item", concurrency=2)\n'
        'print(r.values(), [x["session"] for x in r], len(ms.payload(r.handle).splitlines()))',
        'for kw in [dict(items=["a"]), dict(items=["a", "b"], retain="")]:\n'
        '    try:\n'
        '        ms.agent_map(**{"task": "t", "retain": "join", "delegate": "one", **kw})\n'
        '    except Exception as e:\n'
        '        print("refused:", e)',
        'final(",".join(r.values()))',
    ]

    def route(messages):
        assert messages[0]["content"] == SYSTEM_PROMPT
        task = messages[1]["content"]
        step = sum(m["role"] == "assistant" for m in messages)
        if "You are a sub-session" not in task:
            return "```python\n" + root_cells[step] + "\n```"
        item = task.split("Your item (1):\n- ", 1)[1].split("\n", 1)[0]
        if step == 0:   # a sub-session tries to delegate again: beyond the depth limit
            return ('```python\ntry:\n    ms.agent_map(["x", "y"], "t", retain="a", delegate="b")\n'
                    'except Exception as e:\n    print("nested:", e)\n```')
        return f"```python\nfinal({item.upper()!r})\n```"

    exposures = []
    cfg = _cfg(max_steps=4, max_total_tokens=20_000, agent_map_depth=1)
    with Agent.open(log, ScriptedLLM(route), cfg, session="root",
               on_step=lambda rec, reply, exp: exposures.append(exp)) as agent:
        res = agent.run("Upper-case the fruits.")
    assert res.reason == "final" and res.answer == "APPLE,PEAR", exposures
    job = [e for e in log.events(session="root") if e.kind == "agent_map"][0].seq
    subs = [f"root/agent_map{job}.0", f"root/agent_map{job}.1"]
    assert exposures[0] == f"['APPLE', 'PEAR'] {subs} 2", exposures[0]
    assert "delegates the whole list" in exposures[1] and "`retain` must name the work" in exposures[1]
    for s in subs:   # each sub-session: its own log session and kernel, the refusal in its output
        kinds = [e.kind for e in log.events(session=s)]
        assert kinds[0] == "task" and kinds.count("code") == 2 and kinds[-1] == "final"
        out = [e.text for e in log.events(session=s) if e.kind == "output"][0]
        assert "nested: CapabilityError: agent_map: depth 2 exceeds the limit of 1" in out
        task = next(log.events(session=s)).meta["agent_map"]
        assert task["depth"] == 1 and task["retain"] == "join the results" and task["items"] == 1
