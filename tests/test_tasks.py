"""Generated long-history tasks: size, speed, determinism, planted evidence, the checker."""
from __future__ import annotations

import datetime as dt
import time

import pytest

from scroll.events import estimate_tokens
from scroll.tasks import FAMILIES, Task, build_demo_log, build_history, check_answer, parse_dates, parse_numbers
from scroll.tasks.families_memory import MEMORY_FAMILIES


@pytest.fixture(scope="module")
def hist():
    return build_history(seed=0)


def test_default_history_is_long_and_fast(tmp_path):
    """>= 200k tokens, counted as the EventLog does (characters / 4 per event), in < 10 s
    including the append to a fresh log and the first (index-building) search."""
    t0 = time.perf_counter()
    log, tasks = build_demo_log(tmp_path / "demo.db", seed=0)
    log.search("dentist", k=5)
    elapsed = time.perf_counter() - t0
    stats = log.stats()
    log.close()
    assert stats["tokens_estimate"] >= 200_000
    assert stats["sessions"] >= 120
    assert elapsed < 10, elapsed
    assert {t.kind for t in tasks} >= {"knowledge_update", "count", "date", "sum"}


def test_history_shape(hist):
    assert hist.n_tokens >= 200_000 and hist.n_words >= 140_000
    assert hist.n_tokens == sum(estimate_tokens(r["text"]) for r in hist.rows)
    roles = {r["role"] for r in hist.rows}
    assert roles == {"user", "assistant"}
    times = [r["time"] for r in hist.rows]
    assert times == sorted(times)  # sessions in time order, turns in order
    first, last = dt.date.fromisoformat(hist.sessions[0]["date"]), dt.date.fromisoformat(hist.sessions[-1]["date"])
    assert (last - first).days >= 120  # months, not days
    for s in hist.sessions:  # each session alternates user/assistant, starting with the user
        rs = [hist.rows[i]["role"] for i in range(s["first_idx"], s["last_idx"] + 1)]
        assert rs[0::2] == ["user"] * len(rs[0::2]) and rs[1::2] == ["assistant"] * len(rs[1::2])
    assert all("generated" not in r["meta"] and "evidence" not in r["meta"] for r in hist.rows)  # no answer leaks


def test_target_is_configurable():
    small = build_history(seed=3, target_tokens=60_000)
    assert 60_000 <= small.n_tokens < 90_000
    big = build_history(seed=3, target_tokens=400_000)
    assert big.n_tokens >= 400_000


def test_deterministic():
    a, b = build_history(seed=7, target_tokens=80_000), build_history(seed=7, target_tokens=80_000)
    assert a.rows == b.rows and a.digest() == b.digest()
    assert [t.to_dict() for t in a.tasks] == [t.to_dict() for t in b.tasks]
    c = build_history(seed=8, target_tokens=80_000)
    assert c.digest() != a.digest()


def test_evidence_rows_carry_the_answer(hist):
    for t in hist.tasks:
        assert t.evidence_idx, t.question_id
        texts = [hist.rows[i]["text"] for i in t.evidence_idx]
        assert all(hist.rows[i]["role"] == "user" for i in t.evidence_idx)
        if t.kind == "knowledge_update":
            assert t.value in texts[-1]
            assert t.params["history"][-1] == t.value and len(t.params["history"]) >= 2
        elif t.kind == "count":
            assert len({hist.rows[i]["session"] for i in t.evidence_idx}) == t.value
        elif t.kind == "date":
            (i,) = t.evidence_idx
            day = dt.date.fromisoformat(hist.rows[i]["time"][:10])
            shift = 1 if "yesterday" in texts[0] else 0
            assert (day - dt.timedelta(days=shift)).isoformat() == t.value
        elif t.kind == "sum":
            assert sum(t.params["amounts"]) == t.value
            assert all(f"${a}" in x for a, x in zip(t.params["amounts"], texts))


def test_distractors_are_planted(hist):
    text = "\n".join(r["text"] for r in hist.rows if r["role"] == "user")
    for t in hist.tasks:
        if t.kind == "knowledge_update":
            assert all(d in text for d in t.distractors)
    low = text.lower()
    assert "cancelled my dentist appointment" in low or "need to book a dentist" in low
    assert "quoted me $" in low


def test_demo_log_evidence_seqs_and_reuse(tmp_path):
    log, tasks = build_demo_log(tmp_path / "d.db", seed=1, target_tokens=40_000)
    for t in tasks:
        for seq, i in zip(t.evidence_seqs, t.evidence_idx):
            assert log.expand(seq).role == "user"
    n = log.max_seq()
    log.close()
    log2, tasks2 = build_demo_log(tmp_path / "d.db", seed=1, target_tokens=40_000)  # same history: reused
    assert log2.max_seq() == n and [t.evidence_seqs for t in tasks2] == [t.evidence_seqs for t in tasks]
    log2.close()
    with pytest.raises(FileExistsError):
        build_demo_log(tmp_path / "d.db", seed=2, target_tokens=40_000)


def test_unknown_family_refused():
    with pytest.raises(ValueError, match="unknown task families"):
        build_history(families=["nope"])
    assert set(FAMILIES) >= {"update_city", "count_dentist", "date_adopt", "sum_bike"}


# ------------------------------------------------------------------------- checker
def _task(value, value_type, distractors=()):
    return Task("q", "?", str(value), "x", value, value_type, list(distractors))


@pytest.mark.parametrize("answer", ["5", "five", "Five times.", "You went 5 times", "5.0", "five (5)"])
def test_number_right(answer):
    assert _task(5, "number").check(answer)


@pytest.mark.parametrize("answer", ["4", "6", "four", "5 or 6", "between four and five", "", "unknown",
                                    "I don't know", None, "several"])
def test_number_wrong(answer):
    assert not _task(5, "number").check(answer)


@pytest.mark.parametrize("answer", ["$468", "468", "$468.00", "468 dollars", "four hundred sixty-eight dollars",
                                    "four hundred and sixty-eight", "In total you spent $468."])
def test_sum_right(answer):
    assert _task(468, "number").check(answer)


@pytest.mark.parametrize("answer", ["$467", "$480", "$46.80", "$468 + $20", "4680"])
def test_sum_wrong(answer):
    assert not _task(468, "number").check(answer)


def test_thousands_separator():
    assert _task(1234, "number").check("$1,234")
    assert not _task(1234, "number").check("$1,235")


@pytest.mark.parametrize("answer", ["2026-04-03", "April 3, 2026", "Apr 3rd 2026", "3 April 2026",
                                    "3rd of April, 2026", "On April 3, 2026.", "2026/04/03", "4/3/2026 is wrong",
                                    "Friday, April 3rd, 2026"])
def test_date_right(answer):
    if answer == "4/3/2026 is wrong":  # ambiguous day/month: read both ways, so it must not pass
        assert not _task("2026-04-03", "date").check(answer)
    else:
        assert _task("2026-04-03", "date").check(answer)


@pytest.mark.parametrize("answer", ["2026-04-02", "2026-04-04", "April 3, 2025", "March 4, 2026",
                                    "April 3", "2026-04-03 or 2026-04-02", "unknown", "yesterday"])
def test_date_wrong(answer):
    assert not _task("2026-04-03", "date").check(answer)


def test_unambiguous_slash_dates():
    assert _task("2026-04-13", "date").check("4/13/2026")
    assert _task("2026-04-13", "date").check("13/4/2026")
    assert _task("2026-04-04", "date").check("04/04/2026")


@pytest.mark.parametrize("answer", ["Lisbon", "lisbon", "You live in Lisbon now.", "LISBON!", "the Lisbon"])
def test_entity_right(answer):
    assert _task("Lisbon", "entity", ["Porto", "Denver"]).check(answer)


@pytest.mark.parametrize("answer", ["Porto", "Denver", "Porto, then Lisbon", "Lisbonne", "Lis bon", "", "unknown"])
def test_entity_wrong(answer):
    assert not _task("Lisbon", "entity", ["Porto", "Denver"]).check(answer)


def test_entity_multiword():
    t = _task("Redwood Insurance", "entity", ["Cobalt Health", "Northwind Analytics"])
    assert t.check("redwood insurance") and t.check("You work at Redwood Insurance.")
    assert not t.check("Redwood") and not t.check("Cobalt Health")
    assert not t.check("Redwood Insurance (before: Northwind Analytics)")


def test_parsers():
    assert parse_numbers("twenty-one and 3") == [21.0, 3.0]
    assert parse_numbers("on 2026-04-03 I paid $12") == [12.0]
    assert parse_dates("from March 1, 2026 to 2026-03-05") == [dt.date(2026, 3, 1), dt.date(2026, 3, 5)]
    assert check_answer("twice", 2, "number")
    with pytest.raises(ValueError):
        check_answer("x", 1, "nope")


# ------------------------------------------------------------------------- pools, wordings, new families
# the role-split families (distillation's); the benchmark's memory families draw some values from
# fixed lists that are not split by role (tests/test_families_memory.py covers them)
ALL_FAMILIES = sorted(set(FAMILIES) - set(MEMORY_FAMILIES))


@pytest.mark.parametrize("pool,wording", [("train", "train"), ("test", "train"), ("test", "paraphrase")])
def test_every_family_under_pools_and_wordings(pool, wording):
    from scroll.tasks.pools import POOLS

    h = build_history(seed=11, target_tokens=20_000, families=ALL_FAMILIES, pool=pool, wording=wording,
                      min_sessions=20, exchanges=(2, 4))
    assert h.params["pool"] == pool and h.params["wording"] == wording
    allowed = POOLS[pool].entities()
    for t in h.tasks:
        assert t.evidence_idx, t.family
        assert set(t.params["entities"]) <= allowed, (t.family, set(t.params["entities"]) - allowed)
        if t.value_type == "entity":
            assert t.value in allowed and t.value in h.rows[t.evidence_idx[-1]]["text"]
        if t.family == "meet_friend":
            assert len({h.rows[i]["session"] for i in t.evidence_idx}) == t.value
            assert t.params["friend"] in t.question and t.params["activity"] in t.question
        if t.family == "relative_city":
            assert t.params["relative"] in t.question and t.params["history"][-1] == t.value


def test_near_misses_of_the_name_families():
    h = build_history(seed=4, target_tokens=30_000, families=["meet_friend", "relative_city", "date_adopt"],
                      pool="train", min_sessions=24)
    text = "\n".join(r["text"] for r in h.rows if r["role"] == "user")
    meet, rel, adopt = h.tasks
    others = [f for f in ("Maya", "Leo", "Hannah", "Omar", "Clara", "Diego", "Ines", "Jonas", "Rosa", "Theo")
              if f != meet.params["friend"]]
    assert any(f"met {o} for" in text or f"up with {o} over" in text for o in others)  # other friends
    assert f"My {rel.params['relative']} is visiting" in text                          # a visit, not a move
    assert sum(f"My {r} just moved" in text or f"My {r} finally moved" in text
               for r in ("sister", "brother", "mom", "dad", "cousin")) >= 2               # another relative moved
    assert "adopted a cat named" in text and "adopted a puppy called" in text           # other pets' adoptions


def test_sum_families_distractors():
    h = build_history(seed=9, target_tokens=20_000, families=["sum_bike", "sum_taxi", "sum_groceries"],
                      pool="test", min_sessions=20)
    for t in h.tasks:
        assert t.kind == "sum" and sum(t.params["amounts"]) == t.value
        texts = [h.rows[i]["text"] for i in t.evidence_idx]
        assert all(f"${a}" in x for a, x in zip(t.params["amounts"], texts))
    low = "\n".join(r["text"] for r in h.rows if r["role"] == "user").lower()
    assert "quoted" in low and "on taxis last month" in low and "a week on groceries" in low


def test_unknown_pool_wording_and_bad_sizes_refused():
    with pytest.raises(ValueError, match="unknown entity pool"):
        build_history(pool="nope")
    with pytest.raises(ValueError, match="unknown wording"):
        build_history(wording="nope")
    with pytest.raises(ValueError, match="min_sessions"):
        build_history(min_sessions=3)
