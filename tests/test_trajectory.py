"""Each step's prompt, rebuilt from the log, is exactly what the model was shown (the
trajectory export relies on it): checked against the hash the loop logged at run time,
through evictions and folded exposures."""
from __future__ import annotations

from scroll.agent import Agent, step_prompts
from scroll.config import LoopConfig
from scroll.llm.base import approx_count
from scroll.llm.scripted import ScriptedLLM
from scroll.policies.harness import SimKernel


def test_rebuilt_step_prompts_match_what_the_model_saw(log):
    for i in range(30):
        log.append(session="h", role="user", text=f"note {i}: the harbour crane lifted crate {i * 7}")
    seen: list[list[dict]] = []

    def reply(messages):
        seen.append([dict(m) for m in messages])
        n = len(seen)
        if n == 4:  # a huge exposure, folded to fit the hard budget
            return "```python\nprint('crate ' * 5000)\n```"
        if n >= 9:
            return "```python\nfinal('done')\n```"
        return f"HEADLINE: crates | step {n} | next\n```python\nfor h in ms.search('crate {n}', k=3):\n    print(h.seq, h.text)\n```"

    cfg = LoopConfig(max_steps=12, soft_budget=1100, hard_budget=1400, max_output_chars=20_000, sandbox=False,
                     tier_cap=2)
    kernel = SimKernel(log, session="traj", max_output_chars=20_000)
    with Agent.open(log, ScriptedLLM(reply), cfg, session="traj", kernel=kernel) as agent:
        res = agent.run("Which crates did the harbour crane lift?")
    assert res.reason == "final" and res.evictions >= 3
    steps = step_prompts(log, "traj", count=approx_count)  # the counter the run used (ScriptedLLM's), as export does
    assert len(steps) == len(seen) == len(res.steps)
    assert all(s.matches for s in steps), [s.logged_sha256 for s in steps if not s.matches]
    assert [s.messages for s in steps] == seen
    # the check has teeth: a different system prompt or task would not match
    assert steps[0].logged_sha256 and len({s.logged_sha256 for s in steps}) == len(steps)
