"""LCM: three-level escalation, the summary DAG over the log, its store, and its tools."""
from __future__ import annotations

import re
import sqlite3

import pytest

from scroll import EventLog
from scroll.lcm import (DagStore, LcmConfig, LcmError, Summarizer, SummaryDag, describe, expand, expand_query,
                        grep)
from scroll.lcm.history import cut_to_tokens, format_event, history_events
from scroll.lcm.summarize import clean_reply, looks_like_text
from scroll.llm.base import LLMError, approx_count, approx_count_text
from scroll.llm.scripted import ScriptedLLM

WORDS = ("apple banana cherry delta echo falcon garden harbor island jungle kettle lemon meadow nickel orange "
         "pepper quartz river saddle timber umbrella violet walnut xenon yellow zephyr").split()
SECRET_AGENT = "zanzibarquokka"      # only in agent-origin events
SECRET_OTHER = "oxymoronpelican"     # only in a session that is not granted
GRANTED = ["s001", "s002", "s003", "s004"]


def add_history(log, sessions=GRANTED, turns=10, words=30, start=0):
    rows = []
    for k, s in enumerate(sessions):
        date = f"2023/05/{start + k + 1:02d} (Mon) 10:00"
        for t in range(turns):
            body = " ".join(WORDS[(k * 7 + t * 3 + i) % len(WORDS)] for i in range(words))
            rows.append({"session": s, "role": "user" if t % 2 == 0 else "assistant",
                         "text": f"{s} turn {t}: {body}", "meta": {"turn": t, "date": date}})
        if k == 1:  # interleave the agent's own events and another history session
            rows.append({"session": "run-1", "role": "assistant", "text": f"note {SECRET_AGENT}", "origin": "agent"})
            rows.append({"session": "x001", "role": "user", "text": f"other {SECRET_OTHER}"})
            rows.append({"session": "s001", "role": "scroll", "text": f"sys {SECRET_AGENT}", "origin": "system"})
    log.append_many(rows)


def responder(messages):
    """Deterministic stand-in for a model: short summaries naming the seqs they cover."""
    system, user = messages[0]["content"], messages[-1]["content"]
    if system.startswith(("Summarize", "Compress")):
        seqs = [int(x) for x in re.findall(r"seqs? (\d+)", user)]
        return f"Summary of seqs {min(seqs)}-{max(seqs)}: " + " ".join(user.split()[5:11]) if seqs else "Summary."
    if system.startswith("You read excerpts"):
        seqs = re.findall(r"\[seq (\d+)", user)
        return f"Found it [seq {seqs[0]}] and [seq 99999]." if seqs else "NONE"
    if system.startswith("Several readers"):
        return "Merged: " + " ".join(re.findall(r"\[seq \d+\]", user))
    return "ANSWER"


def fits_window(llm, window):
    return all(approx_count(c["messages"]) + (c["max_tokens"] or 0) <= window for c in llm.calls)


CFG = dict(context_tokens=900, window=1200, leaf_chunk_tokens=300, leaf_target=60, condensed_target=80,
           truncate_tokens=40, fresh_tail=4, fanout=3)


@pytest.fixture
def hist(log):
    add_history(log)
    return log


def built(log, llm=None, store=None, **over):
    llm = llm or ScriptedLLM(responder)
    dag = SummaryDag(log, GRANTED, config=LcmConfig(**{**CFG, **over}), store=store)
    return dag, dag.build(llm), llm


# ------------------------------------------------------------------ escalation
def long_text(n_words=200):
    return " ".join(WORDS[i % len(WORDS)] for i in range(n_words))


def test_level1_accepted_when_smaller():
    s = Summarizer(ScriptedLLM(["a short summary"]), window=4096).summarize(long_text(), target=50)
    assert s.level == "normal" and s.text == "a short summary" and s.tokens < s.input_tokens
    assert s.usage.calls == 1


def test_level2_when_level1_is_not_smaller():
    text = long_text()
    llm = ScriptedLLM([text + " and more words", "- bullet"])
    s = Summarizer(llm, window=4096).summarize(text, target=50)
    assert s.level == "aggressive" and s.text == "- bullet" and len(llm.calls) == 2
    assert "bullet points" in llm.calls[1]["messages"][0]["content"]
    assert s.attempts[0]["level"] == "normal" and "limit" in s.attempts[0]["reason"]


BAD = {"longer": lambda t: t + " " + t, "empty": lambda t: "", "blank": lambda t: "  \n ",
       "nul": lambda t: "ok\x00\x01 summary", "symbols": lambda t: "#$%^&*!@" * 3,
       "think-only": lambda t: "<think>just thinking about it", "replacement": lambda t: "sum\ufffdmary"}


@pytest.mark.parametrize("bad", sorted(BAD) + ["error"])
def test_level3_when_both_llm_levels_fail(bad):
    text = long_text(300)

    def reply(messages):
        if bad == "error":
            raise LLMError("boom")
        return BAD[bad](messages[-1]["content"])

    llm = ScriptedLLM(reply)
    s = Summarizer(llm, window=4096, truncate_tokens=40, on_error="escalate").summarize(text, target=50)
    assert s.level == "truncate" and len(llm.calls) == 2
    assert 0 < s.tokens <= 40 < s.input_tokens and s.tokens == approx_count_text(s.text)
    assert s.text.startswith(text[:20]) and "truncated from" in s.text
    again = Summarizer(ScriptedLLM(reply), window=4096, truncate_tokens=40, on_error="escalate")
    assert again.summarize(text, target=50).text == s.text  # deterministic
    if bad == "error":  # by default an outage is raised, not turned into a truncation
        with pytest.raises(LLMError):
            Summarizer(ScriptedLLM(reply), window=4096).summarize(text, target=50)


def test_level3_always_terminates_and_comes_out_smaller():
    llm = ScriptedLLM(lambda m: m[-1]["content"] * 2)  # always longer than its input
    s = Summarizer(llm, window=4096, truncate_tokens=16)
    for n_chars in list(range(1, 40)) + [97, 500, 5000]:
        text = ("word " * n_chars)[:n_chars]
        n = approx_count_text(text)
        for limit in (None, 0, 1, 3, n - 1, n, n + 5):
            out = s.summarize(text, target=8, limit=limit)
            if n == 0:
                assert out is None
                continue
            bound = n - 1 if limit is None else min(limit, n - 1)
            if bound < 0:
                assert out is None
                continue
            assert out.tokens <= bound < n and approx_count_text(out.text) == out.tokens
    assert s.summarize("", target=8) is None


def test_every_summarizer_call_fits_the_window_even_for_a_huge_input():
    text = long_text(4000)
    llm = ScriptedLLM(lambda m: text + "!")  # always longer than the input -> level 3
    s = Summarizer(llm, window=600, truncate_tokens=40).summarize(text, target=100)
    assert len(llm.calls) == 2 and fits_window(llm, 600)
    assert "input cut to fit" in llm.calls[0]["messages"][-1]["content"]
    assert s.level == "truncate" and f"truncated from {approx_count_text(text)} tokens" in s.text


def test_reply_cleaning():
    assert clean_reply("<think>hmm</think>\n The answer ") == "The answer"
    assert clean_reply("<think>never closed") == ""
    assert looks_like_text("Ann met Bob on 2023-05-01.") and not looks_like_text("!!!???###")
    assert cut_to_tokens("abc def ghi", 0, approx_count_text) == ""
    tail = cut_to_tokens(long_text(100), 10, approx_count_text, keep="tail", marker="[cut] ")
    assert tail.startswith("[cut] ") and long_text(100).endswith(tail[6:]) and approx_count_text(tail) <= 10


# ------------------------------------------------------------------------ DAG
def test_below_soft_threshold_nothing_is_summarized(hist):
    dag, report, llm = built(hist, context_tokens=100_000)
    assert llm.calls == [] and report.created == 0 and report.compactions == 0
    items = dag.context()
    assert [it.kind for it, _ in items] == ["event"] * 40
    assert [text for _, text in items] == [format_event(e) for e in history_events(hist, GRANTED)]
    assert dag.verify()["ok"]


def test_build_compacts_under_budget_with_leaves_and_condensed_nodes(hist):
    dag, report, llm = built(hist)
    cfg = dag.config
    assert report.created > 0 and report.levels.get("normal", 0) > 0 and not report.over_budget
    assert dag.total <= cfg.context_tokens and dag.total == sum(approx_count_text(t) for _, t in dag.context())
    assert fits_window(llm, cfg.window)
    nodes = dag.reachable()
    assert {n.kind for n in nodes.values()} == {"leaf", "condensed"}
    assert all(n.tokens < n.input_tokens for n in nodes.values())
    # chronological: the context covers increasing, disjoint seq ranges; raw events come last
    spans = [(dag.node(it.ref).lo, dag.node(it.ref).hi) if it.kind == "node" else (it.ref, it.ref)
             for it in dag.items]
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))
    assert [it.kind for it in dag.items][-cfg.fresh_tail:] == ["event"] * cfg.fresh_tail
    v = dag.verify()
    assert v["ok"], v["problems"]
    assert v["events"] == 40
    # condensed children are adjacent (leaves may span sessions: see the within-session test)
    for n in nodes.values():
        if n.kind == "leaf":
            assert 1 <= len(n.sessions) <= 2
        else:
            kids = [nodes[c] for c in n.children]
            assert 2 <= len(kids) <= cfg.fanout and n.depth == 1 + max(k.depth for k in kids)


def test_pointers_reconstruct_exactly_the_original_events(hist):
    dag, _, _ = built(hist)
    history = {e.seq: e for e in history_events(hist, GRANTED)}
    order = list(history)
    for nid, node in dag.reachable().items():
        events = dag.events_of(nid)
        assert [e.to_dict() for e in events] == [hist.expand(s).to_dict() for s in dag.seqs_of(nid)]
        seqs = [e.seq for e in events]
        i = order.index(seqs[0])
        assert seqs == order[i:i + len(seqs)]  # a contiguous run of this history
        if node.kind == "condensed":
            assert seqs == [s for c in node.children for s in dag.seqs_of(c)]
        assert expand(dag, nid) == "\n".join(format_event(e) for e in events)


def test_only_granted_sessions_and_history_origin_reach_the_model(hist):
    dag, _, llm = built(hist)
    sent = " ".join(m["content"] for c in llm.calls for m in c["messages"])
    assert SECRET_AGENT not in sent and SECRET_OTHER not in sent and "x001" not in sent
    granted = {e.seq for e in history_events(hist, GRANTED)}
    assert all(set(n.seqs) <= granted for n in dag.reachable().values())
    assert "0 turn(s)" in grep(dag, SECRET_AGENT) and "0 turn(s)" in grep(dag, SECRET_OTHER)


@pytest.mark.parametrize("bad", ["longer", "empty", "nul", "symbols"])
def test_an_adversarial_model_still_converges(hist, bad):
    dag, report, llm = built(hist, llm=ScriptedLLM(lambda m: BAD[bad](m[-1]["content"])))
    assert set(report.levels) == {"truncate"} and report.created > 0
    assert dag.total <= dag.config.context_tokens and dag.verify()["ok"]
    assert all(n.level == "truncate" and n.tokens < n.input_tokens for n in dag.reachable().values())


def test_hard_threshold_eats_the_fresh_tail_when_it_must(log):
    add_history(log, turns=6, words=120)  # few, large turns: the fresh tail alone is over the budget
    dag, report, _ = built(log, context_tokens=400, fresh_tail=8, leaf_chunk_tokens=200)
    assert dag.total <= 400 and not report.over_budget and dag.verify()["ok"]


def test_an_outage_mid_build_raises_and_the_rerun_resumes(hist):
    calls = []

    def flaky(messages):
        calls.append(1)
        if len(calls) > 5:
            raise LLMError("down")
        return responder(messages)

    with pytest.raises(LLMError):
        built(hist, llm=ScriptedLLM(flaky))
    with DagStore.for_log(hist) as store:
        assert store.count() == 5  # the nodes made before the outage are kept
    dag, report, llm = built(hist)
    assert report.reused >= 5 and report.created > 0 and dag.verify()["ok"]
    assert all(n.level == "normal" for n in dag.reachable().values())
    dag.close()


def test_rerun_reuses_every_node_and_makes_no_call(hist):
    dag, first, _ = built(hist)
    ctx = [(it.kind, it.ref) for it in dag.items]
    dag.close()
    store = DagStore.for_log(hist)
    again, report, llm = built(hist, store=store)
    assert llm.calls == [] and report.created == 0 and report.resumed_from == hist.max_seq()
    assert [(it.kind, it.ref) for it in again.items] == ctx
    store.close()
    fresh = SummaryDag(hist, GRANTED, config=LcmConfig(**CFG))
    assert fresh.load(ScriptedLLM(responder)) and [(it.kind, it.ref) for it in fresh.items] == ctx
    fresh.close()


def test_incremental_build_equals_a_build_from_scratch(hist, tmp_path):
    dag, first, llm1 = built(hist)
    dag.close()
    add_history(hist, sessions=["s003", "s004"], turns=8, start=10)  # later turns of granted sessions
    dag2, report, llm2 = built(hist)
    assert report.resumed_from > 0 and report.events == 16 and 0 < len(llm2.calls) < len(llm1.calls)
    scratch_store = DagStore(tmp_path / "scratch.lcm.db", log_id=hist.log_id)
    dag3, full, llm3 = built(hist, store=scratch_store)
    assert [(it.kind, it.ref) for it in dag2.items] == [(it.kind, it.ref) for it in dag3.items]
    assert len(llm3.calls) > len(llm2.calls) and dag2.verify()["ok"]
    dag2.close()
    scratch_store.close()


def test_the_event_log_is_never_written(hist):
    before = hist.verify()["head_hash"], hist.stats()["events"]
    dag, _, llm = built(hist)
    nid = next(it.ref for it in dag.items if it.kind == "node")
    grep(dag, "apple"), describe(dag, nid), expand(dag, nid), expand_query(dag, nid, "which fruit?", llm)
    dag.close()
    assert (hist.verify()["head_hash"], hist.stats()["events"]) == before
    tables = {r[0] for r in hist.conn.execute("SELECT name FROM sqlite_master")}
    assert not tables & {"nodes", "edges", "frontiers", "lcm_info"}
    assert DagStore.for_log(hist).path.name == hist.path.name + ".lcm.db"


def test_store_is_bound_to_its_log_and_append_only(hist, tmp_path):
    dag, _, _ = built(hist)
    dag.close()
    with EventLog(tmp_path / "other.db") as other:
        with pytest.raises(LcmError, match="built for log"):
            DagStore(str(hist.path) + ".lcm.db", log_id=other.log_id)
    with DagStore.for_log(hist) as store:
        assert store.count() > 0
        for sql in ("UPDATE nodes SET text = 'x'", "DELETE FROM nodes", "DELETE FROM frontiers"):
            with pytest.raises(sqlite3.DatabaseError, match="immutable"):
                store.conn.execute(sql)


def test_verify_names_a_node_whose_events_changed(hist, tmp_path):
    dag, _, _ = built(hist)
    leaf = next(n for n in dag.reachable().values() if n.kind == "leaf")
    dag.close()
    conn = sqlite3.connect(str(hist.path) + ".lcm.db")
    conn.execute("DROP TRIGGER nodes_no_update")
    conn.execute("UPDATE nodes SET digest = 'x' WHERE node_id = ?", (leaf.node_id,))
    conn.commit()
    conn.close()
    dag, _, _ = built(hist)
    v = dag.verify()
    assert not v["ok"] and any(leaf.node_id in p for p in v["problems"])
    dag.close()


def test_config_is_validated():
    with pytest.raises(ValueError, match="target_ratio"):
        LcmConfig(soft_ratio=0.5, target_ratio=0.6)
    with pytest.raises(ValueError, match="window"):
        LcmConfig(window=500, condensed_target=900)


# ----------------------------------------------------------------------- tools
def test_grep_finds_turns_with_their_covering_node_and_summaries(hist):
    dag, _, _ = built(hist)
    out = grep(dag, "s001 turn 3")
    assert "1 turn(s)" in out and re.search(r"in sum_[0-9a-f]{16}", out)
    assert "summary node(s)" in grep(dag, "Summary of seqs") and "summaries:" in grep(dag, "Summary of seqs")
    assert "matched literally" in grep(dag, "turn (")
    assert "in raw context" in grep(dag, "s004 turn 9")
    assert grep(dag, "").startswith("grep: ")


def test_describe_and_expand_with_cap(hist):
    dag, _, _ = built(hist)
    cond = next(n for n in dag.reachable().values() if n.kind == "condensed")
    d = describe(dag, cond.node_id)
    assert f"children: {', '.join(cond.children)}" in d and cond.text in d
    assert f"parents: {cond.node_id}" in describe(dag, cond.children[0])
    assert describe(dag, "sum_nope").startswith("describe: no summary node")
    capped = expand(dag, cond.node_id, token_cap=100)
    assert approx_count_text(capped.split("\n[...")[0]) <= 100 and "more turn(s)" in capped
    assert expand(dag, "sum_nope").startswith("expand: ")


def test_expand_query_delegates_and_cites_only_the_nodes_seqs(hist):
    dag, _, _ = built(hist)
    leaf = next(n for n in dag.reachable().values() if n.kind == "leaf")
    llm = ScriptedLLM(responder)
    out = expand_query(dag, leaf.node_id, "what fruit?", llm, token_cap=60)
    assert len(llm.calls) == 1 and f"[cited seqs: {leaf.seqs[0]}]" in out and "99999]" not in out.split("\n")[-1]
    sent = llm.calls[0]["messages"][-1]["content"]
    assert all(format_event(e) in sent for e in dag.events_of(leaf.node_id))
    assert approx_count_text(out) <= 60
    # a node bigger than one sub-call: several reads, then one merge; still under the cap
    cond = max((n for n in dag.reachable().values() if n.kind == "condensed"), key=lambda n: n.hi - n.lo)
    llm = ScriptedLLM(responder)
    out = expand_query(dag, cond.node_id, "what fruit?", llm, token_cap=40, window=400)
    assert len(llm.calls) >= 3 and llm.calls[-1]["messages"][0]["content"].startswith("Several readers")
    assert fits_window(llm, 400) and approx_count_text(out) <= 40
    # a verbose sub-call is cut to the cap; NONE becomes "not found"; bad ids are error texts
    out = expand_query(dag, leaf.node_id, "q", ScriptedLLM(lambda m: "blah " * 500 + "[seq 1]"), token_cap=50)
    assert approx_count_text(out) <= 50 and "[...]" in out
    assert expand_query(dag, leaf.node_id, "q", ScriptedLLM(["NONE"]), token_cap=50).startswith("Not found")
    assert expand_query(dag, "sum_nope", "q", llm).startswith("expand_query: ")


def test_tools_do_not_reach_nodes_of_another_history(hist):
    dag, _, _ = built(hist)
    mine = set(dag.reachable())
    dag.close()
    other = SummaryDag(hist, ["x001", "s001"], config=LcmConfig(**CFG))
    other.build(ScriptedLLM(responder))
    for nid in mine - set(other.reachable()):
        assert describe(other, nid).startswith("describe: no summary node")
        assert expand(other, nid).startswith("expand: ")
    other.close()



def test_leaves_within_one_session_when_asked(hist):
    """`leaf_within_session=True`: every leaf covers one session; by default a leaf may span
    a session boundary (fewer leaves over many short sessions)."""
    per, _, _ = built(hist, leaf_within_session=True)
    per_leaves = [n for n in per.reachable().values() if n.kind == "leaf"]
    assert per_leaves and all(len(n.sessions) == 1 for n in per_leaves)
    cross, _, _ = built(hist)
    leaves = [n for n in cross.reachable().values() if n.kind == "leaf"]
    assert any(len(n.sessions) > 1 for n in leaves) and len(leaves) <= len(per_leaves)


def test_routine_sweeps_make_only_full_nodes_and_calls_stay_linear(log):
    """lossless-claw's rule: below the hard threshold a sweep condenses only `fanout` same-depth
    nodes and summarizes only full chunks (or `leaf_min_events` turns); a fresh tail bigger than
    the target must not make every new leaf re-condense the whole DAG (it did: ~13 calls per
    1 k tokens on SmolLM2 at a 4 k window)."""
    sessions = [f"s{i:03d}" for i in range(1, 41)]
    add_history(log, sessions=sessions, turns=10, words=30)      # 400 turns of ~77 approx tokens
    turn = min(approx_count_text(format_event(e)) for e in history_events(log, sessions))
    # the fresh tail (4 turns) alone is over the target (0.5 * 600 = 300), under the hard threshold
    cfg = dict(context_tokens=600, window=1200, leaf_chunk_tokens=300, leaf_target=40, condensed_target=60,
               truncate_tokens=30, fresh_tail=4, fanout=4, leaf_min_events=4)
    assert 300 <= 4 * turn < 600
    llm = ScriptedLLM(responder)
    dag = SummaryDag(log, sessions, config=LcmConfig(**cfg))
    report = dag.build(llm)
    assert not report.over_budget and dag.verify()["ok"]
    nodes = dag.store.all_nodes()                      # every node made, reachable or not
    leaves = [n for n in nodes if n.kind == "leaf"]
    condensed = [n for n in nodes if n.kind == "condensed"]
    assert leaves and condensed
    # partial nodes only come from sweeps past the hard threshold (the uncondensed residue of a
    # 4-level DAG plus the tail overflows a 600-token context now and then)
    full_leaves = [n for n in leaves if len(n.seqs) >= 4 or n.input_tokens + turn > 300]
    assert len(full_leaves) >= 0.85 * len(leaves)
    assert sum(len(n.children) == 4 for n in condensed) >= 0.9 * len(condensed)
    # one call per node (the responder's summaries are always accepted): leaves + leaves/3 at most
    assert len(llm.calls) == report.created <= len(leaves) * (1 + 1 / 3) + 1
    assert len(leaves) <= 400 / 3 + 10
    assert len(llm.calls) < 200            # the old rule (pairs of any depth, any leaf): 395 calls


def test_threads_opening_one_new_store_at_once_all_succeed(tmp_path):
    """Switching a new file to WAL needs an exclusive lock, and SQLite says "database is locked"
    at once there (no busy wait): the store retries, so concurrent openers all get it."""
    import threading

    from scroll.lcm.store import DagStore

    errors: list[str] = []
    for trial in range(40):
        barrier = threading.Barrier(3)

        def open_it(path=tmp_path / f"d{trial}.lcm.db"):
            barrier.wait()
            try:
                DagStore(path, log_id="L").close()
            except Exception as e:  # noqa: BLE001 - collected for the assertion
                errors.append(repr(e))
        threads = [threading.Thread(target=open_it) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
