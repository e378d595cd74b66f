"""The agent loop with the real kernel and the real log; model paths with the tiny model."""
from __future__ import annotations

import statistics

import pytest

from scroll import EventLog
from scroll.agent import Agent
from scroll.config import LoopConfig
from scroll.llm import LLMError
from scroll.llm.scripted import ScriptedLLM
from scroll.reply import NO_CODE, extract_code

pytestmark = pytest.mark.sandbox


def _cfg(**kw):
    base = dict(max_steps=8, cell_timeout=10, max_output_chars=2000, soft_budget=3000, hard_budget=4000)
    base.update(kw)
    return LoopConfig(**base)


def _kinds(log, session):
    return [(e.kind, e.role) for e in log.events(session=session)]


def test_loop_plumbing_no_code_broken_code_runaway_output_final(log):
    log.append(session="hist", role="user", text="My locker code is 4817, remember it.")
    replies = [
        "I will think about it first.",                                   # no code
        "```python\ndef broken(:\n```",                                    # syntax error
        "```python\nwhile True: print('spam' * 100)\n```",                 # endless output
        "```python\nhits = ms.search('locker code')\nprint([h.seq for h in hits])\n```",
        "HEADLINE: find code | found it | answer\n```python\nimport re\n"
        "x = next(m.group() for h in hits for m in [re.search(r'\\d{4}', ms.expand(h.seq).text)] if m)\nfinal(x)\n```",
    ]
    llm = ScriptedLLM(replies)
    with Agent.open(log, llm, _cfg(cell_timeout=3), session="t1") as agent:
        res = agent.run("What is my locker code?")
    assert res.reason == "final" and res.answer == "4817"
    assert [s.had_code for s in res.steps] == [False, True, True, True, True]
    assert "SyntaxError" in (res.steps[1].error or "")
    assert res.steps[2].error  # interrupted or output-limited, but handled
    assert res.steps[2].exposure_chars < 6000  # the runaway print was capped
    kinds = _kinds(log, "t1")
    assert kinds[0] == ("task", "user") and kinds[-1] == ("final", "assistant")
    assert ("note", "scroll") in kinds and kinds.count(("code", "assistant")) == 4
    notes = [e for e in log.events(session="t1") if e.kind == "note"]
    assert notes[0].text == NO_CODE
    final = [e for e in log.events(session="t1") if e.kind == "final"][0]
    assert final.meta["reason"] == "final" and final.text == "4817"


def test_backend_errors_end_cleanly_with_reason(log):
    def boom(messages):
        raise LLMError("server down", retryable=True)

    with Agent.open(log, ScriptedLLM(boom), _cfg(backend_retries=1), session="t2") as agent:
        res = agent.run("anything")
    assert res.reason == "backend_error" and res.answer is None
    notes = [e.text for e in log.events(session="t2") if e.kind == "note"]
    assert len(notes) == 3 and "kept failing" in notes[-1]


def test_no_code_strikes_and_step_limit(log):
    with Agent.open(log, ScriptedLLM(lambda m: "no code here"), _cfg(no_code_strikes=2), session="t3") as agent:
        assert agent.run("x").reason == "no_code"
    with Agent.open(log, ScriptedLLM(lambda m: "```python\nprint(1)\n```"), _cfg(max_steps=3), session="t4") as agent:
        res = agent.run("x")
        assert res.reason == "max_steps" and len(res.steps) == 3


def test_many_evictions_keep_every_seq_reachable_and_index_logarithmic(log):
    import math

    step = {"n": 0}

    def writer(messages):
        step["n"] += 1
        return f"```python\nv{step['n']} = {step['n']}\nprint('row' * 400, {step['n']})\n```"

    cfg = _cfg(max_steps=120, soft_budget=1500, hard_budget=2200, max_output_chars=1500, tier_cap=4)
    with Agent.open(log, ScriptedLLM(writer), cfg, session="t5") as agent:
        res = agent.run("keep going")
        view = agent.view
        assert res.evictions > 80
        assert all(s.view_tokens <= cfg.hard_budget for s in res.steps)
        entries = view.index.entries()
        assert len(entries) <= (cfg.tier_cap - 1) * (math.floor(math.log(res.evictions, cfg.tier_cap)) + 1)
        in_view = {seq for s in view.steps for seq in range(s.lo, s.hi + 1)}
        session_seqs = [e.seq for e in log.events(session="t5") if e.kind in ("message", "code", "output")]
        for seq in session_seqs:
            assert seq in in_view or view.index.find(seq) is not None, seq
        # the model can navigate back from inside the kernel
        r = agent.sess.executor().execute("h = ms.headlines(); print(len(h), h[0]['lo'], h[0]['hi'])")
        n, lo, hi = map(int, r.stdout.split())
        assert n == len(entries) and (lo, hi) == (entries[0].lo, entries[0].hi)
        r = agent.sess.executor().execute(f"print(ms.expand({lo}, {hi})[0].kind)")
        assert r.stdout.strip() == "message"
        # a resident variable from long-evicted step 3 is still there
        assert agent.sess.executor().execute("print(v3)").stdout.strip() == "3"
    headline_events = [e for e in log.events(session="t5") if e.kind == "headline"]
    assert len(headline_events) == res.evictions


def test_resume_after_crash_rebuilds_view_and_state(tmp_path):
    path = tmp_path / "r.db"
    calls = {"n": 0}

    def crashy(messages):
        calls["n"] += 1
        if calls["n"] == 1:
            return "```python\nsecret = 41\nprint('set')\n```"
        raise SystemExit("simulated crash of the host process")  # not an LLMError: the loop dies

    with EventLog(path) as log:
        agent = Agent.open(log, ScriptedLLM(crashy), _cfg(), session="r")
        with pytest.raises(SystemExit):
            agent.run("compute")
        agent.close()
        assert "final" not in [e.kind for e in log.events(session="r")]
    with EventLog(path) as log:
        replies = ["```python\nprint(secret + 1)\n```", "```python\nfinal(secret + 1)\n```"]
        with Agent.open(log, ScriptedLLM(replies), _cfg(), session="r") as agent:
            res = agent.run(resume=True)
            assert res.answer == "42" and res.reason == "final"
            assert res.steps[0].step == 2  # continued, not restarted
            assert len(agent.view.steps) == 3 and "set" in agent.view.steps[0].exposure
            assert "42" in agent.view.steps[1].exposure
        assert [e.kind for e in log.events(session="r")].count("task") == 1
        with pytest.raises(ValueError, match="no unfinished task"):
            Agent.open(log, ScriptedLLM([]), _cfg(), session="r").run(resume=True)


def test_reference_policy_demo_all_correct_small_exposure_prefix_reuse(tmp_path):
    from scroll.policies.reference import ReferencePolicy
    from scroll.tasks import build_demo_log

    log, tasks = build_demo_log(tmp_path / "demo.db", seed=0, target_tokens=200_000)
    history_tokens = log.stats()["tokens_estimate"]
    assert history_tokens >= 200_000
    log.search("warm up the index", k=1)
    policy = ReferencePolicy()
    assert policy.describe()["backend"] == "reference-policy"
    overheads, reuses = [], []
    for t in tasks:
        with Agent.open(log, policy, _cfg(soft_budget=6000, hard_budget=8000), session=f"q-{t.question_id}") as agent:
            res = agent.run(t.question)
        assert res.reason == "final" and t.check(res.answer), (t.question, t.answer, res.answer)
        exposure = sum(s.exposure_tokens for s in res.steps)
        assert exposure <= 0.01 * history_tokens, (t.question, exposure)
        overheads += [s.overhead_s for s in res.steps]
        reuses += [s.prefix_reuse for s in res.steps if s.prefix_reuse is not None and s.evicted == 0]
    assert min(reuses) >= 0.95
    assert statistics.median(overheads) <= 0.050
    log.close()


@pytest.mark.model
def test_loop_with_local_transformers_backend(log, tiny_model_dir):
    from scroll.llm import LLMConfig, make_llm

    llm = make_llm(LLMConfig(backend="transformers", model=str(tiny_model_dir), max_tokens=24))
    assert llm.token_counter_exact
    with Agent.open(log, llm, _cfg(max_steps=3, max_new_tokens=24), session="tf") as agent:
        res = agent.run("Say hello")
    assert len(res.steps) >= 1 and res.reason in ("no_code", "max_steps", "final", "max_tokens")
    assert all(s.view_tokens <= 4000 for s in res.steps)
    assert [e.kind for e in log.events(session="tf")][0] == "task"
    llm.close()


@pytest.mark.model
@pytest.mark.server
@pytest.mark.slow
def test_loop_against_real_vllm_server(log, tiny_server):
    from scroll.llm import LLMConfig, make_llm

    llm = make_llm(LLMConfig.from_yaml("openai", base_urls=tiny_server.base_urls,
                                       model=tiny_server.served_model_name, max_tokens=32))
    cfg = _cfg(max_steps=4, max_new_tokens=32, no_code_strikes=4)
    with Agent.open(log, llm, cfg, session="vllm") as agent:
        res = agent.run("What is 2 + 2? Use code.")
    assert len(res.steps) == 4 or res.reason in ("final", "no_code")
    msgs = [e for e in log.events(session="vllm") if e.kind == "message" and e.role == "assistant"]
    assert len(msgs) == len(res.steps)
    assert all(m.meta["backend"] == "openai" and m.meta["prompt_tokens"] for m in msgs)
    assert all(m.meta["prompt_tokens"] <= cfg.hard_budget + 64 for m in msgs)  # server-counted
    # replies without code were handled (tiny random model: nonsense text)
    for m, s in zip(msgs, res.steps):
        assert s.had_code == (extract_code(m.text) is not None)
    llm.close()


def test_ms_search_leaves_out_the_agents_own_cells_unless_asked(log):
    log.append(session="hist", role="user", text="the zebrafish tank needs a new heater")
    with Agent.open(log, ScriptedLLM([]), _cfg(), session="own") as agent:
        agent.capability.set_scope(["hist"])  # what a run granting the history session does
        k = agent.sess.executor()
        k.execute("q = 'zebrafish heater'; print(q)")  # a cell whose code and output hold the words
        r = k.execute("print([(h.seq, h.kind) for h in ms.search(q)])\n"
                      "print(sorted({h.kind for h in ms.search(q, origin='*')}))\n"
                      "print({h.kind for h in ms.search(q, origin='agent', kind='code')})")
        lines = r.stdout.splitlines()
        assert lines[0] == "[(1, 'message')]"
        assert lines[1] == "['code', 'message', 'output']"
        assert lines[2] == "{'code'}"
