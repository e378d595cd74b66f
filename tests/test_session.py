"""scroll/session.py, the composition root: what open_session builds, in which direction, and
what an Agent over a Session runs (through Agent.run on the in-process SimKernel; the sandboxed
kernel's path is tests/test_agent.py's)."""
from __future__ import annotations

import pytest

from scroll.agent import Agent
from scroll.config import LoopConfig
from scroll.files import FileAttacher
from scroll.headlines import HeadlineIndex
from scroll.llm.scripted import ScriptedLLM
from scroll.operators import OperatorEngine
from scroll.policies.harness import SimKernel
from scroll.session import HeadlineSource, open_session, resolve_pack


def test_open_session_builds_the_parts_bottom_up_and_starts_nothing(log):
    llm = ScriptedLLM(["unused"])
    started = []
    sess = open_session(log, llm, LoopConfig(), name="s1", sub_agent=Agent.open)
    cap = sess.capability
    assert isinstance(cap.files, FileAttacher) and isinstance(cap.operators, OperatorEngine)
    assert cap.own_session == "s1" and cap.operators.sub_agent == Agent.open and cap.operators.loop_llm is llm
    assert cap.headlines_fn is sess.headlines and sess.headlines() == []
    sess.executor_factory = lambda: started.append(1) or SimKernel(log, "s1", capability=cap)
    assert started == []                       # the kernel starts on first use, once
    assert sess.executor() is sess.executor() and started == [1]
    sess.close()
    assert sess._executor is None


def test_a_given_executor_brings_its_capability_and_must_match_the_pack(log):
    sim = SimKernel(log, "s2", pack="generated")
    sess = open_session(log, ScriptedLLM(["x"]), LoopConfig(pack="generated"), name="s2", executor=sim)
    assert sess.capability is sim.capability and sess.executor() is sim and sess.pack_name == "generated"
    with pytest.raises(ValueError, match="built for task pack 'generated'"):
        open_session(log, ScriptedLLM(["x"]), LoopConfig(), name="s3", executor=SimKernel(log, "s3", pack="generated"))
    with pytest.raises(ValueError, match="writes cells for the 'generated' task pack"):
        resolve_pack("other", "generated")


def test_without_a_sub_agent_factory_agent_map_is_refused(log):
    from scroll.capability import CapabilityError

    sess = open_session(log, ScriptedLLM(["x"]), LoopConfig(), name="s4")
    with pytest.raises(CapabilityError, match="no agent loop"):
        sess.capability.operators.agent_map(n=2, nbytes=0, task="t", retain="merge", delegate="one part")


def test_the_headlines_the_capability_shows_are_the_runs_view(log):
    src = HeadlineSource()
    assert src() == []
    idx = HeadlineIndex()
    idx.add(1, 4, "task", "state", "next")
    src.index = idx
    assert [(h["lo"], h["hi"]) for h in src()] == [(1, 4)]


def test_agent_over_a_session_runs_and_points_the_capability_at_its_view(log):
    log.append(session="h", role="user", text="I moved to Lisbon", origin="history")
    replies = ["HEADLINE: t | s | n\n```python\nprint(ms.search('Lisbon')[0].text)\n```",
               "HEADLINE: t | s | n\n```python\nprint(ms.headlines()); final('Lisbon')\n```"]
    llm = ScriptedLLM(replies)
    sim = SimKernel(log, "q1", sessions=["h"])
    with Agent(open_session(log, llm, LoopConfig(max_steps=4, sandbox=False), name="q1", executor=sim)) as agent:
        res = agent.run("Where do I live?", sessions=["h"])
        assert res.answer == "Lisbon" and res.reason == "final"
        assert agent.sess.headlines.index is agent.view.index


def test_every_executor_implements_the_protocol(log):
    from scroll.executor import Executor
    from scroll.kernel import Kernel
    from scroll.lcm.config import LcmConfig
    from scroll.lcm.toolbox import LcmToolbox

    assert isinstance(SimKernel(log, "e1"), Executor)
    box = LcmToolbox(log, "e2", ScriptedLLM(["x"]), config=LcmConfig())
    try:
        assert isinstance(box, Executor)
    finally:
        box.close()
    assert all(callable(getattr(Kernel, m)) for m in ("execute", "close"))  # the sandboxed one: tests/test_kernel.py
