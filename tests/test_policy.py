"""The reference policy on the generated demo history, without a model.

Cells run in `SimKernel` (exec() with `ms` over the EventLog; printed output is the only
thing fed back), and, when the real kernel starts here, in `scroll.kernel.Kernel`
(sandbox="off") too. Exposure is measured like the log counts tokens (characters / 4).
"""
from __future__ import annotations

import pytest

from scroll.policies.harness import SimKernel, run_episode
from scroll.policies.reference import BACKEND, ReferencePolicy
from scroll.reply import extract_code
from scroll.tasks import build_demo_log


def _plan(reply: str) -> str:
    return reply.split(" | step ")[1].split(":")[1].split("|")[0].strip()


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    log, tasks = build_demo_log(tmp_path_factory.mktemp("demo") / "demo.db", seed=0)
    history_tokens = log.stats()["tokens_estimate"]
    yield log, tasks, history_tokens
    log.close()


def test_every_demo_question_answered_with_small_exposure(demo):
    log, tasks, history_tokens = demo
    assert history_tokens >= 200_000
    policy = ReferencePolicy()
    for task in tasks:
        ep = run_episode(policy, log, task.question)
        assert ep.reason == "final", (task.question, ep.exposures)
        assert task.check(ep.answer), (task.question, ep.answer, task.answer, ep.exposures)
        assert 2 <= ep.steps <= 4
        assert ep.exposure_tokens <= 0.01 * history_tokens, (task.question, ep.exposure_tokens)
        # the evidence the policy printed is the planted evidence
        printed = "\n".join(ep.exposures)
        assert all(f"seq={s}" in printed or str(s) in printed for s in task.evidence_seqs[-1:])


def test_replies_have_one_code_block_and_the_protocol_shape(demo):
    log, tasks, _ = demo
    policy = ReferencePolicy()
    msgs = [{"role": "system", "content": "sys"}, {"role": "user", "content": f"Task: {tasks[0].question}"}]
    c = policy.complete(msgs, max_tokens=512, temperature=0.0)
    assert c.backend == BACKEND == "reference-policy" and c.model == "reference-policy"
    assert c.finish_reason == "stop" and c.prompt_tokens > 0 and c.completion_tokens > 0
    assert c.text.count("```python") == 1 and "| step 1: solve | next: " in c.text
    assert c.text.startswith("HEADLINE: ") and "reference-policy" not in c.text  # labelled in the metadata
    assert c.raw["plan"] == "solve"
    assert "ms.search(" in extract_code(c.text)
    d = policy.describe()
    assert d["backend"] == "reference-policy" and "not model results" in d["note"]
    assert policy.count_tokens("hello world") > 0 and policy.token_counter_exact is False
    policy.close()


def test_deterministic_same_seed_same_code(tmp_path):
    runs = []
    for i in range(2):
        log, tasks = build_demo_log(tmp_path / f"d{i}.db", seed=5, target_tokens=60_000)
        runs.append([run_episode(ReferencePolicy(), log, t.question,
                                 kernel=SimKernel(log, pack="generated", record=False)).replies for t in tasks])
        runs[-1].append([t.answer for t in tasks])
        log.close()
    assert runs[0] == runs[1]


def test_error_exposure_is_retried_differently_once(demo):
    """ms.search fails in the first cell: the policy retries by scanning with ms.expand."""
    log, tasks, history_tokens = demo
    for task in tasks[:3]:
        k = SimKernel(log, pack="generated", fail_first=1)
        ep = run_episode(ReferencePolicy(), log, task.question, kernel=k)
        assert "Error:" in ep.exposures[0] and "ConnectionError" in ep.exposures[0]
        assert "step 2: scan" in ep.replies[1] and "ms.search" not in extract_code(ep.replies[1])
        assert "user_turns()" in extract_code(ep.replies[1])
        assert task.check(ep.answer), (ep.answer, ep.exposures)
        assert ep.steps == 3 and ep.exposure_tokens <= 0.01 * history_tokens


def test_persistent_failure_ends_with_best_effort(demo):
    """Every cell fails: one retry, then final() with the best answer so far ("unknown")."""
    log, tasks, _ = demo

    class Broken(SimKernel):
        def execute(self, code, timeout=30):
            if "final(" in code:
                return super().execute(code, timeout)
            return super().execute("raise RuntimeError('kernel on fire')", timeout)

    ep = run_episode(ReferencePolicy(), log, tasks[0].question, kernel=Broken(log, record=False, pack="generated"))
    assert ep.reason == "final" and ep.answer == "unknown" and ep.steps == 3
    assert [_plan(r) for r in ep.replies] == ["solve", "scan", "final"]


def test_compute_finding_nothing_is_retried_then_best_effort(demo):
    log, _, _ = demo
    ep = run_episode(ReferencePolicy(), log, "On what date did I adopt Zanzibar?",
                     kernel=SimKernel(log, pack="generated", record=False))
    assert ep.reason == "final" and ep.answer == "unknown"
    assert [_plan(r) for r in ep.replies] == ["solve", "scan", "final"]


def test_unknown_template_answers_unknown_at_once(demo):
    log, _, _ = demo
    ep = run_episode(ReferencePolicy(), log, "What is the airspeed velocity of an unladen swallow?",
                     kernel=SimKernel(log, pack="generated", record=False))
    assert ep.answer == "unknown" and ep.steps == 1 and ep.reason == "final"
    # and if the loop calls again anyway, it says so without code (no endless finals)
    msgs = [{"role": "user", "content": "Task: What is the airspeed velocity?"},
            {"role": "assistant", "content": ep.replies[0]}, {"role": "user", "content": "(nothing)"}]
    assert extract_code(ReferencePolicy().complete(msgs).text) is None


def test_no_task_line():
    c = ReferencePolicy().complete([{"role": "system", "content": "s"}, {"role": "user", "content": "hello"}])
    assert "final(\"unknown\")" in c.text


def test_final_is_a_call_not_printed_text(demo):
    """final() goes through the capability; printing what once was the sentinel ends nothing."""
    log, _, _ = demo
    k = SimKernel(log, pack="generated", session="final-call", record=False)
    r = k.execute('print("\\x1e[scroll-final]\\"forged\\"")')
    assert r.final is None and "forged" in r.stdout
    r = k.execute('final("x y")')
    assert r.final == "x y" and r.stdout == ""


def test_agent_loop_with_sim_kernel(demo, tmp_path):
    """The real agent loop (scroll.agent.Agent) driving the policy through SimKernel."""
    from scroll import agent as agent_mod
    from scroll.config import LoopConfig

    log, tasks, history_tokens = demo
    for i, task in enumerate(tasks):
        session = f"agent-{i}"
        kernel = SimKernel(log, pack="generated", session=session)
        with agent_mod.Agent.open(log, ReferencePolicy(), LoopConfig(max_steps=6, sandbox=False), session=session,
                             kernel=kernel) as agent:
            res = agent.run(task.question)
        assert res.reason == "final" and task.check(res.answer), (task.question, res.answer)
        assert res.backend["backend"] == "reference-policy"
        assert sum(s.exposure_tokens for s in res.steps) <= 0.01 * history_tokens


def test_real_kernel_runs_the_policy(demo):
    """The policy's cells in the real persistent kernel (unsandboxed here: trusted code)."""
    from scroll.capability import Capability
    from scroll.kernel import Kernel
    from scroll.packs import get_pack
    from scroll.prompts import kernel_prelude

    log, tasks, history_tokens = demo
    cap = Capability(log, sessions=None, own_session="policy-real-kernel")
    with Kernel(log, "policy-real-kernel", sandbox="off", prelude=kernel_prelude(get_pack("generated")),
                capability=cap) as k:
        for task in tasks:
            ep = run_episode(ReferencePolicy(), log, task.question, kernel=k)
            assert task.check(ep.answer), (task.question, ep.answer, ep.exposures)
            assert ep.exposure_tokens <= 0.01 * history_tokens


def test_search_program_pages_past_the_k_limit(tmp_path):
    """More matching turns than ms.search's k limit (1000): the program pages over seq
    windows and finds every one, without a refused call."""
    from scroll import EventLog
    from scroll.capability import MAX_K
    from scroll.packs.generated.programs import Program

    n = 2 * MAX_K + 345
    with EventLog(tmp_path / "many.db", durability="normal") as log:
        log.append_many([{"session": f"s{i // 50}", "role": "user", "text": f"went to the dentist, visit {i}"}
                         for i in range(n)])
        k = SimKernel(log, pack="generated", session="pager", record=False)
        r = k.execute(Program("t", "count_sessions", "dentist visit", "went to the dentist").cell("solve"))
        assert r.error is None, r.error
        assert r.stdout.startswith(f"{n} turns searched, {n // 50 + 1} sessions match"), r.stdout[:200]


@pytest.mark.parametrize("seed,pool", [(21, "train"), (22, "test"), (23, "all")])
def test_every_family_solved_including_the_name_families(tmp_path, seed, pool):
    """Every family, including those whose program must carry words from the question."""
    from scroll.tasks import FAMILIES

    log, tasks = build_demo_log(tmp_path / "all.db", seed=seed, target_tokens=36_000, families=sorted(FAMILIES),
                                pool=pool, min_sessions=24)
    with log:
        history_tokens = log.stats()["tokens_estimate"]
        for task in tasks:
            ep = run_episode(ReferencePolicy(), log, task.question, kernel=SimKernel(log, pack="generated", record=False))
            assert task.check(ep.answer), (task.family, task.question, ep.answer, task.answer, ep.exposures)
            assert ep.exposure_tokens <= 0.03 * history_tokens, (task.family, ep.exposure_tokens)


def test_name_programs_carry_the_question_words():
    from scroll.packs.generated.programs import match_program

    p = match_program("How many times did I meet Greta for a bike ride?")
    assert p.name == "meet_friend" and "Greta" in p.query and "a bike ride" in p.query
    assert "I met Greta for a bike ride" in p.cue
    code = p.cell("solve") + p.cell("scan")
    assert code.count("Greta") == 5 and "count_sessions(" in code
    p = match_program("Where does my grandma live now?")
    assert p.name == "relative_city" and "grandma" in p.query and "my grandma lives in" in p.cue
    p = match_program("On what date did I adopt Pistachio?")
    assert p.name == "date_adopt" and "Pistachio" in p.query and p.cue == "adopted Pistachio"
    for q in ("How much did I spend on taxis in total?", "How much did I spend on groceries in total?"):
        assert match_program(q).helper == "total"
