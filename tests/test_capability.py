"""`scroll.capability.Capability`: scopes, budgets, paging and final(), without a kernel
(the kernel and the loop are exercised in test_trust_e2e.py and test_ms_dos.py)."""
from __future__ import annotations

import base64
import time

import pytest

from scroll.capability import MAX_K, Budgets, Capability, check_time_bound
from scroll.origin import Origin


def call(cap, method, **params):
    rep = cap.handle({"id": 7, "method": method, "params": params})
    assert rep["id"] == 7
    return rep


def ok(cap, method, **params):
    rep = call(cap, method, **params)
    assert rep["ok"], rep
    return rep["result"]


def err(cap, method, **params) -> str:
    rep = call(cap, method, **params)
    assert not rep["ok"], rep
    return rep["error"]


@pytest.fixture
def filled(log):
    seqs = {
        "h1": log.append(session="h1", role="user", text="I adopted a beagle named Rocket"),
        "h2": log.append(session="h2", role="user", text="Rocket the beagle likes the beach"),
        "task": log.append(session="agent", role="user", kind="task", text="what is my beagle called",
                           origin=Origin.AGENT),
        "reply": log.append(session="agent", role="assistant", text="search beagle Rocket", origin=Origin.AGENT),
        "sys": log.append(session="agent", role="scroll", kind="note", text="beagle index rebuilt",
                          origin=Origin.SYSTEM),
    }
    return log, seqs


def test_search_defaults_to_history_and_origin_is_explicit(filled):
    log, s = filled
    cap = Capability(log)
    assert {h["seq"] for h in ok(cap, "search", query="beagle Rocket")} == {s["h1"], s["h2"]}
    assert {h["seq"] for h in ok(cap, "search", query="beagle", origin="agent")} == {s["task"], s["reply"]}
    assert {h["seq"] for h in ok(cap, "search", query="beagle", origin="system")} == {s["sys"]}
    assert len(ok(cap, "search", query="beagle", origin="*")) == 5
    assert all(h["origin"] == "history" for h in ok(cap, "search", query="beagle"))
    assert "origin must be" in err(cap, "search", query="beagle", origin="labels")
    assert [e["seq"] for e in ok(cap, "recent", n=10)] == [s["h1"], s["h2"]]


def test_session_scope_hides_other_sessions_everywhere(filled):
    log, s = filled
    cap = Capability(log, sessions=["h1"], own_session="agent")
    assert [h["seq"] for h in ok(cap, "search", query="beagle Rocket")] == [s["h1"]]
    assert ok(cap, "search", query="beagle", session="h2") == []
    assert "no event with seq" in err(cap, "expand", lo=s["h2"])
    assert ok(cap, "expand", lo=s["h1"])["event"]["seq"] == s["h1"]
    assert [e["seq"] for e in ok(cap, "expand", lo=1, hi=100)["events"]] == [s["h1"], s["task"], s["reply"], s["sys"]]
    assert {x["session"] for x in ok(cap, "sessions")} == {"h1", "agent"}
    assert [e["seq"] for e in ok(cap, "recent", n=5, origin="*")] == [s["h1"], s["task"], s["reply"], s["sys"]]
    # the scope can be changed by its owner between runs, never by a request
    assert "unknown method" in err(cap, "set_scope", sessions=None)
    cap.set_scope(None)
    assert len(ok(cap, "search", query="beagle Rocket")) == 2


def test_arguments_are_validated_with_clear_errors(filled):
    log, _ = filled
    cap = Capability(log)
    assert "k must be in [1, 1000]" in err(cap, "search", query="x", k=0)
    assert "k must be" in err(cap, "search", query="x", k=MAX_K + 1)
    assert "k must be an int" in err(cap, "search", query="x", k=True)
    assert "since must be an ISO date" in err(cap, "search", query="x", since="not-a-date")
    assert "until is 200000 characters" in err(cap, "search", query="x", until="9" * 200_000)
    assert "query is" in err(cap, "search", query="you " * 20_000)
    assert "distinct terms" in err(cap, "search", query=" ".join(f"w{i}" for i in range(300)))
    assert "bad params" in err(cap, "search", query="x", nope=1)
    assert "unknown method" in err(cap, "append", text="x")
    assert "unknown method" in err(cap, "_event", ev=None)
    assert "request must be a JSON object" in cap.handle([1, 2])["error"]
    for good in ("2023", "2023-05", "2023-05-17", "2023-05-17T10:00", "2023-05-17T10:00:00Z",
                 "2023-05-17T10:00:00.123+02:00"):
        assert check_time_bound(good, "since") == good
    assert "must be in" in err(cap, "expand", lo=2**63)
    assert "must be in" in err(cap, "expand", lo=-1)


def test_expand_pages_by_bytes_and_payload_by_chunks(log):
    big = "é" * 100_000  # above the log's inline limit (64 Ki characters): kept in the payload store
    for i in range(30):
        log.append(session="s", role="user", text=f"{i} " + "x" * 60_000)
    seq_big = log.append(session="s", role="tool", kind="output", text=big)
    cap = Capability(log, budgets=Budgets(reply_bytes=256 << 10))
    got, nxt, pages = [], 1, 0
    while nxt is not None:
        page = ok(cap, "expand", lo=nxt, hi=seq_big)
        assert sum(len((e["text"] or "").encode()) for e in page["events"]) <= 256 << 10 or len(page["events"]) == 1
        got += page["events"]
        nxt, pages = page["next"], pages + 1
    assert [e["seq"] for e in got] == list(range(1, seq_big + 1)) and pages >= 8
    ev = got[-1]
    assert ev["text"] is None and ev["text_len"] == len(big.encode())  # fetched lazily through its payload
    data, off = b"", 0
    while off is not None:
        chunk = ok(cap, "payload", handle=ev["payload"], offset=off)
        data += base64.b64decode(chunk["b64"])
        assert chunk["total"] == len(big.encode())
        off = chunk["next"]
    assert data.decode() == big


def test_final_is_recorded_per_cell_and_ignored_in_replay(log):
    cap = Capability(log)
    cap.begin_cell(time.monotonic() + 5)
    assert ok(cap, "final", answer="42") == "recorded"
    assert cap.end_cell() == "42" and cap.end_cell() is None
    cap.begin_cell(time.monotonic() + 5, replay=True)
    ok(cap, "final", answer="old")
    assert cap.end_cell() is None
    assert "answer must be a string" in err(cap, "final", answer=3)


def test_calls_after_the_cells_deadline_are_refused(filled):
    log, _ = filled
    cap = Capability(log)
    cap.begin_cell(time.monotonic() - 0.001)
    assert "time for ms calls is spent" in err(cap, "search", query="beagle")
    assert cap.send_budget() == 0.0
    cap.end_cell()
    assert ok(cap, "search", query="beagle") and cap.send_budget() is None
