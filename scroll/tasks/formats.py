"""Write a generated history in the two public benchmark formats, for the benchmark harness.

    h = build_history(seed=0)
    write_longmemeval(h, "gen_lme.json")   # read back by scroll.importers (format "longmemeval")
    write_locomo(h, "gen_locomo.json")     # read back by scroll.bench.locomo.load

LongMemEval: one instance per question; every instance carries the whole history as its
haystack (sessions, ids, dates as "2026/03/14 (Sat) 09:12"), `has_answer` on evidence
turns, `answer_session_ids`. LoCoMo: one sample (the user and the assistant are the two
speakers), `session_N` with dia_ids "DN:i", dates "9:12 am on 14 March, 2026", and a `qa`
list whose evidence names the planted turns.

These files ARE the data sets, so they carry their labels exactly as the public formats
do. Label hygiene concerns the log: importing one (`scroll import`, scroll.importers)
keeps `has_answer`, the question, answer and session ids out of the events and puts them
in the log's label sidecar (scroll.labels).
"""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from .history import History

LME_TYPES = {"knowledge_update": "knowledge-update", "count": "multi-session", "sum": "multi-session",
             "date": "temporal-reasoning", "temporal": "temporal-reasoning", "recall": "single-session-user",
             "preference": "single-session-preference", "contradiction": "knowledge-update",
             "abstention": "single-session-user"}  # abstention: LongMemEval marks it with an "_abs" id suffix
# LoCoMo: 1 multi-hop, 2 temporal, 4 single-hop, 5 adversarial (not answerable from the conversation)
LOCOMO_CATEGORY = {"knowledge_update": 4, "count": 1, "sum": 1, "date": 2, "temporal": 2, "recall": 4,
                   "preference": 4, "contradiction": 1, "abstention": 5}
NOT_MENTIONED = "Not mentioned in the conversation"


def _when(iso: str) -> dt.datetime:
    return dt.datetime.strptime(iso.rstrip("Z")[:19], "%Y-%m-%dT%H:%M:%S")


def _lme_date(iso: str) -> str:
    t = _when(iso)
    return t.strftime("%Y/%m/%d (%a) %H:%M")


def _locomo_date(iso: str) -> str:
    t = _when(iso)
    return f"{t.strftime('%I:%M %p').lstrip('0').lower()} on {t.day} {t.strftime('%B')}, {t.year}"


def to_longmemeval(h: History) -> list[dict]:
    sessions, ids, dates = [], [], []
    where: dict[int, tuple[int, int]] = {}
    for si, s in enumerate(h.sessions):
        turns = []
        for i in range(s["first_idx"], s["last_idx"] + 1):
            where[i] = (si, len(turns))
            turns.append({"role": h.rows[i]["role"], "content": h.rows[i]["text"]})
        sessions.append(turns)
        ids.append(s["session"])
        dates.append(_lme_date(h.rows[s["first_idx"]]["time"]))
    out = []
    for t in h.tasks:
        hay = [[dict(turn) for turn in sess] for sess in sessions]
        for i in t.evidence_idx:
            si, ti = where[i]
            hay[si][ti]["has_answer"] = True
        qid = t.question_id + ("_abs" if t.kind == "abstention" else "")
        out.append({"question_id": qid, "question_type": LME_TYPES.get(t.kind, t.kind),
                    "question": t.question, "answer": t.answer, "question_date": _lme_date(t.question_date),
                    "haystack_session_ids": ids, "haystack_dates": dates, "haystack_sessions": hay,
                    "answer_session_ids": sorted({ids[where[i][0]] for i in t.evidence_idx})})
    return out


def to_locomo(h: History, sample_id: str | None = None) -> list[dict]:
    conv: dict = {"speaker_a": "user", "speaker_b": "assistant"}
    dia: dict[int, str] = {}
    for n, s in enumerate(h.sessions, start=1):
        conv[f"session_{n}_date_time"] = _locomo_date(h.rows[s["first_idx"]]["time"])
        turns = []
        for j, i in enumerate(range(s["first_idx"], s["last_idx"] + 1), start=1):
            dia[i] = f"D{n}:{j}"
            turns.append({"speaker": h.rows[i]["role"], "dia_id": dia[i], "text": h.rows[i]["text"]})
        conv[f"session_{n}"] = turns
    qa = [{"question": t.question, "answer": NOT_MENTIONED if t.kind == "abstention" else t.answer,
           "evidence": [dia[i] for i in t.evidence_idx], "category": LOCOMO_CATEGORY.get(t.kind, 1)}
          for t in h.tasks]
    sid = sample_id or f"scroll-gen-s{h.params.get('seed', 0)}"
    return [{"sample_id": sid, "conversation": conv, "qa": qa}]


def _many(h: History | list[History]) -> list[History]:
    hs = h if isinstance(h, list) else [h]
    if not hs:
        raise ValueError("no histories to write")
    return hs


def write_longmemeval(h: History | list[History], path) -> Path:
    """One history's instances, or several histories' (question ids then carry the history's
    seed, `s<seed>-<id>`, so that they stay unique)."""
    hs = _many(h)
    items = []
    for one in hs:
        for inst in to_longmemeval(one):
            if len(hs) > 1:
                inst["question_id"] = f"s{one.params.get('seed', 0)}-{inst['question_id']}"
            items.append(inst)
    p = Path(path)
    p.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    return p


def write_locomo(h: History | list[History], path, sample_id: str | None = None) -> Path:
    """One sample per history (`sample_id` only for a single history)."""
    hs = _many(h)
    if sample_id is not None and len(hs) > 1:
        raise ValueError("sample_id names one history's sample")
    p = Path(path)
    p.write_text(json.dumps([s for one in hs for s in to_locomo(one, sample_id)], ensure_ascii=False), encoding="utf-8")
    return p
