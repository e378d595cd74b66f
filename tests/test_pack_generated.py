"""The `generated` task pack's helpers (scroll/packs/generated/toolkit.py): what they compute on
a small history, that the pack's prompt documents exactly them and that only a run naming the
pack has them, and that they work through `Agent.run` in the real sandboxed kernel."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from scroll.policies.harness import SimKernel

HISTORY = [  # (session, time, user text)
    ("s01", "2026-01-05T10:00:00", "I live in Porto and work from home."),
    ("s02", "2026-01-09T10:00:00", "My neighbor just moved to Oslo for a job."),
    ("s03", "2026-01-12T10:00:00", "Big news: I just moved to Vienna! Boxes everywhere."),
    ("s04", "2026-01-15T10:00:00", "I might move to Dublin one day. I went to the dentist today, no cavities."),
    ("s04", "2026-01-15T10:05:00", "Also I went to the dentist again after lunch."),
    ("s05", "2026-01-20T10:00:00", "I cancelled my dentist appointment. We adopted Mochi yesterday!"),
    ("s06", "2026-01-22T10:00:00", "Had a dentist appointment? No: I had a dentist appointment today."),
    ("s06", "2026-01-22T11:00:00", "Paid $40 for a taxi to the airport. A taxi home would be about $300."),
    ("s07", "2026-01-25T10:00:00", "paid $12.50 for a taxi to the station, ugh."),
]


@pytest.fixture
def hist(log):
    for session, t, text in HISTORY:
        log.append(session=session, role="user", text=text, time=t)
        log.append(session=session, role="assistant", text="Noted: " + text, time=t)
    return log


def _run(log, code: str):
    k = SimKernel(log, session="toolkit", record=False, pack="generated")
    r = k.execute(code)
    assert r.error is None, r.error
    return r.stdout, k.ns


def test_latest_takes_the_name_after_the_latest_first_person_statement(hist):
    out, ns = _run(hist, 'a = latest(ms.search("moved live", k=None, role="user"), "I live in|I just moved to")')
    assert ns["a"] == "Vienna" and "ANSWER: Vienna | evidence seqs: [5]" in out  # not Oslo (the neighbor)


def test_count_sessions_counts_each_session_once(hist):
    out, ns = _run(hist, 'n = count_sessions(ms.search("dentist", k=None, role="user"), '
                         '"I went to the dentist|I had a dentist appointment")')
    assert ns["n"] == "2" and "2 sessions match" in out  # s04 twice = once; s05 cancelled; s06 once


def test_date_of_moves_yesterday_one_day_back(hist):
    out, ns = _run(hist, 'd = date_of(ms.search("adopted Mochi", k=None, role="user"), "adopted Mochi")')
    assert ns["d"] == "2026-01-19" and "says 'yesterday'" in out


def test_total_sums_the_marked_amounts_only(hist):
    out, ns = _run(hist, 't = total(ms.search("taxi", k=None, role="user"), "paid $ for a taxi")')
    assert ns["t"] == "$52.50" and "2 amounts match" in out  # the $300 quote is not paid


def test_nothing_matching_is_unknown_and_bad_cues_are_clear_errors(hist):
    out, ns = _run(hist, 'u = latest(ms.search("moved", k=None), "I emigrated to")')
    assert ns["u"] == "unknown" and "ANSWER: unknown" in out
    r = SimKernel(hist, record=False, pack="generated").execute('count_sessions([], "")')
    assert "cue must be a non-empty regular expression" in r.error


def test_user_turns_reads_every_user_turn_past_one_expand_page(log):
    log.append_many([{"session": f"s{i // 100}", "role": "user" if i % 2 else "assistant", "text": f"turn {i}"}
                     for i in range(4500)])
    out, ns = _run(log, "turns = user_turns()")
    assert len(ns["turns"]) == 2250 and "2250 user turns" in out


def test_the_pack_prompt_documents_exactly_its_helpers_and_the_core_has_none_of_them(hist):
    from scroll.packs import get_pack
    from scroll.prompts import KERNEL_PRELUDE, SYSTEM_PROMPT, kernel_prelude, system_prompt

    pack = get_pack("generated")
    src = Path(__file__).resolve().parents[1] / "scroll" / "packs" / "generated" / "toolkit.py"
    public = {n.name for n in ast.parse(src.read_text()).body if isinstance(n, ast.FunctionDef)
              and not n.name.startswith("_")}
    assert public == {"latest", "count_sessions", "date_of", "total", "earliest", "days_between", "all_values"}
    documented = set(re.findall(r"\b(\w+)\((?:hits, cue|)\)", pack.prompt))
    assert documented == public
    assert src.read_text() in kernel_prelude(pack) and pack.prompt in system_prompt(pack)
    for name in public:  # the core knows none of them
        assert not re.search(rf"\b{name}\(", SYSTEM_PROMPT) and f"def {name}(" not in KERNEL_PRELUDE
    core = SimKernel(hist, record=False)  # no pack named: the core helpers only
    assert "count_of" in core.ns and not any(name in core.ns for name in public)
    assert all(name in SimKernel(hist, record=False, pack="generated").ns for name in public)


@pytest.mark.sandbox
def test_helpers_through_agent_run_in_the_sandboxed_kernel(hist):
    """The path a model takes: a reply's cell calls a helper in the sandboxed kernel; the
    value stays resident and the next cell submits it."""
    from scroll.agent import Agent
    from scroll.config import LoopConfig
    from scroll.llm.scripted import ScriptedLLM

    exposures: list[str] = []
    replies = ['```python\nhits = ms.search("dentist", k=None, role="user")\n'
               'n = count_sessions(hits, "I went to the dentist|I had a dentist appointment")\n```',
               "```python\nfinal(n)\n```"]
    cfg = LoopConfig(max_steps=3, cell_timeout=20, max_output_chars=1500, soft_budget=3000, hard_budget=4000,
                     pack="generated")
    with Agent.open(hist, ScriptedLLM(replies), cfg, session="tk",
               on_step=lambda rec, reply, exp: exposures.append(exp)) as agent:
        res = agent.run("How many times did I go to the dentist?")
    assert res.reason == "final" and res.answer == "2", (res, exposures)
    assert "ANSWER: 2 | evidence seqs:" in exposures[0] and "Error" not in exposures[0]
